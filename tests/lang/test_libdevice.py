"""``cuda.libdevice`` (numba's names of CUDA's libdevice functions) in kernels: unary and binary float
functions, tuple-returning ones, integer functions and conversions -- on the cpu target against
numpy/Python, and compiled for the amdgpu archs."""

import math

import numpy as np
import pytest

import pykern as cuda
from pykern.dispatch.generated import define
from pykern.lang import libdevice

from types_helpers import ARCHS

pytestmark = pytest.mark.usefixtures("cpu_target")


_UNARY_REF = {
    "acos": math.acos, "acosh": math.acosh, "asin": math.asin, "asinh": math.asinh, "atan": math.atan,
    "atanh": math.atanh, "cbrt": np.cbrt, "ceil": math.ceil, "cos": math.cos, "cosh": math.cosh,
    "erf": math.erf, "erfc": math.erfc, "exp": math.exp, "exp2": np.exp2, "exp10": lambda x: 10.0 ** x,
    "expm1": math.expm1, "fabs": math.fabs, "floor": math.floor, "lgamma": math.lgamma, "log": math.log,
    "log10": math.log10, "log1p": math.log1p, "log2": math.log2, "rint": np.rint, "nearbyint": np.rint,
    "round": lambda x: math.copysign(math.floor(abs(x) + 0.5), x), "rsqrt": lambda x: 1 / math.sqrt(x),
    "rcbrt": lambda x: 1 / np.cbrt(x), "sin": math.sin, "sinh": math.sinh, "sqrt": math.sqrt, "tan": math.tan,
    "tanh": math.tanh, "tgamma": math.gamma, "trunc": math.trunc, "logb": lambda x: math.frexp(x)[1] - 1,
}


_ARG = {"acosh": 1.75, "lgamma": 2.5, "tgamma": 2.5, "round": 2.5, "rint": 2.5, "nearbyint": 3.5}


def _kernel_calling(names):
    """A kernel writing ``libdevice.<name>(x[k])`` of the k-th name to out[k] (generated source)."""
    body = "".join(f"    out[{k}] = libdevice.{n}(x[{k}])\n" for k, n in enumerate(names))
    return cuda.jit(define("k", f"def k(out, x):\n{body}", {"libdevice": libdevice}))


@pytest.mark.parametrize("suffix, dtype, rtol", [("", np.float64, 1e-14), ("f", np.float32, 2e-6)])
def test_libdevice_unary_float_functions(suffix, dtype, rtol):
    names = sorted(_UNARY_REF)
    x = np.array([_ARG.get(n, 0.625) for n in names], dtype)
    out = np.zeros(len(names), dtype)
    _kernel_calling([n + suffix for n in names])[1, 1](out, x)
    want = np.array([_UNARY_REF[n](float(v)) for n, v in zip(names, x)], dtype)
    np.testing.assert_allclose(out, want, rtol=rtol, err_msg=str(names))


def test_libdevice_binary_and_tuple_functions():
    @cuda.jit
    def k(out, ints, x, y):
        out[0] = libdevice.atan2(x, y)
        out[1] = libdevice.fdim(x, y)
        out[2] = libdevice.fdim(y, x)
        out[3] = libdevice.fmaxf(np.float32(np.nan), np.float32(y))  # ignores the NaN
        out[4] = libdevice.fmin(x, y)
        out[5] = libdevice.hypot(x, y)
        out[6] = libdevice.remainder(x, y)
        out[7] = libdevice.fma(x, y, 1.0)
        out[8] = libdevice.powi(x, 3)
        out[9] = libdevice.ldexp(x, 4)
        f, e = libdevice.frexp(x)
        out[10] = f
        ints[0] = e
        s, c = libdevice.sincosf(np.float32(x))
        out[11] = s
        out[12] = c
        fr, whole = libdevice.modf(-x * 3)
        out[13] = fr
        out[14] = whole
        ints[1] = libdevice.ilogb(x * 1024)
        ints[2] = libdevice.isnand(x - x + np.nan)
        ints[3] = libdevice.signbitd(-0.0)
        out[15] = libdevice.saturatef(np.float32(1.5))

    x, y = 2.75, 0.5
    out, ints = np.zeros(16), np.zeros(4, np.int32)
    k[1, 1](out, ints, x, y)
    s32, c32 = np.sin(np.float32(x)), np.cos(np.float32(x))
    want = [math.atan2(x, y), x - y, 0.0, y, y, math.hypot(x, y), math.remainder(x, y), x * y + 1, x ** 3,
            x * 16, math.frexp(x)[0], s32, c32, *math.modf(-x * 3), 1.0]
    np.testing.assert_allclose(out, want, rtol=2e-7)
    assert ints.tolist() == [math.frexp(x)[1], math.frexp(x * 1024)[1] - 1, 1, 1]


def test_libdevice_integer_functions():
    @cuda.jit
    def k(out, a, b, c):
        out[0] = libdevice.sad(a, b, c)
        out[1] = libdevice.mulhi(a, b)
        out[2] = libdevice.umulhi(a, b)
        out[3] = libdevice.hadd(a, b)
        out[4] = libdevice.rhadd(a, b)
        out[5] = libdevice.umin(a, b)
        out[6] = libdevice.brev(c)
        out[7] = libdevice.clz(c)
        out[8] = libdevice.ffs(c)
        out[9] = libdevice.popcll(np.int64(-1))
        out[10] = libdevice.byte_perm(0x33221100, 0x77665544, 0x7531)
        out[11] = libdevice.llabs(np.int64(-5))

    a, b, c = -7, 2_000_000_000, 0x00F0
    out = np.zeros(12, np.int64)
    k[1, 1](out, a, b, c)
    u = lambda v: v & 0xFFFFFFFF  # noqa: E731
    s32 = lambda v: v - (1 << 32) if v & (1 << 31) else v  # noqa: E731
    want = [abs(a - b) + c, s32(((a * b) >> 32) & 0xFFFFFFFF), s32((u(a) * u(b)) >> 32), (a + b) >> 1,
            (a + b + 1) >> 1, s32(min(u(a), u(b))), s32(int(f"{c:032b}"[::-1], 2)), 24, 5, 64, 0x77553311, 5]
    assert out.tolist() == want


def test_libdevice_conversions():
    @cuda.jit
    def k(out, x):
        out[0] = libdevice.double2int_rn(x)
        out[1] = libdevice.double2int_rz(x)
        out[2] = libdevice.double2int_rd(x)
        out[3] = libdevice.double2int_ru(x)
        out[4] = libdevice.float2ll_rn(np.float32(-x))
        out[5] = libdevice.double2ll_rd(-x)

    out = np.zeros(6, np.int64)
    k[1, 1](out, 2.5)
    assert out.tolist() == [2, 2, 2, 3, -2, -3]


def test_libdevice_functions_programs_called_that_were_missing():
    @cuda.jit
    def k(out, ints, x, y):
        out[0] = libdevice.fdividef(np.float32(x), np.float32(y))
        out[1] = libdevice.rhypot(x, y)
        out[2] = libdevice.rhypotf(np.float32(x), np.float32(y))
        out[3] = libdevice.norm3d(x, y, 2.0)
        out[4] = libdevice.norm3df(np.float32(x), np.float32(y), np.float32(2))
        out[5] = libdevice.rnorm3d(x, y, 2.0)
        out[6] = libdevice.rnorm3df(np.float32(x), np.float32(y), np.float32(2))
        ints[0] = libdevice.llrint(x)
        ints[1] = libdevice.llrintf(np.float32(-x))
        ints[2] = libdevice.llround(x)
        ints[3] = libdevice.llroundf(np.float32(-x))
        ints[4] = libdevice.mul24(0x7FFFFF, -3)
        ints[5] = libdevice.mul24(0x1800003, 5)  # bits above 24 ignored; 0x800003 is negative
        ints[6] = libdevice.umul24(0x1FFFFFF, 0xFFFFFF)

    x, y = 2.5, 0.5
    out, ints = np.zeros(7), np.zeros(7, np.int64)
    k[1, 1](out, ints, x, y)
    n3 = math.sqrt(x * x + y * y + 4)
    np.testing.assert_allclose(out, [x / y, 1 / math.hypot(x, y), 1 / math.hypot(x, y), n3, n3, 1 / n3, 1 / n3],
                               rtol=2e-7)
    low32 = lambda v: ((v + (1 << 31)) % (1 << 32)) - (1 << 31)  # noqa: E731
    assert ints.tolist() == [2, -2, 3, -3, 0x7FFFFF * -3, (0x800003 - (1 << 24)) * 5, low32(0xFFFFFF * 0xFFFFFF)]


def test_libdevice_is_a_lazy_attribute():
    assert cuda.libdevice is libdevice and libdevice.sinf.py_func.__name__ == "sinf"


@pytest.mark.parametrize("arch", ARCHS)
def test_libdevice_compiles_for_amdgpu(arch):
    def k(out, x):
        s, c = libdevice.sincos(x[0])
        out[0] = libdevice.expf(np.float32(s)) + libdevice.erfc(c) + libdevice.sad(1, 5, 2)

    ck = cuda.compile(k, "void(float64[::1], float64[::1])", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"
