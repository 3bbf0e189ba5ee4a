"""Kernel arguments: flatten launch values and pack them at the kernel's parameter offsets.

The layout is the artifact's: its ``FlatParam`` list (``pykern.core.abi``), which
says for every flat parameter where its value is in the launch arguments
(``path``), what it is (``role``: scalar, array data pointer, shape, stride)
and how it is stored (``code``, a ``struct`` character, at ``offset``). Both
steps are generated once per parameter list (Python for flattening, a
``struct.Struct`` for packing) because they run on every launch, and both come
from that one list, so they cannot disagree.

Example::

    >>> from pykern.core import abi
    >>> params = abi.layout([abi.ArrayArg(1), abi.ScalarArg("i")])
    >>> [(p.role, p.offset) for p in params]
    [('data', 0), ('shape', 8), ('stride', 16), ('scalar', 24)]
    >>> bytes(pack(params, [0x1000, 4, 4, 7]))[:8] == (0x1000).to_bytes(8, "little")
    True
"""

from __future__ import annotations

import ctypes
import operator
import re
import struct
import sys

from pykern.core.abi import kernarg_size, scalar_name  # noqa: F401  (kernarg_size re-exported: callers size buffers with it)
from pykern.core.bounded import LRU
from pykern.core.errors import LaunchError
from pykern.core.strides import c_strides


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
                strides = c_strides(shape, isz)
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
        from pykern.runtime.memory.arrays import DeviceArray

        return DeviceArray
    except ImportError:  # numpy-less use of kernargs: no fast path
        return None


def _value_expr(path) -> str:
    return f"v{path[0]}" + "".join(f"[{j}]" for j in path[1:])


def _where(path) -> str:
    return f"argument {path[0] + 1}" + "".join(f"[{j}]" for j in path[1:])


def _compile_flattener(params, nargs: int):
    lines: list[str] = []
    items: list[str] = []
    checked = set()
    for j, p in enumerate(params):
        for k in range(1, len(p.path)):
            tp = p.path[:k]
            if tp not in checked:  # outer tuples first: an element is indexed only after its tuple is checked
                checked.add(tp)
                e, n = _value_expr(tp), p.tuple_lens[k - 1]
                lines.append(f"    if len({e}) != {n}: raise LaunchError({_where(tp)!r} + ': expected a tuple of {n}, got ' + repr({e}))")
        expr = _value_expr(p.path)
        if p.role == "scalar":
            items.append(f"{expr}.{p.part}" if p.part else expr)  # a complex: Python/numpy complex or a real
        elif p.role == "data":
            nd = p.ndim
            # DeviceArray inline (the common case); anything else through _array_parts
            lines.append(f"    a = {expr}")
            lines.append(f"    if type(a) is _DeviceArray and len(a.shape) == {nd}:")
            lines.append(f"        p{j} = a.ptr; s{j} = a.shape; t{j} = a.strides")
            if _NDARRAY_DATA_OFFSET is not None:
                lines.append(f"    elif type(a) is _ndarray and a.ndim == {nd}:")
                lines.append(f"        p{j} = _ptr_at(_id(a) + {_NDARRAY_DATA_OFFSET}).value; s{j} = a.shape; t{j} = a.strides")
            lines.append("    else:")
            lines.append(f"        p{j}, s{j}, t{j} = _array_parts(a, {nd}, {_where(p.path)!r})")
            items.append(f"p{j}")
            if nd:
                items.append(f"*s{j}")
                items.append(f"*t{j}")
        # shape/stride parameters come with their data parameter (``*s``, ``*t`` above)
    names = [f"v{i}" for i in range(nargs)]
    unpack = (", ".join(names) + ("," if nargs == 1 else "")) if nargs else "()"
    src = ["def flatten(values):"]
    src.append(f"    if len(values) != {nargs}: raise LaunchError('the kernel takes {nargs} argument(s), got ' + str(len(values)))")
    if nargs:
        src.append(f"    {unpack} = values")
    src += lines
    src.append(f"    return [{', '.join(items)}]")
    ns = {"_array_parts": _array_parts, "LaunchError": LaunchError, "_DeviceArray": _device_array_class(),
          "_ndarray": _ndarray_class(), "_ptr_at": ctypes.c_void_p.from_address, "_id": id}
    exec("\n".join(src), ns)  # noqa: S102 - generated from the parameter list only, no user text
    return ns["flatten"]


_NDARRAY_DATA_OFFSET = _find_ndarray_data_offset()


def _find_ndarray_fields():
    """``(memory, unpack_from)``: ``unpack_from(memory, id(a))`` is
    ``(a.ctypes.data, a.flags.num)`` -- numpy's PyArrayObject has ``data``, then
    ``nd``, ``dimensions``, ``strides``, ``base`` and ``descr``, then ``flags``,
    48 bytes after ``data``; ``memory`` is a buffer over the process's address
    space from ``_NDARRAY_DATA_OFFSET`` on, so that ``id(a)`` is the offset (an
    addition less per array; nothing is copied or mapped; only live arrays'
    structs are read).
    One read costs about what ``a.flags.num`` alone does (~0.07 us of ~0.2 for both
    apart, per array per launch). (None, None) unless probes of several layouts
    and flags confirm it."""
    if _NDARRAY_DATA_OFFSET is None:
        return None, None
    try:
        import numpy as np

        memory = memoryview((ctypes.c_char * (1 << 62)).from_address(_NDARRAY_DATA_OFFSET))
        unpack_from = struct.Struct("P40xi").unpack_from  # native sizes and alignment: P at 0, int at 48
        ro = np.arange(5.0)
        ro.flags.writeable = False
        probes = [np.zeros(3), np.arange(7, dtype=np.int8)[2::2], np.empty((2, 3), np.float32).T, ro,
                  np.zeros(()), np.zeros((4, 4), np.int16)[:, 1]]
        for a in probes:
            if unpack_from(memory, id(a)) != (a.ctypes.data, a.flags.num):
                return None, None
        return memory, unpack_from
    except Exception:
        return None, None


_MEMORY, _NDARRAY_FIELDS = _find_ndarray_fields()
_MAX_CACHED = 4096
#: id(params) -> (params, nargs, fn), params kept alive so ids stay unique; a lookup by identity in
#: front of the one by value (``tuple(params)`` costs more than a launch's flattening), bounded alike
_flatteners = LRU()
#: (params, nargs) -> flattener, shared by kernels of one layout; bounded like the other per-kernel maps
#: (``bounded.entries_limit``), as parameter names are part of the key and a notebook renames them at will
_flatteners_by_value = LRU()


def get_flattener(params, nargs: int):
    """The compiled ``flatten(values) -> list`` for a kernel of ``nargs``
    arguments laid out as ``params`` (cached)."""
    hit = _flatteners.get(id(params))
    if hit is not None and hit[0] is params and hit[1] == nargs:
        return hit[2]
    key = (tuple(params), nargs)
    fn = _flatteners_by_value.get(key)
    if fn is None:
        fn = _compile_flattener(key[0], nargs)
        _flatteners_by_value.put(key, fn)
    _flatteners.put(id(params), (params, nargs, fn))
    return fn


def flatten_values(params, values, nargs: int | None = None) -> list:
    """Flatten launch values per the ABI: arrays -> [ptr, *shape, *strides(bytes)].

    >>> from pykern.core import abi
    >>> params = abi.layout([abi.ScalarArg("i"), abi.TupleArg((abi.ScalarArg("f"), abi.ScalarArg("?")))])
    >>> flatten_values(params, (3, (1.5, True)), nargs=2)
    [3, 1.5, True]
    """
    return get_flattener(params, len(values) if nargs is None else nargs)(values)


def array_arguments(params) -> list:
    """Indices of the launch arguments that are arrays (not inside tuples)."""
    return sorted({p.arg_index for p in params if p.role == "data" and len(p.path) == 1})


# --------------------------------------------------------------------------- pack
def _what(p) -> str:
    return scalar_name(p.code) if p.role == "scalar" else p.role


def _layout_struct(params, size: int | None) -> struct.Struct:
    """A little-endian struct packing ``params`` (sorted by offset) at their offsets,
    the bytes between them padding, ``size`` bytes in all (None: up to the last)."""
    fmt, cur = ["<"], 0
    for p in params:
        off, sz, code = p.offset, p.size, p.code
        if struct.calcsize("<" + code) != sz:
            raise LaunchError(f"parameter {p.name}: size {sz} does not fit its type ({code})")
        if off < cur:
            raise LaunchError(f"parameter {p.name}: offset {off} overlaps the previous parameter")
        if off > cur:
            fmt.append(f"{off - cur}x")
        fmt.append(code)
        cur = off + sz
    end = cur if size is None else size
    if end < cur:
        raise LaunchError(f"kernarg size {size} is smaller than the parameters ({cur} bytes)")
    if end > cur:
        fmt.append(f"{end - cur}x")
    return struct.Struct("".join(fmt))


class Packer:
    """Packs flat values at fixed offsets: ``packer(flat_values) -> bytearray``."""

    __slots__ = ("struct", "size", "order", "params", "codes", "fast")

    def __init__(self, params, size: int | None = None):
        params = list(params)
        self.params = params
        order = sorted(range(len(params)), key=lambda i: params[i].offset)
        self.order = None if order == list(range(len(params))) else order
        self.struct = _layout_struct([params[i] for i in order], size)
        self.size = self.struct.size
        self.codes = [params[i].code for i in order]
        self.fast = self._make_fast()

    def _make_fast(self):
        pack_ = self.struct.pack
        order = self.order
        explain = self._explain

        wrapped = self._wrapped

        if order is None:
            def fast(flat_values):
                try:
                    return bytearray(pack_(*flat_values))
                except (struct.error, TypeError, OverflowError) as e:
                    again = wrapped(flat_values)
                    if again is None:
                        raise explain(flat_values, e) from None
                    return fast(again)
        else:
            def fast(flat_values):
                try:
                    return bytearray(pack_(*[flat_values[i] for i in order]))
                except (struct.error, TypeError, OverflowError, IndexError) as e:
                    again = wrapped(flat_values)
                    if again is None:
                        raise explain(flat_values, e) from None
                    return fast(again)
        return fast

    def _wrapped(self, flat_values):
        """``flat_values`` with each integer that does not fit its integer parameter cut to
        the parameter's low bits, or None if none needed it. numba types a Python int as int64
        (uint64 above), converts it to a declared ``int32`` parameter and passes it through
        ``ctypes.c_int32(v)``, which keeps the low bits: ``0xFFFFFFFF`` arrives as -1. Larger
        integers have no numba type; they stay an error."""
        try:
            out = list(flat_values)
            if len(out) != len(self.params):
                return None
        except TypeError:
            return None
        changed = False
        for k, p in enumerate(self.params):
            bits = _INT_BITS.get(p.code)
            v = out[k]
            if bits is None or type(v).__name__ in ("bool", "bool_") or not _is_integer(v):
                continue
            v = int(v)
            if not _INT64_MIN <= v < 1 << 64:
                continue
            w = v & ((1 << bits) - 1)
            if p.code.islower() and w >= 1 << (bits - 1):
                w -= 1 << bits
            if w != out[k]:
                out[k], changed = w, True
        return out if changed else None

    def __call__(self, flat_values) -> bytearray:
        return self.fast(flat_values)

    def _explain(self, flat_values, err) -> LaunchError:
        flat_values = list(flat_values)
        if len(flat_values) != len(self.params):
            return LaunchError(f"kernel arguments flatten to {len(flat_values)} values, the kernel takes {len(self.params)} ({err})")
        for p, v in zip(self.params, flat_values):
            try:
                struct.pack("<" + p.code, v)
            except (struct.error, TypeError, OverflowError) as e:
                what = _what(p)
                return LaunchError(f"argument {p.name} ({what}): cannot pass {v!r}: {e}")
        return LaunchError(f"cannot pack kernel arguments: {err}")


_INT_BITS = {"b": 8, "B": 8, "h": 16, "H": 16, "i": 32, "I": 32, "q": 64, "Q": 64}


def _is_integer(v) -> bool:
    try:
        operator.index(v)
        return True
    except TypeError:
        return False


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


# --------------------------------------------------------------------------- guarded fast path
#: what ``struct.pack_into`` raises for a value that does not fit its parameter
PACK_ERRORS = (struct.error, TypeError, OverflowError)
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _typed(typer, a):
    """``typer(a)``, or None when ``a`` has no kernel type (the full path then says why)."""
    try:
        return typer(a)
    except (TypeError, ValueError, AttributeError):
        return None


#: numpy's NPY_ARRAY_C_CONTIGUOUS, NPY_ARRAY_F_CONTIGUOUS and NPY_ARRAY_WRITEABLE bits of ``ndarray.flags.num``
_NPY_C, _NPY_F, _NPY_W = 0x1, 0x2, 0x400
_NPY_MASK = _NPY_C | _NPY_F | _NPY_W


def _names(prefix: str, i: int, n: int) -> str:
    """``s0_0, s0_1`` -- a target list of ``n`` names (``s0_0,`` for one)."""
    return ", ".join(f"{prefix}{i}_{k}" for k in range(n)) + ("," if n == 1 else "")


#: the packing statement of a fast path's body (see ``compile_guarded``): the buffer expression is group 1
_PACK_STMT = re.compile(r"_pack_into\(([\w.]+), 0, \{vals\}\)")


def _native_arrays(params, guards, body: str):
    """``(guard, argument indices)``: the numpy arguments whose checks and
    copies one native call does (``native_guard``), or (None, ()) when none can:
    no native guards here, no numpy argument, a layout it does not write, or a
    body that does not pack with ``_PACK_STMT``; ``(_COUNT_DOWN, ())`` when they
    could, but are not built yet (LLVM is not loaded)."""
    # (a structured dtype's field names are checked in Python: numpy lets them change in place)
    idx = [i for i, g in enumerate(guards) if g[0] == "ndarray" and g[1].names is None]
    if not idx or sys.byteorder != "little" or len(_PACK_STMT.findall(body)) != 1:
        return None, ()
    by_arg: dict = {}
    for p in params:
        by_arg.setdefault(p.arg_index, []).append(p)
    entries = []
    for i in idx:
        g = guards[i]
        ps = by_arg.get(i, [])
        data = [p for p in ps if p.role == "data"]
        shapes = [p for p in ps if p.role == "shape"]  # axis order: the ABI lists them so
        strides = [p for p in ps if p.role == "stride"]
        if (len(data) != 1 or data[0].code != "Q" or data[0].ndim != g[2] or len(shapes) != g[2]
                or len(strides) != g[2] or len(ps) != 1 + 2 * g[2]
                or any(p.code != "q" for p in shapes + strides)):
            return None, ()
        want = (_NPY_C if g[3] else 0) | (_NPY_F if g[4] else 0) | (_NPY_W if g[5] else 0)
        entries.append((g[1], g[2], _NPY_MASK, want, data[0].offset, [p.offset for p in shapes],
                        [p.offset for p in strides]))
    from pykern.runtime import native_guard

    fn = native_guard.make(entries)
    if fn is None:
        return (_COUNT_DOWN if native_guard.pending() else None), ()
    return fn, idx


#: ``_native_arrays``' answer where native guards could apply once LLVM is loaded
_COUNT_DOWN = object()


class _GuardRefused(Exception):
    """A native guard refused the arguments (caught with ``PACK_ERRORS`` in a fast path's body)."""


def _refuse():
    raise _GuardRefused


def compile_guarded(packer: "Packer", guards, prologue: str, body: str, ns: dict):
    """``fast(values) -> bool``: check that ``values`` match ``guards`` (one per
    argument, from ``pykern.dispatch.argument_types.launch_types``), then run ``body`` with
    ``{vals}`` replaced by the flat values in ``packer``'s order, for
    ``_pack_into`` (its ``struct``'s; a value that does not fit raises one of
    ``PACK_ERRORS``); False, with nothing done, when a guard fails.

    A guard is ``("device", type, target, typer)`` (a DeviceArray of that
    type on that target; ``typer(array)`` types one not typed yet), ``("ndarray", dtype, ndim, c_contiguous,
    f_contiguous, writeable)`` or ``("scalar", class)``. ``prologue`` (lines of
    the caller's own checks, ``return False`` to refuse) runs first. Returns
    None when the parameters need what only the general flattener does (tuples).

    numpy arguments are checked and copied into the buffer by one native call
    where ``native_guard`` works here and ``body`` packs with one
    ``_pack_into(<buffer>, 0, {vals})`` statement in a ``try`` that catches
    ``_PACK_ERRORS`` (the other values are packed first, by a struct that
    skips the arrays' parameters; a refusal raises one of ``_PACK_ERRORS``).
    """
    params, order = packer.params, packer.order
    if any(len(p.path) != 1 for p in params):
        return None
    if any(g[0] == "ndarray" and _nested_record(g[1]) for g in guards):
        return None  # a renamed inner field would not show in the outer names: the full path types each launch
    if any((p.role == "scalar") != (guards[p.arg_index][0] == "scalar") for p in params):
        return None  # an array where the kernel takes a scalar or back: the general path explains it
    nargs = len(guards)
    native, native_idx = _native_arrays(params, guards, body)
    # (``_count_down`` in ``ns``: the body would call the kernel natively once that is built)
    count_down = native is _COUNT_DOWN or ns.get("_count_down", False)
    if native is _COUNT_DOWN:
        native = None
    ns = dict(ns, _DA=_device_array_class(), _nd=_ndarray_class(), _ptr_at=ctypes.c_void_p.from_address, _id=id,
              _pack_into=packer.struct.pack_into, _PACK_ERRORS=PACK_ERRORS, _typed=_typed, _MEM=_MEMORY,
              _fields=_NDARRAY_FIELDS)
    unpacked = {}  # argument -> ndim: shape and strides unpacked into s{i}_{k}, t{i}_{k} by the guard
    lines = [f"    if len(values) != {nargs}: return False"]
    if nargs:
        lines.append(f"    {', '.join(f'v{i}' for i in range(nargs))}{',' if nargs == 1 else ''} = values")
    lines += prologue.splitlines()
    if count_down:  # (the list decrement costs ~30 ns; see native_guard.UPGRADE_AFTER)
        from pykern.runtime import native_guard

        ns.update(_left=native_guard.countdown, _upgrade=native_guard.upgrade)
        lines += ["    _left[0] -= 1", "    if _left[0] < 0: return _upgrade()"]
    for i, g in enumerate(guards):
        v, kind = f"v{i}", g[0]
        if i in native_idx:
            continue
        if kind == "device":
            ns[f"_T{i}"], ns[f"_G{i}"], ns[f"_Y{i}"] = g[1], g[2], g[3]
            lines.append(f"    if type({v}) is not _DA or {v}.target != _G{i}: return False")
            lines.append(f"    t = {v}._pk_type")  # None: a new view, typed once here (then memoised on it)
            lines.append(f"    if t is not _T{i} and (t is not None or _typed(_Y{i}, {v}) != _T{i}): return False")
            lines.append(f"    p{i} = {v}.ptr; s{i} = {v}.shape; t{i} = {v}.strides")
        elif kind == "ndarray":
            ns[f"_D{i}"] = g[1]
            nd = g[2]
            if g[1].names is not None:  # the same dtype object may have had its fields renamed since
                ns[f"_N{i}"] = g[1].names
                lines.append(f"    if type({v}) is not _nd or {v}.dtype.names != _N{i}: return False")
            # the three flags the type depends on, from one int (``flags.num``; three attribute reads cost ~2x)
            want = (_NPY_C if g[3] else 0) | (_NPY_F if g[4] else 0) | (_NPY_W if g[5] else 0)
            if _NDARRAY_FIELDS is not None:  # the data pointer and the flags in one read of the array's struct
                lines.append(f"    if type({v}) is not _nd or {v}.dtype is not _D{i}"
                             + (f" or {v}.ndim != 0" if nd == 0 else "") + ": return False")
                lines.append(f"    p{i}, f = _fields(_MEM, _id({v}))")
                lines.append(f"    if f & {_NPY_MASK} != {want}: return False")
            else:
                lines.append(f"    if type({v}) is not _nd or {v}.dtype is not _D{i} or {v}.flags.num & {_NPY_MASK} != {want}"
                             + (f" or {v}.ndim != 0" if nd == 0 else "") + ": return False")
                ptr = f"_ptr_at(_id({v}) + {_NDARRAY_DATA_OFFSET}).value" if _NDARRAY_DATA_OFFSET is not None else f"{v}.ctypes.data"
                lines.append(f"    p{i} = {ptr}")
            if nd:  # unpacking checks the ndim (ValueError: another ndim, refused below)
                unpacked[i] = nd
                lines.append(f"    {_names('s', i, nd)} = {v}.shape; {_names('t', i, nd)} = {v}.strides")
        elif kind == "scalar":
            ns[f"_C{i}"] = g[1]
            cond = f"type({v}) is not _C{i}"
            if g[1] is int:  # beyond int64 a Python int types as uint64 (another overload) or not at all
                cond += f" or not {_INT64_MIN} <= {v} <= {_INT64_MAX}"
            lines.append(f"    if {cond}: return False")
        else:
            raise ValueError(f"unknown guard {g!r}")
    items: list[str] = []
    kept = []  # the parameters packed in Python, in ``items``' order
    for p in params:
        i = p.arg_index
        if i in native_idx:
            continue
        kept.append(p)
        if p.role == "scalar":
            items.append(f"v{i}.{p.part}" if p.part else f"v{i}")
        elif p.role == "data":
            items.append(f"p{i}")
            if i in unpacked:
                if unpacked[i] != p.ndim:
                    return None
                items += [f"s{i}_{k}" for k in range(p.ndim)] + [f"t{i}_{k}" for k in range(p.ndim)]
            else:
                items += [f"s{i}[{k}]" for k in range(p.ndim)] + [f"t{i}[{k}]" for k in range(p.ndim)]
    if len(items) != len(kept):
        return None
    if native is None:
        if order is not None:
            items = [items[j] for j in order]
    else:  # the other values by a struct with the arrays' places as padding, then the native call
        kept_sorted = sorted(range(len(kept)), key=lambda j: kept[j].offset)
        items = [items[j] for j in kept_sorted]
        buf = _PACK_STMT.search(body).group(1)
        call = f"_native({buf}, {', '.join(f'v{i}' for i in native_idx)}) or _refuse()"
        if items:
            ns["_pack_rest"] = _layout_struct([kept[j] for j in kept_sorted], packer.size).pack_into
            stmt = f"_pack_rest({buf}, 0, {{vals}}); {call}"
        else:
            stmt = call
        body = _PACK_STMT.sub(lambda m: stmt, body)
        ns.update(_native=native, _refuse=_refuse, _PACK_ERRORS=PACK_ERRORS + (_GuardRefused,))
    if unpacked:  # the guards (no side effects) in one try: an unpacking of another ndim refuses the values
        lines = lines[:1] + ["    try:"] + ["    " + ln for ln in lines[1:]] + ["    except ValueError:",
                                                                            "        return False"]
    src = ["def fast(values):"] + lines + body.replace("{vals}", ", ".join(items)).splitlines()
    exec("\n".join(src), ns)  # noqa: S102 - generated from the parameter list and guards only, no user text
    return ns["fast"]


def _nested_record(dtype) -> bool:
    """Whether a structured dtype has a structured field (or subarray of one).
    (``dtype.names`` is the one part of a dtype numpy lets one change in place.)"""
    if dtype.names is None:
        return False
    for name in dtype.names:
        sub = dtype.fields[name][0]
        base = sub.subdtype[0] if sub.subdtype is not None else sub
        if base.names is not None:
            return True
    return False
