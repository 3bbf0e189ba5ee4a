"""Python's ``math`` module in kernels: the functions that are math intrinsics (one row each
of ``ir.INTRINSICS``), ``log`` with a base, ``degrees``/``radians``, and the ones with tuple
or integer parts (``frexp``, ``ldexp``, ``modf``, ``nextafter``; ``np.ldexp`` and
``np.nextafter`` share them).

Example: ``math.sqrt(x)`` with ``x: float32`` is ``@sqrt(x):float32``.
"""

from __future__ import annotations

import math

import numpy as np

from pykern.frontend import infer
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import intrinsic, nargs
from pykern.frontend.calls.float_math import (binary_math, float_arg, float_args2, in_float, math2_signature, math_arg,
                                              predicate, unary_math)
from pykern.frontend.calls.registry import lowers, lowers_each
from pykern.frontend.values import is_weak, weakval

#: math functions with a handler of their own below, though a math intrinsic has their name
_OWN_HANDLER = ("log", "nextafter")


def _math_functions(names) -> dict:
    return {getattr(math, n): n for n in names if hasattr(math, n) and n not in _OWN_HANDLER}


@lowers_each(_math_functions(infer.UNARY_MATH))
def _unary(lw, node, fname, name):
    return unary_math(lw, node, fname, name, to_int=name in infer.TO_INT)


@lowers_each(_math_functions(infer.BINARY_MATH))
def _binary(lw, node, fname, name):
    return binary_math(lw, node, fname, name)


@lowers_each(_math_functions(infer.PREDICATES))
def _predicate(lw, node, fname, name):
    return predicate(lw, node, fname, name)


@lowers(math.log)
def _log(lw, node, name):
    nargs(lw, node, "math.log", 1, 2)
    if len(node.args) == 1:
        return unary_math(lw, node, "math.log", "log", False)
    a, b = math_arg(lw, node.args[0]), math_arg(lw, node.args[1])
    ft = infer.math2_arg_type(a.type, weakval(a), b.type, weakval(b))
    la, lb = in_float(lw, node, "log", [a], ft), in_float(lw, node, "log", [b], ft)
    return ir.BinOp("/", la, lb, ft, lw.loc(node))


@lowers_each({math.degrees: 180.0 / math.pi, math.radians: math.pi / 180.0})
def _angle(lw, node, name, factor):
    nargs(lw, node, name, 1)
    x = math_arg(lw, node.args[0])
    return lw.binop("*", x, lw.const(factor, T.float64, node, weak=True), node)


def _folded_pair(lw, pair, types, node):
    """A pair of Python numbers computed at compile time (``math.frexp`` of a literal) as a tuple of ``types``."""
    return ir.TupleExpr([lw.const(x, t, node) for x, t in zip(pair, types)], T.Tuple(types), lw.loc(node))


@lowers(math.frexp)
def _frexp(lw, node, name):
    """``math.frexp(x)`` -> (mantissa of x's float type, int32 exponent), as numba."""
    nargs(lw, node, name, 1)
    v, ft = float_arg(lw, node, name)
    if is_weak(v):
        return _folded_pair(lw, math.frexp(v.value), (T.float64, T.int32), node)
    ct = T.float32 if ft == T.float16 else ft  # a half's mantissa is exact in float32
    r = lw.temp(intrinsic(lw, "frexp", [lw.cast(v, ct, node)], T.Tuple((ct, T.int32)), node), node)
    loc = lw.loc(node)
    m = lw.cast(ir.TupleGet(r, 0, ct, loc), ft, node)
    return ir.TupleExpr([m, ir.TupleGet(r, 1, T.int32, loc)], T.Tuple((ft, T.int32)), loc)


@lowers_each({math.ldexp: False, np.ldexp: True})
def _ldexp(lw, node, name, ufunc):
    nargs(lw, node, name, 2)
    v, ft = float_arg(lw, node, name)
    e = lw.value(node.args[1])
    if not isinstance(e.type, (T.Integer, T.Boolean)):
        raise lw.error(f"{name}() exponent must be an integer, not {e.type}", node.args[1])
    if ufunc and ft != T.float16:  # numba's loop: np.ldexp(int8, 2) is float32; a uint64 exponent has none
        try:
            (ft, _), _ = infer.ufunc_types(np.ldexp, [(v.type, weakval(v)), (e.type, weakval(e))], name)
        except infer.InferError as err:
            raise lw.error(err.msg, node, err.hint) from None
    elif ft != T.float16 and not is_weak(v):  # numba.cuda's signatures: math.ldexp(int8, n) is float32
        (_, _), ft = math2_signature(lw, node, "ldexp", v, e)
    loc = lw.loc(node)
    e = lw.cast(e, T.int64, node)
    # clamp to int32 (beyond it the result is 0 or inf anyway) instead of wrapping
    e = intrinsic(lw, "max", [intrinsic(lw, "min", [e, ir.Const(2**31 - 1, T.int64, loc)], T.int64, node),
                              ir.Const(-(2**31), T.int64, loc)], T.int64, node)
    ct = T.float32 if ft == T.float16 else ft
    r = intrinsic(lw, "ldexp", [lw.cast(v, ct, node), lw.cast(e, T.int32, node)], ct, node)
    return lw.cast(r, ft, node)


@lowers(math.modf)
def _modf(lw, node, name):
    """``math.modf(x)`` -> (fractional part, integral part), both of x's float type, signed like x."""
    nargs(lw, node, name, 1)
    v, ft = float_arg(lw, node, name)
    if is_weak(v):
        return _folded_pair(lw, math.modf(v.value), (T.float64, T.float64), node)
    loc = lw.loc(node)
    x = lw.cast(v, ft, node)
    x = lw.once(x, node)
    whole = lw.once(in_float(lw, node, "trunc", [x], ft), node)
    diff = ir.BinOp("-", x, whole, ft, loc)
    inf = ir.Intrinsic("isinf", [x], T.boolean, {}, loc)
    frac = ir.IfExp(inf, ir.Const(0.0, ft, loc), diff, ft, loc)
    frac = in_float(lw, node, "copysign", [frac, x], ft)
    return ir.TupleExpr([frac, whole], T.Tuple((ft, ft)), loc)


@lowers_each({math.nextafter: False, np.nextafter: True})
def _nextafter(lw, node, name, ufunc):
    nargs(lw, node, name, 2)
    a, b, ft = float_args2(lw, node)
    if ufunc and ft != T.float16:  # numba's loop (np.nextafter(int8, int8) is float32)
        ft = infer.float_ufunc_type([(a.type, weakval(a)), (b.type, weakval(b))])
    elif ft != T.float16:  # numba's signatures: math.nextafter(float32, uint16) is float64
        _, ft = math2_signature(lw, node, "nextafter", a, b)
    if ft == T.float16:
        raise lw.error(f"{name}() of float16 is not supported in kernels", node,
                       "convert to float32 first (the next float32 is not the next float16)")
    return intrinsic(lw, "nextafter", [lw.cast(a, ft, node), lw.cast(b, ft, node)], ft, node)
