"""pykern's frontend: Python source -> verified, typed IR (knows nothing of LLVM).

Public functions (used by the dispatcher):

* ``typeof(value) -> Type`` — the kernel type of a launch argument.
* ``parse_signature(sig) -> (return_type, [argtypes])`` — "void(float32[:], int32)".
* ``compile_ir(pyfunc, argtypes, *, is_kernel=True, debug=False) -> ir.Module``.
* ``source_of(pyfunc) -> (source_text, filename, first_line)``.

Supported inside kernels: see ``infer`` for the typing rules. Statements:
assignment (incl. tuple unpacking, ``a = b = v``, ``x: float32 = v``, ``:=``),
augmented assignment (also ``a[i] += v`` and ``a[1:3] += v``), ``if/elif/else``
(constant conditions prune the dead branch), ``for`` over ``range``/arrays/tuples/
literal lists, ``enumerate``/``zip`` of those, ``literal_unroll`` (body copied per
element), ``while``, ``for/else``, ``while/else``, ``break``, ``continue``,
``return``, ``raise``/``assert`` (the exception reaches the host under
``debug=True``), a nested ``def`` or ``lambda`` (a device function of its own,
``local_defs``), ``global``/``nonlocal`` of names only read, ``pass``,
docstrings, ``print`` of numbers and string literals.
Expressions: arithmetic, comparisons (chained), ``and/or/not``, conditional
expressions, tuples, indexing (``a[i, j]``, ``a[i][j]``, tuple-valued indices,
negative constants), ``.shape/.size/.ndim/.strides/.dtype``, calls of the
kernel namespace (``pykern.lang.stubs``), ``math``/numpy math, builtins
(abs min max round int float bool len pow range), scalar type constructors and
device functions (positional, keyword and default arguments; types, functions
and needed int literals as compile-time arguments; declared signatures convert),
``operator`` functions, namedtuples, Enum members. Globals and closure variables
are frozen when compiling; numpy arrays become const arrays, device arrays are
captured by address.
Array views (``a[i]``, ``a[i, 1:5]``, ``a[::-1]``) are ``ArrayView`` nodes.
``a.T`` (``a.transpose()``, ``np.transpose(a)``) is a ``Transpose`` node.
Assignment to slices (``a[1:3] = v``, ``a[i, :] = b[j]``) is a loop nest over the view
(``slice_store``).
Everything else (``with``, ``try``, ``match``, ``del``, ``yield``, classes,
comprehensions and generator expressions, string values other than print's
literals and compile-time constants, f-strings, lists/dicts/sets as values,
assigning a ``global``/``nonlocal`` name, imports, a kernel's ``*args``
parameter) is a ``CompileError`` with the location and a hint.

Example::

    >>> from pykern.frontend import compile_ir, parse_signature
    >>> import pykern as cuda
    >>> def saxpy(a, x, y):
    ...     i = cuda.grid(1)
    ...     if i < y.size:
    ...         y[i] = a * x[i] + y[i]
    >>> _, args = parse_signature("void(float32, float32[::1], float32[::1])")
    >>> module = compile_ir(saxpy, args)
    >>> print(module.kernel)
    kernel saxpy(a: float32, x: float32[::1], y: float32[::1]) -> void
      locals: i: int64
      i = ((int64(@block_idx(axis=0):int32) * int64(@block_dim(axis=0):int32)) + int64(@thread_idx(axis=0):int32))
      if (i < y.size):
        y[i] = ((a * x[i]) + y[i])
"""

from __future__ import annotations

import sys

from pykern.core.errors import CompileError, SourceLoc
from pykern.frontend.signature import Signature, parse_signature, parse_type
from pykern.frontend.typeof import typeof

__all__ = ["typeof", "parse_signature", "parse_type", "compile_ir", "source_of", "Signature"]


def source_of(pyfunc):
    """``(source_text, filename, first_line)`` of ``pyfunc``, dedented (see ``resolve.source_of``)."""
    from pykern.frontend.resolve import source_of as _source_of

    return _source_of(pyfunc)


def _function_loc(pyfunc):
    """Where ``pyfunc`` starts (its first line), or None where its source cannot be read."""
    try:
        _, filename, first_line = source_of(pyfunc)
    except Exception:  # an error is being reported: its location is a help, not a must
        return None
    return SourceLoc(filename, first_line, 0)


def nesting_error(pyfunc, name: str) -> CompileError:
    """The error of a function nested too deeply for a compiler pass (its ``RecursionError``),
    located at the function."""
    return CompileError(f"'{name}' nests expressions or statements too deeply to compile", _function_loc(pyfunc),
                        hint="split long expressions into several assignments")


def compile_ir(pyfunc, argtypes, *, is_kernel: bool = True, debug: bool = False):
    """Lower ``pyfunc`` specialised to ``argtypes`` to a verified ``ir.Module``.

    ``module.kernel`` is the function itself (a kernel when ``is_kernel``);
    ``module.functions`` holds the device functions it calls, transitively,
    by mangled name. Raises ``CompileError`` for anything unsupported.
    """
    from pykern.frontend import analysis
    from pykern.frontend import bf16_widen
    from pykern.frontend import ir
    from pykern.frontend import verify
    from pykern.frontend.lower_ast import FunctionLowerer, ModuleBuilder

    if hasattr(pyfunc, "py_func") and not hasattr(pyfunc, "__code__"):
        pyfunc = pyfunc.py_func
    argtypes = list(argtypes)
    name = getattr(pyfunc, "__name__", repr(pyfunc))
    mb = ModuleBuilder(debug=debug)
    try:
        top = FunctionLowerer(mb, pyfunc, argtypes, is_kernel=is_kernel).lower()
        module = ir.Module(kernel=top, functions=dict(mb.functions), uncacheable=mb.uses_overloads,
                           links=tuple(mb.links))
        keep = analysis.reachable(module)
        module.functions = {n: module.functions[n] for n in keep}
        analysis.scan(module)
        bf16_widen.widen_module(module)
        # a fragment is made by a wmma call, whose lowering loaded wmma_calls (calls.ON_DEMAND)
        wmma_calls = sys.modules.get("pykern.frontend.wmma_calls")
        if wmma_calls is not None:
            wmma_calls.inline_fragment_functions(module)
    except CompileError:
        raise
    except RecursionError:
        raise nesting_error(pyfunc, name) from None
    except Exception as e:  # a frontend bug outside any statement: located at the function
        raise CompileError(
            f"internal error while compiling '{name}': {type(e).__name__}: {e}", _function_loc(pyfunc),
            hint="this is a pykern bug; please report it with the kernel's source",
        ) from e
    verify.verify_module(module)
    return module
