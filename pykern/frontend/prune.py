"""Dead branches of ``if`` statements on compile-time constants go before anything else looks
at the function (numba's ``dead_branch_prune``, which runs before its SSA and typing).

The lowerer already compiles only the live branch of such an ``if``; but ``versions`` reads
the AST first, and a definition in (or a path through) the dead branch joins a variable's
values that never meet at run time: ``if True: x = 1.5`` of an array parameter ``x``, or
numba-cuda's test_ssa issue5219 (``if b_is_tuple is True: b = b[0]`` with a closure constant),
would need one type for the array and the float. A test is a constant when it is built from
literals, from names that are not assigned in the function and hold a constant -- a global or
closure value (bool, int, float, complex, str, None), or a compile-time argument (an omitted
optional argument, None, an int literal) -- and from ``x is None`` / ``x is not None`` of a
parameter whose type is neither None nor optional (numba prunes those too), combined by
``not``, ``and``/``or``, comparisons and arithmetic, all with Python's semantics.
"""

from __future__ import annotations

import ast
import copy
import operator

import numpy as np

from pykern.frontend import types as T

_UNKNOWN = object()
_CONSTANT_TYPES = (bool, int, float, complex, str, type(None))
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
           ast.Mod: operator.mod, ast.Div: operator.truediv, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
           ast.BitXor: operator.xor}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not}
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def prune(fn: ast.FunctionDef, env, static: dict, param_types: dict) -> ast.FunctionDef:
    """``fn``, or a copy of it without the dead branches of ``if`` statements whose test is a
    compile-time constant. ``env`` looks names up outside the function (``FunctionEnv``),
    ``static`` holds the compile-time arguments (None for a None argument), ``param_types``
    the run-time parameters' types."""
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(fn)):
        return fn  # declared names may be rebound elsewhere: leave everything
    ev = _Eval(env, static, param_types, _first_stores(fn))
    if not _prune_block(fn.body, ev, frozenset(), dry=True):
        return fn  # the node may be shared (a nested def's), so it is copied only when it changes
    fn = copy.deepcopy(fn)
    fn.body = _prune_block(fn.body, ev, frozenset())
    return fn


def _stores(node) -> list:
    """The names ``node`` binds, with where (assignments, loop targets, nested defs)."""
    out = [(n.id, (n.lineno, n.col_offset)) for n in ast.walk(node)
           if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))]
    return out + [(n.name, (n.lineno, n.col_offset)) for n in ast.walk(node) if isinstance(n, _NESTED[:2] + (ast.ClassDef,))]


def _first_stores(fn) -> dict:
    first: dict = {}
    for name, at in _stores(ast.Module(body=fn.body, type_ignores=[])):
        first[name] = min(first.get(name, at), at)
    return first


def _prune_block(stmts: list, ev, loop_stores: frozenset, dry=False):
    """``stmts`` without dead branches (``dry``: whether there are any). ``loop_stores``: names
    bound in the loops around ``stmts`` (a later binding may come round to an earlier test)."""
    out = []
    for s in stmts:
        if isinstance(s, ast.If):
            ev.at, ev.loop_stores = (s.lineno, s.col_offset), loop_stores
            taken = ev.value(s.test)
            if taken is not _UNKNOWN:
                if dry:
                    return True
                out += _prune_block(s.body if taken else s.orelse, ev, loop_stores)
                continue
        if not isinstance(s, _NESTED):
            inner = loop_stores | {n for n, _ in _stores(s)} if isinstance(s, (ast.For, ast.While)) else loop_stores
            for field in ("body", "orelse", "finalbody"):
                block = getattr(s, field, None)
                if block:
                    pruned = _prune_block(block, ev, inner if field == "body" else loop_stores, dry)
                    if dry and pruned:
                        return True
                    if not dry:
                        setattr(s, field, pruned or [ast.copy_location(ast.Pass(), block[0])])
            for h in getattr(s, "handlers", None) or []:
                pruned = _prune_block(h.body, ev, loop_stores, dry)
                if dry and pruned:
                    return True
                if not dry:
                    h.body = pruned or [ast.copy_location(ast.Pass(), h)]
        out.append(s)
    return False if dry else out


class _Eval:
    """Values of constant tests. A name bound in the function is a local: a compile-time
    argument or parameter (for ``is None``) only where no binding of it can come before the
    test (``at``: none earlier in the source, none in a loop around it); any other is not a
    constant, as Python's scoping makes it local to the whole function."""

    def __init__(self, env, static: dict, param_types: dict, first_store: dict):
        self.env, self.static, self.param_types, self.first_store = env, static, param_types, first_store
        self.at, self.loop_stores = (0, 0), frozenset()

    def _unbound_yet(self, name) -> bool:
        return name not in self.loop_stores and self.first_store.get(name, (1 << 62, 0)) > self.at

    def value(self, node):
        try:
            v = self._value(node)
        except Exception:  # a constant expression Python cannot evaluate: the lowerer reports it
            return _UNKNOWN
        return v if v is _UNKNOWN or isinstance(v, _CONSTANT_TYPES) else _UNKNOWN

    def _value(self, node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.UnaryOp):
            v = self.value(node.operand)
            if v is _UNKNOWN:
                return v
            if isinstance(node.op, ast.Invert) and isinstance(v, (bool, np.bool_)):
                return not v  # numba's ~ of a boolean is `not` (Python's ~True is -2, which is true)
            return {ast.Not: operator.not_, ast.USub: operator.neg, ast.UAdd: operator.pos,
                    ast.Invert: operator.invert}[type(node.op)](v)
        if isinstance(node, ast.BoolOp):
            v = _UNKNOWN
            for operand in node.values:  # the first operand that decides, as Python evaluates
                v = self.value(operand)
                if v is _UNKNOWN or bool(v) == isinstance(node.op, ast.Or):
                    return v
            return v
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            a, b = self.value(node.left), self.value(node.right)
            return _UNKNOWN if _UNKNOWN in (a, b) else _BINOPS[type(node.op)](a, b)
        if isinstance(node, ast.Compare):
            return self._compare(node)
        return _UNKNOWN

    def _name(self, name):
        if name in self.static:
            return self.static[name] if self._unbound_yet(name) else _UNKNOWN
        if name in self.first_store or name in self.param_types:
            return _UNKNOWN
        found, value = self.env.lookup(name)
        if found in ("global", "closure") and isinstance(value, _CONSTANT_TYPES):
            return value
        return _UNKNOWN

    def _compare(self, node):
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            if type(op) not in _COMPARE:
                return _UNKNOWN
            ok = self._none_check(left, op, right)
            if ok is _UNKNOWN:
                a, b = self.value(left), self.value(right)
                if _UNKNOWN in (a, b):
                    return _UNKNOWN
                ok = _COMPARE[type(op)](a, b)
            if not ok:
                return False
            left = right
        return True

    def _none_check(self, left, op, right):
        """``x is None`` / ``x is not None`` of a parameter that is never None (nor optional)."""
        if not isinstance(op, (ast.Is, ast.IsNot)):
            return _UNKNOWN
        for x, other in ((left, right), (right, left)):
            t = self.param_types.get(x.id) if isinstance(x, ast.Name) and self._unbound_yet(x.id) else None
            if t is not None and isinstance(other, ast.Constant) and other.value is None \
                    and not isinstance(t, (T.NoneType, T.Optional)):
                return isinstance(op, ast.IsNot)
        return _UNKNOWN
