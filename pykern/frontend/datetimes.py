"""numpy's ``datetime64``/``timedelta64`` arithmetic in kernels, as numba.cuda compiles it.

Values are int64 counts of their unit (``T.NPDatetime``/``T.NPTimedelta`` are ``Integer``
subclasses, so memory, arguments and codegen see int64). Here they get numpy's rules:

* ``datetime - datetime`` is a timedelta; ``datetime ± timedelta`` a datetime;
  ``timedelta ± timedelta``, ``timedelta * int``, ``timedelta // int`` timedeltas;
  ``timedelta / timedelta`` a float64; an int added to a datetime or timedelta counts its units;
* the operands convert to the finer of their units first (``D`` and ``s`` -> ``s``; years and
  months only meet their own unit);
* ``NaT`` (the int64 minimum) propagates through arithmetic; comparisons with it are False
  (``!=``: True), as numpy's.

Example: ``delta[i] = end[i] - start[i]`` of two ``datetime64[D]`` arrays stores a
``timedelta64[D]``, NaT where either date is NaT.
"""

from __future__ import annotations

from pykern.frontend import ir
from pykern.frontend import types as T

NAT = -(1 << 63)
_LINEAR = ("W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as")
_STEP = (7, 24, 60, 60, 1000, 1000, 1000, 1000, 1000, 1000)  # each unit in the next finer one


def _per(unit: str) -> int:
    """How many attoseconds one ``unit`` is (W..as)."""
    k = _LINEAR.index(unit)
    n = 1
    for s in _STEP[k:]:
        n *= s
    return n


def _common_unit(units, lw, node) -> str:
    units = list(dict.fromkeys(units))
    if len(units) == 1:
        return units[0]
    if any(u not in _LINEAR for u in units):
        raise lw.error(f"cannot combine datetime units {' and '.join(units)} in a kernel", node,
                       hint="years and months have no fixed length; convert on the host first")
    return min(units, key=_per)


def _kind(v) -> str | None:
    t = v.type
    if isinstance(t, T.NPDatetime):
        return "M"
    if isinstance(t, T.NPTimedelta):
        return "m"
    if isinstance(t, (T.Integer, T.Boolean)):
        return "i"
    return None


def _rescale(lw, v, unit, node):
    """``v`` (a datetime/timedelta) as an int64 count of ``unit`` (no NaT check: the caller's)."""
    loc = lw.loc(node)
    x = ir.Cast(v, T.int64, loc)
    if v.type.unit != unit:
        x = ir.BinOp("*", x, ir.Const(_per(v.type.unit) // _per(unit), T.int64, loc), T.int64, loc)
    return x


def _is_nat(lw, vals, node):
    loc = lw.loc(node)
    tests = [ir.Compare("==", v, ir.Const(NAT, v.type, loc), T.boolean, loc) for v in vals if T.is_datetime(v.type)]
    return tests[0] if len(tests) == 1 else ir.BoolOp("or", tests, T.boolean, loc)


# (op, left kind, right kind) -> result kind ("M", "m", "f": float64, "i": int64)
_RULES = {
    ("-", "M", "M"): "m", ("+", "M", "m"): "M", ("+", "m", "M"): "M", ("-", "M", "m"): "M",
    ("+", "m", "m"): "m", ("-", "m", "m"): "m",
    ("+", "M", "i"): "M", ("+", "i", "M"): "M", ("-", "M", "i"): "M",
    ("+", "m", "i"): "m", ("+", "i", "m"): "m", ("-", "m", "i"): "m", ("-", "i", "m"): "m",
    ("*", "m", "i"): "m", ("*", "i", "m"): "m", ("//", "m", "i"): "m", ("/", "m", "i"): "m", ("/", "m", "m"): "f",
}  # fmt: skip


def binop(lw, op: str, lhs, rhs, node):
    """``lhs op rhs`` where an operand is a datetime64/timedelta64."""
    rule = _RULES.get((op, _kind(lhs), _kind(rhs)))
    if rule is None:
        raise lw.error(f"unsupported operand types for {op}: {lhs.type} and {rhs.type}", node,
                       hint="numpy's datetime arithmetic: datetime - datetime, datetime ± timedelta, "
                       "timedelta ± timedelta, timedelta * int, timedelta // int, timedelta / timedelta")
    loc = lw.loc(node)
    lhs, rhs = lw.once(lhs, node), lw.once(rhs, node)
    dts = [v for v in (lhs, rhs) if T.is_datetime(v.type)]
    unit = _common_unit([v.type.unit for v in dts], lw, node)
    scale = op in "+-" or rule == "f"  # the units of * and // stay the timedelta's own
    a, b = [_rescale(lw, v, unit if scale else v.type.unit, node) if T.is_datetime(v.type)
            else lw.cast(v, T.int64, node) for v in (lhs, rhs)]
    if rule == "f":
        value = ir.BinOp("/", ir.Cast(a, T.float64, loc), ir.Cast(b, T.float64, loc), T.float64, loc)
        return ir.IfExp(_is_nat(lw, dts, node), ir.Const(float("nan"), T.float64, loc), value, T.float64, loc)
    rt = (T.NPDatetime if rule == "M" else T.NPTimedelta)(64, True, unit if scale else dts[0].type.unit)
    value = ir.Cast(_truncating_div(lw, a, b, node) if op in ("//", "/") else ir.BinOp(op, a, b, T.int64, loc), rt, loc)
    nat = _is_nat(lw, dts, node)
    if op in ("//", "/"):  # numpy: a timedelta divided by 0 is NaT
        nat = ir.BoolOp("or", [nat, ir.Compare("==", b, ir.Const(0, T.int64, loc), T.boolean, loc)], T.boolean, loc)
    return ir.IfExp(nat, ir.Const(NAT, rt, loc), value, rt, loc)


def _truncating_div(lw, a, b, node):
    """``a / b`` of int64s rounded toward zero, as numpy divides a timedelta by an integer
    (``//`` on ints is Python's floor division: one up where the signs differ and it is inexact)."""
    loc = lw.loc(node)
    a, b = lw.once(a, node), lw.once(b, node)
    zero = ir.Const(0, T.int64, loc)
    inexact = ir.Compare("!=", ir.BinOp("%", a, b, T.int64, loc), zero, T.boolean, loc)
    signs = ir.Compare("!=", ir.Compare("<", a, zero, T.boolean, loc), ir.Compare("<", b, zero, T.boolean, loc),
                       T.boolean, loc)
    up = ir.IfExp(ir.BoolOp("and", [inexact, signs], T.boolean, loc), ir.Const(1, T.int64, loc), zero, T.int64, loc)
    return ir.BinOp("+", ir.BinOp("//", a, b, T.int64, loc), up, T.int64, loc)


def compare(lw, op: str, lhs, rhs, node):
    """``lhs op rhs`` of datetimes (or timedeltas, or a timedelta and an int): NaT compares unequal."""
    kinds = {_kind(lhs), _kind(rhs)}
    if kinds not in ({"M"}, {"m"}, {"m", "i"}):
        raise lw.error(f"cannot compare {lhs.type} and {rhs.type}", node,
                       hint="compare datetimes with datetimes and timedeltas with timedeltas")
    loc = lw.loc(node)
    lhs, rhs = lw.once(lhs, node), lw.once(rhs, node)
    dts = [v for v in (lhs, rhs) if T.is_datetime(v.type)]
    unit = _common_unit([v.type.unit for v in dts], lw, node)
    a, b = [_rescale(lw, v, unit, node) if T.is_datetime(v.type) else lw.cast(v, T.int64, node) for v in (lhs, rhs)]
    return ir.IfExp(_is_nat(lw, dts, node), ir.Const(op == "!=", T.boolean, loc),
                    ir.Compare(op, a, b, T.boolean, loc), T.boolean, loc)


def cast(lw, e, t, node):
    """``e`` converted to ``t`` where one of them is a datetime/timedelta: an integer becomes a
    count of ``t``'s unit (numpy's ``a[i] = 5``); a coarser unit converts to a finer one (NaT
    stays NaT); anything else is refused."""
    loc = lw.loc(node)
    if not T.is_datetime(e.type):
        if isinstance(e.type, (T.Integer, T.Boolean)) and T.is_datetime(t):
            return ir.Cast(lw.cast(e, T.int64, node), t, loc)
    elif type(e.type) is type(t) and t.unit in _LINEAR and e.type.unit in _LINEAR and _per(t.unit) <= _per(e.type.unit):
        e = lw.once(e, node)
        return ir.IfExp(_is_nat(lw, [e], node), ir.Const(NAT, t, loc), ir.Cast(_rescale(lw, e, t.unit, node), t, loc),
                        t, loc)
    raise lw.error(f"cannot convert {e.type} to {t}", node,
                   hint="datetimes convert to datetimes of a finer unit, timedeltas to timedeltas")
