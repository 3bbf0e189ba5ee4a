"""``numba.cuda.libdevice`` for pykern: the CUDA libdevice functions that map onto pykern's
math, bit and conversion operations, under their numba names and signatures (``sin`` is
float64, ``sinf`` float32; ``sincos`` returns ``(sin, cos)``, ``frexp`` ``(fraction, exponent)``).

Each is a device function with numba's declared signature, so arguments convert as numba
converts them. On AMD GPUs the math comes from the ROCm device libraries (ocml), on the cpu
target from the same lowering as ``math``: results agree with libdevice's to its stated
accuracy, not bit for bit. Float-to-integer conversions take every rounding mode
(``double2int_rd`` is ``floor``); arithmetic takes only round-to-nearest (``dadd_rn``...).
Not here (an ``AttributeError``, as a misspelt name): arithmetic in directed rounding modes
(``dadd_rd``...), bit reinterpretations (``double_as_longlong``...), Bessel functions,
``erfinv``/``normcdfinv``-style inverses, half conversions, ``mul64hi``.

Example::

    from pykern import libdevice        # numba: from numba.cuda import libdevice

    @pykern.jit
    def k(s, c, x):
        i = pykern.grid(1)
        s[i], c[i] = libdevice.sincos(x[i])
"""

from __future__ import annotations

import math

import numpy as np

from pykern.dispatch.dispatcher import jit
from pykern.frontend.types import float32, float64, int32, int64, uint32, uint64
from pykern.lang.stubs import brev as _brev, cbrt as _cbrt_stub, clz as _clz, ffs as _ffs, fma as _fma_stub, popc as _popc

# the builtins this module's own abs/min/max/round shadow
_abs, _min, _max = abs, min, max


@jit(device=True)
def _exp10(x):
    return 10.0 ** x


@jit(device=True)
def _round(x):
    # half away from zero, exactly (floor(x + 0.5) is wrong for 0.49999999999999994)
    t = math.trunc(x)
    if _abs(x - t) >= 0.5:
        t += math.copysign(1.0, x)
    return t


@jit(device=True)
def _logb(x):
    if x != x or _abs(x) == math.inf:
        return _abs(x)
    if x == 0:
        return -math.inf
    return math.frexp(x)[1] - 1


@jit("float64(float64)", device=True)
def acos(x):
    return math.acos(x)


@jit("float32(float32)", device=True)
def acosf(x):
    return math.acos(x)


@jit("float64(float64)", device=True)
def acosh(x):
    return math.acosh(x)


@jit("float32(float32)", device=True)
def acoshf(x):
    return math.acosh(x)


@jit("float64(float64)", device=True)
def asin(x):
    return math.asin(x)


@jit("float32(float32)", device=True)
def asinf(x):
    return math.asin(x)


@jit("float64(float64)", device=True)
def asinh(x):
    return math.asinh(x)


@jit("float32(float32)", device=True)
def asinhf(x):
    return math.asinh(x)


@jit("float64(float64)", device=True)
def atan(x):
    return math.atan(x)


@jit("float32(float32)", device=True)
def atanf(x):
    return math.atan(x)


@jit("float64(float64)", device=True)
def atanh(x):
    return math.atanh(x)


@jit("float32(float32)", device=True)
def atanhf(x):
    return math.atanh(x)


@jit("float64(float64)", device=True)
def cbrt(x):
    return _cbrt_stub(x)


@jit("float32(float32)", device=True)
def cbrtf(x):
    return _cbrt_stub(x)


@jit("float64(float64)", device=True)
def ceil(x):
    return math.ceil(x)


@jit("float32(float32)", device=True)
def ceilf(x):
    return math.ceil(x)


@jit("float64(float64)", device=True)
def cos(x):
    return math.cos(x)


@jit("float32(float32)", device=True)
def cosf(x):
    return math.cos(x)


@jit("float64(float64)", device=True)
def cosh(x):
    return math.cosh(x)


@jit("float32(float32)", device=True)
def coshf(x):
    return math.cosh(x)


@jit("float64(float64)", device=True)
def erf(x):
    return math.erf(x)


@jit("float32(float32)", device=True)
def erff(x):
    return math.erf(x)


@jit("float64(float64)", device=True)
def erfc(x):
    return math.erfc(x)


@jit("float32(float32)", device=True)
def erfcf(x):
    return math.erfc(x)


@jit("float64(float64)", device=True)
def exp(x):
    return math.exp(x)


@jit("float32(float32)", device=True)
def expf(x):
    return math.exp(x)


@jit("float64(float64)", device=True)
def exp2(x):
    return np.exp2(x)


@jit("float32(float32)", device=True)
def exp2f(x):
    return np.exp2(x)


@jit("float64(float64)", device=True)
def exp10(x):
    return _exp10(x)


@jit("float32(float32)", device=True)
def exp10f(x):
    return _exp10(x)


@jit("float64(float64)", device=True)
def expm1(x):
    return math.expm1(x)


@jit("float32(float32)", device=True)
def expm1f(x):
    return math.expm1(x)


@jit("float64(float64)", device=True)
def fabs(x):
    return math.fabs(x)


@jit("float32(float32)", device=True)
def fabsf(x):
    return math.fabs(x)


@jit("float64(float64)", device=True)
def floor(x):
    return math.floor(x)


@jit("float32(float32)", device=True)
def floorf(x):
    return math.floor(x)


@jit("float64(float64)", device=True)
def lgamma(x):
    return math.lgamma(x)


@jit("float32(float32)", device=True)
def lgammaf(x):
    return math.lgamma(x)


@jit("float64(float64)", device=True)
def log(x):
    return math.log(x)


@jit("float32(float32)", device=True)
def logf(x):
    return math.log(x)


@jit("float64(float64)", device=True)
def log10(x):
    return math.log10(x)


@jit("float32(float32)", device=True)
def log10f(x):
    return math.log10(x)


@jit("float64(float64)", device=True)
def log1p(x):
    return math.log1p(x)


@jit("float32(float32)", device=True)
def log1pf(x):
    return math.log1p(x)


@jit("float64(float64)", device=True)
def log2(x):
    return math.log2(x)


@jit("float32(float32)", device=True)
def log2f(x):
    return math.log2(x)


@jit("float64(float64)", device=True)
def rint(x):
    return np.rint(x)


@jit("float32(float32)", device=True)
def rintf(x):
    return np.rint(x)


@jit("float64(float64)", device=True)
def nearbyint(x):
    return np.rint(x)


@jit("float32(float32)", device=True)
def nearbyintf(x):
    return np.rint(x)


@jit("float64(float64)", device=True)
def round(x):
    return _round(x)


@jit("float32(float32)", device=True)
def roundf(x):
    return _round(x)


@jit("float64(float64)", device=True)
def rsqrt(x):
    return 1 / math.sqrt(x)


@jit("float32(float32)", device=True)
def rsqrtf(x):
    return 1 / math.sqrt(x)


@jit("float64(float64)", device=True)
def rcbrt(x):
    return 1 / _cbrt_stub(x)


@jit("float32(float32)", device=True)
def rcbrtf(x):
    return 1 / _cbrt_stub(x)


@jit("float64(float64)", device=True)
def sin(x):
    return math.sin(x)


@jit("float32(float32)", device=True)
def sinf(x):
    return math.sin(x)


@jit("float64(float64)", device=True)
def sinh(x):
    return math.sinh(x)


@jit("float32(float32)", device=True)
def sinhf(x):
    return math.sinh(x)


@jit("float64(float64)", device=True)
def sqrt(x):
    return math.sqrt(x)


@jit("float32(float32)", device=True)
def sqrtf(x):
    return math.sqrt(x)


@jit("float64(float64)", device=True)
def tan(x):
    return math.tan(x)


@jit("float32(float32)", device=True)
def tanf(x):
    return math.tan(x)


@jit("float64(float64)", device=True)
def tanh(x):
    return math.tanh(x)


@jit("float32(float32)", device=True)
def tanhf(x):
    return math.tanh(x)


@jit("float64(float64)", device=True)
def tgamma(x):
    return math.gamma(x)


@jit("float32(float32)", device=True)
def tgammaf(x):
    return math.gamma(x)


@jit("float64(float64)", device=True)
def trunc(x):
    return math.trunc(x)


@jit("float32(float32)", device=True)
def truncf(x):
    return math.trunc(x)


@jit("float64(float64)", device=True)
def logb(x):
    return _logb(x)


@jit("float32(float32)", device=True)
def logbf(x):
    return _logb(x)


@jit("float64(float64, float64)", device=True)
def atan2(x, y):
    return math.atan2(x, y)


@jit("float32(float32, float32)", device=True)
def atan2f(x, y):
    return math.atan2(x, y)


@jit("float64(float64, float64)", device=True)
def copysign(x, y):
    return math.copysign(x, y)


@jit("float32(float32, float32)", device=True)
def copysignf(x, y):
    return math.copysign(x, y)


@jit("float64(float64, float64)", device=True)
def fmax(x, y):
    return np.fmax(x, y)


@jit("float32(float32, float32)", device=True)
def fmaxf(x, y):
    return np.fmax(x, y)


@jit("float64(float64, float64)", device=True)
def fmin(x, y):
    return np.fmin(x, y)


@jit("float32(float32, float32)", device=True)
def fminf(x, y):
    return np.fmin(x, y)


@jit("float64(float64, float64)", device=True)
def fmod(x, y):
    return math.fmod(x, y)


@jit("float32(float32, float32)", device=True)
def fmodf(x, y):
    return math.fmod(x, y)


@jit("float64(float64, float64)", device=True)
def hypot(x, y):
    return math.hypot(x, y)


@jit("float32(float32, float32)", device=True)
def hypotf(x, y):
    return math.hypot(x, y)


@jit("float64(float64, float64)", device=True)
def nextafter(x, y):
    return math.nextafter(x, y)


@jit("float32(float32, float32)", device=True)
def nextafterf(x, y):
    return math.nextafter(x, y)


@jit("float64(float64, float64)", device=True)
def pow(x, y):
    return x ** y


@jit("float32(float32, float32)", device=True)
def powf(x, y):
    return x ** y


@jit("float64(float64, float64)", device=True)
def remainder(x, y):
    return math.remainder(x, y)


@jit("float32(float32, float32)", device=True)
def remainderf(x, y):
    return math.remainder(x, y)


@jit("float64(float64, float64)", device=True)
def fdim(x, y):
    return x - y if x > y else (x + y if x != x or y != y else x - x)


@jit("float32(float32, float32)", device=True)
def fdimf(x, y):
    return x - y if x > y else (x + y if x != x or y != y else x - x)


@jit("float64(float64, float64, float64)", device=True)
def fma(x, y, z):
    return _fma(x, y, z)


@jit("float64(float64, int32)", device=True)
def powi(x, y):
    return x ** float64(y)


@jit("float64(float64, int32)", device=True)
def ldexp(x, y):
    return math.ldexp(x, y)


@jit("float64(float64, int32)", device=True)
def scalbn(x, y):
    return math.ldexp(x, y)


@jit("Tuple(float64, int32)(float64)", device=True)
def frexp(x):
    m, e = math.frexp(x)
    return m, int32(e)


@jit("UniTuple(float64, 2)(float64)", device=True)
def modf(x):
    f, i = math.modf(x)
    return f, float64(i)


@jit("UniTuple(float64, 2)(float64)", device=True)
def sincos(x):
    return math.sin(x), math.cos(x)


@jit("int32(float64)", device=True)
def ilogb(x):
    if x == x and x != 0 and _abs(x) != math.inf:
        return int32(math.frexp(x)[1] - 1)
    return int32(-2147483648) if x == 0 else int32(2147483647)  # CUDA's FP_ILOGB0, FP_ILOGBNAN/INT_MAX


@jit("float32(float32, float32, float32)", device=True)
def fmaf(x, y, z):
    return _fma(x, y, z)


@jit("float32(float32, int32)", device=True)
def powif(x, y):
    return x ** float32(y)


@jit("float32(float32, int32)", device=True)
def ldexpf(x, y):
    return math.ldexp(x, y)


@jit("float32(float32, int32)", device=True)
def scalbnf(x, y):
    return math.ldexp(x, y)


@jit("Tuple(float32, int32)(float32)", device=True)
def frexpf(x):
    m, e = math.frexp(x)
    return m, int32(e)


@jit("UniTuple(float32, 2)(float32)", device=True)
def modff(x):
    f, i = math.modf(x)
    return f, float32(i)


@jit("UniTuple(float32, 2)(float32)", device=True)
def sincosf(x):
    return math.sin(x), math.cos(x)


@jit(device=True)
def _sincospi(x):
    # x = n/2 + f with |f| <= 1/4 (exact: 2x and its nearest integer n are close), then the quadrant
    # of n picks +-sin/+-cos of pi*f -- so integers and halves give exact zeros and ones, as CUDA's
    if x != x or _abs(x) == math.inf:
        return x - x, x - x
    n = np.floor(x + x + 0.5)  # np.floor keeps the float type (math.floor is an int)
    f = x - 0.5 * n
    q = n - 4.0 * np.floor(n * 0.25)
    s = math.sin(math.pi * f)
    c = math.cos(math.pi * f)
    if q == 0:
        return s, c
    if q == 1:
        return c, -s
    if q == 2:
        return -s, -c
    return -c, s


@jit("UniTuple(float64, 2)(float64)", device=True)
def sincospi(x):
    return _sincospi(x)


@jit("UniTuple(float32, 2)(float32)", device=True)
def sincospif(x):
    return _sincospi(x)


@jit("float64(float64)", device=True)
def sinpi(x):
    return _sincospi(x)[0]


@jit("float32(float32)", device=True)
def sinpif(x):
    return _sincospi(x)[0]


@jit("float64(float64)", device=True)
def cospi(x):
    return _sincospi(x)[1]


@jit("float32(float32)", device=True)
def cospif(x):
    return _sincospi(x)[1]


@jit("float64(float64)", device=True)
def normcdf(x):
    return 0.5 * math.erfc(-x * 0.7071067811865476)


@jit("float32(float32)", device=True)
def normcdff(x):
    return float32(0.5) * math.erfc(-x * float32(0.70710678))


@jit("int32(float32)", device=True)
def ilogbf(x):
    if x == x and x != 0 and _abs(x) != math.inf:
        return int32(math.frexp(x)[1] - 1)
    return int32(-2147483648) if x == 0 else int32(2147483647)  # CUDA's FP_ILOGB0, FP_ILOGBNAN/INT_MAX


@jit("int32(float64)", device=True)
def isnand(x):
    return int32(x != x)


@jit("int32(float64)", device=True)
def isinfd(x):
    return int32(_abs(x) == math.inf)


@jit("int32(float64)", device=True)
def isfinited(x):
    return int32(_abs(x) < math.inf)


@jit("int32(float64)", device=True)
def signbitd(x):
    return int32(math.copysign(1.0, x) < 0)


@jit("int32(float32)", device=True)
def isnanf(x):
    return int32(x != x)


@jit("int32(float32)", device=True)
def isinff(x):
    return int32(_abs(x) == math.inf)


@jit("int32(float32)", device=True)
def finitef(x):
    return int32(_abs(x) < math.inf)


@jit("int32(float32)", device=True)
def signbitf(x):
    return int32(math.copysign(float32(1.0), x) < 0)


@jit("float32(float32)", device=True)
def saturatef(x):
    return float32(0.0) if not x > 0 else (x if x < 1 else float32(1.0))


@jit("float64(float64, float64)", device=True)
def dadd_rn(x, y):
    return x + y


@jit("float64(float64, float64)", device=True)
def dmul_rn(x, y):
    return x * y


@jit("float64(float64, float64)", device=True)
def ddiv_rn(x, y):
    return x / y


@jit("float64(float64)", device=True)
def dsqrt_rn(x):
    return math.sqrt(x)


@jit("float64(float64)", device=True)
def drcp_rn(x):
    return 1 / x


@jit("float32(float32, float32)", device=True)
def fadd_rn(x, y):
    return x + y


@jit("float32(float32, float32)", device=True)
def fmul_rn(x, y):
    return x * y


@jit("float32(float32, float32)", device=True)
def fdiv_rn(x, y):
    return x / y


@jit("float32(float32)", device=True)
def fsqrt_rn(x):
    return math.sqrt(x)


@jit("float32(float32)", device=True)
def frcp_rn(x):
    return 1 / x


@jit("float32(float32, float32)", device=True)
def fsub_rn(x, y):
    return x - y


@jit("float64(float64, float64)", device=True)
def dsub_rn(x, y):
    return x - y


@jit("float64(float64, float64, float64)", device=True)
def fma_rn(x, y, z):
    return _fma(x, y, z)


@jit("float32(float32, float32, float32)", device=True)
def fmaf_rn(x, y, z):
    return _fma(x, y, z)


@jit("float32(float32)", device=True)
def fast_sinf(x):
    return math.sin(x)


@jit("float32(float32)", device=True)
def fast_cosf(x):
    return math.cos(x)


@jit("float32(float32)", device=True)
def fast_tanf(x):
    return math.tan(x)


@jit("float32(float32)", device=True)
def fast_expf(x):
    return math.exp(x)


@jit("float32(float32)", device=True)
def fast_exp10f(x):
    return _exp10(x)


@jit("float32(float32)", device=True)
def fast_logf(x):
    return math.log(x)


@jit("float32(float32)", device=True)
def fast_log2f(x):
    return math.log2(x)


@jit("float32(float32)", device=True)
def fast_log10f(x):
    return math.log10(x)


@jit("float32(float32, float32)", device=True)
def fast_powf(x, y):
    return x ** y


@jit("float32(float32, float32)", device=True)
def fast_fdividef(x, y):
    return x / y


@jit("UniTuple(float32, 2)(float32)", device=True)
def fast_sincosf(x):
    return math.sin(x), math.cos(x)


@jit("int32(float64)", device=True)
def double2int_rn(x):
    return int32(np.rint(x))


@jit("int32(float64)", device=True)
def double2int_rz(x):
    return int32(math.trunc(x))


@jit("int32(float64)", device=True)
def double2int_rd(x):
    return int32(math.floor(x))


@jit("int32(float64)", device=True)
def double2int_ru(x):
    return int32(math.ceil(x))


@jit("int64(float64)", device=True)
def double2ll_rn(x):
    return int64(np.rint(x))


@jit("int64(float64)", device=True)
def double2ll_rz(x):
    return int64(math.trunc(x))


@jit("int64(float64)", device=True)
def double2ll_rd(x):
    return int64(math.floor(x))


@jit("int64(float64)", device=True)
def double2ll_ru(x):
    return int64(math.ceil(x))


@jit("int32(float64)", device=True)
def double2uint_rn(x):
    return int32(uint32(np.rint(x)))


@jit("int32(float64)", device=True)
def double2uint_rz(x):
    return int32(uint32(math.trunc(x)))


@jit("int32(float64)", device=True)
def double2uint_rd(x):
    return int32(uint32(math.floor(x)))


@jit("int32(float64)", device=True)
def double2uint_ru(x):
    return int32(uint32(math.ceil(x)))


@jit("int64(float64)", device=True)
def double2ull_rn(x):
    return int64(uint64(np.rint(x)))


@jit("int64(float64)", device=True)
def double2ull_rz(x):
    return int64(uint64(math.trunc(x)))


@jit("int64(float64)", device=True)
def double2ull_rd(x):
    return int64(uint64(math.floor(x)))


@jit("int64(float64)", device=True)
def double2ull_ru(x):
    return int64(uint64(math.ceil(x)))


@jit("int32(float32)", device=True)
def float2int_rn(x):
    return int32(np.rint(x))


@jit("int32(float32)", device=True)
def float2int_rz(x):
    return int32(math.trunc(x))


@jit("int32(float32)", device=True)
def float2int_rd(x):
    return int32(math.floor(x))


@jit("int32(float32)", device=True)
def float2int_ru(x):
    return int32(math.ceil(x))


@jit("int64(float32)", device=True)
def float2ll_rn(x):
    return int64(np.rint(x))


@jit("int64(float32)", device=True)
def float2ll_rz(x):
    return int64(math.trunc(x))


@jit("int64(float32)", device=True)
def float2ll_rd(x):
    return int64(math.floor(x))


@jit("int64(float32)", device=True)
def float2ll_ru(x):
    return int64(math.ceil(x))


@jit("int32(float32)", device=True)
def float2uint_rn(x):
    return int32(uint32(np.rint(x)))


@jit("int32(float32)", device=True)
def float2uint_rz(x):
    return int32(uint32(math.trunc(x)))


@jit("int32(float32)", device=True)
def float2uint_rd(x):
    return int32(uint32(math.floor(x)))


@jit("int32(float32)", device=True)
def float2uint_ru(x):
    return int32(uint32(math.ceil(x)))


@jit("int64(float32)", device=True)
def float2ull_rn(x):
    return int64(uint64(np.rint(x)))


@jit("int64(float32)", device=True)
def float2ull_rz(x):
    return int64(uint64(math.trunc(x)))


@jit("int64(float32)", device=True)
def float2ull_rd(x):
    return int64(uint64(math.floor(x)))


@jit("int64(float32)", device=True)
def float2ull_ru(x):
    return int64(uint64(math.ceil(x)))


@jit("float32(float64)", device=True)
def double2float_rn(x):
    return float32(x)


@jit("float64(int32)", device=True)
def int2double_rn(x):
    return float64(x)


@jit("float32(int32)", device=True)
def int2float_rn(x):
    return float32(x)


@jit("float64(int32)", device=True)
def uint2double_rn(x):
    return float64(uint32(x))


@jit("float32(int32)", device=True)
def uint2float_rn(x):
    return float32(uint32(x))


@jit("float64(int64)", device=True)
def ll2double_rn(x):
    return float64(x)


@jit("float32(int64)", device=True)
def ll2float_rn(x):
    return float32(x)


@jit("float64(int64)", device=True)
def ull2double_rn(x):
    return float64(uint64(x))


@jit("float32(int64)", device=True)
def ull2float_rn(x):
    return float32(uint64(x))


@jit(device=True)
def _fma(x, y, z):
    return _fma_stub(x, y, z)


@jit("int32(int32)", device=True)
def abs(x):
    return _abs(x)


@jit("int64(int64)", device=True)
def llabs(x):
    return _abs(x)


@jit("int32(int32)", device=True)
def brev(x):
    return int32(_brev(uint32(x)))


@jit("int64(int64)", device=True)
def brevll(x):
    return int64(_brev(uint64(x)))


@jit("int32(int32)", device=True)
def clz(x):
    return int32(_clz(x))


@jit("int32(int64)", device=True)
def clzll(x):
    return int32(_clz(x))


@jit("int32(int32)", device=True)
def ffs(x):
    return int32(_ffs(x))


@jit("int32(int64)", device=True)
def ffsll(x):
    return int32(_ffs(x))


@jit("int32(int32)", device=True)
def popc(x):
    return int32(_popc(uint32(x)))


@jit("int32(int64)", device=True)
def popcll(x):
    return int32(_popc(uint64(x)))


@jit("int32(int32, int32)", device=True)
def min(x, y):
    return _min(x, y)


@jit("int32(int32, int32)", device=True)
def max(x, y):
    return _max(x, y)


@jit("int64(int64, int64)", device=True)
def llmin(x, y):
    return _min(x, y)


@jit("int64(int64, int64)", device=True)
def llmax(x, y):
    return _max(x, y)


@jit("int32(int32, int32)", device=True)
def umin(x, y):
    return int32(_min(uint32(x), uint32(y)))


@jit("int32(int32, int32)", device=True)
def umax(x, y):
    return int32(_max(uint32(x), uint32(y)))


@jit("int64(int64, int64)", device=True)
def ullmin(x, y):
    return int64(_min(uint64(x), uint64(y)))


@jit("int64(int64, int64)", device=True)
def ullmax(x, y):
    return int64(_max(uint64(x), uint64(y)))


@jit("int32(int32, int32)", device=True)
def hadd(x, y):
    return int32((int64(x) + int64(y)) >> 1)


@jit("int32(int32, int32)", device=True)
def rhadd(x, y):
    return int32((int64(x) + int64(y) + 1) >> 1)


@jit("int32(int32, int32)", device=True)
def uhadd(x, y):
    return int32((uint64(uint32(x)) + uint64(uint32(y))) >> uint64(1))


@jit("int32(int32, int32)", device=True)
def urhadd(x, y):
    return int32((uint64(uint32(x)) + uint64(uint32(y)) + uint64(1)) >> uint64(1))


@jit("int32(int32, int32)", device=True)
def mulhi(x, y):
    return int32((int64(x) * int64(y)) >> 32)


@jit("int32(int32, int32)", device=True)
def umulhi(x, y):
    return int32((uint64(uint32(x)) * uint64(uint32(y))) >> uint64(32))


@jit("int32(int32, int32, int32)", device=True)
def sad(x, y, z):
    return int32(_abs(int64(x) - int64(y)) + int64(uint32(z)))


@jit("int32(int32, int32, int32)", device=True)
def usad(x, y, z):
    return int32(_abs(int64(uint32(x)) - int64(uint32(y))) + int64(uint32(z)))


@jit("int32(int32, int32, int32)", device=True)
def byte_perm(x, y, s):
    v = (uint64(uint32(y)) << uint64(32)) | uint64(uint32(x))
    r = uint64(0)
    for i in range(4):
        sel = (uint64(uint32(s)) >> uint64(4 * i)) & uint64(7)
        r |= ((v >> (uint64(8) * sel)) & uint64(0xFF)) << uint64(8 * i)
    return int32(r)


# names found missing in numba.cuda programs (numba declares every libdevice function)
@jit("float32(float32, float32)", device=True)
def fdividef(x, y):
    return x / y


@jit("int64(float64)", device=True)
def llrint(x):
    return int64(np.rint(x))


@jit("int64(float32)", device=True)
def llrintf(x):
    return int64(np.rint(x))


@jit("int64(float64)", device=True)
def llround(x):
    return int64(_round(x))


@jit("int64(float32)", device=True)
def llroundf(x):
    return int64(_round(x))


@jit("float64(float64, float64)", device=True)
def rhypot(x, y):
    return 1 / math.hypot(x, y)


@jit("float32(float32, float32)", device=True)
def rhypotf(x, y):
    return 1 / math.hypot(x, y)


@jit("float64(float64, float64, float64)", device=True)
def norm3d(a, b, c):
    return math.sqrt(a * a + b * b + c * c)


@jit("float32(float32, float32, float32)", device=True)
def norm3df(a, b, c):
    return math.sqrt(a * a + b * b + c * c)


@jit("float64(float64, float64, float64)", device=True)
def rnorm3d(a, b, c):
    return 1 / math.sqrt(a * a + b * b + c * c)


@jit("float32(float32, float32, float32)", device=True)
def rnorm3df(a, b, c):
    return 1 / math.sqrt(a * a + b * b + c * c)


@jit("int32(int32, int32)", device=True)
def mul24(x, y):
    # the low 24 bits of each, as signed 24-bit numbers; the product's low 32 bits
    sx = int64((x & 0xFFFFFF) ^ 0x800000) - 0x800000
    sy = int64((y & 0xFFFFFF) ^ 0x800000) - 0x800000
    return int32(sx * sy)


@jit("int32(int32, int32)", device=True)
def umul24(x, y):
    return int32(uint64(uint32(x) & uint32(0xFFFFFF)) * uint64(uint32(y) & uint32(0xFFFFFF)))
