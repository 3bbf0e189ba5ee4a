"""numba.cuda's ``cuda.atomic.*``: ``op(ary, idx, val)`` (``cas(ary, idx, old, val)``,
``compare_and_swap(ary, old, val)`` of a 1-d array's first element) returning the old value."""

from __future__ import annotations

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import nargs, scalar
from pykern.frontend.calls.registry import lowers_each
from pykern.lang import stubs

#: the IR's name of each atomic operation whose stub name differs
_IR_OP = {"and_": "and", "or_": "or", "compare_and_swap": "cas"}
_ATOMIC_TYPES = (T.int32, T.int64, T.uint32, T.uint64, T.float32, T.float64, T.float16)


@lowers_each({getattr(stubs.atomic, n): n for n in stubs._ATOMIC_NAMES})
def _atomic(lw, node, which, op):
    # compare_and_swap(ary, old, val) has no index, cas(ary, idx, old, val) two values
    nargs(lw, node, which, 4 if op == "cas" else 3)
    arr_node = node.args[0]
    idx_node = None if op == "compare_and_swap" else node.args[1]
    val_nodes = node.args[1:] if idx_node is None else node.args[2:]
    arr = lw.value(arr_node)
    at = arr.type
    if not isinstance(at, T.Array):
        raise lw.error(f"{which}() needs an array as its first argument, not a {at}", arr_node)
    if at.readonly or at.space == "const":
        raise lw.error(f"{which}() cannot modify a read-only array ({at})", arr_node)
    dt = at.dtype
    irop = _IR_OP.get(op, op)
    if dt not in _ATOMIC_TYPES:
        raise lw.error(
            f"{which}() does not support {dt} arrays", arr_node, "atomics work on int32/int64/uint32/uint64/float32/float64 (float16 where available)"
        )
    if irop in ("and", "or", "xor", "inc", "dec", "cas") and not isinstance(dt, T.Integer):
        raise lw.error(f"{which}() needs an integer array, not {at}", arr_node)
    if idx_node is None:
        if at.ndim != 1:
            raise lw.error(f"{which}() needs a 1-d array, not {at}", arr_node, "use atomic.cas(ary, idx, old, val)")
        idx = [ir.Const(0, T.int64, lw.loc(node))]
    else:
        idx = lw.index_exprs(idx_node)
        if len(idx) != at.ndim:
            raise lw.error(f"{which}() on a {at.ndim}-d array needs {at.ndim} indices, got {len(idx)}", idx_node)
        idx = lw.normalize_indices(arr, idx, idx_node)
    vals = []
    for vn in val_nodes:
        v = scalar(lw, vn, which)
        vals.append(lw.cast(v, dt, vn))
    return ir.Atomic(irop, arr, idx, vals, dt, lw.loc(node))
