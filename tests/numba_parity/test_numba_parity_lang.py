"""Kernel-language behaviour that numba-cuda's own cudapy tests rely on, on the cpu target against
numpy/Python: augmented slice assignment, ``len(range(...))``, global lists, ``a.view(dtype)``,
device functions returning arrays, ``f(*t)``, ``a.reshape(...)``, device signatures of argument
types only, 0-d integer arrays as indices, kernels closing over different ufuncs; and amdgpu builds
of the new lowering.

Records, complex numbers and enums that those tests use: tests/lang/test_records.py,
test_complex.py, test_enums.py."""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest

import pykern as cuda
from pykern.core.errors import CompileError

pytestmark = pytest.mark.usefixtures("cpu_target")


# ------------------------------------------------------------ a[1:3] op= v
def _aug_kernel(a, b, m):
    a[1:3] += 5
    a[3:] *= b[:3]
    m[1] += 10  # a row of a 2-d array
    m[:, 0] -= b[0:3]
    m[0, 1:] //= 2
    m[2, ::-1] %= 3


def test_augmented_slice_assignment_matches_numpy():
    a, b, m = np.arange(6.0), np.array([2.0, 3.0, 4.0, 5.0]), np.arange(-4, 5).reshape(3, 3)
    ea, em = a.copy(), m.copy()
    ea[1:3] += 5
    ea[3:] *= b[:3]
    em[1] += 10
    em[:, 0] -= b[0:3].astype(np.int64)
    em[0, 1:] //= 2
    em[2, ::-1] %= 3
    cuda.jit(_aug_kernel)[1, 1](a, b, m)
    np.testing.assert_array_equal(a, ea)
    np.testing.assert_array_equal(m, em)


def test_augmented_slice_assignment_reads_an_overlapping_source_first():
    @cuda.jit
    def shift_add(a, c):
        a[1:] += a[:-1]
        c[:-1] += c[1:]

    a, c = np.arange(8.0), np.arange(8.0)
    ea, ec = a.copy(), c.copy()
    ea[1:] += ea[:-1]  # numpy reads the source as it was
    ec[:-1] += ec[1:]
    shift_add[1, 1](a, c)
    np.testing.assert_array_equal(a, ea)
    np.testing.assert_array_equal(c, ec)


def test_augmented_slice_assignment_with_a_tuple_and_a_device_function():
    @cuda.jit(device=True)
    def bump(row, v):
        row[:] += v

    @cuda.jit
    def k(a, m):
        a[:3] += (1, 2, 3)
        bump(m[1], 2.5)

    a, m = np.ones(4), np.zeros((2, 3), np.float32)
    k[1, 1](a, m)
    np.testing.assert_array_equal(a, [2, 3, 4, 1])
    np.testing.assert_array_equal(m, [[0, 0, 0], [2.5, 2.5, 2.5]])


def test_augmented_slice_assignment_evaluates_the_value_once():
    @cuda.jit
    def k(a, counter):
        a[:] += cuda.atomic.add(counter, 0, 1)

    a, counter = np.zeros(5, np.int64), np.full(1, 7, np.int64)
    k[1, 1](a, counter)
    np.testing.assert_array_equal(a, 7)
    assert counter[0] == 8


def test_augmented_assignment_to_a_read_only_slice_is_a_compile_error():
    c = np.arange(4.0)

    @cuda.jit
    def k(a):
        cc = cuda.const.array_like(c)
        cc[1:] += a[0]

    with pytest.raises(CompileError, match="read-only"):
        k[1, 1](np.zeros(1))


# ------------------------------------------------------------ len(range(...))
def test_len_of_range_is_the_loop_trip_count():
    @cuda.jit
    def k(out, a, b, s):
        out[0] = len(range(a))
        out[1] = len(range(a, b))
        out[2] = len(range(a, b, s))
        out[3] = len(range(b, a, -s))
        out[4] = len(range(5, 1))
        n = 0
        for i in range(len(range(0, 10, 3))):
            n += i
        out[5] = n

    for a, b, s in [(3, 11, 2), (0, 0, 1), (-5, 7, 3), (10, 2, 4), (2, 3, 7)]:
        out = np.zeros(6, np.int64)
        k[1, 1](out, a, b, s)
        want = [len(range(a)), len(range(a, b)), len(range(a, b, s)), len(range(b, a, -s)), 0, sum(range(len(range(0, 10, 3))))]
        assert out.tolist() == want, (a, b, s)


# ------------------------------------------------------------ global lists
_WEIGHTS = [0.25, 0.5, 0.25]


def test_global_list_is_read_as_a_frozen_tuple():
    @cuda.jit
    def k(out, a):
        i = cuda.grid(1)
        if i < out.size:
            s = 0.0
            for j in range(len(_WEIGHTS)):
                s += _WEIGHTS[j] * a[i + j]
            for w in _WEIGHTS:
                s += w
            out[i] = s

    a, out = np.arange(10.0), np.zeros(8)
    k[1, 8](out, a)
    np.testing.assert_allclose(out, np.convolve(a, _WEIGHTS, "valid") + 1.0)


def test_closure_list_of_ints():
    lst = [3, 1, 2]

    @cuda.jit
    def k(out):
        for i in range(len(lst)):
            out[i] = lst[i]

    out = np.zeros(3)
    k[1, 1](out)
    assert out.tolist() == lst


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_new_lowering_builds_for_amdgpu(arch):
    def k(a, b, out, z):
        a[1:3] += b[0]
        a[2:] *= b[:2]
        out[0] = len(range(1, a.size, 2))
        z[0] = cmath.acos(z[1]) + np.complex128(a[0], b[0])

    sig = "void(float64[::1], float64[::1], int64[::1], complex128[::1])"
    ck = cuda.compile(k, sig, arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"


# ------------------------------------------------------------ a.view(dtype), a.real, a.imag
def test_array_view_reinterprets_the_bytes():
    @cuda.jit
    def k(b, start, stop, out, f, bits):
        out[0] = b[start:stop].view(np.int32)[0]
        w = b.view(np.uint16)
        out[1] = w[3]
        out[2] = w.size
        v = f.view(np.uint32)
        for i in range(v.size):
            bits[i] = v[i]
        f.view(np.int32)[0] = 0  # writes through the view
        out[3] = b.view(np.uint64).size

    b = np.arange(16, dtype=np.uint8)
    f = np.array([1.5, -2.0, 3.25], np.float32)
    want_bits = f.view(np.uint32).copy()
    out, bits = np.zeros(4, np.int64), np.zeros(3, np.uint32)
    k[1, 1](b, 4, 8, out, f, bits)
    assert out.tolist() == [b[4:8].view(np.int32)[0], b.view(np.uint16)[3], 8, 2]
    np.testing.assert_array_equal(bits, want_bits)
    assert f[0] == 0.0 and f[1] == -2.0


def test_array_view_of_a_2d_array_rescales_the_last_axis():
    @cuda.jit
    def k(a, out):
        v = a.view(np.uint8)
        for i in range(v.shape[0]):
            for j in range(v.shape[1]):
                out[i, j] = v[i, j]

    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    out = np.zeros((2, 6), np.uint8)
    k[1, 1](a, out)
    np.testing.assert_array_equal(out, a.view(np.uint8))


def test_array_view_of_another_size_needs_a_contiguous_array():
    @cuda.jit
    def k(a, out):
        out[0] = a[::2].view(np.int64)[0]

    with pytest.raises(CompileError, match="C-contiguous"):
        k[1, 1](np.zeros(8, np.int32), np.zeros(1, np.int64))


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_array_views_build_for_amdgpu(arch):
    def k(z, b, out):
        z.imag[0] = b.view(np.float32)[1]
        out[0] = z[::2].real[0]

    ck = cuda.compile(k, "void(complex64[::1], int32[::1], float32[::1])", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"


# ------------------------------------------------------------ device functions returning arrays
@cuda.jit(device=True)
def _window(a, start, stop):
    return a[start:stop]


@cuda.jit(device=True)
def _pick(a, b):
    if b[0] > a[0]:
        r = a
    else:
        r = b
    return r


@cuda.jit(device=True)
def _first_zero_led(x, y):
    for arr in (x, y):
        if arr[0] == 0:
            return arr
    return y


@cuda.jit(device=True)
def _block(a, i, j):
    return a[2 * i:2 * i + 2, 2 * j:2 * j + 2]


@cuda.jit(device=True)
def _as_u16(a):
    return a.view(np.uint16)


def test_device_functions_return_views_of_their_array_arguments():
    @cuda.jit
    def k(a, b, m, u):
        _window(a, 2, 4)[0] = 10.0
        _pick(a, b)[1] = 20.0  # b[0] > a[0]: a
        _first_zero_led(b, a)[3] = 30.0  # a[0] == 0
        blk = _block(m, 1, 0)
        blk[1, 1] = -1.0
        w = _as_u16(u)
        w[0] = 1
        w[1] = 2

    a, b = np.zeros(5), np.ones(5)
    m = np.zeros((4, 4))
    u = np.zeros(2, np.uint32)
    k[1, 1](a, b, m, u)
    assert a.tolist() == [0, 20, 10, 30, 0]
    assert b.tolist() == [1, 1, 1, 1, 1]
    assert m[3, 1] == -1.0 and np.count_nonzero(m) == 1
    assert u[0] == 2 * 2**16 + 1 and u[1] == 0


def test_device_function_cannot_return_a_local_array():
    @cuda.jit(device=True)
    def scratch():
        return cuda.local.array(4, np.float32)

    @cuda.jit
    def k(out):
        s = scratch()
        out[0] = s[0]

    with pytest.raises(CompileError, match="cannot return a local array"):
        k[1, 1](np.zeros(1, np.float32))


def test_device_function_returning_arrays_of_two_types_is_a_compile_error():
    @cuda.jit(device=True)
    def either(a, b, flag):
        if flag:
            return a[1:]
        return b

    @cuda.jit
    def k(a, b):
        either(a, b, a[0] > 0)[0] = 1  # a run-time flag: a literal one prunes a branch

    with pytest.raises(CompileError, match="arrays of one type"):
        k[1, 1](np.zeros(4), np.zeros(4, np.float32))


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_array_returns_build_for_amdgpu(arch):
    def k(a, m):
        _window(a, 1, 3)[0] = 2.0
        _block(m, 0, 1)[0, 0] = 3.0

    ck = cuda.compile(k, "void(float64[::1], float64[:, ::1])", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"


# ------------------------------------------------------------ f(*t)
_T3 = (1.0, 2.0, 3.0)


@cuda.jit(device=True)
def _add3(a, b, c):
    return a + 10 * b + 100 * c


def test_call_with_starred_tuple_arguments():
    @cuda.jit
    def k(out, z, x):
        out[0] = _add3(*_T3)  # a frozen global tuple
        t = (x[0], x[1])
        out[1] = _add3(5.0, *t)
        w = complex(*cmath.polar(z[0]))  # numba's complex_usecases spelling
        out[2] = w.real
        out[3] = w.imag
        out[4] = math.hypot(*t)
        out[5] = _add3(*(x[0], x[1]), x[2])

    out, z, x = np.zeros(6), np.array([3 + 4j]), np.array([1.0, 2.0, 3.0])
    k[1, 1](out, z, x)
    np.testing.assert_allclose(out, [321, 215, 5.0, math.atan2(4, 3), math.hypot(1, 2), 321], rtol=1e-15)


def test_starred_array_argument_is_a_compile_error():
    @cuda.jit
    def k(out, x):
        out[0] = _add3(*x)

    with pytest.raises(CompileError, match="only tuples can be unpacked"):
        k[1, 1](np.zeros(1), np.zeros(3))


# ------------------------------------------------------------ a.reshape(...)
def _reshape2d(arr, newshape, got):
    y = arr.reshape(newshape)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            got[i, j] = y[i, j]


@pytest.mark.parametrize("src, shape", [
    (np.arange(24), (4, 6)), (np.arange(24).reshape(2, 3, 4), (8, 3)), (np.arange(25).reshape(5, 5), (-1, 5)),
    (np.arange(24.0), (6, -1)), (np.zeros(0), (0, 3)),
])
def test_reshape_with_a_run_time_shape_matches_numpy(src, shape):
    want = src.reshape(shape)
    got = np.full(want.shape, -7, src.dtype)
    cuda.jit(_reshape2d)[1, 1](src, shape, got)
    np.testing.assert_array_equal(got, want)


def test_reshape_spellings_and_writes_through_the_view():
    @cuda.jit
    def k(a, out):
        m = a.reshape(3, 4)
        m[1, 2] = -1
        out[0] = a[6]
        out[1] = a[2:10].reshape((2, 4))[1, 3]
        out[2] = a.reshape(-1).size
        out[3] = m.reshape(12)[11]

    a, out = np.arange(12), np.zeros(4, np.int64)
    k[1, 1](a, out)
    assert out.tolist() == [-1, 9, 12, 11]


def test_reshape_to_another_size_is_empty_and_a_debug_value_error():
    from pykern.core.errors import KernelValueError

    def k(a, n, out):
        out[0] = a.reshape(n, 5).size

    out = np.full(1, 99)
    cuda.jit(k)[1, 1](np.arange(12), 2, out)
    assert out[0] == 0
    with pytest.raises(KernelValueError, match="total size"):
        cuda.jit(debug=True)(k)[1, 1](np.arange(12), 2, out)


def test_reshape_of_a_strided_array_is_a_compile_error():
    @cuda.jit
    def k(a, out):
        out[0] = a[::2].reshape(2, 2)[0, 0]

    with pytest.raises(CompileError, match="C-contiguous"):
        k[1, 1](np.arange(8.0), np.zeros(1))


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_reshape_builds_for_amdgpu(arch):
    def k(a, n, out):
        out[0] = a.reshape(n, -1)[1, 2]

    ck = cuda.compile(k, "void(float32[::1], int64, float32[::1])", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"


# ------------------------------------------------------------ device signatures of argument types only
def test_device_function_with_argument_types_only_infers_its_return_type():
    fma3 = cuda.jit((cuda.float64, cuda.float64, cuda.float64), device=True)(lambda x, y, z: x * y + z)
    half = cuda.jit((cuda.int32,), device=True)(lambda n: n / 2)

    @cuda.jit
    def k(r):
        r[0] = fma3(2.0, 3.0, 1.0)
        r[1] = half(3)

    r = np.zeros(2)
    k[1, 1](r)
    assert r.tolist() == [7.0, 1.5]


def test_kernels_closing_over_different_ufuncs_are_different_kernels():
    x = np.array([0.25, 4.0])
    got = {}
    for uf in (np.sqrt, np.exp, np.log):
        @cuda.jit
        def k(out, a):
            i = cuda.grid(1)
            if i < a.size:
                out[i] = uf(a[i])

        out = np.zeros(2)
        k[1, 2](out, x)
        got[uf.__name__] = out
    for name, out in got.items():
        np.testing.assert_allclose(out, getattr(np, name)(x), rtol=1e-15)


# ------------------------------------------------------------ 0-d integer arrays as indices
def test_zero_d_integer_array_indexes_with_its_value():
    # numba's cache tests launch k(r, ary, np.asarray(i)): a 0-d int array used as an index
    rec = np.dtype([("a", np.int8), ("b", np.float64)], align=True)
    recs = np.array([(1, 42.5), (2, 43.5)], dtype=rec)

    @cuda.jit
    def pick(r, ary, i, m, j, out):
        r[()] = ary[i]
        out[0] = m[j, i]
        out[1] = m[i, -1]

    r = np.zeros((), dtype=rec)
    m = np.arange(12.0).reshape(3, 4)
    out = np.zeros(2)
    pick[1, 1](r, recs, np.asarray(1), m, np.asarray(np.int32(2)), out)
    assert tuple(r[()]) == (2, 43.5)
    assert out.tolist() == [m[2, 1], m[1, -1]]


def test_zero_d_float_array_is_still_refused_as_an_index():
    @cuda.jit
    def bad(a, f):
        a[0] = a[f]

    with pytest.raises(CompileError, match="array index must be an integer"):
        bad[1, 1](np.zeros(2), np.asarray(1.0))
