"""Matrix fragments computed element by element: the cpu target's ``Target.matrix_op`` (and the
reference the matrix-core instructions are tested against).

Each lane holds the whole tile, row-major, in a private array (``rows x cols`` elements of the
fragment's memory type): loads read every element, ``mma`` computes every element of ``d``, and
a store writes them all (every lane writes the same values). That is the function a wave computes
on the matrix cores, with this order, which is the MFMA order the notes' emulator shows:

* float16/bfloat16 inputs, float32 accumulator: ``d = c``, then for k ascending
  ``d = round_f32(d + a_k * b_k)`` (the products are exact in float32); a float16 accumulator
  computes the same in float32 from ``float32(c)`` and rounds once to float16 at the end;
* float32 / float64: a chain of fused multiply-adds from ``c`` in k order;
* int8 -> int32: exact products, sums wrapping modulo 2**32.

Hardware sums in other orders (WMMA adds ``c`` last; CDNA3 groups products): results on a GPU
agree with these within ``(K + 2) * 2**-24 * (sum_k |a_k b_k| + |c|)`` (float16 output: plus
``2**-11 * |d|``); integers exactly.

Example::

    fx.target.matrix_op(fx, e, [fx.expr(a) for a in e.args])   # e: an ``frag_*`` Intrinsic
"""

from __future__ import annotations

from llvmlite import ir as L

from pykern.frontend import types as T
from pykern.codegen.lowering.llvm_types import I32, I64


def counted_loop(fx, n: int, body) -> None:
    """``for i in range(n): body(i)`` (``i`` an i64 value) as an LLVM loop."""
    b = fx.builder
    pre = b.block
    head, loop, done = fx._new_block("mx.head"), fx._new_block("mx.body"), fx._new_block("mx.done")
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(L.Constant(I64, 0), pre)
    b.cbranch(b.icmp_signed("<", i, L.Constant(I64, n)), loop, done)
    b.position_at_end(loop)
    body(i)
    i.add_incoming(b.add(i, L.Constant(I64, 1)), b.block)
    b.branch(head)
    b.position_at_end(done)


def untyped(fx, ptr, ptr_type):
    """``ptr`` as the untyped pointer a fragment variable holds (llvmlite keeps an alloca's element
    type on its pointer and would index through it; a struct field has the declared type)."""
    b = fx.builder
    box = b.insert_value(L.Constant(L.LiteralStructType([ptr_type]), None), ptr, 0)
    return b.extract_value(box, 0)


def element_ptr(fx, array, at: T.Array, flat):
    """Address of ``array.flat[flat]`` (a C-contiguous array; ``flat`` an i64)."""
    b = fx.builder
    return b.gep(b.extract_value(array, 0), [flat], source_etype=fx.types.memory(at.dtype))


def check_flat_index(fx, e, arr_index: int, array, flat):
    """Under ``debug=True``: the "bounds" error of an array index (``KernelIndexError`` on the
    host, the same record and path) when ``flat`` is not in ``[0, array.size)``; the array is
    argument ``arr_index`` of fragment operation ``e``."""
    if not fx.options.debug:
        return
    b = fx.builder
    at = e.args[arr_index].type
    size = L.Constant(I64, 1)
    for k in range(at.ndim):
        size = b.mul(size, b.extract_value(array, [1, k]))
    what = "wmma.load_matrix_sync" if e.name == "frag_load" else "wmma.store_matrix_sync"
    fx._bounds_check(e.args[arr_index], flat, flat, size, 0,
                     note=f" ({what}: a fragment element's flat index, offset + row * ldm + col)")


def memory_index(fx, i, j, offset, ldm, layout: str):
    """``offset + i*ldm + j`` (row-major memory) or ``offset + j*ldm + i`` (column-major)."""
    b = fx.builder
    major, minor = (i, j) if layout == "row" else (j, i)
    return b.add(offset, b.add(b.mul(major, ldm), minor))


class ReferenceMatrix:
    """The element-by-element lowering (see the module docstring)."""

    def __call__(self, fx, e, args):
        return getattr(self, e.name)(fx, e, args)

    def frag_new(self, fx, e, args):
        ft = e.type
        et = fx.types.memory(ft.dtype)
        n = ft.rows * ft.cols
        ptr = fx.target.local_array(fx, "frag", et, n)
        fx.builder.store(L.Constant(L.ArrayType(et, n), None), ptr)
        return untyped(fx, ptr, fx.types.value(ft))

    def _slot(self, fx, ft, frag, idx):
        return fx.builder.gep(frag, [idx], source_etype=fx.types.memory(ft.dtype))

    def frag_fill(self, fx, e, args):
        ft = e.args[0].type
        frag, v = args[0], fx.cast(args[1], e.args[1].type, ft.dtype)  # the row's signature cannot tie them
        counted_loop(fx, ft.rows * ft.cols, lambda i: fx.builder.store(v, self._slot(fx, ft, frag, i)))

    def _each(self, fx, ft, offset, ldm, layout, body):
        b = fx.builder
        cols = L.Constant(I64, ft.cols)

        def one(idx):
            i, j = b.udiv(idx, cols), b.urem(idx, cols)
            body(idx, memory_index(fx, i, j, offset, ldm, layout))
        counted_loop(fx, ft.rows * ft.cols, one)

    def frag_load(self, fx, e, args):
        frag, arr, offset, ldm = args
        ft, at = e.args[0].type, e.args[1].type
        b = fx.builder
        et = fx.types.memory(ft.dtype)

        def one(idx, m):
            check_flat_index(fx, e, 1, arr, m)
            b.store(b.load(element_ptr(fx, arr, at, m), typ=et), self._slot(fx, ft, frag, idx))
        self._each(fx, ft, offset, ldm, e.attrs["layout"], one)

    def frag_store(self, fx, e, args):
        arr, frag, offset, ldm = args
        at, ft = e.args[0].type, e.args[1].type
        b = fx.builder
        et = fx.types.memory(ft.dtype)

        def one(idx, m):
            check_flat_index(fx, e, 0, arr, m)
            b.store(b.load(self._slot(fx, ft, frag, idx), typ=et), element_ptr(fx, arr, at, m))
        self._each(fx, ft, offset, ldm, e.attrs["layout"], one)

    def frag_mma(self, fx, e, args):
        d, a, x, c = args
        dt, at, bt, ct = (v.type for v in e.args)
        b = fx.builder
        m, n, k = at.m, at.n, at.k
        step, widen, narrow = _arith(fx, at.dtype, ct.dtype)
        acc_ty = widen(None)
        acc_slot = fx.alloca(acc_ty)
        mem = lambda ft: fx.types.memory(ft.dtype)  # noqa: E731

        def row(i):
            def col(j):
                ij = b.add(b.mul(i, L.Constant(I64, n)), j)
                b.store(widen(b.load(self._slot(fx, ct, c, ij), typ=mem(ct))), acc_slot)

                def inner(kk):
                    av = b.load(self._slot(fx, at, a, b.add(b.mul(i, L.Constant(I64, k)), kk)), typ=mem(at))
                    bv = b.load(self._slot(fx, bt, x, b.add(b.mul(kk, L.Constant(I64, n)), j)), typ=mem(bt))
                    b.store(step(b.load(acc_slot, typ=acc_ty), av, bv), acc_slot)
                counted_loop(fx, k, inner)
                b.store(narrow(b.load(acc_slot, typ=acc_ty)), self._slot(fx, dt, d, ij))
            counted_loop(fx, n, col)
        counted_loop(fx, m, row)


def _arith(fx, it, ct):
    """``(step(acc, a, b), widen(c), narrow(acc))`` of one configuration; ``widen(None)`` is the
    accumulator's LLVM type."""
    b = fx.builder
    f32 = L.FloatType()
    if isinstance(it, T.Integer):
        def step(acc, a, x):
            return b.add(acc, b.mul(b.sext(a, I32), b.sext(x, I32)))
        return step, lambda v: I32 if v is None else v, lambda v: v
    if it in (T.float32, T.float64):
        llty = f32 if it == T.float32 else L.DoubleType()
        fma = fx.intrinsic(f"llvm.fma.{'f32' if it == T.float32 else 'f64'}", llty, [llty] * 3)
        return (lambda acc, a, x: b.call(fma, [a, x, acc])), (lambda v: llty if v is None else v), (lambda v: v)

    def to32(v):
        return fx.cast(v, it, T.float32)

    def step(acc, a, x):
        return b.fadd(acc, b.fmul(to32(a), to32(x)))  # no contract flag: the product is exact anyway
    if ct == T.float16:
        return step, (lambda v: f32 if v is None else b.fpext(v, f32)), (lambda v: b.fptrunc(v, L.HalfType()))
    return step, (lambda v: f32 if v is None else v), (lambda v: v)
