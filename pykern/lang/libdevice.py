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

The functions are the rows of ``FUNCTIONS`` (name, numba's signature, the expression the
function returns, a one-line description), defined from them once when the module loads;
the few that need statements call the hand-written helpers below.

Example::

    from pykern import libdevice        # numba: from numba.cuda import libdevice

    @pykern.jit
    def k(s, c, x):
        i = pykern.grid(1)
        s[i], c[i] = libdevice.sincos(x[i])

    [(f.name, f.signature, f.doc) for f in libdevice.FUNCTIONS][0]
    # ('acos', 'float64(float64)', 'arc cosine')
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pykern.dispatch.dispatcher import jit
from pykern.dispatch.generated import define_functions
from pykern.frontend.types import float32, float64, int32, int64, uint32, uint64  # noqa: F401  (read by the rows)
from pykern.lang import stubs as cuda  # noqa: F401  (read by the rows)

# the builtins this module's own abs/min/max/round shadow
_abs, _min, _max = abs, min, max


# ---------------------------------------------------------------- the bodies that need statements


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


@jit(device=True)
def _ilogb(x):
    if x == x and x != 0 and _abs(x) != math.inf:
        return int32(math.frexp(x)[1] - 1)
    return int32(-2147483648) if x == 0 else int32(2147483647)  # CUDA's FP_ILOGB0, FP_ILOGBNAN/INT_MAX


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


@jit(device=True)
def _byte_perm(x, y, s):
    v = (uint64(uint32(y)) << uint64(32)) | uint64(uint32(x))
    r = uint64(0)
    for i in range(4):
        sel = (uint64(uint32(s)) >> uint64(4 * i)) & uint64(7)
        r |= ((v >> (uint64(8) * sel)) & uint64(0xFF)) << uint64(8 * i)
    return int32(r)


@jit(device=True)
def _mul24(x, y):
    # the low 24 bits of each, as signed 24-bit numbers; the product's low 32 bits
    sx = int64((x & 0xFFFFFF) ^ 0x800000) - 0x800000
    sy = int64((y & 0xFFFFFF) ^ 0x800000) - 0x800000
    return int32(sx * sy)


# ---------------------------------------------------------------- the table


@dataclass(frozen=True)
class Function:
    """One libdevice function: ``name(params) -> body`` with numba's ``signature``."""

    name: str
    signature: str
    body: str  # the expression returned, of the parameters
    doc: str  # one line
    params: tuple = ()  # default: x, y, z as many as the signature has

    @property
    def source(self) -> str:
        params = self.params or ("x", "y", "z")[: _arity(self.signature)]
        return f'def {self.name}({", ".join(params)}):\n    """{self.doc}"""\n    return {self.body}\n\n\n'


def _arity(signature: str) -> int:
    inner = signature[signature.rindex("(") + 1: -1]
    return len(inner.split(", ")) if inner else 0


_F64, _F32 = {"f": "float64"}, {"f": "float32"}
_I32, _I64 = {"i": "int32", "u": "uint32"}, {"i": "int64", "u": "uint64"}


def _each(variants, signature, body, doc, params=()):
    """One row per ``(name, types)`` of ``variants``: ``{f}``, ``{i}``, ``{u}`` in the signature and
    the body name the variant's float, integer and unsigned types."""
    return [Function(name, signature.format(**t), body.format(**t), doc, params) for name, t in variants]


def _floats(names, signature, body, doc, params=()):
    """A float64 and a float32 function: ``"acos"`` is acos and acosf, ``("dadd_rn", "fadd_rn")`` those two."""
    f64, f32 = (names, names + "f") if isinstance(names, str) else names
    return _each([(f64, _F64), (f32, _F32)], signature, body, doc, params)


def _ints(names, signature, body, doc):
    """An int32 and an int64 function (``("brev", "brevll")``)."""
    return _each(list(zip(names, (_I32, _I64))), signature, body, doc)


_UNARY = "{f}({f})"
_BINARY = "{f}({f}, {f})"
_TERNARY = "{f}({f}, {f}, {f})"

_MATH = [
    _floats("acos", _UNARY, "math.acos(x)", "arc cosine"),
    _floats("acosh", _UNARY, "math.acosh(x)", "inverse hyperbolic cosine"),
    _floats("asin", _UNARY, "math.asin(x)", "arc sine"),
    _floats("asinh", _UNARY, "math.asinh(x)", "inverse hyperbolic sine"),
    _floats("atan", _UNARY, "math.atan(x)", "arc tangent"),
    _floats("atanh", _UNARY, "math.atanh(x)", "inverse hyperbolic tangent"),
    _floats("cbrt", _UNARY, "cuda.cbrt(x)", "cube root"),
    _floats("ceil", _UNARY, "math.ceil(x)", "smallest integer not below x"),
    _floats("cos", _UNARY, "math.cos(x)", "cosine"),
    _floats("cosh", _UNARY, "math.cosh(x)", "hyperbolic cosine"),
    _floats("erf", _UNARY, "math.erf(x)", "error function"),
    _floats("erfc", _UNARY, "math.erfc(x)", "complementary error function"),
    _floats("exp", _UNARY, "math.exp(x)", "e to the x"),
    _floats("exp2", _UNARY, "np.exp2(x)", "2 to the x"),
    _floats("exp10", _UNARY, "10.0 ** x", "10 to the x"),
    _floats("expm1", _UNARY, "math.expm1(x)", "e to the x, minus 1"),
    _floats("fabs", _UNARY, "math.fabs(x)", "absolute value"),
    _floats("floor", _UNARY, "math.floor(x)", "largest integer not above x"),
    _floats("lgamma", _UNARY, "math.lgamma(x)", "natural logarithm of the absolute value of the gamma function"),
    _floats("log", _UNARY, "math.log(x)", "natural logarithm"),
    _floats("log10", _UNARY, "math.log10(x)", "base-10 logarithm"),
    _floats("log1p", _UNARY, "math.log1p(x)", "natural logarithm of 1 + x"),
    _floats("log2", _UNARY, "math.log2(x)", "base-2 logarithm"),
    _floats("rint", _UNARY, "np.rint(x)", "x rounded to an integer, halves to even"),
    _floats("nearbyint", _UNARY, "np.rint(x)", "x rounded to an integer, halves to even"),
    _floats("round", _UNARY, "_round(x)", "x rounded to an integer, halves away from zero"),
    _floats("rsqrt", _UNARY, "1 / math.sqrt(x)", "1 / sqrt(x)"),
    _floats("rcbrt", _UNARY, "1 / cuda.cbrt(x)", "1 / cbrt(x)"),
    _floats("sin", _UNARY, "math.sin(x)", "sine"),
    _floats("sinh", _UNARY, "math.sinh(x)", "hyperbolic sine"),
    _floats("sqrt", _UNARY, "math.sqrt(x)", "square root"),
    _floats("tan", _UNARY, "math.tan(x)", "tangent"),
    _floats("tanh", _UNARY, "math.tanh(x)", "hyperbolic tangent"),
    _floats("tgamma", _UNARY, "math.gamma(x)", "gamma function"),
    _floats("trunc", _UNARY, "math.trunc(x)", "x rounded toward zero"),
    _floats("logb", _UNARY, "_logb(x)", "the exponent of x, as a float"),
    _floats("sinpi", _UNARY, "_sincospi(x)[0]", "sin(pi * x), exact at integers and halves"),
    _floats("cospi", _UNARY, "_sincospi(x)[1]", "cos(pi * x), exact at integers and halves"),
    _floats("normcdf", _UNARY, "{f}(0.5) * math.erfc(-x * {f}(0.7071067811865476))",
            "the standard normal cumulative distribution function"),
    _floats("atan2", _BINARY, "math.atan2(x, y)", "arc tangent of x / y, in the quadrant of (y, x)"),
    _floats("copysign", _BINARY, "math.copysign(x, y)", "x's magnitude with y's sign"),
    _floats("fmax", _BINARY, "np.fmax(x, y)", "the larger of x and y (a NaN is ignored)"),
    _floats("fmin", _BINARY, "np.fmin(x, y)", "the smaller of x and y (a NaN is ignored)"),
    _floats("fmod", _BINARY, "math.fmod(x, y)", "remainder of x / y, x's sign"),
    _floats("hypot", _BINARY, "math.hypot(x, y)", "sqrt(x * x + y * y), without overflow"),
    _floats("rhypot", _BINARY, "1 / math.hypot(x, y)", "1 / hypot(x, y)"),
    _floats("nextafter", _BINARY, "math.nextafter(x, y)", "the next float after x toward y"),
    _floats("pow", _BINARY, "x ** y", "x to the y"),
    _floats("remainder", _BINARY, "math.remainder(x, y)", "x - n * y, n the integer nearest x / y"),
    _floats("fdim", _BINARY, "x - y if x > y else (x + y if x != x or y != y else x - x)",
            "x - y where positive, else zero"),
    _floats("fma", _TERNARY, "cuda.fma(x, y, z)", "x * y + z, rounded once"),
    _floats("norm3d", _TERNARY, "math.sqrt(a * a + b * b + c * c)", "length of the vector (a, b, c)",
            ("a", "b", "c")),
    _floats("rnorm3d", _TERNARY, "1 / math.sqrt(a * a + b * b + c * c)", "1 / norm3d(a, b, c)", ("a", "b", "c")),
    _floats("powi", "{f}({f}, int32)", "x ** {f}(y)", "x to the integer y"),
    _floats("ldexp", "{f}({f}, int32)", "math.ldexp(x, y)", "x * 2 ** y"),
    _floats("scalbn", "{f}({f}, int32)", "math.ldexp(x, y)", "x * 2 ** y"),
    _floats("frexp", "Tuple({f}, int32)({f})", "math.frexp(x)", "(m, e) with x == m * 2 ** e, 0.5 <= |m| < 1"),
    _floats("modf", "UniTuple({f}, 2)({f})", "math.modf(x)", "(fractional part, integral part) of x"),
    _floats("sincos", "UniTuple({f}, 2)({f})", "(math.sin(x), math.cos(x))", "(sin(x), cos(x))"),
    _floats("sincospi", "UniTuple({f}, 2)({f})", "_sincospi(x)", "(sinpi(x), cospi(x))"),
    _floats("ilogb", "int32({f})", "_ilogb(x)", "the exponent of x, as an int32"),
    _floats(("isnand", "isnanf"), "int32({f})", "int32(x != x)", "1 if x is NaN, else 0"),
    _floats(("isinfd", "isinff"), "int32({f})", "int32(_abs(x) == math.inf)", "1 if x is infinite, else 0"),
    _floats(("isfinited", "finitef"), "int32({f})", "int32(_abs(x) < math.inf)", "1 if x is finite, else 0"),
    _floats(("signbitd", "signbitf"), "int32({f})", "int32(math.copysign({f}(1.0), x) < 0)",
            "1 if x's sign bit is set (-0.0 too), else 0"),
    _floats("llrint", "int64({f})", "int64(np.rint(x))", "x rounded to an int64, halves to even"),
    _floats("llround", "int64({f})", "int64(_round(x))", "x rounded to an int64, halves away from zero"),
    [Function("saturatef", "float32(float32)", "float32(0.0) if not x > 0 else (x if x < 1 else float32(1.0))",
              "x clamped to [0, 1] (NaN: 0)")],
]

#: round-to-nearest arithmetic: pykern's (and IEEE's) default rounding
_ROUNDED = [
    _floats(("dadd_rn", "fadd_rn"), _BINARY, "x + y", "x + y, rounded to nearest"),
    _floats(("dsub_rn", "fsub_rn"), _BINARY, "x - y", "x - y, rounded to nearest"),
    _floats(("dmul_rn", "fmul_rn"), _BINARY, "x * y", "x * y, rounded to nearest"),
    _floats(("ddiv_rn", "fdiv_rn"), _BINARY, "x / y", "x / y, rounded to nearest"),
    _floats(("dsqrt_rn", "fsqrt_rn"), _UNARY, "math.sqrt(x)", "sqrt(x), rounded to nearest"),
    _floats(("drcp_rn", "frcp_rn"), _UNARY, "1 / x", "1 / x, rounded to nearest"),
    _floats(("fma_rn", "fmaf_rn"), _TERNARY, "cuda.fma(x, y, z)", "x * y + z, rounded once to nearest"),
    [Function("fdividef", "float32(float32, float32)", "x / y", "x / y")],
]

#: CUDA's fast float32 approximations, computed as the accurate functions
_FAST = [
    [Function(name, signature, body, f"{doc} (float32; as accurate as the plain function here)")
     for name, signature, body, doc in (
         ("fast_sinf", "float32(float32)", "math.sin(x)", "sine"),
         ("fast_cosf", "float32(float32)", "math.cos(x)", "cosine"),
         ("fast_tanf", "float32(float32)", "math.tan(x)", "tangent"),
         ("fast_expf", "float32(float32)", "math.exp(x)", "e to the x"),
         ("fast_exp10f", "float32(float32)", "10.0 ** x", "10 to the x"),
         ("fast_logf", "float32(float32)", "math.log(x)", "natural logarithm"),
         ("fast_log2f", "float32(float32)", "math.log2(x)", "base-2 logarithm"),
         ("fast_log10f", "float32(float32)", "math.log10(x)", "base-10 logarithm"),
         ("fast_powf", "float32(float32, float32)", "x ** y", "x to the y"),
         ("fast_fdividef", "float32(float32, float32)", "x / y", "x / y"),
         ("fast_sincosf", "UniTuple(float32, 2)(float32)", "(math.sin(x), math.cos(x))", "(sin(x), cos(x))"),
     )],
]


def _conversions():
    """Float -> integer in the four rounding modes (libdevice returns unsigned results in
    int32/int64, as numba declares them), integer -> float, double -> float."""
    rounding = {"rn": ("np.rint(x)", "to nearest, halves to even"), "rz": ("math.trunc(x)", "toward zero"),
                "rd": ("math.floor(x)", "down"), "ru": ("math.ceil(x)", "up")}
    to_int = {"int": ("int32", "int32({})", "an int32"), "ll": ("int64", "int64({})", "an int64"),
              "uint": ("int32", "int32(uint32({}))", "a uint32 (in an int32)"),
              "ull": ("int64", "int64(uint64({}))", "a uint64 (in an int64)")}
    rows = []
    for src, ft in (("double", "float64"), ("float", "float32")):
        for dst, (it, wrap, what) in to_int.items():
            for mode, (expr, how) in rounding.items():
                rows.append(Function(f"{src}2{dst}_{mode}", f"{it}({ft})", wrap.format(expr), f"x as {what}, rounded {how}"))
    for src, it, view in (("int", "int32", "x"), ("uint", "int32", "uint32(x)"), ("ll", "int64", "x"),
                          ("ull", "int64", "uint64(x)")):
        for dst, ft in (("double", "float64"), ("float", "float32")):
            rows.append(Function(f"{src}2{dst}_rn", f"{ft}({it})", f"{ft}({view})",
                                 f"the {src} x as a {dst}, rounded to nearest"))
    rows.append(Function("double2float_rn", "float32(float64)", "float32(x)", "x as a float, rounded to nearest"))
    return [rows]


_INTEGERS = [
    _ints(("abs", "llabs"), "{i}({i})", "_abs(x)", "absolute value"),
    _ints(("brev", "brevll"), "{i}({i})", "{i}(cuda.brev({u}(x)))", "x's bits reversed"),
    _ints(("clz", "clzll"), "int32({i})", "int32(cuda.clz(x))", "the number of leading zero bits"),
    _ints(("ffs", "ffsll"), "int32({i})", "int32(cuda.ffs(x))", "the position of the lowest set bit (1-based; 0: none)"),
    _ints(("popc", "popcll"), "int32({i})", "int32(cuda.popc({u}(x)))", "the number of set bits"),
    _ints(("min", "llmin"), "{i}({i}, {i})", "_min(x, y)", "the smaller of x and y"),
    _ints(("max", "llmax"), "{i}({i}, {i})", "_max(x, y)", "the larger of x and y"),
    _ints(("umin", "ullmin"), "{i}({i}, {i})", "{i}(_min({u}(x), {u}(y)))", "the smaller of x and y as unsigned"),
    _ints(("umax", "ullmax"), "{i}({i}, {i})", "{i}(_max({u}(x), {u}(y)))", "the larger of x and y as unsigned"),
    [Function(name, signature, body, doc, params) for name, signature, body, doc, params in (
        ("hadd", "int32(int32, int32)", "int32((int64(x) + int64(y)) >> 1)", "(x + y) >> 1 without overflow", ()),
        ("rhadd", "int32(int32, int32)", "int32((int64(x) + int64(y) + 1) >> 1)",
         "(x + y + 1) >> 1 without overflow", ()),
        ("uhadd", "int32(int32, int32)", "int32((uint64(uint32(x)) + uint64(uint32(y))) >> uint64(1))",
         "(x + y) >> 1 of unsigned x, y without overflow", ()),
        ("urhadd", "int32(int32, int32)", "int32((uint64(uint32(x)) + uint64(uint32(y)) + uint64(1)) >> uint64(1))",
         "(x + y + 1) >> 1 of unsigned x, y without overflow", ()),
        ("mulhi", "int32(int32, int32)", "int32((int64(x) * int64(y)) >> 32)", "the high 32 bits of x * y", ()),
        ("umulhi", "int32(int32, int32)", "int32((uint64(uint32(x)) * uint64(uint32(y))) >> uint64(32))",
         "the high 32 bits of x * y, unsigned", ()),
        ("sad", "int32(int32, int32, int32)", "int32(_abs(int64(x) - int64(y)) + int64(uint32(z)))",
         "|x - y| + z", ()),
        ("usad", "int32(int32, int32, int32)", "int32(_abs(int64(uint32(x)) - int64(uint32(y))) + int64(uint32(z)))",
         "|x - y| + z, unsigned", ()),
        ("byte_perm", "int32(int32, int32, int32)", "_byte_perm(x, y, s)",
         "bytes of (y, x) picked by the selector s", ("x", "y", "s")),
        ("mul24", "int32(int32, int32)", "_mul24(x, y)", "the low 32 bits of the product of x's and y's low 24 bits", ()),
        ("umul24", "int32(int32, int32)", "int32(uint64(uint32(x) & uint32(0xFFFFFF)) * uint64(uint32(y) & uint32(0xFFFFFF)))",
         "the low 32 bits of the product of x's and y's low 24 bits, unsigned", ()),
    )],
]

#: every function of this module, in the order defined
FUNCTIONS: tuple = tuple(f for group in (*_MATH, *_ROUNDED, *_FAST, *_conversions(), *_INTEGERS) for f in group)


def _define_all() -> None:
    """Each row as a device function of this module, with numba's signature."""
    namespace = globals()
    define_functions("".join(f.source for f in FUNCTIONS), namespace, "<pykern.lang.libdevice>")
    for f in FUNCTIONS:
        namespace[f.name] = jit(f.signature, device=True)(namespace[f.name])


_define_all()
