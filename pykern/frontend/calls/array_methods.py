"""Array methods that make views or touch elements: ``a.transpose()``/``np.transpose(a)``,
``a.view(dtype)``, ``a.reshape(...)``, ``a.fill(v)``, ``a.item()`` (reductions are
``reductions``', ``a.copy()`` is ``np_alloc``'s)."""

from __future__ import annotations

import numpy as np

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import nargs
from pykern.frontend.calls.registry import lowers, lowers_method
from pykern.frontend.values import PyObj


@lowers(np.transpose)
def _np_transpose(lw, node, name):
    nargs(lw, node, name, 1)
    return _transpose(lw, node, name, lw.value(node.args[0]))


@lowers_method("array", "transpose")
def _transpose_method(lw, node, name, arr):
    nargs(lw, node, name, 0)
    return _transpose(lw, node, name, arr)


def _transpose(lw, node, name, arr):
    """``a.T``: only the reversed-axes form, no ``axes`` argument."""
    if not isinstance(arr.type, T.Array):
        raise lw.error(f"{name}() of a {arr.type}, not an array", node)
    return lw.transpose(arr, node)


@lowers_method("array", "view")
def _view(lw, node, name, arr):
    """``a.view(dtype)``: the array's bytes as items of another scalar type (numpy's
    view). Items of another size rescale the last axis, which must be contiguous
    (a "C" array: ``a[i:j]``, ``a[i, :]`` of one)."""
    nargs(lw, node, "view", 1)
    at = arr.type
    dt = lw.dtype_of(lw.expr(node.args[0]), node.args[0])
    if not dt.is_scalar:
        raise lw.error(f"view() needs a scalar dtype, not {dt}", node.args[0])
    if isinstance(at.dtype, T.Record):
        raise lw.error("view() of a record array is not supported in kernels", node)
    if dt.nbytes != at.dtype.nbytes and (at.ndim == 0 or at.layout != "C"):
        raise lw.error(f"view() as {dt} of a {at}: items of another size need a C-contiguous array", node,
                       "view a whole array or a row or unit-step slice of one")
    return ir.Reinterpret(arr, 0, False, ir.reinterpret_type(at, dt, False), lw.loc(node))


@lowers_method("array", "reshape")
def _reshape(lw, node, name, arr):
    """``a.reshape(shape)`` / ``a.reshape(d0, d1, ...)`` of a C-contiguous array (numba's):
    extents known at run time, one of them may be -1 (numpy's rule). A shape whose size
    differs from the array's gives an empty array (``debug=True``: ``KernelValueError``,
    numpy's ValueError)."""
    at = arr.type
    if node.keywords:
        raise lw.error("reshape() in kernels takes no keyword arguments", node)
    if at.ndim == 0 or at.layout != "C":
        raise lw.error(f"reshape() of a {at}: kernels reshape C-contiguous arrays only (as numba)", node,
                       "reshape the whole array, or a row or unit-step slice of a C-contiguous one")
    dims = [lw.once(lw.cast(d, T.int64, node), node) for d in _extents(lw, node)]
    arr = lw.once(arr, node)
    dims, ok = _resolved_extents(lw, node, arr, dims)
    loc = lw.loc(node)
    if lw.mb.debug:
        fail = ir.Intrinsic("value_error", [], T.void, {"message": "cannot reshape array: the total size "
                                                                   "of the new array must be unchanged"}, loc)
        lw.emit(ir.If(ok, [], [ir.ExprStmt(fail, loc)], loc))
    zero = ir.Const(0, T.int64, loc)
    dims = [lw.once(ir.IfExp(ok, d, zero, T.int64, loc), node) for d in dims]
    return ir.Reshape(arr, dims, at.with_(ndim=len(dims), layout="C"), loc)


def _extents(lw, node):
    """The new extents ``reshape``'s arguments give (a tuple, or one argument each)."""
    if len(node.args) == 1:
        v = lw.value(node.args[0])
        if isinstance(v.type, T.Tuple):
            v = lw.once(v, node)
            dims = [lw.tuple_get(v, k, node) for k in range(len(v.type.elems))]
        else:
            dims = [v]
    else:
        dims = [lw.value(a) for a in node.args]
    if not dims or len(dims) > 4:
        raise lw.error(f"reshape() to {len(dims)} dimensions: kernels take 1 to 4", node)
    for d in dims:
        if not isinstance(d.type, (T.Integer, T.Boolean)):
            raise lw.error(f"reshape() extents must be integers, not {d.type}", node)
    return dims


def _resolved_extents(lw, node, arr, dims):
    """The extents with a -1 replaced by what the size leaves (numpy's rule), and whether they
    are a valid shape of ``arr``'s size (at most one -1, none negative, the same size)."""
    loc = lw.loc(node)
    i64 = T.int64
    c = lambda v: ir.Const(v, i64, loc)  # noqa: E731
    size = lw.once(ir.ArrayAttr(arr, "size", None, i64, loc), node)
    known = c(1)  # the product of the extents other than -1
    negs = c(0)
    for d in dims:
        neg = ir.Compare("==", d, c(-1), T.boolean, loc)
        known = ir.BinOp("*", known, ir.IfExp(neg, c(1), d, i64, loc), i64, loc)
        negs = ir.BinOp("+", negs, ir.IfExp(neg, c(1), c(0), i64, loc), i64, loc)
    known, negs = lw.once(known, node), lw.once(negs, node)
    inferred = lw.once(ir.IfExp(ir.Compare("==", known, c(0), T.boolean, loc), c(0),
                                ir.BinOp("//", size, known, i64, loc), i64, loc), node)
    dims = [lw.once(ir.IfExp(ir.Compare("==", d, c(-1), T.boolean, loc), inferred, d, i64, loc), node) for d in dims]
    total = c(1)
    for d in dims:
        total = ir.BinOp("*", total, d, i64, loc)
    ok = [ir.Compare("<=", negs, c(1), T.boolean, loc), ir.Compare("==", total, size, T.boolean, loc)]
    ok += [ir.Compare(">=", d, c(0), T.boolean, loc) for d in dims]
    return dims, lw.once(ir.BoolOp("and", ok, T.boolean, loc), node)


@lowers_method("array", "fill")
def _fill(lw, node, name, arr):
    """``a.fill(v)``: numba's array method (``a[...] = v``, ``v`` cast to the element type), which
    numba.cuda compiles in kernels as it allocates nothing; it returns None."""
    nargs(lw, node, "fill", 1)
    v = lw.value(node.args[0])
    if not v.type.is_scalar or isinstance(arr.type.dtype, T.Record):
        raise lw.error(f"fill() of a {arr.type} takes a number, not a {v.type}", node)
    if arr.type.ndim == 0:
        raise lw.error("fill() of a 0-d array is not supported", node, "assign the element: a[()] = v")
    lw.store_view(arr, v, node)
    return PyObj(None, "None")


@lowers_method("array", "item")
def _item(lw, node, name, a):
    """``a.item()`` of a 0-d array (what ``np.nditer`` yields): its element."""
    nargs(lw, node, "item", 0)
    if a.type.ndim != 0 or isinstance(a.type.dtype, T.Record):
        raise lw.error(f"item() of a {a.type} array is not supported in kernels", node,
                       "item() reads a 0-d array (an element of np.nditer); index other arrays: a[i]")
    return ir.Load(a, [], a.type.dtype, lw.loc(node))
