"""Kernel arguments: flatten Python values per the ABI, pack them into the kernarg buffer.

ABI (team/ABI.md): each argument flattens, in order, into scalar parameters —
a scalar is itself (bool: one byte 0/1); an n-d array is ``data`` (8-byte
pointer), ``shape[0..n-1]`` (int64), ``strides[0..n-1]`` (int64, bytes); a
tuple is its elements flattened. Each parameter sits at the next offset
aligned to its own size.

Both steps are compiled once per layout (generated Python for flattening, a
``struct.Struct`` for packing) because they run on every launch.

Example::

    >>> from pykern.frontend import types as T
    >>> argtypes = (T.Array(T.float32, 1, "C"), T.int32)
    >>> params = param_layout(argtypes)
    >>> [(p.role, p.offset) for p in params]
    [('data', 0), ('shape', 8), ('stride', 16), ('scalar', 24)]
    >>> bytes(pack(params, [0x1000, 4, 4, 7]))[:8] == (0x1000).to_bytes(8, "little")
    True
"""

from __future__ import annotations

import ctypes
import struct
from typing import NamedTuple

from pykern.errors import LaunchError


class KernParam(NamedTuple):
    """One flattened parameter (same fields as codegen's ``FlatParam``)."""

    name: str
    type: object  # a pykern Type (scalar) or the Array type for data/shape/stride
    offset: int
    size: int
    role: str  # "scalar" | "data" | "shape" | "stride"
    arg_index: int


def _kind(t):
    """'array' | 'tuple' | 'scalar' by duck typing on pykern.frontend.types."""
    name = type(t).__name__
    if name == "Array":
        return "array"
    if name == "Tuple":
        return "tuple"
    if name in ("Integer", "Float", "Boolean"):
        return "scalar"
    if name == "Complex":  # complex (lang2): flattens to (real, imag) floats, as codegen.abi does
        return "complex"
    raise LaunchError(f"a kernel argument cannot have type {t}")


def _scalar_size(t) -> int:
    return 1 if type(t).__name__ == "Boolean" else t.bits // 8


def param_layout(argtypes) -> list[KernParam]:
    """The ABI's flattened parameter list for ``argtypes`` (offsets naturally aligned).

    Mirrors ``pykern.codegen.abi.flatten_params`` so the runtime and its tests
    can lay out arguments without the code generator.
    """
    out: list[KernParam] = []
    off = 0

    def add(name, t, size, role, idx):
        nonlocal off
        off = (off + size - 1) // size * size
        out.append(KernParam(name, t, off, size, role, idx))
        off += size

    def walk(t, name, idx):
        k = _kind(t)
        if k == "scalar":
            add(name, t, _scalar_size(t), "scalar", idx)
        elif k == "complex":  # complex (lang2)
            c = t.component
            add(f"{name}.real", c, c.bits // 8, "scalar", idx)
            add(f"{name}.imag", c, c.bits // 8, "scalar", idx)
        elif k == "array":
            add(f"{name}.data", t, 8, "data", idx)
            for d in range(t.ndim):
                add(f"{name}.shape{d}", t, 8, "shape", idx)
            for d in range(t.ndim):
                add(f"{name}.stride{d}", t, 8, "stride", idx)
        else:
            for j, e in enumerate(t.elems):
                walk(e, f"{name}.{j}", idx)

    for i, t in enumerate(argtypes):
        walk(t, f"arg{i}", i)
    return out


def kernarg_size(params) -> int:
    """Bytes of the explicit-argument buffer: end of the last parameter rounded
    up to 8 (as ``codegen.abi.kernarg_size``; no hidden arguments)."""
    end = max((_get(p, "offset") + _get(p, "size") for p in params), default=0)
    return (end + 7) // 8 * 8


# --------------------------------------------------------------------------- flatten
def _array_parts(a, ndim: int, where: str):
    """(pointer, shape, strides) of an array value, strides in bytes."""
    try:
        shape, strides, ptr = a.shape, a.strides, a.ptr  # DeviceArray: plain slots
    except AttributeError:
        ptr = None
    if ptr is None:
        cai = getattr(a, "__cuda_array_interface__", None)
        if cai is not None:
            import numpy as np

            shape = tuple(cai["shape"])
            isz = np.dtype(cai["typestr"]).itemsize
            strides = cai.get("strides")
            if strides is None:
                strides, acc = [], isz
                for n in reversed(shape):
                    strides.append(acc)
                    acc *= max(n, 1)
                strides = tuple(reversed(strides))
            ptr = cai["data"][0] or 0
        else:
            try:
                ptr = a.ctypes.data  # numpy: host memory, used directly by the cpu target
                shape, strides = a.shape, a.strides
            except AttributeError:
                raise LaunchError(f"{where}: expected an array, got {type(a).__name__}") from None
    if len(shape) != ndim:
        raise LaunchError(f"{where}: expected a {ndim}-d array, got {len(shape)}-d with shape {tuple(shape)}")
    return ptr, shape, strides


def _ndarray_class():
    import numpy as np

    return np.ndarray


def _find_ndarray_data_offset():
    """Offset of ``data`` in numpy's PyArrayObject (right after PyObject_HEAD), or
    None if that does not hold here. Reading it directly costs ~0.1 us where
    ``a.ctypes.data`` costs ~1 us, per array per launch."""
    try:
        import numpy as np

        off = object.__basicsize__
        probes = [np.zeros(3), np.arange(7, dtype=np.int8)[2::2], np.empty((2, 3), np.float32).T]
        for a in probes:
            if ctypes.c_void_p.from_address(id(a) + off).value != a.ctypes.data:
                return None
        return off
    except Exception:
        return None


def _device_array_class():
    try:
        from pykern.runtime.memory import DeviceArray

        return DeviceArray
    except ImportError:  # numpy-less use of kernargs: no fast path
        return None


def _compile_flattener(argtypes):
    lines: list[str] = []
    items: list[str] = []
    counter = [0]

    def walk(t, expr, where):
        k = _kind(t)
        if k == "scalar":
            items.append(expr)
        elif k == "complex":  # complex (lang2): Python/numpy complex or a real number
            items.append(f"{expr}.real")
            items.append(f"{expr}.imag")
        elif k == "array":
            j = counter[0]
            counter[0] += 1
            # DeviceArray inline (the common case); anything else through _array_parts
            lines.append(f"    a = {expr}")
            lines.append(f"    if type(a) is _DeviceArray and len(a.shape) == {t.ndim}:")
            lines.append(f"        p{j} = a.ptr; s{j} = a.shape; t{j} = a.strides")
            if _NDARRAY_DATA_OFFSET is not None:
                lines.append(f"    elif type(a) is _ndarray and a.ndim == {t.ndim}:")
                lines.append(f"        p{j} = _ptr_at(_id(a) + {_NDARRAY_DATA_OFFSET}).value; s{j} = a.shape; t{j} = a.strides")
            lines.append("    else:")
            lines.append(f"        p{j}, s{j}, t{j} = _array_parts(a, {t.ndim}, {where!r})")
            items.append(f"p{j}")
            if t.ndim:
                items.append(f"*s{j}")
                items.append(f"*t{j}")
        else:
            n = len(t.elems)
            lines.append(f"    if len({expr}) != {n}: raise LaunchError({where!r} + ': expected a tuple of {n}, got ' + repr({expr}))")
            for i, e in enumerate(t.elems):
                walk(e, f"{expr}[{i}]", f"{where}[{i}]")

    n = len(argtypes)
    names = [f"v{i}" for i in range(n)]
    for i, t in enumerate(argtypes):
        walk(t, names[i], f"argument {i} ({t})")
    unpack = (", ".join(names) + ("," if n == 1 else "")) if n else "()"
    src = ["def flatten(values):"]
    src.append(f"    if len(values) != {n}: raise LaunchError('the kernel takes {n} argument(s), got ' + str(len(values)))")
    if n:
        src.append(f"    {unpack} = values")
    src += lines
    src.append(f"    return [{', '.join(items)}]")
    ns = {"_array_parts": _array_parts, "LaunchError": LaunchError, "_DeviceArray": _device_array_class(),
          "_ndarray": _ndarray_class(), "_ptr_at": ctypes.c_void_p.from_address, "_id": id}
    exec("\n".join(src), ns)  # noqa: S102 - generated from types only, no user text
    return ns["flatten"]


_NDARRAY_DATA_OFFSET = _find_ndarray_data_offset()
_MAX_CACHED = 4096
_flatteners: dict[int, tuple] = {}  # id(argtypes) -> (argtypes, fn); argtypes kept alive so ids stay unique
_flatteners_by_value: dict[tuple, object] = {}


def get_flattener(argtypes):
    """The compiled ``flatten(values) -> list`` for ``argtypes`` (cached)."""
    hit = _flatteners.get(id(argtypes))
    if hit is not None and hit[0] is argtypes:
        return hit[1]
    key = tuple(argtypes)
    fn = _flatteners_by_value.get(key)
    if fn is None:
        fn = _flatteners_by_value[key] = _compile_flattener(key)
    if len(_flatteners) >= _MAX_CACHED:
        _flatteners.clear()
    _flatteners[id(argtypes)] = (argtypes, fn)
    return fn


def flatten_values(argtypes, values) -> list:
    """Flatten launch values per the ABI: arrays -> [ptr, *shape, *strides(bytes)].

    >>> from pykern.frontend import types as T
    >>> flatten_values((T.int32, T.Tuple((T.float32, T.boolean))), (3, (1.5, True)))
    [3, 1.5, True]
    """
    return get_flattener(argtypes)(values)


# --------------------------------------------------------------------------- pack
_INT_CODES = {(8, True): "b", (8, False): "B", (16, True): "h", (16, False): "H",
              (32, True): "i", (32, False): "I", (64, True): "q", (64, False): "Q"}
_FLOAT_CODES = {16: "e", 32: "f", 64: "d"}


def _get(p, field):
    return p[field] if isinstance(p, dict) else getattr(p, field)


def _code(p) -> str:
    role = _get(p, "role")
    if role == "data":
        return "Q"
    if role in ("shape", "stride"):
        return "q"
    t = _get(p, "type")
    kind = type(t).__name__
    if kind == "Boolean":
        return "?"
    if kind == "Integer":
        return _INT_CODES[(t.bits, t.signed)]
    if kind == "Float":
        return _FLOAT_CODES[t.bits]
    raise LaunchError(f"parameter {_get(p, 'name')}: cannot pack a value of type {t}")


class Packer:
    """Packs flat values at fixed offsets: ``packer(flat_values) -> bytearray``."""

    __slots__ = ("struct", "size", "order", "params", "codes", "fast")

    def __init__(self, params, size: int | None = None):
        params = list(params)
        self.params = params
        order = sorted(range(len(params)), key=lambda i: _get(params[i], "offset"))
        self.order = None if order == list(range(len(params))) else order
        fmt, cur, codes = ["<"], 0, []
        for i in order:
            p = params[i]
            off, sz, code = _get(p, "offset"), _get(p, "size"), _code(p)
            if struct.calcsize("<" + code) != sz:
                raise LaunchError(f"parameter {_get(p, 'name')}: size {sz} does not fit its type ({code})")
            if off < cur:
                raise LaunchError(f"parameter {_get(p, 'name')}: offset {off} overlaps the previous parameter")
            if off > cur:
                fmt.append(f"{off - cur}x")
            fmt.append(code)
            codes.append(code)
            cur = off + sz
        end = cur if size is None else size
        if end < cur:
            raise LaunchError(f"kernarg size {size} is smaller than the parameters ({cur} bytes)")
        if end > cur:
            fmt.append(f"{end - cur}x")
        self.struct = struct.Struct("".join(fmt))
        self.size = self.struct.size
        self.codes = codes
        self.fast = self._make_fast()

    def _make_fast(self):
        pack_ = self.struct.pack
        order = self.order
        explain = self._explain

        if order is None:
            def fast(flat_values):
                try:
                    return bytearray(pack_(*flat_values))
                except (struct.error, TypeError, OverflowError) as e:
                    raise explain(flat_values, e) from None
        else:
            def fast(flat_values):
                try:
                    return bytearray(pack_(*[flat_values[i] for i in order]))
                except (struct.error, TypeError, OverflowError, IndexError) as e:
                    raise explain(flat_values, e) from None
        return fast

    def __call__(self, flat_values) -> bytearray:
        return self.fast(flat_values)

    def _explain(self, flat_values, err) -> LaunchError:
        flat_values = list(flat_values)
        if len(flat_values) != len(self.params):
            return LaunchError(f"kernel arguments flatten to {len(flat_values)} values, the kernel takes {len(self.params)} ({err})")
        for p, v in zip(self.params, flat_values):
            try:
                struct.pack("<" + _code(p), v)
            except (struct.error, TypeError, OverflowError) as e:
                t = _get(p, "type")
                what = _get(p, "role") if _get(p, "role") != "scalar" else str(t)
                return LaunchError(f"argument {_get(p, 'name')} ({what}): cannot pass {v!r}: {e}")
        return LaunchError(f"cannot pack kernel arguments: {err}")


_packers: dict[int, tuple] = {}  # id(params) -> (params, size, Packer)


def get_packer(params, size: int | None = None) -> Packer:
    """The cached Packer for this parameter list (and total size)."""
    hit = _packers.get(id(params))
    if hit is not None and hit[0] is params and hit[1] == size:
        return hit[2]
    pk = Packer(params, size)
    if len(_packers) >= _MAX_CACHED:
        _packers.clear()
    _packers[id(params)] = (params, size, pk)
    return pk


def pack(params, flat_values, size: int | None = None) -> bytearray:
    """Pack ``flat_values`` at their parameters' offsets; ``size`` pads the buffer.

    Raises LaunchError naming the parameter when a value does not fit its type.
    """
    hit = _packers.get(id(params))
    if hit is not None and hit[0] is params and hit[1] == size:
        return hit[2].fast(flat_values)
    return get_packer(params, size).fast(flat_values)
