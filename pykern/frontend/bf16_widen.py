"""bfloat16 arithmetic as float32 arithmetic: the pass that leaves codegen only conversions.

No GPU pykern targets has bfloat16 arithmetic (LLVM computes ``fadd bfloat`` in float32 and
rounds), so every operation on bfloat16 values is written here as the float32 operation on the
widened (exact) operands, rounded once to bfloat16 by a ``Cast``: ``+ - * / // % **``, unary
``-``, comparisons, and every math intrinsic (``math.sin`` of a bfloat16 is ``sinf`` rounded).
This is numpy's float32-then-round (``(x.astype(np.float32) + y.astype(np.float32))
.astype(ml_dtypes.bfloat16)``) bit for bit; a NaN result is ``0x7FC0`` with its sign, as
ml_dtypes rounds it. Kept as they are: ``Cast`` (codegen rounds), loads, stores, selects, wave
operations (moved as bits) and the ``bf16`` intrinsics (``bf16_fma``: one rounding).

Runs on a lowered module before ``verify``; afterwards no arithmetic node has a bfloat16 operand
or result (``check`` says where one is left, an internal error rather than wrong code).

Example::

    x * y   # bfloat16(float32(x) * float32(y))
"""

from __future__ import annotations

from pykern.core.errors import CompileError
from pykern.frontend import ir
from pykern.frontend import types as T

#: intrinsic categories that move bfloat16 values without computing on them
_KEEP = frozenset(ir.intrinsic_names("wave")) | frozenset(ir.intrinsic_names("bf16"))


def _bf(t) -> bool:
    return isinstance(t, T.BFloat)


def _f32(e):
    return ir.Cast(e, T.float32, e.loc) if _bf(e.type) else e


def _back(e, t):
    """``e`` (computed in float32 for a bfloat16 ``t``) rounded to ``t``."""
    return ir.Cast(e, t, e.loc) if _bf(t) else e


def _widen(e):
    if isinstance(e, ir.BinOp) and (_bf(e.type) or _bf(e.lhs.type) or _bf(e.rhs.type)):
        rt = T.float32 if _bf(e.type) else e.type
        return _back(ir.BinOp(e.op, _f32(e.lhs), _f32(e.rhs), rt, e.loc), e.type)
    if isinstance(e, ir.UnaryOp) and _bf(e.type):
        return _back(ir.UnaryOp(e.op, _f32(e.operand), T.float32, e.loc), e.type)
    if isinstance(e, ir.Compare) and _bf(e.lhs.type):
        return ir.Compare(e.op, _f32(e.lhs), _f32(e.rhs), e.type, e.loc)
    if isinstance(e, ir.Intrinsic) and e.name not in _KEEP and (_bf(e.type) or any(_bf(a.type) for a in e.args)):
        if isinstance(e.type, T.Tuple) and any(_bf(t) for t in e.type.elems):
            raise CompileError(f"{e.name}() of a bfloat16 is not supported", e.loc,
                               hint="convert to float32 first: float32(x)")
        rt = T.float32 if _bf(e.type) else e.type
        return _back(ir.Intrinsic(e.name, [_f32(a) for a in e.args], rt, dict(e.attrs), e.loc), e.type)
    return e


def widen_module(module) -> None:
    """Rewrite every function of ``module`` in place (see the module docstring)."""
    if not _uses_bf16(module):
        return
    done: dict = {}
    for fn in [module.kernel, *module.functions.values()]:
        fn.body = [_visit(s, done) for s in fn.body]


def _uses_bf16(module) -> bool:
    fns = [module.kernel, *module.functions.values()]
    for fn in fns:
        if any(_has_bf(p.type) for p in fn.params) or _has_bf(fn.return_type):
            return True
        if any(_has_bf(t) for t in getattr(fn, "locals", {}).values()):
            return True
    return any(_tree_has_bf(s, set()) for fn in fns for s in fn.body)


def _has_bf(t) -> bool:
    if _bf(t):
        return True
    if isinstance(t, T.Array):
        return _bf(t.dtype)
    if isinstance(t, T.Tuple):
        return any(_has_bf(e) for e in t.elems)
    return False


def _children(node):
    for name in ir.fields(node):
        yield name, getattr(node, name)


def _tree_has_bf(node, seen) -> bool:
    if id(node) in seen:
        return False
    seen.add(id(node))
    if isinstance(node, ir.Expr) and _has_bf(node.type):
        return True
    for _, v in _children(node):
        for x in (v if isinstance(v, list) else [v]):
            if isinstance(x, (ir.Expr, ir.Stmt)) and _tree_has_bf(x, seen):
                return True
    return False


def _visit(node, done):
    key = id(node)
    if key in done:  # a node shared by two parents is rewritten once
        return done[key][1]
    for name, v in _children(node):
        if isinstance(v, (ir.Expr, ir.Stmt)):
            setattr(node, name, _visit(v, done))
        elif isinstance(v, list):
            setattr(node, name, [_visit(x, done) if isinstance(x, (ir.Expr, ir.Stmt)) else x for x in v])
    out = _widen(node) if isinstance(node, ir.Expr) else node
    done[key] = (node, out)  # the node kept alive, so its id is not reused
    return out
