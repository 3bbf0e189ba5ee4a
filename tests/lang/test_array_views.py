"""Array views inside kernels (``a[i]``, ``a[i, 1:5]``, ``a[::-1]``...) on the cpu target, compared
with numpy's basic slicing; ``a.flat``, ``a.itemsize``, ``a.nbytes``; plus an amdgpu build of a view
kernel.

A zero slice step (Python raises ValueError, a GPU cannot) gives an empty dimension.
"""

from __future__ import annotations

import io

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

import pykern as cuda
from pykern.frontend import ir, types as T

from frontend_helpers import compile_error, jit

SET = settings(max_examples=40, deadline=None)
I64MIN, I64MAX = -(2**63), 2**63 - 1


pytestmark = pytest.mark.usefixtures("cpu_target")


def bound(n):
    return st.one_of(st.integers(-n - 3, n + 3), st.sampled_from([I64MIN, I64MAX]))


def step_(n):
    return st.one_of(st.integers(-n - 2, n + 2), st.sampled_from([I64MIN, I64MAX]))


def np_slice(start, stop, step):
    """numpy's view for one slice, with pykern's zero-step rule (empty)."""
    return slice(0, 0) if step == 0 else slice(start, stop, step)


# ------------------------------------------------------------------ 1-d slices
@jit
def _copy1_full(a, start, stop, step, out):
    v = a[start:stop:step]
    out[0] = len(v)
    for j in range(v.shape[0]):
        out[j + 1] = v[j]


@jit
def _copy1_nostart(a, start, stop, step, out):
    v = a[:stop:step]
    out[0] = v.size
    for j in range(v.shape[0]):
        out[j + 1] = v[j]


@jit
def _copy1_nostop(a, start, stop, step, out):
    v = a[start::step]
    out[0] = v.shape[0]
    for j in range(len(v)):
        out[j + 1] = v[j]


@jit
def _copy1_step_only(a, start, stop, step, out):
    v = a[::step]
    out[0] = len(v)
    for j in range(len(v)):
        out[j + 1] = v[j]


_ONE_D = {
    "full": (_copy1_full, lambda s, e, p: np_slice(s, e, p)),
    "nostart": (_copy1_nostart, lambda s, e, p: np_slice(None, e, p)),
    "nostop": (_copy1_nostop, lambda s, e, p: np_slice(s, None, p)),
    "step_only": (_copy1_step_only, lambda s, e, p: np_slice(None, None, p)),
}


@pytest.mark.parametrize("form", list(_ONE_D))
@SET
@given(data=st.data(), n=st.integers(0, 12))
def test_1d_slice_matches_numpy(form, data, n):
    start, stop, step = data.draw(bound(n)), data.draw(bound(n)), data.draw(step_(n))
    k, key = _ONE_D[form]
    a = np.arange(n, dtype=np.int64) * 10 + 1
    out = np.full(n + 1, -7, dtype=np.int64)
    k[1, 1](a, start, stop, step, out)
    want = a[key(start, stop, step)]
    assert out[0] == len(want), (start, stop, step)
    np.testing.assert_array_equal(out[1 : 1 + len(want)], want)
    assert (out[1 + len(want) :] == -7).all()


def test_constant_slices_and_reverse():
    @jit
    def k(a, out):
        r = a[::-1]
        for j in range(r.size):
            out[0, j] = r[j]
        s = a[2:8:2]
        for j in range(len(s)):
            out[1, j] = s[j]
        t = a[-3:]
        for j in range(len(t)):
            out[2, j] = t[j]
        u = a[100:]
        out[3, 0] = len(u)
        z = a[::0]  # a zero step: an empty view
        out[3, 1] = len(z)

    a = np.arange(10, dtype=np.float32)
    out = np.zeros((4, 10), np.float32)
    k[1, 1](a, out)
    np.testing.assert_array_equal(out[0], a[::-1])
    np.testing.assert_array_equal(out[1, :3], a[2:8:2])
    np.testing.assert_array_equal(out[2, :3], a[-3:])
    assert out[3, 0] == 0 and out[3, 1] == 0


# ------------------------------------------------------------------ 2-d views
def _base(layout, shape):
    big = np.arange(np.prod(shape) * 6, dtype=np.float64).reshape(shape[0] * 2, shape[1] * 3)
    if layout == "C":
        return np.ascontiguousarray(big[: shape[0], : shape[1]])
    if layout == "F":
        return np.asfortranarray(big[: shape[0], : shape[1]])
    return big[::2, ::3]  # "A": strided


@jit
def _copy2(a, r0, r1, rs, c0, c1, cs, out, shp):
    v = a[r0:r1:rs, c0:c1:cs]
    shp[0] = v.shape[0]
    shp[1] = v.shape[1]
    shp[2] = v.size
    for i in range(v.shape[0]):
        for j in range(v.shape[1]):
            out[i, j] = v[i, j]


@pytest.mark.parametrize("layout", ["C", "F", "A"])
@SET
@given(data=st.data(), m=st.integers(0, 6), n=st.integers(0, 6))
def test_2d_slices_match_numpy(layout, data, m, n):
    r = [data.draw(bound(m)), data.draw(bound(m)), data.draw(step_(m))]
    c = [data.draw(bound(n)), data.draw(bound(n)), data.draw(step_(n))]
    a = _base(layout, (m, n))
    out = np.full((m, n), -1.0)
    shp = np.zeros(3, np.int64)
    _copy2[1, 1](a, *r, *c, out, shp)
    want = a[np_slice(*r), np_slice(*c)]
    assert tuple(shp) == (*want.shape, want.size)
    np.testing.assert_array_equal(out[: want.shape[0], : want.shape[1]], want)


@jit
def _index_and_slice(a, i, j, c0, c1, cs, out, shp):
    row = a[i, c0:c1:cs]
    shp[0] = len(row)
    for k in range(len(row)):
        out[0, k] = row[k]
    col = a[c0:c1:cs, j]
    shp[1] = len(col)
    for k in range(len(col)):
        out[1, k] = col[k]
    whole_row = a[i]
    whole_col = a[:, j]
    for k in range(len(whole_row)):
        out[2, k] = whole_row[k]
    for k in range(len(whole_col)):
        out[3, k] = whole_col[k]


@pytest.mark.parametrize("layout", ["C", "F", "A"])
@SET
@given(data=st.data(), n=st.integers(1, 7))
def test_index_plus_slice_matches_numpy(layout, data, n):
    i = data.draw(st.integers(-n, n - 1))
    j = data.draw(st.integers(-n, n - 1))
    c = [data.draw(bound(n)), data.draw(bound(n)), data.draw(step_(n))]
    a = _base(layout, (n, n))
    out = np.full((4, n), -1.0)
    shp = np.zeros(2, np.int64)
    _index_and_slice[1, 1](a, i, j, *c, out, shp)
    row, col = a[i, np_slice(*c)], a[np_slice(*c), j]
    assert tuple(shp) == (len(row), len(col))
    np.testing.assert_array_equal(out[0, : len(row)], row)
    np.testing.assert_array_equal(out[1, : len(col)], col)
    np.testing.assert_array_equal(out[2], a[i])
    np.testing.assert_array_equal(out[3], a[:, j])


def test_views_of_views_and_3d():
    @jit
    def k(a, out):
        v = a[1:][::-1]  # (3, 4, 5) reversed on axis 0
        w = v[:, ::2]  # (3, 2, 5)
        x = w[1, :, 1:4]  # (2, 3)
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                out[i, j] = x[i, j]
        m = a[2]  # a 2-d row of a 3-d array
        out[2, 0] = m.shape[0] * 10 + m.shape[1]
        out[2, 1] = m[3, 4]
        p = a[:, 1, :][::-1, -2]
        for i in range(len(p)):
            out[3, i] = p[i]

    a = np.arange(4 * 4 * 5, dtype=np.int32).reshape(4, 4, 5)
    out = np.zeros((4, 5), np.int32)
    k[1, 1](a, out)
    np.testing.assert_array_equal(out[:2, :3], a[1:][::-1][:, ::2][1, :, 1:4])
    assert out[2, 0] == 45 and out[2, 1] == a[2][3, 4]
    np.testing.assert_array_equal(out[3, :4], a[:, 1, :][::-1, -2])


def test_iterating_a_2d_array_gives_rows():
    @jit
    def k(a, out):
        i = 0
        for row in a:
            s = 0.0
            for x in row:
                s += x
            out[i] = s
            i += 1

    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    out = np.zeros(3)
    k[1, 1](a, out)
    np.testing.assert_array_equal(out, a.sum(axis=1))


# ------------------------------------------------------------------ writes, atomics, calls
def test_writes_through_views_reach_the_base():
    @jit
    def k(a):
        i = cuda.grid(1)
        if i < a.shape[0]:
            row = a[i]
            row[0] = -1.0
            a[i, 1:][-1] = -2.0  # last element of the row
            a[::-1][i, 2] += 100.0  # a reversed view, augmented store
        if i == 0:
            col = a[:, 3]
            for r in range(len(col)):
                col[r] = 7.0

    a = np.arange(20, dtype=np.float64).reshape(4, 5)
    want = a.copy()
    want[:, 0] = -1
    want[:, -1] = -2
    want[:, 2] += 100
    want[:, 3] = 7
    k[1, 4](a)
    np.testing.assert_array_equal(a, want)


@cuda.jit(device=True)
def _rowsum(r):
    s = 0.0
    for j in range(len(r)):
        s += r[j]
    return s


@cuda.jit(device=True)
def _scale(r, f):
    for j in range(r.shape[0]):
        r[j] *= f


def test_device_function_takes_a_row():
    @jit
    def k(a, out):
        i = cuda.grid(1)
        if i < a.shape[0]:
            out[i, 0] = _rowsum(a[i])
            out[i, 1] = _rowsum(a[:, i % a.shape[1]])
            out[i, 2] = _rowsum(a[i, ::-2])
        cuda.syncthreads()
        if i == 0:
            _scale(a[1], 2.0)

    a = np.arange(12, dtype=np.float64).reshape(4, 3)
    out = np.zeros((4, 3))
    base = a.copy()
    k[1, 4](a, out)
    for i in range(4):
        assert out[i, 0] == base[i].sum()
        assert out[i, 1] == base[:, i % 3].sum()
        assert out[i, 2] == base[i, ::-2].sum()
    want = base.copy()
    want[1] *= 2
    np.testing.assert_array_equal(a, want)


def test_shared_and_local_row_views():
    @jit
    def k(out):
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        sm = cuda.shared.array((4, 8), np.float32)
        row = sm[ty]
        row[tx] = ty * 10 + tx
        cuda.syncthreads()
        col = sm[::-1, tx]  # another thread's writes, through a view
        loc = cuda.local.array((2, 4), np.float32)
        lrow = loc[1]
        for j in range(4):
            lrow[j] = col[j]
        out[ty, tx] = loc[1, ty]

    out = np.zeros((4, 8), np.float32)
    k[1, (8, 4)](out)
    want = np.array([[(3 - ty) * 10 + tx for tx in range(8)] for ty in range(4)], np.float32)
    np.testing.assert_array_equal(out, want)
    buf = io.StringIO()
    k.inspect_types(file=buf)
    assert "row: shared float32[::1]" in buf.getvalue()  # the row keeps its address space
    assert "lrow: local float32[::1]" in buf.getvalue()


def test_view_of_a_global_constant_array():
    G = np.arange(10, dtype=np.int64) * 3

    @jit
    def k(out):
        v = G[8:2:-3]
        for j in range(len(v)):
            out[j] = v[j]

    out = np.zeros(2, np.int64)
    k[1, 1](out)
    np.testing.assert_array_equal(out, G[8:2:-3])


def test_debug_bounds_check_on_view_index():
    from pykern.core.errors import KernelRuntimeError

    @jit(debug=True)
    def k(a, i, out):
        out[0] = a[i][0]

    a = np.ones((3, 2))
    out = np.zeros(1)
    k[1, 1](a, -1, out)  # wraps like Python
    assert out[0] == 1
    with pytest.raises(KernelRuntimeError, match="out of bounds"):
        k[1, 1](a, 3, out)


# ------------------------------------------------------------------ types and errors
def _view(at, *items):
    return ir.view_type(at, list(items))


def test_view_layouts():
    i = ir.Const(0, T.int64)
    full, part, rev = ir.Slice(), ir.Slice(i, i), ir.Slice(None, None, ir.Const(-1, T.int64))
    c2, f2, a2 = (T.Array(T.float32, 2, lay) for lay in "CFA")
    c3 = T.Array(T.float32, 3, "C", "shared")
    assert _view(c2, i).layout == "C"
    assert _view(c2, i, full).layout == "C"
    assert _view(c2, i, part).layout == "C"
    assert _view(c2, full, i).layout == "A"
    assert _view(c2, part).layout == "C"
    assert _view(c2, full, part).layout == "A"
    assert _view(c2, rev).layout == "A"
    assert _view(f2, full, i).layout == "C"  # a column of an F array: 1-d contiguous
    assert _view(f2, i).layout == "A"
    assert _view(f2, full, part).layout == "F"
    assert _view(f2, part, full).layout == "A"
    assert _view(a2, i).layout == "A"
    v = _view(c3, i)
    assert (v.ndim, v.layout, v.space) == (2, "C", "shared")
    assert _view(T.Array(T.float32, 2, "C", readonly=True), i).readonly


@pytest.mark.parametrize(
    "src, sig, msg",
    [
        ("def k(a):\n    a[0] += 1\n", "void(readonly float32[:, :])", "read-only"),  # a row, += elementwise
        ("def k(a):\n    b = a[1.5:]\n", "void(float32[:])", "slice bounds must be integers"),
        ("def k(a):\n    b = a[1, 0:2]\n", "void(float32[:])", "too many indices"),
        ("def k(a):\n    r = a[0]\n    r[0] = 1\n", "void(readonly float32[:, :])", "read-only"),
    ],
)
def test_view_errors(src, sig, msg):
    err = compile_error(src, sig)
    assert msg in str(err) and err.line is not None


# ------------------------------------------------------------------ amdgpu
def test_view_kernel_builds_for_amdgpu():
    def k(a, out, n):
        i = cuda.grid(1)
        sm = cuda.shared.array((4, 64), np.float32)
        if i < a.shape[0]:
            row = a[i, 1:n:2]
            srow = sm[i % 4]
            srow[cuda.threadIdx.x] = row[0]
            cuda.syncthreads()
            out[i] = _rowsum(a[i]) + a[::-1, 0][i] + srow[0] + len(a[:, ::n])

    ck = cuda.compile(k, "void(float32[:, ::1], float64[::1], int64)", arch="gfx942")
    assert ck.code_object[:4] == b"\x7fELF"
    assert ck.metadata is not None


def test_verifier_checks_views():
    from pykern.frontend.verify import problems

    at = T.Array(T.float32, 2, "C")
    a = ir.Var("a", at)
    i32 = ir.Const(0, T.int32)

    def fn(view):
        return ir.Function("k", [ir.Param("a", at)], T.void, [ir.ExprStmt(view)], {"a": at}, True)

    good = ir.ArrayView(a, [ir.Const(0, T.int64)], ir.view_type(at, [ir.Const(0, T.int64)]))
    assert problems(fn(good)) == []
    wrong_layout = ir.ArrayView(a, [ir.Slice(), ir.Const(0, T.int64)], T.Array(T.float32, 1, "C"))
    assert "expected float32[:]" in problems(fn(wrong_layout))[0][0]
    uncast = ir.ArrayView(a, [i32], ir.view_type(at, [i32]))
    assert "must be int64" in problems(fn(uncast))[0][0]
    too_many = ir.ArrayView(a, [ir.Slice()] * 3, T.Array(T.float32, 3, "A"))
    assert problems(fn(too_many))
    assert "outside an array view" in problems(fn(ir.Slice()))[0][0]


@cuda.jit
def flat_and_sizes(a, out):
    out[0] = a.itemsize
    out[1] = a.nbytes
    s = 0.0
    for v in a.flat:
        s = s * 2 + v
    out[2] = s
    out[3] = a.flat[4]
    out[4] = a.flat[a.size - 1]
    t = 0.0
    for j, v in enumerate(a.flat):
        t += j * v
    out[5] = t


def test_array_flat_itemsize_and_nbytes():
    """numba 0.68 njit of the same body, on a C array, a strided view and a 1-d int16 array."""
    a = np.arange(12.0).reshape(3, 4)
    for arr, ref in ((a, [8.0, 96.0, 4083.0, 4.0, 11.0, 506.0]), (a[:, ::2], [8.0, 48.0, 114.0, 8.0, 10.0, 110.0]),
                     (np.arange(5, dtype=np.int16), [2.0, 10.0, 26.0, 4.0, 4.0, 30.0])):
        out = np.zeros(6)
        flat_and_sizes[1, 1](arr, out)
        assert out.tolist() == ref


def test_array_flat_index_out_of_range_is_caught_under_debug():
    @cuda.jit(debug=True)
    def past_the_end(a, out):
        out[0] = a.flat[12]

    with pytest.raises(IndexError):
        past_the_end[1, 1](np.zeros((3, 4)), np.zeros(1))
