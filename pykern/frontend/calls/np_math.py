"""numpy's math ufuncs of numbers: ``np.sin(x)``, ``np.arctan2(y, x)``, ``np.isnan(x)``,
``np.fmod``, ``np.deg2rad``, ``np.abs``, ``np.minimum``/``np.fmax``..., each in the type of
numba's ufunc loop (``np.sin(int8)`` is float32), complex arguments where numpy takes them.
Array forms (``np.sin(x, out)``) are ``ufunc_arrays``'; the ufuncs that are compositions of
other operations are ``np_scalar``'s."""

from __future__ import annotations

import math

import numpy as np

from pykern.frontend import infer
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import intrinsic, nargs, scalar, strong
from pykern.frontend.calls.builtin_funcs import abs_value
from pykern.frontend.calls.complex_funcs import CMATH_UNARY, np_complex_unary, numpy_complex_value
from pykern.frontend.calls.complex_values import library_complex, parts
from pykern.frontend.calls.float_math import (binary_math, in_float, math_arg, math_arg_value, numpy_function,
                                              predicate, unary_math)
from pykern.frontend.calls.registry import lowers, lowers_each
from pykern.frontend.values import is_weak, weakval

_UNARY = ("sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp exp2 expm1 log log2 log10 log1p sqrt "
          "cbrt floor ceil trunc rint fabs").split()
#: the unary ufuncs that take complex numbers too (numpy's loops of them)
_OF_COMPLEX = (*CMATH_UNARY, "log", "log2", "rint")


@lowers_each({numpy_function(n): n for n in _UNARY})
def _unary(lw, node, fname, name):
    if name not in _OF_COMPLEX:
        return unary_math(lw, node, fname, name, to_int=False, ufunc=True)
    nargs(lw, node, fname, 1)
    v = scalar(lw, node.args[0], fname)
    if isinstance(v.type, T.Complex):
        if name == "rint":
            return np_complex_unary(lw, "rint", v, node)
        return numpy_complex_value(lw, name, v, node)
    return unary_math(lw, node, fname, name, to_int=False, v=v, ufunc=True)


@lowers_each({np.arctan2: "atan2", np.hypot: "hypot", np.copysign: "copysign"})
def _binary(lw, node, fname, name):
    return binary_math(lw, node, fname, name, ufunc=True)


@lowers_each({np.isnan: "isnan", np.isinf: "isinf", np.isfinite: "isfinite"})
def _predicate(lw, node, fname, name):
    nargs(lw, node, fname, 1)
    v = lw.value(node.args[0])
    if isinstance(v.type, T.Complex):  # numpy's loops: of the parts
        re, im = parts(lw, strong(lw, v, node), node)
        both = [intrinsic(lw, name, [p], T.boolean, node) for p in (re, im)]
        return ir.BoolOp("and" if name == "isfinite" else "or", both, T.boolean, lw.loc(node))
    return predicate(lw, node, fname, name, math_arg_value(lw, v, node.args[0]))


@lowers(np.abs, np.absolute)
def _abs(lw, node, name):
    return abs_value(lw, node, name, ufunc=True)


@lowers(np.power)
def _power(lw, node, name):
    # reached only when ufunc_arrays declined the call: its arguments are refused here
    nargs(lw, node, name, 2)
    return lw.binop("**", lw.value(node.args[0]), lw.value(node.args[1]), node)


@lowers(np.fmod)
def _fmod(lw, node, fname):
    """``np.fmod`` in the type of numba's loop: on integers exact (C remainder, the dividend's
    sign; by zero 0, as numpy); on floats (or int64 with uint64: float64) the float fmod."""
    nargs(lw, node, fname, 2)
    a, b = math_arg(lw, node.args[0]), math_arg(lw, node.args[1])
    if is_weak(a) and is_weak(b) and not isinstance(a.value, float) and not isinstance(b.value, float):
        x, y = int(a.value), int(b.value)
        r = 0 if y == 0 else (abs(x) % abs(y)) * (-1 if x < 0 else 1)
        return lw.pyconst(r, node)
    try:  # numba's loop: an int literal is int64 (np.fmod(int8, 2) is int64), booleans int8
        (t, _), _ = infer.ufunc_types(np.fmod, [(a.type, weakval(a)), (b.type, weakval(b))], fname)
    except infer.InferError as e:
        raise lw.error(e.msg, node, e.hint) from None
    if isinstance(t, T.Float):
        return in_float(lw, node, "fmod", [a, b], t)
    return intrinsic(lw, "fmod", [lw.cast(a, t, node), lw.cast(b, t, node)], t, node)


#: np.deg2rad/np.radians and np.rad2deg/np.degrees: (numerator, denominator) of the factor
@lowers_each({np.deg2rad: ("pi", 180.0), np.radians: ("pi", 180.0), np.rad2deg: (180.0, "pi"),
              np.degrees: (180.0, "pi")})
def _angle(lw, node, fname, ratio):
    """``np.deg2rad(x)``/``np.rad2deg(x)`` as numpy's loops: ``x * (pi / 180)`` (``180 / pi``) with the
    factor computed in x's float type (float32: ``180.0f / (float)pi``, one ulp from ``(float)(180 / pi)``),
    float16 through float32."""
    nargs(lw, node, fname, 1)
    v = math_arg(lw, node.args[0])
    num, den = (math.pi if r == "pi" else r for r in ratio)
    if is_weak(v):
        return lw.pyconst(v.value * (num / den), node)
    ft = infer.float_ufunc_type([(v.type, None)])
    ct = T.float32 if ft == T.float16 else ft
    factor = float(np.float32(num) / np.float32(den)) if ct == T.float32 else num / den
    r = ir.BinOp("*", lw.cast(v, ct, node), ir.Const(factor, ct, lw.loc(node)), ct, lw.loc(node))
    return lw.cast(r, ft, node)


@lowers_each({np.minimum: "minimum", np.maximum: "maximum", np.fmin: "fmin", np.fmax: "fmax"})
def _min_max(lw, node, name, which):
    """``np.minimum``/``np.maximum`` (a NaN operand gives NaN) and ``np.fmin``/``np.fmax``
    (a NaN operand is ignored), exactly as numpy's loops, sign of equal zeros included."""
    nargs(lw, node, name, 2)
    vals = [scalar(lw, a, name) for a in node.args]
    if all(is_weak(v) and not isinstance(v.type, T.Complex) for v in vals):
        return lw.pyconst(_min_max_py(which, vals[0].value, vals[1].value), node)
    args = [(v.type, weakval(v)) for v in vals]
    if T.float16 in (vals[0].type, vals[1].type):
        t = infer.common_type(*args[0], *args[1])
    else:
        try:
            (t, _), _ = infer.ufunc_types(getattr(np, which), args, f"np.{which}")
        except infer.InferError as e:
            raise lw.error(e.msg, node, e.hint) from None
    if isinstance(t, T.Complex):
        operands = [p for v in vals for p in parts(lw, lw.cast(v, t, node), node)]
        return library_complex(lw, "c" + which, operands, t, node)
    if not isinstance(t, T.Float):
        ct = T.int64 if isinstance(t, T.Boolean) else t
        pick = "min" if which in ("minimum", "fmin") else "max"
        r = intrinsic(lw, pick, [lw.cast(v, ct, node) for v in vals], ct, node)
        return lw.cast(r, t, node)
    return intrinsic(lw, which, [lw.cast(v, t, node) for v in vals], t, node)


def _min_max_py(which, a, b):
    """The float64 rule of ``minimum``/``maximum``/``fmin``/``fmax`` (``ir.INTRINSICS``), in Python."""
    if not (isinstance(a, float) or isinstance(b, float)):
        return min(a, b) if which in ("minimum", "fmin") else max(a, b)
    a, b = float(a), float(b)
    less = which in ("minimum", "fmin")
    keep_a = a < b if less else a > b
    keep_a = keep_a or ((a != a) if which in ("minimum", "maximum") else (b != b))
    return a if keep_a else b
