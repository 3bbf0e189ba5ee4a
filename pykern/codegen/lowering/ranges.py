"""Value ranges of integer expressions of the frontend IR, for narrowing loop counters.

Under numba's integer rule (NBEP 1) integer arithmetic is int64, so
``for w in range((cuda.blockDim.x + cuda.warpsize - 1) // cuda.warpsize)`` counts in
64 bits where the HIP twin's ``int k`` counts in 32: on amdgpu a 64-bit counter is two
scalar adds and a 64-bit compare per iteration, and LLVM has no pass that narrows an
induction variable. ``lowering/module.py`` asks :func:`value_range` for a ``range`` loop's bounds
and counts in i32 when they provably fit (the loop variable is the exact sign extension).

The analysis is deliberately small: constants, the special registers with the bounds the
target guarantees (``Target.special_register_range``, the same numbers amdgpu writes as
``!range``), casts, ``+ - * // %``, unary minus, ``min``/``max`` and ``x if c else y``.
Anything else (variables included: a variable may have been reassigned) is its type's
full range. Every rule is exact under pykern's integer semantics: a result that may leave
its type's range (wrap) is that whole range, and ``//``/``%`` by a divisor range that holds
0 (pykern gives 0 there, Python raises) is the whole range too.
"""

from __future__ import annotations

import numbers
from typing import Optional

from pykern.frontend import ir
from pykern.frontend.analysis import walk
from pykern.frontend import types as T

Range = Optional[tuple]  # (lo, hi), both inclusive; None: not an integer expression


def _plain(t) -> bool:
    # datetime64/timedelta64 are Integer subclasses whose casts may change units: left alone
    return type(t) in (T.Integer, T.Boolean)


def type_range(t) -> Range:
    if isinstance(t, T.Integer):
        return (t.min, t.max)
    if isinstance(t, T.Boolean):
        return (0, 1)
    return None


def value_range(e, special, defs=None) -> Range:
    """Inclusive bounds of integer expression ``e``; ``special(name, axis)`` gives the bounds of
    a special register (``Target.special_register_range``); ``defs`` (see :func:`single_definitions`)
    the one expression each variable it names is ever assigned."""
    full = type_range(e.type)
    if full is None:
        return None
    rule = _RULES.get(type(e)) if _plain(e.type) else None
    r = rule(e, special, defs) if rule is not None else None
    if r is None or r[0] < full[0] or r[1] > full[1]:
        return full  # unknown, or may wrap in e's type
    return r


class Definitions:
    """The one expression each local variable of a function is ever assigned (see
    :func:`single_definitions`), with the bounds found so far: any bound computed is sound, so
    each variable's is computed once (a definition that reads itself, directly or through
    others, bounds that read by its type)."""

    def __init__(self, exprs: dict):
        self.exprs, self.done, self.active = exprs, {}, set()

    def bounds(self, name, special) -> Range:
        if name in self.done:
            return self.done[name]
        if name not in self.exprs or name in self.active:
            return None
        self.active.add(name)
        try:
            r = value_range(self.exprs[name], special, self)
        finally:
            self.active.discard(name)
        self.done[name] = r
        return r


def single_definitions(fn: ir.Function) -> Definitions:
    """The variables of ``fn`` whose one and only write is ``name = expr`` (not a parameter,
    not a loop variable): every value such a variable holds is a value of ``expr`` or the 0 a
    local starts with."""
    counts: dict = {}
    values: dict = {}
    for n in walk(fn.body):
        if isinstance(n, ir.Assign):
            counts[n.target] = counts.get(n.target, 0) + 1
            values[n.target] = n.value
        elif isinstance(n, ir.ForRange):
            counts[n.var] = 2
    params = {p.name for p in fn.params}
    return Definitions({k: values[k] for k, c in counts.items()
                        if c == 1 and k not in params and values[k].type == fn.locals.get(k)})


def _var(e, special, defs):
    r = defs.bounds(e.name, special) if defs is not None else None
    return None if r is None else (min(r[0], 0), max(r[1], 0))  # a local reads 0 before its write


def _array_attr(e, special, defs):
    # an extent, a size, a rank: never negative (strides and addresses may be anything)
    return (0, e.type.max) if e.attr in ("shape", "size", "ndim") and isinstance(e.type, T.Integer) else None


def _const(e, special, defs):
    v = e.value
    return (int(v), int(v)) if isinstance(v, numbers.Integral) else None


def _cast(e, special, defs):
    return value_range(e.value, special, defs) if _plain(e.value.type) else None


def _intrinsic(e, special, defs):
    if e.name in ("min", "max") and len(e.args) == 2:
        a, b = (value_range(x, special, defs) for x in e.args)
        if a is None or b is None:
            return None
        f = min if e.name == "min" else max
        return (f(a[0], b[0]), f(a[1], b[1]))
    if not e.args:
        return special(e.name, int(e.attrs.get("axis", 0)))
    return None


def _unary(e, special, defs):
    r = value_range(e.operand, special, defs)
    if r is None:
        return None
    if e.op == "-":
        return (-r[1], -r[0])
    if e.op == "+":
        return r
    return None


def _ifexp(e, special, defs):
    a, b = value_range(e.then, special, defs), value_range(e.orelse, special, defs)
    if a is None or b is None:
        return None
    return (min(a[0], b[0]), max(a[1], b[1]))


def _floordiv(a, b):
    if b[0] <= 0 <= b[1]:
        return None
    q = [x // y for x in a for y in b]  # monotone in each operand while y keeps its sign
    return (min(q), max(q))


def _mod(a, b):
    if b[0] <= 0 <= b[1]:
        return None
    if b[0] > 0:  # Python's %: the sign of the divisor
        return (0, min(b[1] - 1, a[1])) if a[0] >= 0 else (0, b[1] - 1)
    return (max(b[0] + 1, a[0]), 0) if a[1] <= 0 else (b[0] + 1, 0)


def _binop(e, special, defs):
    if not isinstance(e.type, T.Integer):
        return None
    a, b = value_range(e.lhs, special, defs), value_range(e.rhs, special, defs)
    if a is None or b is None:
        return None
    if e.op == "+":
        return (a[0] + b[0], a[1] + b[1])
    if e.op == "-":
        return (a[0] - b[1], a[1] - b[0])
    if e.op == "*":
        p = [x * y for x in a for y in b]
        return (min(p), max(p))
    if e.op == "//":
        return _floordiv(a, b)
    if e.op == "%":
        return _mod(a, b)
    return None


_RULES = {ir.Const: _const, ir.Var: _var, ir.ArrayAttr: _array_attr, ir.Cast: _cast, ir.Intrinsic: _intrinsic, ir.UnaryOp: _unary,
          ir.IfExp: _ifexp, ir.BinOp: _binop}


def fits_int32(r: Range) -> bool:
    return r is not None and -(1 << 31) <= r[0] and r[1] < (1 << 31)
