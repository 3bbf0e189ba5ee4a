"""Launch values -> kernel types: what selects a kernel's overload (glue between the frontend's
``typeof`` and the runtime's arrays).

``launch_types`` is a launch's first step, one pass over the arguments that returns all the
later steps need: the types (memoised by ``typeof.type_key``), the arguments to pass (foreign
arrays -- ``__dlpack__`` / ``__cuda_array_interface__``, e.g. torch tensors -- viewed as
DeviceArrays by ``memory.foreign_array``, zero-copy) and the guards of a fast path.
``convertible`` says whether a value of one type may be passed where an eager signature
declares another.

Example::

    >>> import numpy as np
    >>> argument_types((np.zeros(3, np.float32), 2.5), "k")[0]
    (float32[::1], float64)
"""

from __future__ import annotations

import numpy as np
from numpy import ndarray as _ndarray

from pykern.core.errors import LaunchError
from pykern.frontend.typeof import array_type, type_key, typeof
from pykern.runtime.memory.arrays import DeviceArray as _DeviceArray, foreign_array

_type_memo: dict = {}  # ``type_key`` -> kernel type


def argument_types(args, kernel_name: str = "kernel", target: str = "cpu"):
    """``(types, args)``: the pykern types of ``args``, and the arguments to pass
    -- ``args`` itself, or a copy in which foreign arrays (objects with
    ``__dlpack__`` or ``__cuda_array_interface__``, e.g. torch tensors) are
    wrapped as DeviceArrays, zero-copy. ``LaunchError`` names a bad argument."""
    argtypes, args, _ = launch_types(args, kernel_name, target)
    return argtypes, args


def launch_types(args, kernel_name: str, target: str, backend=None):
    """The first step of a launch on ``target``, one pass over ``args``: ``(types, args, guards)``
    -- ``argument_types``' types and arguments and, for a launcher that wants a fast path on
    ``backend`` (the target's), what later arguments must match to have these types, checked
    without typing them again (``runtime.kernargs.compile_guarded``). ``guards`` is None without
    ``backend``, when an argument was converted, or when one cannot be checked that cheaply
    (tuples, numpy arrays the launcher copies: not ``backend.host_arrays``).

    A DeviceArray is typed once (its shape and strides never change); any other value by
    ``typeof`` once per ``type_key``; foreign arrays are wrapped by ``memory.foreign_array``;
    a datetime passes as its int64 count of units, a record as its memory (a 0-d array)."""
    out = []
    guards = None if backend is None else []
    converted = None
    for i, a in enumerate(args):
        cls = type(a)
        if cls is _DeviceArray:
            t = a._pk_type or device_array_type(a)
            out.append(t)
            if guards is None:
                continue
            if a.target != backend.name:
                guards = None
                continue
            guards.append(("device", t, a.target, device_array_type))
            continue
        key = type_key(a)
        t = _type_memo.get(key) if key is not None else None
        if t is None:
            try:
                wrapped = None if key is not None else foreign_array(a, target)
            except Exception as e:  # unsupported dtype, device, layout...
                raise LaunchError(f"{kernel_name}: argument {i + 1} ({cls.__name__}): {e}") from None
            try:
                t = typeof(a if wrapped is None else wrapped)
            except (TypeError, AttributeError) as e:
                raise LaunchError(f"{kernel_name}: argument {i + 1}: {e}") from None
            name = cls.__name__
            if wrapped is not None:
                wrapped._pk_type = t
                a = wrapped
            elif name == "datetime64" or name == "timedelta64":  # passed as its int64 count of units
                a = a.view("i8")
            elif name == "void" or name == "record":  # a record (lang2): its memory as a 0-d array (writes reach it)
                a = np.asarray(a)
            elif key is not None:
                _type_memo[key] = t
            if a is not args[i]:
                converted = converted or list(args)
                converted[i] = a
        out.append(t)
        if guards is None:
            continue
        if cls is _ndarray and backend.host_arrays:
            f = a.flags
            guards.append(("ndarray", a.dtype, a.ndim, f.c_contiguous, f.f_contiguous, f.writeable))
        elif (cls is int or cls is float or cls is bool) and key is not None \
                or isinstance(a, (np.number, np.bool_)) and cls.__module__ == "numpy":  # the class fixes the type
            guards.append(("scalar", cls))
        else:
            guards = None
    if converted is not None:
        return tuple(out), tuple(converted), None
    return tuple(out), args, guards


def device_array_type(a):
    """The kernel type of DeviceArray ``a``, memoised on it (its shape and strides never
    change; ``typeof.array_type`` memoises by what decides it)."""
    t = a._pk_type
    if t is None:
        t = a._pk_type = array_type(a.dtype, a.shape, a.strides, bool(a.storage.readonly))
    return t


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
