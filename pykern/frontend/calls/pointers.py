"""numba's ``carray(ptr, shape, dtype=None)`` and ``farray``: an array in C (Fortran) order over
the memory a ``CPointer`` points to. The shape is an int or a tuple of ints, known at run time;
the extent is the caller's word, as in numba (nothing knows how far a raw pointer reaches)."""

from __future__ import annotations

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import bind
from pykern.frontend.calls.registry import lowers_each
from pykern.frontend.values import PyObj
from pykern.lang import stubs


@lowers_each({stubs.carray: "C", stubs.farray: "F"})
def _pointer_array(lw, node, name, order):
    fname = "carray" if order == "C" else "farray"
    a = bind(lw, node, ["ptr", "shape", "dtype"], {"dtype": None}, fname)
    ptr = lw.value(a["ptr"])
    pt = ptr.type
    if not isinstance(pt, T.CPointer):
        raise lw.error(f"{fname}() takes a pointer (a CPointer parameter), not a {pt}", a["ptr"],
                       "an array is already an array: slice or reshape it")
    if "dtype" in a:
        dv = lw.expr(a["dtype"])
        if not (isinstance(dv, PyObj) and dv.value is None):
            dt = lw.dtype_of(dv, a["dtype"])
            if dt != pt.dtype:
                raise lw.error(f"mismatching dtype '{dt}' for pointer type '{pt}'", a["dtype"])
    shape = lw.value(a["shape"])
    if isinstance(shape.type, T.Tuple):
        shape = lw.once(shape, a["shape"])
        dims = [lw.tuple_get(shape, k, node) for k in range(len(shape.type.elems))]
    else:
        dims = [shape]
    if not dims or len(dims) > T.MAX_NDIM or not all(isinstance(d.type, T.Integer) for d in dims):
        raise lw.error(f"invalid shape '{shape.type}' for {fname}(): an int or a tuple of 1 to {T.MAX_NDIM} ints",
                       a["shape"])
    dims = [lw.once(lw.cast(d, T.int64, node), node) for d in dims]
    loc = lw.loc(node)
    base = T.as_array(pt)
    if order == "C":
        return ir.Reshape(ptr, dims, base.with_(ndim=len(dims)), loc)
    c = ir.Reshape(ptr, dims[::-1], base.with_(ndim=len(dims)), loc)
    return ir.Transpose(c, ir.transpose_type(c.type), loc) if len(dims) > 1 else c
