"""What a kernel's compiled code depends on, computed without compiling it.

``fingerprint(fn)`` returns the kernel-side parts of the disk-cache key:

* ``name``: ``module.qualname``;
* ``source``: digest of the function's own source text (dedented), not of
  its whole file -- editing an unrelated function in the same file still hits;
* ``globals``: the values of the globals and closure variables the function
  reads (numbers, bools, strings, tuples, numpy scalars and arrays by
  dtype/shape/content digest; modules, classes and functions by name);
* ``callees``: the same three things for every device function reachable from
  it, transitively and across modules;
* ``location``: file and first line (used in the key only by debug builds).

Everything is plain JSON data.  Source digests and the list of names a
function reads are remembered per function object, so a repeated call only looks up
and digests the current values (well under a millisecond).  A notebook cell
that is re-run unchanged makes a new function with the same source and
globals, hence the same fingerprint.

Example::

    >>> def k(a):
    ...     a[0] = N
    >>> N = 3
    >>> fingerprint(k)["globals"]
    {'N': 'int:3'}
"""

from __future__ import annotations

import enum
import hashlib
import linecache
import textwrap
import types
import weakref
from typing import Any

from .. import sources

__all__ = ["fingerprint", "value_digest", "source_digest"]

_MAX_INLINE_REPR = 200


class _CodeFacts:
    """What never changes for one function's code: its source digest,
    location and the names it may read."""

    __slots__ = ("code", "source", "file", "line", "names", "free_names")

    def __init__(self, fn: types.FunctionType):
        code = self.code = fn.__code__
        self.source = source_digest(fn)
        self.file = code.co_filename
        self.line = code.co_firstlineno
        # Every co_name may be a global (LOAD_GLOBAL) or an attribute (LOAD_ATTR);
        # treating each as both only ever makes the key stricter.
        self.names = tuple(dict.fromkeys(n for c in _walk_code(code) for n in c.co_names))
        self.free_names = code.co_freevars  # closure cells line up with these


# Keyed by function object (identity; equal code objects of different cells
# must not share a location), weakly so redefined functions do not leak.
_facts: "weakref.WeakKeyDictionary[types.FunctionType, _CodeFacts]" = weakref.WeakKeyDictionary()


def _walk_code(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _walk_code(const)


def source_digest(fn: types.FunctionType) -> str:
    """sha256 (32 hex digits) of the function's dedented source; for functions
    without source (``exec`` strings), of the code object's contents."""
    text = _source_text(fn)
    if text is not None:
        if fn.__code__.co_name == "<lambda>":  # lambdas sharing a line share its text: add the code
            text += "\0" + _code_bytes(fn.__code__).hex()
        return "src:" + hashlib.sha256(text.encode()).hexdigest()[:32]
    return "code:" + hashlib.sha256(_code_bytes(fn.__code__)).hexdigest()[:32]


def _source_text(fn: types.FunctionType) -> str | None:
    span = code_lines(fn)
    return None if span is None else textwrap.dedent("".join(span[0][span[1]:span[2]]))


def code_lines(fn: types.FunctionType):
    """``(lines of fn's file, start, end)``: ``lines[start:end]`` runs from the def (or its
    first decorator) to the last line that any instruction of the function or its nested
    code comes from -- every line that can change what the function does, found without
    tokenize, whose first use costs milliseconds (as does the inspect.getmodule() scan
    inside inspect.getsource). None when the file's lines are not to be had."""
    code = fn.__code__
    filename = code.co_filename
    text = sources.text_of(code, fn.__globals__)  # as resolve.source_of finds it
    if text is not None:
        lines = text.splitlines(True)
    else:
        linecache.checkcache(filename)
        lines = linecache.getlines(filename, fn.__globals__)
    start = code.co_firstlineno - 1
    if not lines or not 0 <= start < len(lines):
        return None
    end = start + 1
    for c in _walk_code(code):
        if hasattr(c, "co_positions"):
            for _, last, _, _ in c.co_positions():
                if last is not None and last > end:
                    end = last
        else:  # Python 3.10
            for _, _, line in c.co_lines():
                if line is not None and line > end:
                    end = line
    return lines, start, min(end, len(lines))


def _code_bytes(code: types.CodeType) -> bytes:
    parts = [code.co_code, repr(code.co_names).encode(), repr(code.co_varnames).encode(),
             repr(code.co_freevars).encode(), repr((code.co_argcount, code.co_kwonlyargcount,
                                                   code.co_flags)).encode()]
    for c in code.co_consts:
        parts.append(_code_bytes(c) if isinstance(c, types.CodeType) else repr(c).encode())
    return b"\x00".join(parts)


def _facts_of(fn: types.FunctionType) -> _CodeFacts:
    facts = _facts.get(fn)
    if facts is None or facts.code is not fn.__code__:  # __code__ can be reassigned
        facts = _facts[fn] = _CodeFacts(fn)
    return facts


def _python_function(obj: Any) -> types.FunctionType | None:
    if isinstance(obj, types.FunctionType):
        return obj
    inner = getattr(obj, "py_func", None)
    return inner if isinstance(inner, types.FunctionType) else None


def _is_device_function(obj: Any) -> bool:
    # any @jit function a kernel may call: device functions, kernels (numba-cuda compiles
    # a kernel called from a kernel as a device function) and numba's own dispatchers
    try:
        jitted = hasattr(obj, "__pykern_device__") or str(getattr(type(obj), "__module__", "")).startswith("numba")
        return jitted and not isinstance(obj, types.FunctionType) and _python_function(obj) is not None
    except Exception:  # an exotic object whose getattr raises is not a device function
        return False


def _qualified_name(obj: Any) -> str:
    return f"{getattr(obj, '__module__', None) or '?'}.{getattr(obj, '__qualname__', None) or getattr(obj, '__name__', '?')}"


def value_digest(value: Any) -> str:
    """A stable text standing for a frozen global's value.

    >>> value_digest(3), value_digest(3.0), value_digest((1, True))
    ('int:3', 'float:3.0', 'tuple:(int:1,bool:True)')
    """
    t = type(value)
    if value is None or t in (bool, int, float, complex, str, bytes):
        text = f"{t.__name__}:{value!r}"
        if len(text) > _MAX_INLINE_REPR:
            text = f"{t.__name__}#" + hashlib.sha256(text.encode()).hexdigest()[:32]
        return text
    if isinstance(value, enum.Enum):
        # a member is frozen as its value: `R = 1` edited to `R = 5` must miss
        return _bounded(f"enum:{_qualified_name(t)}.{value.name}={value_digest(value.value)}")
    if isinstance(value, (tuple, list)):
        # namedtuples too (their fields are frozen): the class name tells two of them apart
        inner = ",".join(value_digest(v) for v in value)
        label = t.__name__ if t in (tuple, list) else _qualified_name(t)
        return _bounded(f"{label}:({inner})")
    if isinstance(value, types.ModuleType):
        return f"module:{value.__name__}"
    mod = getattr(t, "__module__", "") or ""
    if mod == "numpy" or mod.startswith("numpy."):
        return _numpy_digest(value)
    if isinstance(value, type):
        if issubclass(value, enum.Enum):  # `C.R` reads a member's value through its class
            members = ",".join(f"{n}={value_digest(m.value)}" for n, m in value.__members__.items())
            return _bounded(f"enum-class:{_qualified_name(value)}:({members})")
        return f"class:{_qualified_name(value)}"
    if _is_device_function(value):
        # one Python function may be jitted with several declared signatures and options
        # (``add_i8 = cuda.jit("int8(int8, int8)", device=True)(_add)``): they are part of its meaning
        decl = [f"{rt}{tuple(map(str, args))}" for rt, args in getattr(value, "_signatures", None) or ()]
        opts = getattr(value, "options", None)
        extra = f"{decl}{sorted((str(k), repr(v)) for k, v in opts.items())}" if decl or opts else ""
        return _bounded(f"device:{_qualified_name(_python_function(value))}{extra}")
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)) or _python_function(value):
        return f"function:{_qualified_name(_python_function(value) or value)}"
    cai = cuda_array_interface(value)
    if cai is not None:
        # a device array global is captured by reference: the code holds its address
        return f"device-array:{cai.get('data')}:{cai.get('shape')}:{cai.get('strides')}:{cai.get('typestr')}"
    if mod.startswith("pykern."):
        # pykern's own objects (types, intrinsics): their str() is their meaning
        text = str(value)
        if "0x" in text or len(text) > _MAX_INLINE_REPR:  # an address is not a meaning
            return f"pykern:{t.__qualname__}"
        return f"pykern:{t.__qualname__}:{text}"
    if isinstance(value, dict):
        items = ",".join(f"{value_digest(k)}={value_digest(v)}" for k, v in value.items())
        return "dict#" + hashlib.sha256(items.encode()).hexdigest()[:32]
    return f"object:{mod}.{t.__qualname__}"


def _bounded(text: str) -> str:
    """``text``, or a digest of it when it is too long to keep inline."""
    if len(text) <= _MAX_INLINE_REPR:
        return text
    return text.partition(":")[0] + "#" + hashlib.sha256(text.encode()).hexdigest()[:32]


def _device_functions_in(value: Any, depth: int = 0):
    """The device functions a global holds, itself or inside (nested) tuples and lists:
    ``OPS = (lib.f, lib.g)`` called as ``OPS[0](x)`` must key on ``lib.f``'s source."""
    if _is_device_function(value):
        yield _python_function(value)
    elif isinstance(value, (tuple, list)) and depth < 8:
        for v in value:
            yield from _device_functions_in(v, depth + 1)


def cuda_array_interface(value: Any):
    """``value.__cuda_array_interface__`` as a dict, or None: a property of its class (cupy, torch,
    pykern's device arrays) or an attribute of the object itself (a wrapper that copied another
    array's dict, as numba's test helper ``ForeignArray`` does). The frontend captures such a
    global by address and the cache key must hold that address, so both ask here."""
    if not (hasattr(type(value), "__cuda_array_interface__")
            or "__cuda_array_interface__" in getattr(value, "__dict__", ())):
        return None
    cai = value.__cuda_array_interface__
    return cai if isinstance(cai, dict) else None


def _numpy_digest(value: Any) -> str:
    import numpy as np  # already imported by whoever made this value

    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        if data.dtype.hasobject:
            return f"ndarray:{_dtype_text(value.dtype)}{value.shape}:objects"
        h = hashlib.sha256(data.view(np.uint8).reshape(-1).data if data.size else b"").hexdigest()[:32]
        return f"ndarray:{_dtype_text(value.dtype)}{value.shape}:{h}"
    if isinstance(value, np.generic):
        return f"{type(value).__name__}:{_dtype_text(value.dtype)}:{value.tobytes().hex()}"
    if isinstance(value, np.dtype):
        return f"dtype:{_dtype_text(value)}"
    if isinstance(value, np.ufunc):  # np.exp and np.sqrt are both "a ufunc": the name tells them apart
        return f"ufunc:numpy.{value.__name__}"
    return f"object:numpy.{type(value).__qualname__}"


def _dtype_text(dt) -> str:
    # dtype.str alone is "|V8" for every 8-byte record type: spell out fields
    return dt.str if dt.fields is None and dt.subdtype is None else repr(dt.descr)


def _read_globals(fn: types.FunctionType, facts: _CodeFacts, devices: list[types.FunctionType]) -> dict[str, str]:
    """Digests of the globals and closure variables ``fn`` reads; device
    functions found among them are appended to ``devices``."""
    out: dict[str, str] = {}
    g = fn.__globals__

    def note(label: str, value: Any, depth: int = 0) -> None:
        devices.extend(_device_functions_in(value))
        out[label] = value_digest(value)
        # `helpers.scale(...)`, `cfg.N`, `pkg.cfg.N`, `Config.N`: values read
        # through a module or class, matched by the attribute names the code uses
        is_module = isinstance(value, types.ModuleType)
        if depth < 4 and (is_module or isinstance(value, type) and value.__module__ != "builtins"):
            try:
                vdict = vars(value)
            except TypeError:
                return
            for attr in facts.names:
                if attr in vdict and not attr.startswith("__"):
                    sub = vdict[attr]
                    if is_module or _is_device_function(sub) or not callable(sub):
                        note(f"{label}.{attr}", sub, depth + 1)

    for name in facts.names:
        if name in g:
            note(name, g[name])
    if fn.__closure__:
        for name, cell in zip(facts.free_names, fn.__closure__):
            try:
                note(f"<closure>{name}", cell.cell_contents)
            except ValueError:
                out[f"<closure>{name}"] = "empty-cell"
    if fn.__defaults__:
        out["<defaults>"] = value_digest(tuple(fn.__defaults__))
    if fn.__kwdefaults__:
        out["<kwdefaults>"] = value_digest(dict(fn.__kwdefaults__))
    return out


def fingerprint(pyfunc: Any) -> dict[str, Any]:
    """Key parts of a kernel (or device function) from its function object.

    ``pyfunc`` is a Python function or anything with a ``.py_func`` (a pykern
    kernel or device function).  Runs no part of the compiler.
    """
    fn = _python_function(pyfunc)
    if fn is None:
        raise TypeError(f"fingerprint() needs a Python function, got {type(pyfunc).__name__}")
    facts = _facts_of(fn)
    devices: list[types.FunctionType] = []
    result: dict[str, Any] = {
        "name": _qualified_name(fn),
        "source": facts.source,
        "globals": _read_globals(fn, facts, devices),
    }
    callees: dict[str, dict[str, Any]] = {}
    seen = {id(fn)}
    while devices:
        dev = devices.pop()
        if id(dev) in seen:
            continue
        seen.add(id(dev))
        dfacts = _facts_of(dev)
        label = _qualified_name(dev)
        if label in callees:  # two different functions with one name: keep both
            label = f"{label}@{dfacts.file}:{dfacts.line}"
        callees[label] = {"source": dfacts.source, "globals": _read_globals(dev, dfacts, devices)}
    result["callees"] = dict(sorted(callees.items()))
    result["location"] = {"file": facts.file, "line": facts.line}
    return result
