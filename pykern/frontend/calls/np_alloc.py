"""numpy's array makers in kernels: ``np.zeros((4, 4), np.float32)``, ``np.full(3, x)``,
``np.empty_like(sA)``, ``np.copy(a)``/``a.copy()``. Each is a per-thread local array (numba.cuda's
NRT allocates it on the heap), so its shape must be known at compile time; zeros/ones/full are
filled where the call runs."""

from __future__ import annotations

import numpy as np

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import bind, nargs, strong
from pykern.frontend.calls.memory import shape_of
from pykern.frontend.calls.registry import lowers, lowers_each, lowers_method

_NP_ALLOC = {np.empty: "empty", np.zeros: "zeros", np.ones: "ones", np.full: "full",
             np.empty_like: "empty_like", np.zeros_like: "zeros_like", np.ones_like: "ones_like",
             np.full_like: "full_like"}


@lowers_each(_NP_ALLOC)
def _np_alloc(lw, node, name, which):
    like = which.endswith("_like")
    kind = which[:-5] if like else which
    names = (["a"] if like else ["shape"]) + (["fill_value"] if kind == "full" else []) + ["dtype"]
    a = bind(lw, node, names, {"dtype": None}, name)
    if like:
        shape, dtype = _shape_like(lw, node, name, a["a"])
    else:
        shape = shape_of(lw, a["shape"], name, allow_zero=False)
        dtype = T.float64
    fill = lw.value(a["fill_value"]) if kind == "full" else None
    if a.get("dtype") is not None:
        dtype = lw.dtype_arg(a["dtype"])
    elif kind == "full" and not like:
        dtype = strong(lw, fill, node).type  # numpy: np.full(3, 7) is int64, np.full(3, 2.5) float64
    if isinstance(dtype, T.Record):
        raise lw.error(f"{name}() of records is not supported in kernels", node, hint="use cuda.local.array")
    lw.alloc_count += 1
    t = T.Array(dtype, len(shape), "C", "local")
    arr = lw.temp(ir.AllocArray(f"{lw.name}__local{lw.alloc_count}", "local", tuple(shape), t, lw.loc(node)), node)
    lw.__dict__.setdefault("fixed_shapes", {})[arr.name] = tuple(shape)  # z = np.zeros(...): z's shape is known
    if kind != "empty" and 0 not in shape:
        from pykern.frontend.slice_store import store

        value = fill if kind == "full" else lw.const({"zeros": 0, "ones": 1}[kind], dtype, node)
        store(lw, arr, value, node)
    return arr


def _shape_like(lw, node, name, arg):
    """The shape and element type of ``np.*_like``'s array argument ``arg``."""
    src = lw.value(arg)
    if not isinstance(src.type, T.Array):
        raise lw.error(f"{name}() in kernels takes an array, not a {src.type}", arg)
    from pykern.frontend.slice_store import static_shape

    shape = static_shape(lw, src)
    if shape is None or None in shape:
        raise lw.error(f"{name}() in a kernel needs an array whose shape is known at compile time "
                       "(a local, shared or constant array)", node,
                       hint="kernels allocate per-thread arrays of a fixed size: "
                       "np.zeros((N, M), dtype) with constant N, M, or cuda.local.array")
    return shape, src.type.dtype


@lowers(np.copy)
def _np_copy(lw, node, name):
    nargs(lw, node, name, 1)
    return copy_array(lw, node, lw.value(node.args[0]))


@lowers_method("array", "copy")
def _copy_method(lw, node, name, a):
    nargs(lw, node, "copy", 0)
    return copy_array(lw, node, a)


def copy_array(lw, node, src: ir.Expr) -> ir.Var:
    """``a.copy()``/``np.copy(a)`` of an array whose shape is known at compile time (a global
    numpy array, a fresh local or shared array): a new local array of that shape, as numba's
    copy makes a new array (which numba.cuda can only do with its NRT); other arrays' sizes
    are known only at run time, and a kernel cannot allocate."""
    shape = src.shape if isinstance(src, (ir.ConstArray, ir.AllocArray)) and src.shape != (0,) else None
    if shape is None:
        raise lw.error(f"cannot copy a {src.type} in a kernel: its shape is known only at run time, and kernels "
                       "cannot allocate", node, "copy into a cuda.local.array of a constant shape: "
                       "tmp = cuda.local.array(N, dtype); tmp[:] = a")
    lw.alloc_count += 1
    t = T.Array(src.type.dtype, len(shape), "C", "local")
    dst = lw.temp(ir.AllocArray(f"{lw.name}__local{lw.alloc_count}", "local", tuple(shape), t, lw.loc(node)), node)
    lw.store_view(dst, src, node)
    return dst
