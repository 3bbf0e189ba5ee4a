"""What the ``math`` functions and numpy's math ufuncs of numbers share: reading a real
argument, the float type a call computes in (``infer``'s rules), float16 computed through
float32, and folding a constant argument with Python's ``math``."""

from __future__ import annotations

import math

import numpy as np

from pykern.frontend import infer
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import intrinsic, nargs
from pykern.frontend.values import is_weak, weakval

#: math names whose numpy function is spelt otherwise
NUMPY_NAMES = {"acos": "arccos", "asin": "arcsin", "atan": "arctan", "acosh": "arccosh", "asinh": "arcsinh",
               "atanh": "arctanh"}


def numpy_function(name: str):
    """numpy's function for the math function ``name`` (``np.arcsin`` for "asin"), or None."""
    return getattr(np, NUMPY_NAMES.get(name, name), None)


def math_arg(lw, arg_node):
    return math_arg_value(lw, lw.value(arg_node), arg_node)


def math_arg_value(lw, v, arg_node):
    """``v`` (the value of ``arg_node``), which must be a real number."""
    if not v.type.is_scalar:
        raise lw.error(f"math functions take numbers, not {v.type}", arg_node)
    if isinstance(v.type, T.Complex):
        raise lw.error(f"math functions take real numbers, not {v.type}", arg_node, "use the cmath module")
    return v


def in_float(lw, node, name, vals, ft):
    """``name(*vals)`` computed in float type ``ft`` (float16 via float32), result type ``ft``."""
    ct = T.float32 if ft == T.float16 else ft
    r = intrinsic(lw, name, [lw.cast(v, ct, node) for v in vals], ct, node)
    return lw.cast(r, ft, node)


def float_arg(lw, node, fname, k=0):
    """Argument ``k`` and the float type a math function computes it in."""
    v = math_arg(lw, node.args[k])
    try:
        return v, infer.math_arg_type(v.type)
    except infer.InferError as e:
        raise lw.error(e.msg, node.args[k], e.hint) from None


def float_args2(lw, node):
    """The two arguments of a binary math call and the float type they compute in (a located
    error when there is none)."""
    a, b = math_arg(lw, node.args[0]), math_arg(lw, node.args[1])
    try:
        return a, b, infer.math2_arg_type(a.type, weakval(a), b.type, weakval(b))
    except infer.InferError as e:
        raise lw.error(e.msg, node, e.hint) from None


def unary_math(lw, node, fname, name, to_int, v=None, ufunc=False):
    """``math.name(x)`` (``to_int``: floor/ceil/trunc give Python's int) or, with ``ufunc``,
    numpy's ``np.name(x)``, which computes in numba's loop type."""
    nargs(lw, node, fname, 1)
    v = math_arg(lw, node.args[0]) if v is None else v
    if name in infer.TO_INT and not isinstance(v.type, T.Float):
        # floor/ceil/trunc of an integer is the integer itself, exactly (no float round trip):
        # math.* gives Python's int (int64; uint64 stays uint64, it may not fit), np.* keeps the
        # type as numpy >= 2.3 does (bool stays bool)
        if not to_int:
            return v
        if is_weak(v):
            return lw.pyconst(int(v.value), node)
        return v if v.type == T.uint64 else lw.cast(v, T.int64, node)
    if is_weak(v) or (isinstance(v, ir.Const) and not isinstance(v.type, T.Float)):
        folded = _fold_unary(lw, node, fname, name, to_int, v)
        if folded is not None:
            return folded
    ft = infer.float_ufunc_type([(v.type, None)]) if ufunc else infer.math_arg_type(v.type)
    r = in_float(lw, node, name, [v], ft)
    if to_int:
        return lw.cast(r, T.int64, node)
    return r


def _fold_unary(lw, node, fname, name, to_int, v):
    """A constant argument folded with Python's math (same rounding as float64); None when
    Python has no such function."""
    if name == "rint":
        pyf = lambda x: float(round(x))  # noqa: E731  (round half to even, float result)
    elif name in infer.TO_INT and not to_int:
        pyf = lambda x, f=getattr(math, name): float(f(x))  # noqa: E731  (numpy keeps floats)
    else:
        pyf = getattr(math, name, None)
    if pyf is None:
        return None
    try:
        r = pyf(v.value)
    except (ValueError, OverflowError) as e:
        # math.log(0.0), math.sqrt(-1.0), math.exp(1000.0): Python raises, the kernel gives
        # -inf, nan, inf (numba.cuda's numpy error model); numpy's function is that result
        npf = None if to_int or name in infer.TO_INT else numpy_function(name)
        if npf is None:
            raise lw.error(f"{fname}({v.value!r}): {e}", node) from None
        with np.errstate(all="ignore"):
            r = float(npf(np.float64(v.value)))
    return lw.pyconst(r, node)


def binary_math(lw, node, fname, name, ufunc=False):
    """``math.name(a, b)`` by numba.cuda's signatures, or with ``ufunc`` numpy's ``np.name(a, b)``
    in numba's loop type (``np.arctan2(int8, int8)`` is float32)."""
    nargs(lw, node, fname, 2)
    a, b = math_arg(lw, node.args[0]), math_arg(lw, node.args[1])
    if ufunc:
        ft = infer.float_ufunc_type([(a.type, weakval(a)), (b.type, weakval(b))])
        return in_float(lw, node, name, [a, b], ft)
    (_, tb), ft = math2_signature(lw, node, name, a, b)
    if isinstance(tb, T.Integer):  # math.pow(float32, int32): numba's powi, here pow in float64, rounded once
        r = intrinsic(lw, name, [lw.cast(a, T.float64, node), lw.cast(b, T.float64, node)], T.float64, node)
        return lw.cast(r, ft, node)
    return in_float(lw, node, name, [a, b], ft)


def math2_signature(lw, node, name, a, b):
    """numba.cuda's signature of ``math.<name>(a, b)`` (``infer.math2_signature``), or a located error."""
    try:
        return infer.math2_signature(name, a.type, weakval(a), b.type, weakval(b))
    except infer.InferError as e:
        raise lw.error(e.msg, node, e.hint) from None


def predicate(lw, node, fname, name, v=None):
    """``isnan``/``isinf``/``isfinite`` of a real number (integers are finite); ``v``: the
    argument's value when read already."""
    nargs(lw, node, fname, 1)
    v = math_arg(lw, node.args[0]) if v is None else v
    if not isinstance(v.type, T.Float):
        return ir.Const(name == "isfinite", T.boolean, lw.loc(node))
    return intrinsic(lw, name, [v], T.boolean, node)
