"""Assignment to array slices inside kernels (``a[1:3] = v``, ``a[i, :] = x``,
``a[:, j] = b[:, k]``, ``a[i] = row``) on the cpu target, against numpy's setitem;
shared and local arrays, device functions, the debug errors, and amdgpu builds.

What is pinned (README "slice assignment"): a scalar converts once as ``a[i] = x``
does; array values broadcast as in numpy; a shape that does not broadcast stores
nothing (``debug=True``: ``KernelValueError`` after the launch); overlapping source
and destination give numpy's copy-through-a-temporary result when both have the
same strides, and raise under ``debug=True`` otherwise.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as cuda
from frontend_helpers import compile_error, jit
from pykern.core.errors import KernelValueError

SET = settings(max_examples=30, deadline=None)
I64MIN, I64MAX = -(2**63), 2**63 - 1

pytestmark = pytest.mark.usefixtures("cpu_target")


def bound(n):
    return st.one_of(st.integers(-n - 2, n + 2), st.sampled_from([I64MIN, I64MAX]))


def step_(n):
    return st.one_of(st.integers(-n - 1, n + 1).filter(bool), st.sampled_from([I64MIN, I64MAX]))


def same(got, want):
    """Equal element for element, NaNs where numpy has them, zeros' signs too."""
    np.testing.assert_array_equal(got, want)
    if got.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


#: (dtype, values a scalar fill may take: each representable, so numpy's cast is the reference)
_SCALARS = {
    np.float32: st.sampled_from([0.0, -0.0, 1.5, float("nan"), float("inf"), -3.25e38, 1e-45]),
    np.float64: st.sampled_from([-0.0, float("nan"), float("-inf"), 2.0**-1074, 1.7976931348623157e308]),
    np.int8: st.integers(-128, 127),
    np.uint16: st.integers(0, 65535),
    np.int64: st.sampled_from([I64MIN, I64MAX, 0, -1]),
}


# ------------------------------------------------------------------ scalar values
@jit
def _fill1(a, start, stop, step, v):
    a[start:stop:step] = v


@jit
def _fill_forms(a, v):
    a[:] = v


@jit
def _fill_every_other(a, v):
    a[::2] = v


@jit
def _fill_reversed_tail(a, v):
    a[:1:-1] = v


@given(data=st.data(), n=st.integers(0, 9), dtype=st.sampled_from(sorted(_SCALARS, key=str)))
@SET
def test_1d_scalar_fill_matches_numpy(data, n, dtype):
    start, stop, step = data.draw(bound(n)), data.draw(bound(n)), data.draw(step_(n))
    v = data.draw(_SCALARS[dtype])
    a = np.arange(n).astype(dtype)
    want = a.copy()
    want[start:stop:step] = v
    _fill1[1, 1](a, start, stop, step, v)
    same(a, want)


@pytest.mark.parametrize("k, sl", [(_fill_forms, slice(None)), (_fill_every_other, slice(None, None, 2)),
                                   (_fill_reversed_tail, slice(None, 1, -1))])
def test_constant_slice_forms(k, sl):
    for n in (0, 1, 2, 7):
        a = np.arange(n, dtype=np.float32)
        want = a.copy()
        want[sl] = -0.0
        k[1, 1](a, -0.0)
        same(a, want)


def test_scalar_converts_like_an_element_store():
    @jit
    def k(f, i, u, b, x, big):
        f[1:3] = x         # float64 -> float32 rounds to nearest
        i[:] = 3.99        # float -> int truncates
        u[::2] = -1        # wraps
        b[:2] = 2          # non-zero is True
        i[2:] = big        # int64 -> int32 wraps

    f, i, u, b = np.zeros(4, np.float32), np.zeros(4, np.int32), np.zeros(3, np.uint8), np.zeros(3, np.bool_)
    k[1, 1](f, i, u, b, 0.1, 2**40 + 5)
    assert f[1] == np.float32(0.1) and f[0] == 0 and f[3] == 0
    assert list(i) == [3, 3, 5, 5]
    assert list(u) == [255, 0, 255]
    assert list(b) == [True, True, False]


@jit
def _fill_row(a, i, c0, c1, cs, v):
    a[i, c0:c1:cs] = v


@jit
def _fill_col(a, j, r0, r1, rs, v):
    a[r0:r1:rs, j] = v


@jit
def _fill_block(a, r0, r1, rs, c0, c1, cs, v):
    a[r0:r1:rs, c0:c1:cs] = v


@given(data=st.data(), m=st.integers(1, 5), n=st.integers(1, 5), order=st.sampled_from("CF"))
@SET
def test_2d_scalar_fills_match_numpy(data, m, n, order):
    a = np.asarray(np.arange(m * n, dtype=np.float64).reshape(m, n), order=order)
    i, j = data.draw(st.integers(-m, m - 1)), data.draw(st.integers(-n, n - 1))
    r = (data.draw(bound(m)), data.draw(bound(m)), data.draw(step_(m)))
    c = (data.draw(bound(n)), data.draw(bound(n)), data.draw(step_(n)))
    want = a.copy(order="A")
    want[i, slice(*c)] = 1.5
    want[slice(*r), j] = -2.0
    want[slice(*r), slice(*c)] = float("nan")
    _fill_row[1, 1](a, i, *c, 1.5)
    _fill_col[1, 1](a, j, *r, -2.0)
    _fill_block[1, 1](a, *r, *c, float("nan"))
    same(a, want)


def test_3d_and_rows_and_strided_arguments():
    @jit
    def k(a, b, v):
        a[1, ::2, 1:] = v
        a[0] = v + 1          # a row of a 3-d array: a 2-d slice
        b[:, 1] = 9           # b is a strided (non-contiguous) argument

    a = np.zeros((2, 3, 4), np.float32)
    base = np.zeros((4, 6), np.int16)
    b = base[::2, ::3]
    want, wbase = a.copy(), base.copy()
    want[1, ::2, 1:] = 4
    want[0] = 5
    wbase[::2, ::3][:, 1] = 9
    k[1, 1](a, b, 4.0)
    same(a, want)
    same(base, wbase)


def test_scalar_value_is_evaluated_once():
    @cuda.jit(device=True)
    def next_value(counter):
        return cuda.atomic.add(counter, 0, 1) + 10

    @jit
    def k(a, counter):
        a[1:4] = next_value(counter)

    a, counter = np.zeros(5, np.int64), np.zeros(1, np.int64)
    k[1, 1](a, counter)
    assert counter[0] == 1 and list(a) == [0, 10, 10, 10, 0]


def test_tuple_values():
    @jit
    def k(a, out, x):
        a[1:4] = (x, 2, 3.7)
        out[::2] = (1, 2)     # length 3: does not fit, nothing stored

    a, out = np.zeros(5, np.int32), np.zeros(5, np.int32)
    k[1, 1](a, out, 7)
    assert list(a) == [0, 7, 2, 3, 0] and not out.any()


# ------------------------------------------------------------------ array values
@jit
def _copy1(a, s0, s1, s2, b, t0, t1, t2):
    a[s0:s1:s2] = b[t0:t1:t2]


@jit(debug=True)
def _copy1_debug(a, s0, s1, s2, b, t0, t1, t2):
    a[s0:s1:s2] = b[t0:t1:t2]


@given(data=st.data(), n=st.integers(0, 8),
       types=st.sampled_from([(np.float64, np.float32), (np.int16, np.int64), (np.float32, np.float64)]))
@SET
def test_1d_array_values_match_numpy(data, n, types):
    src, dst = types
    s = (data.draw(bound(n)), data.draw(bound(n)), data.draw(step_(n)))
    t = (data.draw(bound(n)), data.draw(bound(n)), data.draw(step_(n)))
    b = (np.arange(n) * 3 - 7).astype(src)
    if n > 1 and src != np.int16:
        b[1] = -0.0
    a = np.full(n, 100, dst)
    want = a.copy()
    try:
        want[slice(*s)] = b[slice(*t)]
        fits = True
    except ValueError:
        fits = False
    _copy1[1, 1](a, *s, b, *t)
    same(a, want)  # does not fit: nothing stored
    if not fits:
        with pytest.raises(KernelValueError, match="cannot assign slice from input of different size"):
            _copy1_debug[1, 1](a, *s, b, *t)


def test_array_value_dtype_conversions():
    @jit
    def k(f, i, b, src, flags):
        f[:] = src            # float64 -> float32
        i[:] = src            # float64 -> int32: truncates
        b[:] = flags          # bool -> float32
    src = np.array([1.25, -2.75, 1e10, -0.0])
    f, i, b = np.zeros(4, np.float32), np.zeros(4, np.int32), np.zeros(2, np.float32)
    src[2] = 3.5
    k[1, 1](f, i, b, src, np.array([True, False]))
    same(f, src.astype(np.float32))
    assert list(i) == [1, -2, 3, 0] and list(b) == [1.0, 0.0]


@jit
def _copy2(a, r0, r1, c0, c1, b):
    a[r0:r1, c0:c1] = b


@jit(debug=True)
def _copy2_debug(a, r0, r1, c0, c1, b):
    a[r0:r1, c0:c1] = b


@pytest.mark.parametrize("bshape", [(3,), (1, 3), (2, 1), (2, 3), (1,), (1, 1), (2, 2), (3, 3), (4,), (1, 2, 3),
                                    (2, 2, 3), (0,), (2, 0)])
def test_2d_array_values_broadcast_like_numpy(bshape):
    a = np.zeros((4, 5))
    b = np.arange(1, 1 + int(np.prod(bshape)), dtype=np.float32).reshape(bshape)
    want = a.copy()
    try:
        want[1:3, 2:5] = b
        fits = True
    except ValueError:
        fits = False
    _copy2[1, 1](a, 1, 3, 2, 5, b)
    same(a, want)
    if not fits:
        with pytest.raises(KernelValueError, match=r"test_slice_assign.py:\d+: cannot assign slice"):
            _copy2_debug[1, 1](a, 1, 3, 2, 5, b)


@given(data=st.data(), m=st.integers(1, 4), n=st.integers(1, 4), order=st.sampled_from("CF"))
@SET
def test_2d_array_values_match_numpy(data, m, n, order):
    a = np.asarray(np.zeros((m, n), np.float32), order=order)
    r = (data.draw(bound(m)), data.draw(bound(m)))
    c = (data.draw(bound(n)), data.draw(bound(n)))
    shape = a[slice(*r), slice(*c)].shape
    bshape = tuple(data.draw(st.sampled_from([k, 1])) for k in shape)
    b = np.asarray(np.arange(1, 1 + int(np.prod(bshape))).reshape(bshape), order=order)
    want = a.copy(order="A")
    want[slice(*r), slice(*c)] = b
    _copy2[1, 1](a, *r, *c, b)
    same(a, want)


def test_rows_and_columns_of_other_arrays():
    @jit
    def k(a, b, i, j):
        a[i] = b[j]           # row from row
        a[:, j] = b[:, i]     # column from column
        a[2, :] = b[0, ::-1]  # reversed row

    a, b = np.zeros((3, 4)), np.arange(12.0).reshape(3, 4)
    want = a.copy()
    want[0] = b[1]
    want[:, 1] = b[:, 0]
    want[2, :] = b[0, ::-1]
    k[1, 1](a, b, 0, 1)
    same(a, want)


# ------------------------------------------------------------------ overlapping source and destination
@jit
def _shift(a, s0, s1, s2, t0, t1, t2):
    a[s0:s1:s2] = a[t0:t1:t2]


@jit(debug=True)
def _shift_debug(a, s0, s1, s2, t0, t1, t2):
    a[s0:s1:s2] = a[t0:t1:t2]


def _extents_overlap(v, w):
    def ext(x):
        lo = x.__array_interface__["data"][0]
        reach = [s * (k - 1) for s, k in zip(x.strides, x.shape)]
        return lo + sum(r for r in reach if r < 0), lo + sum(r for r in reach if r > 0) + x.itemsize
    (a0, a1), (b0, b1) = ext(v), ext(w)
    return a0 < b1 and b0 < a1


def _overlapping_cases(n):
    """Every 1-d destination slice of ``a[:n]`` with a source of the same length starting
    near it (so that the two mostly overlap), as (s0, s1, s2, t0, t1, t2)."""
    def stop(start, step, k):  # the slice of exactly k elements from start
        return start + k * step if start + k * step >= 0 else -n - 1

    for s0 in range(n):
        for s2 in (1, 2, -1, -2, 3):
            for k in range(1, len(range(n)[s0::s2]) + 1):
                for t2 in {s2, -s2, 1}:
                    for t0 in range(s0 - 2, s0 + 3):
                        if 0 <= t0 < n and 0 <= t0 + (k - 1) * t2 < n:
                            yield s0, stop(s0, s2, k), s2, t0, stop(t0, t2, k), t2


def test_overlapping_1d_copies():
    n, checked, raised = 7, 0, 0
    for case in _overlapping_cases(n):
        s0, s1, s2, t0, t1, t2 = case
        a = np.arange(n, dtype=np.float64)
        dest, src = a[s0:s1:s2], a[t0:t1:t2]
        assert dest.shape == src.shape, case
        want = a.copy()
        want[s0:s1:s2] = a[t0:t1:t2]  # numpy: through a temporary
        if dest.size <= 1 or dest.strides == src.strides or not _extents_overlap(dest, src):
            _shift[1, 1](a, *case)
            same(a, want)
            b = np.arange(n, dtype=np.float64)
            _shift_debug[1, 1](b, *case)
            same(b, want)
            checked += 1
        else:
            with pytest.raises(KernelValueError, match="needs a temporary"):
                _shift_debug[1, 1](a, *case)
            raised += 1
    assert checked > 300 and raised > 100, (checked, raised)


def test_shifts_both_ways():
    @jit
    def k(a, b):
        a[1:] = a[:-1]
        b[:-1] = b[1:]

    a, b = np.arange(6.0), np.arange(6.0)
    k[1, 1](a, b)
    assert list(a) == [0, 0, 1, 2, 3, 4] and list(b) == [1, 2, 3, 4, 5, 5]


def test_overlapping_shifts_in_2d_and_3d():
    @jit(debug=True)
    def k(a, b, c):
        a[1:, 1:] = a[:-1, :-1]
        b[:-1, 1:] = b[1:, :-1]
        c[:, ::-1][1:] = c[:, ::-1][:-1]
        c[1, 1:, :-1] = c[1, :-1, 1:]

    a = np.arange(20.0).reshape(4, 5)
    b = a.copy()
    c = np.arange(2 * 3 * 4.0).reshape(2, 3, 4)
    wa, wb, wc = a.copy(), b.copy(), c.copy()
    wa[1:, 1:] = wa[:-1, :-1].copy()
    wb[:-1, 1:] = wb[1:, :-1].copy()
    wc[:, ::-1][1:] = wc[:, ::-1][:-1].copy()
    wc[1, 1:, :-1] = wc[1, :-1, 1:].copy()
    k[1, 1](a, b, c)
    same(a, wa)
    same(b, wb)
    same(c, wc)


@jit(debug=True)
def _diagonal_shift(a):
    a[1:, :-1] = a[:-1, 1:]


def test_overlap_that_needs_a_temporary_raises_under_debug():
    @jit(debug=True)
    def reverse(a):
        a[:] = a[::-1]

    @jit(debug=True)
    def transpose(a):
        a[:, :] = a.T

    @jit(debug=True)
    def apart(a):
        a[:3] = a[:2:-1]  # other strides, but the memory ranges do not overlap

    with pytest.raises(KernelValueError, match="needs a temporary"):
        reverse[1, 1](np.arange(4.0))
    with pytest.raises(KernelValueError, match="needs a temporary"):
        transpose[1, 1](np.arange(9.0).reshape(3, 3))
    # the same strides but axes that do not nest in C order: a shift along two axes of an
    # F-ordered array would read elements the loop already wrote
    with pytest.raises(KernelValueError, match="needs a temporary"):
        _diagonal_shift[1, 1](np.asfortranarray(np.arange(12.0).reshape(3, 4)))
    a = np.arange(6.0)
    apart[1, 1](a)
    assert list(a) == [5, 4, 3, 3, 4, 5]


def test_a_self_copy_and_other_memories_are_not_overlaps():
    @jit(debug=True)
    def k(a, b):
        a[:] = a
        sm = cuda.shared.array(4, np.float64)
        sm[:] = a[:4]         # global -> shared: never the same memory
        b[:] = sm[::-1]

    a, b = np.arange(4.0), np.zeros(4)
    k[1, 1](a, b)
    assert list(a) == [0, 1, 2, 3] and list(b) == [3, 2, 1, 0]


# ------------------------------------------------------------------ shared and local arrays, device functions
def test_shared_zero_then_barrier():
    @jit
    def k(x, out):
        sA = cuda.shared.array((4, 8), np.float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        if tx == 0:
            sA[ty, :] = 0.0          # each row cleared by one thread
        cuda.syncthreads()
        cuda.atomic.add(sA, (ty, tx), x[ty, tx])
        cuda.syncthreads()
        if tx == 0 and ty == 0:
            acc = cuda.shared.array(8, np.float32)
            acc[:] = 0
            for r in range(4):
                for c in range(8):
                    acc[c] += sA[r, c]
            out[:] = acc
        cuda.syncthreads()

    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    out = np.full(8, -1, np.float32)
    for _ in range(2):  # the second launch finds the shared memory dirty
        k[1, (8, 4)](x, out)
        same(out, x.sum(axis=0))


def test_shared_whole_array_fill_by_every_thread():
    @jit
    def k(out):
        s = cuda.shared.array(64, np.int32)
        s[:] = 0
        cuda.syncthreads()
        cuda.atomic.add(s, cuda.threadIdx.x % 8, 1)
        cuda.syncthreads()
        out[cuda.threadIdx.x] = s[cuda.threadIdx.x]

    out = np.zeros(64, np.int32)
    k[2, 64](out)
    assert list(out[:8]) == [8] * 8 and not out[8:].any()


def test_local_arrays():
    @jit
    def k(x, out):
        i = cuda.grid(1)
        loc = cuda.local.array((3, 4), np.float64)
        loc[:] = 1.0
        loc[1, 1:3] = x[i, :2]
        loc[2] = loc[1]
        loc[:, 0] = -0.0
        out[i] = loc

    x = np.arange(10.0).reshape(5, 2)
    out = np.zeros((5, 3, 4))
    k[1, 5](x, out)
    want = np.ones((5, 3, 4))
    want[:, 1, 1:3] = x
    want[:, 2] = want[:, 1]
    want[:, :, 0] = -0.0
    same(out, want)


def test_in_a_device_function():
    @cuda.jit(device=True)
    def clear_tail(row, k):
        row[k:] = 0

    @jit
    def k(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            clear_tail(a[i], i)

    a = np.ones((4, 3), np.int32)
    k[1, 4](a)
    assert a.tolist() == [[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]]


# ------------------------------------------------------------------ compile-time errors
@pytest.mark.parametrize(
    "src, sig, msg",
    [
        ("def k(a):\n    a[0:2] += 1\n", "void(readonly float32[:])", "read-only"),
        ("def k(a):\n    a[1:] = 1\n", "void(readonly float32[:])", "read-only"),
        ("def k(a):\n    a[0, :] = (1, 2)\n", "void(float32[:, :, :])", "1-d slice"),
        ("def k(a, b):\n    a[:] = b\n", "void(float32[:], complex64)", "cannot"),
        ("def k(a):\n    a[0, 1, 2] = 1\n", "void(float32[:, :])", "too many indices"),
        # shapes known at compile time (shared/local arrays assigned once, constant slices)
        ("def k(a):\n    s = cuda.shared.array((4, 8), np.float32)\n    s[1, :] = cuda.local.array(3, np.float32)\n",
         "void(float32[:])", "the slice has shape (8,), the value (3,)"),
        ("def k(a):\n    s = cuda.shared.array((4, 8), np.float32)\n    s[::-2, 1] = (1, 2, 3)\n",
         "void(float32[:])", "the slice has shape (2,), the value (3,)"),
        ("def k(a):\n    s = cuda.shared.array((4, 8), np.float32)\n    t = cuda.local.array((2, 2), np.int32)\n"
         "    s[1:3, :] = t\n", "void(float32[:])", "the slice has shape (2, 8), the value (2, 2)"),
    ],
)
def test_errors(src, sig, msg):
    err = compile_error(src, sig)
    assert msg in str(err) and err.line == src.count("\n")


def test_compile_time_shapes_that_fit_compile():
    @jit
    def k(out, n):
        s = cuda.shared.array((4, 8), np.float32)
        t = cuda.local.array((2, 8), np.float32)
        t[:] = 1
        s[:] = 0
        s[1:3, :] = t
        s[::2] = t[:, ::-1]
        s[:, 1:n] = t[0, :3]      # a run-time extent: checked at run time
        s.T[::3, :2] = t.T[::3]
        s[3, :] = (1, 2, 3, 4, 5, 6, 7, 8)
        out[:, :] = s

    out = np.zeros((4, 8), np.float32)
    k[1, 1](out, 4)
    want = np.zeros((4, 8), np.float32)
    want[1:3] = 1
    want[::2] = 1
    want[:, 1:4] = 1
    want[3] = np.arange(1, 9)
    same(out, want)


def test_record_slices_are_refused():
    from pykern.core.errors import CompileError

    rec = np.dtype([("x", np.float32), ("y", np.int32)])

    @jit
    def k(a, b):
        a[1:3] = b[:2]

    with pytest.raises(CompileError, match="records"):
        k[1, 1](np.zeros(4, rec), np.zeros(4, rec))


# ------------------------------------------------------------------ amdgpu
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_slice_assignments_build_for_amdgpu(arch):
    def k(a, out, n):
        sA = cuda.shared.array((4, 64), np.float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        sA[ty, :] = 0.0
        cuda.syncthreads()
        sA[ty, tx] = a[ty, tx]
        cuda.syncthreads()
        if tx == 0:
            loc = cuda.local.array(8, np.float64)
            loc[:] = sA[ty, :8]
            out[ty, 1:n] = loc[: n - 1]

    ck = cuda.compile(k, "void(float32[:, ::1], float64[:, ::1], int64)", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"
    ck = cuda.compile(k, "void(float32[:, ::1], float64[:, ::1], int64)", arch=arch, debug=True)
    assert ck.code_object[:4] == b"\x7fELF"


def test_amdgpu_debug_records_a_value_kind():
    import struct

    from pykern.core.abi import ERROR_KINDS, format_error_record
    from pykern.core.errors import error_class_for_kind

    raw = struct.pack("<iiqqqqqqqqq", ERROR_KINDS["value"], 0, 0, 0, 0, 3, 0, 0, 1, 0, 0)
    text = format_error_record(raw, ["k.py:4: cannot assign slice from input of different size"])
    assert text == "k.py:4: cannot assign slice from input of different size (thread (3, 0, 0) of block (1, 0, 0))"
    assert error_class_for_kind(ERROR_KINDS["value"]) is KernelValueError
    assert issubclass(KernelValueError, ValueError)

    def k(a, b):
        a[1:] = b

    ck = cuda.compile(k, "void(float32[::1], float64[::1])", arch="gfx942", debug=True)
    assert ck.code_object[:4] == b"\x7fELF"
    assert any("cannot assign slice" in m for m in ck.artifacts[0].error_messages)
