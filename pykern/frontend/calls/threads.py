"""numba.cuda's thread positions, barriers and fences: ``cuda.grid(n)``, ``cuda.gridsize(n)``,
``syncthreads*``, ``threadfence*``, ``nanosleep``; and the kernel-language names that are
values or namespaces, not functions (``cuda.threadIdx()``, ``cuda.warpsize()``).

Example: ``cuda.grid(1)`` is
``((int64(@block_idx(axis=0)) * int64(@block_dim(axis=0))) + int64(@thread_idx(axis=0)))``.
"""

from __future__ import annotations

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import intrinsic, nargs
from pykern.frontend.calls.registry import lowers, lowers_each, lowers_kind
from pykern.lang import stubs


@lowers(stubs.grid, stubs.gridsize)
def _grid(lw, node, which):
    nargs(lw, node, which, 1)
    n = lw.const_value(node.args[0], f"the argument of {which}()")
    if not isinstance(n, int) or isinstance(n, bool) or n not in (1, 2, 3):
        raise lw.error(f"{which}(n) takes n = 1, 2 or 3, got {n!r}", node.args[0])

    def i64(name, axis):
        return ir.Cast(intrinsic(lw, name, [], T.int32, node, axis=axis), T.int64, lw.loc(node))

    loc = lw.loc(node)
    parts = []
    for axis in range(n):
        if which == "grid":
            prod = ir.BinOp("*", i64("block_idx", axis), i64("block_dim", axis), T.int64, loc)
            parts.append(ir.BinOp("+", prod, i64("thread_idx", axis), T.int64, loc))
        else:
            parts.append(ir.BinOp("*", i64("block_dim", axis), i64("grid_dim", axis), T.int64, loc))
    if n == 1:
        return parts[0]
    return ir.TupleExpr(parts, T.Tuple((T.int64,) * n), loc)


@lowers(stubs.warpsize, stubs.laneid)
def _value_called(lw, node, which):
    raise lw.error(f"'{which}' is a value, not a function", node, f"write {which} without ()")


@lowers_kind(lambda f: isinstance(f, stubs.Stub))
def _not_a_function(lw, f, node, name):
    # the stubs no module registers: threadIdx & co., namespaces, cooperative groups
    raise lw.error(f"'{name}' cannot be called", node)


@lowers_each({getattr(stubs, n): n for n in ("syncthreads", "threadfence", "threadfence_block", "threadfence_system")})
def _barrier(lw, node, which, name):
    nargs(lw, node, which, 0)
    return intrinsic(lw, name, [], T.void, node)


@lowers_each({getattr(stubs, n): n for n in ("syncthreads_count", "syncthreads_and", "syncthreads_or")})
def _barrier_predicate(lw, node, which, name):
    nargs(lw, node, which, 1)
    return intrinsic(lw, name, [lw.cond(node.args[0])], T.int32, node)


@lowers(stubs.nanosleep)
def _nanosleep(lw, node, which):
    nargs(lw, node, which, 1)
    ns = lw.value(node.args[0])
    if not isinstance(ns.type, (T.Integer, T.Boolean)):
        raise lw.error(f"{which}() takes an integer number of nanoseconds, not {ns.type}", node.args[0])
    return intrinsic(lw, "nanosleep", [lw.cast(ns, T.uint32, node)], T.void, node)
