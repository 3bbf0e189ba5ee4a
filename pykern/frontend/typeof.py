"""The pykern type of a launch argument (a Python value).

Example::

    >>> import numpy as np
    >>> str(typeof(np.zeros((3, 4), np.float32)))
    'float32[:, ::1]'
    >>> typeof(3), typeof(2.5), typeof(True)
    (int64, float64, boolean)
"""

from __future__ import annotations

import enum

import numpy as np

from pykern.core.strides import c_strides, layout, layout_letter
from pykern.frontend import types as T
from pykern.frontend.fingerprint import cuda_array_interface

def typeof(value) -> T.Type:
    """The kernel type of ``value``; ``TypeError`` (with the reason) if it has none.

    bool -> boolean, int -> int64 (uint64 above the int64 range), float -> float64,
    numpy scalars -> their own type, arrays (numpy or ``__cuda_array_interface__``)
    -> ``Array(dtype, ndim, layout, readonly=...)``, tuples -> ``Tuple``.
    """
    if isinstance(value, np.bool_):
        return T.boolean
    if value is None:
        return T.none
    if isinstance(value, enum.Enum):  # IntEnum members too: `a is b` tells them from ints
        cls = type(value)
        return T.EnumMember(key=f"{cls.__module__}.{cls.__qualname__}.{value.name}={value.value!r}"[:400], member=value)
    t = T.python_scalar_type(value, lambda v: TypeError(f"integer {v} does not fit in 64 bits (int64 or uint64)"))
    if t is not None:
        return t
    if isinstance(value, np.void) and value.dtype.fields is not None:
        # a record: passed by reference, as numba does (the launcher passes np.asarray(value))
        return T.Array(_scalar_of_dtype(value.dtype, "record"), 0, "A")
    if isinstance(value, np.generic):
        return _scalar_of_dtype(value.dtype, "numpy scalar")
    if isinstance(value, np.ndarray):
        return _ndarray_type(value)
    cai = cuda_array_interface(value)
    if cai is not None:
        dt = getattr(value, "dtype", None)
        if isinstance(dt, np.dtype) and (dt.fields is not None or dt.name == "bfloat16"):
            # a record array's typestr is only "|V<n>", and so is an ml_dtypes bfloat16 array's
            return _cai_type(dict(cai, typestr=dt))
        return _cai_type(cai)
    if isinstance(value, tuple):
        fields = getattr(type(value), "_fields", None)
        if isinstance(fields, tuple) and len(fields) == len(value):  # a namedtuple: p.x works in kernels
            return T.Tuple(tuple(typeof(v) for v in value), tuple(fields), type(value).__name__)
        return T.Tuple(tuple(typeof(v) for v in value))
    if isinstance(value, (list, dict, set)):
        raise TypeError(
            f"a Python {type(value).__name__} cannot be passed to a kernel; pass a numpy array (np.asarray(...)) or a tuple"
        )
    raise TypeError(
        f"cannot pass a {type(value).__module__}.{type(value).__qualname__} to a kernel: pykern takes numbers, "
        "numpy arrays, device arrays (__cuda_array_interface__) and tuples of these"
    )


_ARRAY_TYPES: dict = {}  # (dtype_key, ndim, layout, readonly) -> Array; typeof runs on every launch
_VIEW_TYPES: dict = {}  # (dtype_key, shape, strides, readonly) -> Array (``array_type``'s)
_MEMO_LIMIT = 4096  # entries each memo above keeps (later types are computed, not kept)


def dtype_key(dt: np.dtype):
    """A dict key that tells apart the dtypes whose kernel types differ. numpy
    renames a nested record's fields in place without changing the outer
    dtype's hash or equality; its str spells the names at every level."""
    return dt if dt.names is None else (dt, str(dt))


def type_key(value):
    """A cheap key that determines ``typeof(value)`` (what a launch memoises its types by), or
    None when only ``typeof`` can tell: Python scalars by class, numpy arrays by dtype, ndim and
    the flags their layout and mutability come from, numpy scalars by class and dtype.

    >>> type_key(2.5), type_key(1 << 70)
    (<class 'float'>, None)
    """
    cls = type(value)
    if cls is int or cls is float or cls is bool:
        if cls is int and not (-(1 << 63) <= value < (1 << 63)):
            return None  # uint64-range or too large: typeof decides
        return cls
    if cls is np.ndarray:  # by identity: any class may be named "ndarray"
        flags = value.flags
        return (cls, dtype_key(value.dtype), value.ndim, flags.c_contiguous, flags.f_contiguous, flags.writeable)
    if isinstance(value, np.generic):  # a numpy scalar: its type is its dtype's
        return (cls, dtype_key(value.dtype))
    return None  # (another library's 0-d array is an array, viewed as one: not a scalar)


def array_type(dtype, shape, strides, readonly: bool) -> T.Array:
    """The kernel type of a strided view (``dtype``, ``shape``, byte ``strides``, ``readonly``:
    what a device array's ``__cuda_array_interface__`` says), memoised by exactly these (a view
    made per launch is typed by a dict lookup, not through the interface's dict, ~25 us)."""
    key = (dtype_key(dtype), shape, strides, readonly)
    t = _VIEW_TYPES.get(key)
    if t is None:
        t = _array_type(dtype, shape, strides, readonly, "__cuda_array_interface__ array")
        if len(_VIEW_TYPES) < _MEMO_LIMIT:
            _VIEW_TYPES[key] = t
    return t


def _ndarray_type(a: np.ndarray) -> T.Array:
    flags = a.flags
    ndim = a.ndim
    # numpy's flags use the relaxed rule of core.strides (extents of 1 and empty arrays)
    letter = layout_letter(flags.c_contiguous, flags.f_contiguous, ndim)
    key = (dtype_key(a.dtype), ndim, letter, not flags.writeable)
    t = _ARRAY_TYPES.get(key)
    if t is None:
        if ndim > T.MAX_NDIM:
            raise TypeError(f"array has {ndim} dimensions; kernels take arrays of 0 to {T.MAX_NDIM} dimensions")
        t = T.Array(_scalar_of_dtype(a.dtype, "array"), ndim, letter, readonly=not flags.writeable)
        if len(_ARRAY_TYPES) < _MEMO_LIMIT:
            _ARRAY_TYPES[key] = t
    return t


def _scalar_of_dtype(dt: np.dtype, what: str) -> T.Type:
    dt = np.dtype(dt)
    if dt.kind == "c" and dt.itemsize > 16:
        raise TypeError(f"{what} of complex dtype {dt} is not supported in kernels (complex64 and complex128 are)")
    if dt.fields is not None:
        try:
            return T.from_dtype(dt)  # a record type (lang2)
        except TypeError as e:
            raise TypeError(f"{what} of structured dtype {dt}: {e}") from None
    if dt.kind not in "biufcMm" and dt.name != "bfloat16":
        raise TypeError(
            f"{what} of dtype {dt} is not supported: kernels take bool, int8..int64, uint8..uint64, float16/32/64, bfloat16 (ml_dtypes)"
        )
    if not dt.isnative and dt.itemsize > 1:
        raise TypeError(f"{what} of byte-swapped dtype {dt.str} is not supported; convert with .astype({dt.name!r})")
    return T.from_dtype(dt)


def _array_type(dtype, shape, strides, readonly: bool, what: str) -> T.Array:
    dt = _scalar_of_dtype(dtype, what)
    ndim = len(shape)
    if ndim > T.MAX_NDIM:
        raise TypeError(f"{what} has {ndim} dimensions; kernels take arrays of 0 to {T.MAX_NDIM} dimensions")
    return T.Array(dt, ndim, layout(tuple(shape), tuple(strides), np.dtype(dtype).itemsize), readonly=bool(readonly))


def _cai_type(cai: dict) -> T.Array:
    try:
        shape = tuple(int(s) for s in cai["shape"])
        typestr = cai["typestr"]
        data = cai.get("data")
    except (KeyError, TypeError) as e:
        raise TypeError(f"malformed __cuda_array_interface__ (needs shape, typestr, data): {e}") from None
    try:
        dt = np.dtype(typestr)
    except TypeError:
        raise TypeError(f"__cuda_array_interface__ typestr {typestr!r} is not a dtype") from None
    strides = cai.get("strides")
    if strides is None:
        strides = c_strides(shape, dt.itemsize)
    readonly = bool(data[1]) if isinstance(data, (tuple, list)) and len(data) > 1 else False
    return _array_type(dt, shape, tuple(int(s) for s in strides), readonly, "__cuda_array_interface__ array")
