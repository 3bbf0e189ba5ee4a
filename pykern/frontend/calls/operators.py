"""The ``operator`` module in kernels: each function is its Python operator (``operator.add(a, b)``
is ``a + b``; the in-place forms act like the plain ones on numbers, which are immutable), so a
device function given ``operator.mul`` as a compile-time argument computes ``a * b``."""

from __future__ import annotations

import ast
import operator as op

from pykern.frontend import types as T
from pykern.frontend.calls.arguments import nargs
from pykern.frontend.calls.builtin_funcs import abs_value
from pykern.frontend.calls.registry import lowers, lowers_each

_BINARY = {op.add: "+", op.sub: "-", op.mul: "*", op.truediv: "/", op.floordiv: "//", op.mod: "%",
           op.pow: "**", op.lshift: "<<", op.rshift: ">>", op.and_: "&", op.or_: "|", op.xor: "^",
           op.iadd: "+", op.isub: "-", op.imul: "*", op.itruediv: "/", op.ifloordiv: "//",
           op.imod: "%", op.ipow: "**", op.ilshift: "<<", op.irshift: ">>", op.iand: "&",
           op.ior: "|", op.ixor: "^"}
_COMPARE = {op.lt: "<", op.le: "<=", op.eq: "==", op.ne: "!=", op.gt: ">", op.ge: ">="}
_UNARY = {op.neg: ast.USub, op.pos: ast.UAdd, op.invert: ast.Invert, op.inv: ast.Invert, op.not_: ast.Not}


@lowers_each(_BINARY)
def _binary(lw, node, name, symbol):
    nargs(lw, node, name, 2)
    return lw.binop(symbol, lw.value(node.args[0]), lw.value(node.args[1]), node)


@lowers_each(_COMPARE)
def _compare(lw, node, name, symbol):
    nargs(lw, node, name, 2)
    return lw.compare(symbol, lw.value(node.args[0]), lw.value(node.args[1]), node)


@lowers_each(_UNARY)
def _unary(lw, node, name, ast_op):
    nargs(lw, node, name, 1)
    return lw.expr_UnaryOp(ast.copy_location(ast.UnaryOp(ast_op(), node.args[0]), node))


@lowers(op.getitem)
def _getitem(lw, node, name):
    nargs(lw, node, name, 2)
    return lw.expr(ast.copy_location(ast.Subscript(node.args[0], node.args[1], ast.Load()), node))


@lowers(op.abs)
def _abs(lw, node, name):
    nargs(lw, node, name, 1)
    return abs_value(lw, node, name)


@lowers(op.truth)
def _truth(lw, node, name):
    nargs(lw, node, name, 1)
    return lw.cond(node.args[0])


@lowers(op.index)
def _index(lw, node, name):
    nargs(lw, node, name, 1)
    v = lw.value(node.args[0])
    if not isinstance(v.type, (T.Integer, T.Boolean)):
        raise lw.error(f"operator.index() needs an integer, not {v.type}", node.args[0])
    return v
