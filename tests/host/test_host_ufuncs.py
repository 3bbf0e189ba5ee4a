"""cuda.vectorize / cuda.guvectorize on the cpu target against numpy: eager signature lists and lazy
typing, broadcasting, scalars, out=, stream=, device and host arrays, gufunc layouts, vectorized
functions called from kernels, ``nopython=True`` accepted as redundant, and ``reduce`` of a
vectorize ufunc as numba-cuda computes it (halves combined pairwise, no initial value)."""

import math
import math as mth

import numpy as np
import pytest

import pykern as cuda


@cuda.vectorize(["float32(float32, float32)", "float64(float64, float64)"])
def _hyp(a, b):
    return math.sqrt(a * a + b * b)


@cuda.vectorize
def _axpb(a, b):
    return a * 2 + b


def test_eager_signatures_pick_numpys_types(cpu_target):
    x = np.linspace(-3, 3, 50, dtype=np.float32)
    r = _hyp(x, x[::-1])
    assert r.dtype == np.float32 and isinstance(r, np.ndarray)
    np.testing.assert_allclose(r, np.hypot(x, x[::-1]), rtol=1e-6)
    r64 = _hyp(x.astype(np.float64), 2.0)
    assert r64.dtype == np.float64
    assert _hyp(x, 2).dtype == np.float32  # a Python scalar is weak (NEP 50)
    assert _hyp.types == ["ff->f", "dd->d"]
    with pytest.raises(TypeError):
        _hyp(np.array(["a"]), x)


@pytest.mark.parametrize("sa, sb", [((7,), (7,)), ((3, 4), (4,)), ((3, 1), (1, 5)), ((2, 3, 4), (3, 1)),
                                    ((2, 1, 3, 2), (4, 1, 1)), ((), (6,)), ((5,), ())])
def test_broadcasting_like_numpy(cpu_target, sa, sb):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(sa)
    b = rng.standard_normal(sb)
    np.testing.assert_allclose(_hyp(a, b), np.hypot(a, b))


def test_lazy_typing_follows_the_inputs(cpu_target):
    i = np.arange(10, dtype=np.int32)
    r = _axpb(i, 3)
    # int32 * 2 + 3 is int64 in the kernel (numba's integer rule), so the output is int64, as numba's
    assert r.dtype == np.int64 and (r == i.astype(np.int64) * 2 + 3).all()
    f = np.arange(10, dtype=np.float32)
    assert _axpb(f, 0.5).dtype == np.float32
    np.testing.assert_array_equal(_axpb(f, np.float32(0.5)), f * 2 + np.float32(0.5))
    assert _axpb(2, 3) == 7
    np.testing.assert_array_equal(_axpb(i.astype(np.int64), i.astype(np.float64)), i * 2.0 + i)


@cuda.vectorize
def _add(a, b):
    return a + b


def test_lazy_python_int_next_to_integer_arrays_is_int64(cpu_target):
    """As a literal in a kernel (numba's integer rule): -3 next to a uint8 array is int64,
    not a uint8 253; a Python int next to a float array still takes the float type."""
    u = np.array([1, 2, 200], np.uint8)
    r = _add(u, -3)
    assert r.dtype == np.int64 and r.tolist() == [-2, -1, 197]
    assert _add(u, 2**63).dtype == np.uint64
    assert _add(np.arange(3, dtype=np.float32), 3).dtype == np.float32


def test_out_stream_and_device_arrays(cpu_target):
    x = np.arange(64, dtype=np.float64).reshape(8, 8)
    out = np.zeros_like(x)
    s = cuda.stream()
    r = _hyp(x, 1.0, out=out, stream=s)
    s.synchronize()
    assert r is out
    np.testing.assert_allclose(out, np.hypot(x, 1.0))
    d = cuda.to_device(x)
    dr = _hyp(d, d)
    assert isinstance(dr, cuda.DeviceArray)  # device in, device out
    np.testing.assert_allclose(dr.copy_to_host(), np.hypot(x, x))
    dout = cuda.device_array_like(x)
    assert _hyp(x, x.T, dout) is dout  # out as the last positional argument
    np.testing.assert_allclose(dout.copy_to_host(), np.hypot(x, x.T))
    np.testing.assert_allclose(_hyp(d[::2, 1:], 3.0).copy_to_host(), np.hypot(x[::2, 1:], 3.0))


def test_ufunc_called_from_a_kernel_and_calling_device_functions(cpu_target):
    @cuda.jit(device=True)
    def sq(v):
        return v * v

    @cuda.vectorize(["float32(float32)"])
    def sqp1(v):
        return sq(v) + 1

    @cuda.jit
    def k(a, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = _hyp(a[i], np.float32(4)) + sqp1(a[i])

    a = np.arange(20, dtype=np.float32)
    out = np.zeros_like(a)
    k[1, 32](a, out)
    np.testing.assert_allclose(out, np.hypot(a, 4) + a * a + 1, rtol=1e-6)
    np.testing.assert_allclose(sqp1(a), a * a + 1)


@cuda.guvectorize(["void(float64[:], float64[:], float64[:])", "void(float32[:], float32[:], float32[:])"],
                  "(n),(n)->()")
def _dot(a, b, res):
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i] * b[i]
    res[0] = acc


@cuda.guvectorize(["void(float64[:, :], float64[:, :], float64[:, :])"], "(m,n),(n,p)->(m,p)")
def _matmul(a, b, c):
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            acc = 0.0
            for k in range(a.shape[1]):
                acc += a[i, k] * b[k, j]
            c[i, j] = acc


@cuda.guvectorize(["void(float64[:], float64, float64[:])"], "(n),()->(n)")
def _shift(a, s, out):
    for i in range(a.shape[0]):
        out[i] = a[i] + s


def test_guvectorize_layouts_against_numpy(cpu_target):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((6, 9)), rng.standard_normal((6, 9))
    np.testing.assert_allclose(_dot(a, b), np.einsum("ij,ij->i", a, b))
    np.testing.assert_allclose(_dot(a, b[0]), a @ b[0])  # the loop dimension broadcasts
    assert np.isclose(_dot(a[0], b[0]), a[0] @ b[0])
    assert _dot(a.astype(np.float32), b.astype(np.float32)).dtype == np.float32
    m1, m2 = rng.standard_normal((4, 3, 5)), rng.standard_normal((5, 2))
    np.testing.assert_allclose(_matmul(m1, m2), m1 @ m2)
    out = np.zeros((4, 3, 2))
    assert _matmul(m1, m2, out) is out
    np.testing.assert_allclose(out, m1 @ m2)
    np.testing.assert_allclose(_shift(a, 2.5), a + 2.5)
    m3 = rng.standard_normal((6, 4, 5))
    strided = np.zeros((6, 8))[:, ::2]  # a non-contiguous host out
    assert _dot(m3, m3, strided) is strided
    np.testing.assert_allclose(strided, (m3 * m3).sum(-1))
    np.testing.assert_allclose(_shift(a, np.arange(6.0)[:, None].ravel()), a + np.arange(6.0)[:, None])
    d = cuda.to_device(a)
    dr = _dot(d, d)
    assert isinstance(dr, cuda.DeviceArray)
    np.testing.assert_allclose(dr.copy_to_host(), (a * a).sum(1))
    with pytest.raises(ValueError):
        _dot(a, b[:, :4])


# ---- numpy ufuncs on arrays inside kernels (numba's kernels accept np.sin(x, out))
@cuda.jit
def _uf_unary(x, out_sin, out_sqrt, out_neg):
    if cuda.grid(1) == 0:
        np.sin(x, out_sin)
        np.sqrt(x, out=out_sqrt)
        np.negative(x, out_neg)


@cuda.jit
def _uf_binary(a, b, s, out_add, out_mul, out_hyp, out_pow):
    if cuda.grid(1) == 0:
        np.add(a, b, out_add)  # b broadcasts along the rows
        np.multiply(a, s, out=out_mul)  # a scalar operand
        np.hypot(a, b, out_hyp)
        np.power(a, 2, out_pow)


def test_ufunc_array_forms_in_kernels(cpu_target):
    x = np.linspace(0, 4, 24).reshape(4, 6)
    outs = [np.zeros_like(x) for _ in range(3)]
    _uf_unary[1, 1](x, *outs)
    np.testing.assert_allclose(outs[0], np.sin(x))
    np.testing.assert_allclose(outs[1], np.sqrt(x))
    np.testing.assert_array_equal(outs[2], -x)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.linspace(1, 2, 4, dtype=np.float32)
    outs = [np.zeros_like(a) for _ in range(4)]
    _uf_binary[1, 1](a, b, np.float32(1.5), *outs)
    np.testing.assert_allclose(outs[0], a + b)
    np.testing.assert_allclose(outs[1], a * np.float32(1.5))
    np.testing.assert_allclose(outs[2], np.hypot(a, b), rtol=1e-6)
    np.testing.assert_allclose(outs[3], a ** 2)


def test_scalar_arithmetic_ufuncs_and_errors(cpu_uncached):
    @cuda.jit
    def k(a, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = np.subtract(np.multiply(a[i], 3), np.floor_divide(a[i], 2))

    a = np.arange(-8, 8, dtype=np.int64)
    out = np.zeros_like(a)
    k[1, 16](a, out)
    np.testing.assert_array_equal(out, a * 3 - a // 2)

    @cuda.jit
    def needs_out(a):
        np.sin(a)

    with pytest.raises(cuda.CompileError, match="output array"):
        needs_out[1, 1](np.zeros(3))


def test_ufunc_array_form_compiles_for_amdgpu():
    ck = cuda.compile(_uf_unary, "void(float64[:, ::1], float64[:, ::1], float64[:, ::1], float64[:, ::1])",
                      arch="gfx942")
    assert "sin" in ck.llvm_ir or "__ocml_sin" in ck.asm or "v_sin" in ck.asm


def test_hip_host_path_copies_in_and_back(cpu_target, monkeypatch):
    """The "hip" branch of the host logic (host arrays copied to device arrays,
    results copied back; device arrays stay) run with cpu memory: only the
    target the ufunc sees is switched, launches and allocations stay on cpu."""
    from pykern.host import ufuncs

    monkeypatch.setattr(ufuncs, "current_target", lambda: "hip")
    x = np.linspace(0, 2, 30).reshape(5, 6)
    r = _hyp(x, 2.0)
    assert isinstance(r, np.ndarray)
    np.testing.assert_allclose(r, np.hypot(x, 2.0))
    out = np.zeros_like(x)
    assert _hyp(x, x, out=out) is out
    np.testing.assert_allclose(out, np.hypot(x, x))
    d = cuda.to_device(x)
    assert isinstance(_hyp(d, 1.0), cuda.DeviceArray)
    a, b = np.random.default_rng(4).random((2, 7, 5))
    np.testing.assert_allclose(_dot(a, b), (a * b).sum(1))
    np.testing.assert_allclose(_shift(a, 1.5), a + 1.5)

    @cuda.reduce
    def add(p, q):
        return p + q

    v = np.arange(3000.0)
    assert add(v) == v.sum()


try:
    from hypothesis import given, settings, strategies as st
    from hypothesis.extra import numpy as hnp
except ImportError:  # pragma: no cover - hypothesis is a test extra
    given = None

if given is not None:
    @cuda.vectorize
    def _fma_like(a, b):
        return a * b + a

    _floats = hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
                         elements=st.floats(allow_nan=True, allow_infinity=True, width=64))

    @settings(max_examples=40, deadline=None)
    @given(_floats, st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([-0.0, 0.0]))
    def test_vectorize_matches_numpy_on_special_values(a, s):
        cuda.set_target("cpu")
        with np.errstate(all="ignore"):
            want = a * s + a
        got = _fma_like(a, s)
        np.testing.assert_array_equal(got, want)  # NaN == NaN here; -0.0 vs 0.0 checked below
        assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()


@pytest.mark.usefixtures("cpu_uncached")
def test_gufunc_doc_example_with_device_arrays_on_a_stream():
    # numba-cuda docs, "Generalized CUDA ufuncs": matmulcore on device arrays, out= and stream=
    @cuda.guvectorize(["void(float32[:,:], float32[:,:], float32[:,:])"], "(m,n),(n,p)->(m,p)")
    def matmulcore(A, B, C):
        m, n = A.shape
        n, p = B.shape
        for i in range(m):
            for j in range(p):
                C[i, j] = 0
                for k in range(n):
                    C[i, j] += A[i, k] * B[k, j]

    matmulcore.max_blocksize = 32
    rng = np.random.RandomState(2)
    A = rng.rand(100, 2, 4).astype(np.float32)
    B = rng.rand(100, 4, 5).astype(np.float32)
    stream = cuda.stream()
    dA = cuda.to_device(A, stream)
    dB = cuda.to_device(B, stream)
    dC = cuda.device_array(shape=(100, 2, 5), dtype=A.dtype, stream=stream)
    matmulcore(dA, dB, out=dC, stream=stream)
    C = dC.copy_to_host(stream=stream)
    stream.synchronize()
    assert np.allclose(C, A @ B, rtol=1e-5)
    assert np.allclose(matmulcore(A, B), A @ B, rtol=1e-5)

    @cuda.guvectorize(["void(float64[:], intp, float64[:])"], "(n),()->(n)")
    def move_mean(a, window_arr, out):  # numba's docs' moving average, a scalar core argument
        window_width = window_arr
        asum = 0.0
        count = 0
        for i in range(window_width):
            asum += a[i]
            count += 1
            out[i] = asum / count
        for i in range(window_width, len(a)):
            asum += a[i] - a[i - window_width]
            out[i] = asum / count

    arr = np.arange(20, dtype=np.float64).reshape(2, 10)
    ref = np.array([[arr[r, max(0, i - 2):i + 1].mean() for i in range(10)] for r in range(2)])
    assert np.allclose(move_mean(arr, 3), ref)


@pytest.mark.usefixtures("cpu_uncached")
def test_vectorize_and_guvectorize_accept_nopython():
    # accepted with numba's warning that it is redundant
    with pytest.warns(RuntimeWarning, match="redundant"):
        @cuda.vectorize(["float64(float64)"], target="cuda", nopython=True)
        def twice(x):
            return 2.0 * x

    with pytest.warns(RuntimeWarning, match="redundant"):
        @cuda.guvectorize(["void(float64[:], float64[:])"], "(n)->(n)", target="cuda", nopython=True)
        def cumsum(x, out):
            acc = 0.0
            for i in range(x.shape[0]):
                acc += x[i] + mth.floor(0.5)
                out[i] = acc

    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(twice(x[0]), 2.0 * x[0])
    np.testing.assert_array_equal(cumsum(x), np.cumsum(x, 1))


@cuda.vectorize(["float64(float64, float64)", "int64(int64, int64)"])
def mul(a, b):
    return a * b


@cuda.vectorize(["int64(int64, int64)"])
def biggest(a, b):
    return max(a, b)


@cuda.vectorize(["float64(float64, float64)"])
def sub(a, b):
    return a - b


@cuda.vectorize(["float32(float32, float32)"])
def add32(a, b):
    return a + b


def _numba_order(f, x):
    """numba's DeviceVectorize reduction order, on the host."""
    n = len(x)
    if n % 2:
        return f(_numba_order(f, x[: n - 1]), x[n - 1 :])
    left = f(x[: n // 2], x[n // 2 :])
    return _numba_order(f, left) if n // 2 > 1 else left


@pytest.mark.usefixtures("cpu_uncached")
def test_products_and_maxima_have_no_zero_folded_in():
    assert mul.reduce(np.arange(1.0, 6.0)) == 120.0
    r = mul.reduce(np.arange(1, 8))
    assert r == 5040 and np.asarray(r).dtype == np.int64
    assert biggest.reduce(np.array([-5, -3, -9])) == -3


@pytest.mark.parametrize("n", [2, 3, 7, 8, 13, 100])
@pytest.mark.usefixtures("cpu_uncached")
def test_non_associative_order_is_numbas(n):
    x = np.arange(1.0, n + 1.0)
    assert sub.reduce(x) == _numba_order(np.subtract, x)[0]


@pytest.mark.usefixtures("cpu_uncached")
def test_float32_sum_rounds_in_numbas_order():
    x = np.random.default_rng(0).random(1001).astype(np.float32) * 1000
    want = _numba_order(np.add, x)[0]
    got = add32.reduce(cuda.to_device(x))
    assert got == want and np.asarray(got).dtype == np.float32


@pytest.mark.usefixtures("cpu_uncached")
def test_edges():
    assert mul.reduce(np.array([7.0])) == 7.0
    with pytest.raises(TypeError, match="empty"):
        mul.reduce(np.zeros(0))
    with pytest.raises(TypeError):
        mul.reduce(np.ones((2, 2)))
