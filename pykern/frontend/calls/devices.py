"""Calls of device functions: ``@jit(device=True)`` functions, plain ``@jit`` functions and
numba's ``@njit`` functions (numba-cuda compiles any of them as a device function where a kernel
calls it), nested defs and lambdas (``local_defs``), and the implementations ``@overload``
chooses (``overloads``). Arguments bind to parameters as Python binds them (defaults, keywords,
``*args`` as one tuple); compile-time values (``static_args``) specialise the callee, and
explicit signatures (``signature_choice``) convert the arguments, as numba's do."""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass

from pykern.core.errors import CompileError
from pykern.core.external import link_items
from pykern.frontend import ir
from pykern.frontend import local_defs
from pykern.frontend import signature_choice
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import strong
from pykern.frontend.calls.static_args import NOT_STATIC, is_literal, static_value
from pykern.frontend.values import PyObj


def _numba_dispatcher(f) -> bool:
    """``@numba.njit``/``@numba.jit`` functions: numba-cuda compiles them for the GPU
    when a kernel calls them; so does pykern (from their ``py_func``)."""
    mod = str(getattr(type(f), "__module__", ""))
    return mod.startswith("numba") and hasattr(getattr(f, "py_func", None), "__code__")


def is_callee(f) -> bool:
    """``f`` is compiled as a device function where a kernel calls it."""
    return isinstance(f, local_defs.LocalFunction) or (
        hasattr(f, "py_func") and (hasattr(f, "__pykern_device__") or _numba_dispatcher(f)))


def lower_callee(lw, f, node, name):
    """The call ``node`` of ``f`` when ``f`` is a device function, else None."""
    if not is_callee(f):
        return None
    if isinstance(f, local_defs.LocalFunction):  # a nested def: its captured run-time locals first
        node = local_defs.call(lw, f, node)
    return device_call(lw, f, name, node)


@dataclass
class _Parameters:
    names: list  # the positional parameters, then the ``*args`` one
    given: dict  # parameter name -> the argument's ast node
    defaults: tuple
    first_default: int


def device_call(lw, dev, name, node):
    """The call ``node`` of device function ``dev``."""
    params = _bind(lw, dev, name, node)
    sigs = getattr(dev, "_signatures", None) or []
    try:
        return _call(lw, dev, name, node, params, sigs, False)
    except CompileError as e:
        if sigs or not getattr(e, "needs_constant", False):
            raise
        # as numba: int literal arguments become compile-time values only when the callee needs them
        return _call(lw, dev, name, node, params, sigs, True)


def _bind(lw, dev, name, node) -> _Parameters:
    pyfunc = getattr(dev, "py_func", None)
    if pyfunc is None or not hasattr(pyfunc, "__code__"):
        raise lw.error(f"device function '{name}' has no Python function (py_func)", node)
    code = pyfunc.__code__
    if code.co_flags & inspect.CO_VARKEYWORDS:
        raise lw.error(f"device function '{name}' has **kwargs parameters, which are not supported in kernels", node,
                       "list the parameters explicitly")
    pnames = list(code.co_varnames[: code.co_argcount])
    defaults = pyfunc.__defaults__ or ()
    star = code.co_varnames[code.co_argcount + code.co_kwonlyargcount] if code.co_flags & inspect.CO_VARARGS else None
    if len(node.args) > len(pnames) and star is None:
        raise lw.error(
            f"device function '{name}' takes {len(pnames)} argument(s) but {len(node.args)} were given", node
        )
    given = dict(zip(pnames, node.args))
    if star is not None:
        # the arguments past the named ones, as one tuple (numba's StarArgTuple): `def f(*args)`
        given[star] = ast.copy_location(ast.Tuple(list(node.args[len(pnames):]), ast.Load()), node)
    for kw in node.keywords:
        if kw.arg is None:
            raise lw.error("**kwargs in a call is not supported in kernels", node)
        if kw.arg not in pnames:
            raise lw.error(f"device function '{name}' has no parameter '{kw.arg}'", node)
        if kw.arg in given:
            raise lw.error(f"device function '{name}' got two values for '{kw.arg}'", node)
        given[kw.arg] = kw.value
    first_default = len(pnames) - len(defaults)
    return _Parameters(pnames + ([star] if star is not None else []), given, defaults, first_default)


def _call(lw, dev, name, node, params, sigs, literal_ints):
    args, arg_nodes, static = _arguments(lw, dev, name, node, params, sigs, literal_ints)
    ret = None
    if sigs:
        ret, args = _declared(lw, name, node, sigs, args, arg_nodes)
    fn = lw.mb.device_function(dev.py_func, [a.type for a in args], lw.loc(node), static=static, ret=ret)
    opts = getattr(dev, "options", None) or {}
    if opts.get("forceinline") or opts.get("inline") == "always":  # numba's spellings
        fn.force_inline = True
    for item in link_items(opts.get("link")):  # @jit(device=True, link=[...]): its external code
        lw.mb.links.setdefault(item, None)
    if fn.returns_param < 0:
        return ir.Call(fn.name, args, fn.return_type, lw.loc(node))
    # `return A` of an array parameter: call for the effects, the value is the caller's argument
    k = fn.returns_param
    args[k] = lw.once(args[k], arg_nodes[k])
    lw.emit(ir.ExprStmt(ir.Call(fn.name, args, fn.return_type, lw.loc(node)), lw.loc(node)))
    return args[k]


def _arguments(lw, dev, name, node, params, sigs, literal_ints):
    """The run-time arguments (IR), their nodes, and the compile-time ones by parameter name."""
    assigned = lw.mb.assigned_params(dev.py_func)
    args, arg_nodes, static = [], [], {}
    for k, pn in enumerate(params.names):
        if pn in params.given:
            a = params.given[pn]
            v = lw.expr(a)
        elif k >= params.first_default:
            a = node
            v = PyObj(params.defaults[k - params.first_default], f"default of {pn}")
        else:
            raise lw.error(f"device function '{name}' is missing argument '{pn}'", node)
        sv = static_value(v)
        if is_literal(sv) and (pn in assigned or not (literal_ints or isinstance(sv, bool))):
            # bool literals always (numba types them as literals, so `if flag:` is pruned and the
            # dead branch never typed); ints and int tuples only when the callee needs a constant
            sv = NOT_STATIC
        if sv is not NOT_STATIC and not sigs:
            static[pn] = sv  # a compile-time value: the callee is specialised to it, as numba does
            continue
        v = lw.to_ir(v, a)
        if isinstance(v.type, T.Void):
            raise lw.error("a call that returns nothing cannot be an argument", a)
        args.append(strong(lw, v, a))
        arg_nodes.append(a)
    return args, arg_nodes, static


def _declared(lw, name, node, sigs, args, arg_nodes):
    """The return type and the arguments converted to the explicit signature numba would choose."""
    try:
        ret, sig_types = signature_choice.choose(sigs, [a.type for a in args], f"device function '{name}'",
                                                 ambiguous_ok=True)
    except TypeError as e:
        raise lw.error(str(e), node) from None
    # an array keeps its own type where the declared one admits it (a C-contiguous or shared
    # array for `float64[:]`): the callee is specialised to it, as the array is passed as is
    sig_types = [a.type if _admits(t, a.type) else t for a, t in zip(args, sig_types)]
    # the declared signature converts the arguments (numba: int64 params given 1.5 get 1)
    return ret, [lw.cast(a, t, an) for a, t, an in zip(args, sig_types, arg_nodes)]


def _admits(declared, actual) -> bool:
    """An array parameter declared ``declared`` takes an ``actual`` array unchanged: same dtype
    and ndim, and the declared layout is "A" (any strides) or the same."""
    return (isinstance(declared, T.Array) and isinstance(actual, T.Array) and declared.dtype == actual.dtype
            and declared.ndim == actual.ndim and declared.layout in ("A", actual.layout))
