"""Calls of types: ``int(x)``, ``float(x)``, ``bool(x)``, ``tuple(t)`` of a tuple, numpy's and numba's scalar types
(``np.float32(x)``, ``np.complex64(re, im)``, ``numba.int8(x)``), namedtuple classes
(``Point(1.0, y=2.0)``); other classes cannot be made in kernels."""

from __future__ import annotations

import ast
import builtins
import math

import numpy as np

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import bind, scalar, strong
from pykern.frontend.calls.complex_values import make
from pykern.frontend.calls.registry import lowers, lowers_kind
from pykern.frontend.values import PyObj, is_weak


def convert(lw, node, name, t):
    """``t(x)`` (``t()`` is zero; a complex type takes ``(re, im)`` too)."""
    if node.keywords:
        raise lw.error(f"{name}() takes no keyword arguments in kernels", node)
    if not node.args:
        return lw.const(0, t, node)
    if isinstance(t, T.Complex) and len(node.args) == 2:
        return _complex_of_parts(lw, node, name, t)
    if len(node.args) != 1:
        raise lw.error(f"{name}() takes one argument in kernels", node)
    v = scalar(lw, node.args[0], name)
    return lw.cast(v, t, node)


def _complex_of_parts(lw, node, name, t):
    """``np.complex64(re, im)``: numba's two-argument constructor of the numpy complex
    types, which takes real parts only (numpy refuses complex ones too)."""
    re, im = (scalar(lw, a, name) for a in node.args)
    for v, a in ((re, node.args[0]), (im, node.args[1])):
        if isinstance(v.type, T.Complex):
            raise lw.error(f"{name}(real, imag) takes real parts, not a {v.type}", a)
    return make(lw, re, im, t, node)


@lowers(builtins.int)
def _int(lw, node, name):
    if len(node.args) == 1 and not node.keywords:
        v = scalar(lw, node.args[0], "int")
        # numba's int() of an integer keeps its type (int(int8) is int8, so -int(x) negates in int8)
        if type(v.type) is T.Integer and not is_weak(v):
            return v
        return lw.cast(v, T.int64, node)
    return convert(lw, node, "int", T.int64)


@lowers(builtins.float)
def _float(lw, node, name):
    # float("inf") / float("-inf") / float("nan"): the one use of strings Python kernels
    # commonly make (initial values of min/max reductions); a weak constant like 1.0
    if len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        text = node.args[0].value
        try:
            value = float(text)
        except ValueError:
            value = None
        if value is None or (value == value and abs(value) != math.inf):
            raise lw.error(f"float({text!r}) in a kernel: only 'inf', '-inf' and 'nan' are accepted", node,
                           "write numbers as literals, e.g. 1.5")
        return lw.const(value, T.float64, node, weak=True)
    if len(node.args) == 1 and not node.keywords:
        v = scalar(lw, node.args[0], "float")
        if v.type in (T.float32, T.float64) and not is_weak(v):
            return v  # numba's float() of a float keeps its type: float(float32) is float32
    return convert(lw, node, "float", T.float64)


@lowers(builtins.bool)
def _bool(lw, node, name):
    if node.args and len(node.args) == 1 and not node.keywords:
        return lw.cond(node.args[0])
    return convert(lw, node, "bool", T.boolean)


@lowers(builtins.tuple)
def _tuple(lw, node, name):
    """``tuple(t)`` of a tuple, as numba's: the same elements as a plain tuple (a namedtuple's
    field names dropped); ``tuple()`` is the empty tuple. numba makes no tuple from an array or
    a range (their length is not a compile-time fact), nor does pykern."""
    if node.keywords or len(node.args) > 1:
        raise lw.error("tuple() takes at most one positional argument", node)
    if not node.args:
        return ir.TupleExpr([], T.Tuple(()), lw.loc(node))
    v = lw.value(node.args[0])
    if not isinstance(v.type, T.Tuple):
        raise lw.error(f"tuple() of a {v.type} in a kernel: only a tuple can be converted", node.args[0],
                       "numba builds tuples from tuples only; write the elements out, e.g. (a[0], a[1])")
    if not v.type.names:
        return v
    v = lw.once(v, node.args[0])
    elems = [lw.tuple_get(v, k, node) for k in range(len(v.type.elems))]
    return ir.TupleExpr(elems, T.Tuple(v.type.elems), lw.loc(node))


@lowers_kind(lambda f: isinstance(f, T.Type))
def _pykern_type(lw, t, node, name):
    return convert(lw, node, name, lw.dtype_of(t, node.func))


@lowers_kind(lambda f: isinstance(f, type))
def _class(lw, cls, node, name):
    if issubclass(cls, np.generic):
        return convert(lw, node, name, lw.dtype_of(cls, node.func))
    if issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple):
        return _namedtuple(lw, node, cls)
    raise lw.error(f"cannot create {name} objects in kernels", node)


def foreign_scalar_type(f):
    """The scalar type a type object of another library (``numba.float32``) names, or None."""
    if getattr(f, "__code__", None) is not None or isinstance(f, type):
        return None
    try:
        s = str(f)
    except Exception:
        return None
    return T.SCALARS.get(s) or T.ALIASES.get(s)


@lowers_kind(lambda f: not isinstance(f, T.Type) and foreign_scalar_type(f) is not None)
def _foreign_type(lw, f, node, name):
    return convert(lw, node, name, foreign_scalar_type(f))


def _namedtuple(lw, node, cls):
    """``Point(1.0, y=2.0)`` of a ``collections.namedtuple``/``typing.NamedTuple`` class."""
    fields = cls._fields
    defaults = dict(getattr(cls, "_field_defaults", {}) or {})
    a = bind(lw, node, list(fields), defaults, cls.__name__)
    elems = []
    for fname in fields:
        v = lw.value(a[fname]) if fname in a else lw.to_ir(PyObj(defaults[fname], f"{cls.__name__}.{fname}"), node)
        if isinstance(v.type, T.Void):
            raise lw.error("a call that returns nothing cannot be a namedtuple field", node)
        elems.append(strong(lw, v, node) if is_weak(v) else v)
    return ir.TupleExpr(elems, T.Tuple(tuple(e.type for e in elems), tuple(fields), cls.__name__), lw.loc(node))
