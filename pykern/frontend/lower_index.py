"""Indexing: ``a[i, j]``, ``a[i]`` of an n-d array (``PartialIndex``), slices and views,
``t[k]`` of tuples (constant or run-time), store targets; the ``FunctionLowerer``
mixin ``IndexLowering``. Array indices become int64, constant negative ones wrap
as in Python."""

from __future__ import annotations

import ast
import enum

import numpy as np

from pykern.frontend import ir
from pykern.frontend import records
from pykern.frontend import types as T
from pykern.frontend.values import ArrayFlat, NeedsConstant, PartialIndex, PyObj, is_pure


def selectable_tuple(t: T.Tuple) -> bool:
    """A tuple whose elements all have one scalar or array type, or one type of tuples of such
    (``W = ((1, 2, 1), (2, 4, 2), ...)``): ``t[i]`` with a run-time ``i`` (and ``for x in t``) is a
    chain of selects, per component for tuple elements (numba indexes any UniTuple at run time)."""
    return bool(t.elems) and all(e == t.elems[0] for e in t.elems) and _selectable_elem(t.elems[0])


def _selectable_elem(e: T.Type) -> bool:
    if isinstance(e, T.Tuple) and not isinstance(e, (T.NoneType, T.Optional)):
        return bool(e.elems) and all(_selectable_elem(x) for x in e.elems)
    return e.is_scalar or isinstance(e, T.Array)


class IndexLowering:
    """Subscripts of arrays and tuples, as loads, views and store targets."""

    def flat_item(self, arr, node):
        """``a.flat[k]``: the k-th element in C order (an int ``k``; negative counts from the end).
        Out of range it is an out-of-bounds access, checked under ``debug=True`` as ``a[i]`` is."""
        if isinstance(node.slice, ast.Slice):
            raise self.error("a.flat[...] with a slice is not supported in kernels", node, "index it with an integer")
        k = self.value(node.slice)
        if not isinstance(k.type, (T.Integer, T.Boolean)) or T.is_datetime(k.type):
            raise self.error(f"a.flat index must be an integer, not {k.type}", node.slice)
        loc = self.loc(node)
        i64 = T.int64
        size = ir.ArrayAttr(arr, "size", None, i64, loc)
        k = self.once(self.cast(k, i64, node), node)
        k = self.once(ir.IfExp(ir.Compare("<", k, ir.Const(0, i64, loc), T.boolean, loc),
                               ir.BinOp("+", k, size, i64, loc), k, i64, loc), node)
        dims = [self.once(ir.ArrayAttr(arr, "shape", d, i64, loc), node) for d in range(arr.type.ndim)]
        parts = self.unravel(k, dims, loc)
        # the first index unwrapped (k // the inner extents), so that an out-of-range k stays out of range
        inner = None
        for d in dims[1:]:
            inner = d if inner is None else ir.BinOp("*", inner, d, i64, loc)
        parts[0] = k if inner is None else ir.BinOp("//", k, inner, i64, loc)
        parts = [self.once(p, node) for p in parts]
        return self.element_at(arr, self.normalize_indices(arr, parts, node), loc)

    def expr_Subscript(self, node):
        base = self.expr(node.value)
        pre = []
        if isinstance(base, PartialIndex):
            base, pre = base.array, base.indices
        elif isinstance(base, PyObj) and isinstance(base.value, ArrayFlat):
            return self.flat_item(base.value.array, node)
        elif isinstance(base, PyObj):
            v = base.value
            key_val = None if isinstance(node.slice, ast.Slice) or not isinstance(v, tuple) else self.expr(node.slice)
            if isinstance(key_val, ir.Expr) and not isinstance(key_val, ir.Const):
                base = self.to_ir(base, node.value)  # run-time index of a frozen tuple
            elif isinstance(v, type) and issubclass(v, enum.Enum):
                return self.enum_member(base, node)
            elif isinstance(v, tuple):
                key = self.const_index(node.slice, "a tuple index")
                try:
                    return PyObj(v[key], f"{base.name}[{key}]")
                except IndexError:
                    raise self.error(f"tuple index {key} out of range for '{base.name}' of length {len(v)}", node) from None
            else:
                base = self.to_ir(base, node.value)
        t = base.type
        if records.is_record_ref(t) and records.field_key(node.slice) is not None:
            return records.read(self, base, records.field_name(self, t, node.slice, node), node)  # r['x'], r[0]
        if isinstance(t, T.Array):
            idx = pre + self.index_exprs(node.slice, allow_slices=True)
            if len(idx) > t.ndim:
                raise self.error(f"too many indices for a {t.ndim}-d array: {len(idx)}", node)
            if any(isinstance(i, ir.Slice) for i in idx):
                return self.array_view(base, idx, node)
            if len(idx) < t.ndim:
                return PartialIndex(base, idx, node)
            if isinstance(t.dtype, T.Record):
                return self.array_view(base, idx, node)  # a record element is a reference (numba)
            return ir.Load(base, self.normalize_indices(base, idx, node), t.dtype, self.loc(node))
        if isinstance(t, T.Tuple):
            dyn = self.dynamic_tuple_index(base, node)
            if dyn is not None:
                return dyn
            key = self.const_index(node.slice, "a tuple index")
            n = len(t.elems)
            if isinstance(key, slice):
                ks = range(n)[key]
                return ir.TupleExpr(
                    [self.tuple_get(base, k, node) for k in ks], T.Tuple(tuple(t.elems[k] for k in ks)), self.loc(node)
                )
            if not -n <= key < n:
                raise self.error(f"tuple index {key} out of range for a tuple of length {n}", node)
            return self.tuple_get(base, key % n, node)
        raise self.error(f"cannot index a {t}", node, "only arrays and tuples can be indexed")

    def array_view(self, arr: ir.Expr, items: list, node) -> ir.ArrayView:
        """``arr[items]`` as a view: items are index expressions (not yet cast)
        or ``ir.Slice``s with int64 parts."""
        out = []
        for it in items:
            if not isinstance(it, ir.Slice):
                if not isinstance(it.type, (T.Integer, T.Boolean)):
                    raise self.error(f"array index must be an integer, not {it.type}", node, "convert with int(x)")
                it = self.cast(it, T.int64, node)
            out.append(it)
        return ir.ArrayView(arr, out, ir.view_type(arr.type, out), self.loc(node))

    def slice_item(self, node: ast.Slice) -> ir.Slice:
        parts = []
        for p in (node.lower, node.upper, node.step):
            if p is None or (isinstance(p, ast.Constant) and p.value is None):
                parts.append(None)
                continue
            v = self.value(p)
            if not isinstance(v.type, (T.Integer, T.Boolean)):
                raise self.error(f"slice bounds must be integers, not {v.type}", p, "convert with int(x)")
            parts.append(self.cast(v, T.int64, p))
        return ir.Slice(*parts, loc=self.loc(node))

    def index_exprs(self, node, allow_slices: bool = False) -> list:
        """The index expressions of ``a[...]`` (not yet cast); with ``allow_slices``
        a slice item becomes an ``ir.Slice``."""
        if isinstance(node, ast.Slice):
            if allow_slices:
                return [self.slice_item(node)]
            raise self.error("a slice cannot be used here: an element index is needed", node)
        if isinstance(node, ast.Tuple):
            out = []
            for e in node.elts:
                out.extend(self.index_exprs(e, allow_slices))
            return out
        v = self.value(node)
        if isinstance(v.type, T.Array) and v.type.ndim == 0 and isinstance(v.type.dtype, T.Integer):
            # numba indexes with a 0-d integer array's value (``ary[i]`` of ``np.asarray(1)``)
            return [ir.Load(v, [], v.type.dtype, self.loc(node))]
        if isinstance(v.type, T.Tuple):
            if not isinstance(v, (ir.TupleExpr, ir.Var)) and not is_pure(v):
                v = self.temp(v, node)
            return [self.tuple_get(v, k, node) for k in range(len(v.type.elems))]
        return [v]

    def normalize_indices(self, arr: ir.Expr, idx: list, node) -> list:
        out = []
        for d, i in enumerate(idx):
            if not isinstance(i.type, (T.Integer, T.Boolean)):
                raise self.error(f"array index must be an integer, not {i.type}", node, "convert with int(x)")
            if isinstance(i, ir.Const) and i.value < 0:
                # wrap constant negative indices like Python: a[-1] is the last element
                i = ir.BinOp(
                    "+", ir.ArrayAttr(arr, "shape", d, T.int64, i.loc), self.const(i.value, T.int64, node), T.int64, i.loc
                )
            out.append(self.cast(i, T.int64, node))
        return out

    def store_target(self, target: ast.Subscript, views: bool = False):
        """``(array, indices)`` of the element ``target`` names; with ``views``, a
        slice or row target (``a[1:3]``, ``a[i, :]``, ``a[i]`` of a 2-d ``a``) is
        ``(view, None)`` (``slice_store`` writes it)."""
        base = self.expr(target.value)
        pre = []
        if isinstance(base, PartialIndex):
            base, pre = base.array, base.indices
        base = self.to_ir(base, target.value)
        if records.is_record_ref(base.type) and records.field_key(target.slice) is not None:
            return records.target(self, base, records.field_name(self, base.type, target.slice, target),
                                  target)  # r['x'] = v, r[0] = v
        if not isinstance(base.type, T.Array):
            raise self.error(f"cannot assign to an element of a {base.type}", target, "only array elements can be assigned")
        idx = pre + self.index_exprs(target.slice, allow_slices=views)
        if views and len(idx) <= base.type.ndim and (
                len(idx) < base.type.ndim or any(isinstance(i, ir.Slice) for i in idx)):
            return self.array_view(base, idx, target), None
        if len(idx) > base.type.ndim:
            raise self.error(f"too many indices for a {base.type.ndim}-d array: {len(idx)}", target)
        if len(idx) < base.type.ndim:
            raise self.error(
                f"{base.type.ndim}-d array needs {base.type.ndim} indices to assign an element, got {len(idx)}",
                target,
            )
        return base, self.normalize_indices(base, idx, target)

    def enum_member(self, cls: PyObj, node):
        """``Color["red"]``: the member named by a constant string, as ``Color.red``."""
        key = node.slice.value if isinstance(node.slice, ast.Constant) else None
        if not isinstance(key, str):
            raise self.error(f"enum '{cls.name}' can only be indexed by a member name in quotes", node,
                             f"{cls.name}[\"name\"] or {cls.name}.name")
        try:
            return PyObj(cls.value[key], f"{cls.name}.{key}")
        except KeyError:
            raise self.error(f"enum '{cls.name}' has no member '{key}'", node) from None

    def dynamic_tuple_index(self, tup: ir.Expr, node):
        """``t[i]`` with a run-time ``i`` on a tuple of one scalar type: a select chain."""
        if isinstance(node.slice, ast.Slice):
            return None
        idx = self.expr(node.slice)
        if not isinstance(idx, ir.Expr) or isinstance(idx, ir.Const):
            return None
        t = tup.type
        if not selectable_tuple(t):
            raise self.error(
                f"a {t} can only be indexed by a constant", node,
                "index tuples of one scalar, array or tuple type, or use constants",
            )
        if not isinstance(idx.type, (T.Integer, T.Boolean)):
            raise self.error(f"tuple index must be an integer, not {idx.type}", node.slice)
        if not is_pure(tup) or not is_pure(idx):
            raise self.error("indexing a tuple by a run-time value with side effects", node, "assign it to a variable first")
        idx = self.cast(idx, T.int64, node)
        if self.mb.debug:
            self.check_tuple_index(idx, len(t.elems), node)
        return self.select_tuple_elem(tup, idx, node, wrap=True)

    def check_tuple_index(self, idx: ir.Expr, n: int, node):
        """debug=True: an index outside ``-n <= idx < n`` raises numba's IndexError
        ("tuple index out of range"); without debug the select chain gives the last element."""
        loc = self.loc(node)
        idx = self.once(idx, node)
        outside = ir.BoolOp("or", [ir.Compare("<", idx, ir.Const(-n, T.int64, loc), T.boolean, loc),
                                   ir.Compare(">=", idx, ir.Const(n, T.int64, loc), T.boolean, loc)], T.boolean, loc)
        fail = ir.Intrinsic("index_error", [idx, ir.Const(n, T.int64, loc)], T.void,
                            {"message": "tuple index out of range"}, loc)
        self.emit(ir.If(outside, [ir.ExprStmt(fail, loc)], [], loc))

    def select_tuple_elem(self, tup: ir.Expr, i: ir.Expr, node, wrap: bool = False) -> ir.Expr:
        """``tup[i]`` for an int64 run-time ``i`` as a chain of selects."""
        t = tup.type
        n = len(t.elems)
        loc = self.loc(node)
        if wrap:
            i = self.wrap_negative(i, n, loc)

        def select(item, et):  # item(k): element k of tup, or a component of it, of type et
            if isinstance(et, T.Tuple):  # a tuple element: a tuple of selects, one per component
                comps = [select(lambda k, j=j: self.tuple_get(item(k), j, node), x) for j, x in enumerate(et.elems)]
                return ir.TupleExpr(comps, et, loc)
            result = item(n - 1)
            for k in range(n - 2, -1, -1):
                test = ir.Compare("==", i, ir.Const(k, T.int64, loc), T.boolean, loc)
                result = ir.IfExp(test, item(k), result, et, loc)
            return result

        return select(lambda k: self.tuple_get(tup, k, node), t.elems[0])

    @staticmethod
    def wrap_negative(i, n, loc):
        # negative indices count from the end, as in Python
        return ir.IfExp(
            ir.Compare("<", i, ir.Const(0, T.int64, loc), T.boolean, loc),
            ir.BinOp("+", i, ir.Const(n, T.int64, loc), T.int64, loc),
            i,
            T.int64,
            loc,
        )

    def tuple_get(self, tup: ir.Expr, k: int, node) -> ir.Expr:
        if isinstance(tup, ir.TupleExpr) and all(is_pure(e) for e in tup.elems):
            return tup.elems[k]
        return ir.TupleGet(tup, k, tup.type.elems[k], self.loc(node))

    def const_index(self, node, what: str):
        if isinstance(node, ast.Slice):
            parts = [None if p is None else self.const_index(p, what) for p in (node.lower, node.upper, node.step)]
            return slice(*parts)
        v = self.expr(node)
        if isinstance(v, PyObj) and isinstance(v.value, (int, np.integer)) and not isinstance(v.value, bool):
            return int(v.value)
        if isinstance(v, ir.Const) and isinstance(v.type, T.Integer):
            return int(v.value)
        raise NeedsConstant(f"{what} must be a constant integer", self.loc(node),
                            "tuples can only be indexed by constants, e.g. t[0] or t[-1]")
