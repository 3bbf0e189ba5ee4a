"""Calls of external device functions (``declare_device``): the arguments converted to the
declared signature as numba converts them, an array given for a pointer (``CPointer(T)``) or an
array parameter passed as the address of its first element, and the function's link items
recorded in the module (``ir.Module.links``) for codegen to compile and link.

Example: with ``times2 = declare_device("times2", "int32(int32)", link="f.hip")``, the call
``times2(x[i])`` becomes ``extern[numba] times2(x[i]):int32``.
"""

from __future__ import annotations

from pykern.core.external import ExternFunction
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import nargs, strong
from pykern.frontend.calls.registry import lowers_kind


def _value_type(t) -> bool:
    """What crosses the call as one C value: a number that is not complex (C has no portable
    complex argument numba's layout matches)."""
    return t.is_scalar and not isinstance(t, T.Complex)


@lowers_kind(lambda f: isinstance(f, ExternFunction))
def _extern_call(lw, f, node, name):
    nargs(lw, node, name, len(f.argtypes))
    if not (isinstance(f.restype, T.Void) or _value_type(f.restype)):
        raise lw.error(f"external device function '{f.name}' returns {f.restype}: it may return a number "
                       "or nothing", node, "return other values through a pointer argument")
    args = []
    for k, (a, want) in enumerate(zip(node.args, f.argtypes)):
        v = strong(lw, lw.value(a), a)
        if isinstance(want, T.Array):  # CPointer(T), T[:] or a record (a 0-d array of it)
            if not isinstance(v.type, T.Array) or v.type.dtype != want.dtype:
                raise lw.error(f"argument {k + 1} of '{f.name}' is a pointer to {want.dtype}: pass an array of "
                               f"{want.dtype} (its first element's address is passed), not {v.type}", a)
            args.append(v)
        elif _value_type(want):
            if not v.type.is_scalar:
                raise lw.error(f"argument {k + 1} of '{f.name}' is {want}, not {v.type}", a)
            args.append(lw.cast(v, want, a))
        else:
            raise lw.error(f"external device function '{f.name}' declares argument {k + 1} as {want}: an "
                           "external function takes numbers and pointers (CPointer(T) or arrays)", node)
    for item in f.links:
        lw.mb.links.setdefault(item, None)
    return ir.ExternCall(f.name, f.abi, args, list(f.argtypes), f.restype, lw.loc(node))


def _is_ffi(obj) -> bool:
    return type(obj).__name__ == "FFI" and type(obj).__module__.split(".")[0] == "cffi"


def is_from_buffer_of(obj, attr: str) -> bool:
    """``obj.attr`` is ``ffi.from_buffer`` of a ``cffi.FFI()``, which kernels may call."""
    return attr == "from_buffer" and _is_ffi(obj)


def _is_from_buffer(f) -> bool:
    """``ffi.from_buffer`` (bound to its FFI: a new object at every access)."""
    return getattr(f, "__name__", None) == "from_buffer" and _is_ffi(getattr(f, "__self__", None))


@lowers_kind(_is_from_buffer)
def _from_buffer(lw, f, node, name):
    """numba's ``ffi.from_buffer(array)``: the pointer to a contiguous array's data, as external
    functions take it. Here the array itself stands for it: an external call passes an array as
    the address of its first element, which is what numba's pointer is."""
    nargs(lw, node, name, 1)
    v = lw.value(node.args[0])
    if not isinstance(v.type, T.Array) or v.type.layout not in ("C", "F") and v.type.ndim > 0:
        raise lw.error(f"ffi.from_buffer() takes a contiguous array, not {v.type}", node.args[0])
    return v
