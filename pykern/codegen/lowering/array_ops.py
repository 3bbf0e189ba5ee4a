"""Lowering of arrays: element access (indexing, debug bounds checks), views and slices,
array attributes, records' fields, and the arrays a kernel creates (shared, local, constant and
global arrays). A mixin of ``lower.FunctionLowering``: it uses its builder, ``expr``, ``cast``,
``fail`` and ``debug_failure``, and asks the ``Target`` for every address space and allocation.

An array value is ``{ptr addrspace(S), [n x i64] shape, [n x i64] strides}`` (strides in bytes).
Layout "C"/"F" compute element offsets from the shape; "A" uses the byte strides. A negative
index counts from the end (Python's rule); with ``debug=True`` an index out of range records a
"bounds" error and stops the thread.

Example (what ``a[i, j]`` of a C-order array lowers to)::

    ptr = fx.element_ptr(load.array, fx.expr(load.array), load.indices)  # i*shape[1] + j
"""

from __future__ import annotations

from llvmlite import ir as L

from pykern.core.abi import UNSIGNED_INDEX
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.analysis import is_dynamic_shape
from pykern.codegen.lowering.llvm_types import I8, I64, _sizeof, _zero


def _element_align(arr):
    """The alignment of ``arr``'s element loads and stores: a record field's own (1 in packed
    records), 1 in a view of a packed record's array field, else None (the type's natural one)."""
    if isinstance(arr, ir.RecordField):
        return arr.align
    return None if arr.type.aligned else 1


class ArrayLowering:
    """Arrays, views and element access of ``FunctionLowering`` (see the module docstring)."""

    def _s_Store(self, s):
        arr = self.expr(s.array)
        ptr = self.element_ptr(s.array, arr, s.indices)
        index, shape = self._san_index, self._san_shape
        val = self.expr(s.value)
        dt = s.array.type.dtype
        if isinstance(dt, T.Boolean):
            val = self.builder.zext(val, I8)
        self.sanitize_access(ptr, s.array, "write", s.loc, index, shape)
        self.builder.store(val, ptr, align=_element_align(s.array))

    def sanitize_access(self, ptr, arr_expr, kind, loc, index=None, shape=None):
        """Under ``sanitize=``: tell the target's checker about an access of one element of
        ``arr_expr`` at ``ptr`` ("read", "write" or "atomic") made at ``loc``; ``index``, ``shape``:
        the element's indices and the array's extents (``element_ptr``'s last ones unless given)."""
        if not self.options.sanitize:
            return
        nbytes = _sizeof(arr_expr.type.dtype)
        t = arr_expr.type
        # a local array's report cannot find the element from the address (no argument or
        # shared layout names it): the access passes its index, 16 bits per axis
        index = index if index is not None else getattr(self, "_san_index", None)
        local = t.space == "local" and 0 < t.ndim <= 4 and index is not None and len(index) == t.ndim
        site = self.ml.access_site(kind, loc or self.loc, self._array_name(arr_expr), nbytes,
                                   t.ndim if local else 0)
        aux = None
        if local:
            b = self.builder
            for k, i in enumerate(index):
                part = b.shl(b.and_(i, L.Constant(I64, 0xFFFF)), L.Constant(I64, 16 * k))
                aux = part if aux is None else b.or_(aux, part)
        self.target.sanitize_access(self, ptr, nbytes, kind, site, aux, self._san_skip(arr_expr, kind, index, shape))

    def _san_skip(self, arr_expr, kind, index, shape):
        """``(mask bit, in bounds: i1)`` when the access may go unchecked (``sanitize_elision``): an
        in-bounds element of a kernel parameter the launch sets the bit of; else None. Only the
        kernel's own body: an inlined device function's names are its own."""
        el = self.ml.san_elide.get(arr_expr.name) if isinstance(arr_expr, ir.Var) else None
        if el is None or kind == "atomic" or not self.is_kernel or self.inline:
            return None
        index = index if index is not None else self._san_index
        shape = shape if shape is not None else self._san_shape
        b = self.builder
        inb = None
        for i, n in zip(index, shape):
            ok = b.icmp_unsigned("<", i, n)
            inb = ok if inb is None else b.and_(inb, ok)
        return el[0], inb

    def _array_name(self, e):
        if isinstance(e, ir.Var):
            return e.name
        if isinstance(e, (ir.AllocArray, ir.ConstArray)):
            return e.name
        return "array"

    def element_ptr(self, arr_expr, arr, indices):
        b = self.builder
        t = arr_expr.type
        if len(indices) != t.ndim:
            self.fail(f"internal error: {len(indices)} indices for a {t.ndim}-d array")
        data = b.extract_value(arr, 0)
        shape = self._shape(t, arr)
        idx = []
        for k, ie in enumerate(indices):
            i = self.expr(ie)
            if i.type != I64:
                i = self.cast(i, ie.type, T.int64)
            # a uint64 index (cast to int64 by the frontend) is never negative: 2**64-1 is out
            # of bounds, not the last element, and debug reports it unsigned
            unsigned = isinstance(ie, ir.Cast) and ie.value.type == T.uint64
            if not (isinstance(ie, ir.Const) and int(ie.value) >= 0) and not unsigned:
                neg = b.icmp_signed("<", i, L.Constant(I64, 0))
                # i < 0 <= shape: the sum cannot overflow
                wrapped = b.select(neg, b.add(i, shape[k], flags=("nsw",)), i)
            else:
                wrapped = i
            if self.options.debug:
                self._bounds_check(arr_expr, wrapped, i, shape[k], k, unsigned)
            idx.append(wrapped)
        # sanitize_access reports a local array's element by its index; the extents say which
        # elements are in bounds (the only ones an elided access may skip)
        self._san_index, self._san_shape = idx, shape
        et = self.types.memory(t.dtype)
        if t.ndim == 0:
            return data
        if t.layout == "A":
            off = None
            for k in range(t.ndim):
                term = b.mul(idx[k], b.extract_value(arr, [2, k]))
                off = term if off is None else b.add(off, term)
            return b.gep(data, [off], source_etype=I8)
        order = range(t.ndim) if t.layout == "C" else range(t.ndim - 1, -1, -1)
        off = None
        for k in order:
            off = idx[k] if off is None else b.add(b.mul(off, shape[k]), idx[k])
        return b.gep(data, [off], source_etype=et)

    def _bounds_check(self, arr_expr, idx, orig, extent, axis, unsigned=False, note=""):
        b = self.builder
        ok = b.icmp_unsigned("<", idx, extent)
        fail_bb = self._new_block("oob")
        ok_bb = self._new_block("inb")
        b.cbranch(ok, ok_bb, fail_bb)
        # the axis value carries UNSIGNED_INDEX when the index is a uint64 (printed unsigned)
        flagged = L.Constant(I64, axis | (UNSIGNED_INDEX if unsigned else 0))
        self.debug_failure(fail_bb, ok_bb, "bounds",
                           f"index out of bounds for array '{self._array_name(arr_expr)}'{note}", [orig, extent, flagged])

    def _x_RecordField(self, e):
        """A view of a record field: the record's address plus the field offset."""
        b = self.builder
        rec = self.expr(e.value)
        ptr = b.gep(b.extract_value(rec, 0), [L.Constant(I64, e.offset)], source_etype=I8)
        t = e.type
        v = b.insert_value(_zero(self.types.value(t)), ptr, 0)
        if t.ndim:
            shape = e.value.type.dtype.field(e.name)[0].shape
            return self._make_array(t, None, shape, None, base=v)
        return v

    def _x_Load(self, e):
        arr = self.expr(e.array)
        ptr = self.element_ptr(e.array, arr, e.indices)
        dt = e.array.type.dtype
        self.sanitize_access(ptr, e.array, "read", e.loc)
        v = self.builder.load(ptr, typ=self.types.memory(dt), align=_element_align(e.array))
        if isinstance(dt, T.Boolean):
            v = self.builder.icmp_unsigned("!=", v, L.Constant(I8, 0))
        return v

    def _x_ArrayAttr(self, e):
        b = self.builder
        t = e.array.type
        if e.attr == "ndim":
            return L.Constant(I64, t.ndim)
        arr = self.expr(e.array)
        if e.attr == "shape":
            return b.extract_value(arr, [1, e.dim])
        if e.attr == "strides":
            return b.extract_value(arr, [2, e.dim])
        if e.attr == "address":
            return b.ptrtoint(b.extract_value(arr, 0), I64)
        if e.attr == "size":
            v = L.Constant(I64, 1)
            for k in range(t.ndim):
                v = b.mul(v, b.extract_value(arr, [1, k]))
            return v
        self.fail(f"internal error: array attribute {e.attr}")

    def _make_array(self, t, ptr, shape, shape_vals=None, base=None):
        """Array struct of a fresh C-order array (constant ``shape`` or i64 ``shape_vals``);
        ``base``: a struct whose data pointer is already set (instead of ``ptr``)."""
        b = self.builder
        v = base if base is not None else b.insert_value(_zero(self.types.value(t)), ptr, 0)
        itemsize = _sizeof(t.dtype)
        if shape_vals is None:
            shape_vals = [L.Constant(I64, int(s)) for s in shape]
            strides, acc = [], itemsize
            for s in reversed(shape):
                strides.append(acc)
                acc *= int(s)
            strides = [L.Constant(I64, x) for x in reversed(strides)]
        else:  # the 1-d dynamic shared buffer
            strides = [L.Constant(I64, itemsize)]
        return self._with_shape(v, shape_vals, strides)

    def _with_shape(self, v, shape, strides):
        """Array struct ``v`` with its i64 ``shape`` and byte ``strides`` values set."""
        b = self.builder
        for k, s in enumerate(shape):
            v = b.insert_value(v, s, [1, k])
        for k, s in enumerate(strides):
            v = b.insert_value(v, s, [2, k])
        return v

    def _shape(self, t, arr):
        """The i64 extents of array struct ``arr`` of type ``t``."""
        return [self.builder.extract_value(arr, [1, k]) for k in range(t.ndim)]

    def _byte_strides(self, t, arr, shape=None):
        """The byte strides an element access of ``t`` really uses: "C"/"F"
        imply them from the shape (a contiguous argument's stride values of
        extent-1 dimensions are arbitrary), "A" reads them. ``shape``: the
        extents when the caller has them already."""
        if t.layout == "A":
            return [self.builder.extract_value(arr, [2, k]) for k in range(t.ndim)]
        return self._dense_strides(shape or self._shape(t, arr), _sizeof(t.dtype), t.layout)

    def _dense_strides(self, shape, itemsize: int, layout: str):
        """The byte strides of a dense array of extents ``shape`` in ``layout`` "C" or "F"."""
        order = range(len(shape) - 1, -1, -1) if layout == "C" else range(len(shape))
        strides, acc = [None] * len(shape), L.Constant(I64, itemsize)
        for k in order:
            strides[k] = acc
            acc = self.builder.mul(acc, shape[k])
        return strides

    def _view_source(self, e):
        """``(struct, extents, byte strides)`` of the array a view node ``e`` is made from."""
        at = e.array.type
        arr = self.expr(e.array)
        shape = self._shape(at, arr)
        return arr, shape, self._byte_strides(at, arr, shape)

    def _slice_dim(self, sl, n):
        """(first index, length, step) of ``start:stop:step`` over extent ``n``,
        Python's ``slice.indices`` clamping; a zero step gives length 0. Only
        selects and an unsigned division by a non-zero value: nothing traps."""
        b = self.builder
        c = lambda v: L.Constant(I64, v)  # noqa: E731
        step = c(1) if sl.step is None else self.expr(sl.step)
        zero = b.icmp_signed("==", step, c(0))
        pos = b.icmp_signed(">", step, c(0))
        lo = b.select(pos, c(0), c(-1))
        hi = b.select(pos, n, b.sub(n, c(1)))

        def bound(part, default):
            if part is None:
                return default
            v = self.expr(part)
            v = b.select(b.icmp_signed("<", v, c(0)), b.add(v, n), v)
            v = b.select(b.icmp_signed("<", v, lo), lo, v)
            return b.select(b.icmp_signed(">", v, hi), hi, v)

        start = bound(sl.start, b.select(pos, c(0), b.sub(n, c(1))))
        stop = bound(sl.stop, b.select(pos, n, c(-1)))
        diff = b.select(pos, b.sub(stop, start), b.sub(start, stop))
        div = b.select(zero, c(1), b.select(pos, step, b.sub(c(0), step)))
        count = b.add(b.udiv(b.sub(diff, c(1)), div), c(1))
        empty = b.or_(zero, b.icmp_signed("<=", diff, c(0)))
        length = b.select(empty, c(0), count)
        start = b.select(empty, c(0), start)
        return start, length, step

    def _x_ArrayView(self, e):
        b = self.builder
        at = e.array.type
        arr, shape, strides = self._view_source(e)
        items = list(e.items) + [None] * (at.ndim - len(e.items))
        offset = L.Constant(I64, 0)
        new_shape, new_strides = [], []
        for k, it in enumerate(items):
            if it is None:
                new_shape.append(shape[k])
                new_strides.append(strides[k])
            elif isinstance(it, ir.Slice):
                start, length, step = self._slice_dim(it, shape[k])
                offset = b.add(offset, b.mul(start, strides[k]))
                new_shape.append(length)
                new_strides.append(b.mul(strides[k], step))
            else:
                i = self.expr(it)
                wrapped = b.select(b.icmp_signed("<", i, L.Constant(I64, 0)), b.add(i, shape[k]), i)
                if self.options.debug:
                    self._bounds_check(e.array, wrapped, i, shape[k], k)
                offset = b.add(offset, b.mul(wrapped, strides[k]))
        v = _zero(self.types.value(e.type))
        v = b.insert_value(v, b.gep(b.extract_value(arr, 0), [offset], source_etype=I8), 0)
        return self._with_shape(v, new_shape, new_strides)

    def _x_Transpose(self, e):
        # shape and byte strides reversed, same data pointer. The strides are the
        # ones accesses really use (implied for "C"/"F" sources), so the result
        # struct is right whatever its layout: "F" from "C" implies exactly them
        b = self.builder
        arr, shape, strides = self._view_source(e)
        v = b.insert_value(_zero(self.types.value(e.type)), b.extract_value(arr, 0), 0)
        return self._with_shape(v, shape[::-1], strides[::-1])

    def _x_Reinterpret(self, e):
        # the same bytes: the data pointer moved by the offset (the imaginary part);
        # a view of another item size rescales the (contiguous) last axis, as numpy
        b = self.builder
        arr, shape, strides = self._view_source(e)
        old, new = _sizeof(e.array.type.dtype), _sizeof(e.type.dtype)
        if not e.part and old != new:
            shape[-1] = b.udiv(b.mul(shape[-1], L.Constant(I64, old)), L.Constant(I64, new))
            strides[-1] = L.Constant(I64, new)
        ptr = b.extract_value(arr, 0)
        if e.offset:
            ptr = b.gep(ptr, [L.Constant(I64, e.offset)], source_etype=I8)
        v = b.insert_value(_zero(self.types.value(e.type)), ptr, 0)
        return self._with_shape(v, shape, strides)

    def _x_Reshape(self, e):
        # the same data pointer, the new extents, C-order byte strides
        b = self.builder
        arr = self.expr(e.array)
        shape = [self.expr(s) for s in e.shape]
        v = b.insert_value(_zero(self.types.value(e.type)), b.extract_value(arr, 0), 0)
        return self._with_shape(v, shape, self._dense_strides(shape, _sizeof(e.type.dtype), "C"))

    def _x_AllocArray(self, e):
        t = e.type
        et = self.types.memory(t.dtype)
        shape = tuple(e.shape) if isinstance(e.shape, (tuple, list)) else (e.shape,)
        count = 1
        for s in shape:
            count *= int(s)
        itemsize = _sizeof(t.dtype)
        if e.space == "shared":
            if is_dynamic_shape(shape):
                ptr = self.target.dynamic_shared(self, et)
                nb = self.target.dynamic_shared_bytes(self)
                if nb is None:
                    n = L.Constant(I64, 2**31 - 1)
                else:
                    n = self.builder.udiv(nb, L.Constant(I64, itemsize))
                return self._make_array(t, ptr, None, [n])
            nbytes = count * itemsize
            align = max(16, itemsize) if itemsize & (itemsize - 1) == 0 else 16  # records: any itemsize
            align = max(align, e.align)
            self._note_alignment(e.align)
            off = self.ml.shared_offset(e.name, nbytes, align)
            self._check_limit("shared", nbytes, self.info.static_shared_bytes,
                              self.target.max_shared_bytes(self.options), "per block (LDS)")
            ptr = self.target.shared_array(self, e.name, et, nbytes, align, off)
            if self.options.sanitize:  # a report names the element of an address in it
                self.info.target_facts.setdefault("shared_layout", {})[e.name] = (off, shape, itemsize)
            return self._make_array(t, ptr, shape)
        if e.space == "local":
            self.ml.local_bytes += count * itemsize
            self._check_limit("local", count * itemsize, self.ml.local_bytes,
                              self.target.max_local_bytes(self.options), "per thread")
            ptr = self.target.local_array(self, e.name, et, max(count, 1), e.align)
            self._note_alignment(e.align)
            if self.options.sanitize:  # a fresh array here: nothing written yet
                self.target.sanitize_fresh(self, ptr, count * itemsize)
            return self._make_array(t, ptr, shape)
        self.fail(f"internal error: allocation in {e.space} memory")

    def _note_alignment(self, align):
        """The largest ``alignment=`` of the kernel's arrays: the cpu target's runner aligns the
        block's shared area and per-thread frames to it."""
        facts = self.info.target_facts
        facts["array_align"] = max(facts.get("array_align", 16), align)

    def _check_limit(self, space, nbytes, total, limit, per):
        # before any LLVM type exists: LLVM aborts the process on oversized
        # LDS/scratch (amdgpu), and a huge cpu frame overflows the stack
        if total <= limit:
            return
        what = f"{space} array of {nbytes} bytes"
        if total != nbytes:
            what += f" brings the kernel's {space} memory to {total} bytes, which"
        self.fail(f"{what} exceeds the {self.target.name} target's limit of {limit} bytes {per}",
                  hint="use fewer or smaller arrays (global memory has no such limit)")

    def _x_GlobalArray(self, e):
        b = self.builder
        v = _zero(self.types.value(e.type))
        v = b.insert_value(v, L.Constant(I64, e.address).inttoptr(self.types.ptr("global")), 0)
        return self._with_shape(v, [L.Constant(I64, int(s)) for s in e.shape],
                                [L.Constant(I64, int(s)) for s in e.strides])

    def _x_ConstArray(self, e):
        t = e.type
        et = self.types.memory(t.dtype)
        count = len(e.data) // _sizeof(t.dtype)
        ptr = self.target.const_array(self, e.name, bytes(e.data), et, count)
        return self._make_array(t, ptr, tuple(e.shape))
