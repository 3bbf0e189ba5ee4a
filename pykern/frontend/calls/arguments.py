"""Checking and reading a call's arguments, shared by every handler: the messages for a
wrong count or keyword are worded once, here."""

from __future__ import annotations

from pykern.frontend import ir


def nargs(lw, node, name, lo, hi=None, keywords=()):
    """``node`` passes ``lo`` to ``hi`` arguments (``keywords``: the names it may pass by keyword)."""
    hi = lo if hi is None else hi
    for kw in node.keywords:
        if kw.arg not in keywords:
            raise lw.error(f"{name}() got an unexpected keyword argument '{kw.arg}'", node)
    n = len(node.args) + len(node.keywords)
    if not lo <= n <= hi:
        want = f"{lo}" if lo == hi else f"{lo} to {hi}"
        raise lw.error(f"{name}() takes {want} argument(s), got {n}", node)


def bind(lw, node, names: list, defaults: dict, fname: str) -> dict:
    """Positional + keyword arguments matched to ``names`` -> dict name -> ast node."""
    out = {}
    for n, a in zip(names, node.args):
        out[n] = a
    if len(node.args) > len(names):
        raise lw.error(f"{fname}() takes at most {len(names)} arguments", node)
    for kw in node.keywords:
        if kw.arg not in names:
            raise lw.error(f"{fname}() got an unexpected keyword argument '{kw.arg}'", node)
        if kw.arg in out:
            raise lw.error(f"{fname}() got multiple values for '{kw.arg}'", node)
        out[kw.arg] = kw.value
    for n in names:
        if n not in out and n not in defaults:
            raise lw.error(f"{fname}() missing argument '{n}'", node)
    return out


def intrinsic(lw, name, args, t, node, **attrs):
    """The ``ir.Intrinsic`` ``name`` (a row of ``ir.INTRINSICS``) at ``node``."""
    return ir.Intrinsic(name, args, t, attrs, lw.loc(node))


def strong(lw, e, node):
    """A weak constant typed with its default type."""
    return lw.cast(e, e.type, node)


def scalar(lw, arg_node, what: str):
    """The value of ``arg_node``, which must be a number."""
    v = lw.value(arg_node)
    if not v.type.is_scalar:
        raise lw.error(f"{what} takes a number, not a {v.type}", arg_node)
    return v
