"""Functions defined inside kernels and device functions (``def inner(y): return x + y``).

numba inlines a closure its function calls and compiles one it passes on (``consumer(inner,
1)``) as a jit function. pykern makes each nested ``def`` a device function of its own: a
Python function built from the def's AST (no text of its own: ``resolve.ParsedFunction``
takes the node and the enclosing function's lines from ``register_nested``), in the enclosing
function's namespace. The names it reads from the enclosing function are its captures:

* compile-time values there (an argument given a type, a function or None; a local assigned
  a constant once, ``y = 10``) become globals of the nested function -- frozen, as numba
  captures constants;
* other locals (run-time values) become leading parameters, which a call from the enclosing
  function passes (the current value: Python's late binding, for reads).

A nested function passed to another function can only have the first kind (numba: "Cannot
capture the non-constant value"); the callee cannot see the enclosing function's locals.
"""

from __future__ import annotations

import ast
import copy
import sys
import weakref

from pykern.core.errors import CompileError
from pykern.frontend import resolve
from pykern.frontend.values import NOT_CONST

class LocalFunction:
    """A nested ``def`` as the enclosing function sees it: callable like a device function."""

    __pykern_device__ = True
    options: dict = {}
    _signatures = None

    def __init__(self, py_func, lifted: tuple, owner):
        self.py_func = py_func
        self.lifted = lifted  # names of the enclosing function's run-time locals it reads
        self.owner = owner  # the FunctionLowerer of the enclosing function
        self.__name__ = py_func.__name__

    def __repr__(self):
        return f"<nested function {self.__name__}>"

    def __call__(self, *args, **kwargs):  # callable, so that it passes as a function argument
        raise TypeError(f"{self!r} exists only inside a kernel")


def captures(node) -> set:
    """Names a def or lambda reads that it does not bind itself (parameters, assignments, its
    own nested defs); a nested def's or lambda's reads count, less what that one binds."""
    a = node.args
    bound = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
    bound |= {p.arg for p in (a.vararg, a.kwarg) if p is not None}
    loads, stores = set(), set()
    todo = list(node.body) if isinstance(node.body, list) else [node.body]
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.Lambda)):
            if isinstance(n, ast.FunctionDef):
                stores.add(n.name)
            loads |= captures(n)
            continue
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else stores).add(n.id)
        todo.extend(ast.iter_child_nodes(n))
    for d in a.defaults + a.kw_defaults:  # defaults are evaluated in the enclosing function
        if d is not None:
            loads |= {n.id for n in ast.walk(d) if isinstance(n, ast.Name)}
    return loads - bound - stores


def define(lw, node: ast.FunctionDef) -> LocalFunction:
    """The LocalFunction of the nested ``def`` ``node`` in the function ``lw`` lowers (one per
    node and lowerer: the typing passes meet the def again)."""
    cache = lw.__dict__.setdefault("local_defs", {})
    hit = cache.get(id(node))
    if hit is not None:
        return hit
    if node.decorator_list:
        raise lw.error("a nested function cannot be decorated in a kernel", node.decorator_list[0],
                       "leave the decorator out: a nested function is compiled as a device function")
    if node.args.kwarg is not None or node.args.kwonlyargs:
        raise lw.error("a nested function cannot have keyword-only or **kwargs parameters in a kernel", node)
    frozen, lifted = {}, []
    for name in sorted(captures(node)):
        if name in lw.static and name not in lw.static_replaced:
            frozen[name] = lw.static[name]
        elif name in lw.local_names:
            value = lw._const_local(name, set())
            if value is not NOT_CONST:
                frozen[name] = value
            else:
                lifted.append(name)
    for d in node.args.defaults:
        for n in ast.walk(d):
            if isinstance(n, ast.Name) and n.id in lifted:
                raise lw.error(f"the default value of a nested function's parameter reads '{n.id}', "
                               "which is known only at run time", n, "use a constant default")
    fdef = copy.deepcopy(node)
    fdef.decorator_list = []
    fdef.args.posonlyargs = []
    fdef.args.args = [ast.arg(n) for n in lifted] + node.args.posonlyargs + node.args.args
    ast.fix_missing_locations(ast.copy_location(fdef, node))
    namespace = dict(lw.env.globals)
    namespace.update((k, v) for k, v in lw.env.closure.items())
    namespace.update(frozen)
    try:
        exec(compile(ast.Module([fdef], []), lw.pf.filename, "exec"), namespace)  # noqa: S102 - the user's own def
    except Exception as e:
        raise CompileError(f"cannot define the nested function '{node.name}': {type(e).__name__}: {e}",
                           lw.loc(node)) from None
    fn = namespace[node.name]
    fn.__qualname__ = f"{lw.pyname}.<locals>.{node.name}"
    resolve.register_nested(fn, fdef, lw.pf)
    local = LocalFunction(fn, tuple(lifted), lw)
    namespace[node.name] = local  # a recursive call of its own name
    cache[id(node)] = local
    return local


def lambda_def(node: ast.Lambda) -> ast.FunctionDef:
    """``lambda args: body`` as ``def <name>(args): return body`` (one node per lambda node, so
    ``define`` finds it again on the next typing pass)."""
    fdef = _lambdas.get(node)
    if fdef is None:
        ret = ast.copy_location(ast.Return(node.body), node.body)
        fd = ast.FunctionDef(name=f"lambda_{node.lineno}_{node.col_offset}", args=node.args, body=[ret],
                             decorator_list=[], returns=None, type_comment=None,
                             **({"type_params": []} if sys.version_info >= (3, 12) else {}))
        fdef = _lambdas[node] = ast.copy_location(fd, node)
    return fdef


#: Lambda node -> its FunctionDef, while the node lives (a notebook compiles new
#: lambdas all day; the FunctionDef shares the node's parts, not the node)
_lambdas: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def call(lw, f: LocalFunction, node: ast.Call) -> ast.Call:
    """The call of ``f`` to lower as a device call: its captured run-time locals first."""
    if not f.lifted:
        return node
    if f.owner is not lw and lw.pyfunc is not f.py_func:  # (in itself, a recursive call: its parameters)
        names = ", ".join(f"'{n}'" for n in f.lifted)
        raise lw.error(f"Cannot capture the non-constant value associated with {names} in the nested "
                       f"function '{f.__name__}' called here, away from the function that defines it", node,
                       "read only constants there (a local assigned a constant once), or pass the value as an "
                       "argument")
    lifted = [ast.copy_location(ast.Name(n, ast.Load()), node) for n in f.lifted]
    return ast.copy_location(ast.Call(node.func, lifted + list(node.args), list(node.keywords)), node)
