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

import ast

from pykern.frontend import ir
from pykern.frontend import types as T


def is_record_ref(t) -> bool:
    return isinstance(t, T.Array) and t.ndim == 0 and isinstance(t.dtype, T.Record)


def field_key(index):
    """The constant of ``r['x']`` / ``r[0]`` (a field by name or by position), or None."""
    if isinstance(index, ast.Constant) and isinstance(index.value, (str, int)) and not isinstance(index.value, bool):
        return index.value
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub) and isinstance(index.operand, ast.Constant) \
            and type(index.operand.value) is int:
        return -index.operand.value
    return None


def field_name(lw, t: T.Array, index, node) -> str:
    """The field ``r[index]`` names: a name, or a position in the dtype's order (numpy's ``r[0]``)."""
    key = field_key(index)
    if isinstance(key, str):
        return key
    names = [n for n, _, _ in t.dtype.fields]
    if not -len(names) <= key < len(names):
        raise lw.error(f"record index {key} out of range: the record has {len(names)} fields", node)
    return names[key]


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
    loaded from and stored to here (each access carries the field's alignment); otherwise an
    array field of a packed record is an ``aligned=False`` array, whose element accesses
    claim alignment 1 wherever the view is passed on (numba's unaligned arrays)."""
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
        vt = vt.with_(aligned=False)  # passed on as an array: its elements are loaded with alignment 1
    if isinstance(ft, T.NestedArray):
        # what every element's address has: elements follow at their own size, so an 8-aligned
        # float32[4] field has 4-aligned elements (a load claiming 8 could be merged wrongly)
        align = min(align, _natural(ft.dtype))
    elif not isinstance(ft, T.Record):
        align = min(align, _natural(ft))
    return ir.RecordField(base, name, off, max(align, 1), vt, lw.loc(node))


def _no_charseq(lw, base: ir.Expr, name: str, node) -> None:
    r = ir.record_field_type(base.type, name)
    if r is not None and isinstance(r[2], T.CharSeq):
        raise lw.error(f"field '{name}' is a string ({r[2].text}): kernels cannot read or write string fields",
                       node, "copying the whole record (a[i] = a[j]) carries it along")


def read(lw, base: ir.Expr, name: str, node) -> ir.Expr:
    """``base.name`` as a value: a scalar field is loaded; a record or array field is a view."""
    _no_charseq(lw, base, name, node)
    v = field_view(lw, base, name, node)
    t = v.type
    if t.ndim == 0 and not isinstance(t.dtype, T.Record):
        return ir.Load(v, [], t.dtype, lw.loc(node))
    return v


def target(lw, base: ir.Expr, name: str, node):
    """``(view, [])`` to store into ``base.name`` (a scalar field); ``(view, None)`` for
    an array field (assigned as a slice is: every element) or a record field (every field)."""
    _no_charseq(lw, base, name, node)
    v = field_view(lw, base, name, node)
    if v.type.ndim != 0 or isinstance(v.type.dtype, T.Record):
        return v, None  # an array or record field: every element or field is written
    return v, []


def copy(lw, dest: ir.Expr, src: ir.Expr, node) -> None:
    """``a[i] = b[j]``, ``a[i] = r`` of records of one dtype (numba copies the record):
    field by field -- nested records recursively, array fields as slices are assigned --
    each field read before it is written. The field views are only loaded from
    and stored to, so array fields of packed records are copied too."""
    if dest.type.dtype != src.type.dtype:
        raise lw.error(f"cannot assign a record of {src.type.dtype} to one of {dest.type.dtype}", node,
                       "both records need the same dtype; assign the fields one by one")
    from pykern.frontend import slice_store  # slice_store lowers through the statement lowering, which imports us

    dest, src = lw.once(dest, node), lw.once(src, node)
    for name, ft, _ in dest.type.dtype.fields:
        d, s = field_view(lw, dest, name, node, direct=True), field_view(lw, src, name, node, direct=True)
        if isinstance(ft, T.Record):
            copy(lw, d, s, node)
        elif isinstance(ft, T.NestedArray):
            if isinstance(ft.dtype, T.Record):
                raise lw.error(f"cannot copy field '{name}': arrays of records inside records are not supported", node)
            slice_store.store(lw, d, s, node)
        else:
            lw.emit(ir.Store(d, [], ir.Load(s, [], d.type.dtype, lw.loc(node)), lw.loc(node)))
