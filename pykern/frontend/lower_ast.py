"""Python AST -> typed IR, one method per AST node (as Triton's code_generator.py).

``FunctionLowerer`` walks a function's ``ast.FunctionDef`` and emits
``ir`` statements. Types are found by running the walk to a fixed point: each
pass types every variable from its assignments; when an assignment needs a
wider type than the variable had (``s = 0`` then ``s += x[i]``), the variable's
type is widened (``infer.unify``) and the function is walked again. Statements
reading a variable whose type is not known yet (first assigned later in a
loop) are skipped in early passes. Only the last pass, in which no type
changed, is kept: its IR is consistent.

The visitor methods live in one mixin per kind of node: ``lower_stmts``
(statements), ``lower_loops`` (loops), ``lower_exprs`` (expressions),
``lower_index`` (subscripts) and ``values`` (compile-time values, constants,
conversions). This module holds the passes, the dispatch (``_visit``: every
error, internal ones too, carries the location of the node being lowered) and
the ``ModuleBuilder`` shared by the functions of one module.

Example::

    >>> from pykern.frontend.signature import parse_type
    >>> def axpy(a, x, y):
    ...     y[0] = a * x[0] + y[0]
    >>> mb = ModuleBuilder()
    >>> args = [parse_type(t) for t in ("float32", "float32[::1]", "float32[::1]")]
    >>> fn = FunctionLowerer(mb, axpy, args, is_kernel=True).lower()
    >>> print(fn)
    kernel axpy(a: float32, x: float32[::1], y: float32[::1]) -> void
      y[0:int64] = ((a * x[0:int64]) + y[0:int64])
"""

from __future__ import annotations

import ast
import copy
import re

from pykern.core.errors import CompileError, SourceLoc
from pykern.frontend import ir
from pykern.frontend import prune
from pykern.frontend import versions
from pykern.frontend import types as T
from pykern.frontend.lower_exprs import ExpressionLowering
from pykern.frontend.lower_index import IndexLowering
from pykern.frontend.lower_loops import LoopLowering
from pykern.frontend.lower_stmts import StatementLowering
from pykern.frontend.resolve import FunctionEnv, ParsedFunction
from pykern.frontend.values import NeedReturnType, NeedType, ValueLowering, as_const_value

_MAX_PASSES = 30


def _sanitize(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return s if s and not s[0].isdigit() else "_" + s


def _type_token(t: T.Type) -> str:
    if isinstance(t, T.Integer):
        return ("i" if t.signed else "u") + str(t.bits)
    if isinstance(t, T.Float):
        return "f" + str(t.bits)
    if isinstance(t, T.Boolean):
        return "b"
    if isinstance(t, T.Array):
        return f"a{t.ndim}{t.layout}{t.space[0]}{'r' if t.readonly else ''}{'' if t.aligned else 'u'}{_type_token(t.dtype)}"
    if isinstance(t, T.Optional):  # not the plain (value, bool) tuple it is made of
        return "o" + _type_token(t.type)
    if isinstance(t, T.Tuple):
        return "t" + str(len(t.elems)) + "".join(_type_token(e) for e in t.elems) + "e"
    return _sanitize(str(t))


def mangle(pyname: str, argtypes) -> str:
    """A device function's IR name: its Python name and its signature."""
    return f"{_sanitize(pyname)}__{'_'.join(_type_token(t) for t in argtypes) or 'v'}"


class ModuleBuilder:
    """State shared by every function lowered into one ``ir.Module``."""

    def __init__(self, debug: bool = False):
        self.debug = debug
        self.functions: dict = {}
        self.specs: dict = {}  # (py_func, argtypes) -> name
        self.stack: list = []  # FunctionLowerers lowering now, innermost last (recursive calls)
        self.names: set = set()
        self.const_arrays: dict = {}  # id(array) -> (name, array)
        self.active: dict = {}  # specialisation key -> FunctionLowerer lowering it now
        self._assigned: dict = {}  # py_func -> names its body assigns
        #: a call chose an @overload's implementation: the code depends on overload functions
        #: the disk-cache key (made without the frontend) does not see
        self.uses_overloads = False
        #: the external code (``core.external.LinkItem``) the module's external calls need, in order
        self.links: dict = {}

    def unique_name(self, base: str) -> str:
        name, k = base, 1
        while name in self.names:
            k += 1
            name = f"{base}_{k}"
        self.names.add(name)
        return name

    def const_array_name(self, arr, hint: str) -> str:
        entry = self.const_arrays.get(id(arr))
        if entry is None or entry[1] is not arr:
            entry = (self.unique_name(f"__const_{_sanitize(hint or 'array')}"), arr)
            self.const_arrays[id(arr)] = entry
        return entry[0]

    def device_function(self, pyfunc, argtypes: list, loc, *, static=None, ret=None) -> ir.Function:
        """The ``ir.Function`` of ``pyfunc`` specialised to ``argtypes`` and the
        compile-time arguments ``static`` (parameter name -> value); ``ret`` is a
        declared return type. A recursive call (the same specialisation, being
        lowered) needs ``ret``: it gets a prototype with the known name."""
        static = dict(static or {})
        key = (pyfunc, tuple(argtypes), tuple(sorted(static.items(), key=lambda kv: kv[0])))
        name = self.specs.get(key)
        if name is not None:
            return self.functions[name]
        active = self.active.get(key)
        if active is not None and active.declared_ret is not None:
            return _Prototype(active.name, active.declared_ret)
        if active is not None and self.stack and self.stack[-1] is active:
            # a function calling itself: numba types the call by the returns typed so far (its
            # base case); the typing passes go on until the return type settles. Before any
            # return is typed the statement waits for a later pass, as a variable's first read does
            if active.ret is None or isinstance(active.ret[0], T.Void):
                raise NeedReturnType(getattr(pyfunc, "__name__", "?"), None)
            return _Prototype(active.name, active.ret[0])
        if any(lw.pyfunc is pyfunc for lw in self.stack):
            # mutual recursion, or a self-call with other argument types: numba infers these too,
            # pykern asks for a signature (the other function would be typed, and kept, with a
            # return type of this one that may still widen)
            chain = " -> ".join(getattr(lw.pyfunc, "__name__", "?") for lw in self.stack) + \
                f" -> {getattr(pyfunc, '__name__', '?')}"
            raise CompileError(
                f"recursive call of device function '{getattr(pyfunc, '__name__', pyfunc)}' ({chain}) needs a signature "
                "(a function calling itself with its own argument types does not)",
                loc,
                hint="declare its types, e.g. @pykern.jit(\"int64(int64)\", device=True), "
                "so the recursive call's return type is known; or rewrite it as a loop",
            )
        lowerer = FunctionLowerer(self, pyfunc, argtypes, is_kernel=False, static=static, ret=ret)
        self.active[key] = lowerer
        try:
            fn = lowerer.lower()
        finally:
            del self.active[key]
        self.specs[key] = fn.name
        self.functions[fn.name] = fn
        return fn

    def assigned_params(self, pyfunc) -> set:
        """Parameters of ``pyfunc`` its body assigns to (these cannot be compile-time values)."""
        out = self._assigned.get(pyfunc)
        if out is None:
            node = ParsedFunction(pyfunc).node
            out = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            self._assigned[pyfunc] = out
        return out


class _Prototype:
    """A device function known by name and return type while its body is still
    being lowered (a recursive call)."""

    returns_param = -1  # a recursive function returns a value, never its array parameter

    def __init__(self, name: str, return_type: T.Type):
        self.name = name
        self.return_type = return_type


def _static_token(v) -> str:
    if isinstance(v, int):
        return str(v).replace("-", "m")
    return _sanitize(getattr(v, "_pk_name", None) or getattr(v, "__name__", None) or str(v))


def _recursive_ifexp_returns_as_ifs(fn: ast.FunctionDef, name: str) -> ast.FunctionDef:
    """``return f(n - 1) * n if n > 1 else 1`` of a function ``name`` that calls itself
    becomes ``if n > 1: return ...`` / ``else: return 1``: the recursion typing finds its
    base case among the function's return statements, as numba finds it among the
    branches. Only returns whose expression calls ``name`` change (elsewhere the
    conditional expression's own join rule types it); ``fn`` is copied, not changed."""

    def calls_self(node) -> bool:
        return any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == name
                   for c in ast.walk(node))

    def split(ret: ast.Return):
        v = ret.value
        if not isinstance(v, ast.IfExp):
            return ret
        body = [split(ast.copy_location(ast.Return(v.body), ret))]
        orelse = [split(ast.copy_location(ast.Return(v.orelse), ret))]
        return ast.copy_location(ast.If(v.test, body, orelse), ret)

    class Split(ast.NodeTransformer):
        def visit_Return(self, node):
            return split(node) if isinstance(node.value, ast.IfExp) and calls_self(node.value) else node

        def visit_FunctionDef(self, node):  # a nested def's returns are its own
            return node if node is not root else self.generic_visit(node)

        visit_Lambda = visit_AsyncFunctionDef = visit_FunctionDef

    if not any(isinstance(r, ast.Return) and isinstance(r.value, ast.IfExp) and calls_self(r.value)
               for r in ast.walk(fn)):
        return fn
    root = copy.deepcopy(fn)
    return ast.fix_missing_locations(Split().visit(root))


class FunctionLowerer(StatementLowering, LoopLowering, ExpressionLowering, IndexLowering, ValueLowering):
    """Lowers one Python function, specialised to ``argtypes``, to an ``ir.Function``.

    The state its mixins share during a pass: ``out`` (the block being emitted),
    ``vartypes`` (variable -> (type, where it was first typed)), ``temps``, ``ret``,
    ``loop_depth`` and ``else_flags``, ``static`` and ``renames`` (compile-time
    arguments, ``literal_unroll`` copies), ``changed`` and ``skipped`` (the typing
    passes' progress)."""

    def __init__(self, mb: ModuleBuilder, pyfunc, argtypes, *, is_kernel: bool, static=None, ret=None):
        self.mb = mb
        # compile-time arguments (a type, a function, an int literal): parameter name -> value
        self.static = dict(static or {})
        self.declared_ret = ret  # a declared signature's return type: every return converts to it
        self.pyfunc = pyfunc
        self.is_kernel = is_kernel
        self.pf = ParsedFunction(pyfunc)
        self.env = FunctionEnv(pyfunc)
        self.node = self.pf.node
        self.pyname = getattr(pyfunc, "__name__", "kernel")
        self.argtypes = list(argtypes)
        self.params = self._param_names()
        if is_kernel:
            self.name = mb.unique_name(_sanitize(self.pyname))
        else:
            base = mangle(self.pyname, self.argtypes)
            if self.static:
                base += "__s" + "_".join(_static_token(v) for _, v in sorted(self.static.items()))
            self.name = mb.unique_name(base)
        # a None argument (numba's `none`): a compile-time None, as an omitted optional argument
        # of a device function; the parameter stays in the ABI, where it takes no space
        self.none_params = {n for n, t in zip(self.params, self.argtypes) if isinstance(t, T.NoneType)}
        self.static.update(dict.fromkeys(self.none_params))
        for n, t in zip(self.params, self.argtypes):
            if isinstance(t, T.EnumMember):  # the member itself, a compile-time constant (none's way)
                self.none_params.add(n)
                self.static[n] = t.member
        written = self._assigned_names()  # a name assigned only in a dead branch is still local
        # dead branches on compile-time constants go first, as numba prunes them before its SSA
        self.node = prune.prune(self.node, self.env, self.static, dict(zip(self.params, self.argtypes)))
        self.node = _recursive_ifexp_returns_as_ifs(self.node, self.pyname)
        # versions of a variable that never meet are variables of their own (``versions``)
        self.node, _ = versions.split(self.node, self.params, set(self.static))
        self.assigned_params_here = set(self.params) & self._assigned_names()
        self.local_names = set(self.params) | self._assigned_names() | written

    def loc(self, node) -> SourceLoc:
        return self.pf.loc(node)

    def error(self, msg: str, node, hint: str | None = None) -> CompileError:
        msg, hint = versions.user_text(msg), hint and versions.user_text(hint)
        return CompileError(msg, self.loc(node) if node is not None else None, hint)

    def internal_error(self, e: Exception, node) -> CompileError:
        """A CompileError for an unexpected exception ``e`` while lowering ``node`` (as Triton's ``visit``)."""
        return self.error(f"internal error while compiling '{self.pyname}': {type(e).__name__}: {e}", node,
                          "this is a pykern bug; please report it with the kernel's source")

    def _visit(self, prefix: str, unsupported: dict, what: str, node):
        """Lower ``node`` with its ``prefix + <ast class>`` method; a pykern bug inside is
        reported at the innermost node being lowered (as Triton's ``visit``)."""
        kind = type(node).__name__
        method = getattr(self, prefix + kind, None)
        if method is None:
            msg, hint = unsupported.get(kind, (f"{kind} {what} are not supported in kernels", None))
            raise self.error(msg, node, hint)
        try:
            return method(node)
        except (CompileError, RecursionError, NeedType):  # errors, and the typing pass's own signal
            raise
        except Exception as e:
            raise self.internal_error(e, node) from e

    def _param_names(self) -> list:
        a = self.node.args
        if a.kwarg is not None:
            raise self.error("**kwargs parameters are not supported in kernels", a.kwarg, "list the parameters explicitly")
        if a.vararg is not None and self.is_kernel:
            raise self.error("a kernel cannot have *args parameters (a device function can)", a.vararg,
                             "list the parameters explicitly, or pass a tuple")
        if a.kwonlyargs:
            raise self.error("keyword-only parameters are not supported in kernels", a.kwonlyargs[0])
        # a device function's *args is one tuple parameter (numba's StarArgTuple), made by the caller
        star = [a.vararg] if a.vararg is not None else []
        names = [p.arg for p in a.posonlyargs + a.args + star if p.arg not in self.static]
        if len(names) != len(self.argtypes):
            kind = "kernel" if self.is_kernel else "device function"
            raise self.error(
                f"{kind} '{self.pyname}' takes {len(names)} argument(s) but {len(self.argtypes)} were given "
                f"({', '.join(map(str, self.argtypes)) or 'none'})",
                self.node,
            )
        for t, n in zip(self.argtypes, names):
            if not isinstance(t, T.Type) or isinstance(t, T.Void):
                raise self.error(f"parameter '{n}' cannot have type {t!r}", self.node)
        return names

    def _assigned_names(self) -> set:
        out = set()
        for node in ast.walk(self.node):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
        return out

    def lower(self) -> ir.Function:
        self.mb.stack.append(self)
        try:
            return self._lower()
        finally:
            self.mb.stack.pop()

    def _lower(self) -> ir.Function:
        def_loc = self.loc(self.node)
        self.vartypes = {n: (t, def_loc) for n, t in zip(self.params, self.argtypes) if n not in self.none_params}
        self.ret = (T.void, def_loc) if self.is_kernel else None
        if self.declared_ret is not None:
            self.ret = (self.declared_ret, def_loc)
        self.returned_param = None  # `return A` of an array parameter (stmt_Return); kept like ret
        self.returned_none = False  # a `return None` before any value (stmt_Return's Optional); kept too
        for _ in range(_MAX_PASSES):
            self.changed = False
            self.skipped = []
            self.temps = {}
            self.loop_depth = 0
            self.alloc_count = 0
            self.assigned_so_far = set(self.params)
            self.else_flags = []  # per enclosing loop: its for/else flag or None
            self.renames = {}  # literal_unroll: loop variable -> its name in the current copy
            self.static_replaced = set()  # compile-time arguments assigned a value since (set_var)
            self.static_optional = set()  # ... assigned on some paths to here only (join_replaced)
            self.cond_depth = 0  # inside run-time `if` branches
            body = self.block(self.node.body)
            if not self.skipped:  # a skipped statement may be the path that returns
                body += self.implicit_return(body)
            if not self.changed:
                break
        else:
            raise self.error(f"internal error: types of '{self.pyname}' did not settle", self.node)
        if self.skipped:
            name, node = self.skipped[0].name, self.skipped[0].node
            if isinstance(self.skipped[0], NeedReturnType) and self.returned_none:
                raise self.error(
                    f"Return type of recursive function does not converge: '{name}' returns None on its other "
                    "paths, and a value built from its own result here", node,
                    hint="a recursive function's return type cannot grow with each call (numba's issue 4387)")
            if isinstance(self.skipped[0], NeedReturnType):
                raise self.error(
                    f"cannot type infer runaway recursion: '{name}' calls itself on every path that returns",
                    node, hint="return a value without the recursive call on some path (the base case)")
            raise self.error(
                f"local variable '{name}' is used before it is assigned a value",
                node,
                hint="assign it before this line (e.g. before the loop)",
            )
        ret_t = self.ret[0] if self.ret else T.void
        if not isinstance(ret_t, T.Void) and not ir.always_returns(body):
            body.append(ir.Return(self._zero(ret_t, self.node), def_loc))
        params = []
        prologue = []
        locals_ = {n: t for n, (t, _) in self.vartypes.items()}
        for n, t in zip(self.params, self.argtypes):
            if n in self.none_params:  # never read: its name is free for a variable (`x = 2.0`)
                locals_[f"{n}$arg"] = t
                params.append(ir.Param(f"{n}$arg", t))
            elif locals_[n] != t:
                # the variable was widened by a later assignment: copy the argument in
                pn = f"{n}$arg"
                locals_[pn] = t
                params.append(ir.Param(pn, t))
                prologue.append(ir.Assign(n, self.cast(ir.Var(pn, t, def_loc), locals_[n], self.node), def_loc))
            else:
                params.append(ir.Param(n, t))
        locals_.update(self.temps)
        return ir.Function(
            name=self.name,
            params=params,
            return_type=ret_t,
            body=prologue + body,
            locals=locals_,
            is_kernel=self.is_kernel,
            loc=def_loc,
            pyname=self.pyname,
            returns_param=-1 if self.returned_param is None else self.returned_param,
        )

    def implicit_return(self, body: list) -> list:
        """Python's ``return None`` at the end of a function that returns a value on some path
        and can run past its end: numba's Optional return, as an explicit ``return None``."""
        rt = self.ret[0] if self.ret is not None else None
        if self.is_kernel or rt is None or isinstance(rt, T.Void) or not ir.may_fall_off(body):
            return []
        node = self.node.body[-1]
        if self.declared_ret is not None and rt.is_scalar:
            # numba converts the None to the declared type at the return: its TypeError at run time
            return [ir.Raise("builtins:TypeError", (f"expected {rt}, got None",), self.loc(node))]
        saved, self.out = getattr(self, "out", None), []
        try:
            if not self.optional_return(None, node):
                raise self.error(
                    f"'{self.pyname}' returns a {rt} at line {self.ret[1].line} but can end here without "
                    "returning (Python's implicit None)", node,
                    hint="return a value on every path (numba returns an Optional here; pykern has Optional "
                    "returns of numbers only)")
            return self.out
        finally:
            self.out = saved

    def _zero(self, t: T.Type, node):
        if t.is_scalar:
            return ir.Const(as_const_value(0, t), t, self.loc(node))
        if isinstance(t, T.Tuple):
            return ir.TupleExpr([self._zero(e, node) for e in t.elems], t, self.loc(node))
        raise self.error(f"function '{self.pyname}' may end without returning its {t}", node)
