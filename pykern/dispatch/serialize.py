"""Pickling kernels by value, so they travel to other processes (Dask workers, multiprocessing).

``pickle.dumps(kernel)`` records what the kernel *is* -- its source text, file name and
line, the globals and closure values it reads (modules by name, device functions by
value, recursively), defaults, ``@jit`` options and eager signatures -- and none of
what it has *built* (compiled overloads, loaded machine code, locks). Unpickling
rebuilds the Python function from that source, so a kernel defined in ``__main__`` or
in a notebook cell (source from ``linecache``, where IPython keeps its cells) works in a
process that never saw the file. The rebuilt kernel compiles on first launch there,
with the same cache key as the original (same source, name, file, line and globals),
so workers sharing a cache directory find one another's (and the client's) compiles.

A process that receives the same kernel many times (a Dask worker running one task per
block) gets the same :class:`~pykern.dispatch.dispatcher.Dispatcher` back each time, so its
compiled overloads are reused rather than reloaded.

This module knows kernels only by their attributes (``py_func``, ``options``, ...):
``pykern.dispatch.dispatcher`` calls it to pickle and to unpickle, and makes the rebuilt
Dispatcher itself, so the import runs one way.

Example::

    >>> import pickle, pykern
    >>> @pykern.jit
    ... def inc(a):
    ...     a[0] += 1
    >>> k2 = pickle.loads(pickle.dumps(inc))   # in this or any other process
"""

from __future__ import annotations

import ast
import builtins
import collections
import dis
import hashlib
import linecache
import textwrap
import threading
import types

_MODULE = "pykern:module"
_SELF = "pykern:self"

# digest of a pickled kernel's state -> the Dispatcher rebuilt from it (bounded, most recent kept)
_rebuilt: "collections.OrderedDict[str, object]" = collections.OrderedDict()
_REBUILT_MAX = 256
_lock = threading.Lock()


def _global_names(code: types.CodeType) -> list[str]:
    """Names the function (and code nested in it) reads as globals."""
    names = []
    stack = [code]
    while stack:
        c = stack.pop()
        for ins in dis.get_instructions(c):
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                names.append(ins.argval)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return list(dict.fromkeys(names))


def _freeze(value, dispatcher):
    if value is dispatcher:  # a recursive kernel reads itself
        return (_SELF,)
    if isinstance(value, types.ModuleType):
        return (_MODULE, value.__name__)
    return value


def _thaw(value):
    if isinstance(value, tuple) and len(value) in (1, 2) and value[0] in (_MODULE, _SELF):
        if value[0] == _MODULE:
            import importlib

            return importlib.import_module(value[1])
    return value


def dispatcher_state(dispatcher) -> tuple[dict, str]:
    """``(state, digest)``: the kernel by value, and the identity ``rebuild_dispatcher`` reuses by."""
    from pykern.frontend.fingerprint import _source_text

    fn = dispatcher.py_func
    source = _source_text(fn)
    if source is None:
        import pickle

        raise pickle.PicklingError(
            f"cannot pickle kernel {dispatcher.__name__}: its source is not available "
            "(define it in a file or a notebook cell, not from an exec'd string)")
    if not source.lstrip().startswith(("@", "def ", "async def ")) or fn.__name__ == "<lambda>":
        import pickle

        raise pickle.PicklingError(f"cannot pickle kernel {dispatcher.__name__}: only functions defined with "
                                   "'def' travel by value (a lambda's source line holds more than the function)")
    g = fn.__globals__
    globals_ = {n: _freeze(g[n], dispatcher) for n in _global_names(fn.__code__) if n in g}
    closure = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            closure[name] = _freeze(cell.cell_contents, dispatcher)
        except ValueError:  # an empty cell: the name is not bound yet, as in the original
            pass
    state = {
        "source": source,
        "filename": fn.__code__.co_filename,
        "first_line": fn.__code__.co_firstlineno,
        "name": fn.__name__,
        "qualname": fn.__qualname__,
        "module": fn.__module__,
        "globals": globals_,
        "closure": closure,
        "defaults": fn.__defaults__,
        "kwdefaults": fn.__kwdefaults__,
        "device": dispatcher.__pykern_device__,
        "options": dict(dispatcher.options),
        "signatures": list(dispatcher._signatures),
    }
    return state, _state_digest(dispatcher, state)


def _state_digest(dispatcher, state) -> str:
    """Identity of the kernel's meaning: equal for two picklings of the same kernel."""
    from pykern.frontend.fingerprint import fingerprint

    try:
        fp = repr(sorted(fingerprint(dispatcher.py_func).items()))
    except Exception:  # values without a stable digest: every pickling is its own kernel
        fp = repr(id(dispatcher))
    parts = [fp, state["filename"], str(state["first_line"]), repr(state["device"]),
             repr(sorted(state["options"].items())), repr(state["signatures"]), repr(state["defaults"])]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


def _source_file(filename: str, first_line: int, source: str) -> str:
    """The file name the rebuilt function's code gets, its lines made findable by linecache."""
    src_lines = source.splitlines(True)
    start = first_line - 1
    on_disk = [] if filename in _injected else linecache.getlines(filename)
    if on_disk and textwrap.dedent("".join(on_disk[start:start + len(src_lines)])) == source:
        return filename  # the same file is here (a shared filesystem, a LocalCluster)
    if on_disk:
        name = f"<pykern pickled from {filename}>"
    elif filename.startswith("<"):  # exec()'d text: its own entry, never the shared name (<string>)
        name = f"<pykern pickled {hashlib.sha256(source.encode()).hexdigest()[:12]} from {filename}>"
    else:
        name = filename
    # functions of one file (a kernel and its device functions) share one entry, each at its
    # original lines, so that line numbers (errors, debug locations) are the original's
    entry = linecache.cache.get(name) if name in _injected else None
    lines = list(entry[2]) if entry else []
    lines += ["\n"] * (start + len(src_lines) - len(lines))
    lines[start:start + len(src_lines)] = src_lines
    linecache.cache[name] = (sum(map(len, lines)), None, lines, name)
    _injected.add(name)
    return name


_injected: set = set()  # linecache entries this module made


def _undecorated(fn):
    return fn


def rebuild_dispatcher(state: dict, digest: str, make):
    """Unpickle: the Dispatcher for ``state`` (the one already rebuilt in this process if any).

    ``make(fn, device, options, signatures)`` makes a new one around the rebuilt Python function.
    """
    with _lock:
        d = _rebuilt.get(digest)
        if d is not None:
            _rebuilt.move_to_end(digest)
            return d
    filename = _source_file(state["filename"], state["first_line"], state["source"])
    tree = ast.parse(state["source"])
    fdef = tree.body[0]
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise TypeError(f"pickled kernel {state['name']}: source does not start with a def")
    # the decorators ran in the original process; keep their lines (the code's first line is
    # the first decorator's, as in the original) but make them do nothing
    fdef.decorator_list = [ast.copy_location(ast.Name("__pykern_undecorated__", ast.Load()), d)
                           for d in fdef.decorator_list]
    closure = state["closure"]
    if closure:
        # a real closure again (cache keys tell closure cells from globals): the def nested in
        # a synthetic outer function whose parameters are the free variables
        args = ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in closure], kwonlyargs=[], kw_defaults=[],
                             defaults=[])
        outer = ast.FunctionDef("__pykern_closure__", args, [fdef, ast.Return(ast.Name(fdef.name, ast.Load()))],
                                [], None, None, type_params=[]) if hasattr(ast, "TypeAlias") else \
            ast.FunctionDef("__pykern_closure__", args, [fdef, ast.Return(ast.Name(fdef.name, ast.Load()))], [])
        tree.body = [ast.copy_location(outer, fdef)]
        ast.fix_missing_locations(tree)
    ast.increment_lineno(tree, state["first_line"] - 1)
    ns = {name: _thaw(v) for name, v in state["globals"].items()}
    ns.update(__name__=state["module"], __builtins__=builtins, __pykern_undecorated__=_undecorated)
    exec(compile(tree, filename, "exec"), ns)
    if closure:
        fn = ns.pop("__pykern_closure__")(*(_thaw(v) for v in closure.values()))
    else:
        fn = ns[fdef.name]
    if filename.startswith("<"):
        # the code comes from an edited tree (decorators emptied, maybe a closure around it), so
        # compiling the entry's text again does not give it (the frontend's check for
        # pseudo-files, ``sources.text_of``): this module made both, the text is the code's
        from pykern.core import sources

        text = "".join(linecache.getlines(filename))  # (its own entry, or the original's: doctest's)
        if text:
            sources.remember(fn.__code__, text)
    fn.__qualname__ = state["qualname"]
    fn.__defaults__ = state["defaults"]
    fn.__kwdefaults__ = state["kwdefaults"]
    d = make(fn, state["device"], dict(state["options"]), list(state["signatures"]))
    for name, v in state["globals"].items():
        if isinstance(v, tuple) and v == (_SELF,):
            ns[name] = d
    if ns.get(fdef.name) is fn and fdef.name not in state["globals"]:
        del ns[fdef.name]
    with _lock:
        d = _rebuilt.setdefault(digest, d)
        while len(_rebuilt) > _REBUILT_MAX:
            _rebuilt.popitem(last=False)
    return d
