"""Frontend end to end on the cpu target: kernels written in Python, run, and
compared with numpy/Python semantics."""

import math

import numpy as np
import pytest

import pykern as cuda

from frontend_helpers import jit


pytestmark = pytest.mark.usefixtures("cpu_target")


def test_saxpy_2d_and_row_index():
    @jit
    def k(a, x, out):
        i, j = cuda.grid(2)
        if i < x.shape[0] and j < x.shape[1]:
            out[i][j] = a * x[i, j] + 1

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.zeros_like(x)
    k[(1, 1), (4, 4)](np.float32(2), x, out)
    np.testing.assert_array_equal(out, 2 * x + 1)


def test_python_int_semantics():
    @jit
    def k(a, b, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i, 0] = a[i] // b[i]
            out[i, 1] = a[i] % b[i]
            out[i, 2] = a[i] ** 2
            out[i, 3] = -a[i] >> 1
            out[i, 4] = a[i] & 6 | 1

    a = np.array([7, -7, 7, -7, 0, 5], np.int64)
    b = np.array([2, 2, -2, -2, 3, 5], np.int64)
    out = np.zeros((6, 5), np.int64)
    k[1, 8](a, b, out)
    for n in range(6):
        x, y = int(a[n]), int(b[n])
        assert list(out[n]) == [x // y, x % y, x ** 2, -x >> 1, x & 6 | 1]


def test_float_floor_div_mod_and_division():
    @jit
    def k(a, b, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i, 0] = a[i] // b[i]
            out[i, 1] = a[i] % b[i]
            out[i, 2] = a[i] / b[i]
            out[i, 3] = a[i] ** b[i]

    a = np.array([7.5, -7.5, 7.5, -7.5, 2.0], np.float64)
    b = np.array([2.0, 2.0, -2.0, -2.0, 0.5], np.float64)
    out = np.zeros((5, 4))
    k[1, 8](a, b, out)
    for n in range(5):
        x, y = a[n], b[n]
        np.testing.assert_allclose(out[n], [x // y, x % y, x / y, x ** y])


def test_promotion_and_store_casts():
    @jit
    def k(f, i, out, iout):
        s = 0
        for n in range(f.shape[0]):
            s += f[n] * i[n]
        out[0] = s
        out[1] = i[0] / 2
        iout[0] = f[1]          # float -> int truncates toward zero
        iout[1] = -f[1]
        iout[2] = True + True

    f = np.array([1.5, 2.75, 3.0], np.float32)
    i = np.array([3, 2, 1], np.int32)
    out = np.zeros(2)
    iout = np.zeros(3, np.int32)
    k[1, 1](f, i, out, iout)
    assert out[0] == pytest.approx(float(np.sum(f.astype(np.float64) * i)))
    assert out[1] == 1.5
    assert list(iout) == [2, -2, 2]


def test_control_flow():
    @jit
    def k(out, n):
        total = 0
        for i in range(10, 0, -3):
            total += i
        j = 0
        while True:
            j += 1
            if j % 2 == 0:
                continue
            if j > 7:
                break
            total += 100
        out[0] = total
        out[1] = j
        x = 5 if n > 3 else -5
        out[2] = x
        if 0 <= n < 10 and not n == 4:
            out[3] = 1
        elif n == 4:
            out[3] = 2
        else:
            out[3] = 3
        for q in range(n):
            pass
        out[4] = q

    out = np.zeros(5, np.int64)
    k[1, 1](out, 4)
    assert list(out) == [10 + 7 + 4 + 1 + 400, 9, 5, 2, 3]
    k[1, 1](out, 20)
    assert list(out[2:4]) == [5, 3]


def test_early_return_and_device_functions_with_tuples():
    @jit(device=True)
    def divmod_(a, b):
        return a // b, a % b

    @jit(device=True)
    def clamp(x, lo, hi):
        if x < lo:
            return lo
        if x > hi:
            return hi
        return x

    @jit
    def k(a, out):
        i = cuda.grid(1)
        if i >= a.size:
            return
        q, r = divmod_(a[i], 3)
        out[i, 0] = q
        out[i, 1] = r
        out[i, 2] = clamp(a[i], 0, 5)

    a = np.array([-4, 0, 4, 9, 11], np.int32)
    out = np.zeros((5, 3), np.int32)
    k[1, 64](a, out)
    for n, x in enumerate(a.tolist()):
        assert list(out[n]) == [x // 3, x % 3, min(max(x, 0), 5)]


TABLE = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
SCALE = 3
OFFS = (10, 20, 30)


def test_globals_frozen_and_const_arrays():
    @jit
    def k(out):
        c = cuda.const.array_like(TABLE)
        for j in range(3):
            out[j] = c[1, j] * SCALE + TABLE[0, j] + OFFS[j] + OFFS[-1]

    out = np.zeros(3, np.float32)
    k[1, 1](out)
    np.testing.assert_array_equal(out, TABLE[1] * 3 + TABLE[0] + np.array(OFFS) + 30)


def test_math_functions():
    @jit
    def k(x, out32, out64, outi):
        i = cuda.grid(1)
        if i < x.size:
            v = x[i]
            out32[i, 0] = math.sin(v)
            out32[i, 1] = math.sqrt(v)
            out32[i, 2] = math.exp(v / 4)
            out32[i, 3] = math.atan2(v, 2)
            out32[i, 4] = abs(-v)
            out32[i, 5] = min(v, 1.5, 2)
            out32[i, 6] = cuda.fma(v, v, 1)
            out64[i, 0] = math.log(v + 1, 2)
            out64[i, 1] = math.pi * v
            outi[i, 0] = math.floor(v)
            outi[i, 1] = math.ceil(v)
            outi[i, 2] = round(v)
            outi[i, 3] = math.isnan(v) + 2 * math.isinf(v) + 4 * math.isfinite(v)

    x = np.array([0.5, 1.5, 2.5, 3.25, 10.0], np.float32)
    out32 = np.zeros((5, 7), np.float32)
    out64 = np.zeros((5, 2))
    outi = np.zeros((5, 4), np.int64)
    k[1, 8](x, out32, out64, outi)
    for n, v in enumerate(x.tolist()):
        np.testing.assert_allclose(
            out32[n],
            [math.sin(v), math.sqrt(v), math.exp(v / 4), math.atan2(v, 2), v, min(v, 1.5), v * v + 1],
            rtol=1e-5,
        )
        np.testing.assert_allclose(out64[n], [math.log(v + 1, 2), math.pi * np.float32(v)], rtol=1e-6)
        assert list(outi[n]) == [math.floor(v), math.ceil(v), round(v), 4]


def test_tuple_args_and_dynamic_tuple_index():
    @jit
    def k(t, out):
        for i in range(3):
            out[i] = t[i] + t[-1]

    out = np.zeros(3, np.float32)
    k[1, 1]((1.0, 2.0, 3.0), out)
    np.testing.assert_array_equal(out, [4.0, 5.0, 6.0])


def test_strided_views_and_shape_attrs():
    @jit
    def k(a, out):
        n, m = a.shape
        out[0] = n
        out[1] = m
        out[2] = a.size
        out[3] = a.ndim
        out[4] = len(a)
        s = 0.0
        for i in range(n):
            for j in range(m):
                s += a[i, j]
        out[5] = s

    base = np.arange(48, dtype=np.float64).reshape(6, 8)
    view = base[1::2, ::3]
    out = np.zeros(6)
    k[1, 1](view, out)
    assert list(out) == [3, 3, 9, 2, 3, view.sum()]


def test_array_variables_and_array_ifexp():
    @jit
    def k(a, b, out, c):
        x = a
        if c > 0:
            x = b
        out[0] = x[0]
        y = a if c > 0 else b
        out[1] = y[0]

    a, b, out = np.array([1.0]), np.array([2.0]), np.zeros(2)
    k[1, 1](a, b, out, 1)
    assert list(out) == [2.0, 1.0]
    k[1, 1](a, b, out, 0)
    assert list(out) == [1.0, 2.0]


def test_device_functions_with_arrays_defaults_keywords():
    @jit(device=True)
    def fill(arr, v=2.5):
        for i in range(arr.shape[0]):
            arr[i] = v

    @jit(device=True)
    def first_neg(arr):
        for i in range(arr.shape[0]):
            if arr[i] < 0:
                return i
        return -1

    @jit
    def k(out, inp):
        sm = cuda.shared.array(4, np.float64)
        fill(sm)
        out[0] = sm[3]
        out[1] = first_neg(inp)
        fill(v=7.0, arr=sm)
        out[2] = sm[0]

    out = np.zeros(3)
    k[1, 1](out, np.array([1, 2, -3, 4]))
    assert list(out) == [2.5, 2.0, 7.0]


def test_float16_bool_zero_d_unsigned():
    @jit
    def k(h, hout, a, bout, z, u, uout):
        hout[0] = h[0] + h[1]
        hout[1] = h[0] * 2
        hout[2] = math.sqrt(h[1])
        i = cuda.grid(1)
        bout[i] = a[i] > 2
        bout[i] = bout[i] and a[i] < 4
        z[()] = 5
        uout[0] = u[0] + 1
        uout[1] = u[0] - 2     # wraps like numpy uint32
        uout[2] = -1           # stored with numpy's cast: 2**32 - 1

    h = np.array([1.5, 4.0], np.float16)
    hout = np.zeros(3, np.float16)
    a = np.arange(6)
    bout = np.zeros(6, np.bool_)
    z = np.array(1.0)
    u = np.array([1], np.uint32)
    uout = np.zeros(3, np.uint32)
    k[1, 6](h, hout, a, bout, z, u, uout)
    assert list(hout) == [5.5, 3.0, 2.0]
    assert list(bout) == [False, False, False, True, False, False]
    assert z[()] == 5.0
    assert list(uout) == [2, 2**32 - 1, 2**32 - 1]


def test_gridsize_2d_blocks_and_param_widening():
    @jit
    def k(out, n, grid_out):
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        out[ty, tx] = ty * 10 + tx + cuda.blockDim.y * 100
        gx, gy = cuda.gridsize(2)
        if tx == 0 and ty == 0:
            n = n * 2.5
            grid_out[0] = gx
            grid_out[1] = gy
            grid_out[2] = n

    out = np.zeros((2, 3), np.int64)
    grid_out = np.zeros(3)
    k[(1, 1), (3, 2)](out, np.int32(3), grid_out)
    assert out.tolist() == [[200, 201, 202], [210, 211, 212]]
    assert list(grid_out) == [3, 2, 7.5]


def test_annotated_assignment_and_tuple_unification():
    @jit
    def k(out):
        x: np.float32 = 1.5
        out[0] = x
        t = (out[0], 1)
        t = (1.0, 2)
        out[1] = t[0] + t[1]
        a, b = 1, 2
        a, b = b, a
        out[2] = a * 10 + b

    out = np.zeros(3)
    k[1, 1](out)
    assert list(out) == [1.5, 3.0, 21.0]


PAIRS = [
    (np.int32, np.int32),
    (np.int32, np.int64),
    (np.uint8, np.int8),
    (np.uint32, np.int32),
    (np.uint64, np.int64),
    (np.int16, np.float32),
    (np.int64, np.float32),
    (np.float32, np.float64),
    (np.float32, np.float32),
    (np.bool_, np.int8),
    (np.uint16, np.uint64),
    (np.float16, np.int8),
]


@pytest.mark.parametrize("ta, tb", PAIRS, ids=lambda t: np.dtype(t).name)
def test_binary_ops_match_numpy(ta, tb):
    @jit
    def k(a, b, out, div):
        i = cuda.grid(1)
        if i < a.size:
            out[0, i] = a[i] + b[i]
            out[1, i] = a[i] - b[i]
            out[2, i] = a[i] * b[i]
            if b[i] != 0:
                out[3, i] = a[i] // b[i]
                out[4, i] = a[i] % b[i]
            div[i] = a[i] / b[i] if b[i] != 0 else 0
            out[5, i] = (a[i] < b[i]) + 2 * (a[i] == b[i])

    rng = np.random.default_rng(0)

    def sample(t, n):
        if np.dtype(t).kind == "b":
            return rng.integers(0, 2, n).astype(t)
        if np.dtype(t).kind == "f":
            return rng.uniform(-50, 50, n).round(1).astype(t)
        info = np.iinfo(t)
        return rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True).astype(t)

    n = 64
    a, b = sample(ta, n), sample(tb, n)
    if np.dtype(ta).kind == "b" and np.dtype(tb).kind == "b":
        pytest.skip("bool arithmetic is Python-like, not numpy-like")
    rt = np.result_type(a, b)
    out = np.zeros((6, n), rt)
    div = np.zeros(n, np.result_type(a.dtype, b.dtype, np.float16) if rt.kind == "f" else np.float64)
    k[1, n](a, b, out, div)
    with np.errstate(all="ignore"):
        nz = b != 0
        np.testing.assert_array_equal(out[0], a + b)
        np.testing.assert_array_equal(out[1], a - b)
        np.testing.assert_array_equal(out[2], a * b)
        np.testing.assert_array_equal(out[3][nz], (a // b)[nz])
        np.testing.assert_allclose(out[4][nz].astype(np.float64), (a % b)[nz].astype(np.float64), atol=1e-3)
        np.testing.assert_allclose(div[nz], (a / b)[nz].astype(div.dtype), rtol=2e-3 if rt == np.float16 else 1e-6)
        np.testing.assert_array_equal(out[5], (a < b) + 2 * (a == b))


WEIGHTS = (0.25, 0.5, 0.25)


def test_for_over_arrays_and_tuples():
    @jit
    def k(a, out, t):
        s = 0.0
        for x in a:
            if x < 0:
                continue
            s += x
        out[0] = s
        acc = 0.0
        for w in WEIGHTS:
            acc += w
        out[1] = acc
        for v in t:
            out[2] += v

    out = np.zeros(3)
    k[1, 1](np.array([1.0, -2.0, 3.0]), out, (1, 2, 3))
    assert list(out) == [4.0, 1.0, 6.0]


def test_compile_error_reaches_the_launch_site():
    @jit
    def k(a):
        a[0] = undefined_in_kernel  # noqa: F821

    with pytest.raises(cuda.CompileError) as ei:
        k[1, 1](np.zeros(1))
    e = ei.value
    assert "name 'undefined_in_kernel' is not defined" in str(e)
    assert e.file == __file__
    assert e.line == k.py_func.__code__.co_firstlineno + 2


def test_shift_of_uint64_by_signed_count_uses_the_left_type():
    import pykern

    @pykern.jit
    def k(a, n, out):
        out[0] = a[0] << n
        out[1] = a[0] >> n

    a = np.array([0xF000000000000001], np.uint64)
    out = np.zeros(2, np.uint64)
    pykern.set_target("cpu")
    k[1, 1](a, np.int64(4), out)
    assert out[0] == np.uint64(0x0000000000000010) and out[1] == np.uint64(0x0F00000000000000)


def test_assignment_expressions_like_numba():
    # ``if (v := x[i]) > 0.5:`` and ``while (s := s // 2) > 0:`` -- numba compiles the bytecode
    # of := as an assignment; in a while test it runs on every test
    @cuda.jit
    def k(x, out):
        sh = cuda.shared.array(32, np.float32)
        t = cuda.threadIdx.x
        sh[t] = x[t]
        cuda.syncthreads()
        s = 32
        while (s := s // 2) > 0:
            if t < s:
                sh[t] += sh[t + s]
            cuda.syncthreads()
        if t == 0:
            out[0] = sh[0]
        if (v := x[t]) > 0.5:
            out[1 + t] = v
        out[33 + t] = (w := v * 2) + w
        if t > 3 and (z := x[t] + 1) > 1.7:
            out[65 + t] = z

    x = np.random.RandomState(3).rand(32).astype(np.float32)
    out = np.zeros(97, np.float32)
    k[1, 32](x, out)
    assert np.isclose(out[0], x.sum(dtype=np.float64), rtol=1e-5)
    assert np.array_equal(out[1:33], np.where(x > 0.5, x, 0))
    assert np.array_equal(out[33:65], 4 * x)
    assert np.array_equal(out[65:], np.where((np.arange(32) > 3) & (x + 1 > 1.7), x + 1, 0))


@cuda.jit(device=True)
def _fill(a, v):
    for i in range(a.size):
        a[i] = v


@cuda.jit
def _returns_a_void_call(a, flag):
    if flag:
        return _fill(a, 7)
    _fill(a, 3)


def test_a_kernel_may_return_the_call_of_a_function_that_returns_nothing():
    """numba types a kernel's return as none, which ``return f(a)`` of such an f is."""
    for flag, want in ((1, 7), (0, 3)):
        a = np.zeros(4, np.int32)
        _returns_a_void_call[1, 1](a, flag)
        assert a.tolist() == [want] * 4


def test_a_kernel_returning_a_value_is_still_refused():
    def k(a):
        return a[0] + 1

    with pytest.raises(cuda.CompileError, match="kernels cannot return a value"):
        cuda.jit(k)[1, 1](np.zeros(2, np.int32))
