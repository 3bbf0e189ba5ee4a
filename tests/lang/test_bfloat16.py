"""bfloat16 in kernels: every operation is the float32 operation rounded once to nearest-even, so
the cpu target equals ml_dtypes/numpy computing in float32 then ``astype(bfloat16)`` bit for bit
(NaN, inf, -0.0, subnormals and ties included); conversions from float64 and 64-bit integers are
correctly rounded, as ml_dtypes' are; ``cuda.bf16``'s functions; amdgpu code per arch."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ml_dtypes = pytest.importorskip("ml_dtypes")

import pykern as cuda  # noqa: E402
from pykern import bf16  # noqa: E402
from pykern.core.errors import CompileError  # noqa: E402
from pykern.frontend import types as T  # noqa: E402

from types_helpers import ARCHS, amdgpu_compile, needs_llvm_tools  # noqa: E402

pytestmark = pytest.mark.usefixtures("cpu_target")

BF = ml_dtypes.bfloat16
F32 = np.float32
#: every bfloat16: NaNs of every payload, infinities, -0.0, subnormals
ALL = np.arange(65536, dtype=np.uint16).view(BF)


def bits(a):
    return np.asarray(a).view(np.uint16)


def same(got, want):
    """Bit-identical bfloat16 arrays (NaN == NaN only with the same bits)."""
    np.testing.assert_array_equal(bits(got), bits(np.asarray(want).astype(BF)))


def f32(a):
    return np.asarray(a).astype(F32)


@cuda.jit
def arith(a, b, o, c):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        y = b[i]
        o[i, 0] = x + y
        o[i, 1] = x - y
        o[i, 2] = x * y
        o[i, 3] = x / y
        o[i, 4] = -x
        o[i, 5] = x * 2 + 1
        c[i, 0] = x < y
        c[i, 1] = x == y
        c[i, 2] = x != y
        c[i, 3] = x >= y


def run_arith(a, b):
    o = np.zeros((a.size, 6), BF)
    c = np.zeros((a.size, 4), np.bool_)
    arith[(a.size + 63) // 64, 64](a, b, o, c)
    return o, c


def check_arith(a, b):
    o, c = run_arith(a, b)
    x, y = f32(a), f32(b)
    with np.errstate(all="ignore"):
        for j, want in enumerate([x + y, x - y, x * y, x / y, -x, (x * 2).astype(BF).astype(F32) + 1]):
            same(o[:, j], want)
        np.testing.assert_array_equal(c, np.stack([x < y, x == y, x != y, x >= y], 1))


def test_every_bfloat16_against_its_neighbours_and_specials():
    # each bfloat16 combined with a rotated copy of all of them: NaN payloads, +-inf, +-0, subnormals
    check_arith(ALL, np.roll(ALL, 12345))
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3.0e38], F32).astype(BF)
    a = np.repeat(special, special.size)
    check_arith(a, np.tile(special, special.size))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 65535), min_size=1, max_size=200), st.integers(0, 2**31))
def test_arithmetic_matches_float32_then_round(words, seed):
    a = np.array(words, np.uint16).view(BF)
    b = np.random.default_rng(seed).integers(0, 65536, a.size, dtype=np.uint16).view(BF)
    check_arith(a, b)


@cuda.jit
def from_types(d, f, h, i64, u64, i32, i8, o):
    i = cuda.grid(1)
    if i < d.size:
        o[i, 0] = cuda.bfloat16(d[i])
        o[i, 1] = cuda.bfloat16(f[i])
        o[i, 2] = cuda.bfloat16(h[i])
        o[i, 3] = cuda.bfloat16(i64[i])
        o[i, 4] = cuda.bfloat16(u64[i])
        o[i, 5] = cuda.bfloat16(i32[i])
        o[i, 6] = cuda.bfloat16(i8[i])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, allow_subnormal=True), min_size=1, max_size=64),
       st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=64))
def test_conversions_to_bfloat16_are_ml_dtypes(floats, ints):
    n = min(len(floats), len(ints))
    d = np.array(floats[:n], np.float64)
    # ties of float32 -> bfloat16 and double roundings through float32
    d[: n // 2] = d[: n // 2].astype(F32).astype(np.float64) if n > 1 else d[: n // 2]
    with np.errstate(all="ignore"):
        f = d.astype(F32)
        h = d.astype(np.float16)
    i64 = np.array(ints[:n], np.int64)
    u64 = i64.view(np.uint64)
    i32 = i64.astype(np.int32)
    i8 = i64.astype(np.int8)
    o = np.zeros((n, 7), BF)
    from_types[1, 64](d, f, h, i64, u64, i32, i8, o)
    for j, src in enumerate([d, f, h, i64, u64, i32, i8]):
        want = src.astype(BF)
        if src.dtype.kind == "f":  # ml_dtypes keeps NaN payload bits from float64; kernels give 0x7FC0
            nan = np.isnan(src)
            want[nan] = np.where(np.signbit(src[nan]), -np.float32("nan"), np.float32("nan")).astype(BF)
        same(o[:, j], want)


def test_correct_rounding_where_float32_would_round_twice():
    d = np.array([1 + 2**-8 + 2**-30, -(1 + 2**-8 + 2**-40), 2**-8 + 2**-9 + 2**-40], np.float64)
    i64 = np.array([2**60 + 2**52 + 1, -(2**60 + 2**52 + 1), 2**24 + 2**16 + 1], np.int64)
    o = np.zeros((3, 7), BF)
    z = np.zeros(3)
    from_types[1, 8](d, z.astype(F32), z.astype(np.float16), i64, i64.view(np.uint64), z.astype(np.int32),
                     z.astype(np.int8), o)
    same(o[:, 0], d.astype(BF))
    same(o[:, 3], i64.astype(BF))
    assert bits(o[0, 0]) == 0x3F81 and bits(o[0, 3]) == 0x5D81  # not the ties' even neighbours


@cuda.jit
def to_types(a, d, f, h, i32, u8, bo):
    i = cuda.grid(1)
    if i < a.size:
        d[i] = a[i]
        f[i] = a[i]
        h[i] = a[i]
        i32[i] = np.int32(a[i])
        u8[i] = np.uint8(a[i])
        bo[i] = a[i]


def test_conversions_from_bfloat16():
    a = ALL
    d, f, h = np.zeros(a.size), np.zeros(a.size, F32), np.zeros(a.size, np.float16)
    i32, u8, bo = np.zeros(a.size, np.int32), np.zeros(a.size, np.uint8), np.zeros(a.size, np.bool_)
    to_types[a.size // 256, 256](a, d, f, h, i32, u8, bo)
    x = f32(a)
    np.testing.assert_array_equal(f.view(np.uint32)[~np.isnan(x)], x.view(np.uint32)[~np.isnan(x)])
    np.testing.assert_array_equal(d, x.astype(np.float64))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(h, x.astype(np.float16))
    ok = np.isfinite(x) & (np.abs(x) < 2**31)
    np.testing.assert_array_equal(i32[ok], x[ok].astype(np.int32))
    ok = np.isfinite(x) & (x > -1) & (x < 256)
    np.testing.assert_array_equal(u8[ok], x[ok].astype(np.uint8))
    np.testing.assert_array_equal(bo, x != 0)


@cuda.jit
def maths(a, o):
    i = cuda.grid(1)
    if i < a.size:
        o[i, 0] = math.sin(a[i])
        o[i, 1] = math.sqrt(a[i])
        o[i, 2] = math.exp(a[i])
        o[i, 3] = np.floor(a[i] * 3)
        o[i, 4] = abs(a[i])
        o[i, 5] = max(a[i], cuda.bfloat16(0.5))


@cuda.jit
def maths32(x, o):
    i = cuda.grid(1)
    if i < x.size:
        o[i, 0] = math.sin(x[i])
        o[i, 1] = math.sqrt(x[i])
        o[i, 2] = math.exp(x[i])


def test_math_in_float32_then_rounded():
    a = ALL[~np.isnan(f32(ALL))]
    o = np.zeros((a.size, 6), BF)
    maths[(a.size + 255) // 256, 256](a, o)
    x = f32(a)
    # the target's own float32 functions (numpy's SIMD sinf/expf differ from them by an ulp here and
    # there), rounded by ml_dtypes: a bfloat16 math call is exactly that
    o32 = np.zeros((a.size, 3), F32)
    maths32[(a.size + 255) // 256, 256](x, o32)
    np.testing.assert_array_max_ulp(o32[:, 1], np.sqrt(x), 0)
    with np.errstate(all="ignore"):
        for j in range(3):
            same(o[:, j], o32[:, j])
        np.testing.assert_array_equal(f32(o[:, 3]), np.floor(f32((x * 3).astype(BF))))
        same(o[:, 4], np.abs(x))
        same(o[:, 5], np.where(x < 0.5, F32(0.5), x))


def test_types_promote_as_numpy_with_ml_dtypes():
    assert T.promote(T.bfloat16, T.int8) == T.bfloat16
    assert T.promote(T.bfloat16, T.float16) == T.float32
    assert T.promote(T.bfloat16, T.float32) == T.float32
    assert T.bfloat16 != T.float16 and str(T.bfloat16) == "bfloat16"
    assert T.from_dtype(BF) == T.bfloat16

    @cuda.jit
    def k(a, f, o):
        o[0] = a[0] + f[0]  # float32 result

    o = np.zeros(1, F32)
    k[1, 1](np.array([1.5], BF), np.array([1e-3], F32), o)
    assert o[0] == F32(1.5) + F32(1e-3)


def test_scalar_argument_rounded_once_and_signature():
    @cuda.jit("void(bfloat16, bfloat16[::1])")
    def k(s, o):
        o[0] = s

    o = np.zeros(1, BF)
    k[1, 1](1 + 2**-8 + 2**-30, o)  # a Python float: one rounding from float64
    assert bits(o[0]) == 0x3F81
    k[1, 1](BF(-2.5), o)
    assert o[0] == -2.5


def test_device_arrays_of_bfloat16():
    a = np.arange(10, dtype=F32).astype(BF)
    d = cuda.to_device(a)

    @cuda.jit
    def k(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = x[i] * x[i]

    k[1, 32](d)
    got = d.copy_to_host()
    assert got.dtype == BF
    same(got, f32(a) * f32(a))


@cuda.jit
def bf16_funcs(a, b, c, o, cmp, ii, n):
    i = cuda.grid(1)
    if i < a.size:
        x, y, z = a[i], b[i], c[i]
        o[i, 0] = bf16.hadd(x, y)
        o[i, 1] = bf16.hsub_rn(x, y)
        o[i, 2] = bf16.hmul(x, y)
        o[i, 3] = bf16.hdiv(x, y)
        o[i, 4] = bf16.hfma(x, y, z)
        o[i, 5] = bf16.hmul_sat(x, y)
        o[i, 6] = bf16.hfma_relu(x, y, z)
        o[i, 7] = bf16.hmax(x, y)
        o[i, 8] = bf16.hmin_nan(x, y)
        o[i, 9] = bf16.hneg(x)
        o[i, 10] = bf16.hsqrt(x)
        o[i, 11] = bf16.hexp2(x)
        o[i, 12] = bf16.hrcp(x)
        o[i, 13] = bf16.float32_to_bfloat16_rz(np.float32(n[i]) * np.float32(1.0078125))
        o[i, 14] = bf16.int32_to_bfloat16_ru(n[i])
        o[i, 15] = bf16.int32_to_bfloat16_rd(n[i])
        o[i, 16] = bf16.uint16_as_bfloat16(bf16.bfloat16_as_uint16(x))
        cmp[i, 0] = bf16.hne(x, y)
        cmp[i, 1] = bf16.hequ(x, y)
        cmp[i, 2] = bf16.hltu(x, y)
        cmp[i, 3] = bf16.hge(x, y)
        cmp[i, 4] = bf16.hisnan(x)
        ii[i, 0] = bf16.hisinf(x)
        ii[i, 1] = bf16.bfloat16_to_int32_rn(x)
        ii[i, 2] = bf16.bfloat16_to_int32_rd(x)
        ii[i, 3] = bf16.bfloat16_to_int32_ru(x)


def _directed(v, mode):
    """Reference: the bfloat16 nearest to ``v`` (exact rationals via float64) in direction ``mode``."""
    v = np.asarray(v, np.float64)
    t = v.astype(F32).view(np.uint32) & 0xFFFF0000  # truncation (v exact in float32 for these inputs)
    tz = t.view(F32).astype(np.float64)
    up = (tz != v) & ((v > 0) if mode == "ru" else (v < 0))
    return np.where(up, (t + 0x10000).view(F32), t.view(F32)).astype(BF)


def test_cuda_bf16_functions():
    r = np.random.default_rng(7)
    n = 512
    a = r.standard_normal(n).astype(BF)
    b = r.standard_normal(n).astype(BF)
    c = r.standard_normal(n).astype(BF)
    a[:4] = [np.nan, np.inf, -np.inf, 0.0]
    b[4:8] = [np.nan, -0.0, np.inf, 2.0]
    k = r.integers(-(2**24), 2**24, n).astype(np.int32)
    o = np.zeros((n, 17), BF)
    cmp = np.zeros((n, 5), np.bool_)
    ii = np.zeros((n, 4), np.int32)
    bf16_funcs[n // 64, 64](a, b, c, o, cmp, ii, k)
    x, y, z = f32(a), f32(b), f32(c)
    with np.errstate(all="ignore"):
        same(o[:, 0], x + y)
        same(o[:, 1], x - y)
        same(o[:, 2], x * y)
        same(o[:, 3], x / y)
        exact = x.astype(np.float64) * y + z  # exact for these (8-bit by 8-bit products, small exponents)
        same(o[:, 4], exact.astype(BF))
        p = (x * y).astype(BF).astype(F32)
        same(o[:, 5], np.where(~(p >= 0), F32(0), np.minimum(p, F32(1))))
        fr = exact.astype(BF).astype(F32)
        same(o[:, 6], np.where(fr < 0, F32(0), fr))
        same(o[:, 7], np.fmax(x, y))
        same(o[:, 8], np.minimum(x, y))
        same(o[:, 9], -x)
        same(o[:, 10], np.sqrt(x))
        same(o[:, 11], np.exp2(x))
        same(o[:, 12], F32(1) / x)
        t = k.astype(F32) * F32(1.0078125)
        same(o[:, 13], (t.view(np.uint32) & 0xFFFF0000).view(F32))
        same(o[:, 14], _directed(k, "ru"))
        same(o[:, 15], _directed(k, "rd"))
        np.testing.assert_array_equal(bits(o[:, 16])[~np.isnan(x)], bits(a)[~np.isnan(x)])
        np.testing.assert_array_equal(cmp[:, 0], (x < y) | (x > y))
        np.testing.assert_array_equal(cmp[:, 1], ~((x < y) | (x > y)))
        np.testing.assert_array_equal(cmp[:, 2], ~(x >= y))
        np.testing.assert_array_equal(cmp[:, 3], x >= y)
        np.testing.assert_array_equal(cmp[:, 4], np.isnan(x))
        np.testing.assert_array_equal(ii[:, 0], np.where(np.isinf(x), np.sign(x), 0))
        fin = np.isfinite(x)
        np.testing.assert_array_equal(ii[fin, 1], np.rint(x[fin]).astype(np.int32))
        np.testing.assert_array_equal(ii[fin, 2], np.floor(x[fin]).astype(np.int32))
        np.testing.assert_array_equal(ii[fin, 3], np.ceil(x[fin]).astype(np.int32))


def test_bf16_function_argument_errors():
    @cuda.jit
    def k(o):
        o[0] = bf16.hadd(o[0])

    with pytest.raises(CompileError, match="hadd"):
        k[1, 1](np.zeros(1, BF))


@needs_llvm_tools
@pytest.mark.parametrize("arch", ARCHS + ["gfx950"])
def test_amdgpu_conversion_per_arch(arch, tmp_path):
    def k(x, y, o):
        i = cuda.grid(1)
        if i < x.size:
            o[i] = x[i] * y[i] + x[i]

    args = [T.Array(T.bfloat16, 1, "C")] * 3
    art, ops = amdgpu_compile(k, args, arch, tmp_path)
    assert "v_cvt_pk_bf16_f32" in ops if arch == "gfx950" else "v_cvt_pk_bf16_f32" not in ops
    if arch != "gfx950":
        assert "v_add3_u32" in ops  # the integer round-to-nearest-even
    assert "global_load_ushort" in ops or "global_load_u16" in ops or "buffer_load_ushort" in ops
    assert art.metadata[".private_segment_fixed_size"] == 0
