"""numba's ``types`` names for pykern types: what an ``@overload`` function (``pykern.numba_compat.extending``)
checks its argument types with, and the scalar types by numba's spellings::

    from pykern import types
    isinstance(t, types.Integer)     # int8 ... uint64 (t.bitwidth, t.signed)
    isinstance(t, types.Float)       # float16/32/64 (t.bitwidth)
    isinstance(t, types.Number)      # an integer, float or complex type
    isinstance(t, types.Array)       # t.dtype, t.ndim, t.layout ("C", "F", "A")
    isinstance(t, types.UniTuple)    # a tuple of one element type (t.elems)
    t == types.float32

Classes are pykern's own (``pykern.frontend.types``); ``Number``, ``BaseTuple``/``Tuple`` and
``UniTuple`` answer ``isinstance`` as numba's classes do for the types pykern has.
"""

from __future__ import annotations

from pykern.frontend.types import ALIASES as _ALIASES, Array, Boolean, Complex, Float, Integer, NoneType, NPDatetime, NPTimedelta, Optional, Record, Tuple as _Tuple, cpointer as _cpointer, Type, Void, boolean, complex64, complex128, float16, float32, float64, int8, int16, int32, int64, intp, none, uint8, uint16, uint32, uint64, void


class _Kind(type):
    """A class that stands for a set of pykern type classes in ``isinstance``."""

    def __instancecheck__(cls, t):
        return cls._test(t)


class Number(metaclass=_Kind):
    """numba's ``types.Number``: integers, floats and complex numbers (not booleans)."""

    @staticmethod
    def _test(t):
        return isinstance(t, (Integer, Float, Complex))


class BaseTuple(metaclass=_Kind):
    """numba's ``types.BaseTuple``: any tuple type (not ``none`` or an optional, pykern's tuples too)."""

    @staticmethod
    def _test(t):
        return isinstance(t, _Tuple) and not isinstance(t, (NoneType, Optional))

    def __new__(cls, types):
        """numba's constructor ``types.Tuple((int32, float32))``, for signatures: a pykern tuple type."""
        return _Tuple(tuple(types))


Tuple = BaseTuple


class UniTuple(metaclass=_Kind):
    """numba's ``types.UniTuple``: a non-empty tuple of one element type."""

    @staticmethod
    def _test(t):
        return BaseTuple._test(t) and bool(t.elems) and all(e == t.elems[0] for e in t.elems)

    def __new__(cls, dtype, count):
        """numba's constructor ``types.UniTuple(float64, 3)``, for signatures: a pykern tuple type."""
        return _Tuple((dtype,) * count)


def CPointer(dtype):
    """numba's ``types.CPointer(dtype)``, for kernel signatures: the parameter takes an address."""
    return _cpointer(dtype)


bool_ = b1 = boolean
i1, i2, i4, i8 = int8, int16, int32, int64
u1, u2, u4, u8 = uint8, uint16, uint32, uint64
f2, f4, f8 = float16, float32, float64
c8, c16 = complex64, complex128
uintp = size_t = uint64
ssize_t = intp
float_ = float32
double = float64
# numba's C type names, with the sizes of the 64-bit Linux hosts ROCm runs on
char, byte, uchar = int8, uint8, uint8
short, ushort = int16, uint16
intc, uintc = int32, uint32
int_ = long_ = longlong = int64
uint = ulong = ulonglong = uint64
