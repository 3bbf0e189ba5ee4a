"""The ``cmath`` functions for kernels, written as pykern device functions.

``cmath.sqrt(z)`` in a kernel becomes a call of ``csqrt(z.real, z.imag)``
below, specialised to the component type (float32 for complex64, float64 for
complex128), and the returned ``(real, imag)`` pair becomes the complex result.
The formulas are CPython's (Modules/cmathmodule.c) without its tables of
special values: results agree with Python's ``cmath`` to a few ulps for
finite arguments; infinities and NaNs follow from IEEE arithmetic and are
documented per function where they differ. Large arguments do not overflow in the
inverse functions: asinh/asin/acos/acosh take numba's (CPython's) log form above FLT_MAX / 4,
atanh/atan CPython's 1/z form (and its form next to the poles +-1, +-i).

Example (what the frontend does for ``w = cmath.sqrt(z)``)::

    re, im = csqrt(z.real, z.imag)
    w = complex(re, im)           # of z's precision
"""

from __future__ import annotations

import math

from pykern.dispatch.dispatcher import jit

_LN10 = math.log(10.0)
_LOG2E = 1.0 / math.log(2.0)
_HALF_PI = math.pi / 2
# numba's (and CPython's) large-argument form of asinh/acos/acosh, where the products of
# square roots would overflow: |re| or |im| above FLT_MAX / 4, for complex128 too (as numba)
_LARGE = 3.4028234663852886e38 / 4  # FLT_MAX / 4
_LN4 = math.log(4.0)


@jit(device=True)
def cexp(x, y):
    if y == 0:
        return math.exp(x), y  # keeps the sign of a zero imaginary part
    r = math.exp(x)
    return r * math.cos(y), r * math.sin(y)


@jit(device=True)
def cdiv(ar, ai, br, bi):
    """``a / b``: CPython's algorithm (_Py_c_quot), as numba's operator (numbers.complex_div_impl),
    which divides by the denominator where numpy's Smith division multiplies by its reciprocal
    (an ulp apart). A zero divisor gives numpy's infinities and NaNs: numba raises
    ZeroDivisionError there, which kernels outside debug mode do not report."""
    abr = abs(br)
    abi = abs(bi)
    if abr >= abi:
        if abr == 0:
            return ar / abr, ai / abi
        ratio = bi / br
        denom = br + bi * ratio
        return (ar + ai * ratio) / denom, (ai - ar * ratio) / denom
    if abi >= abr:
        ratio = br / bi
        denom = br * ratio + bi
        return (ar * ratio + ai) / denom, (ai * ratio - ar) / denom
    # a NaN part of the divisor
    nan = abr + abi
    return nan, nan


@jit(device=True)
def clog(x, y):
    ax = abs(x)
    ay = abs(y)
    big = max(ax, ay)
    small = min(ax, ay)
    h = math.hypot(ax, ay)
    if big > 0.5 and big < 2.0 and h > 0.7 and h < 1.75:
        # near |z| == 1 the real part is tiny: log1p keeps its digits (as CPython)
        re = 0.5 * math.log1p((big - 1) * (big + 1) + small * small)
    else:
        re = math.log(h)
    return re, math.atan2(y, x)


@jit(device=True)
def clog10(x, y):
    re, im = clog(x, y)
    return re / _LN10, im / _LN10


@jit(device=True)
def clog2(x, y):
    # numpy's nc_log2: the natural log scaled by log2(e)
    re, im = clog(x, y)
    return re * _LOG2E, im * _LOG2E


@jit(device=True)
def csqrt(x, y):
    ax = abs(x)
    ay = abs(y)
    if ax == 0 and ay == 0:
        return ax, y
    if math.isinf(ay):
        return abs(y), y
    # scaled by 1/8 so that hypot cannot overflow
    s = 2.0 * math.sqrt(ax / 8 + math.hypot(ax / 8, ay / 8))
    d = ay / (2 * s)
    if math.isnan(x) or math.isnan(y):
        return x + y, x + y
    if x >= 0:
        return s, math.copysign(d, y)
    return d, math.copysign(s, y)


@jit(device=True)
def csinh(x, y):
    if y == 0:
        return math.sinh(x), y
    return math.sinh(x) * math.cos(y), math.cosh(x) * math.sin(y)


@jit(device=True)
def ccosh(x, y):
    if y == 0:
        return math.cosh(x), math.copysign(0.0, x) * y
    return math.cosh(x) * math.cos(y), math.sinh(x) * math.sin(y)


@jit(device=True)
def ccos(x, y):
    # cos(z) = cosh(iz)
    return ccosh(-y, x)


@jit(device=True)
def ctanh(x, y):
    if abs(x) > 20:
        # tanh(x) is +-1 to every digit; the imaginary part decays like exp(-2|x|)
        return math.copysign(1.0, x), 4 * math.sin(y) * math.cos(y) * math.exp(-2 * abs(x))
    tx = math.tanh(x)
    ty = math.tan(y)
    cx = 1 / math.cosh(x)
    txty = tx * ty
    denom = 1 + txty * txty
    return tx * (1 + ty * ty) / denom, ((ty / denom) * cx) * cx


@jit(device=True)
def casinh(x, y):
    if abs(x) > _LARGE or abs(y) > _LARGE:
        return math.copysign(math.log(math.hypot(x * 0.5, y * 0.5)) + _LN4, x), math.atan2(y, abs(x))
    s1r, s1i = csqrt(1 + y, -x)
    s2r, s2i = csqrt(1 - y, x)
    return math.asinh(s1r * s2i - s2r * s1i), math.atan2(y, s1r * s2r - s1i * s2i)


@jit(device=True)
def cacos(x, y):
    if abs(x) > _LARGE or abs(y) > _LARGE:
        return math.atan2(abs(y), x), math.copysign(math.log(math.hypot(x * 0.5, y * 0.5)) + _LN4, -y)
    s1r, s1i = csqrt(1 - x, -y)
    s2r, s2i = csqrt(1 + x, y)
    return 2 * math.atan2(s1r, s2r), math.asinh(s2r * s1i - s2i * s1r)


@jit(device=True)
def cacosh(x, y):
    if abs(x) > _LARGE or abs(y) > _LARGE:
        return math.log(math.hypot(x * 0.5, y * 0.5)) + _LN4, math.atan2(y, x)
    s1r, s1i = csqrt(x - 1, y)
    s2r, s2i = csqrt(x + 1, y)
    return math.asinh(s1r * s2r + s1i * s2i), 2 * math.atan2(s1i, s2r)


@jit(device=True)
def catanh(x, y):
    # atanh(-z) == -atanh(z): compute for x >= 0 (CPython's c_atanh, its three cases)
    neg = x < 0 or (x == 0 and math.copysign(1.0, x) < 0)
    if neg:
        x = -x
        y = -y
    ay = abs(y)
    # CPython's bounds sqrt(MAX/4) and sqrt(MIN) of the component type: 1e-10 vanishes
    # next to 1 in float32 only (the comparison folds to a constant). Every value here is
    # of x's type (one * c, ay + inf): a float64 literal would widen a float32 variable
    one = abs(math.copysign(1.0, x))
    if one + 1e-10 == one:
        large = one * 9.2233715e18
        small = one * 1.0842022e-19
    else:
        large = one * 6.703903964971299e153
        small = one * 1.4916681462400413e-154
    if x > large or ay > large:
        # |z| so large that (1-x)**2 + y**2 would overflow: atanh(z) ~ 1/z -+ i*pi/2
        h = math.hypot(x / 2, y / 2)
        re = x / 4 / h / h
        im = -math.copysign(_HALF_PI, -y)
    elif x == 1 and ay < small:
        # next to the pole 1: ay*ay would underflow and the real part become inf
        if ay == 0:
            re = ay + math.inf
            im = y
        else:
            re = -math.log(math.sqrt(ay) / math.sqrt(math.hypot(ay, 2.0)))
            im = math.copysign(math.atan2(2.0, -ay) / 2, y)
    else:
        re = math.log1p(4 * x / ((1 - x) * (1 - x) + ay * ay)) / 4
        im = -math.atan2(-2 * y, (1 - x) * (1 + x) - ay * ay) / 2
    if neg:
        return -re, -im
    return re, im


def _of_iz(f):
    """``-i f(iz)``, the circular function of a hyperbolic one: sin(z) = -i sinh(iz), and so on."""

    @jit(device=True)
    def of_iz(x, y):
        re, im = f(-y, x)
        return im, -re

    return of_iz


csin = _of_iz(csinh)
ctan = _of_iz(ctanh)
casin = _of_iz(casinh)
catan = _of_iz(catanh)


# ---- CPython's special values: its cmath functions look results up in 7x7 tables
# (by the class of each part: -inf, < 0, -0, +0, > 0, +inf, nan) when a part is not
# finite. The tables are built here from Python's own cmath; a cell whose result
# depends on the finite part (exp(inf + iy) is inf*cis(y)) is left to the formulas.

_REPS = ((-math.inf, -math.inf), (-1.0, -2.5), (-0.0, -0.0), (0.0, 0.0), (1.0, 2.5),
         (math.inf, math.inf), (math.nan, math.nan))  # two values of each class


@jit(device=True)
def _special_class(x):
    if math.isnan(x):
        return 6
    if math.isinf(x):
        return 5 if x > 0 else 0
    if x == 0:
        return 2 if math.copysign(1.0, x) < 0 else 3
    return 4 if x > 0 else 1


@jit(device=True)
def cspecial_index(x, y):
    """The row of x + iy in the tables of ``special_table``: -1 when both parts are finite."""
    if math.isfinite(x) and math.isfinite(y):
        return -1
    return _special_class(x) * 7 + _special_class(y)


def _same(a, b) -> bool:
    def key(v):
        return "nan" if v != v else (v, math.copysign(1.0, v))
    return key(a.real) == key(b.real) and key(a.imag) == key(b.imag)


def special_table(f) -> "np.ndarray":
    """(49, 3) float64 rows ``(real, imag, 1.0)`` of Python's ``f`` for each pair of
    classes with a non-finite part, ``(0, 0, 0.0)`` where the formulas answer."""
    import numpy as np

    tab = np.zeros((49, 3))
    for i, xs in enumerate(_REPS):
        for j, ys in enumerate(_REPS):
            if math.isfinite(xs[0]) and math.isfinite(ys[0]):
                continue
            try:
                a, b = (f(complex(xs[k], ys[k])) for k in (0, 1))
            except (ValueError, OverflowError):
                continue
            if _same(a, b):
                tab[i * 7 + j] = a.real, a.imag, 1.0
    return tab


@jit(device=True)
def crect(r, phi):
    if phi == 0:
        return r, phi * math.copysign(1.0, r)
    return r * math.cos(phi), r * math.sin(phi)


@jit(device=True)
def cpow(ar, ai, br, bi):
    """numpy's npy_cpow: exact answers for zero exponents and bases, repeated
    multiplication for integer exponents below 100, exp(b * log(a)) otherwise."""
    if br == 0 and bi == 0:
        return br + 1, bi * 0
    if ar == 0 and ai == 0:
        if br > 0:
            return ar * 0, ai * 0
        return (ar * 0) * math.nan, (ai * 0) * math.nan
    if bi == 0 and br == math.floor(br) and abs(br) < 100:
        n = int(abs(br))
        pr = ar
        pi = ai
        rr = ar * 0 + 1
        ri = ai * 0
        mask = 1
        while True:
            if n & mask:
                t = rr * pr - ri * pi
                ri = rr * pi + ri * pr
                rr = t
            mask <<= 1
            if n < mask:
                break
            t = pr * pr - pi * pi
            pi = pr * pi + pi * pr
            pr = t
        if br < 0:
            # 1 / r, Smith's division as numpy
            if abs(rr) >= abs(ri):
                rat = ri / rr
                scl = 1 / (rr + ri * rat)
                return scl, -rat * scl
            rat = rr / ri
            scl = 1 / (ri + rr * rat)
            return rat * scl, -scl
        return rr, ri
    lr, li = clog(ar, ai)
    return cexp(lr * br - li * bi, lr * bi + li * br)


@jit(device=True)
def csign(x, y):
    """``np.sign`` of a complex number as numpy 2 computes it: ``z / |z|``, 0 for 0, the unit in
    the direction of the one infinite part (a NaN other part too), NaN for two infinite parts or a
    NaN without an infinity. (numba divides by ``|z|`` throughout: NaN at every infinity.)"""
    a = math.hypot(x, y)
    if math.isnan(a):  # hypot(nan, inf) is inf: no infinite part here
        return a, a
    if math.isinf(a):
        if math.isinf(x) and math.isinf(y):
            return a - a, a - a
        if math.isinf(x):
            return math.copysign(1.0, x), 0.0
        return 0.0, math.copysign(1.0, y)
    if a == 0:
        return 0.0, 0.0
    return x / a, y / a


@jit(device=True)
def crecip(x, y):
    """``np.reciprocal`` of a complex number: numpy's loop (Smith's method with the numerator 1,
    both parts divided by ``d``; numba multiplies by ``1 / d``, an ulp away, and NaN where ``d`` is
    subnormal)."""
    if abs(y) <= abs(x):
        r = y / x
        d = x + y * r
        return 1.0 / d, -r / d
    r = x / y
    d = x * r + y
    return r / d, -1.0 / d


# numpy's ordering of complex numbers (its CGT/CGE/CLT/CLE macros): by the real parts, then by
# the imaginary parts; a NaN anywhere makes a pair unordered. np.less/np.maximum... use it.


@jit(device=True)
def cgt(xr, xi, yr, yi):
    return (xr > yr and not math.isnan(xi) and not math.isnan(yi)) or (xr == yr and xi > yi)


@jit(device=True)
def cge(xr, xi, yr, yi):
    return (xr > yr and not math.isnan(xi) and not math.isnan(yi)) or (xr == yr and xi >= yi)


@jit(device=True)
def clt(xr, xi, yr, yi):
    return (xr < yr and not math.isnan(xi) and not math.isnan(yi)) or (xr == yr and xi < yi)


@jit(device=True)
def cle(xr, xi, yr, yi):
    return (xr < yr and not math.isnan(xi) and not math.isnan(yi)) or (xr == yr and xi <= yi)


@jit(device=True)
def cmaximum(xr, xi, yr, yi):
    # numpy keeps the first operand when it has a NaN part (NaN propagates from either side)
    if math.isnan(xr) or math.isnan(xi) or cge(xr, xi, yr, yi):
        return xr, xi
    return yr, yi


@jit(device=True)
def cminimum(xr, xi, yr, yi):
    if math.isnan(xr) or math.isnan(xi) or cle(xr, xi, yr, yi):
        return xr, xi
    return yr, yi


@jit(device=True)
def cfmax(xr, xi, yr, yi):
    # numpy keeps the first operand when the second has a NaN part (NaN is ignored if it can be)
    if math.isnan(yr) or math.isnan(yi) or cge(xr, xi, yr, yi):
        return xr, xi
    return yr, yi


@jit(device=True)
def cfmin(xr, xi, yr, yi):
    if math.isnan(yr) or math.isnan(yi) or cle(xr, xi, yr, yi):
        return xr, xi
    return yr, yi


import sys as _sys  # noqa: E402

from pykern.lang.stubs import register_device_library  # noqa: E402

register_device_library("cmath", _sys.modules[__name__])
