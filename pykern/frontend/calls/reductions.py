"""Whole-array reductions in kernels: ``np.sum(a)``, ``a.max()``, ``np.nanmean(a)``,
``np.median(a)``...: a call of the device function ``pykern/lang/array_reductions.py``
generates per (reduction, ndim, result type, element kind), typed as numba types the result."""

from __future__ import annotations

import numpy as np

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.registry import lowers_each, lowers_method
from pykern.lang import stubs

_NP_REDUCTIONS = {
    np.sum: "sum", np.prod: "prod", np.min: "min", np.amin: "min", np.max: "max", np.amax: "max",
    np.mean: "mean", np.var: "var", np.std: "std", np.all: "all", np.any: "any",
    np.argmin: "argmin", np.argmax: "argmax", np.median: "median",
    np.nansum: "nansum", np.nanprod: "nanprod", np.nanmin: "nanmin", np.nanmax: "nanmax",
    np.nanmean: "nanmean", np.nanvar: "nanvar", np.nanstd: "nanstd",
}  # fmt: skip
#: reductions that are also array methods (``a.sum()``), as numba types them
_METHODS = ("sum", "prod", "min", "max", "mean", "var", "std", "all", "any", "argmin", "argmax")
_ORDERED_ONLY = ("min", "max", "argmin", "argmax", "nanmin", "nanmax", "median")


def _reduction_type(which, dt):
    """numba's result type of reduction ``which`` of ``dt`` elements (for var/std: the mean's type;
    the real part of it is theirs)."""
    if which in ("all", "any"):
        return T.boolean
    if which in ("argmin", "argmax"):
        return T.int64
    if which in ("min", "max", "nanmin", "nanmax", "pymin", "pymax"):
        return dt
    if which in ("sum", "prod", "nansum", "nanprod"):  # integers widen to 64 bits, as numba's sum
        if isinstance(dt, T.Boolean) or (isinstance(dt, T.Integer) and dt.signed):
            return T.int64
        return T.uint64 if isinstance(dt, T.Integer) else dt
    return T.float64 if isinstance(dt, (T.Integer, T.Boolean)) else dt


@lowers_each(_NP_REDUCTIONS)
def _np_reduction(lw, node, name, which):
    return _array_reduction(lw, node, name, which)


@lowers_method("array", *_METHODS)
def _method(lw, node, name, a):
    return _array_reduction(lw, node, name, name, a)


def _array_reduction(lw, node, name, which, base=None):
    """``np.sum(a)`` (``base`` None) or ``a.sum()`` (``base``: ``a``) of a whole array."""
    if node.keywords or len(node.args) != (0 if base is not None else 1):
        raise lw.error(f"{name}() in kernels reduces a whole array: {name}(a) or a.{which}(); "
                       "axis=, dtype=, out= and other arguments are not supported", node,
                       hint="kernels cannot allocate the result array of a reduction along an axis; "
                       "loop over the axis instead")
    a = base if base is not None else lw.value(node.args[0])
    if not isinstance(a.type, T.Array):
        raise lw.error(f"{name}() in kernels takes an array, not a {a.type}", node.args[0] if node.args else node)
    return reduce_array(lw, node, name, which, a)


def reduce_array(lw, node, name, which, a):
    """The reduction ``which`` (``pymin``/``pymax``: Python's ``min``/``max`` iterating a 1-d
    array) of the array value ``a``."""
    dt = a.type.dtype
    kind = ("b" if isinstance(dt, T.Boolean) else "c" if isinstance(dt, T.Complex) else "f" if isinstance(dt, T.Float)
            else ("i" if dt.signed else "u") if isinstance(dt, T.Integer) else None)
    if kind is None or (kind == "c" and which in _ORDERED_ONLY):
        raise lw.error(f"{name}() of an array of {dt} is not supported in kernels", node,
                       hint="reductions take arrays of numbers (complex ones: sum, prod, mean, var, std, all, any)")
    lib = stubs.DEVICE_LIBRARIES["reductions"]
    dev = lib.device_function(which, a.type.ndim, str(_reduction_type(which, dt).np_dtype), kind)
    fn = lw.mb.device_function(dev.py_func, [a.type], lw.loc(node))
    return ir.Call(fn.name, [a], fn.return_type, lw.loc(node))
