"""numba.extending's ``@overload(f)`` in kernels: a call of ``f`` compiles, as a device
function, the implementation the first overload that accepts the arguments' types returns
(``user_overloads`` keeps the registry). A user's overload comes before pykern's own meaning
of ``f`` (a numpy or math function keeps it when every overload declines)."""

from __future__ import annotations

import inspect

from pykern.core.errors import CompileError
from pykern.frontend import types as T
from pykern.frontend import user_overloads
from pykern.frontend.calls.arguments import strong
from pykern.frontend.calls.device_functions import device_call
from pykern.frontend.values import PyObj
from pykern.lang import stubs


def lower_overloaded(lw, f, node, name):
    """The call ``node`` of ``f`` through its overloads; None when ``f`` has none that applies
    and pykern has a meaning of its own for it. Kernel-language names keep theirs."""
    if isinstance(f, stubs.Stub) or not user_overloads.is_overloaded(f):
        return None
    if any(kw.arg is None for kw in node.keywords):
        raise lw.error("**kwargs in a call is not supported in kernels", node)
    argtypes = tuple(_arg_type(lw, a) for a in node.args)
    kwtypes = tuple((kw.arg, _arg_type(lw, kw.value)) for kw in node.keywords)
    shown = ", ".join([*map(str, argtypes), *(f"{k}={t}" for k, t in kwtypes)])
    try:
        impl = user_overloads.implementation(f, argtypes, kwtypes)
    except CompileError:
        raise
    except Exception as e:  # the overload function's own TypingError, or a bug in it
        raise lw.error(f"the overload of '{name}' for ({shown}) raised {type(e).__name__}: {e}", node) from None
    if impl is None:
        if inspect.isfunction(f):
            raise lw.error(f"no overload of '{name}' accepts ({shown})", node,
                           "every @overload function returned None for these argument types")
        return None
    lw.mb.uses_overloads = True
    return device_call(lw, impl, name, node)


def _arg_type(lw, a):
    """The type an overload function is given for argument ``a`` (evaluated for its type
    only: the statements it needs are emitted when the implementation is called)."""
    saved, lw.out = lw.out, []
    try:
        v = lw.expr(a)
        if isinstance(v, PyObj) and v.value is None:
            return T.none
        return strong(lw, lw.to_ir(v, a), a).type  # a function or class as an argument is refused here
    finally:
        lw.out = saved
