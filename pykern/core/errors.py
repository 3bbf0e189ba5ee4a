"""The error kinds a pykern user sees: four, each a ``PykernError``.

* ``CompileError`` -- a kernel cannot be compiled (``CompileValueError`` for an out-of-range
  compile-time value);
* ``LaunchError`` -- a launch refused before anything ran (``LaunchValueError``,
  ``LaunchRuntimeError``);
* ``HipError`` -- a HIP runtime call failed;
* ``KernelRuntimeError`` -- a kernel failed while running (``KernelIndexError``,
  ``KernelZeroDivisionError``, ``KernelValueError`` under ``debug=True``; ``SanitizerError``,
  a sanitized launch's reports).

Every error pykern raises on purpose is one of these (or a subclass), so that a notebook user
gets a readable message pointing at their own code instead of a traceback from inside the
compiler. A ``debug=True`` kernel's own ``raise``/``assert`` reaches the host as the user's
exception class (``kernel_exception``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLoc:
    """A position in the user's source: 1-based line, 0-based column (as ``ast``)."""

    file: str
    line: int
    col: int
    source_line: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col + 1}"


class PykernError(Exception):
    """Base class of every error pykern raises on purpose."""

    # ``_render_traceback_`` (IPython's hook: user frames and the message only) is added by
    # pykern/core/tracebacks.py, which the package imports: errors stay free of the display code


class CompileError(PykernError):
    """A kernel could not be compiled: unsupported syntax, a type clash, ...

    The message reads like a compiler diagnostic::

        kern.py:7:9: error: cannot add float32 and tuple(int64, int64)
            out[i] = x[i] + t
                     ^
        hint: index the tuple first, e.g. t[0]

    Attributes ``file``, ``line``, ``col`` (1-based), ``source_line`` and
    ``hint`` carry the parts for tools.
    """

    def __init__(self, message: str, loc: SourceLoc | None = None, hint: str | None = None):
        self.msg = message
        self.loc = loc
        self.hint = hint
        self.file = loc.file if loc else None
        self.line = loc.line if loc else None
        self.col = (loc.col + 1) if loc else None
        self.source_line = loc.source_line if loc else None
        super().__init__(self._format())

    def _format(self) -> str:
        parts = []
        if self.loc is not None:
            parts.append(f"{self.loc}: error: {self.msg}")
            src = self.loc.source_line
            if src:
                stripped = src.rstrip("\n")
                parts.append("    " + stripped)
                # keep tabs so the caret lines up under the same glyph
                pad = "".join(c if c == "\t" else " " for c in stripped[: self.loc.col])
                parts.append("    " + pad + "^")
        else:
            parts.append(f"error: {self.msg}")
        if self.hint:
            parts.append(f"hint: {self.hint}")
        return "\n".join(parts)


class CompileValueError(CompileError, ValueError):
    """A kernel could not be compiled because a compile-time value is out of range
    (``alignment=3``): a ``ValueError`` too, as numba-cuda raises it."""


class LaunchError(PykernError, TypeError):
    """A launch was refused before anything ran: bad grid/block, wrong arguments.

    Also a ``TypeError``, as numba's errors for non-integer dimensions and
    arguments matching no signature are; see :class:`LaunchValueError`."""


class LaunchValueError(LaunchError, ValueError):
    """A launch refused for a bad *value* (too many dimensions, a zero or
    negative size, a grid or block too large, a cooperative grid beyond the
    occupancy limit): also a ``ValueError``, as numba's
    ``normalize_kernel_dimensions`` raises, so ``except ValueError`` ports."""


class LaunchRuntimeError(LaunchError, RuntimeError):
    """A launch of something that is not a kernel (a ``device=True`` function): also a
    ``RuntimeError``, as numba raises "Cannot compile a device function as a kernel"."""


class HipError(PykernError, RuntimeError):
    """A HIP runtime call failed. ``code`` is the hipError_t value, ``name`` its
    enumerator name (``hipErrorNoDevice``), ``message`` the runtime's text."""

    def __init__(self, code: int, name: str, message: str = "", call: str = ""):
        self.code = code
        self.name = name
        self.message = message
        self.call = call
        where = f"{call}: " if call else ""
        super().__init__(f"{where}{name} ({code}): {message}" if message else f"{where}{name} ({code})")


class KernelRuntimeError(PykernError, RuntimeError):
    """A kernel failed while running (debug bounds check, divergent barrier)."""


class KernelIndexError(KernelRuntimeError, IndexError):
    """``debug=True``: an index outside ``[-n, n)`` (numba raises ``IndexError``)."""


class KernelZeroDivisionError(KernelRuntimeError, ZeroDivisionError):
    """``debug=True``: a division or modulo by zero (numba's debug mode uses the
    Python error model and raises ``ZeroDivisionError``, for floats too)."""


class KernelValueError(KernelRuntimeError, ValueError):
    """``debug=True``: a slice assignment whose value has a different shape
    (numba raises ``ValueError``), or that pykern cannot do without a temporary."""


class SanitizerError(KernelRuntimeError):
    """A launch of a kernel compiled with ``sanitize=`` found hazards: data races or reads of
    memory nothing wrote. ``reports`` lists them (``SanitizerReport``-like objects with
    ``kind``, ``count``, ``first``/``second`` access and ``text``); the message names each.

    Example: ``except pykern.SanitizerError as e: print(e.reports[0].text)``"""

    def __init__(self, message: str, reports=()):
        super().__init__(message)
        self.reports = list(reports)


class SanitizerWarning(UserWarning):
    """What a ``sanitize="...,warn"`` launch issues instead of raising ``SanitizerError``; also
    issued once when a kernel compiled for a GPU asks for the sanitizer (a cpu-target feature)."""


def error_class_for_kind(kind: int):
    """The exception class of a kernel error record's kind (both targets use
    1 = index out of bounds, 3 = division by zero, 7 = a bad value (slice assignment); others:
    KernelRuntimeError; 6, a kernel's own exception, is made by ``kernel_exception``)."""
    return {1: KernelIndexError, 3: KernelZeroDivisionError, 7: KernelValueError}.get(kind, KernelRuntimeError)


def kernel_exception(spec, where: str, thread, block) -> Exception:
    """The exception a ``debug=True`` kernel's ``raise``/``assert`` reported, for the host to
    raise: ``spec`` is ``(class "module:qualname", constant args)`` from the kernel's exception
    table, ``where`` "<file>:<line>: `<source line>`", ``thread``/``block`` the first raising
    thread's ids. As numba.cuda, it is an instance of the user's own class made from those
    arguments (``except ValueError`` and ``pytest.raises(ValueError)`` work, ``args`` are the
    kernel's); the place and thread are a note (Python < 3.11: prefixed to the message, as
    numba does). A class this process cannot find, or cannot make, gives ``KernelRuntimeError``.

    Example::

        >>> e = kernel_exception(("builtins:ValueError", ("bad",)), "k.py:3: `raise ValueError('bad')`", (0, 0, 0), (2, 0, 0))
        >>> type(e).__name__, e.args
        ('ValueError', ('bad',))
    """
    cls_name, args = spec
    note = f"raised in a kernel at {where} (thread {tuple(thread)} of block {tuple(block)})"
    shown = cls_name.split(":", 1)[1] if cls_name.startswith("builtins:") else cls_name.replace(":", ".")
    cls = _exception_class(cls_name)
    if cls is None:
        return KernelRuntimeError(f"{note}: {shown}{args!r}; this process cannot find the class {shown}")
    try:
        exc = cls(*args)
    except Exception as e:  # a user class whose __init__ wants other arguments
        return KernelRuntimeError(f"{note}: {shown}{args!r}, which cannot be created on the host ({e})")
    try:
        exc._pykern_kernel = True  # public entry points cut pykern's frames from its traceback (tracebacks.py)
    except AttributeError:  # a user class with __slots__
        pass
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:
        exc.args = (f"{note}: {args[0]}",) + tuple(args[1:]) if args else (note,)
    return exc


def _exception_class(name: str):
    """The Exception subclass named ``module:qualname``, or None."""
    import importlib
    import sys

    module, _, qualname = name.partition(":")
    try:
        obj = sys.modules.get(module) or importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except Exception:
        return None
    return obj if isinstance(obj, type) and issubclass(obj, Exception) else None
