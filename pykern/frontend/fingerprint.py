"""What a kernel's compiled code depends on, computed without compiling it.

``fingerprint(fn)`` returns the kernel-side parts of the disk-cache key:

* ``name``: ``module.qualname``;
* ``source``: digest of the function's own source text (dedented) as the
  frontend reads it now, not of its whole file -- editing an unrelated function
  in the same file still hits;
* ``globals``: the values of the globals, closure variables and replaced
  builtins the function reads (numbers, bools, strings, tuples, numpy scalars
  and arrays by dtype/shape/content digest; modules, classes and functions by
  name);
* ``callees``: the same three things for every device function reachable from
  it, transitively and across modules;
* ``location``: file and first line of the function and its callees, ``sync``
  when any names a barrier or wave op (in the key for debug builds, and on the
  cpu target for ``sync`` code);
* ``uncacheable`` (only when present): why no key may be made -- the function
  can reach an ``@overload``ed function.

Everything is plain JSON data.  Source digests and the list of names a
function reads are remembered per function object (and its file's text, checked by
one ``stat``), so a repeated call only looks up and digests the current values
(~25 us for a kernel and a callee).  A notebook cell
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

import builtins
import enum
import hashlib
import linecache
import sys
import textwrap
import types
import weakref
from typing import Any

from pykern.core import external, sources

__all__ = ["fingerprint", "value_digest", "source_digest"]

_MAX_INLINE_REPR = 200


class _CodeFacts:
    """What never changes for one function's code and source text: its source digest,
    location and the names it may read."""

    __slots__ = ("code", "src", "source", "file", "line", "names", "free_names", "sync")

    def __init__(self, fn: types.FunctionType, src):
        code = self.code = fn.__code__
        self.src = src  # the text it was digested from (compared, never digested again, on later calls)
        self.source = source_digest(fn, src)
        self.file = code.co_filename
        self.line = code.co_firstlineno
        # Every co_name may be a global (LOAD_GLOBAL) or an attribute (LOAD_ATTR);
        # treating each as both only ever makes the key stricter.
        self.names = tuple(dict.fromkeys(n for c in _walk_code(code) for n in c.co_names))
        self.free_names = code.co_freevars  # closure cells line up with these
        self.sync = not SYNC_NAMES.isdisjoint(self.names)


#: Names of the kernel-language functions whose code on the cpu target carries its source line
#: (barrier and wave-op sites name it in the divergent-barrier report). A function that names
#: one, or reads a stub of one under another name, is keyed by its location on the cpu target.
#: Covers ``frontend.ir.intrinsic_names("barrier"/"wave")`` (tests/runtime/cache/test_cache_dependencies.py).
SYNC_NAMES = frozenset({
    "syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or", "grid_sync", "syncwarp",
    "shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync", "ballot_sync", "all_sync",
    "any_sync", "eq_sync", "activemask", "lanemask_lt", "this_grid", "this_thread_block", "sync",
})


# Keyed by function object (identity; equal code objects of different cells
# must not share a location), weakly so redefined functions do not leak.
_facts: "weakref.WeakKeyDictionary[types.FunctionType, _CodeFacts]" = weakref.WeakKeyDictionary()
#: code object -> the linecache lines it was last read from: a file deleted (or made
#: unreadable) under a live process keeps the text its functions had, for the key and the
#: frontend alike, rather than compiling a "no source" digest or failing
_last_lines: "weakref.WeakKeyDictionary[types.CodeType, list]" = weakref.WeakKeyDictionary()


def _walk_code(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _walk_code(const)


def source_digest(fn: types.FunctionType, src=None) -> str:
    """sha256 (32 hex digits) of the function's dedented source; for functions
    without source (``exec`` strings), of the code object's contents."""
    text = _source_text(fn, src)
    if text is not None:
        if fn.__code__.co_name == "<lambda>":  # lambdas sharing a line share its text: add the code
            text += "\0" + _code_bytes(fn.__code__).hex()
        return "src:" + hashlib.sha256(text.encode()).hexdigest()[:32]
    return "code:" + hashlib.sha256(_code_bytes(fn.__code__)).hexdigest()[:32]


def _source_text(fn: types.FunctionType, src=None) -> str | None:
    span = code_lines(fn, src)
    if span is None:
        return None
    lines, start, end = span
    while end > start + 1 and _no_code(lines[end - 1]):  # a trailing comment changes no code
        end -= 1
    return textwrap.dedent("".join(lines[start:end]))


def current_source(fn: types.FunctionType):
    """Where ``fn``'s source is read from now: the checked text of an exec'd function
    (a str), the lines of its file as ``linecache`` has them (a list, re-read when the
    file changed), or None."""
    code = fn.__code__
    text = sources.text_of(code, fn.__globals__)  # as resolve.source_of finds it
    if text is not None:
        return text
    filename = code.co_filename
    if filename.startswith("<"):
        # a pseudo-file's linecache entry under a shared name (<string>, a reused cell name)
        # may hold another function's text: text_of took it only if it gives this code
        return None
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, fn.__globals__)
    if lines:
        if _last_lines.get(code) is not lines:
            _last_lines[code] = lines
        return lines
    return _last_lines.get(code)


def code_lines(fn: types.FunctionType, src=None):
    """``(lines of fn's file, start, end)``: ``lines[start:end]`` is the def block as the
    frontend reads it (``resolve.source_of``): from the def (or its first decorator) to the
    last line that any instruction of the function or its nested code comes from, then the
    lines indented deeper than the def (a trailing ``pass``, docstring or comment), trailing
    blank lines and outer comments dropped -- found without tokenize, whose first use costs
    milliseconds (as does the inspect.getmodule() scan inside inspect.getsource). None when
    the file's lines are not to be had. ``src``: ``current_source(fn)`` when known."""
    code = fn.__code__
    if src is None:
        src = current_source(fn)
    if src is None:
        return None
    lines = src.splitlines(True) if isinstance(src, str) else src
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
    end = min(end, len(lines))
    head = lines[start].lstrip()
    base = len(lines[start]) - len(head)
    while end < len(lines) and (_no_code(lines[end]) or _indent(lines[end]) > base):
        end += 1
    while end > start + 1 and _no_code(lines[end - 1]) and (not lines[end - 1].strip() or _indent(lines[end - 1]) <= base):
        end -= 1
    return lines, start, end


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _no_code(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("#")


def _code_bytes(code: types.CodeType) -> bytes:
    parts = [code.co_code, repr(code.co_names).encode(), repr(code.co_varnames).encode(),
             repr(code.co_freevars).encode(), repr((code.co_argcount, code.co_kwonlyargcount,
                                                   code.co_flags)).encode()]
    for c in code.co_consts:
        parts.append(_code_bytes(c) if isinstance(c, types.CodeType) else repr(c).encode())
    return b"\x00".join(parts)


def _facts_of(fn: types.FunctionType) -> _CodeFacts:
    facts = _facts.get(fn)
    if facts is not None and facts.code is fn.__code__:  # __code__ can be reassigned
        if facts.file.startswith("<"):  # a checked exec text belongs to its code object for good
            return facts
        # the frontend compiles the file's text as it is now (an edit under a live process,
        # importlib.reload of another module, a notebook's %autoreload): so is the digest
        src = current_source(fn)
        if src is facts.src:
            return facts
        if src == facts.src:
            facts.src = src
            return facts
    else:
        src = current_source(fn)
    facts = _facts[fn] = _CodeFacts(fn, src)
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
        # namedtuples too (their fields are frozen): the class name tells two of them apart, and
        # the field names which value `CFG.y` reads (`namedtuple("P", "x y")` edited to "y x")
        inner = ",".join(value_digest(v) for v in value)
        label = t.__name__ if t in (tuple, list) else _qualified_name(t) + _fields_text(t)
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
        if issubclass(value, tuple) and isinstance(getattr(value, "_fields", None), tuple):
            # `P(1).b` in a kernel reads the namedtuple class's fields and defaults
            defaults = getattr(value, "_field_defaults", None) or {}
            return _bounded(f"class:{_qualified_name(value)}{_fields_text(value)}:"
                            f"{value_digest(tuple(defaults.items()))}")
        return f"class:{_qualified_name(value)}"
    if isinstance(value, (int, float, complex, str, bytes)):
        # a subclass instance (numpy's scalars were handled above) is frozen as its value
        # (the base type's repr: a subclass's own __repr__/__int__ may say anything)
        base = next(b for b in (int, float, complex, str, bytes) if isinstance(value, b))
        return _bounded(f"{_qualified_name(t)}({base.__name__}:{base.__repr__(value)})")
    if isinstance(value, external.ExternFunction):  # declare_device: the code linked, by content
        return _bounded(value.cache_text())
    if _is_device_function(value):
        # one Python function may be jitted with several declared signatures and options
        # (``add_i8 = cuda.jit("int8(int8, int8)", device=True)(_add)``): they are part of its meaning
        decl = [f"{rt}{tuple(map(str, args))}" for rt, args in getattr(value, "_signatures", None) or ()]
        opts = getattr(value, "options", None)
        if opts and opts.get("link"):  # link= files by their contents, not their names
            opts = {**opts, "link": external.links_digest(external.link_items(opts["link"]))}
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


def _fields_text(cls) -> str:
    fields = getattr(cls, "_fields", None)
    return repr(tuple(fields)) if isinstance(fields, tuple) else ""


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
    # numpy 2's np.sum, np.mean, np.max... are all one class (_ArrayFunctionDispatcher): a
    # class name alone made a kernel over np.mean reuse the one over np.sum
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if callable(value) and isinstance(name, str):
        return f"function:{getattr(value, '__module__', None) or 'numpy'}.{name}"
    # anything else (np.finfo(np.float32) vs np.finfo(np.float64)): its repr, which may only
    # miss (an address in it), never collide as the class name did
    text = repr(value)
    return f"object:numpy.{type(value).__qualname__}:{hashlib.sha256(text.encode()).hexdigest()[:32]}"


def _dtype_text(dt) -> str:
    # dtype.str alone is "|V8" for every 8-byte record type: spell out fields
    return dt.str if dt.fields is None and dt.subdtype is None else repr(dt.descr)


class _Seen:
    """What a fingerprint noticed besides the digests: device functions to follow, a
    barrier or wave op (the cpu code then names source lines), an overloaded function."""

    __slots__ = ("devices", "refs", "sync", "overloaded", "overloads")

    def __init__(self):
        self.devices: list[types.FunctionType] = []
        # (digests, label, device functions): each device function a value holds, to name the
        # callee entry it is once every callee has its label
        self.refs: list[tuple[dict, str, list]] = []
        self.sync = False
        self.overloaded: list[str] = []
        # numba.extending's registry, if anything imported it: without it nothing is overloaded
        ext = sys.modules.get("pykern.frontend.user_overloads")
        self.overloads = getattr(ext, "_templates", None) or None


def _is_overloaded(value: Any, registry: dict, depth: int = 0) -> bool:
    try:
        if value in registry:
            return True
    except Exception:  # unhashable (an array, a list, a frame whose __hash__ raises): not a function
        pass
    if isinstance(value, (tuple, list)) and depth < 8:
        return any(_is_overloaded(v, registry, depth + 1) for v in value)
    return False


def _is_sync_stub(value: Any) -> bool:
    name = getattr(value, "_pk_name", None) if type(value).__module__ == "pykern.lang.stubs" else None
    return isinstance(name, str) and name.rpartition(".")[2] in SYNC_NAMES


def _builtin_value(g: dict, name: str) -> Any:
    b = g.get("__builtins__", builtins)
    if isinstance(b, dict):
        return b.get(name, _MISSING)
    return getattr(b, name, _MISSING)


_MISSING = object()


def _read_globals(fn: types.FunctionType, facts: _CodeFacts, seen: _Seen) -> dict[str, str]:
    """Digests of the globals, closure variables and replaced builtins ``fn`` reads (read
    as ``resolve.FunctionEnv`` finds names); what else they show is noted in ``seen``."""
    out: dict[str, str] = {}
    g = fn.__globals__
    registry = seen.overloads

    def note(label: str, value: Any, depth: int = 0) -> None:
        found = list(_device_functions_in(value))
        if found:
            seen.devices.extend(found)
            seen.refs.append((out, label, found))
        out[label] = value_digest(value)
        if registry is not None and _is_overloaded(value, registry):
            # what an @overload function returns is decided while the kernel is typed
            seen.overloaded.append(label)
        if not seen.sync and _is_sync_stub(value):  # `bar = cuda.syncthreads`, then `bar()`
            seen.sync = True
        # `helpers.scale(...)`, `cfg.N`, `pkg.cfg.N`, `Config.N`: values read
        # through a module or class, matched by the attribute names the code uses
        is_module = isinstance(value, types.ModuleType)
        if depth < 4 and (is_module or isinstance(value, type) and value.__module__ != "builtins"):
            try:
                vdict = vars(value)
            except TypeError:
                return
            # (pykern's own lazy names are host API and its submodules, keyed by its version)
            lazy = is_module and "__getattr__" in vdict and not _is_pykern(value.__name__)
            for attr in facts.names:
                if attr.startswith("__"):
                    continue
                if attr in vdict:
                    sub = vdict[attr]
                elif lazy:
                    # a module's __getattr__ (PEP 562: lazily imported submodules, `pkg.sub.CONST`)
                    # answers the frontend's getattr: ask it too
                    sub = _lazy_attribute(value, attr)
                    if sub is _MISSING:
                        continue
                else:
                    continue
                if is_module or _is_device_function(sub) or not callable(sub):
                    note(f"{label}.{attr}", sub, depth + 1)

    closure = dict(zip(facts.free_names, fn.__closure__ or ()))
    for name in facts.names:
        if name in g:
            note(name, g[name])
            continue
        if name in closure:
            continue
        value = _builtin_value(g, name)
        if value is _MISSING:
            continue
        # a builtin replaced in the builtins module (`builtins.abs = my_abs`) is what the
        # frontend calls; the genuine ones are pykern's own meaning, keyed by its version
        genuine = getattr(value, "__module__", None) == "builtins" and getattr(value, "__name__", None) == name
        if not genuine:
            note(f"<builtin>{name}", value)
        elif registry is not None and _is_overloaded(value, registry):  # @overload(abs)
            seen.overloaded.append(f"<builtin>{name}")
    for name, cell in closure.items():
        try:
            note(f"<closure>{name}", cell.cell_contents)
        except ValueError:
            out[f"<closure>{name}"] = "empty-cell"
    if fn.__defaults__:  # (`def f(x, g=lib.helper)`: a device function default is a callee)
        note("<defaults>", tuple(fn.__defaults__))
    if fn.__kwdefaults__:
        note("<kwdefaults>", dict(fn.__kwdefaults__))
    return out


def _is_pykern(module_name: str) -> bool:
    return module_name == "pykern" or module_name.startswith("pykern.")


def _lazy_attribute(module: types.ModuleType, attr: str) -> Any:
    try:
        return getattr(module, attr)
    except Exception:  # AttributeError, or a lazy import that fails: the frontend reports it
        return _MISSING


def fingerprint(pyfunc: Any) -> dict[str, Any]:
    """Key parts of a kernel (or device function) from its function object.

    ``pyfunc`` is a Python function or anything with a ``.py_func`` (a pykern
    kernel or device function).  Runs no part of the compiler.
    """
    fn = _python_function(pyfunc)
    if fn is None:
        raise TypeError(f"fingerprint() needs a Python function, got {type(pyfunc).__name__}")
    facts = _facts_of(fn)
    seen = _Seen()
    result: dict[str, Any] = {
        "name": _qualified_name(fn),
        "source": facts.source,
        "globals": _read_globals(fn, facts, seen),
    }
    sync = facts.sync
    callees: dict[str, dict[str, Any]] = {}
    where: dict[str, str] = {}
    labels = {id(fn): "<self>"}
    devices = seen.devices
    while devices:
        dev = devices.pop()
        if id(dev) in labels:
            continue
        dfacts = _facts_of(dev)
        label = _qualified_name(dev)
        if label in callees:  # two different functions with one name: keep both
            label = f"{label}@{dfacts.file}:{dfacts.line}"
            n = 1
            while label in callees:  # (one def made twice: closures of a factory)
                n += 1
                label = f"{_qualified_name(dev)}@{dfacts.file}:{dfacts.line}#{n}"
        labels[id(dev)] = label
        callees[label] = {"source": dfacts.source, "globals": _read_globals(dev, dfacts, seen)}
        where[label] = f"{dfacts.file}:{dfacts.line}"
        sync = sync or dfacts.sync
    for digests, name, found in seen.refs:
        # which callee entry a name reads, where its digest alone does not say: two functions of
        # one name (closures of one def) are told apart by their entries, not by the names that
        # bind them -- (f1, f10, f10) and (f1, f1, f10) find the same two entries
        bound = [labels[id(f)] for f in found]
        if any(b != _qualified_name(f) for b, f in zip(bound, found)):
            digests[name] = _bounded(f"{digests[name]}=>{','.join(bound)}")
    result["callees"] = dict(sorted(callees.items()))
    # where the code's messages point (used in the key by debug builds, and on the cpu target by
    # code with barriers or wave ops, whose divergent-barrier report names their lines)
    location: dict[str, Any] = {"file": facts.file, "line": facts.line}
    if where:
        location["callees"] = dict(sorted(where.items()))
    if sync or seen.sync:
        location["sync"] = True
    result["location"] = location
    if seen.overloaded:
        result["uncacheable"] = "reads overloaded functions: " + ", ".join(sorted(set(seen.overloaded)))
    return result
