"""Launch values -> kernel types: what selects a kernel's overload (glue between the frontend's
``typeof`` and the runtime's arrays).

``argument_types`` runs on every launch, so it is memoised by a cheap key;
foreign arrays (``__dlpack__`` / ``__cuda_array_interface__``, e.g. torch
tensors) are wrapped as DeviceArrays, zero-copy. ``convertible`` says whether
a value of one type may be passed where an eager signature declares another.

Example::

    >>> import numpy as np
    >>> argument_types((np.zeros(3, np.float32), 2.5), "k")[0]
    (float32[::1], float64)
"""

from __future__ import annotations

from numpy import ndarray as _ndarray

from pykern.core.errors import LaunchError
from pykern.frontend.typeof import dtype_key, typeof
from pykern.runtime.memory.arrays import DeviceArray as _DeviceArray

_type_memo: dict = {}


def _memo_key(a):
    """A cheap key that determines the kernel type of ``a``, or None."""
    cls = type(a)
    if cls is int or cls is float or cls is bool:
        if cls is int and not (-(1 << 63) <= a < (1 << 63)):
            return None  # uint64-range or too large: let typeof decide
        return cls
    if cls is _ndarray:  # by identity: any class may be named "ndarray"
        flags = a.flags
        return (cls, dtype_key(a.dtype), a.ndim, flags.c_contiguous, flags.f_contiguous, flags.writeable)
    dtype = getattr(a, "dtype", None)
    if dtype is not None and getattr(a, "shape", None) == () and hasattr(a, "item") and not hasattr(a, "flags"):
        return (cls, dtype)  # numpy scalar
    return None


def argument_types(args, kernel_name: str = "kernel", target: str = "cpu"):
    """``(types, args)``: the pykern types of ``args``, and the arguments to pass
    -- ``args`` itself, or a copy in which foreign arrays (objects with
    ``__dlpack__`` or ``__cuda_array_interface__``, e.g. torch tensors) are
    wrapped as DeviceArrays, zero-copy. ``LaunchError`` names a bad argument."""
    argtypes, args, _ = launch_types(args, kernel_name, target)
    return argtypes, args


def launch_types(args, kernel_name: str, target: str, guards_for=None):
    """The first step of a launch on ``target``: ``(types, args, guards)`` -- ``argument_types``'
    types and arguments and, for a launcher that wants a fast path, ``launch_guards(args, types,
    guards_for)`` (``guards_for``: the target's backend): what later arguments must match to have
    these types (None when the arguments were converted, or cannot be checked cheaply)."""
    out = []
    converted = None
    for i, a in enumerate(args):
        if type(a) is _DeviceArray:
            out.append(device_array_type(a))
            continue
        key = _memo_key(a)
        t = _type_memo.get(key) if key is not None else None
        if t is None:
            if key is None and _is_foreign_array(a):
                a = _wrap_foreign(a, i, kernel_name, target)
                converted = converted or list(args)
                converted[i] = a
                try:
                    t = a._pk_type = typeof(a)
                except TypeError as e:
                    raise LaunchError(f"{kernel_name}: argument {i + 1}: {e}") from None
                out.append(t)
                continue
            try:
                t = typeof(a)
            except (TypeError, AttributeError) as e:
                raise LaunchError(f"{kernel_name}: argument {i + 1}: {e}") from None
            if cls_name(a) in ("datetime64", "timedelta64"):  # passed as its int64 count of units
                converted = converted or list(args)
                converted[i] = a.view("i8")
                out.append(t)
                continue
            if cls_name(a) in ("void", "record"):  # a record (lang2): its memory as a 0-d array (writes reach it)
                import numpy as np

                converted = converted or list(args)
                converted[i] = np.asarray(a)
                out.append(t)
                continue
            if key is not None:
                _type_memo[key] = t
        out.append(t)
    argtypes = tuple(out)
    if converted is not None:
        return argtypes, tuple(converted), None
    return argtypes, args, (None if guards_for is None else launch_guards(args, argtypes, guards_for))


_device_type_memo: dict = {}


def device_array_type(a):
    """The kernel type of DeviceArray ``a``, memoised on it (its shape and strides
    never change) and by what decides it: a view made per launch is typed by a
    dict lookup, not through ``__cuda_array_interface__`` (~25 us)."""
    t = a._pk_type
    if t is None:
        key = (dtype_key(a.dtype), a.shape, a.strides, bool(a.storage.readonly))
        t = _device_type_memo.get(key)
        if t is None:
            t = typeof(a)
            if len(_device_type_memo) < 4096:
                _device_type_memo[key] = t
        a._pk_type = t
    return t


def cls_name(a) -> str:
    return type(a).__name__


def _is_foreign_array(a) -> bool:
    cls = type(a)
    if cls is _ndarray or isinstance(a, (tuple, int, float, bool)):
        return False
    if any(c.__name__ == "ndarray" and c.__module__ == "numpy" for c in cls.__mro__):
        return False  # a numpy subclass (np.recarray, np.matrix): used as the array it is
    return hasattr(cls, "__dlpack__") or hasattr(a, "__cuda_array_interface__")


def _wrap_foreign(a, i, kernel_name, target):
    from pykern.runtime.memory.arrays import as_device_array

    try:
        return as_device_array(a, target=target)
    except Exception as e:  # unsupported dtype, device, layout...
        raise LaunchError(f"{kernel_name}: argument {i + 1} ({type(a).__name__}): {e}") from None


def convertible(actual, declared) -> bool:
    """May a value of type ``actual`` be passed where ``declared`` is expected
    (eager signatures)? Scalars convert like numba's; arrays need the same dtype
    and ndim and a layout at least as strict as declared."""
    from pykern.frontend import types as T

    if actual == declared:
        return True
    if isinstance(actual, T.EnumMember):  # an IntEnum member converts as its int (an Enum's never)
        return isinstance(actual.member, int) and convertible(T.int64, declared)
    if declared.is_scalar and actual.is_scalar:
        return not isinstance(actual, T.Complex) or isinstance(declared, T.Complex)  # complex never narrows to real
    if isinstance(declared, T.Array) and isinstance(actual, T.Array):
        return (actual.dtype == declared.dtype and actual.ndim == declared.ndim
                and (declared.layout == "A" or declared.layout == actual.layout or actual.ndim <= 1 and actual.layout in "CF"))
    if isinstance(declared, T.Tuple) and isinstance(actual, T.Tuple):
        return len(declared.elems) == len(actual.elems) and all(map(convertible, actual.elems, declared.elems))
    return False


def launch_guards(args, argtypes, backend):
    """What later launch arguments must match to have the types ``argtypes``
    that ``argument_types`` gave ``args`` on ``backend``'s target, checked without typing
    them again (see ``runtime.kernargs.compile_guarded``); None when some
    argument cannot be checked that cheaply (tuples, foreign arrays, numpy
    arrays where the launcher copies them: not ``backend.host_arrays``)."""
    import numpy as np

    out = []
    for a, t in zip(args, argtypes):
        cls = type(a)
        if cls is _DeviceArray:
            if a._pk_type is not t or a.target != backend.name:
                return None
            out.append(("device", t, a.target, device_array_type))
        elif cls is _ndarray:
            if not backend.host_arrays or _type_memo.get(_memo_key(a)) is not t:
                return None
            f = a.flags
            out.append(("ndarray", a.dtype, a.ndim, f.c_contiguous, f.f_contiguous, f.writeable))
        elif cls is int or cls is float or cls is bool:
            if _memo_key(a) is None:
                return None
            out.append(("scalar", cls))
        elif isinstance(a, (np.number, np.bool_)) and cls.__module__ == "numpy":  # the class fixes the type
            out.append(("scalar", cls))
        else:
            return None
    return out
