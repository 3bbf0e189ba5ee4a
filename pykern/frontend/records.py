"""Record (numpy structured dtype) access in kernels: ``r = a[i]``, ``r.x``,
``a[i].y``, ``a[i]['x']``, ``r.x += 1``, nested records and arrays inside records.

A record value is a reference to its memory -- a 0-d array of a ``T.Record``
(``is_record_ref``) -- so that writes through it change the array element, as
in numba. A field is an ``ir.RecordField`` view: loads and stores go through
it with the alignment the field is known to have (1 in packed records).

Example::

    r = a[i]          # ArrayView(a, [i]): Record(x:float32@0, ...)[]
    r.x += 1          # Store(RecordField(r, "x"), [], Load(RecordField(r, "x"), []) + 1)
"""

from __future__ import annotations

import itertools

from . import ir
from . import types as T


def is_record_ref(t) -> bool:
    return isinstance(t, T.Array) and t.ndim == 0 and isinstance(t.dtype, T.Record)


def base_align(e: ir.Expr) -> int:
    """Alignment known for the address of record reference ``e``."""
    if isinstance(e, ir.RecordField):
        return e.align
    return e.type.dtype.align  # an element of a record array (numpy aligns arrays to dtype.alignment)


def _natural(t) -> int:
    if isinstance(t, T.NestedArray):
        return _natural(t.dtype)
    if isinstance(t, T.Record):
        return t.align
    if isinstance(t, T.Complex):
        return t.nbytes // 2
    return t.nbytes


def field_view(lw, base: ir.Expr, name: str, node, direct: bool = False) -> ir.RecordField:
    """The view of field ``name`` of record reference ``base``. ``direct``: the view is only
    loaded from and stored to here (each access carries its alignment), so an array field
    of a packed record, whose view could not be passed on, is allowed."""
    rt = base.type
    r = ir.record_field_type(rt, name)
    if r is None:
        names = ", ".join(n for n, _, _ in rt.dtype.fields)
        raise lw.error(f"the record has no field '{name}'", node, f"its fields: {names}")
    vt, off, ft = r
    align = base_align(base)
    while align > 1 and off % align:
        align //= 2
    if isinstance(ft, T.NestedArray) and align < _natural(ft.dtype) and not direct:
        raise lw.error(f"array field '{name}' is not aligned (offset {off} in a packed record)", node,
                       "use an aligned dtype (np.dtype(..., align=True)) for records with array fields")
    if isinstance(ft, T.NestedArray):
        # what every element's address has: elements follow at their own size, so an 8-aligned
        # float32[4] field has 4-aligned elements (a load claiming 8 could be merged wrongly)
        align = min(align, _natural(ft.dtype))
    elif not isinstance(ft, T.Record):
        align = min(align, _natural(ft))
    return ir.RecordField(base, name, off, max(align, 1), vt, lw.loc(node))


def read(lw, base: ir.Expr, name: str, node) -> ir.Expr:
    """``base.name`` as a value: a scalar field is loaded; a record or array field is a view."""
    v = field_view(lw, base, name, node)
    t = v.type
    if t.ndim == 0 and not isinstance(t.dtype, T.Record):
        return ir.Load(v, [], t.dtype, lw.loc(node))
    return v


def target(lw, base: ir.Expr, name: str, node):
    """``(view, [])`` to store into ``base.name`` (a scalar field)."""
    v = field_view(lw, base, name, node)
    if v.type.ndim != 0 or isinstance(v.type.dtype, T.Record):
        what = "a record" if v.type.ndim == 0 else "an array"
        raise lw.error(f"cannot assign to field '{name}': it is {what}", node,
                       "assign its elements or fields one by one")
    return v, []


def copy(lw, dst: ir.Expr, src: ir.Expr, node):
    """``dst = src`` of two references to records of one dtype: every scalar (of nested
    records and of arrays inside the record too) loaded from ``src`` and stored to ``dst``."""
    loc = lw.loc(node)
    for name, _, _ in dst.type.dtype.fields:
        d, s = field_view(lw, dst, name, node, direct=True), field_view(lw, src, name, node, direct=True)
        t = d.type
        if t.ndim == 0 and isinstance(t.dtype, T.Record):
            copy(lw, d, s, node)
            continue
        if isinstance(t.dtype, T.Record):
            raise lw.error(f"cannot copy field '{name}': arrays of records inside records are not supported", node)
        shape = dst.type.dtype.field(name)[0].shape if t.ndim else ()
        for k in itertools.product(*(range(n) for n in shape)):
            idx = [ir.Const(i, T.int64, loc) for i in k]
            lw.emit(ir.Store(d, idx, ir.Load(s, idx, t.dtype, loc), loc))
