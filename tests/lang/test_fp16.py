"""float16 in kernels: cuda.fp16 (numba.cuda's float16 functions) on the cpu target, equal to numpy's
float16 results (one rounding per operation, as numpy does) for every float16 input; float16 arrays
and arithmetic in kernels; native half instructions on AMD GPUs."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

import pykern as cuda
from pykern import fp16
from pykern.frontend import types as T

from cpu_helpers import run_py
from types_helpers import amdgpu_compile, ARCHS, needs_llvm_tools

pytestmark = pytest.mark.usefixtures("cpu_target")

F16 = np.float16
F32 = np.float32
ALL = np.arange(65536, dtype=np.uint16).view(F16)  # every float16: NaNs, infinities, -0.0, subnormals


@cuda.jit
def binary(a, b, c, o, cmp):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        o[0, i] = fp16.hadd(x, y)
        o[1, i] = fp16.hsub(x, y)
        o[2, i] = fp16.hmul(x, y)
        o[3, i] = fp16.hdiv(x, y)
        o[4, i] = fp16.hfma(x, y, c[i])
        o[5, i] = fp16.hmax(x, y)
        o[6, i] = fp16.hmin(x, y)
        o[7, i] = x * y + c[i]  # plain float16 operators: rounded after each operation
        cmp[0, i] = fp16.heq(x, y)
        cmp[1, i] = fp16.hne(x, y)
        cmp[2, i] = fp16.hlt(x, y)
        cmp[3, i] = fp16.hle(x, y)
        cmp[4, i] = fp16.hgt(x, y)
        cmp[5, i] = fp16.hge(x, y)
        cmp[6, i] = x < y


@cuda.jit
def unary(a, o):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        o[0, i] = fp16.hneg(x)
        o[1, i] = fp16.habs(x)
        o[2, i] = fp16.hsqrt(x)
        o[3, i] = fp16.hfloor(x)
        o[4, i] = fp16.hceil(x)
        o[5, i] = fp16.htrunc(x)
        o[6, i] = fp16.hrint(x)
        o[7, i] = fp16.hrcp(x)
        o[8, i] = fp16.hrsqrt(x)
        o[9, i] = fp16.hsin(x)
        o[10, i] = fp16.hcos(x)
        o[11, i] = fp16.hlog(x)
        o[12, i] = fp16.hlog2(x)
        o[13, i] = fp16.hlog10(x)
        o[14, i] = fp16.hexp(x)
        o[15, i] = fp16.hexp2(x)
        o[16, i] = fp16.hexp10(x)


def same(got, want):
    return (got == want) | (np.isnan(got) & np.isnan(want.astype(got.dtype)))


def check_binary(a, b, c):
    o = np.zeros((8, a.size), F16)
    cmp = np.zeros((7, a.size), np.bool_)
    binary[(a.size + 255) // 256, 256](a, b, c, o, cmp)
    with np.errstate(all="ignore"):
        ref = [a + b, a - b, a * b, a / b,
               (a.astype(np.float64) * b + c).astype(F16),  # exact in double, then one rounding
               np.where(a > b, a, b), np.where(a < b, a, b), a * b + c]
        rcmp = [a == b, a != b, a < b, a <= b, a > b, a >= b, a < b]
    names = ["hadd", "hsub", "hmul", "hdiv", "hfma", "hmax", "hmin", "x*y+c"]
    for k, r in enumerate(ref):
        bad = ~same(o[k], r)
        assert not bad.any(), (names[k], a[bad][:3], b[bad][:3], o[k][bad][:3], r[bad][:3])
    for k, r in enumerate(rcmp):
        assert (cmp[k] == r).all(), k


def test_binary_every_float16_value():
    rng = np.random.default_rng(0)
    check_binary(ALL.copy(), rng.permutation(ALL), rng.permutation(ALL))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(*[st.one_of(st.floats(width=16), st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan]))] * 3),
                min_size=1, max_size=64))
def test_binary_hypothesis(vals):
    v = np.array(vals, dtype=F16)
    check_binary(v[:, 0].copy(), v[:, 1].copy(), v[:, 2].copy())


def test_unary_every_float16_value():
    a = ALL.copy()
    o = np.zeros((17, a.size), F16)
    unary[256, 256](a, o)
    x = a.astype(F32)
    with np.errstate(all="ignore"):
        exact = {
            "hneg": -a, "habs": np.abs(a), "hsqrt": np.sqrt(a), "hfloor": np.floor(a), "hceil": np.ceil(a),
            "htrunc": np.trunc(a), "hrint": np.rint(a), "hrcp": F16(1) / a,
        }
        # numpy's float16 ufuncs compute in float32 and round once; so do these
        via32 = {
            "hrsqrt": 1 / np.sqrt(x), "hsin": np.sin(x), "hcos": np.cos(x), "hlog": np.log(x), "hlog2": np.log2(x),
            "hlog10": np.log10(x), "hexp": np.exp(x), "hexp2": np.exp2(x), "hexp10": F32(10) ** x,
        }
    names = list(exact) + list(via32)
    for k, n in enumerate(names):
        if n in exact:
            bad = ~same(o[k], exact[n])
            assert not bad.any(), (n, a[bad][:4], o[k][bad][:4], exact[n][bad][:4])
        else:
            with np.errstate(over="ignore"):
                want = via32[n].astype(F16)
            bad = ~same(o[k], want)
            # float32 libraries (numpy's SIMD, libm) may differ by an ulp of float32, which can move
            # a float16 rounding only next to a tie; allow a handful, each one float16 ulp away
            assert bad.sum() <= 8, (n, int(bad.sum()), a[bad][:4], o[k][bad][:4], want[bad][:4])
            gap = np.abs(o[k][bad].astype(F32) - want[bad].astype(F32))
            assert (gap <= np.spacing(np.abs(want[bad])).astype(F32)).all(), n


def test_fp16_of_other_types_converts_and_complex_is_an_error():
    @cuda.jit
    def k(out, x):
        out[0] = fp16.hadd(x, 1)  # float64 x -> float16, weak 1 -> float16
        out[1] = fp16.hmul(2.5, 2)

    out = np.zeros(2, F16)
    k[1, 1](out, 0.1)
    assert out[0] == F16(0.1) + F16(1) and out[1] == F16(5)

    @cuda.jit
    def bad(out):
        out[0] = fp16.hadd(1j, 1)

    with pytest.raises(cuda.CompileError, match="float16 numbers"):
        bad[1, 1](np.zeros(1, F16))


def test_cuda_fma_of_float16_rounds_once():
    @cuda.jit
    def k(out, a, b, c):
        out[0] = cuda.fma(a, b, c)

    # a*b+c rounded to float32 first lands on a float16 tie and rounds the other way
    a, b, c = F16(1.792e04), F16(-0.2695), F16(5.406e-05)
    exact = float(a) * float(b) + float(c)
    assert F16(F32(a) * F32(b) + F32(c)) != F16(exact)
    out = np.zeros(1, F16)
    k[1, 1](out, a, b, c)
    assert out[0] == F16(exact)


@needs_llvm_tools
@pytest.mark.parametrize("arch", ARCHS)
def test_native_half_instructions_on_amdgpu(arch, tmp_path):
    h = T.Array(T.float16, 1, "C")
    _, ops = amdgpu_compile(binary, [h, h, h, T.Array(T.float16, 2, "C"), T.Array(T.boolean, 2, "C")], arch, tmp_path)
    f16 = {o for o in ops if o.startswith("v_") and "f16" in o}
    # add/sub/mul/fma and compares in half, no detour through float32
    assert any(o.startswith(("v_add_f16", "v_pk_add_f16")) for o in f16), sorted(f16)
    assert any(o.startswith(("v_mul_f16", "v_pk_mul_f16")) for o in f16), sorted(f16)
    assert any(o.startswith(("v_fma_f16", "v_fmac_f16", "v_pk_fma_f16")) for o in f16), sorted(f16)
    assert any(o.startswith("v_cmp") and "f16" in o for o in f16), sorted(f16)
    _, ops = amdgpu_compile(unary, [h, T.Array(T.float16, 2, "C")], arch, tmp_path)
    assert "v_sqrt_f16" in ops or any(o.startswith("v_sqrt_f16") for o in ops)
    assert any(o.startswith(("v_floor_f16", "v_rndne_f16", "v_trunc_f16", "v_ceil_f16")) for o in ops)


rng = np.random.default_rng(1234)


def half_ops(a, b, out, cmp_out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] * b[i] + a[i] / b[i]
        cmp_out[i] = a[i] > b[i]


def test_float16_arithmetic_and_bool_arrays():
    a = rng.random(50).astype(np.float16) + np.float16(0.5)
    b = rng.random(50).astype(np.float16) + np.float16(0.25)
    out = np.zeros(50, np.float16)
    c = np.zeros(50, np.bool_)
    run_py(half_ops, (1,), (64,), a, b, out, c)
    np.testing.assert_array_equal(out, a * b + a / b)  # each op rounded to half, like numpy
    assert c.tolist() == (a > b).tolist()


# float16
@cuda.jit
def f16(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = cuda.fp16.hfma(a[i], b[i], a[i]) + b[i]


def test_float16():
    a = np.linspace(-2, 2, 30).astype(np.float16)
    b = np.linspace(1, 3, 30).astype(np.float16)
    out = np.zeros_like(a)
    f16[1, 32](a, b, out)
    fma = (a.astype(np.float64) * b + a).astype(np.float16)
    np.testing.assert_array_equal(out, fma + b)
