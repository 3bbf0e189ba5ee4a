"""numpy functions on numbers in kernels: ``np.sign``, ``np.square``, ``np.reciprocal``,
``np.signbit``, ``np.heaviside``, ``np.logaddexp(2)``, ``np.float_power``, ``np.round``,
``np.gcd``/``np.lcm`` (integers, wrapping at the extremes as numpy's do), ``np.spacing``, the angle,
comparison and logical ufuncs, ``np.iinfo``/``np.finfo`` -- compared with numpy's own loops, value
and type."""

import itertools
import math

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

import pykern as cuda
from pykern.core.errors import CompileError

pytestmark = pytest.mark.usefixtures("cpu_uncached")


@cuda.jit
def xinfo(a, x, out, out32):
    out[0] = np.iinfo(np.int16).max
    out[1] = np.iinfo(a.dtype).min
    out[2] = np.iinfo(x).max
    out[3] = np.iinfo(np.int32).bits
    out[4] = np.finfo(np.float32).eps
    out[5] = np.finfo(np.float64).tiny
    out[6] = np.finfo(np.float32).max
    out[7] = np.finfo(np.float64).eps
    out32[0] = np.float32(1) + np.finfo(np.float32).eps
    out32[1] = np.finfo(np.float32).tiny
    out[8] = np.iinfo(np.uint64).max
    out[9] = np.finfo(np.float32).bits
    out[10] = np.iinfo(x).min - 1


def test_iinfo_and_finfo_of_types_arrays_and_values():
    out, o32 = np.zeros(11), np.zeros(2, np.float32)
    xinfo[1, 1](np.zeros(2, np.int8), np.uint16(3), out, o32)
    assert out.tolist() == [32767.0, -128.0, 65535.0, 32.0, 1.1920928955078125e-07, 2.2250738585072014e-308,
                            3.4028234663852886e+38, 2.220446049250313e-16, 1.8446744073709552e+19, 32.0, -1.0]
    assert o32.tolist() == [1.0000001192092896, 1.1754943508222875e-38]


def test_iinfo_of_a_float_is_a_compile_error():
    @cuda.jit
    def bad(out):
        out[0] = np.iinfo(np.float32).max

    with pytest.raises(cuda.CompileError, match="iinfo"):
        bad[1, 1](np.zeros(1))


SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.5, -3.75, 1e-30, -1e30, np.inf, -np.inf, np.nan, 700.0, -700.0]


@cuda.jit
def unary(x, sign, square, recip, signbit):
    i = cuda.grid(1)
    if i < x.size:
        sign[i] = np.sign(x[i])
        square[i] = np.square(x[i])
        recip[i] = np.reciprocal(x[i])
        signbit[i] = np.signbit(x[i])


@cuda.jit
def binary(x, y, heav, lae, lae2, fpow):
    i = cuda.grid(1)
    if i < x.size:
        heav[i] = np.heaviside(x[i], y[i])
        lae[i] = np.logaddexp(x[i], y[i])
        lae2[i] = np.logaddexp2(x[i], y[i])
        fpow[i] = np.float_power(abs(x[i]), y[i])


def _same(got, want):
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)  # NaNs in the same places, values bit-close below


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.float16, np.int32, np.int64, np.uint8])
def test_unary_ufuncs_match_numpy(dt):
    with np.errstate(all="ignore"):
        if np.dtype(dt).kind == "f":
            x = np.array(SPECIAL + list(np.random.default_rng(1).standard_normal(20) * 10), dt)
        else:
            x = np.array([0, 1, 2, 3, 100, 127] + ([-1, -2, -100] if np.dtype(dt).kind == "i" else []), dt)
        want = [np.sign(x), np.square(x), np.reciprocal(x) if x.dtype.kind == "f" else None, np.signbit(x)]
    if want[2] is None:
        want[2] = np.where(x == 1, 1, np.where(x.astype(np.int64) == -1, -1, 0)).astype(dt)  # C's 1 / x, 0 for 0
    outs = [np.zeros_like(want[0]), np.zeros_like(want[1]), np.zeros_like(want[2]), np.zeros_like(want[3])]
    unary[1, 64](x, *outs)
    for got, w in zip(outs, want):
        _same(got, w)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_binary_ufuncs_match_numpy(dt):
    rng = np.random.default_rng(2)
    x = np.array(SPECIAL + list(rng.standard_normal(20) * 5), dt)
    y = np.array(list(rng.permutation(SPECIAL)) + list(rng.standard_normal(20) * 5), dt)
    y[3] = x[3]  # equal arguments: x + ln 2
    with np.errstate(all="ignore"):
        want = [np.heaviside(x, y), np.logaddexp(x, y), np.logaddexp2(x, y), np.float_power(np.abs(x), y)]
    outs = [np.zeros_like(w) for w in want]
    binary[1, 64](x, y, *outs)
    for got, w in zip(outs, want):
        assert got.dtype == w.dtype
        np.testing.assert_allclose(got, w, rtol=4 * np.finfo(dt).eps, atol=0)


def test_python_numbers_and_integers_promote_as_numpy():
    @cuda.jit
    def k(out, n):
        out[0] = np.sign(-3)
        out[1] = np.logaddexp(n, 2)  # integers: float64
        out[2] = np.heaviside(n - 1, 0.5)
        out[3] = np.float_power(n, 2)

    out = np.zeros(4)
    k[1, 1](out, 1)
    np.testing.assert_allclose(out, [-1.0, np.logaddexp(1, 2), 0.5, 1.0], rtol=1e-15)


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64])
def test_np_round_matches_numpy(dt):
    @cuda.jit
    def k(x, r0, r2, rm1):
        i = cuda.grid(1)
        if i < x.size:
            r0[i] = np.round(x[i])
            r2[i] = np.around(x[i], 2)
            rm1[i] = np.round(x[i], decimals=-1)

    if np.dtype(dt).kind == "f":
        x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 2.675, 1.005, 0.125, 125.0, 135.0, -35.0, 1e30, np.nan, np.inf], dt)
    else:
        x = np.array([0, 5, 15, 25, -25, 1234, -1250], dt)
    outs = [np.zeros_like(x) for _ in range(3)]
    k[1, 32](x, *outs)
    with np.errstate(all="ignore"):
        for got, want in zip(outs, [np.round(x), np.round(x, 2), np.round(x, -1)]):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


INT_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@cuda.jit
def gcd_lcm(a, b, g, lcm):
    i = cuda.grid(1)
    if i < a.size:
        g[i] = np.gcd(a[i], b[i])
        lcm[i] = np.lcm(a[i], b[i])


def _check_gcd_lcm(a, b):
    g, lcm = np.zeros_like(a), np.zeros_like(a)
    gcd_lcm[(a.size + 63) // 64, 64](a, b, g, lcm)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(g, np.gcd(a, b))
        np.testing.assert_array_equal(lcm, np.lcm(a, b))


def _edges(dt):
    info = np.iinfo(dt)
    vals = {info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 6, 12, 35, 100, -1, -6, -12, -100}
    return np.array(sorted(v for v in vals if info.min <= v <= info.max), dt)


@pytest.mark.parametrize("dt", INT_TYPES)
def test_gcd_lcm_at_the_extremes_equal_numpy(dt):
    vals = _edges(dt)
    a, b = (np.array(x, dt) for x in zip(*itertools.product(vals, vals)))
    _check_gcd_lcm(a, b)


def test_gcd_lcm_of_every_int8_pair_equal_numpy():
    vals = np.arange(-128, 128, dtype=np.int8)
    a, b = (np.array(x, np.int8) for x in zip(*itertools.product(vals, vals)))
    _check_gcd_lcm(a, b)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([np.int32, np.int64, np.uint64]), st.data())
def test_gcd_lcm_random_equal_numpy(dt, data):
    info = np.iinfo(dt)
    ints = st.integers(int(info.min), int(info.max))
    a = np.array(data.draw(st.lists(ints, min_size=1, max_size=40)), dt)
    b = np.array(data.draw(st.lists(ints, min_size=a.size, max_size=a.size)), dt)
    _check_gcd_lcm(a, b)


@cuda.jit
def mixed(x8, u8, out16, out8, out64):
    out16[0] = np.gcd(x8[0], u8[0])  # int8 with uint8: int16, as numpy promotes
    out8[0] = np.lcm(x8[0], 6)  # numba's int64 literal: computed in int64, stored as int8
    out64[0] = np.gcd(-12, 18)  # Python ints: int64


def test_gcd_lcm_result_types():
    out16, out8, out64 = np.zeros(1, np.int16), np.zeros(1, np.int8), np.zeros(1, np.int64)
    x8, u8 = np.array([-100], np.int8), np.array([250], np.uint8)
    mixed[1, 1](x8, u8, out16, out8, out64)
    assert np.gcd(x8[0], u8[0]).dtype == np.int16 and out16[0] == np.gcd(x8[0], u8[0])
    with np.errstate(all="ignore"):
        assert out8[0] == np.lcm(x8[0], 6) and np.lcm(x8[0], 6).dtype == np.int8
    assert out64[0] == np.gcd(-12, 18) == 6
    from pykern.frontend import compile_ir
    from pykern.frontend import types as T

    m = compile_ir(mixed.py_func, [T.Array(T.int8, 1, "C"), T.Array(T.uint8, 1, "C"), T.Array(T.int16, 1, "C"),
                                   T.Array(T.int8, 1, "C"), T.Array(T.int64, 1, "C")])
    text = str(m.kernel)
    assert "int16(" in text and "int8(" in text


@pytest.mark.parametrize("expr, message", [
    ("np.gcd(a[0], 2.0)", "float64: numpy has no loop"),
    ("np.gcd(np.uint64(4), np.int64(6))", "np.gcd has no loop for uint64, int64"),
])
def test_unsupported_gcd_lcm_spacing_are_compile_errors(expr, message):
    ns = {"cuda": cuda, "np": np}
    src = f"def k(a):\n    a[0] = {expr}\n"
    from pykern.frontend import compile_ir
    from pykern.frontend import types as T
    import linecache

    fname = f"<gcd-test-{abs(hash(expr))}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    exec(compile(src, fname, "exec"), ns)
    with pytest.raises(CompileError, match=message):
        compile_ir(ns["k"], [T.Array(T.float64, 1, "C")])


SPACING_SPECIAL = [0.0, -0.0, 1.0, -1.0, 3.5, -2.75, 1e-30, -1e30, np.inf, -np.inf, np.nan]


@cuda.jit
def spacing(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = np.spacing(x[i])


def _check_spacing(x):
    out = np.zeros_like(x)
    spacing[(x.size + 63) // 64, 64](x, out)
    with np.errstate(all="ignore"):
        want = np.spacing(x)
    assert want.dtype == out.dtype
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(want))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_spacing_special_values_equal_numpy(dt):
    fi = np.finfo(dt)
    extra = [fi.max, -fi.max, fi.tiny, -fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal, fi.eps]
    _check_spacing(np.array(SPACING_SPECIAL + extra, dt))


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([32, 64]), st.data())
def test_spacing_random_equal_numpy(width, data):
    xs = data.draw(st.lists(st.floats(width=width), min_size=1, max_size=50))
    _check_spacing(np.array(xs, np.float32 if width == 32 else np.float64))


@cuda.jit
def spacing_of_ints(i16, i64, o32, o64):
    o32[0] = np.spacing(i16[0])  # numpy: float32 for 16-bit integers
    o64[0] = np.spacing(i64[0])  # float64 for 32- and 64-bit ones


def test_spacing_of_integers_takes_numpys_float_type():
    i16, i64 = np.array([1000], np.int16), np.array([-(2**40)], np.int64)
    o32, o64 = np.zeros(1, np.float32), np.zeros(1, np.float64)
    spacing_of_ints[1, 1](i16, i64, o32, o64)
    assert np.spacing(i16[0]).dtype == np.float32 and o32[0] == np.spacing(i16[0])
    assert o64[0] == np.spacing(i64[0])


@pytest.mark.parametrize("arch", ["gfx90a", "gfx1100"])
def test_amdgpu_compiles_gcd_lcm_spacing(arch, tmp_path):
    from types_helpers import HAVE_LLVM_TOOLS, amdgpu_compile
    from pykern.frontend import types as T

    if not HAVE_LLVM_TOOLS:
        pytest.skip("llvm tools not installed")
    for dt in (T.int64, T.int8, T.uint32):
        amdgpu_compile(gcd_lcm, [T.Array(dt, 1, "C")] * 4, arch, tmp_path)
    for ft in (T.float32, T.float64):
        amdgpu_compile(spacing, [T.Array(ft, 1, "C")] * 2, arch, tmp_path)


@cuda.jit
def npfuncs(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i, 0] = np.sqrt(v)
        out[i, 1] = np.abs(v)
        out[i, 2] = np.floor(v)
        out[i, 3] = np.negative(v)
        out[i, 4] = np.isnan(v)
        out[i, 5] = np.exp2(v)
        out[i, 6] = np.log2(np.abs(v) + 1)
        out[i, 7] = math.log(abs(v) + 1, 3.0)


def test_numpy_ufuncs_in_kernel():
    x = np.array([-2.5, 0.0, 1.5, 4.0, np.nan, -0.0], np.float64)
    out = np.zeros((6, 8))
    npfuncs[1, 8](x, out)
    with np.errstate(all="ignore"):
        exp = np.stack([np.sqrt(x), np.abs(x), np.floor(x), -x, np.isnan(x),
                        np.exp2(x), np.log2(np.abs(x) + 1),
                        [math.log(abs(v) + 1, 3.0) if not math.isnan(v) else np.nan for v in x]], 1)
    np.testing.assert_allclose(out, exp, rtol=1e-15)


@cuda.jit
def angle_ufuncs(x, o1, o2, o3, o4):
    i = cuda.grid(1)
    if i < x.size:
        o1[i] = np.deg2rad(x[i])
        o2[i] = np.rad2deg(x[i])
        o3[i] = np.radians(x[i]) - np.degrees(x[i])
    if i == 0:
        np.rad2deg(x, o4)  # the array form: one thread writes all of o4


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64, np.int32])
def test_numpy_angle_ufuncs_match_numpy(dt):
    """np.deg2rad/radians/rad2deg/degrees (in numba.cuda's ufunc database; were "cannot call");
    float32 uses numpy's factor 180.0f / (float)pi, which is an ulp from (float)(180 / pi)."""
    x = (np.linspace(-60, 60, 501) if dt == np.float16 else np.linspace(-720, 720, 501)).astype(dt)
    ot = np.deg2rad(x[:1]).dtype
    o1, o2, o3, o4 = (np.zeros(x.size, ot) for _ in range(4))
    angle_ufuncs[2, 256](x, o1, o2, o3, o4)
    np.testing.assert_array_equal(o1, np.deg2rad(x))
    np.testing.assert_array_equal(o2, np.rad2deg(x))
    np.testing.assert_array_equal(o3, np.radians(x) - np.degrees(x))
    np.testing.assert_array_equal(o4, np.rad2deg(x))


@cuda.jit
def compare_ufuncs(a, b, out, arr_out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = np.greater(a[i], b[i])
        out[i, 1] = np.greater_equal(a[i], b[i])
        out[i, 2] = np.less(a[i], b[i])
        out[i, 3] = np.less_equal(a[i], b[i])
        out[i, 4] = np.equal(a[i], b[i])
        out[i, 5] = np.not_equal(a[i], b[i])
        out[i, 6] = np.logical_and(a[i], b[i])
        out[i, 7] = np.logical_or(a[i], b[i])
        out[i, 8] = np.logical_xor(a[i], b[i])
        out[i, 9] = np.logical_not(a[i])
    if i == 0:
        np.less(a, b, arr_out)


def test_numpy_comparison_and_logical_ufuncs():
    """np.greater ... np.logical_not on scalars and in the array form (numba.cuda's ufunc database)."""
    a = np.array([-1, 0, 3, 2**62, -2**63, 7], np.int64)
    b = np.array([2**64 - 1, 0, 3, 1, 0, 0], np.uint64)
    out = np.zeros((a.size, 10), np.bool_)
    arr_out = np.zeros(a.size, np.bool_)
    compare_ufuncs[1, 8](a, b, out, arr_out)
    exp = np.stack([np.greater(a, b), np.greater_equal(a, b), np.less(a, b), np.less_equal(a, b),
                    np.equal(a, b), np.not_equal(a, b), np.logical_and(a, b), np.logical_or(a, b),
                    np.logical_xor(a, b), np.logical_not(a)], 1)
    np.testing.assert_array_equal(out, exp)
    np.testing.assert_array_equal(arr_out, np.less(a, b))
    f = np.array([np.nan, 0.0, -0.0, 1.5, np.inf, np.nan])
    g = np.array([0.0, np.nan, 0.0, -0.0, np.inf, np.nan])
    out = np.zeros((f.size, 10), np.bool_)
    compare_ufuncs[1, 8](f, g, out, arr_out)
    exp = np.stack([np.greater(f, g), np.greater_equal(f, g), np.less(f, g), np.less_equal(f, g),
                    np.equal(f, g), np.not_equal(f, g), np.logical_and(f, g), np.logical_or(f, g),
                    np.logical_xor(f, g), np.logical_not(f)], 1)
    np.testing.assert_array_equal(out, exp)
