"""The kernel ABI: how kernel arguments become scalar parameters (one definition, both targets).

Each argument flattens, in order, into scalar parameters: a scalar is one
parameter (a boolean one byte, 0/1), an n-d array is ``data`` (8-byte
pointer), then ``shape[i]`` (int64), then ``strides[i]`` (int64, bytes), a
tuple its elements. Each parameter sits at the next offset aligned to its own
size; the buffer is the end of the last parameter rounded up to 8 bytes.

Codegen lays out a kernel's parameters with :func:`layout` (from argument
descriptions that ``codegen.abi`` makes out of pykern types); the artifact
carries the resulting :class:`FlatParam` list, and the runtime packs launch
values from that list alone -- so this module knows no pykern type and imports
nothing from the frontend, codegen or LLVM.

Example::

    >>> ps = layout([ArrayArg(1), ScalarArg("f")], ["x", "a"])
    >>> [(p.name, p.offset, p.role, p.code, p.path) for p in ps]
    [('x.data', 0, 'data', 'Q', (0,)), ('x.shape0', 8, 'shape', 'q', (0,)), ('x.stride0', 16, 'stride', 'q', (0,)), ('a', 24, 'scalar', 'f', (1,))]
    >>> kernarg_size(ps)
    32
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

#: ``struct`` format character of each scalar kind a kernel parameter can have
#: (little-endian, no padding): what codegen declares and the runtime packs.
SCALAR_CODES = {
    ("bool", 8): "?",
    ("int", 8): "b", ("int", 16): "h", ("int", 32): "i", ("int", 64): "q",
    ("uint", 8): "B", ("uint", 16): "H", ("uint", 32): "I", ("uint", 64): "Q",
    ("float", 16): "e", ("float", 32): "f", ("float", 64): "d",
}
#: role -> format character for the non-scalar roles (pointer, int64 extents)
ROLE_CODES = {"data": "Q", "shape": "q", "stride": "q"}


class ScalarArg(NamedTuple):
    """A scalar argument: ``code`` from ``SCALAR_CODES``; ``type`` is the
    caller's own description (codegen: the pykern type), carried unread."""

    code: str
    type: Any = None


class ArrayArg(NamedTuple):
    """An ``ndim``-dimensional array argument (``readonly``: never written, so
    a host array copied in need not be copied back)."""

    ndim: int
    readonly: bool = False
    type: Any = None


class TupleArg(NamedTuple):
    """A tuple argument: its elements' descriptions."""

    elems: tuple


class ComplexArg(NamedTuple):
    """A complex scalar: two parameters of ``code`` (a float kind), the real then the imaginary
    part -- C's ``float _Complex`` layout; ``type`` describes one part."""

    code: str
    type: Any = None


@dataclass(frozen=True)
class FlatParam:
    """One flat kernel parameter.

    ``role`` is "scalar", "data", "shape" or "stride"; ``code`` its ``struct``
    format character; ``path`` where its value is in the launch arguments
    (argument index, then tuple element indices); ``arg_index`` is ``path[0]``;
    ``tuple_lens`` the lengths of the tuples on that path (outermost first);
    ``ndim``/``readonly`` describe the array of a data/shape/stride parameter;
    ``part`` is "real"/"imag" for the halves of a complex argument (the value's
    attribute to pack). ``type`` is codegen's (the pykern scalar or Array type);
    the runtime never reads it."""

    name: str
    type: Any
    offset: int
    size: int
    role: str
    arg_index: int = 0
    code: str = ""
    path: tuple = ()
    tuple_lens: tuple = ()
    ndim: int = 0
    readonly: bool = False
    part: str = ""


def _walk(arg, name: str, path: tuple, lens: tuple, out: list) -> None:
    """Append ``(name, type, role, code, path, tuple_lens, ndim, readonly, part)`` for ``arg`` in ABI order."""
    if isinstance(arg, ScalarArg):
        out.append((name, arg.type, "scalar", arg.code, path, lens, 0, False, ""))
    elif isinstance(arg, ComplexArg):
        out += [(f"{name}.{part}", arg.type, "scalar", arg.code, path, lens, 0, False, part) for part in ("real", "imag")]
    elif isinstance(arg, ArrayArg):
        rest = (path, lens, arg.ndim, arg.readonly, "")
        out.append((f"{name}.data", arg.type, "data", ROLE_CODES["data"]) + rest)
        out += [(f"{name}.shape{i}", arg.type, "shape", ROLE_CODES["shape"]) + rest for i in range(arg.ndim)]
        out += [(f"{name}.stride{i}", arg.type, "stride", ROLE_CODES["stride"]) + rest for i in range(arg.ndim)]
    elif isinstance(arg, TupleArg):
        for i, e in enumerate(arg.elems):
            _walk(e, f"{name}.{i}", path + (i,), lens + (len(arg.elems),), out)
    else:
        raise TypeError(f"not an ABI argument description: {arg!r}")


def layout(args, names=None) -> list:
    """The ``FlatParam``s of arguments described by ``args`` (``ScalarArg``,
    ``ArrayArg``, ``TupleArg``), at naturally aligned offsets; ``names`` gives
    the parameter names (default ``arg0``, ``arg1``...)."""
    flat: list = []
    for i, a in enumerate(args):
        _walk(a, names[i] if names else f"arg{i}", (i,), (), flat)
    params = []
    off = 0
    for name, t, role, code, path, lens, ndim, readonly, part in flat:
        size = struct.calcsize("<" + code)
        off = (off + size - 1) // size * size
        params.append(FlatParam(name, t, off, size, role, path[0], code, path, lens, ndim, readonly, part))
        off += size
    return params


def scalar_name(code: str) -> str:
    """The type name of a scalar format character ("f" -> "float32", "?" -> "boolean")."""
    for (kind, bits), c in SCALAR_CODES.items():
        if c == code:
            return "boolean" if kind == "bool" else f"{kind}{bits}"
    raise KeyError(code)


def kernarg_size(params) -> int:
    """Bytes of the packed kernel argument buffer: end of the last parameter
    rounded up to 8 (0 for no parameters)."""
    end = max((p.offset + p.size for p in params), default=0)
    return (end + 7) // 8 * 8


def at_metadata_offsets(params, md_args) -> list:
    """``params`` at the offsets an amdgpu code object's ``.args`` metadata
    gives its explicit arguments (the code object is the authority the
    launcher packs for). Raises ``ValueError`` when the two disagree in count
    or size -- packing would then put values where the kernel does not read.

    >>> ps = layout([ScalarArg("i")])
    >>> at_metadata_offsets(ps, [{".offset": 0, ".size": 4, ".value_kind": "by_value"}])[0].offset
    0
    """
    explicit = [a for a in md_args if not str(a.get(".value_kind", "")).startswith("hidden_")]
    if len(explicit) != len(params):
        raise ValueError(f"the code object declares {len(explicit)} explicit arguments, the ABI flattens to {len(params)}")
    out = []
    for p, a in zip(params, explicit):
        if int(a[".size"]) != p.size:
            raise ValueError(f"argument {p.name} is {p.size} bytes in the ABI, {a['.size']} bytes in the code object")
        out.append(replace(p, offset=int(a[".offset"])))
    return out


#: Debug error record (``debug=True`` amdgpu kernels), an exported device global
#: the kernel writes and the launcher reads: ``i32 kind`` (0 = no error, else one of
#: ``ERROR_KINDS``), ``i32 message`` (index into ``artifact.error_messages``), then nine
#: ``i64``: index, extent, axis, threadIdx.x/y/z, blockIdx.x/y/z of the first failing thread.
#: A "raise" record's first value (index) is the exception's place in ``artifact.exceptions``.
ERROR_SYMBOL = "__pykern_error"
ERROR_RECORD_BYTES = 80
#: set in a bounds error's axis value when the index is a uint64 (shown unsigned): codegen
#: writes it, the cpu executor and the debug error record read it
UNSIGNED_INDEX = 1 << 32
#: error kinds both targets write (the cpu target's own kinds 2, 4, 5 are in ``codegen.cpu``)
ERROR_KINDS = {"bounds": 1, "zerodiv": 3, "raise": 6, "value": 7}
ERROR_RECORD = "<iiqqqqqqqqq"  # struct format of the record


def format_error_record(raw: bytes, messages: list):
    """Decode the ``__pykern_error`` record read back from the device
    (``ERROR_RECORD_BYTES`` bytes): ``None`` when no thread failed, else the
    text for ``KernelRuntimeError``.

    Example::

        >>> format_error_record(bytes(80), ["k.py:3: index out of bounds for array 'x'"]) is None
        True
    """
    rec = struct.unpack(ERROR_RECORD, bytes(raw[:ERROR_RECORD_BYTES]))
    kind, msg, index, extent, axis, tx, ty, tz, bx, by, bz = rec
    if kind == 0:
        return None
    text = messages[msg] if 0 <= msg < len(messages) else f"kernel error kind {kind}"
    if axis & UNSIGNED_INDEX:
        axis &= UNSIGNED_INDEX - 1
        index &= (1 << 64) - 1
    if kind in (ERROR_KINDS["zerodiv"], ERROR_KINDS["raise"], ERROR_KINDS["value"]):
        return f"{text} (thread ({tx}, {ty}, {tz}) of block ({bx}, {by}, {bz}))"
    return (f"{text}: index {index} is out of range for axis {axis} with extent {extent} "
            f"(thread ({tx}, {ty}, {tz}) of block ({bx}, {by}, {bz}))")


def error_record_exception(raw: bytes, messages: list, exceptions: list):
    """The exception to raise for the ``__pykern_error`` record read back from the device,
    or ``None`` when no thread failed: the kernel's own ``raise``/``assert`` (the user's
    class, ``errors.kernel_exception``), else ``KernelIndexError``/``KernelZeroDivisionError``.

    Example::

        >>> error_record_exception(bytes(80), [], []) is None
        True
    """
    from pykern.core.errors import error_class_for_kind, kernel_exception

    text = format_error_record(raw, messages)
    if text is None:
        return None
    kind, msg, index, _, _, tx, ty, tz, bx, by, bz = struct.unpack(ERROR_RECORD, bytes(raw[:ERROR_RECORD_BYTES]))
    if kind == ERROR_KINDS["raise"] and 0 <= index < len(exceptions):
        where = messages[msg] if 0 <= msg < len(messages) else "<unknown>"
        return kernel_exception(exceptions[index], where, (tx, ty, tz), (bx, by, bz))
    return error_class_for_kind(kind)(text)
