"""Where a kernel's names come from: its source text, globals, closure and builtins.

Values of globals and closure variables are read when the kernel is compiled
and frozen into the code (as numba does): changing a module constant later
does not change an already compiled kernel.

Example::

    >>> import math
    >>> def my_kernel(x):
    ...     x[0] = math.pi
    >>> src, filename, first_line = source_of(my_kernel)
    >>> src.splitlines()[0]
    'def my_kernel(x):'
    >>> env = FunctionEnv(my_kernel)
    >>> env.lookup("math")    # doctest: +ELLIPSIS
    ('global', <module 'math' ...>)
"""

from __future__ import annotations

import ast
import builtins
import inspect
import linecache
import sys
import textwrap
import types
import weakref

from pykern.core import sources
from pykern.core.errors import CompileError, SourceLoc

_MISSING = object()


def _describe(pyfunc) -> str:
    return getattr(pyfunc, "__qualname__", None) or getattr(pyfunc, "__name__", None) or repr(pyfunc)


def source_of(pyfunc):
    """``(source_text, filename, first_line)`` of a Python function, dedented.

    Works for files, notebook cells and ``exec``'d code registered in
    ``linecache``; raises ``CompileError`` when the source is unavailable.
    """
    code = getattr(pyfunc, "__code__", None)
    if code is None:
        raise CompileError(
            f"cannot compile {pyfunc!r}: it is not a Python function",
            hint="decorate a function defined with 'def'",
        )
    filename = code.co_filename
    # exec()'d text, checked to give this code (sources.py): before an unchecked linecache
    # read, whose entry for a shared pseudo-file name such as <string> may hold another text
    text = sources.text_of(code, getattr(pyfunc, "__globals__", None))
    if text is not None:
        return _block_at(text.splitlines(True), code.co_firstlineno), filename, code.co_firstlineno
    fast = _def_lines(pyfunc)
    if fast is not None:
        return fast, filename, code.co_firstlineno
    if filename.startswith("<"):
        # a pseudo-file's linecache entry (a shared name such as <string>, a reused cell name)
        # that does not give this code is another function's text: never compile it
        raise CompileError(
            f"cannot find the source code of {_describe(pyfunc)} (defined in {filename}): no text "
            "that compiles to this function's code",
            hint="pykern compiles from source: define the function in a file, a notebook cell, "
            "or exec() code registered in linecache, each text under its own name (f'<gen-{n}>'); "
            "for other exec()'d text set PYKERN_EXEC_SOURCES=1 before importing pykern",
        )
    try:
        lines, first_line = inspect.getsourcelines(pyfunc)
    except (OSError, TypeError) as e:
        lines = None
        # the lines the key was made from (``fingerprint.current_source``: those of a file
        # deleted since are kept)
        from pykern.frontend.fingerprint import code_lines

        span = code_lines(pyfunc) if hasattr(pyfunc, "__globals__") else None
        if span is not None:
            lines = inspect.getblock(span[0][span[1]:])
            first_line = code.co_firstlineno
        if not lines:
            raise CompileError(
                f"cannot find the source code of {_describe(pyfunc)} (defined in {filename}): {e}",
                hint="pykern compiles from source: define the function in a file, a notebook cell, "
                "or exec() code registered in linecache; for other exec()'d text set PYKERN_EXEC_SOURCES=1 "
                "before importing pykern",
            ) from None
    if first_line == 0:
        first_line = 1
    return textwrap.dedent("".join(lines)), filename, first_line


def _def_lines(pyfunc):
    """The dedented source of a ``def`` (decorators first) found without tokenize, whose
    first use costs ~7-10 ms in a process (``inspect.getsourcelines``): the def block that
    ``fingerprint.code_lines`` finds and the cache key digests. None (ask inspect) unless
    that text parses as exactly one function definition."""
    from pykern.frontend.fingerprint import code_lines

    if getattr(pyfunc, "__name__", "<lambda>") == "<lambda>" or not hasattr(pyfunc, "__globals__"):
        return None
    span = code_lines(pyfunc)
    if span is None:
        return None
    lines, start, end = span
    if not lines[start].lstrip().startswith(("def ", "async ", "@")):
        return None
    text = textwrap.dedent("".join(lines[start:end]))
    try:
        body = ast.parse(text).body
    except SyntaxError:
        return None
    if len(body) != 1 or not isinstance(body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return text


def _block_at(lines: list, first_line: int) -> str:
    return textwrap.dedent("".join(inspect.getblock(lines[first_line - 1 :])))


#: functions made from a def inside a kernel (``local_defs``) -> (their FunctionDef node, the
#: enclosing function's ParsedFunction): they have no text of their own
_nested_defs: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def register_nested(pyfunc, node, enclosing: "ParsedFunction") -> None:
    _nested_defs[pyfunc] = (node, enclosing)


class ParsedFunction:
    """The ``ast.FunctionDef`` of a function plus what is needed to point at its lines."""

    def __init__(self, pyfunc):
        self.pyfunc = pyfunc
        nested = _nested_defs.get(pyfunc) if isinstance(pyfunc, types.FunctionType) else None
        if nested is not None:  # a def inside a kernel: its node, the enclosing function's lines
            self.node, outer = nested
            self.name = _describe(pyfunc)
            self.filename, self.first_line, self.indent = outer.filename, outer.first_line, outer.indent
            self.text_lines, self.orig_lines = outer.text_lines, outer.orig_lines
            return
        text, self.filename, self.first_line = source_of(pyfunc)
        self.name = _describe(pyfunc)
        # the lines the text came from (messages quote them): not a pseudo-file's linecache
        # entry that holds another text
        from pykern.frontend.fingerprint import current_source

        raw = current_source(pyfunc) if hasattr(pyfunc, "__globals__") else None
        raw_lines = raw.splitlines(True) if isinstance(raw, str) else raw or linecache.getlines(self.filename)
        self.text_lines = text.splitlines()
        n = len(self.text_lines)
        orig = raw_lines[self.first_line - 1 : self.first_line - 1 + n] if raw_lines else []
        self.orig_lines = [l.rstrip("\n") for l in orig] if len(orig) == n else list(self.text_lines)
        # dedent removed the same prefix from every non-blank line
        self.indent = 0
        for o, t in zip(self.orig_lines, self.text_lines):
            if t.strip():
                self.indent = len(o) - len(t)
                break
        try:
            tree = ast.parse(text, filename=self.filename)
        except SyntaxError as e:
            lineno = (e.lineno or 1) + self.first_line - 1
            raise CompileError(
                f"cannot parse the source of {self.name}: {e.msg}",
                SourceLoc(self.filename, lineno, max((e.offset or 1) - 1, 0), ""),
                hint="lambdas and functions whose source shares a line with other code cannot be compiled; use def",
            ) from None
        self.node = self._find_def(tree)

    def _find_def(self, tree) -> ast.FunctionDef:
        want = getattr(self.pyfunc, "__name__", "")
        # the def's own name first: a function renamed after definition (`fn.__name__ = "x_usecase"`,
        # as generated code does) keeps it in its code object; `__name__` serves functools.wraps copies
        code = getattr(self.pyfunc, "__code__", None)
        for name in dict.fromkeys([getattr(code, "co_name", want), want]):
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                    if isinstance(node, ast.AsyncFunctionDef):
                        raise CompileError("async functions cannot be kernels", self.loc(node))
                    return node
        lam = self._find_lambda(tree) if want == "<lambda>" else None
        if lam is not None:
            # `cuda.jit(device=True)(lambda x: 2 * x)`, which numba compiles too: as `def` returning its body
            ret = ast.copy_location(ast.Return(lam.body), lam.body)
            fd = ast.FunctionDef(name="lambda", args=lam.args, body=[ret], decorator_list=[], returns=None,
                                 type_comment=None, **({"type_params": []} if sys.version_info >= (3, 12) else {}))
            return ast.copy_location(fd, lam)
        if want == "<lambda>":
            node = next((n for n in ast.walk(tree) if isinstance(n, ast.Lambda)), None)
            raise CompileError("this lambda cannot be told apart from the other lambdas on its line",
                               self.loc(node) if node is not None else None, hint="define the function with 'def'")
        raise CompileError(f"cannot find the definition of {self.name} in its source ({self.filename})")

    def _find_lambda(self, tree):
        """The one lambda on the function's first line with its parameter names, or None."""
        code = self.pyfunc.__code__
        names = list(code.co_varnames[: code.co_argcount])
        line = code.co_firstlineno - self.first_line + 1
        hits = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == line
                and [a.arg for a in n.args.args] == names]
        return hits[0] if len(hits) == 1 else None

    def loc(self, node) -> SourceLoc:
        """The real file position of an AST node (line offset by the function's first line)."""
        lineno = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        idx = lineno - 1
        text_line = self.text_lines[idx] if 0 <= idx < len(self.text_lines) else ""
        # ast columns are utf-8 byte offsets
        col = len(text_line.encode("utf-8")[:col].decode("utf-8", "ignore"))
        src = self.orig_lines[idx] if 0 <= idx < len(self.orig_lines) else text_line
        return SourceLoc(self.filename, self.first_line + idx, col + self.indent, src)


class FunctionEnv:
    """Name lookup outside the function body: closure cells, then globals, then builtins."""

    def __init__(self, pyfunc):
        self.pyfunc = pyfunc
        self.globals = getattr(pyfunc, "__globals__", {})
        self.closure = {}
        code = getattr(pyfunc, "__code__", None)
        cells = getattr(pyfunc, "__closure__", None) or ()
        if code is not None:
            for name, cell in zip(code.co_freevars, cells):
                try:
                    self.closure[name] = cell.cell_contents
                except ValueError:  # empty cell: referenced before assignment in the outer function
                    self.closure[name] = _MISSING

    def lookup(self, name: str):
        """``(found, value)``; ``found`` is "closure", "global", "builtin" or None."""
        if name in self.closure:
            value = self.closure[name]
            return ("closure" if value is not _MISSING else "empty-closure"), value
        if name in self.globals:
            return "global", self.globals[name]
        bdict = self.globals.get("__builtins__", builtins)
        if isinstance(bdict, dict):
            if name in bdict:
                return "builtin", bdict[name]
        elif hasattr(bdict, name):
            return "builtin", getattr(bdict, name)
        return None, None
