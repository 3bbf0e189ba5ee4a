"""Python's builtin functions in kernels, as numba types and computes them: ``len``, ``ord``,
``abs``, ``min``/``max``, ``pow``, ``divmod``, ``sum``/``any``/``all``, and ``int.bit_count()``;
``range()`` and ``literal_unroll()`` outside a ``for`` are refused with where they belong
(``round`` is ``rounding``'s, ``int``/``float``/``bool`` are ``conversions``', ``print`` is
``printing``'s)."""

from __future__ import annotations

import ast
import builtins

import numpy as np

from pykern.frontend import infer
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import intrinsic, nargs, scalar
from pykern.frontend.calls.complex_values import complex_abs
from pykern.frontend.calls.float_math import in_float
from pykern.frontend.calls.reductions import reduce_array
from pykern.frontend.calls.registry import lowers, lowers_each, lowers_method
from pykern.frontend.values import PartialIndex, PyObj, is_pure, is_weak, weakval
from pykern.lang import stubs


@lowers_each({builtins.range: ("range", "for i in range(n): ..."),
              stubs.literal_unroll: ("literal_unroll", "for x in literal_unroll(t): ...")})
def _loop_only(lw, node, name, how):
    which, hint = how
    raise lw.error(f"{which}() can only be used as the iterable of a for loop", node, hint)


@lowers(builtins.len)
def _len(lw, node, name):
    nargs(lw, node, "len", 1)
    arg = node.args[0]
    if isinstance(arg, ast.Call) and getattr(lw.expr(arg.func), "value", None) is builtins.range:
        return lw.iter_seq(arg)[0]  # len(range(a, b, s)): the loop's trip count
    v = lw.expr(arg)
    if isinstance(v, PyObj) and isinstance(v.value, (tuple, np.ndarray)):
        return PyObj(len(v.value), f"len({v.name})")
    if isinstance(v, PartialIndex):
        v = lw.to_ir(v, node.args[0])
    v = lw.to_ir(v, node.args[0])
    t = v.type
    if isinstance(t, T.Array):
        if t.ndim == 0:
            raise lw.error("len() of a 0-d array", node)
        if isinstance(t, T.CPointer):
            raise lw.error(f"len() of a {t}: a raw pointer has no length", node, "pass the length as an argument")
        return ir.ArrayAttr(v, "shape", 0, T.int64, lw.loc(node))
    if isinstance(t, T.Tuple):
        return lw.const(len(t.elems), T.int64, node, weak=True)
    raise lw.error(f"len() of a {t}", node, "len() works on arrays and tuples")


@lowers(builtins.ord)
def _ord(lw, node, name):
    """``ord('a')`` of a one-character string known at compile time: its code point, an int64
    as numba's ``ord`` gives (text bytes compared with ``c == ord('A')``)."""
    nargs(lw, node, "ord", 1)
    a = node.args[0]
    if isinstance(a, ast.Constant):
        s = a.value
    else:
        v = lw.expr(a)  # a global or closure string
        s = v.value if isinstance(v, PyObj) else None
    if not isinstance(s, str) or len(s) != 1:
        raise lw.error("ord() takes a one-character string constant in kernels", node,
                       "text in a kernel is an array of uint8 codes; compare them with ord('x')")
    return lw.const(ord(s), T.int64, node)


@lowers(builtins.abs)
def abs_value(lw, node, name, ufunc=False):
    """``abs(x)``; with ``ufunc`` numpy's ``np.abs`` (a boolean stays one)."""
    nargs(lw, node, name, 1)
    v = scalar(lw, node.args[0], name)
    if is_weak(v):
        return lw.pyconst(abs(v.value), node)
    if isinstance(v.type, T.Boolean):  # abs(True) is numba's int64 1; np.abs takes numpy's boolean loop
        return v if ufunc else lw.cast(v, T.int64, node)
    if isinstance(v.type, T.Integer) and not v.type.signed:
        return v
    if v.type == T.float16:
        return in_float(lw, node, "abs", [v], T.float16)
    if isinstance(v.type, T.Complex):
        return complex_abs(lw, v, node)
    return intrinsic(lw, "abs", [v], v.type, node)


@lowers_each({builtins.min: "min", builtins.max: "max"})
def _min_max(lw, node, spelt, which):
    name = which  # messages name the builtin, however it was imported
    for kw in node.keywords:
        raise lw.error(f"{name}() keyword '{kw.arg}' is not supported in kernels", node)
    vals = [lw.value(a) for a in node.args]
    if len(vals) == 1 and isinstance(vals[0].type, T.Array):
        # numba iterates a 1-d array (a 2-d one would compare rows, which numba refuses too)
        a = vals[0]
        if a.type.ndim != 1 or isinstance(a.type.dtype, (T.Complex, T.Record)):
            raise lw.error(f"{name}() of a {a.type} is not supported in kernels", node,
                           f"{name}() takes a 1-d array of real numbers; np.{which}(a) reduces any array")
        return reduce_array(lw, node, name, "py" + which, a)
    if len(vals) == 1 and isinstance(vals[0].type, T.Tuple):
        tup = vals[0]
        if not is_pure(tup):
            raise lw.error(f"{name}() of a tuple with side effects; assign it to a variable first", node)
        vals = [lw.tuple_get(tup, k, node) for k in range(len(tup.type.elems))]
    if len(vals) < 2:
        raise lw.error(f"{name}() needs at least 2 arguments (or one tuple) in kernels", node)
    for v, a in zip(vals, node.args):
        if not v.type.is_scalar or isinstance(v.type, T.Complex):
            raise lw.error(f"{name}() takes real numbers, not {v.type}", a)
    if all(is_weak(v) for v in vals):
        r = (min if which == "min" else max)(v.value for v in vals)
        return lw.pyconst(r, node)
    t = infer.join_type([(v.type, weakval(v)) for v in vals])
    ct = T.int64 if isinstance(t, T.Boolean) else t  # booleans compare as 0/1
    acc = lw.cast(vals[0], ct, node)
    for v in vals[1:]:
        acc = intrinsic(lw, which, [acc, lw.cast(v, ct, node)], ct, node)
    return lw.cast(acc, t, node)


@lowers(builtins.pow)
def _pow(lw, node, name):
    nargs(lw, node, "pow", 2)
    return lw.binop("**", lw.value(node.args[0]), lw.value(node.args[1]), node)


@lowers(builtins.divmod)
def _divmod(lw, node, name):
    """``divmod(a, b)`` -> ``(a // b, a % b)`` with Python's signs (numba's builtin); each
    argument is evaluated once."""
    nargs(lw, node, "divmod", 2)
    a, b = lw.value(node.args[0]), lw.value(node.args[1])
    for v, n in ((a, node.args[0]), (b, node.args[1])):
        if not v.type.is_scalar or isinstance(v.type, T.Complex):
            raise lw.error(f"divmod() takes real numbers, not {v.type}", n)
    a, b = lw.once(a, node), lw.once(b, node)
    t = None if is_weak(a) and is_weak(b) else infer.divmod_type(a.type, weakval(a), b.type, weakval(b))
    if t is not None:  # numba's DivMod signature: both operands converted first
        a, b = lw.cast(a, t, node), lw.cast(b, t, node)
    q, r = lw.binop("//", a, b, node), lw.binop("%", a, b, node)
    # folded constants leave their weakness behind: a tuple element has its own type
    q, r = (ir.Const(x.value, x.type, x.loc) if is_weak(x) else x for x in (q, r))
    return ir.TupleExpr([q, r], T.Tuple((q.type, r.type)), lw.loc(node))


def _iterable_arg(lw, node, name, hi):
    """The iterable of ``sum``/``any``/``all``: a tuple, or a 1-d array (numba's overloads iterate
    it; iterating a 2-d array gives rows, which they cannot add or test)."""
    nargs(lw, node, name, 1, hi, keywords=("start",) if hi > 1 else ())
    it = lw.value(node.args[0])
    t = it.type
    if isinstance(t, T.Array) and t.ndim == 1 and not isinstance(t.dtype, T.Record):
        return it
    if isinstance(t, T.Tuple) and not isinstance(t, (T.NoneType, T.Optional)) and all(e.is_scalar for e in t.elems):
        return lw.once(it, node)
    raise lw.error(f"{name}() in kernels takes a tuple of numbers or a 1-d array, not a {t}", node.args[0])


@lowers(builtins.sum)
def _sum(lw, node, name):
    """``sum(t)``, ``sum(t, start)`` as numba's overload computes it: ``start`` (0) plus each item in
    turn -- a tuple's items folded with ``+``, a 1-d array's by its sequential sum, then ``start``."""
    it = _iterable_arg(lw, node, name, 2)
    start = (lw.value(node.args[1]) if len(node.args) > 1 else lw.value(node.keywords[0].value) if node.keywords
             else lw.const(0, T.int64, node, weak=True))
    if isinstance(it.type, T.Array):
        return lw.binop("+", start, reduce_array(lw, node, name, "sum", it), node)
    acc = start
    for k in range(len(it.type.elems)):
        acc = lw.binop("+", acc, lw.tuple_get(it, k, node), node)
    return acc


@lowers_each({builtins.any: "any", builtins.all: "all"})
def _any_all(lw, node, name, which):
    """``any(t)``/``all(t)`` of a tuple (each item's truth, Python's) or a 1-d array (np.any/np.all)."""
    it = _iterable_arg(lw, node, name, 1)
    if isinstance(it.type, T.Array):
        return reduce_array(lw, node, name, which, it)
    if not it.type.elems:
        return lw.const(which == "all", T.boolean, node)
    truths = [lw.cast(lw.tuple_get(it, k, node), T.boolean, node) for k in range(len(it.type.elems))]
    return ir.BoolOp("or" if which == "any" else "and", truths, T.boolean, lw.loc(node))


@lowers_method("integer", "bit_count")
def _bit_count(lw, node, name, v):
    """``x.bit_count()``: set bits of ``abs(x)`` (Python's int.bit_count), int64."""
    nargs(lw, node, "bit_count", 0)
    if is_weak(v):
        return lw.pyconst(abs(v.value).bit_count(), node)
    if isinstance(v.type, T.Boolean):
        return lw.cast(v, T.int64, node)
    if v.type.signed:
        v = ir.IfExp(ir.Compare("<", v, ir.Const(0, v.type, lw.loc(node)), T.boolean, lw.loc(node)),
                     ir.UnaryOp("-", v, v.type, lw.loc(node)), v, v.type, lw.loc(node))
    # abs(MIN) wraps to MIN, whose bit pattern has the one bit Python counts too
    return lw.cast(intrinsic(lw, "popc", [v], T.int32, node), T.int64, node)
