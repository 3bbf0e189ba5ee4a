"""``print(a, "text", b)`` in kernels: one line, items separated by spaces, formatted as
numba.cuda does (ints ``%lld``/``%llu``, floats ``%f``, booleans True/False, tuples and
``cuda.threadIdx`` & co. as tuples; complex numbers, which numba.cuda cannot print, as
``(1.000000-2.000000j)``) -- one ``print`` intrinsic of a format and its values."""

from __future__ import annotations

import ast
import builtins

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import intrinsic
from pykern.frontend.calls.complex_values import parts
from pykern.frontend.calls.registry import lowers
from pykern.frontend.values import PyObj
from pykern.lang import stubs


@lowers(builtins.print)
def _print(lw, node, name):
    """``print(a, "text", b)``: one line, items separated by spaces, formatted as
    numba.cuda does (ints ``%lld``/``%llu``, floats ``%f``; booleans True/False; complex
    numbers, which numba.cuda cannot print, as ``(1.000000-2.000000j)``)."""
    for kw in node.keywords:
        raise lw.error(f"print() keyword '{kw.arg}' is not supported in kernels", node,
                       "print numbers and string literals separated by commas")
    fmt, args = [], []
    for a in node.args:
        text = a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None
        v = None
        if text is None:
            v = lw.expr(a)
            if isinstance(v, PyObj) and isinstance(v.value, str):
                text, v = v.value, None
        if text is not None:
            fmt.append(text.replace("%", "%%"))
            continue
        if isinstance(a, ast.Starred):
            raise lw.error("print(*args) is not supported in kernels", a)
        if isinstance(v, PyObj) and isinstance(v.value, stubs.Dim3Stub):  # numba prints a Dim3 as a tuple
            fmt.append("(%lld, %lld, %lld)")
            args += [lw.cast(lw.expr(ast.copy_location(ast.Attribute(a, axis, ast.Load()), a)), T.int64, a)
                     for axis in "xyz"]
            continue
        fmt.append(_print_item(lw, lw.to_ir(v, a), a, args))
    return intrinsic(lw, "print", args, T.void, node, format=" ".join(fmt) + "\n")


def _print_item(lw, v, a, args):
    """The format of one printed value, its parts appended to ``args``. A tuple prints as
    numba's does: ``(1, (2.000000, 3))``, a 1-tuple ``(1,)``."""
    t = v.type
    if type(t) is T.Tuple and not t.names:
        if not isinstance(v, ir.Var):  # one evaluation however many elements are read
            v = lw.temp(v, a)
        items = [_print_item(lw, ir.TupleGet(v, i, e, lw.loc(a)), a, args) for i, e in enumerate(t.elems)]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if not t.is_scalar:
        raise lw.error(f"print() in kernels takes numbers and string literals (and tuples of them), not a {t}", a,
                       "print the elements one by one, e.g. print(a[0], a[1])")
    if isinstance(t, T.Boolean):
        args.append(v)
        return "%s"
    if isinstance(t, T.Integer):
        args.append(lw.cast(v, T.int64 if t.signed else T.uint64, a))
        return "%llu" if not t.signed else "%lld"
    if isinstance(t, T.Complex):  # numba.cuda has no format for it: Python's shape, numba's %f parts
        args += [lw.cast(p, T.float64, a) for p in parts(lw, v, a)]
        return "(%f%+fj)"
    args.append(lw.cast(v, T.float64, a))
    return "%f"

