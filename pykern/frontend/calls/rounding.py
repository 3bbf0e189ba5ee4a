"""Python's ``round(x)`` (an int64, half to even) and ``round(x, ndigits)`` (Python's
correctly rounded decimal digits, ndigits known at compile or at run time), as numba's."""

from __future__ import annotations

import builtins

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import intrinsic, nargs, scalar
from pykern.frontend.calls.float_math import in_float
from pykern.frontend.calls.registry import lowers
from pykern.frontend.values import is_weak


@lowers(builtins.round)
def _round(lw, node, name):
    nargs(lw, node, "round", 1, 2, keywords=("ndigits",))
    v = scalar(lw, node.args[0], "round")
    nd_node = node.args[1] if len(node.args) > 1 else (node.keywords[0].value if node.keywords else None)
    if nd_node is None:
        return _round_to_int(lw, v, node)
    ndv = lw.value(nd_node)
    if not isinstance(ndv, ir.Const):
        return _round_run_time_digits(lw, v, ndv, node, nd_node)
    nd = ndv.value
    if not isinstance(nd, int) or isinstance(nd, bool) or not isinstance(ndv.type, T.Integer):
        raise lw.error("round()'s ndigits must be an integer", nd_node)
    if is_weak(v):
        return lw.pyconst(round(v.value, nd), node)
    if not isinstance(v.type, T.Float):
        if nd >= 0:
            return lw.cast(v, T.int64, node) if isinstance(v.type, T.Boolean) else v
        raise lw.error("round() of an integer with negative ndigits is not supported in kernels", node)
    ft = v.type
    if nd == 0:
        return in_float(lw, node, "round", [v], ft)
    # Python rounds the float64 value of x at decimal digit nd (correctly: round(1.7e308, 2) is
    # 1.7e308, never inf); float32/float16 round that float64 result, as np.float32(round(x, nd))
    r = intrinsic(lw, "round", [lw.cast(v, T.float64, node)], T.float64, node, ndigits=nd)
    return lw.cast(r, ft, node)


def _round_to_int(lw, v, node):
    """``round(x)``: Python's int of ``x`` rounded half to even (int64; integers are themselves)."""
    if is_weak(v):
        try:
            r = round(v.value)
        except (ValueError, OverflowError) as e:  # round(inf), round(nan): as math.floor(inf)
            raise lw.error(f"round({v.value!r}): {e}", node) from None
        return lw.pyconst(r, node)
    if isinstance(v.type, T.Boolean):
        return lw.cast(v, T.int64, node)
    if isinstance(v.type, T.Integer):
        return v
    return lw.cast(in_float(lw, node, "round", [v], v.type), T.int64, node)


def _round_run_time_digits(lw, v, nd, node, nd_node):
    """``round(x, n)`` with ``n`` known at run time only: a float rounds as Python's (its
    float64 value, as the constant form); an integer with ``n >= 0`` is itself (numba gives
    the same), a negative ``n`` is refused as there."""
    if not isinstance(nd.type, (T.Integer, T.Boolean)):
        raise lw.error(f"round()'s ndigits must be an integer, not {nd.type}", nd_node)
    if not isinstance(v.type, T.Float):
        raise lw.error("round() of an integer with ndigits known only at run time is not supported in kernels "
                       "(a negative ndigits rounds it, which numba refuses)", node, "round a float: round(float(x), n)")
    r = intrinsic(lw, "round_digits", [lw.cast(v, T.float64, node), lw.cast(nd, T.int64, nd_node)], T.float64, node)
    return lw.cast(r, v.type, node)
