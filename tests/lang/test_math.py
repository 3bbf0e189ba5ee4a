"""math-module functions and numba.cuda's math intrinsics in kernels: math.sin ... math.isnan on
float32/float64 (and their constants), math.frexp/ldexp/modf/remainder/nextafter,
cuda.cbrt/selp/nanosleep -- against Python/numpy on the cpu target, compiled for the amdgpu archs.

match_*_sync: test_warp_ops.py; atomic.max/min/nanmax/nanmin: test_atomics.py (their kernels are in
this file's amdgpu build too)."""

from __future__ import annotations

import math

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

import pykern as cuda
from pykern.frontend import types as T

from types_helpers import amdgpu_compile, ARCHS, needs_llvm_tools

# the amdgpu build below also takes the match_*_sync and NaN-rule atomics kernels of their feature files
from test_atomics import nan_rule_atomics  # tests/lang/test_atomics.py
from test_warp_ops import match_kernel  # tests/lang/test_warp_ops.py

pytestmark = pytest.mark.usefixtures("cpu_target")

SPECIAL = [0.0, -0.0, 1.5, -2.75, np.inf, -np.inf, np.nan, 5e-324, 1e-310, 3.0, 1e300, -7.0]
floats64 = st.one_of(st.floats(width=64), st.sampled_from(SPECIAL))
floats32 = st.one_of(st.floats(width=32), st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40]))


@cuda.jit
def math_kernel(x, y, k, fr, ex, md, rem, nx, ld, cb):
    i = cuda.grid(1)
    if i < x.size:
        m, e = math.frexp(x[i])
        fr[i] = m
        ex[i] = e
        f, w = math.modf(x[i])
        md[0, i] = f
        md[1, i] = w
        rem[i] = math.remainder(x[i], y[i])
        nx[i] = math.nextafter(x[i], y[i])
        ld[i] = math.ldexp(x[i], k[i])
        cb[i] = cuda.cbrt(x[i])


def py_remainder(a, b):
    try:
        return math.remainder(a, b)
    except ValueError:
        return math.nan  # Python raises for remainder(inf, y) and remainder(x, 0): IEEE gives NaN


def py_ldexp(a, k):
    try:
        return math.ldexp(a, k)
    except OverflowError:
        return math.copysign(math.inf, a)  # Python raises; C (and kernels) give inf


def same(got, want):
    got, want = np.asarray(got), np.asarray(want, dtype=got.dtype)
    return (got == want) & (np.signbit(got) == np.signbit(want)) | (np.isnan(got) & np.isnan(want))


def within_one_ulp(got, want):
    """cbrt's promise is 1 ulp (CUDA's and ocml's); numpy's own (SIMD) cbrt, the reference
    here, is itself 1 ulp from the nearest double on some CPUs."""
    got, want = np.asarray(got), np.asarray(want, dtype=got.dtype)
    if same(got, want):
        return True
    return bool(np.isfinite(want) and np.signbit(got) == np.signbit(want)
                and (got == np.nextafter(want, np.inf) or got == np.nextafter(want, -np.inf)))


def run_math(x, y, k, dt):
    n = x.size
    fr, ex = np.zeros(n, dt), np.zeros(n, np.int32)
    md = np.zeros((2, n), dt)
    rem, nx, ld, cb = (np.zeros(n, dt) for _ in range(4))
    math_kernel[(n + 63) // 64, 64](x, y, k, fr, ex, md, rem, nx, ld, cb)
    return fr, ex, md, rem, nx, ld, cb


def check_math(x, y, k, dt):
    fr, ex, md, rem, nx, ld, cb = run_math(x, y, k, dt)
    ftype = np.dtype(dt).type
    for j, (a, b, kk) in enumerate(zip(x.tolist(), y.tolist(), k.tolist())):
        m, e = math.frexp(a)
        assert same(fr[j], m) and ex[j] == e, ("frexp", a, fr[j], ex[j])
        f, w = math.modf(a)
        assert same(md[0, j], f) and same(md[1, j], w), ("modf", a, md[:, j])
        assert same(rem[j], py_remainder(a, b)), ("remainder", a, b, rem[j])
        assert same(nx[j], np.nextafter(ftype(a), ftype(b))), ("nextafter", a, b, nx[j])
        with np.errstate(over="ignore"):
            assert same(ld[j], ftype(py_ldexp(a, kk))), ("ldexp", a, kk, ld[j])
        # float32: the float64 cube root rounded once (numpy's SIMD float32 cbrt is itself 1 ulp
        # off, e.g. near 2.4478e23, and a kernel 1 ulp the other way was 2 from it)
        want = np.cbrt(np.float64(ftype(a))).astype(ftype) if ftype is np.float32 else np.cbrt(ftype(a))
        assert within_one_ulp(cb[j], want), ("cbrt", a, cb[j])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(floats64, floats64, st.integers(-1100, 1100)), min_size=1, max_size=40))
def test_math_float64_hypothesis(vals):
    x = np.array([v[0] for v in vals])
    y = np.array([v[1] for v in vals])
    k = np.array([v[2] for v in vals], np.int64)
    check_math(x, y, k, np.float64)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(floats32, floats32, st.integers(-300, 300)), min_size=1, max_size=40))
def test_math_float32_hypothesis(vals):
    x = np.array([v[0] for v in vals], np.float32)
    y = np.array([v[1] for v in vals], np.float32)
    k = np.array([v[2] for v in vals], np.int64)
    check_math(x, y, k, np.float32)


def test_remainder_zero_has_the_dividends_sign_with_a_subnormal_divisor():
    # hypothesis found it: glibc's remainder(2.6e-284, 5e-324) is -0.0; IEEE and Python say +0.0
    x = np.array([2.6168968782972903e-284, -2.6168968782972903e-284, 6e-323, 4.0])
    y = np.array([5e-324, 5e-324, 5e-324, -2.0])
    check_math(x, y, np.zeros(4, np.int64), np.float64)
    check_math(np.array([1e-38, -1e-38], np.float32), np.array([1e-45, 1e-45], np.float32),
               np.zeros(2, np.int64), np.float32)


def test_math_special_values():
    x = np.array(SPECIAL)
    y = np.array(SPECIAL[::-1])
    k = np.array([0, 1, -1, 5, 2000, -2000, 3, 1074, -5, 2**40, -(2**40), 7], np.int64)  # huge k: clamped, not wrapped
    check_math(x, y, k, np.float64)


def test_frexp_modf_types_and_float16(capsys):
    @cuda.jit
    def k(x, m, e, f):
        mm, ee = math.frexp(x[0])
        m[0] = mm
        e[0] = ee
        a, b = math.modf(x[0])
        f[0] = a
        f[1] = b

    x = np.array([np.float16(-6.5)])
    m, e, f = np.zeros(1, np.float16), np.zeros(1, np.int32), np.zeros(2, np.float16)
    k[1, 1](x, m, e, f)
    assert (m[0], e[0]) == math.frexp(-6.5) and tuple(f) == math.modf(-6.5)
    k.inspect_types()
    assert "mm: float16, ee: int32" in capsys.readouterr().out  # numba: (float, intc)


def test_nextafter_of_float16_is_a_located_error(tmp_path):
    @cuda.jit
    def k(x):
        x[0] = math.nextafter(x[0], x[1])

    with pytest.raises(cuda.CompileError, match="float16") as ei:
        k[1, 1](np.zeros(2, np.float16))
    assert "test_math.py:" in str(ei.value)


@cuda.jit
def selp_kernel(x, out, calls):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = cuda.selp(x[i] > 0, x[i], cuda.atomic.add(calls, 0, 1))


def test_selp_evaluates_both_and_picks_one():
    x = np.array([1.5, -2.0, 0.0, 4.0])
    out = np.zeros(4)
    calls = np.zeros(1, np.int64)
    selp_kernel[1, 4](x, out, calls)
    assert calls[0] == 4  # both operands are arguments: evaluated by every thread (as numba)
    assert out[0] == 1.5 and out[3] == 4.0 and set(out[1:3]) <= {0.0, 1.0, 2.0, 3.0}


def test_nanosleep_runs():
    @cuda.jit
    def k(out):
        cuda.nanosleep(100)
        out[0] = 1

    out = np.zeros(1, np.int32)
    k[1, 1](out)
    assert out[0] == 1


@needs_llvm_tools
@pytest.mark.parametrize("arch", ARCHS)
def test_compiles_for_amdgpu(arch, tmp_path):
    a64 = T.Array(T.float64, 1, "C")
    _, ops = amdgpu_compile(math_kernel, [a64, a64, T.Array(T.int64, 1, "C"), a64, T.Array(T.int32, 1, "C"),
                                          T.Array(T.float64, 2, "C"), a64, a64, a64, a64], arch, tmp_path)
    assert "v_frexp_mant_f64_e32" in ops or any(o.startswith("v_frexp_mant_f64") for o in ops)
    assert any(o.startswith("v_ldexp_f64") for o in ops)
    _, ops = amdgpu_compile(match_kernel, [T.Array(T.int32, 1, "C"), T.Array(T.uint64, 1, "C"),
                                           T.Array(T.uint64, 1, "C"), T.Array(T.boolean, 1, "C")], arch, tmp_path)
    assert any(o.startswith("ds_bpermute") or "readlane" in o for o in ops)
    f32 = T.Array(T.float32, 1, "C")
    amdgpu_compile(nan_rule_atomics, [f32, f32], arch, tmp_path)
    amdgpu_compile(selp_kernel, [a64, a64, T.Array(T.int64, 1, "C")], arch, tmp_path)

    def sleeper(out):
        cuda.nanosleep(10000)
        out[0] = 1

    _, ops = amdgpu_compile(sleeper, [T.Array(T.int32, 1, "C")], arch, tmp_path)
    assert "s_sleep" in ops


def _nearest_cbrt(a: float) -> float:
    """The double nearest the real cube root of ``a`` (exact rational arithmetic)."""
    from fractions import Fraction

    y = float(np.cbrt(a))
    cands = [y, float(np.nextafter(y, np.inf)), float(np.nextafter(y, -np.inf))]
    return min(cands, key=lambda c: abs(Fraction(c) ** 3 - Fraction(a)))


def test_cbrt_is_within_an_ulp_of_the_real_cube_root():
    # glibc's cbrt is 2 ulps off at 1.452582687584935e+188 (the cpu target refines it);
    # tiny, subnormal and huge arguments go through the scaled path
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.standard_normal(200) * 10.0 ** rng.integers(-320, 308, 200),
                        [1.452582687584935e+188, 5e-324, -1e-310, 1.7976931348623157e308, 0.125, 1.5]])
    out = np.zeros_like(x)

    @cuda.jit
    def k(x, o):
        i = cuda.grid(1)
        if i < x.size:
            o[i] = cuda.cbrt(x[i])

    k[(x.size + 63) // 64, 64](x, out)
    for a, got in zip(x.tolist(), out.tolist()):
        assert within_one_ulp(np.float64(got), _nearest_cbrt(a)), (a, got)
    assert out[-6] == _nearest_cbrt(x[-6].item()) and out[-2] == 0.5


# math functions float32
@cuda.jit
def mathk(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i, 0] = math.sin(v)
        out[i, 1] = math.exp(v)
        out[i, 2] = math.log1p(v)
        out[i, 3] = math.atan2(v, 1.5)
        out[i, 4] = math.hypot(v, 3)
        out[i, 5] = math.erf(v)
        out[i, 6] = math.tanh(v)
        out[i, 7] = math.pow(v, 2.5)


def test_math_float32():
    x = np.linspace(0.01, 4, 64).astype(np.float32)
    out = np.zeros((64, 8), np.float32)
    mathk[1, 64](x, out)
    exp = np.stack([np.sin(x), np.exp(x), np.log1p(x), np.arctan2(x, np.float32(1.5)),
                    np.hypot(x, np.float32(3)),
                    np.array([math.erf(v) for v in x], np.float32), np.tanh(x),
                    np.power(x, np.float32(2.5))], 1)
    np.testing.assert_allclose(out, exp, rtol=2e-6)


@cuda.jit
def mathmisc(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i, 0] = math.copysign(3.0, v)
        out[i, 1] = math.fabs(v)
        out[i, 2] = math.isinf(v)
        out[i, 3] = math.isnan(v)
        out[i, 4] = math.gamma(v) if v > 0 else 0.0
        out[i, 5] = math.lgamma(abs(v) + 1)
        out[i, 6] = math.fmod(v, 0.75) if not math.isinf(v) else 0.0
        out[i, 7] = math.degrees(v) if not math.isinf(v) else 0.0


def test_math_misc64():
    x = np.array([-2.5, -0.0, 0.0, 0.3, 1.0, 4.5, np.inf, -np.inf], np.float64)
    out = np.zeros((x.size, 8))
    mathmisc[1, 8](x, out)
    for k, v in enumerate(x.tolist()):
        exp = [math.copysign(3.0, v), math.fabs(v), math.isinf(v), math.isnan(v),
               math.gamma(v) if v > 0 else 0.0, math.lgamma(abs(v) + 1),
               math.fmod(v, 0.75) if not math.isinf(v) else 0.0,
               math.degrees(v) if not math.isinf(v) else 0.0]
        np.testing.assert_allclose(out[k], exp, rtol=1e-14, err_msg=str(v))
        assert np.signbit(out[k, 0]) == np.signbit(exp[0])


@cuda.jit
def consts(out):
    out[0] = math.pi
    out[1] = math.e
    out[2] = math.inf
    out[3] = -math.inf
    out[4] = math.nan
    out[5] = math.tau


def test_math_constants():
    out = np.zeros(6)
    consts[1, 1](out)
    np.testing.assert_array_equal(out, [math.pi, math.e, math.inf, -math.inf, math.nan, math.tau])
