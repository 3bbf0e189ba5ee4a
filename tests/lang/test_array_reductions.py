"""Whole-array reductions inside kernels, as numba.cuda compiles them (``np.sum(a)``,
``a.max()``, ``np.nanmean(a)``, ``np.median(a)``, ``a.argmin()``...): run on the cpu
target against numpy, over dtypes, layouts, NaN/inf/-0.0 and integer extremes."""

from __future__ import annotations

import warnings

from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp
import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")

FLOAT_NAMES = ["sum", "prod", "min", "max", "mean", "var", "std", "nansum", "nanprod", "nanmin", "nanmax",
               "nanmean", "nanvar", "nanstd", "median"]
INDEX_NAMES = ["argmin", "argmax", "all", "any"]


@cuda.jit
def every_reduction(a, o, idx):
    o[0] = np.sum(a)
    o[1] = np.prod(a)
    o[2] = np.min(a)
    o[3] = np.max(a)
    o[4] = np.mean(a)
    o[5] = np.var(a)
    o[6] = np.std(a)
    o[7] = np.nansum(a)
    o[8] = np.nanprod(a)
    o[9] = np.nanmin(a)
    o[10] = np.nanmax(a)
    o[11] = np.nanmean(a)
    o[12] = np.nanvar(a)
    o[13] = np.nanstd(a)
    o[14] = np.median(a)
    idx[0] = np.argmin(a)
    idx[1] = np.argmax(a)
    idx[2] = np.all(a)
    idx[3] = np.any(a)


@cuda.jit
def every_method(a, o, idx):
    o[0] = a.sum()
    o[1] = a.prod()
    o[2] = a.min()
    o[3] = a.max()
    o[4] = a.mean()
    o[5] = a.var()
    o[6] = a.std()
    idx[0] = a.argmin()
    idx[1] = a.argmax()
    idx[2] = a.all()
    idx[3] = a.any()


def numpy_results(a):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        vals = [getattr(np, n)(a) for n in FLOAT_NAMES]
        idx = [getattr(np, n)(a) for n in INDEX_NAMES]
    return np.array(vals, np.float64), np.array(idx, np.int64)


def run(kernel, a, n):
    o = np.zeros(n, np.float64)
    idx = np.zeros(4, np.int64)
    kernel[1, 1](a, o, idx)
    return o, idx


def same(got, want, exact):
    ok = np.isnan(got) & np.isnan(want)
    if exact:
        ok |= got == want
    else:
        ok |= np.isclose(got, want, rtol=1e-12, atol=0) | (got == want)
    return bool(np.all(ok))


SMALL = [
    [1.0, 2.0, 0.0, -0.0, 1.0, -1.5],
    [-0.0, -1.5],
    [-1.5, 2.5, np.inf],
    [-1.5, 2.5, -np.inf, np.inf],
    [np.nan, -1.5, 2.5, np.nan, 3.0],
    [5.0, np.nan, -1.5, np.nan],
    [np.nan, np.nan],
    [7.0],
]


@pytest.mark.parametrize("values", SMALL)
def test_float64_equals_numpy_bit_for_bit_on_short_arrays(values):
    # fewer than 8 elements: numpy's pairwise sum is the sequential sum numba and pykern compute
    a = np.array(values, np.float64)
    o, idx = run(every_reduction, a, 15)
    want, want_idx = numpy_results(a)
    assert same(o, want, exact=True), (o, want)
    assert np.array_equal(idx, want_idx)


finite_or_special = st.sampled_from([0.0, -0.0, np.nan, np.inf, -np.inf, 1e300, -5e-324])


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=6),
                  elements=finite_or_special | st.floats(-1e3, 1e3)))
def test_float64_nd_equals_numpy(a):
    o, idx = run(every_reduction, a, 15)
    want, want_idx = numpy_results(a)
    # many elements: numpy sums pairwise, numba sequentially -- equal up to rounding
    order_free = [2, 3, 9, 10, 14]  # min max nanmin nanmax median: no rounding at all
    assert same(o[order_free], want[order_free], exact=True)
    finite = np.isfinite(want)
    assert same(o[~finite], want[~finite], exact=True)
    with np.errstate(all="ignore"):
        scale = float(np.max(np.abs(np.where(np.isfinite(a), a, 0))))
        tol = 1e-12 * np.float64(max(scale, 1.0)) ** 2 * a.size
    assert np.all(np.abs(o[finite] - want[finite]) <= tol + 1e-12 * np.abs(want[finite]))
    assert np.array_equal(idx, want_idx)


INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]


@pytest.mark.parametrize("dt", INTS)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_integer_and_bool_arrays_equal_numpy(dt, data):
    a = data.draw(hnp.arrays(dt, hnp.array_shapes(min_dims=1, max_dims=1, min_side=1, max_side=9)))
    o = np.zeros(15, np.float64)
    idx = np.zeros(4, np.int64)
    every_reduction[1, 1](a, o, idx)
    want, want_idx = numpy_results(a)
    exact = [2, 3, 9, 10, 14]  # min/max/median of integers are exact in float64 up to 2**53
    small = np.all(np.abs(a.astype(np.float64)) < 2**40)
    if small:
        assert same(o[exact], want[exact], exact=True)
        assert np.allclose(o[[4, 5, 6, 11, 12, 13]], want[[4, 5, 6, 11, 12, 13]], rtol=1e-9)
    assert np.array_equal(idx, want_idx)


@pytest.mark.parametrize("dt", [np.int32, np.uint8, np.int64, np.uint64, np.bool_])
def test_integer_sum_and_prod_types_and_wraparound_as_numpy(dt):
    info = np.iinfo(dt) if dt is not np.bool_ else None
    a = np.array([info.max, info.max, info.min, 3] if info else [True, True, False], dt)

    @cuda.jit
    def k(a, s, p):
        s[0] = a.sum()
        p[0] = np.prod(a)

    rt = np.uint64 if dt in (np.uint8, np.uint64) else np.int64
    s, p = np.zeros(1, rt), np.zeros(1, rt)
    k[1, 1](a, s, p)
    with np.errstate(all="ignore"):
        assert s[0] == np.sum(a) and p[0] == np.prod(a)
        assert np.sum(a).dtype == rt


def test_layouts_and_views():
    base = np.arange(60, dtype=np.float64).reshape(3, 4, 5) - 17.5
    for a in (base, base.T, base[::-1, 1:, ::2], base[1, ::-2]):
        o, idx = run(every_method, a, 7)
        want = [a.sum(), a.prod(), a.min(), a.max(), a.mean(), a.var(), a.std()]
        assert np.allclose(o, want, rtol=1e-12)
        assert list(idx) == [a.argmin(), a.argmax(), a.all(), a.any()]


def test_zero_d_array():
    a = np.array(2.5)
    o, idx = run(every_method, a, 7)
    assert list(o) == [2.5, 2.5, 2.5, 2.5, 2.5, 0.0, 0.0] and list(idx) == [0, 0, 1, 1]


@pytest.mark.parametrize("dt", [np.float32, np.complex64, np.complex128])
def test_float32_and_complex_results_keep_numpys_types(dt):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(37).astype(dt)
    if np.dtype(dt).kind == "c":
        a = (a + 1j * rng.standard_normal(37)).astype(dt)

    @cuda.jit
    def k(a, s, v):
        s[0] = a.sum()
        s[1] = a.mean()
        s[2] = np.nansum(a)
        v[0] = a.var()
        v[1] = np.std(a)

    s = np.zeros(3, dt)
    v = np.zeros(2, a.real.dtype)
    k[1, 1](a, s, v)
    tol = 1e-5 if a.real.dtype == np.float32 else 1e-12
    assert np.allclose(s, [a.sum(), a.mean(), np.nansum(a)], rtol=tol)
    assert np.allclose(v, [a.var(), a.std()], rtol=tol)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 63, 64])
def test_median_of_shuffled_duplicates(n):
    rng = np.random.default_rng(n)
    a = rng.integers(-3, 4, n).astype(np.float64)
    a[rng.random(n) < 0.3] = 3.5
    for x in (a, a.reshape(-1, 1), np.ascontiguousarray(a[::-1])):
        o, _ = run(every_reduction, x, 15)
        assert o[14] == np.median(x)


def test_shared_and_local_arrays_reduce_in_every_thread():
    @cuda.jit
    def k(a, out):
        sm = cuda.shared.array(16, np.float32)
        lm = cuda.local.array((2, 3), np.int32)
        i = cuda.threadIdx.x
        sm[i] = a[i]
        lm[:] = i
        cuda.syncthreads()
        out[i] = sm.sum() + lm.sum() + sm[::2].max()

    a = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    k[1, 16](a, out)
    assert np.array_equal(out, a.sum() + 6 * np.arange(16) + 14)


def test_global_arrays_in_literal_unroll():
    cases = (np.float64([1.0, np.nan]), np.float64([[0.0, -0.0], [1.5, 0.0]])[::-1], np.float64([2.0]))

    @cuda.jit
    def k(out):
        i = 0
        for c in cuda.literal_unroll(cases):
            out[i, 0] = np.all(c)
            out[i, 1] = np.any(c)
            out[i, 2] = c.argmax()
            i += 1

    out = np.zeros((3, 3), np.int64)
    k[1, 1](out)
    assert out.tolist() == [[int(np.all(c)), int(np.any(c)), int(c.argmax())] for c in cases]


@pytest.mark.parametrize("src,what", [
    ("o[0] = a.min()", "minimum"), ("o[0] = np.nanmax(a)", "fmax"), ("o[0] = a.argmin()", "argmin"),
])
def test_empty_arrays_raise_numpys_value_error_under_debug(src, what):
    import linecache

    ns = {"np": np}
    text = f"def k(a, o):\n    {src}\n"
    fname = f"<pa-empty-{what}>"
    linecache.cache[fname] = (len(text), None, text.splitlines(True), fname)
    exec(compile(text, fname, "exec"), ns)
    k = cuda.jit(debug=True)(ns["k"])
    with pytest.raises(ValueError, match=what):
        k[1, 1](np.zeros(0), np.zeros(1))


def test_unsupported_forms_are_compile_errors_at_the_call():
    @cuda.jit
    def axis(a, o):
        o[0] = a.sum(axis=0)

    with pytest.raises(cuda.CompileError, match="axis=") as ei:
        axis[1, 1](np.zeros((2, 2)), np.zeros(1))
    assert "o[0] = a.sum(axis=0)" in str(ei.value) and "^" in str(ei.value)

    @cuda.jit
    def cmax(a, o):
        o[0] = np.max(a)

    with pytest.raises(cuda.CompileError, match="complex64") as ei:
        cmax[1, 1](np.zeros(2, np.complex64), np.zeros(1))
    assert "^" in str(ei.value)

    @cuda.jit
    def scalar(x, o):
        o[0] = np.sum(x)

    with pytest.raises(cuda.CompileError, match="takes an array"):
        scalar[1, 1](1.0, np.zeros(1))


@cuda.jit
def builtin_extremes(a, out):
    out[0] = max(a)
    out[1] = min(a)


def test_builtin_max_min_of_a_1d_array_iterate_like_python():
    cases = [([3.0, -1.0, 7.0, np.nan], [7.0, -1.0]), ([np.nan, 3.0, -1.0], [np.nan, np.nan]),
             ([2.5], [2.5, 2.5])]
    for values, ref in cases:
        out = np.zeros(2)
        builtin_extremes[1, 1](np.array(values), out)
        np.testing.assert_array_equal(out, ref)
    out = np.zeros(2)
    builtin_extremes[1, 1](np.array([-0.0, 0.0]), out)
    assert np.signbit(out).tolist() == [True, True]  # 0.0 > -0.0 is false: the first zero stays
    out = np.zeros(2, np.int64)
    builtin_extremes[1, 1](np.array([3, -9, 7, 7], np.int16), out)
    assert out.tolist() == [7, -9]


def test_builtin_max_of_an_empty_array_raises_under_debug():
    @cuda.jit(debug=True)
    def extremes(a, out):
        out[0] = max(a)

    with pytest.raises(ValueError, match="max\\(\\) arg is an empty sequence"):
        extremes[1, 1](np.zeros(0), np.zeros(2))


WEIGHTS = (1.0, 4.0, 6.0, 4.0, 1.0)


def test_builtin_sum_any_all_in_a_smoothing_kernel():
    # Python's sum/any/all, as numba's overloads of them compile in kernels: of a global tuple, a
    # tuple built in the kernel and a row of an array
    @cuda.jit
    def smooth(x, out, valid, rowsum):
        i = cuda.grid(1)
        n = x.shape[1]
        if i < x.shape[0]:
            norm = sum(WEIGHTS)
            for j in range(2, n - 2):
                acc = 0.0
                for k in range(5):
                    acc += WEIGHTS[k] * x[i, j + k - 2]
                out[i, j] = acc / norm
            ends = (x[i, 0], x[i, n - 1])
            valid[i] = all((ends[0] >= 0, ends[1] >= 0)) and not any((x[i, 1] > 0.99, x[i, 2] > 0.99))
            rowsum[i] = sum(x[i], 100.0) - sum(ends)

    x = np.random.RandomState(18).rand(12, 20)
    x[3, 0] = -1
    out, valid, rowsum = np.zeros_like(x), np.zeros(12, np.bool_), np.zeros(12)
    smooth[1, 16](x, out, valid, rowsum)
    w = np.array(WEIGHTS)
    ref = np.stack([np.convolve(r, w / w.sum(), mode="valid") for r in x])
    assert np.allclose(out[:, 2:-2], ref, rtol=0, atol=1e-15)
    assert valid.tolist() == [(r[0] >= 0 and r[-1] >= 0) and not (r[1] > 0.99 or r[2] > 0.99) for r in x]
    assert np.allclose(rowsum, [100.0 + sum(r) - (r[0] + r[-1]) for r in x], rtol=0, atol=1e-12)
