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

    def __init__(self, exprs: dict, host_arrays=frozenset()):
        self.exprs, self.done, self.active = exprs, {}, set()
        #: array parameters of a kernel never reassigned: arrays from the host, whose extents
        #: numpy bounds (:func:`max_extent`; the amdgpu target tells LLVM the same)
        self.host_arrays = frozenset(host_arrays)

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
    host = {p.name for p in fn.params if fn.is_kernel and isinstance(p.type, T.Array) and p.name not in counts}
    return Definitions({k: values[k] for k, c in counts.items()
                        if c == 1 and k not in params and values[k].type == fn.locals.get(k)}, host)


def _var(e, special, defs):
    r = defs.bounds(e.name, special) if defs is not None else None
    return None if r is None else (min(r[0], 0), max(r[1], 0))  # a local reads 0 before its write


#: numpy's limit on any array, views and broadcasts included: ``size * itemsize`` fits in an
#: int64 ("array is too big" otherwise)
MAX_ARRAY_BYTES = 2**63 - 1


def max_extent(dtype) -> int:
    """The largest extent (or size) an array of ``dtype`` elements may have: ``MAX_ARRAY_BYTES
    // itemsize`` (itemsize 1, the widest bound, for element types without ``nbytes``, or None).

    Example::

        >>> max_extent(T.float64) == (2**63 - 1) // 8
        True
    """
    return MAX_ARRAY_BYTES // max(1, getattr(dtype, "nbytes", 0) or 1)


def _array_attr(e, special, defs):
    # an extent, a size, a rank: never negative (strides and addresses may be anything); an
    # extent or size of an array from the host at most max_extent (an array made in the
    # kernel, carray's of a pointer included, may claim any extent)
    if not isinstance(e.type, T.Integer) or e.attr not in ("shape", "size", "ndim"):
        return None
    host = (e.attr != "ndim" and isinstance(e.array, ir.Var) and defs is not None
            and e.array.name in defs.host_arrays)
    return (0, min(e.type.max, max_extent(e.array.type.dtype)) if host else e.type.max)


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


def counts_by_variable(stop: Range, step: Range, lo: int, hi: int) -> bool:
    """Whether a ``range`` loop with these stop and step ranges may step its variable, ``v +=
    step`` while ``v < stop`` (``v > stop`` for a negative step), in a type of values
    ``[lo, hi]``: the step's sign is known (a zero step, no iteration, aside: the loop tests for
    it once) and the value after the last, ``v + step``, stays in ``[lo, hi]`` for every value
    ``v`` the loop takes (the last is below the stop by at most the step), so no add wraps.

    Example::

        >>> counts_by_variable((512, 512), (1, 1024), -2**31, 2**31 - 1)
        True
        >>> counts_by_variable((0, 2**31 - 1), (1, 1), -2**31, 2**31 - 1)  # 2**31 - 1 is the last
        True
        >>> counts_by_variable((0, 2**31 - 1), (2, 2), -2**31, 2**31 - 1)  # 2**31 - 2 + 2 wraps
        False
    """
    if stop is None or step is None:
        return False
    if step[0] >= 0:
        return stop[1] - 1 + step[1] <= hi
    if step[1] <= 0:
        return stop[0] + 1 + step[0] >= lo
    return False
