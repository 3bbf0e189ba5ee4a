"""numba.cuda's number functions: the bit counts ``popc``/``clz``/``ffs``/``brev``, ``fma``,
``cbrt`` and ``selp``, with numba.cuda's argument and result types (cudadecl)."""

from __future__ import annotations

from pykern.frontend import infer
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import intrinsic, nargs, scalar, strong
from pykern.frontend.calls.float_math import float_arg, in_float
from pykern.frontend.calls.registry import lowers
from pykern.frontend.values import weakval
from pykern.lang import stubs


@lowers(stubs.popc, stubs.clz, stubs.ffs, stubs.brev)
def _bits(lw, node, which):
    nargs(lw, node, which, 1)
    v = strong(lw, lw.value(node.args[0]), node)
    if not isinstance(v.type, T.Integer):
        raise lw.error(f"{which}() takes an integer, not {v.type}", node.args[0])
    # numba.cuda's result types (cudadecl): they matter under its integer rule, where
    # popc(a) - popc(b) of uint32s is uint64 (wraps) and brev(int32(1)) is 2**31, not -2**31
    if which == "brev":  # numba has only uint32/uint64: narrower ints convert to uint32 first
        t = T.uint64 if v.type.bits == 64 else T.uint32
        return intrinsic(lw, which, [lw.cast(v, t, node)], t, node)
    count = intrinsic(lw, which, [v], T.int32, node)
    return lw.cast(count, T.uint32 if which == "ffs" else v.type, node)  # popc, clz keep the type


@lowers(stubs.fma)
def _fma(lw, node, which):
    nargs(lw, node, which, 3)
    vals = [scalar(lw, a, which) for a in node.args]
    t, w = vals[0].type, weakval(vals[0])
    for v in vals[1:]:
        t = infer.common_type(t, w, v.type, weakval(v))
        w = None
    if not isinstance(t, T.Float):
        t = T.float64
    if t == T.float16:  # one rounding, like cuda.fp16.hfma (not via float32)
        return intrinsic(lw, "fma", [lw.cast(v, t, node) for v in vals], t, node)
    return in_float(lw, node, "fma", vals, t)


@lowers(stubs.cbrt)
def _cbrt(lw, node, which):
    nargs(lw, node, which, 1)
    v, ft = float_arg(lw, node, which)
    return in_float(lw, node, "cbrt", [v], ft)


@lowers(stubs.selp)
def _selp(lw, node, which):
    """``cuda.selp(pred, a, b)``: both values are evaluated (they are arguments), then one chosen."""
    nargs(lw, node, which, 3)
    c = lw.cond(node.args[0])
    a, b = scalar(lw, node.args[1], which), scalar(lw, node.args[2], which)
    t = infer.common_type(a.type, weakval(a), b.type, weakval(b))
    a, b = lw.cast(a, t, node), lw.cast(b, t, node)
    a, b = lw.once(a, node), lw.once(b, node)
    return ir.IfExp(c, a, b, t, lw.loc(node))
