"""numba.cuda's cooperative groups: ``cg.this_grid()``, ``cg.this_thread_block()`` and a
group's ``.sync()``, ``.size`` and ``.thread_rank`` (int64: all threads of the grid or block,
and this thread's linear rank in it)."""

from __future__ import annotations

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import intrinsic, nargs
from pykern.frontend.calls.registry import lowers_each
from pykern.frontend.values import PyObj
from pykern.lang import stubs

#: what ``g.sync`` of each group is: a kernel-language function of its own
GRID_SYNC = stubs.Stub("cg.grid_group.sync", "g.sync(): wait for every thread of the cooperative launch.")
BLOCK_SYNC = stubs.Stub("cg.thread_block.sync", "g.sync(): syncthreads().")


@lowers_each({stubs.cg.this_grid: stubs._GRID_GROUP, stubs.cg.this_thread_block: stubs._BLOCK_GROUP})
def _this_group(lw, node, which, group):
    nargs(lw, node, which, 0)
    return PyObj(group, which + "()")


@lowers_each({GRID_SYNC: "grid_sync", BLOCK_SYNC: "syncthreads"})
def _group_sync(lw, node, which, barrier):
    nargs(lw, node, which, 0)
    return intrinsic(lw, barrier, [], T.void, node)


def group_attr(lw, group, attr, node):
    """``g.sync`` (a callable), ``g.size``, ``g.thread_rank`` of a cooperative group."""
    grid = group is stubs._GRID_GROUP
    if attr == "sync":
        return PyObj(GRID_SYNC if grid else BLOCK_SYNC, "sync")
    loc = lw.loc(node)

    def reg(name, axis):
        return ir.Cast(intrinsic(lw, name, [], T.int32, node, axis=axis), T.int64, loc)

    def mul(a, c):
        return ir.BinOp("*", a, c, T.int64, loc)

    def add(a, c):
        return ir.BinOp("+", a, c, T.int64, loc)

    bsize = mul(mul(reg("block_dim", 0), reg("block_dim", 1)), reg("block_dim", 2))
    brank = add(mul(add(mul(reg("thread_idx", 2), reg("block_dim", 1)), reg("thread_idx", 1)), reg("block_dim", 0)),
                reg("thread_idx", 0))
    if attr == "size":
        return mul(bsize, mul(mul(reg("grid_dim", 0), reg("grid_dim", 1)), reg("grid_dim", 2))) if grid else bsize
    if attr == "thread_rank":
        if not grid:
            return brank
        block = add(mul(add(mul(reg("block_idx", 2), reg("grid_dim", 1)), reg("block_idx", 1)), reg("grid_dim", 0)),
                    reg("block_idx", 0))
        return add(mul(block, bsize), brank)
    raise lw.error(f"a cooperative group has no attribute '{attr}'", node, "use .sync(), .size or .thread_rank")
