"""pykern's type system: the types a kernel value can have.

Types are immutable, hashable values with readable ``str()`` that round-trips
through signature strings (``float32[:, ::1]``, ``UniTuple(int64, 2)``).

Example::

    >>> from pykern.frontend.types import float32, Array
    >>> str(Array(float32, 2, "C"))
    'float32[:, ::1]'
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class Type:
    """Base of every pykern type."""

    __slots__ = ()

    @property
    def is_scalar(self) -> bool:
        return isinstance(self, (Integer, Float, Boolean, Complex))

    @property
    def name(self) -> str:
        """numba's ``Type.name``: the type's spelling (``float32``, ``int64[::1]``)."""
        return str(self)


class _Sized:
    """``nbytes`` and ``np_dtype`` of a scalar type with ``bits`` whose name is its numpy dtype's."""

    @property
    def nbytes(self) -> int:
        return self.bits // 8

    @property
    def bitwidth(self) -> int:
        """numba's name of ``bits`` (overload functions read it: ``pykern.numba_compat.numba_types``)."""
        return self.bits

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(str(self))


@dataclass(frozen=True, repr=False)
class Integer(_Sized, Type):
    bits: int
    signed: bool

    def __str__(self) -> str:
        return f"{'' if self.signed else 'u'}int{self.bits}"

    __repr__ = __str__

    @property
    def min(self) -> int:
        return -(1 << (self.bits - 1)) if self.signed else 0

    @property
    def max(self) -> int:
        return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1


@dataclass(frozen=True, repr=False)
class NPDatetime(Integer):
    """numpy's ``datetime64[unit]``: an int64 count of ``unit`` since the epoch (``NaT`` is the
    int64 minimum). An ``Integer`` to memory, arguments and codegen; the frontend gives it
    numpy's arithmetic (``calls.datetime_binop``): datetime - datetime is a timedelta, NaT
    propagates, units convert to the finer one."""

    unit: str = "D"

    def __str__(self) -> str:
        return f"datetime64[{self.unit}]"

    __repr__ = __str__


@dataclass(frozen=True, repr=False)
class NPTimedelta(Integer):
    """numpy's ``timedelta64[unit]`` (see ``NPDatetime``)."""

    unit: str = "D"

    def __str__(self) -> str:
        return f"timedelta64[{self.unit}]"

    __repr__ = __str__


def is_datetime(t) -> bool:
    return isinstance(t, (NPDatetime, NPTimedelta))


@dataclass(frozen=True, repr=False)
class Float(_Sized, Type):
    bits: int

    def __str__(self) -> str:
        return f"float{self.bits}"

    __repr__ = __str__


@dataclass(frozen=True, repr=False)
class BFloat(Float):
    """bfloat16: float32's sign and exponent with 7 fraction bits (the top half of a float32).

    A ``Float`` to the typing rules (numpy's promotion with ``ml_dtypes``: bfloat16 + int8 is
    bfloat16, + float16 or float32 is float32); never equal to ``float16`` although both have 16
    bits. Kernels compute every operation on it in float32 and round the result to nearest-even
    (``frontend/bf16_widen.py``), so codegen sees only conversions, loads and stores of it.

    >>> str(bfloat16), bfloat16 == float16
    ('bfloat16', False)
    """

    def __str__(self) -> str:
        return "bfloat16"

    __repr__ = __str__

    @property
    def np_dtype(self) -> np.dtype:
        return bfloat16_dtype()


def bfloat16_dtype() -> np.dtype:
    """``ml_dtypes``' bfloat16 numpy dtype (the host's representation of bfloat16 arrays)."""
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16)


@dataclass(frozen=True, repr=False)
class Complex(Type):
    """A complex number: two floats (real, imaginary) of ``bits // 2`` each,
    laid out like numpy's complex64/complex128 (and C's ``float _Complex``)."""

    bits: int  # 64 | 128

    def __str__(self) -> str:
        return f"complex{self.bits}"

    __repr__ = __str__

    @property
    def nbytes(self) -> int:
        return self.bits // 8

    @property
    def component(self) -> "Float":
        """The float type of ``.real`` and ``.imag``."""
        return Float(self.bits // 2)

    #: numba's name for it (``tp.underlying_float`` in overloads and signatures)
    underlying_float = component

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(str(self))


@dataclass(frozen=True, repr=False)
class NestedArray(Type):
    """An array inside a record (numpy's sub-array field, ``("a", "f4", (2, 3))``):
    C-ordered elements of ``dtype`` with a fixed ``shape``. Reading the field
    gives an array view of it."""

    dtype: Type
    shape: tuple

    def __str__(self) -> str:
        return f"nestedarray({self.dtype}, {self.shape})"

    __repr__ = __str__

    @property
    def nbytes(self) -> int:
        n = self.dtype.nbytes
        for s in self.shape:
            n *= s
        return n


@dataclass(frozen=True, repr=False)
class CharSeq(NestedArray):
    """A string field of a record (numpy ``S``/``U``): its bytes, which a record copy
    carries along; kernels cannot read or write the field itself (``records.read``).
    ``text`` is the numpy dtype string (``"<U5"``) the record's dtype is rebuilt with."""

    text: str = ""

    def __str__(self) -> str:
        return f"charseq({self.text})"

    __repr__ = __str__


@dataclass(frozen=True, repr=False)
class Record(Type):
    """A numpy structured dtype: ``fields`` are ``(name, type, offset)`` with type a
    scalar, a ``Record`` (nested) or a ``NestedArray``; ``size`` is the itemsize,
    ``align`` numpy's ``dtype.alignment`` (1 for packed records).

    A record *value* in a kernel (``r = a[i]``, a record argument) is a reference
    to its memory, as in numba: a 0-d array of the record type, so that
    ``r.x += 1`` writes the array element. ``pykern.from_dtype(dt)`` makes one."""

    fields: tuple
    size: int
    align: int

    def __str__(self) -> str:
        inner = ", ".join(f"{n}:{t}@{o}" for n, t, o in self.fields)
        return f"Record({inner}; {self.size} bytes, align {self.align})"

    __repr__ = __str__

    @property
    def nbytes(self) -> int:
        return self.size

    @property
    def bits(self) -> int:  # the itemsize in bits, for code that sizes elements by .bits
        return self.size * 8

    def field(self, name: str):
        """``(type, offset)`` of field ``name``, or None."""
        for n, t, o in self.fields:
            if n == name:
                return t, o
        return None

    @property
    def np_dtype(self) -> np.dtype:
        def fmt(t):
            if isinstance(t, CharSeq):
                return np.dtype(t.text)
            if isinstance(t, NestedArray):
                return (fmt(t.dtype), t.shape)
            return t.np_dtype
        return np.dtype({"names": [n for n, _, _ in self.fields], "formats": [fmt(t) for _, t, _ in self.fields],
                         "offsets": [o for _, _, o in self.fields], "itemsize": self.size},
                        align=self.align > 1 and all(o % natural_align(t) == 0 for _, t, o in self.fields))


def natural_align(t) -> int:
    """The alignment a ``t`` in memory needs (a record's own, an array's element's)."""
    if isinstance(t, Record):
        return t.align
    if isinstance(t, NestedArray):
        return natural_align(t.dtype)
    if isinstance(t, Complex):
        return t.nbytes // 2
    return t.nbytes


def record_from_dtype(dt: np.dtype) -> "Record":
    """The Record type of a structured numpy dtype (fields in offset order)."""
    fields = []
    for name in dt.names:
        fdt, off = dt.fields[name][:2]
        if fdt.kind in "SU" and fdt.subdtype is None:
            t = CharSeq(uint8, (fdt.itemsize,), fdt.str)
        elif fdt.subdtype is not None:
            base, shape = fdt.subdtype
            t = NestedArray(from_dtype(base), tuple(int(s) for s in shape))
            if isinstance(t.dtype, (Record, NestedArray)):
                raise TypeError(f"field {name!r}: arrays of records inside records are not supported")
        else:
            t = from_dtype(fdt)
        fields.append((name, t, int(off)))
    return Record(tuple(fields), int(dt.itemsize), _record_alignment(dt, fields))


def _record_alignment(dt: np.dtype, fields) -> int:
    # numpy reports alignment 1 for the np.record dtypes of recarrays and their
    # elements even when the struct is aligned; isalignedstruct survives, so an
    # aligned struct gets the alignment numpy gives it as a plain dtype.
    if dt.isalignedstruct:
        return max([natural_align(t) for _, t, _ in fields] + [1])
    return int(dt.alignment)


@dataclass(frozen=True, repr=False)
class Boolean(Type):
    """A truth value. In memory (arrays, kernel arguments) it is one byte."""

    def __str__(self) -> str:
        return "boolean"

    __repr__ = __str__

    bits = 8
    nbytes = 1

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(np.bool_)


@dataclass(frozen=True, repr=False)
class Void(Type):
    def __str__(self) -> str:
        return "void"

    __repr__ = __str__


@dataclass(frozen=True, repr=False)
class Fragment(Type):
    """A matrix fragment (rocWMMA's / CUDA wmma's): one wave's share of an ``m x n x k``
    multiply-accumulate operand. ``use`` is "matrix_a" (m x k), "matrix_b" (k x n) or
    "accumulator" (m x n); ``layout`` "row" or "col" for matrix_a/b (how ``load_matrix_sync``
    reads memory), "" for an accumulator. A fragment variable names storage the wave owns
    (registers on a GPU), changed in place by ``fill``/``load``/``mma``.

    >>> str(Fragment("matrix_a", 16, 16, 16, float16, "row"))
    'fragment(matrix_a, 16, 16, 16, float16, row)'
    """

    use: str
    m: int
    n: int
    k: int
    dtype: Type
    layout: str = ""

    def __str__(self) -> str:
        tail = f", {self.layout}" if self.layout else ""
        return f"fragment({self.use}, {self.m}, {self.n}, {self.k}, {self.dtype}{tail})"

    __repr__ = __str__

    @property
    def rows(self) -> int:
        return self.k if self.use == "matrix_b" else self.m

    @property
    def cols(self) -> int:
        return self.k if self.use == "matrix_a" else self.n


#: Where an array's memory lives. "global" is device memory passed in as an
#: argument; "shared" is per-block (LDS); "local" is per-thread (private);
#: "const" is read-only data frozen into the code object.
ADDRESS_SPACES = ("global", "shared", "local", "const")



#: the most dimensions a kernel array has (numpy allows more; programs written for numba.cuda
#: use up to 6 or so)
MAX_NDIM = 8

@dataclass(frozen=True, repr=False)
class Array(Type):
    """An n-d array view: a data pointer, ``ndim`` extents and ``ndim`` byte strides.

    ``layout`` is "C" (row-major contiguous: strides are implied by the shape),
    "F" (column-major contiguous) or "A" (any strides, use the stride values).
    """

    dtype: Type  # Integer | Float | Boolean
    ndim: int
    layout: str = "A"
    space: str = "global"
    readonly: bool = False
    #: False for a view of an array field of a packed record (numba's ``aligned=False``): its
    #: elements may sit at any byte, so each is loaded and stored with alignment 1
    aligned: bool = True

    def __post_init__(self):
        assert self.layout in ("C", "F", "A"), self.layout
        if self.ndim == 0 and self.layout != "A":
            # a 0-d array has no strides to speak of: one spelling ("float64[]"), one type
            object.__setattr__(self, "layout", "A")
        assert self.space in ADDRESS_SPACES, self.space
        assert 0 <= self.ndim <= MAX_NDIM, self.ndim

    def __str__(self) -> str:
        if self.ndim == 0:
            dims = ""
        elif self.layout == "C":
            dims = ", ".join([":"] * (self.ndim - 1) + ["::1"])
        elif self.layout == "F":
            dims = ", ".join(["::1"] + [":"] * (self.ndim - 1))
        else:
            dims = ", ".join([":"] * self.ndim)
        s = f"{self.dtype}[{dims}]"
        if self.space != "global":
            s = f"{self.space} {s}"
        if self.readonly:
            s = f"readonly {s}"
        if not self.aligned:
            s = f"unaligned {s}"
        return s

    __repr__ = __str__

    def with_(self, **changes) -> "Array":
        """This type with ``changes``; every attribute not named carries over (space,
        readonly, aligned), so a view, reshape or transpose never drops one.

        Example: ``float32[:, ::1].with_(ndim=1)`` is ``float32[::1]``."""
        from dataclasses import replace

        return replace(self, **changes)


@dataclass(frozen=True, repr=False)
class CPointer(Array):
    """numba's ``CPointer(dtype)`` kernel parameter: a launch passes an address (an int) and the
    kernel indexes it, ``x[i]``. Carried as a 1-d C array over the memory from that address, of an
    extent nothing knows -- so ``len``/``.shape``/``.size`` are refused, as numba refuses them."""

    def __str__(self) -> str:
        return f"CPointer({self.dtype})"

    __repr__ = __str__


def cpointer(dtype: Type) -> CPointer:
    return CPointer(dtype, 1, "C")


def as_array(t: Array) -> Array:
    """``t`` as a plain ``Array`` (a ``CPointer``'s memory seen as the array ``carray`` makes)."""
    if type(t) is Array:
        return t
    return Array(t.dtype, t.ndim, t.layout, t.space, t.readonly, t.aligned)


@dataclass(frozen=True, repr=False)
class Tuple(Type):
    elems: tuple  # tuple[Type, ...]
    #: a namedtuple's field names and class name (``p.x`` in kernels); empty for plain tuples
    names: tuple = ()
    label: str = ""

    def __str__(self) -> str:
        if self.names:
            return f"{self.label or 'NamedTuple'}(" + ", ".join(f"{n}={e}" for n, e in zip(self.names, self.elems)) + ")"
        if self.elems and all(e == self.elems[0] for e in self.elems):
            return f"UniTuple({self.elems[0]}, {len(self.elems)})"
        return "Tuple(" + ", ".join(map(str, self.elems)) + ")"

    __repr__ = __str__


@dataclass(frozen=True, repr=False)
class NoneType(Tuple):
    """numba's ``none``: the type of a ``None`` kernel argument. To the ABI and codegen it is an
    empty tuple (nothing is passed); the frontend reads such a parameter as the constant None,
    so ``x is None`` is decided at compile time and the dead branch pruned, as in numba."""

    elems: tuple = ()

    def __str__(self) -> str:
        return "none"

    __repr__ = __str__


none = NoneType()


@dataclass(frozen=True, repr=False)
class EnumMember(Tuple):
    """An ``enum.Enum`` or ``IntEnum`` member passed to a kernel (numba's ``EnumMember`` and
    ``IntEnumMember``). Like ``none``, nothing is passed: the frontend reads the parameter as the member
    itself, a compile-time constant (``a == b``, ``a is b``, ``a.value`` as Python answers them),
    so a kernel is compiled once per member where numba compiles once per enum class. ``key``
    names the class, the member and its value (overloads and cache keys tell members apart)."""

    elems: tuple = ()
    key: str = ""
    member: object = field(default=None, compare=False, hash=False)

    def __str__(self) -> str:
        return f"EnumMember({self.key})"

    __repr__ = __str__


@dataclass(frozen=True, repr=False)
class Optional(Tuple):
    """numba's ``OptionalType(T)`` of a number: what a device function returns when it
    returns ``None`` on some paths and a ``T`` on others. To the ABI and codegen it is the
    tuple ``(value, present)``; the frontend answers ``x is None`` from ``present`` and reads
    ``x`` anywhere else as its value (numba unwraps it there too, raising TypeError for None)."""

    def __str__(self) -> str:
        return f"OptionalType({self.elems[0]})"

    __repr__ = __str__

    @property
    def type(self) -> Type:
        return self.elems[0]


def optional(t: Type) -> Optional:
    """``OptionalType(t)``; ``t`` a scalar type."""
    return Optional((t, boolean))


int8 = Integer(8, True)
int16 = Integer(16, True)
int32 = Integer(32, True)
int64 = Integer(64, True)
uint8 = Integer(8, False)
uint16 = Integer(16, False)
uint32 = Integer(32, False)
uint64 = Integer(64, False)
float16 = Float(16)
float32 = Float(32)
float64 = Float(64)
bfloat16 = BFloat(16)
complex64 = Complex(64)
complex128 = Complex(128)
boolean = Boolean()
void = Void()

intp = int64

SCALARS = {
    str(t): t
    for t in (int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64, boolean)
}
#: Aliases accepted wherever a type name is (numba spellings included).
ALIASES = {
    "bool": boolean,
    "bool_": boolean,
    "b1": boolean,
    "i1": int8,
    "i2": int16,
    "i4": int32,
    "i8": int64,
    "u1": uint8,
    "u2": uint16,
    "u4": uint32,
    "u8": uint64,
    "f2": float16,
    "f4": float32,
    "f8": float64,
    "half": float16,
    "bfloat16": bfloat16,
    "bf16": bfloat16,
    "float": float64,
    "double": float64,
    "intp": int64,
    "uintp": uint64,
    "int_": int64,
    # complex types are not in SCALARS (the real scalar types, which code iterates over)
    "complex64": complex64,
    "complex128": complex128,
    "c8": complex64,
    "c16": complex128,
    "complex": complex128,
    "cfloat": complex128,
    "cdouble": complex128,
    "csingle": complex64,
}


def from_dtype(dtype) -> Type:
    """The scalar type of a numpy dtype (or anything ``np.dtype`` accepts).

    Raises ``TypeError`` for dtypes kernels cannot hold (object, structured,
    complex, strings, datetimes).
    """
    dt = np.dtype(dtype)
    if dt.fields is not None and dt.names:
        if not dt.isnative:
            raise TypeError(f"unsupported dtype {dt!r}: byte-swapped fields; convert with .astype(dt.newbyteorder('='))")
        return record_from_dtype(dt)
    if dt.kind == "b":
        return boolean
    if dt.kind in "Mm":
        unit = np.datetime_data(dt)[0]
        if unit == "generic" or np.datetime_data(dt)[1] != 1:
            raise TypeError(f"unsupported dtype {dt!r}: datetime64/timedelta64 need a unit, e.g. 'datetime64[D]'")
        return (NPDatetime if dt.kind == "M" else NPTimedelta)(64, True, unit)
    if dt.kind in "iufc" and dt.fields is None:
        name = dt.name
        if name in SCALARS:
            return SCALARS[name]
        if name in ("complex64", "complex128"):
            return ALIASES[name]
    if dt.kind == "V" and dt.name == "bfloat16" and dt.itemsize == 2 and dt.fields is None:
        return bfloat16  # ml_dtypes' dtype (a numpy extension type, kind "V")
    raise TypeError(f"unsupported dtype {dt!r}: pykern kernels take bool, int8..int64, uint8..uint64, float16, bfloat16, float32, float64, complex64, complex128")


def python_scalar_type(value, too_big):
    """The type of a Python bool/int/float/complex: an int is int64, or uint64 above
    int64's range (as numba); None for any other value. An int beyond 64 bits raises
    ``too_big(value)`` (each caller words the error for its context)."""
    if isinstance(value, bool):
        return boolean
    if isinstance(value, int):
        if int64.min <= value <= int64.max:
            return int64
        if 0 <= value <= uint64.max:
            return uint64
        raise too_big(value)
    if isinstance(value, float):
        return float64
    if isinstance(value, complex):
        return complex128
    return None


def complex_of(t: Type) -> "Complex":
    """The complex type numpy gives a real type next to a complex value
    (float32/float16 -> complex64, everything else -> complex128)."""
    if isinstance(t, Complex):
        return t
    return complex64 if isinstance(t, Float) and t.bits <= 32 else complex128


def promote(a: Type, b: Type) -> Type:
    """numpy's ``promote_types`` for two scalar types (bool < ints < floats).

    ``int64`` with ``uint64`` gives ``float64``, as in numpy.
    """
    if a == b:
        return a
    return from_dtype(np.promote_types(_np(a), _np(b)))


def _np(t: Type) -> np.dtype:
    return t.np_dtype  # type: ignore[attr-defined]


# --------------------------------------------------------------------------
# numba-style spelling: ``float32[:, ::1]`` builds an array type and
# ``void(float32[:], int32)`` a signature (added by the frontend helper).
# --------------------------------------------------------------------------


def _array_from_index(dtype: Type, key) -> "Array":
    """``float32[:]`` -> Array(float32, 1, "A"); ``[:, ::1]`` C; ``[::1, :]`` F."""
    if not isinstance(dtype, (Integer, Float, Boolean, Complex, Record)):
        raise TypeError(f"cannot make an array of {dtype}: element types are scalars or records")
    keys = key if isinstance(key, tuple) else (key,)
    marks = []
    for k in keys:
        if not isinstance(k, slice) or k.start is not None or k.stop is not None or k.step not in (None, 1):
            raise TypeError(
                f"bad array type {dtype}[{key!r}]: write one ':' per dimension, with '::1' on the "
                "contiguous one, e.g. float32[:], float32[:, ::1] (C) or float32[::1, :] (F)"
            )
        marks.append(k.step == 1)
    layout = layout_from_marks(marks)
    if layout is None:
        raise TypeError(f"bad array type {dtype}[...]: '::1' may mark only the first or the last dimension")
    return Array(dtype, len(marks), layout)


def layout_from_marks(marks: list):
    """Array layout from which dimensions a signature marks ``::1`` (one bool per
    dimension): "A" for none, "C" for the last, "F" for the first; None otherwise."""
    ndim = len(marks)
    if not any(marks):
        return "A"
    if marks[-1] and not any(marks[:-1]):
        return "C"
    if ndim > 1 and marks[0] and not any(marks[1:]):
        return "F"
    return None


def _type_getitem(self, key):
    return _array_from_index(self, key)


def _type_call(self, *args):
    """``float32(float32[:], int32)`` -> a Signature; ``float32(1.5)`` on the host -> np.float32(1.5)."""
    if all(isinstance(a, Type) for a in args):
        return Signature(self, tuple(args))
    if isinstance(self, (Integer, Float, Boolean, Complex)) and len(args) == 1:
        return self.np_dtype.type(args[0])
    raise TypeError(f"{self}(...) takes types (to build a signature) or one number (to convert it)")


for _cls in (Integer, Float, Boolean, Complex, Record):
    _cls.__getitem__ = _type_getitem  # type: ignore[attr-defined]
for _cls in (Integer, Float, Boolean, Complex, Void, Array, Tuple):
    _cls.__call__ = _type_call  # type: ignore[attr-defined]
del _cls


# Composite types are dict keys on every launch (overloads are looked up by the
# tuple of argument types): remember their hash instead of rehashing the fields.
def _cached_hash(self):
    try:
        return self.__dict__["_hash"]
    except KeyError:
        h = hash((type(self).__name__, *(getattr(self, f) for f in self.__dataclass_fields__)))
        object.__setattr__(self, "_hash", h)
        return h


def _state_without_hash(self):
    # str hashes differ between processes: never pickle a remembered hash
    state = dict(self.__dict__)
    state.pop("_hash", None)
    return state


for _cls in (Array, Tuple, Record):
    _cls.__hash__ = _cached_hash  # type: ignore[method-assign]
    _cls.__getstate__ = _state_without_hash  # type: ignore[attr-defined]
del _cls


@dataclass(frozen=True)
class Signature:
    """A function signature built from types: ``void(float32[:], int32)``."""

    return_type: Type
    args: tuple

    def __str__(self) -> str:
        return f"{self.return_type}(" + ", ".join(map(str, self.args)) + ")"

    __repr__ = __str__

    def __iter__(self):
        return iter((self.return_type, list(self.args)))
