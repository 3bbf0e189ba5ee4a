"""Complex numbers in kernels: complex64/complex128 scalars and arrays, arithmetic with numba's results
(the ``/`` operator is CPython's algorithm, ``np.divide`` numpy's Smith division; ``abs`` is
``math.hypot``), promotion as numpy 2 does, ``.real/.imag/.conjugate()``, ``complex(a, b)`` and
``np.complex64(re, im)``, the ``cmath`` functions numba.cuda supports (special values as Python's,
no overflow near the largest floats), numpy ufuncs of complex values -- run on the cpu target
against numpy/Python, compiled for the amdgpu archs."""

from __future__ import annotations

import cmath
import math

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

import pykern as cuda
from pykern.core.errors import CompileError
from pykern.frontend import types as T
from pykern.frontend.typeof import typeof

from types_helpers import amdgpu_compile, ARCHS, atanh_hard, close_parts, needs_llvm_tools

pytestmark = pytest.mark.usefixtures("cpu_target")

SPECIAL = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e30, 1e-30]


def parts(dt, n=64, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)


def special_grid(dt):
    s = np.array(SPECIAL)
    re, im = np.meshgrid(s, s)
    out = np.empty(re.size, dt)
    out.real, out.imag = re.ravel(), im.ravel()
    return out


def same(got, want):
    """Equal, with NaN parts equal to NaN parts (numpy's bit-for-bit result)."""
    got, want = np.asarray(got), np.asarray(want)
    ok = lambda g, w: (g == w) | (np.isnan(g) & np.isnan(w))  # noqa: E731
    return bool(np.all(ok(got.real, want.real) & ok(got.imag, want.imag)))


def numba_div(a, b):
    """numba's ``/`` of complex arrays element by element: CPython's algorithm
    (numbers.complex_div_impl), in the component type; a zero divisor gives numpy's
    infinities and NaNs (numba raises ZeroDivisionError, unreported in kernels)."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    abr, abi = abs(br), abs(bi)
    with np.errstate(all="ignore"):
        rat1 = bi / br
        den1 = br + bi * rat1
        rat2 = br / bi
        den2 = br * rat2 + bi
        re = np.where(abr >= abi, np.where(abr == 0, ar / abr, (ar + ai * rat1) / den1),
                      np.where(abi >= abr, (ar * rat2 + ai) / den2, np.nan))
        im = np.where(abr >= abi, np.where(abr == 0, ai / abi, (ai - ar * rat1) / den1),
                      np.where(abi >= abr, (ai * rat2 - ar) / den2, np.nan))
    out = np.empty(a.shape, a.dtype)
    out.real, out.imag = re, im
    return out


@cuda.jit
def arith(a, b, o):
    i = cuda.grid(1)
    if i < a.size:
        o[0, i] = a[i] + b[i]
        o[1, i] = a[i] - b[i]
        o[2, i] = a[i] * b[i]
        o[3, i] = a[i] / b[i]
        o[4, i] = -a[i]


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_arithmetic_equals_numba_bit_for_bit(dt):
    a = np.concatenate([parts(dt, 200, 1), special_grid(dt), np.repeat(special_grid(dt)[:9], 9)])
    b = np.concatenate([parts(dt, 200, 2), np.tile(special_grid(dt)[::9], 9), special_grid(dt)])
    o = np.zeros((5, a.size), dt)
    arith[(a.size + 127) // 128, 128](a, b, o)
    with np.errstate(all="ignore"):
        ref = [a + b, a - b, a * b, numba_div(a, b), -a]
    for k, r in enumerate(ref):
        assert same(o[k], r), ("+-*/n"[k], np.nonzero(~np.isclose(o[k], r, equal_nan=True))[0][:5])


finite = st.floats(-1e6, 1e6, allow_nan=False, width=64)
anyf = st.one_of(st.floats(width=64), st.sampled_from(SPECIAL))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(anyf, anyf, anyf, anyf), min_size=1, max_size=40),
       st.sampled_from([np.complex64, np.complex128]))
def test_arithmetic_hypothesis(vals, dt):
    v = np.array(vals)
    with np.errstate(all="ignore"):
        a = (v[:, 0] + 1j * v[:, 1]).astype(dt)
        b = (v[:, 2] + 1j * v[:, 3]).astype(dt)
        a.real, a.imag = v[:, 0].astype(a.real.dtype), v[:, 1].astype(a.real.dtype)
        b.real, b.imag = v[:, 2].astype(a.real.dtype), v[:, 3].astype(a.real.dtype)
        ref = [a + b, a - b, a * b, numba_div(a, b), -a]
    o = np.zeros((5, a.size), dt)
    arith[1, 64](a, b, o)
    for k, r in enumerate(ref):
        assert same(o[k], r), "+-*/n"[k]


@cuda.jit
def power(a, b, o):
    i = cuda.grid(1)
    if i < a.size:
        o[i] = a[i] ** b[i]


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_power(dt):
    a = parts(dt, 64, 3)
    b = parts(dt, 64, 4)
    b[:20] = np.arange(-10, 10)  # integer exponents: repeated multiplication, as numpy
    a[20:22] = 0
    b[20], b[21] = 0.5 - 1j, -1
    o = np.zeros_like(a)
    power[1, 64](a, b, o)
    with np.errstate(all="ignore"):
        ref = a ** b
    tol = 1e-5 if dt == np.complex64 else 1e-12
    assert np.allclose(o, ref, rtol=tol, atol=0, equal_nan=True)
    assert same(o[[0, 10, 11, 12, 20, 21]], ref[[0, 10, 11, 12, 20, 21]])


@cuda.jit
def promote(x32, x64, f16, i, c64, out):
    out[0] = c64 * x32  # complex64
    out[1] = c64 * x64  # complex128
    out[2] = c64 * f16  # complex64
    out[3] = c64 * i  # complex128
    out[4] = x32 * 2j  # complex64: a Python complex is weak (NEP 50)
    out[5] = c64 + 1.5  # complex64


def test_promotion_like_numpy2():
    out = np.zeros(6, np.complex128)
    x32, x64, f16, i, c64 = np.float32(1.1), np.float64(1.1), np.float16(1.1), np.int64(3), np.complex64(0.3 + 0.7j)
    promote[1, 1](x32, x64, f16, i, c64, out)
    ref = [c64 * x32, c64 * x64, c64 * f16, c64 * i, x32 * np.complex64(2j), c64 + np.float32(1.5)]
    assert [r.dtype for r in ref[:4]] == [np.complex64, np.complex128, np.complex64, np.complex128]
    for k, r in enumerate(ref):
        assert out[k] == np.complex128(r), k
    assert T.promote(T.complex64, T.float64) == T.complex128 and T.promote(T.float16, T.complex64) == T.complex64


@cuda.jit
def parts_kernel(a, re, im, ab, out, eq):
    i = cuda.grid(1)
    if i < a.size:
        z = a[i]
        re[i] = z.real
        im[i] = z.imag
        ab[i] = abs(z)
        out[0, i] = z.conjugate()
        out[1, i] = complex(z.real, -z.imag)
        out[2, i] = complex(z.imag)
        out[3, i] = np.conj(z) * 1j
        eq[0, i] = z == out[0, i].conjugate()
        eq[1, i] = z != complex(z.real, 0.0)
        eq[2, i] = bool(z)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_parts_abs_conjugate_complex_eq(dt):
    a = np.concatenate([parts(dt, 40, 5), special_grid(dt)])
    ft = a.real.dtype
    re, im, ab = (np.zeros(a.size, ft) for _ in range(3))
    out = np.zeros((4, a.size), np.complex128)
    eq = np.zeros((3, a.size), np.bool_)
    parts_kernel[1, 128](a, re, im, ab, out, eq)
    assert same(re, a.real) and same(im, a.imag)
    # numba's abs is math.hypot (numpy's npy_cabsf can be an ulp away)
    assert same(ab, np.hypot(a.real, a.imag))
    assert same(out[0], np.conj(a)) and same(out[1], np.conj(a))
    assert same(out[2], a.imag.astype(np.float64) + 0j)
    with np.errstate(invalid="ignore"):
        assert same(out[3], np.conj(a) * np.complex128(1j))
    assert (eq[0] == (a == a)).all()
    assert (eq[1] == (a != (a.real + 0j))).all()
    assert (eq[2] == a.astype(bool)).all()


def test_complex_scalar_arguments_and_signatures():
    @cuda.jit("void(complex64[:], complex64, complex128)")
    def k(out, a, b):
        out[0] = a
        out[1] = b  # assigned to a complex64 array: rounded
        out[2] = a * b

    out = np.zeros(3, np.complex64)
    k[1, 1](out, 1.5 - 2j, np.complex128(0.1 + 0.2j))
    assert out[0] == np.complex64(1.5 - 2j)
    assert out[1] == np.complex64(0.1 + 0.2j)
    assert out[2] == np.complex64(np.complex64(1.5 - 2j) * np.complex128(0.1 + 0.2j))
    assert typeof(1j) == T.complex128 and typeof(np.complex64(1)) == T.complex64
    assert str(typeof(np.zeros(3, np.complex64))) == "complex64[::1]"

    @cuda.jit
    def tup(out, t):
        out[0] = t[0] + t[1]

    o = np.zeros(1, np.complex128)
    tup[1, 1](o, (1 + 1j, np.complex64(2 - 3j)))
    assert o[0] == 3 - 2j


@cuda.jit(device=True)
def rotate(z, k):
    return z * 1j ** k


@cuda.jit
def device_fn(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = rotate(a[i], 2)


def test_device_function_with_complex_arguments_and_result():
    a = parts(np.complex128, 16, 7)
    out = np.zeros_like(a)
    device_fn[1, 16](a, out)
    assert np.allclose(out, -a, rtol=1e-15)


CMATH_UNARY = ["sqrt", "exp", "log", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh",
               "asin", "acos", "atan", "asinh", "acosh", "atanh"]


def _cmath_kernel(name):
    f = getattr(cmath, name)

    def k(a, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = f(a[i])

    return cuda.jit(k)


_KERNELS = {n: _cmath_kernel(n) for n in CMATH_UNARY}


def _cm_ref(name, a):
    f = getattr(cmath, name)
    out = []
    for z in a:
        try:
            out.append(f(complex(z)))
        except (ValueError, OverflowError):
            out.append(complex(np.nan, np.nan))
    return np.array(out)


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", CMATH_UNARY)
def test_cmath_functions_match_python(name, dt):
    a = parts(dt, 128, 11) * 2
    a[:8] = [0.5 + 0j, -0.5 + 0j, 1 + 1e-3j, -3 + 0j, 0.999 + 0j, 0.3j, -2j, 2 + 0j]  # no poles
    out = np.zeros_like(a)
    _KERNELS[name][1, 128](a, out)
    ref = _cm_ref(name, a)
    rtol = 2e-5 if dt == np.complex64 else 1e-13
    # component-wise, relative to the magnitude of the result
    err = np.abs(out - ref) / np.maximum(np.abs(ref), np.finfo(a.real.dtype).tiny)
    assert err.max() <= rtol, (name, a[err.argmax()], out[err.argmax()], ref[err.argmax()])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(finite, finite), min_size=1, max_size=32), st.sampled_from(["sqrt", "exp", "log", "sin", "atanh", "acos"]))
def test_cmath_hypothesis_finite(vals, name):
    v = np.array(vals)
    a = v[:, 0] + 1j * v[:, 1]
    a = a[np.abs(a) > 1e-300]
    if not a.size:
        return
    if name in ("exp", "sin"):
        a = a.real / 1e4 + 1j * a.imag / 1e4  # keep clear of overflow
    out = np.zeros_like(a)
    _KERNELS[name][1, 32](a, out)
    ref = _cm_ref(name, a)
    # a pole (atanh(+-1)): Python raises, a kernel cannot -- it gives C99's infinity, as numpy
    pole = np.isnan(ref)
    assert np.isinf(out[pole]).all(), (a[pole], out[pole])
    out, ref = out[~pole], ref[~pole]
    if not ref.size:
        return
    err = np.abs(out - ref) / np.maximum(np.abs(ref), 1e-300)
    assert err.max() <= 1e-12, (a[~pole][err.argmax()], out[err.argmax()], ref[err.argmax()])


#: atanh's hard places: the poles +-1 with an imaginary part too small to square, and
#: arguments so large that (1 - x)**2 + y**2 overflows (CPython's 1/z branch); atan(z) is
#: -i atanh(iz), so the same points turned by i are its poles +-i and large arguments
@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
@pytest.mark.parametrize("name", ["atanh", "atan"])
def test_atanh_atan_near_poles_and_huge_match_numpy(name, dt):
    """Was: inf at 1 + 1e-200j (the imaginary part squared to 0), NaN for complex64 beyond
    ~1e19 and the wrong quadrant at 3e38j (the squares overflowed)."""
    a = atanh_hard(dt)
    out = np.zeros_like(a)
    _KERNELS[name][1, 128](a, out)
    with np.errstate(all="ignore"):
        ref = getattr(np, "arc" + name[1:] if name == "atan" else "arctanh")(a)
    close_parts(out, ref, 8e-7 if dt == np.complex64 else 4e-16)
    if dt == np.complex128:  # and Python's cmath, the formulas' source
        close_parts(out, np.array([getattr(cmath, name)(complex(z)) for z in a]), 4e-16)


@cuda.jit(device=True)
def _cexp_widening(x, y):
    if x > 0:
        re = math.inf  # float64 literal: re is float64 even for complex64's float32 parts
    else:
        re = x
    return re, y


def test_cmath_part_wider_than_the_component_type(monkeypatch):
    """A cmath device function whose branches give a part float64 here and float32 there
    (numba unifies the variable to float64): the frontend took the tuple's parts to be
    float32 and stopped with "internal error: invalid IR ... Tuple(float64, float32)"."""
    from pykern.lang import stubs

    monkeypatch.setattr(stubs.DEVICE_LIBRARIES["cmath"], "cexp", _cexp_widening)

    @cuda.jit(cache=False)
    def k(a, out):
        for i in range(a.size):
            out[i] = cmath.exp(a[i])

    a = np.array([1 + 0.5j, -2 + 0.25j], np.complex64)
    out = np.zeros_like(a)
    k[1, 1](a, out)
    assert same(out, np.array([complex(np.inf, 0.5), -2 + 0.25j], np.complex64))


@cuda.jit
def cmath_misc(a, ph, po, re, pred):
    i = cuda.grid(1)
    if i < a.size:
        z = a[i]
        ph[i] = cmath.phase(z)
        r, p = cmath.polar(z)
        po[0, i] = r
        po[1, i] = p
        re[i] = cmath.rect(r, p)
        pred[0, i] = cmath.isnan(z)
        pred[1, i] = cmath.isinf(z)
        pred[2, i] = cmath.isfinite(z)


def test_phase_polar_rect_predicates():
    a = np.concatenate([parts(np.complex128, 30, 9), special_grid(np.complex128)])
    ph = np.zeros(a.size)
    po = np.zeros((2, a.size))
    re = np.zeros(a.size, complex)
    pred = np.zeros((3, a.size), bool)
    cmath_misc[1, 128](a, ph, po, re, pred)
    assert same(ph, np.array([cmath.phase(z) for z in a]))
    # hypot and atan2, as Python's cmath.polar (np.angle's SIMD atan2 is 1 ulp off libm's on some CPUs)
    assert same(po[0], np.array([abs(complex(z)) for z in a]))
    assert same(po[1], np.array([cmath.phase(z) for z in a]))
    fin = np.isfinite(a)
    assert np.allclose(re[fin], a[fin], rtol=1e-15, atol=1e-300)
    assert (pred[0] == [cmath.isnan(z) for z in a]).all()
    assert (pred[1] == [cmath.isinf(z) for z in a]).all()
    assert (pred[2] == [cmath.isfinite(z) for z in a]).all()


@pytest.mark.parametrize("src,msg", [
    ("def k(a):\n    a[0] = a[0] < a[1]\n", "'<' is not defined for complex"),
    ("def k(a):\n    a[0] = a[0] // a[1]\n", "unsupported operand types for //"),
    ("def k(a):\n    x = math.sqrt(a[0])\n", "use the cmath module"),
    ("def k(a):\n    x = float(a[0])\n", "cannot convert complex128 to float64"),
    ("def k(a):\n    x = cuda.shfl_sync(-1, a[0], 1)\n", "shuffle z.real and z.imag"),
])
def test_unsupported_complex_operations_are_located_errors(src, msg, tmp_path):
    import importlib.util
    import sys

    p = tmp_path / "kmod_complex.py"
    p.write_text("import math\nimport pykern as cuda\n" + src)
    spec = importlib.util.spec_from_file_location("kmod_complex", p)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    with pytest.raises(cuda.CompileError) as ei:
        cuda.jit(m.k)[1, 1](np.zeros(2, complex))
    assert msg in str(ei.value)
    assert "kmod_complex.py:" in str(ei.value)


@needs_llvm_tools
@pytest.mark.parametrize("arch", ARCHS)
def test_complex_kernels_compile_for_amdgpu(arch, tmp_path):
    c64, c128 = T.Array(T.complex64, 1, "C"), T.Array(T.complex128, 2, "A")
    _, ops = amdgpu_compile(arith, [c64, c64, T.Array(T.complex64, 2, "C")], arch, tmp_path)
    assert "v_fma_f32" in ops or any(o.startswith("v_fmac_f32") for o in ops)
    amdgpu_compile(_KERNELS["sqrt"], [T.Array(T.complex128, 1, "C")] * 2, arch, tmp_path)
    amdgpu_compile(power, [c64, c64, c64], arch, tmp_path)
    art, _ = amdgpu_compile(promote, [T.float32, T.float64, T.float16, T.int64, T.complex64,
                                      T.Array(T.complex128, 1, "C")], arch, tmp_path)
    # the complex64 scalar: two 4-byte floats (real, imag) after f32@0, f64@8, f16@16, i64@24
    explicit = [a for a in art.metadata[".args"] if not a[".value_kind"].startswith("hidden_")]
    assert [(a[".offset"], a[".size"]) for a in explicit][4:6] == [(32, 4), (36, 4)]
    amdgpu_compile(cmath_misc, [T.Array(T.complex128, 1, "C"), T.Array(T.float64, 1, "C"), T.Array(T.float64, 2, "C"),
                                T.Array(T.complex128, 1, "C"), T.Array(T.boolean, 2, "C")], arch, tmp_path)


TABLE = np.array([1 + 1j, 2 - 0.5j, -3j], np.complex64)
SCALE = np.complex64(0.5 - 2j)


def test_complex_globals_const_shared_and_local_arrays():
    @cuda.jit
    def k(out):
        t = cuda.threadIdx.x
        c = cuda.const.array_like(TABLE)
        sh = cuda.shared.array(3, np.complex64)
        loc = cuda.local.array(2, cuda.complex128)
        sh[t] = c[t] * SCALE
        cuda.syncthreads()
        loc[0] = sh[2 - t]
        loc[1] = TABLE[t]
        out[t] = loc[0] + loc[1]

    out = np.zeros(3, np.complex128)
    k[1, 3](out)
    want = (TABLE * SCALE)[::-1].astype(np.complex128) + TABLE
    assert same(out, want)


def test_frozen_complex_number_methods():
    @cuda.jit
    def k(out):
        out[0] = SCALE.conjugate() + (2 + 3j).conjugate()
        out[1] = SCALE.real + SCALE.imag * 1j + (1.5).real

    out = np.zeros(2, np.complex128)
    k[1, 1](out)
    assert out[0] == np.conj(SCALE) + (2 - 3j) and out[1] == SCALE + 1.5


def test_complex_kernel_arguments_pack_like_the_abi():
    import struct

    from pykern.codegen import abi_map as abi
    from pykern.runtime import kernargs

    argtypes = (T.float32, T.complex64, T.complex128, T.Array(T.complex64, 1, "C"))
    flat = abi.flatten_params(list(argtypes))
    assert [(p.name, p.offset) for p in flat[:5]] == [("arg0", 0), ("arg1.real", 4), ("arg1.imag", 8),
                                                       ("arg2.real", 16), ("arg2.imag", 24)]
    a = np.zeros(3, np.complex64)
    values = kernargs.flatten_values(flat, (np.float32(1), 1.5 - 2j, np.complex128(0.25 + 4j), a), nargs=4)
    buf = kernargs.pack(flat, values)
    assert bytes(buf[4:12]) == struct.pack("<ff", 1.5, -2.0)
    assert bytes(buf[16:32]) == struct.pack("<dd", 0.25, 4.0)


def test_numpy_ufuncs_of_complex_values():
    @cuda.jit
    def k(a, out, r):
        i = cuda.grid(1)
        if i < a.size:
            out[0, i] = np.sqrt(a[i])
            out[1, i] = np.exp(a[i])
            out[2, i] = np.log(a[i])
            out[3, i] = np.arctanh(a[i])
            r[i] = np.sqrt(a[i].real * a[i].real)  # real ufuncs stay real

    a = parts(np.complex128, 32, 13)
    out = np.zeros((4, 32), np.complex128)
    r = np.zeros(32)
    k[1, 32](a, out, r)
    for got, want in zip(out, [np.sqrt(a), np.exp(a), np.log(a), np.arctanh(a)]):
        assert np.allclose(got, want, rtol=1e-13, atol=0)
    assert same(r, np.abs(a.real))


# complex
@cuda.jit
def cplx(z, w, out):
    i = cuda.grid(1)
    if i < z.size:
        out[i] = z[i] * w[i] + abs(z[i]) - z[i].conjugate() / w[i] + cmath.exp(z[i])


def test_complex_kernel():
    rng = np.random.default_rng(5)
    z = (rng.random(50) + 1j * rng.random(50)).astype(np.complex128)
    w = (rng.random(50) + 1j * rng.random(50) + 0.1).astype(np.complex128)
    out = np.zeros_like(z)
    cplx[1, 64](z, w, out)
    np.testing.assert_allclose(out, z * w + abs(z) - z.conj() / w + np.exp(z), rtol=1e-13)


def _divmod_of_complex(a, out):
    out[0] = divmod(a[0], 1j)[0]


def test_divmod_of_complex_is_a_compile_error():
    k = cuda.jit(_divmod_of_complex)
    with pytest.raises(cuda.CompileError, match=r"divmod\(\) takes real numbers, not complex128") as e:
        k[1, 1](np.zeros(1), np.zeros(1))
    assert "^" in str(e.value)


# ------------------------------------------------------------ np.complex64(re, im)
@pytest.mark.parametrize("ct, ft", [(np.complex64, np.float32), (np.complex128, np.float64)])
def test_numpy_complex_type_of_two_parts(ct, ft):
    @cuda.jit
    def k(out, re, im):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = ct(re[i], im[i])
        if i == 0:
            out[3] = ct(1.5, 2)

    re = np.array([1.5, -2.0, 0.1, 0.0], ft)
    im = np.array([-3.25, 4.0, 1e-3, 0.0], ft)
    out = np.zeros(4, ct)
    k[1, 3](out, re, im)
    want = np.array([ct(complex(r, i)) for r, i in zip(re, im)])
    want[3] = ct(1.5 + 2j)
    np.testing.assert_array_equal(out, want)
    assert out.dtype == ct


def test_numpy_complex_type_refuses_complex_parts():
    @cuda.jit
    def k(out, re, im):
        out[0] = np.complex128(re, im)

    with pytest.raises(CompileError, match="real parts"):
        k[1, 1](np.zeros(1, np.complex128), 1j, 2.0)


# ------------------------------------------------------------ cmath special values
_REALS = [-0.0, 0.0, 1.0, -1.0, -math.pi, math.inf, -math.inf, math.nan]


_VALUES = [complex(x, y) for x in _REALS for y in _REALS]


_UNARY = ["sqrt", "exp", "log", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh",
          "asin", "acos", "atan", "asinh", "acosh", "atanh"]


def _same_complex(got, want, rel):
    def same(g, w):
        if math.isnan(w) or math.isnan(g):
            return math.isnan(w) and math.isnan(g)
        if math.isinf(w) or math.isinf(g) or w == 0:
            return g == w
        return abs(g - w) <= rel * abs(w)
    return same(got.real, want.real) and same(got.imag, want.imag)


def _kernel_applying(fn):
    @cuda.jit
    def k(out, z):
        i = cuda.grid(1)
        if i < z.size:
            out[i] = fn(z[i])
    return k


@pytest.mark.parametrize("name", _UNARY)
def test_cmath_special_values_are_pythons(name):
    fn = getattr(cmath, name)
    k = _kernel_applying(fn)
    for ct, rel in ((np.complex128, 1e-13), (np.complex64, 1e-6)):
        vals = [v for v in _VALUES if not (ct is np.complex64 and math.isfinite(v.real) and math.isfinite(v.imag))]
        ok = []
        for v in vals:
            v = complex(ct(v))  # the argument as the kernel sees it (-pi rounds up in float32)
            try:
                ok.append((v, fn(v)))
            except ValueError:
                pass
        z = np.array([v for v, _ in ok], ct)
        out = np.zeros_like(z)
        k[1, len(z)](out, z)
        bad = [(v, complex(g), w) for (v, w), g in zip(ok, out) if not _same_complex(complex(g), w, rel)]
        assert not bad, (name, ct, bad[:5])


def test_cmath_rect_special_values_are_pythons():
    @cuda.jit
    def k(out, r, phi):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = cmath.rect(r[i], phi[i])

    pairs = []
    for x in _REALS:
        for y in _REALS:
            try:
                pairs.append((x, y, cmath.rect(x, y)))
            except ValueError:
                pass
    r, phi = (np.array([p[k] for p in pairs]) for k in (0, 1))
    out = np.zeros(len(pairs), np.complex128)
    k[1, len(pairs)](out, r, phi)
    bad = [(x, y, complex(g), w) for (x, y, w), g in zip(pairs, out) if not _same_complex(complex(g), w, 1e-13)]
    assert not bad, bad[:5]


def test_atanh_of_an_infinite_imaginary_part_is_a_quarter_turn():
    # was 3*pi/8 (a finite wrong answer) before the special values
    k = _kernel_applying(cmath.atanh)
    z = np.array([complex(0, math.inf), complex(1, -math.inf)])
    out = np.zeros_like(z)
    k[1, 2](out, z)
    np.testing.assert_array_equal(out, [cmath.atanh(v) for v in z])


@pytest.mark.parametrize("ct", [np.complex64, np.complex128])
def test_real_and_imag_of_a_complex_array_are_views(ct):
    @cuda.jit
    def k(z, out):
        re, im = z.real, z.imag
        out[0] = re.size
        re[1] = 7.0
        im[0] += 2.0
        cuda.atomic.add(z.imag, 2, 1.0)
        out[1] = z[1:].imag[1]

    z = np.array([1 + 1j, 2 + 2j, 3 + 3j], ct)
    out = np.zeros(2)
    k[1, 1](z, out)
    np.testing.assert_array_equal(z, np.array([1 + 3j, 7 + 2j, 3 + 4j], ct))
    assert out.tolist() == [3.0, 4.0]


# ------------------------------------------------------------ numpy ufuncs of complex values; ufunc closures
_NP_UNARY = [np.sqrt, np.exp, np.log, np.log10, np.sin, np.cos, np.tan, np.sinh, np.cosh, np.tanh,
             np.arcsin, np.arccos, np.arctan, np.arcsinh, np.arccosh, np.arctanh]


def _key(v):
    return "nan" if v != v else (v, math.copysign(1.0, v))


@pytest.mark.parametrize("uf", _NP_UNARY, ids=lambda u: u.__name__)
def test_numpy_ufunc_special_values_of_complex_are_numpys(uf):
    reps = [-math.inf, -1.0, -0.0, 0.0, 1.0, math.inf, math.nan]
    z = np.array([complex(x, y) for x in reps for y in reps if not (math.isfinite(x) and math.isfinite(y))])
    k = _kernel_applying(uf)  # each ufunc its own kernel: the closure's ufunc is part of the cache key
    out = np.zeros_like(z)
    k[1, len(z)](out, z)
    with np.errstate(all="ignore"):
        want = uf(z)
    bad = [(v, g, w) for v, g, w in zip(z, out, want)
           if (_key(g.real), _key(g.imag)) != (_key(w.real), _key(w.imag))]
    assert not bad, bad[:4]


@cuda.jit
def cdiv(a, b, out):
    out[0] = a[0] / b[0]
    out[1] = np.divide(a[0], b[0])
    z = a[0]
    z /= b[0]
    out[2] = z


def _cdiv(dt, x, y):
    a, b = np.array([x], dt), np.array([y], dt)
    out = np.zeros(3, dt)
    cdiv[1, 1](a, b, out)
    return [complex(v) for v in out]


def test_complex64_division_operator_is_numbas():
    # numba: w / w.conjugate() is 0.8000000715255737 (numpy's Smith division: 0.800000011920929)
    r = _cdiv(np.complex64, 3.3 - 1.1j, 3.3 + 1.1j)
    assert r[0] == complex(0.8000000715255737, -0.6000000238418579)
    assert r[2] == r[0]
    assert r[1] == complex(0.800000011920929, -0.6000000238418579)
    r = _cdiv(np.complex64, 1 + 0.5j, 1 + 2.5j)
    assert r[0] == complex(0.3103448152542114, -0.27586206793785095)
    assert r[1] == complex(0.31034478545188904, -0.27586206793785095)


def test_complex128_division_operator_is_numbas():
    r = _cdiv(np.complex128, 1 + 0.5j, 1 + 2.5j)
    assert r[0] == r[2] == complex(0.3103448275862069, -0.27586206896551724) == (1 + 0.5j) / (1 + 2.5j)
    assert r[1] == complex(0.3103448275862069, -0.2758620689655173)
    r = _cdiv(np.complex128, 3.3 - 1.1j, 3.3 + 1.1j)
    assert r[0] == complex(0.7999999999999999, -0.6000000000000001)
    assert r[1] == complex(0.8, -0.6000000000000001)


def test_complex_division_special_values_as_numba():
    for dt in (np.complex64, np.complex128):
        r = _cdiv(dt, 1 + 1j, complex(math.nan, 1))
        assert all(math.isnan(v.real) and math.isnan(v.imag) for v in r)
        r = _cdiv(dt, complex(math.inf, 1), 2)
        assert all(v.real == math.inf and math.isnan(v.imag) for v in r)
        r = _cdiv(dt, 1 + 2j, complex(0, math.inf))
        for v in r:
            assert v == 0 and math.copysign(1, v.real) == 1 and math.copysign(1, v.imag) == -1


@cuda.jit
def cdiv_arrays(a, b, out):
    np.divide(a, b, out)


def test_complex_divide_ufunc_on_arrays_is_numpys():
    a = np.array([3.3 - 1.1j], np.complex64)
    out = np.zeros(1, np.complex64)
    cdiv_arrays[1, 1](a, a.conjugate(), out)
    assert out[0].real.item() == 0.800000011920929  # numba's ufunc loop: numpy's Smith division


@cuda.jit
def cabs(a, out):
    out[0] = abs(a[0])
    out[1] = np.abs(a[0])
    out[2] = np.absolute(a[0])


def test_complex64_abs_is_hypot():
    out = np.zeros(3, np.float32)
    cabs[1, 1](np.array([0.6875 - 0.5j], np.complex64), out)
    # numpy's np.abs(np.complex64(0.6875-0.5j)) is 0.8500918745994568
    assert [v.item() for v in out] == [0.8500919342041016] * 3
    cabs[1, 1](np.array([3.3 - 1.1j], np.complex64), out)
    assert [v.item() for v in out] == [3.4785053730010986] * 3


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_complex_division_abs_int_power_nditer_compile_for_amdgpu(arch):
    def k(a, b, out, r, n):
        out[0] = a[0] / b[0]
        out[1] = np.divide(a[0], b[0])
        r[0] = abs(a[0])
        n[0] = n[1] ** -3
        for v in np.nditer(r):
            v[()] = v.item() + 1

    for ct in ("complex64", "complex128"):
        ft = "float32" if ct == "complex64" else "float64"
        ck = cuda.compile(k, f"void({ct}[:], {ct}[:], {ct}[:], {ft}[:], int32[:])", arch=arch)
        assert ck.code_object[:4] == b"\x7fELF"


@cuda.jit
def inverse_large(a, o):
    for i in range(a.size):
        z = a[i]
        o[0, i] = cmath.asinh(z)
        o[1, i] = cmath.acosh(z)
        o[2, i] = cmath.asin(z)
        o[3, i] = cmath.acos(z)


def test_complex64_inverse_functions_do_not_overflow_near_flt_max():
    a = np.array([3e38 + 3e38j, -3e38 + 1j], np.complex64)
    o = np.zeros((4, 2), np.complex64)
    inverse_large[1, 1](a, o)
    c = lambda re, im: complex(np.float32(re), np.float32(im))  # noqa: E731
    assert [complex(v) for v in o[:, 0]] == [
        c(89.63656616210938, 0.7853981852531433), c(89.63656616210938, 0.7853981852531433),
        c(0.7853981852531433, 89.63656616210938), c(0.7853981852531433, -89.63656616210938)]
    assert [complex(v) for v in o[:, 1]] == [
        c(-89.28999328613281, 3.333333116818801e-39), c(89.28999328613281, 3.1415927410125732),
        c(-1.5707963705062866, 89.28999328613281), c(3.1415927410125732, -89.28999328613281)]


def test_complex128_inverse_functions_at_large_arguments_are_numbas():
    a = np.array([3e38 + 3e38j, -1.7e308 + 1e308j], np.complex128)
    o = np.zeros((4, 2), np.complex128)
    inverse_large[1, 1](a, o)
    assert [complex(v) for v in o[:, 0]] == [
        89.63656659328177 + 0.7853981633974483j, 89.63656659328177 + 0.7853981633974483j,
        0.7853981633974483 + 89.63656659328177j, 0.7853981633974483 - 89.63656659328177j]
    assert [complex(v) for v in o[:, 1]] == [
        -710.5685604015412 + 0.5317240672588056j, 710.5685604015412 + 2.609868586330988j,
        -1.039072259536091 + 710.5685604015412j, 2.609868586330988 - 710.5685604015412j]
