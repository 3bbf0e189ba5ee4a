"""``np.gcd``, ``np.lcm`` (integers) and ``np.spacing`` (float32/float64) in kernels, compared
with numpy's own loops: values (integer extremes, which wrap as numpy's do; inf, NaN, -0.0,
subnormals) and result types."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as cuda
from pykern.core.errors import CompileError

pytestmark = pytest.mark.usefixtures("cpu_uncached")

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


SPECIAL = [0.0, -0.0, 1.0, -1.0, 3.5, -2.75, 1e-30, -1e30, np.inf, -np.inf, np.nan]


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
    _check_spacing(np.array(SPECIAL + extra, dt))


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
