"""How pykern values look in LLVM: the type of each pykern type on a target, and the small
value helpers every lowering module (``module.py``, ``scalars.py``, ``array_ops.py``,
``intrinsics.py``) shares.

* integers ``iN``; floats ``half``/``float``/``double``; booleans ``i1`` in
  registers and ``i8`` in memory and kernel arguments;
* complex numbers: ``{re, im}`` structs; tuples: literal struct values;
* arrays: ``{ptr addrspace(S), [n x i64] shape, [n x i64] strides}`` structs
  (strides in bytes);
* records: opaque words of the record's alignment (only ever in memory).

Example::

    TypeMap(get_target("cpu")).value(T.Array(T.float32, 2, "C"))  # {ptr, [2 x i64], [2 x i64]}
"""

from __future__ import annotations

import llvmlite.ir.types as _llt
from llvmlite import ir as L

# LLVM 22 only parses opaque pointers; llvmlite would print alloca/global
# pointer types in the old typed form ("[8 x i8]*") unless told not to.
_llt.ir_layer_typed_pointers_enabled = False

from pykern.core.errors import CompileError  # noqa: E402
from pykern.frontend import types as T  # noqa: E402
from pykern.codegen import abi_map as abi  # noqa: E402

I1 = L.IntType(1)
I8 = L.IntType(8)
I32 = L.IntType(32)
I64 = L.IntType(64)


class TypeMap:
    """pykern type -> LLVM type for a target (address spaces differ)."""

    def __init__(self, target):
        self.target = target

    def value(self, t: T.Type):
        if isinstance(t, T.Boolean):
            return I1
        if isinstance(t, T.Integer):
            return L.IntType(t.bits)
        if isinstance(t, T.Fragment):  # the wave's private storage (Target.matrix_op)
            return self.ptr("local")
        if isinstance(t, T.BFloat):  # its bits (lowering/bf16.py)
            return L.IntType(16)
        if isinstance(t, T.Float):
            return {16: L.HalfType(), 32: L.FloatType(), 64: L.DoubleType()}[t.bits]
        if isinstance(t, T.Record):  # only ever in memory: opaque words of the record's alignment
            return L.ArrayType(L.IntType(8 * t.align), t.size // t.align)
        if isinstance(t, T.Complex):  # {re, im}: numpy's and C's layout, in registers and memory
            f = self.value(t.component)
            return L.LiteralStructType([f, f])
        if isinstance(t, T.Tuple):
            return L.LiteralStructType([self.value(e) for e in t.elems])
        if isinstance(t, T.Array):
            return L.LiteralStructType(
                [self.ptr(t.space), L.ArrayType(I64, t.ndim), L.ArrayType(I64, t.ndim)]
            )
        if isinstance(t, T.Void):
            return L.VoidType()
        raise CompileError(f"internal error: no LLVM type for {t}")

    def memory(self, t: T.Type):
        """Type of an array element in memory (booleans are bytes)."""
        if isinstance(t, T.Boolean):
            return I8
        return self.value(t)

    def ptr(self, space: str):
        return L.PointerType(addrspace=self.target.address_space(space))

    def param(self, p: abi.FlatParam):
        if p.role == "data":
            return self.ptr(p.type.space if isinstance(p.type, T.Array) else "global")
        if p.role in ("shape", "stride"):
            return I64
        if isinstance(p.type, T.BFloat):  # passed as a double (abi_map), rounded in the kernel
            return L.DoubleType()
        return self.memory(p.type)


def _zero(llty):
    """The all-zero constant of ``llty`` (also what an unassigned variable reads as)."""
    return L.Constant(llty, None)


def _bits(t):
    """Width of a wave operation's integer carrier for ``t`` (booleans travel as bytes)."""
    if isinstance(t, T.Boolean):
        return 8
    return t.bits


def _sizeof(t):
    """Bytes of one element of type ``t`` in memory."""
    if isinstance(t, T.Boolean):
        return 1
    if isinstance(t, T.Record):
        return t.size
    return t.bits // 8  # complex: bits is the whole number's (64 or 128)


def _fname(llty):
    """LLVM intrinsic name suffix of a float type (``llvm.ldexp.f32.i32``)."""
    if isinstance(llty, L.HalfType):
        return "f16"
    if isinstance(llty, L.FloatType):
        return "f32"
    return "f64"
