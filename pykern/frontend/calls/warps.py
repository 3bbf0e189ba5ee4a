"""numba.cuda's warp (wave) functions: ``syncwarp``, the shuffles, the votes, ``activemask``,
``lanemask_lt`` and ``match_any_sync``/``match_all_sync``. Lane masks are 64-bit: an AMD
wave has up to 64 lanes."""

from __future__ import annotations

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import bind, intrinsic, nargs, scalar, strong
from pykern.frontend.calls.registry import lowers
from pykern.lang import stubs

_ALL_LANES = (1 << 64) - 1


def _mask(lw, arg_node):
    m = lw.value(arg_node)
    if not isinstance(m.type, (T.Integer, T.Boolean)):
        raise lw.error(f"a lane mask must be an integer, not {m.type}", arg_node)
    return lw.cast(m, T.uint64, arg_node)


@lowers(stubs.syncwarp)
def _syncwarp(lw, node, which):
    a = bind(lw, node, ["mask"], {"mask": None}, which)
    mask = _mask(lw, a["mask"]) if "mask" in a else ir.Const(_ALL_LANES, T.uint64, lw.loc(node))
    return intrinsic(lw, "syncwarp", [mask], T.void, node)


@lowers(stubs.shfl_sync, stubs.shfl_up_sync, stubs.shfl_down_sync, stubs.shfl_xor_sync)
def _shfl(lw, node, which):
    nargs(lw, node, which, 3)
    mask = _mask(lw, node.args[0])
    val = strong(lw, scalar(lw, node.args[1], which), node)
    if isinstance(val.type, T.Complex):
        raise lw.error(f"{which}() of a complex value", node.args[1], "shuffle z.real and z.imag separately")
    lane = lw.value(node.args[2])
    if not isinstance(lane.type, (T.Integer, T.Boolean)):
        raise lw.error(f"{which}() lane argument must be an integer, not {lane.type}", node.args[2])
    return intrinsic(lw, which, [mask, val, lw.cast(lane, T.int32, node)], val.type, node)


@lowers(stubs.ballot_sync, stubs.all_sync, stubs.any_sync, stubs.eq_sync)
def _vote(lw, node, which):
    nargs(lw, node, which, 2)
    # numba-cuda's vote_sync typing: a bool mask (lane 0 alone) or a float predicate is
    # almost always a swapped argument pair, so both are refused rather than converted
    m = lw.value(node.args[0])
    if not isinstance(m.type, T.Integer):
        raise lw.error(f"Mask type must be an integer, not {m.type}", node.args[0])
    mask = lw.cast(m, T.uint64, node.args[0])
    p = lw.value(node.args[1])
    if not isinstance(p.type, (T.Integer, T.Boolean)):
        raise lw.error(f"Predicate must be an integer or boolean, not {p.type}", node.args[1],
                       hint=f"compare it: {which}(mask, x != 0)")
    pred = lw.cast(p, T.boolean, node.args[1])
    return intrinsic(lw, which, [mask, pred], T.uint64 if which == "ballot_sync" else T.boolean, node)


@lowers(stubs.activemask, stubs.lanemask_lt)
def _lane_mask(lw, node, which):
    nargs(lw, node, which, 0)
    return intrinsic(lw, which, [], T.uint64, node)


_MATCH_TYPES = (T.int32, T.int64, T.uint32, T.uint64, T.float32, T.float64)


@lowers(stubs.match_any_sync, stubs.match_all_sync)
def _match(lw, node, which):
    """``match_any_sync(mask, value)`` / ``match_all_sync(mask, value)``: pykern device
    functions over shuffles and ballots (``pykern/lang/warp.py``)."""
    nargs(lw, node, which, 2)
    mask = _mask(lw, node.args[0])
    val = strong(lw, scalar(lw, node.args[1], which), node)
    if val.type not in _MATCH_TYPES:
        raise lw.error(f"{which}() takes a 32- or 64-bit integer or float, not {val.type}", node.args[1])
    dev = getattr(stubs.DEVICE_LIBRARIES["warp"], which)
    fn = lw.mb.device_function(dev.py_func, [T.uint64, val.type], lw.loc(node))
    return ir.Call(fn.name, [mask, val], fn.return_type, lw.loc(node))
