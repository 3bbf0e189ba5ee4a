"""Source text of functions defined by ``exec``/``compile`` of a string.

pykern compiles kernels from their source. A function made by ``exec(text)`` has none that
``inspect`` or ``linecache`` can find (its file is ``<string>``, as for ``python -c``), yet code that writes kernels
as text -- code generators, numba-cuda's own atomics tests -- relies on numba compiling them
from bytecode. ``text_of`` first tries the pseudo-file's ``linecache`` entry (IPython and
code that registers its text put it there), then two ways to the text, all checked the same
way (below):

* ``search_frames``, always: when the frontend finds no source, the text is often still
  alive -- a local or global string of a caller (``src = ...; exec(src, ns)``, then
  ``cuda.jit(ns["k"])``), or a string constant of a caller's code (``@cuda.jit`` inside the
  exec'd text runs while ``exec`` does). Free until a function without source is compiled.
* an audit hook (``install``), on request (``PYKERN_EXEC_SOURCES=1``): CPython raises the
  audit events ``compile`` (text and file name) and then ``exec`` (the code object) for each
  such call; the hook pairs them and remembers the text for every function code object
  inside, as long as the code object lives (a weak reference). This also finds texts that are
  gone when the function is compiled (a factory that exec's and returns plain functions,
  jitted later -- numba-cuda's atomics tests). It is not on by default because a Python audit
  hook runs for every audited event in the process -- about 120 ns each, and every ``id()``
  and ``ctypes`` call is one (pykern's launch takes one ``id()`` per numpy array argument).

Nothing is trusted unchecked: a text is used only if compiling it again gives a code object
equal to the function's (same bytecode, constants, names and line table), so a text paired
with the wrong ``exec`` or a look-alike string is never taken. Functions compiled from an AST
have no text (a ``CompileError`` says so).
"""

from __future__ import annotations

import __future__
import sys
import threading
import types
import warnings
import weakref

from pykern.core import settings

_pending = threading.local()  # this thread's last compiled text: (text, filename)
#: id(function code object) -> [weak reference to it, text, checked]; a text is checked
#: (compiled again and compared, ``_gives``) once, not at every compilation that looks it up
_texts: dict = {}
_installed = False
_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag


def _audit(event, args):
    # must never raise: an exception here would fail the user's audited operation
    if event == "compile":
        try:
            text, filename = args
            if isinstance(text, (str, bytes)) and isinstance(filename, str) and filename[:1] == "<":
                _pending.value = (text, filename)
        except Exception:
            pass
    elif event == "exec":
        try:
            pending = getattr(_pending, "value", None)
            if pending is not None:
                _pending.value = None
                code = args[0]
                if isinstance(code, types.CodeType) and code.co_filename == pending[1]:
                    _remember(code, pending[0])
        except Exception:
            pass


def _remember(module_code: types.CodeType, text) -> None:
    functions = list(_function_codes(module_code))
    if not functions:
        return  # eval("1 + 2") and the like: no function to compile later
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    for code in functions:
        _remember_function(code, text)


def _remember_function(code: types.CodeType, text: str, checked: bool = False) -> None:
    key = id(code)
    _texts[key] = [weakref.ref(code, lambda _ref, key=key: _forget(key, _ref)), text, checked]


def remember(code: types.CodeType, text: str) -> None:
    """``text`` is the whole text ``code`` comes from (lines numbered as ``code``'s), known to
    its maker though compiling it again would not give ``code`` (an edited tree)."""
    _remember_function(code, text, checked=True)


def _forget(key: int, ref) -> None:
    entry = _texts.get(key)
    if entry is not None and entry[0] is ref:
        del _texts[key]


def _function_codes(code: types.CodeType):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield const
            yield from _function_codes(const)


def _gives(text: str, code: types.CodeType) -> bool:
    """Does compiling ``text`` (as ``code``'s file, with its __future__ flags) give ``code``?"""
    try:
        with warnings.catch_warnings():  # a look-alike string may warn (a template's "{op}(...)")
            warnings.simplefilter("ignore")
            again = compile(text, code.co_filename, "exec", flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return any(c == code for c in _function_codes(again))


def lookup(code: types.CodeType) -> str | None:
    """The whole text ``code`` was compiled from (lines numbered as ``code``'s), or None."""
    entry = _texts.get(id(code))
    if entry is None or entry[0]() is not code:
        return None
    if not entry[2]:
        if not _gives(entry[1], code):
            return None
        entry[2] = True
    return entry[1]


def text_of(code: types.CodeType, module_globals=None) -> str | None:
    """The checked whole text of a function compiled from a pseudo-file (``<string>``,
    ``<cell-3>``) or remembered by the hook; None for a real file (read it as usual) or
    when no text is to be had. The pseudo-file's ``linecache`` entry is tried before
    the callers' strings: it is cheap and, unlike reading a caller's ``f_locals`` (a
    snapshot of its locals that the frame then keeps, pinning kernels the caller has
    since deleted), leaves nothing behind -- but checked, since an entry for a shared
    name such as ``<string>`` may hold another text."""
    text = lookup(code)
    if text is not None or not code.co_filename.startswith("<"):
        return text
    import linecache

    lines = linecache.getlines(code.co_filename, module_globals)
    for text in ("".join(lines), _command_text()):
        if text and _gives(text, code):
            _remember_function(code, text, checked=True)
            return text
    return search_frames(code)


def _command_text() -> str | None:
    """The program of ``python -c <text>`` (its functions' file is ``<string>``): CPython keeps
    the command line in ``sys.orig_argv`` (a script's own ``-c`` argument may be found too:
    ``text_of`` checks every text)."""
    argv = list(getattr(sys, "orig_argv", ()))
    return argv[argv.index("-c") + 1] if "-c" in argv[:-1] else None


def search_frames(code: types.CodeType, depth: int = 64) -> str | None:
    """The text of ``code`` found among the strings its callers still hold, or None; a text
    found is remembered, so later compilations of the function find it too."""
    marker = ("lambda" if code.co_name == "<lambda>" else f"def {code.co_name}")
    seen = set()
    frame = sys._getframe(1)
    while frame is not None and depth > 0:
        depth -= 1
        for text in _strings_of(frame):
            if id(text) in seen or marker not in text:
                continue
            seen.add(id(text))
            if _gives(text, code):
                _remember_function(code, text, checked=True)
                return text
        frame = frame.f_back
    return None


def _strings_of(frame):
    for space in (frame.f_locals, frame.f_globals):
        for v in list(space.values()):
            if isinstance(v, str):
                yield v
    todo = [frame.f_code]
    while todo:
        c = todo.pop()
        for const in c.co_consts:
            if isinstance(const, str):
                yield const
            elif isinstance(const, types.CodeType):
                todo.append(const)


def install() -> None:
    """Start remembering exec'd texts (once per process; audit hooks cannot be removed)."""
    global _installed
    if not _installed:
        _installed = True
        sys.addaudithook(_audit)


def install_if_asked() -> None:
    if settings.get("PYKERN_EXEC_SOURCES"):
        install()
