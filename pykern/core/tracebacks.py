"""Short tracebacks for pykern's errors: the user's frames and the message, not the compiler's insides.

A ``CompileError`` raised while a launch compiles a kernel passes through thirty frames of
the dispatcher, compiler and frontend; none of them helps the user, whose error is in the
kernel's source (the message already shows the line and a caret). So the public entry
points (``k[grid, block](...)``, ``k.compile``, ``k.inspect_*``, eager ``@jit(sig)``)
re-raise pykern's own errors with the internal frames cut:

* in scripts the traceback ends at one pykern line, which says how to get the rest;
* in IPython/Jupyter ``PykernError._render_traceback_`` shows the user's frames
  (``Cell In[3], line 7``) and the message only.

``PYKERN_FULL_TRACEBACK=1`` keeps every frame (for bug reports). Errors that are not
pykern's (a bug raising ``KeyError`` inside the compiler) always keep their full traceback.

Example::

    $ PYKERN_FULL_TRACEBACK=1 python my_script.py    # the whole traceback, for a bug report
"""

from __future__ import annotations

import functools
import os

from pykern.core import settings

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # pykern/, from pykern/core/


def full_traceback() -> bool:
    """True when ``PYKERN_FULL_TRACEBACK`` asks for pykern's internal frames."""
    return settings.get("PYKERN_FULL_TRACEBACK")


def trimmed(func):
    """Decorate a public method: pykern errors leave it without the frames below it."""

    @functools.wraps(func)
    def public(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except Exception as e:
            if not cut_frames(e):
                raise
            raise e.with_traceback(None)  # pykern's internal frames hidden (PYKERN_FULL_TRACEBACK=1 shows them)

    return public


def cut_frames(e: BaseException) -> bool:
    """Should ``e`` leave a public entry point without pykern's frames? Yes for pykern's own
    errors and for the exception a ``debug=True`` kernel raised (the user's class, marked by
    ``errors.kernel_exception``), unless ``PYKERN_FULL_TRACEBACK`` asks for every frame."""
    return (isinstance(e, _errors().PykernError) or getattr(e, "_pykern_kernel", False)) and not full_traceback()


def _errors():
    from pykern.core import errors

    return errors


def _internal(filename: str) -> bool:
    if not filename or os.path.abspath(filename).startswith(_PKG_DIR):
        return True
    # IPython's own frames (run_code's exec) sit above the cell's in a notebook
    return (os.sep + "IPython" + os.sep) in filename or (os.sep + "ipykernel" + os.sep) in filename


def _where(filename: str, lineno: int, name: str) -> str:
    try:  # a notebook cell: say "Cell In[3], line 7" as IPython does
        from IPython import get_ipython

        ip = get_ipython()
        fmt = getattr(getattr(ip, "compile", None), "format_code_name", None)
        named = fmt(filename) if fmt else None
        if named:
            return f"{named[0]} {named[1]}, line {lineno}" + (f", in {name}" if name != "<module>" else "")
    except Exception:
        pass
    return f'File "{filename}", line {lineno}, in {name}'


def render(exc: BaseException) -> list[str]:
    """IPython's ``_render_traceback_``: the user's frames, then ``ErrorName: message``."""
    import linecache

    lines = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if not _internal(code.co_filename):
            src = linecache.getline(code.co_filename, tb.tb_lineno, tb.tb_frame.f_globals).strip()
            lines.append("  " + _where(code.co_filename, tb.tb_lineno, code.co_name))
            if src:
                lines.append("    " + src)
        tb = tb.tb_next
    head = ["Traceback (most recent call last):"] if lines else []
    cause = exc.__cause__ if exc.__cause__ is not None else (None if exc.__suppress_context__ else exc.__context__)
    why = [f"(caused by {type(cause).__name__}: {cause})"] if cause is not None else []
    return head + lines + [f"{type(exc).__name__}: {_name_cells(str(exc))}"] + why


def _name_cells(message: str) -> str:
    """``<tempdir>/ipykernel_1/123.py:5`` in a message -> ``Cell In[3]:5`` (the names IPython shows)."""
    import re

    try:
        from IPython import get_ipython

        fmt = get_ipython().compile.format_code_name
    except Exception:
        return message

    def repl(m):
        try:
            named = fmt(m.group(1))
        except Exception:
            named = None
        return f"{named[0]} {named[1]}{m.group(2)}" if named else m.group(0)

    return re.sub(r"(\S+?\.py)(:\d+)", repl, message)


def _render_traceback_(self):
    # IPython calls this instead of its own formatter: user frames and the message only
    # (PYKERN_FULL_TRACEBACK=1 hides it, so IPython shows every frame)
    if full_traceback():
        raise AttributeError("_render_traceback_")
    return lambda: render(self)


_errors().PykernError._render_traceback_ = property(_render_traceback_)
