"""Python AST -> typed IR, one method per AST node (as Triton's code_generator.py).

``FunctionLowerer`` walks a function's ``ast.FunctionDef`` and emits
``ir`` statements. Types are found by running the walk to a fixed point: each
pass types every variable from its assignments; when an assignment needs a
wider type than the variable had (``s = 0`` then ``s += x[i]``), the variable's
type is widened (``infer.unify``) and the function is walked again. Statements
reading a variable whose type is not known yet (first assigned later in a
loop) are skipped in early passes. Only the last pass, in which no type
changed, is kept: its IR is consistent.

Values while walking are ``ir.Expr`` (typed kernel values), ``PyObj`` (a
compile-time Python object: a module, a stub, a dtype, a frozen global) or
``PartialIndex`` (``a[i]`` of a 2-d array, only valid when indexed again).

Example::

    >>> mb = ModuleBuilder()
    >>> fn = FunctionLowerer(mb, saxpy, [float32, float32[::1], float32[::1]], is_kernel=True).lower()
"""

from __future__ import annotations

import ast
import builtins
import enum
import math
import operator
import re
import types as pytypes
import warnings

import numpy as np

from .. import stubs
from ..errors import CompileError, SourceLoc
from . import infer, ir, records
from . import types as T
from .resolve import FunctionEnv, ParsedFunction

_MAX_PASSES = 30


class PyObj:
    """A compile-time Python value (module, stub, type, function, frozen constant)."""

    __slots__ = ("value", "name")

    def __init__(self, value, name: str = ""):
        self.value = value
        self.name = name


def NeedsConstant(msg, loc, hint=None) -> CompileError:
    """A CompileError saying a value had to be known at compile time. A device
    function whose int arguments are literals at the call site is then
    specialised to their values and lowered again (numba's literal dispatch)."""
    e = CompileError(msg, loc, hint)
    e.needs_constant = True
    return e


class _BoundMethod:
    """``x.bit_count`` of a kernel value, only valid when called."""

    def __init__(self, value, attr: str):
        self.value = value
        self.attr = attr


class PartialIndex:
    """``a[i]`` of an n-d array with fewer than n indices: only ``a[i][j]`` is allowed."""

    def __init__(self, array: ir.Expr, indices: list, node):
        self.array = array
        self.indices = indices
        self.node = node


class _NeedType(Exception):
    """A local variable was read before any assignment gave it a type (this pass)."""

    def __init__(self, name: str, node):
        self.name = name
        self.node = node


_BINOPS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.BitAnd: "&",
}
_PYOPS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "<<": operator.lshift,
    ">>": operator.rshift,
    "|": operator.or_,
    "^": operator.xor,
    "&": operator.and_,
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    ">=": operator.ge,
}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!=", ast.Gt: ">", ast.GtE: ">="}

_PURE_INTRINSICS = frozenset(n for n, op in ir.INTRINSICS.items() if not op.effects)

_UNSUPPORTED_STMTS = {
    "With": ("'with' blocks are not supported in kernels", None),
    "AsyncWith": ("'async with' is not supported in kernels", None),
    "Try": ("try/except is not supported in kernels", "kernels cannot raise or catch exceptions"),
    "TryStar": ("try/except* is not supported in kernels", None),
    "Raise": ("raise is not supported in kernels", "kernels cannot raise exceptions; write an error flag to an array"),
    "Assert": ("assert is not supported in kernels", "check on the host, or write an error flag to an array"),
    "Delete": ("del is not supported in kernels", None),
    "Import": ("import inside a kernel is not supported", "import at module level; the kernel can use the module"),
    "ImportFrom": ("import inside a kernel is not supported", "import at module level; the kernel can use the module"),
    "Global": ("'global' declarations are not supported in kernels", "kernels cannot assign globals; write to an array argument"),
    "Nonlocal": ("'nonlocal' declarations are not supported in kernels", "write results to an array argument"),
    "FunctionDef": ("nested function definitions are not supported in kernels", "define a @pykern.jit(device=True) function at module level"),
    "AsyncFunctionDef": ("async functions are not supported in kernels", None),
    "ClassDef": ("class definitions are not supported in kernels", None),
    "Match": ("match statements are not supported in kernels", "use if/elif/else"),
    "AsyncFor": ("'async for' is not supported in kernels", None),
}
_UNSUPPORTED_EXPRS = {
    "Lambda": ("lambda is not supported in kernels", "define a @pykern.jit(device=True) function"),
    "ListComp": ("list comprehensions are not supported in kernels", "use a for loop over range() and a local.array"),
    "SetComp": ("set comprehensions are not supported in kernels", None),
    "DictComp": ("dict comprehensions are not supported in kernels", None),
    "GeneratorExp": ("generator expressions are not supported in kernels", "use a for loop over range()"),
    "Await": ("await is not supported in kernels", None),
    "Yield": ("yield is not supported in kernels", None),
    "YieldFrom": ("yield is not supported in kernels", None),
    "JoinedStr": ("strings (f-strings) are not supported in kernels", None),
    "FormattedValue": ("strings (f-strings) are not supported in kernels", None),
    "List": ("lists are not supported in kernels", "use a tuple (a, b) or local.array(n, dtype)"),
    "Set": ("sets are not supported in kernels", None),
    "Dict": ("dicts are not supported in kernels", None),
    "Starred": ("starred expressions (*x) are not supported in kernels", "pass and unpack tuples explicitly"),
    "NamedExpr": ("assignment expressions (:=) are not supported in kernels", "assign on its own line"),
    "Slice": ("slices are not supported in kernels", "index single elements, e.g. a[i, j]"),
}


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
        return f"a{t.ndim}{t.layout}{t.space[0]}{'r' if t.readonly else ''}{_type_token(t.dtype)}"
    if isinstance(t, T.Tuple):
        return "t" + str(len(t.elems)) + "".join(_type_token(e) for e in t.elems) + "e"
    return _sanitize(str(t))


def mangle(pyname: str, argtypes) -> str:
    """A device function's IR name: its Python name and its signature."""
    return f"{_sanitize(pyname)}__{'_'.join(_type_token(t) for t in argtypes) or 'v'}"


def _is_weak(e) -> bool:
    return isinstance(e, ir.Const) and getattr(e, "_weak", False)


def _weakval(e):
    return e.value if _is_weak(e) else None


def is_pure(e: ir.Expr) -> bool:
    """No side effects and cheap enough to evaluate twice."""
    if isinstance(e, (ir.Const, ir.Var, ir.ArrayAttr, ir.ConstArray)):
        return True
    if isinstance(e, (ir.Call, ir.Atomic, ir.AllocArray)):
        return False
    if isinstance(e, ir.Intrinsic) and e.name not in _PURE_INTRINSICS:
        return False
    return all(is_pure(c) for c in e.children())


def _const_value(value, t: T.Type):
    """Normalise a Python value to what ``Const(value, t)`` holds."""
    if isinstance(t, T.Complex):  # each part rounded to the component type
        c = complex(value)
        return complex(_const_value(c.real, t.component), _const_value(c.imag, t.component))
    if isinstance(t, T.Boolean):
        return bool(value)
    if isinstance(t, T.Float):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(t.np_dtype.type(value))
    return int(value)


def _fold_cast(value, src: T.Type, dst: T.Type):
    """``Cast`` semantics on a constant (numpy astype; float->int truncates, saturates)."""
    if isinstance(dst, T.Boolean):
        return value != 0
    if isinstance(dst, T.Complex):
        return _const_value(complex(int(value) if isinstance(value, bool) else value), dst)
    if isinstance(dst, T.Float):
        return _const_value(float(value) if not isinstance(value, bool) else float(int(value)), dst)
    # integer destination
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        if math.isinf(value):
            return dst.max if value > 0 else dst.min
        v = math.trunc(value)
        return max(dst.min, min(dst.max, v))
    v = int(value) & ((1 << dst.bits) - 1)
    if dst.signed and v > dst.max:
        v -= 1 << dst.bits
    return v


class ModuleBuilder:
    """State shared by every function lowered into one ``ir.Module``."""

    def __init__(self, debug: bool = False):
        self.debug = debug
        self.functions: dict = {}
        self.specs: dict = {}  # (py_func, argtypes) -> name
        self.stack: list = []  # py_funcs being lowered (recursion check)
        self.names: set = set()
        self.const_arrays: dict = {}  # id(array) -> (name, array)
        self.active: dict = {}  # specialisation key -> FunctionLowerer lowering it now
        self._assigned: dict = {}  # py_func -> names its body assigns

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
        if any(f is pyfunc for f in self.stack):
            chain = " -> ".join(getattr(f, "__name__", "?") for f in self.stack + [pyfunc])
            raise CompileError(
                f"recursive call of device function '{getattr(pyfunc, '__name__', pyfunc)}' ({chain}) needs a signature",
                loc,
                hint="declare its types, e.g. @pykern.jit(\"int64(int64)\", device=True), "
                "so the recursive call's return type is known (as numba requires); or rewrite it as a loop",
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

    def __init__(self, name: str, return_type: T.Type):
        self.name = name
        self.return_type = return_type


def _static_token(v) -> str:
    if isinstance(v, int):
        return str(v).replace("-", "m")
    return _sanitize(getattr(v, "_pk_name", None) or getattr(v, "__name__", None) or str(v))


class FunctionLowerer:
    """Lowers one Python function, specialised to ``argtypes``, to an ``ir.Function``."""

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
        self.local_names = set(self.params) | self._assigned_names()

    # ------------------------------------------------------------------ setup

    def loc(self, node) -> SourceLoc:
        return self.pf.loc(node)

    def error(self, msg: str, node, hint: str | None = None) -> CompileError:
        return CompileError(msg, self.loc(node) if node is not None else None, hint)

    def internal_error(self, e: Exception, node) -> CompileError:
        """A CompileError for an unexpected exception ``e`` while lowering ``node`` (as Triton's ``visit``)."""
        return self.error(f"internal error while compiling '{self.pyname}': {type(e).__name__}: {e}", node,
                          "this is a pykern bug; please report it with the kernel's source")

    def _param_names(self) -> list:
        a = self.node.args
        for bad, what in ((a.vararg, "*args"), (a.kwarg, "**kwargs")):
            if bad is not None:
                raise self.error(f"{what} parameters are not supported in kernels", bad, "list the parameters explicitly")
        if a.kwonlyargs:
            raise self.error("keyword-only parameters are not supported in kernels", a.kwonlyargs[0])
        names = [p.arg for p in a.posonlyargs + a.args if p.arg not in self.static]
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

    # ------------------------------------------------------------- the passes

    def lower(self) -> ir.Function:
        self.mb.stack.append(self.pyfunc)
        try:
            return self._lower()
        finally:
            self.mb.stack.pop()

    def _lower(self) -> ir.Function:
        def_loc = self.loc(self.node)
        self.vartypes = {n: (t, def_loc) for n, t in zip(self.params, self.argtypes)}
        self.ret = (T.void, def_loc) if self.is_kernel else None
        if self.declared_ret is not None:
            self.ret = (self.declared_ret, def_loc)
        for _ in range(_MAX_PASSES):
            self.changed = False
            self.skipped = []
            self.temps = {}
            self.loop_depth = 0
            self.alloc_count = 0
            self.assigned_so_far = set(self.params)
            self.else_flags = []  # per enclosing loop: its for/else flag or None
            self.renames = {}  # literal_unroll: loop variable -> its name in the current copy
            body = self.block(self.node.body)
            if not self.changed:
                break
        else:
            raise self.error(f"internal error: types of '{self.pyname}' did not settle", self.node)
        if self.skipped:
            name, node = self.skipped[0]
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
            if locals_[n] != t:
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
        )

    def _zero(self, t: T.Type, node):
        if t.is_scalar:
            return ir.Const(_const_value(0, t), t, self.loc(node))
        if isinstance(t, T.Tuple):
            return ir.TupleExpr([self._zero(e, node) for e in t.elems], t, self.loc(node))
        raise self.error(f"function '{self.pyname}' may end without returning its {t}", node)

    # ------------------------------------------------------------ statements

    def block(self, stmts) -> list:
        saved = getattr(self, "out", None)
        self.out = []
        try:
            for s in stmts:
                try:
                    self.stmt(s)
                except _NeedType as e:
                    self.skipped.append((e.name, e.node))
            return self.out
        finally:
            self.out = saved

    def emit(self, stmt):
        self.out.append(stmt)

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
        except (CompileError, RecursionError, _NeedType):  # errors, and the typing pass's own signal
            raise
        except Exception as e:
            raise self.internal_error(e, node) from e

    def stmt(self, node):
        self._visit("stmt_", _UNSUPPORTED_STMTS, "statements", node)

    def stmt_Pass(self, node):
        pass

    def stmt_Expr(self, node):
        v = node.value
        if isinstance(v, ast.Constant):
            return  # docstrings and stray constants
        e = self.expr(v)
        if isinstance(e, ir.Expr) and not is_pure(e):
            self.emit(ir.ExprStmt(e, self.loc(node)))

    def stmt_Assign(self, node):
        if len(node.targets) == 1:
            self.assign(node.targets[0], node.value, node)
            return
        value = self.value(node.value)
        if not isinstance(value, ir.Const):
            value = self.temp(value, node)
        for t in node.targets:
            self.assign_expr(t, value, node)

    def stmt_AnnAssign(self, node):
        t = self.dtype_arg(node.annotation)
        if not isinstance(node.target, ast.Name):
            raise self.error("annotated assignment needs a plain variable name", node.target)
        if node.value is None:
            raise self.error("a variable annotation needs a value in kernels", node, "write x: float32 = 0")
        self.set_var(node.target.id, self.cast(self.value(node.value), t, node.value), node.target)

    def assign(self, target, vnode, stmt_node):
        for t in ast.walk(target):
            if isinstance(t, ast.Starred):
                raise self.error("starred assignment (*x) is not supported in kernels", t, "unpack every element by name")
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(vnode, (ast.Tuple, ast.List)):
            if len(target.elts) != len(vnode.elts):
                raise self.error(
                    f"cannot unpack {len(vnode.elts)} values into {len(target.elts)} targets", stmt_node
                )
            # evaluate every right-hand value before assigning any (a, b = b, a)
            vals = []
            for v in vnode.elts:
                e = self.value(v)
                vals.append(e if isinstance(e, ir.Const) else self.temp(e, v))
            for t, e in zip(target.elts, vals):
                self.assign_expr(t, e, stmt_node)
            return
        if isinstance(target, ast.Name):
            v = self.expr(vnode)
            if isinstance(v, PyObj) and isinstance(v.value, stubs.GroupStub):
                # a cooperative group is a compile-time value: the name aliases it
                self.__dict__.setdefault("group_aliases", {})[target.id] = v
                return
            self.set_var(target.id, self.to_ir(v, vnode), target)
            return
        self.assign_expr(target, self.value(vnode), stmt_node)

    def assign_expr(self, target, value: ir.Expr, stmt_node):
        if isinstance(target, ast.Name):
            self.set_var(target.id, value, target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            t = value.type
            if not isinstance(t, T.Tuple):
                raise self.error(f"cannot unpack a {t} into {len(target.elts)} targets", stmt_node)
            if len(t.elems) != len(target.elts):
                raise self.error(
                    f"cannot unpack a tuple of {len(t.elems)} values into {len(target.elts)} targets", stmt_node
                )
            targets = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
            if not isinstance(value, (ir.Var, ir.TupleExpr)) or (isinstance(value, ir.Var) and value.name in targets):
                value = self.temp(value, stmt_node)  # read the whole tuple before assigning any target
            if isinstance(value, ir.TupleExpr):
                parts = [e if isinstance(e, (ir.Const, ir.ArrayAttr)) else self.temp(e, stmt_node) for e in value.elems]
            else:
                parts = [ir.TupleGet(value, k, t.elems[k], self.loc(stmt_node)) for k in range(len(t.elems))]
            for tgt, part in zip(target.elts, parts):
                self.assign_expr(tgt, part, stmt_node)
        elif isinstance(target, ast.Subscript):
            arr, idx = self.store_target(target)
            self.store(arr, idx, value, target)
        elif isinstance(target, ast.Attribute):
            base = self.expr(target.value)
            if isinstance(base, PartialIndex):
                base = self.to_ir(base, target.value)
            if isinstance(base, ir.Expr) and records.is_record_ref(base.type):
                view, idx = records.target(self, base, target.attr, target)  # r.x = v
                self.store(view, idx, value, target)
                return
            raise self.error(
                f"cannot assign to attribute '{target.attr}' in a kernel", target, "assign to a variable or an array element"
            )
        elif isinstance(target, ast.Starred):
            raise self.error("starred assignment (*x) is not supported in kernels", target)
        else:
            raise self.error(f"cannot assign to {type(target).__name__}", target)

    def set_var(self, name: str, value: ir.Expr, node):
        name = self.renames.get(name, name)
        self.assigned_so_far.add(name)
        t = value.type
        if isinstance(t, T.Void):
            raise self.error(f"cannot assign the result of a call that returns nothing to '{name}'", node)
        if name in self.vartypes:
            dt, dloc = self.vartypes[name]
            if dt != t:
                u = infer.unify(dt, t)
                if u is None:
                    what = "parameter" if name in self.params and dloc.line == self.loc(self.node).line else "assignment"
                    raise self.error(
                        f"variable '{name}' is assigned a {t} here but a {dt} at line {dloc.line} ({what})",
                        node,
                        hint="a variable keeps one type in a kernel; use a different name for the other value",
                    )
                if u != dt:
                    self.vartypes[name] = (u, dloc)
                    self.changed = True
        else:
            self.vartypes[name] = (t, self.loc(node))
            self.changed = True
        self.emit(ir.Assign(name, self.cast(value, self.vartypes[name][0], node), self.loc(node)))

    def temp(self, value: ir.Expr, node) -> ir.Var:
        name = f"$t{len(self.temps)}"
        if isinstance(value.type, T.Void):
            raise self.error("this call returns nothing; it has no value", node)
        self.temps[name] = value.type
        self.emit(ir.Assign(name, value, self.loc(node)))
        return ir.Var(name, value.type, self.loc(node))

    def stmt_AugAssign(self, node):
        op = self.binop_name(node.op, node)
        target = node.target
        if isinstance(target, ast.Name):
            cur = self.expr_Name(ast.copy_location(ast.Name(target.id, ast.Load()), target))
            cur = self.to_ir(cur, target)
            self.set_var(target.id, self.binop(op, cur, self.value(node.value), node), target)
        elif isinstance(target, ast.Subscript):
            arr, idx = self.store_target(target)
            if not is_pure(arr):
                arr = self.temp(arr, target)
            idx = [i if is_pure(i) else self.temp(i, target) for i in idx]
            cur = ir.Load(arr, idx, arr.type.dtype, self.loc(target))
            self.store(arr, idx, self.binop(op, cur, self.value(node.value), node), target)
        elif isinstance(target, ast.Attribute):
            base = self.expr(target.value)  # r.x += v
            if isinstance(base, PartialIndex):
                base = self.to_ir(base, target.value)
            if not (isinstance(base, ir.Expr) and records.is_record_ref(base.type)):
                raise self.error(f"cannot assign to attribute '{target.attr}' in a kernel", target,
                                 "assign to a variable or an array element")
            if not is_pure(base):
                base = self.temp(base, target)
            view, idx = records.target(self, base, target.attr, target)
            cur = ir.Load(view, idx, view.type.dtype, self.loc(target))
            self.store(view, idx, self.binop(op, cur, self.value(node.value), node), target)
        else:
            raise self.error(f"cannot assign to {type(target).__name__}", target)

    def store_target(self, target: ast.Subscript):
        base = self.expr(target.value)
        pre = []
        if isinstance(base, PartialIndex):
            base, pre = base.array, base.indices
        base = self.to_ir(base, target.value)
        if records.is_record_ref(base.type) and isinstance(target.slice, ast.Constant) \
                and isinstance(target.slice.value, str):
            return records.target(self, base, target.slice.value, target)  # r['x'] = v
        if not isinstance(base.type, T.Array):
            raise self.error(f"cannot assign to an element of a {base.type}", target, "only array elements can be assigned")
        idx = pre + self.index_exprs(target.slice)
        if len(idx) != base.type.ndim:
            raise self.error(
                f"{base.type.ndim}-d array needs {base.type.ndim} indices to assign an element, got {len(idx)}",
                target,
                hint="assigning to a row or slice is not supported; assign single elements a[i, j] = v",
            )
        return base, self.normalize_indices(base, idx, target)

    def store(self, arr: ir.Expr, idx: list, value: ir.Expr, node):
        at = arr.type
        if at.readonly or at.space == "const":
            raise self.error(
                f"cannot write to a read-only array ({at})", node, "const arrays and read-only arguments cannot be written"
            )
        if isinstance(value.type, T.Void):
            raise self.error("cannot store the result of a call that returns nothing", node)
        if not value.type.is_scalar:
            raise self.error(f"cannot store a {value.type} into an element of {at}", node)
        self.emit(ir.Store(arr, idx, self.cast(value, at.dtype, node), self.loc(node)))

    def stmt_If(self, node):
        cond = self.cond(node.test)
        if isinstance(cond, ir.Const):
            # prune the dead branch (as numba does): `if DEBUG:` with a frozen global
            for s in self.block(node.body if cond.value else node.orelse):
                self.emit(s)
            return
        then = self.block(node.body)
        orelse = self.block(node.orelse)
        self.emit(ir.If(cond, then, orelse, self.loc(node)))

    def stmt_While(self, node):
        flag = self.loop_else_begin(node)
        cond = self.cond(node.test)
        self.loop_depth += 1
        self.else_flags.append(flag)
        try:
            body = self.block(node.body)
        finally:
            self.loop_depth -= 1
            self.else_flags.pop()
        self.emit(ir.While(cond, body, self.loc(node)))
        self.loop_else_end(node, flag)

    # for/else and while/else: a hidden flag set by each `break` of the loop; the else
    # block runs when the loop ended without one (as in Python)
    def loop_else_begin(self, node, force: bool = False):
        if not node.orelse and not force:
            return None
        flag = f"$broke{node.lineno}_{node.col_offset}"
        self.vartypes.setdefault(flag, (T.boolean, self.loc(node)))
        self.emit(ir.Assign(flag, ir.Const(False, T.boolean, self.loc(node)), self.loc(node)))
        return flag

    def loop_else_end(self, node, flag):
        if flag is None or not node.orelse:
            return
        loc = self.loc(node.orelse[0])
        orelse = self.block(node.orelse)
        self.emit(ir.If(ir.UnaryOp("not", ir.Var(flag, T.boolean, loc), T.boolean, loc), orelse, [], loc))

    def stmt_For(self, node):
        it = node.iter
        fobj = self.expr(it.func) if isinstance(it, ast.Call) else None
        unroll = isinstance(fobj, PyObj) and _is_literal_unroll(fobj.value)
        flag = self.loop_else_begin(node, force=unroll)
        self.else_flags.append(flag)
        try:
            if unroll:
                self.for_unroll(node, flag)
            elif isinstance(fobj, PyObj) and fobj.value in (builtins.enumerate, builtins.zip):
                self.for_iter(node)
            else:
                self.for_loop(node, fobj)
        finally:
            self.else_flags.pop()
        self.loop_else_end(node, flag)

    def for_loop(self, node, fobj):
        it = node.iter
        if not (isinstance(fobj, PyObj) and fobj.value is builtins.range):
            self.for_each(node)
            return
        if it.keywords or not 1 <= len(it.args) <= 3:
            raise self.error("range() takes 1 to 3 positional arguments", it)
        if not isinstance(node.target, ast.Name):
            raise self.error("the loop variable of a for loop must be a plain name", node.target)
        args = [self.value(a) for a in it.args]
        for a, an in zip(args, it.args):
            if not isinstance(a.type, (T.Integer, T.Boolean)):
                raise self.error(f"range() arguments must be integers, not {a.type}", an)
        if len(args) == 1:
            args = [self.const(0, T.int64, node, weak=True), args[0], self.const(1, T.int64, node, weak=True)]
        elif len(args) == 2:
            args.append(self.const(1, T.int64, node, weak=True))
        if isinstance(args[2], ir.Const) and args[2].value == 0:
            raise self.error("range() step must not be zero", it.args[2])
        # the loop variable's type: promotion of the bounds, weak literals adopting
        lt, lw = args[0].type, _weakval(args[0])
        for a in args[1:]:
            lt = infer.common_type(lt, lw, a.type, _weakval(a))
            lw = None if _weakval(a) is None or lw is None else lw
        if isinstance(lt, T.Boolean):
            lt = T.int64
        if not isinstance(lt, T.Integer):
            raise self.error(
                f"range() bounds of types {', '.join(str(a.type) for a in args)} have no common integer type",
                it,
                hint="convert the bounds, e.g. range(int64(start), stop)",
            )
        var = node.target.id
        self.assigned_so_far.add(var)
        if var in self.vartypes:
            dt, dloc = self.vartypes[var]
            u = infer.unify(dt, lt)
            if u is None or not isinstance(u, T.Integer):
                raise self.error(
                    f"loop variable '{var}' is an integer here but a {dt} at line {dloc.line}",
                    node.target,
                    hint="a variable keeps one type in a kernel; use a different name",
                )
            if u != dt:
                self.vartypes[var] = (u, dloc)
                self.changed = True
        else:
            self.vartypes[var] = (lt, self.loc(node.target))
            self.changed = True
        vt = self.vartypes[var][0]
        start, stop, step = (self.cast(a, vt, an) for a, an in zip(args, [it] * 3))
        self.loop_depth += 1
        try:
            body = self.block(node.body)
        finally:
            self.loop_depth -= 1
        self.emit(ir.ForRange(var, start, stop, step, body, self.loc(node)))

    def for_each(self, node):
        """``for x in seq`` over a 1-d array or a tuple of one scalar type: a loop over
        a hidden index ``for $i in range(len(seq)): x = seq[$i]``."""
        it = node.iter
        seq = self.value(it)
        t = seq.type
        if isinstance(t, T.Array):
            if t.ndim == 0:
                raise self.error("iteration over a 0-d array", it, "index it with a[()]")
        elif isinstance(t, T.Tuple):
            if t.elems and not (all(e == t.elems[0] for e in t.elems) and t.elems[0].is_scalar):
                raise self.error(
                    f"kernels can loop over tuples of one scalar type, not {t}", it,
                    "loop over a tuple of mixed types with literal_unroll(t), or index it by constants",
                )
        else:
            raise self.error(
                f"kernels can loop over range(...), 1-d arrays and tuples, not a {t}",
                it,
                hint="write for i in range(n): ...",
            )
        if not is_pure(seq):
            seq = self.temp(seq, it)
        ivar = f"$i{node.lineno}_{node.col_offset}"
        self.vartypes.setdefault(ivar, (T.int64, self.loc(node)))
        loc = self.loc(node)
        index = ir.Var(ivar, T.int64, loc)
        if isinstance(t, T.Array):
            stop = ir.ArrayAttr(seq, "shape", 0, T.int64, loc)
        else:
            stop = ir.Const(len(t.elems), T.int64, loc)
        self.loop_depth += 1
        saved = self.out
        try:
            self.out = []
            if isinstance(t, T.Array) and (t.ndim > 1 or isinstance(t.dtype, T.Record)):
                elem = ir.ArrayView(seq, [index], ir.view_type(t, [index]), loc)  # rows (and records) are views
            elif isinstance(t, T.Array):
                elem = ir.Load(seq, [index], t.dtype, loc)
            else:
                elem = self.select_tuple_elem(seq, index, node) if t.elems else None
            if elem is not None:
                self.assign_expr(node.target, elem, node)
            head = self.out
        finally:
            self.out = saved
        try:
            body = head + self.block(node.body)
        finally:
            self.loop_depth -= 1
        self.emit(ir.ForRange(ivar, ir.Const(0, T.int64, loc), stop, ir.Const(1, T.int64, loc), body, loc))

    def stmt_Break(self, node):
        if not self.loop_depth:
            raise self.error("'break' outside a loop", node)
        if self.else_flags and self.else_flags[-1]:
            self.emit(ir.Assign(self.else_flags[-1], ir.Const(True, T.boolean, self.loc(node)), self.loc(node)))
        self.emit(ir.Break(self.loc(node)))

    # ------------------------------------------------------ enumerate, zip, literal_unroll

    def for_iter(self, node):
        """``for i, x in enumerate(seq)`` / ``for a, b in zip(s, t)`` (nested freely, over
        arrays, tuples of one scalar type and ``range``): a hidden int64 index loop."""
        length, elem = self.iter_seq(node.iter)
        ivar = f"$i{node.lineno}_{node.col_offset}"
        self.vartypes.setdefault(ivar, (T.int64, self.loc(node)))
        loc = self.loc(node)
        self.loop_depth += 1
        saved = self.out
        try:
            self.out = []
            self.assign_expr(node.target, elem(ir.Var(ivar, T.int64, loc)), node)
            head = self.out
        finally:
            self.out = saved
        try:
            body = head + self.block(node.body)
        finally:
            self.loop_depth -= 1
        self.emit(ir.ForRange(ivar, ir.Const(0, T.int64, loc), length, ir.Const(1, T.int64, loc), body, loc))

    def _pure(self, v: ir.Expr, node) -> ir.Expr:
        return v if is_pure(v) else self.temp(v, node)

    def iter_seq(self, it):
        """``(length, elem)`` of an iterable: an int64 length evaluated before the loop
        and ``elem(index)`` building the element for an int64 index."""
        loc = self.loc(it)
        i64 = T.int64
        fv = None
        if isinstance(it, ast.Call):
            f = self.expr(it.func)
            fv = f.value if isinstance(f, PyObj) else None
        if fv is builtins.enumerate:
            kws = {k.arg: k.value for k in it.keywords}
            if not 1 <= len(it.args) <= 2 or set(kws) - {"start"} or len(it.args) + len(kws) > 2:
                raise self.error("enumerate() takes an iterable and an optional start", it)
            start_node = it.args[1] if len(it.args) == 2 else kws.get("start")
            n, inner = self.iter_seq(it.args[0])
            start = None
            if start_node is not None:
                start = self.value(start_node)
                if not isinstance(start.type, (T.Integer, T.Boolean)):
                    raise self.error(f"enumerate() start must be an integer, not {start.type}", start_node)
                start = self._pure(self.cast(start, i64, start_node), start_node)

            def elem(i):
                k = i if start is None else ir.BinOp("+", i, start, i64, loc)
                e = inner(i)
                return ir.TupleExpr([k, e], T.Tuple((i64, e.type)), loc)

            return n, elem
        if fv is builtins.zip:
            if it.keywords or not it.args:
                raise self.error("zip() in kernels takes one or more iterables and no keywords", it)
            parts = [self.iter_seq(a) for a in it.args]
            n = parts[0][0]
            for m, _ in parts[1:]:
                n = ir.IfExp(ir.Compare("<", m, n, T.boolean, loc), m, n, i64, loc)

            def elem(i):
                es = [p[1](i) for p in parts]
                return ir.TupleExpr(es, T.Tuple(tuple(e.type for e in es)), loc)

            return n, elem
        if fv is builtins.range:
            if it.keywords or not 1 <= len(it.args) <= 3:
                raise self.error("range() takes 1 to 3 positional arguments", it)
            args = []
            for a in it.args:
                v = self.value(a)
                if not isinstance(v.type, (T.Integer, T.Boolean)):
                    raise self.error(f"range() arguments must be integers, not {v.type}", a)
                args.append(self._pure(self.cast(v, i64, a), a))
            zero, one = ir.Const(0, i64, loc), ir.Const(1, i64, loc)
            start, stop, step = ([zero] + args + [one])[:3] if len(args) == 1 else (args + [one])[:3]
            if isinstance(step, ir.Const) and step.value == 0:
                raise self.error("range() step must not be zero", it)

            def count(lo, hi, st):  # max(0, ceil((hi - lo) / st)) for st > 0
                span = ir.BinOp("-", hi, lo, i64, loc)
                q = ir.BinOp("//", ir.BinOp("+", span, ir.BinOp("-", st, one, i64, loc), i64, loc), st, i64, loc)
                return ir.IfExp(ir.Compare(">", hi, lo, T.boolean, loc), q, zero, i64, loc)

            up = count(start, stop, step)
            down = count(stop, start, ir.UnaryOp("-", step, i64, loc))
            if isinstance(step, ir.Const):
                n = up if step.value > 0 else down
            else:
                n = ir.IfExp(ir.Compare(">", step, zero, T.boolean, loc), up, down, i64, loc)
            return n, lambda i: ir.BinOp("+", start, ir.BinOp("*", i, step, i64, loc), i64, loc)
        seq = self.value(it)
        t = seq.type
        if isinstance(t, T.Array):
            if t.ndim == 0:
                raise self.error("iteration over a 0-d array", it, "index it with a[()]")
            seq = self._pure(seq, it)

            def elem(i):
                if t.ndim > 1:
                    return ir.ArrayView(seq, [i], ir.view_type(t, [i]), loc)
                return ir.Load(seq, [i], t.dtype, loc)

            return ir.ArrayAttr(seq, "shape", 0, i64, loc), elem
        if isinstance(t, T.Tuple):
            if not t.elems or not (all(e == t.elems[0] for e in t.elems) and t.elems[0].is_scalar):
                raise self.error(
                    f"kernels can loop over tuples of one scalar type, not {t}", it,
                    "loop over a tuple of mixed types with literal_unroll(t)",
                )
            seq = self._pure(seq, it)
            return ir.Const(len(t.elems), i64, loc), lambda i: self.select_tuple_elem(seq, i, it)
        raise self.error(f"kernels can iterate over range(), arrays, tuples, enumerate() and zip(), not a {t}", it)

    def for_unroll(self, node, flag):
        """``for x in literal_unroll(t)``: the body is copied once per element of the
        tuple ``t`` (elements may have different types, or be compile-time values
        such as functions); ``x`` is a new variable in each copy. Each copy is a
        one-trip loop (``continue`` ends it); ``break`` sets ``flag``, which skips
        the remaining copies."""
        it = node.iter
        if it.keywords or len(it.args) != 1:
            raise self.error("literal_unroll() takes one tuple", it)
        arg = it.args[0]
        v = None if isinstance(arg, ast.Tuple) else self.expr(arg)
        if v is None:  # a tuple display: its elements may be compile-time values (functions, types)
            items = [self.expr(e) for e in arg.elts]
            items = [self.to_ir(x, e) if isinstance(x, PartialIndex) else x for x, e in zip(items, arg.elts)]
            items = [self._pure(x, arg) if isinstance(x, ir.Expr) else x for x in items]
        elif isinstance(v, PyObj) and isinstance(v.value, tuple):
            items = [PyObj(x, f"{v.name}[{k}]") for k, x in enumerate(v.value)]
        else:
            seq = self.to_ir(v, arg)
            if not isinstance(seq.type, T.Tuple):
                # numba: literal_unroll of anything else is an ordinary loop
                self.for_each(ast.copy_location(ast.For(node.target, arg, node.body, [], None), node))
                return
            seq = self._pure(seq, arg)
            items = [self.tuple_get(seq, k, arg) for k in range(len(seq.type.elems))]
        if not isinstance(node.target, ast.Name):
            raise self.error("the loop variable of literal_unroll() must be a plain name", node.target)
        name = node.target.id
        loc = self.loc(node)
        saved_static, saved_rename = dict(self.static), dict(self.renames)
        self.loop_depth += 1
        try:
            for k, item in enumerate(items):
                from .calls import _NOT_STATIC, _static_value

                sv = _static_value(item) if isinstance(item, PyObj) else _NOT_STATIC
                saved = self.out
                self.out = []
                try:
                    if sv is not _NOT_STATIC and not isinstance(sv, int):
                        self.renames.pop(name, None)
                        self.static[name] = sv
                    else:
                        self.static.pop(name, None)
                        rname = f"{name}$u{node.lineno}_{k}"
                        self.renames[name] = rname
                        self.local_names.add(rname)
                        self.set_var(name, self.to_ir(item, arg), node.target)
                    body = self.out + self.block(node.body)
                finally:
                    self.out = saved
                uvar = f"$u{node.lineno}_{node.col_offset}_{k}"
                self.vartypes.setdefault(uvar, (T.int64, loc))
                one_trip = ir.ForRange(uvar, ir.Const(0, T.int64, loc), ir.Const(1, T.int64, loc),
                                       ir.Const(1, T.int64, loc), body, loc)
                if k == 0:
                    self.emit(one_trip)
                else:
                    self.emit(ir.If(ir.UnaryOp("not", ir.Var(flag, T.boolean, loc), T.boolean, loc), [one_trip], [], loc))
        finally:
            self.loop_depth -= 1
            self.static, self.renames = saved_static, saved_rename

    def stmt_Continue(self, node):
        if not self.loop_depth:
            raise self.error("'continue' outside a loop", node)
        self.emit(ir.Continue(self.loc(node)))

    def stmt_Return(self, node):
        v = node.value
        if v is None or (isinstance(v, ast.Constant) and v.value is None):
            if self.ret is not None and not isinstance(self.ret[0], T.Void):
                raise self.error(
                    f"'{self.pyname}' returns a {self.ret[0]} at line {self.ret[1].line} but nothing here", node
                )
            self.ret = self.ret or (T.void, self.loc(node))
            self.emit(ir.Return(None, self.loc(node)))
            return
        if self.is_kernel:
            raise self.error(
                "kernels cannot return a value", node, hint="write results into an output array argument"
            )
        value = self.value(v)
        t = value.type
        if _contains_array(t):
            raise self.error(f"device functions cannot return arrays ({t})", node, "write into an array argument instead")
        if isinstance(t, T.Void):
            raise self.error("cannot return the result of a call that returns nothing", node)
        if self.ret is None:
            self.ret = (t, self.loc(node))
            self.changed = True
        elif self.declared_ret is not None:
            pass  # the declared return type converts every returned value (numba)
        elif self.ret[0] != t:
            rt, rloc = self.ret
            u = None if isinstance(rt, T.Void) else infer.unify(rt, t)
            if u is None:
                raise self.error(
                    f"'{self.pyname}' returns a {t} here but a {rt} at line {rloc.line}",
                    node,
                    hint="return values of one type (convert with e.g. float32(x))",
                )
            if u != rt:
                self.ret = (u, rloc)
                self.changed = True
        self.emit(ir.Return(self.cast(value, self.ret[0], node), self.loc(node)))

    # ----------------------------------------------------------- expressions

    def expr(self, node):
        return self._visit("expr_", _UNSUPPORTED_EXPRS, "expressions", node)

    def value(self, node) -> ir.Expr:
        return self.to_ir(self.expr(node), node)

    def to_ir(self, v, node) -> ir.Expr:
        if isinstance(v, ir.Expr):
            return v
        if isinstance(v, PartialIndex):
            return self.array_view(v.array, v.indices, v.node)
        return self.materialize(v, node)

    def array_view(self, arr: ir.Expr, items: list, node) -> ir.ArrayView:
        """``arr[items]`` as a view: items are index expressions (not yet cast)
        or ``ir.Slice``s with int64 parts."""
        out = []
        for it in items:
            if not isinstance(it, ir.Slice):
                if not isinstance(it.type, (T.Integer, T.Boolean)):
                    raise self.error(f"array index must be an integer, not {it.type}", node, "convert with int(x)")
                it = self.cast(it, T.int64, node)
            out.append(it)
        return ir.ArrayView(arr, out, ir.view_type(arr.type, out), self.loc(node))

    def slice_item(self, node: ast.Slice) -> ir.Slice:
        parts = []
        for p in (node.lower, node.upper, node.step):
            if p is None or (isinstance(p, ast.Constant) and p.value is None):
                parts.append(None)
                continue
            v = self.value(p)
            if not isinstance(v.type, (T.Integer, T.Boolean)):
                raise self.error(f"slice bounds must be integers, not {v.type}", p, "convert with int(x)")
            parts.append(self.cast(v, T.int64, p))
        return ir.Slice(*parts, loc=self.loc(node))

    def materialize(self, obj: PyObj, node) -> ir.Expr:
        """A frozen Python value as an IR value (ints/floats stay weak)."""
        v = obj.value
        loc = self.loc(node)
        name = obj.name or "value"
        if isinstance(v, np.bool_):
            v = bool(v)
        if isinstance(v, enum.Enum) and not isinstance(v, (int, float)):
            v = v.value  # an Enum member is its value in kernels (IntEnum members are ints already)
            if not isinstance(v, (bool, int, float)):
                raise self.error(f"'{name}' is an Enum member with a {type(v).__name__} value; kernels need numbers", node)
        if isinstance(v, (bool, int, float)):
            return self.python_number(v, node)
        if isinstance(v, complex):
            return self.const(v, T.complex128, node, weak=True)
        if isinstance(v, np.generic):
            try:
                t = T.from_dtype(v.dtype)
            except TypeError as e:
                raise self.error(f"'{name}': {e}", node) from None
            return ir.Const(_const_value(v.item(), t), t, loc)
        if isinstance(v, tuple):
            elems = [self.materialize(PyObj(x, f"{name}[{k}]"), node) for k, x in enumerate(v)]
            elems = [ir.Const(e.value, e.type, e.loc) if _is_weak(e) else e for e in elems]
            fields = getattr(type(v), "_fields", None)
            if isinstance(fields, tuple) and len(fields) == len(v):  # a namedtuple keeps its field names
                return ir.TupleExpr(elems, T.Tuple(tuple(e.type for e in elems), fields, type(v).__name__), loc)
            return ir.TupleExpr(elems, T.Tuple(tuple(e.type for e in elems)), loc)
        if isinstance(v, np.ndarray):
            return self.const_array(v, name, node)
        if hasattr(type(v), "__cuda_array_interface__"):
            return self.global_device_array(v, name, node)
        if isinstance(v, (str, bytes)):
            raise self.error(f"strings are not supported in kernels ('{name}' is a {type(v).__name__})", node)
        if isinstance(v, pytypes.ModuleType):
            raise self.error(f"module '{name}' cannot be used as a value", node, f"use one of its functions, e.g. {name}.<function>(...)")
        if isinstance(v, stubs.Stub) and v._pk_name in ("warpsize", "laneid"):
            return ir.Intrinsic(v._pk_name, [], T.int32, {}, loc)
        if isinstance(v, stubs.Stub):
            raise self.error(f"'{name}' is not a value; it can only be called or used with its attributes", node)
        if isinstance(v, T.Type) or (isinstance(v, type) and issubclass(v, np.generic)):
            raise self.error(f"the type '{name}' cannot be used as a value", node, f"convert with {name}(x)")
        if callable(v):
            raise self.error(f"function '{name}' cannot be used as a value", node, "call it")
        raise self.error(
            f"'{name}' is a {type(v).__name__}, which kernels cannot use",
            node,
            hint="kernels can use ints, floats, bools, numpy scalars, numpy arrays (frozen as constants) and tuples of these",
        )

    def const_array(self, arr: np.ndarray, name: str, node) -> ir.ConstArray:
        try:
            dt = T.from_dtype(arr.dtype)
        except TypeError as e:
            raise self.error(f"global array '{name}': {e}", node) from None
        if arr.ndim > 4:
            raise self.error(f"global array '{name}' has {arr.ndim} dimensions; at most 4 are supported", node)
        data = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("="), copy=False).tobytes()
        t = T.Array(dt, arr.ndim, "C", "const", readonly=True)
        return ir.ConstArray(self.mb.const_array_name(arr, name), data, tuple(int(s) for s in arr.shape), t, self.loc(node))

    def global_device_array(self, arr, name: str, node) -> ir.GlobalArray:
        """A device array global, captured by reference (numba does the same):
        its address is baked into the code; the cache key has it too."""
        from .typeof import typeof

        try:
            t = typeof(arr)
            cai = arr.__cuda_array_interface__
        except (TypeError, AttributeError) as e:
            raise self.error(f"global device array '{name}': {e}", node) from None
        if t.ndim > 4:
            raise self.error(f"global array '{name}' has {t.ndim} dimensions; at most 4 are supported", node)
        shape = tuple(int(s) for s in cai["shape"])
        strides = cai.get("strides")
        if strides is None:  # C-contiguous
            strides, acc = [], t.dtype.nbytes
            for s in reversed(shape):
                strides.append(acc)
                acc *= max(s, 1)
            strides = tuple(reversed(strides))
        t = T.Array(t.dtype, t.ndim, t.layout, "global", bool(cai["data"][1]))
        return ir.GlobalArray(int(cai["data"][0]), shape, tuple(int(s) for s in strides), t, self.loc(node))

    def pyconst(self, value, node) -> ir.Const:
        """A weak constant for a Python number computed at compile time."""
        if isinstance(value, bool):
            return ir.Const(value, T.boolean, self.loc(node))
        try:
            t = infer.literal_type(value)
        except infer.InferError as e:
            raise self.error(f"constant {value!r} does not fit in 64 bits" if isinstance(value, int) else e.msg, node) from None
        return self.const(value, t, node, weak=True)

    def const(self, value, t: T.Type, node, weak: bool = False) -> ir.Const:
        c = ir.Const(_const_value(value, t), t, self.loc(node) if node is not None else None)
        if weak:
            c._weak = True
        return c

    def cast(self, e: ir.Expr, t: T.Type, node) -> ir.Expr:
        """``e`` converted to ``t`` (numpy astype); constants are folded."""
        if e.type == t:
            if _is_weak(e):
                return ir.Const(e.value, e.type, e.loc)  # a typed constant from here on
            return e
        if e.type.is_scalar and t.is_scalar:
            if isinstance(e.type, T.Complex) and not isinstance(t, (T.Complex, T.Boolean)):
                raise self.error(f"cannot convert {e.type} to {t}", node,
                                 "take the part you mean: z.real, z.imag or abs(z)")
            if isinstance(e, ir.Const):
                return ir.Const(_const_value(_fold_cast(e.value, e.type, t), t), t, e.loc)
            return ir.Cast(e, t, e.loc or self.loc(node))
        if isinstance(e.type, T.Tuple) and isinstance(t, T.Tuple) and len(e.type.elems) == len(t.elems):
            if isinstance(e, ir.TupleExpr):
                elems = [self.cast(x, et, node) for x, et in zip(e.elems, t.elems)]
            elif is_pure(e):
                elems = [
                    self.cast(ir.TupleGet(e, k, xt, e.loc), et, node)
                    for k, (xt, et) in enumerate(zip(e.type.elems, t.elems))
                ]
            else:
                raise self.error(f"cannot convert {e.type} to {t} here", node, "assign the value to a variable first")
            return ir.TupleExpr(elems, t, e.loc)
        raise self.error(f"cannot convert {e.type} to {t}", node)

    def python_number(self, v, node) -> ir.Expr:
        """A Python bool/int/float as IR: booleans are strong, numbers weak (NEP 50)."""
        if isinstance(v, bool):
            return ir.Const(v, T.boolean, self.loc(node))
        if isinstance(v, int):
            try:
                t = infer.literal_type(v)
            except infer.InferError as e:
                raise self.error(e.msg, node) from None
            return self.const(v, t, node, weak=True)
        return self.const(v, T.float64, node, weak=True)

    def expr_Constant(self, node):
        v = node.value
        if isinstance(v, (bool, int, float)):
            return self.python_number(v, node)
        if isinstance(v, (str, bytes)):
            raise self.error("strings are not supported in kernels", node)
        if v is None:
            raise self.error("None is not a kernel value", node)
        if isinstance(v, complex):
            return self.const(v, T.complex128, node, weak=True)
        raise self.error(f"the constant {v!r} is not supported in kernels", node)

    def expr_Name(self, node):
        name = self.renames.get(node.id, node.id)
        alias = self.__dict__.get("group_aliases", {}).get(name)
        if alias is not None:  # g = cuda.cg.this_grid()
            return alias
        if name in self.static:
            v = self.static[name]
            if isinstance(v, int) and not isinstance(v, bool):
                # an int literal argument: a typed (int64) constant, usable as a shape
                c = ir.Const(v, infer.literal_type(v), self.loc(node))
                c._literal = True  # still a literal when passed on to another device function
                return c
            return PyObj(v, name)
        if name in self.local_names:
            entry = self.vartypes.get(name)
            if entry is None:
                raise _NeedType(name, node)
            if name not in self.assigned_so_far and not self.loop_depth:
                if self.skipped:
                    raise _NeedType(name, node)  # its assignment may be in a statement skipped this pass
                # no assignment to it precedes this line (a loop could assign it in an earlier iteration)
                raise self.error(
                    f"local variable '{name}' is used before it is assigned a value",
                    node,
                    hint="assign it before this line",
                )
            return ir.Var(name, entry[0], self.loc(node))
        kind, value = self.env.lookup(name)
        if kind is None:
            raise self.error(f"name '{name}' is not defined", node)
        if kind == "empty-closure":
            raise self.error(f"free variable '{name}' has no value yet where the kernel is compiled", node)
        return PyObj(value, name)

    def expr_Tuple(self, node):
        elems = [self.value(e) for e in node.elts]
        for e, n in zip(elems, node.elts):
            if isinstance(e.type, T.Void):
                raise self.error("a call that returns nothing cannot be a tuple element", n)
        elems = [ir.Const(e.value, e.type, e.loc) if _is_weak(e) else e for e in elems]
        return ir.TupleExpr(elems, T.Tuple(tuple(e.type for e in elems)), self.loc(node))

    def expr_Attribute(self, node):
        base = self.expr(node.value)
        attr = node.attr
        if isinstance(base, PartialIndex):
            base = self.to_ir(base, node.value)
        if isinstance(base, PyObj) and hasattr(type(base.value), "__cuda_array_interface__"):
            base = self.materialize(base, node.value)  # a device array global: DEV.shape, DEV.size
        if isinstance(base, PyObj) and attr in ("real", "imag") and isinstance(base.value, (int, float, complex, np.number)):
            base = self.materialize(base, node.value)  # C.real of a frozen number (lang2)
        if isinstance(base, PyObj):
            return self.pyobj_attr(base, attr, node)
        t = base.type
        loc = self.loc(node)
        if records.is_record_ref(t) and t.dtype.field(attr) is not None:
            return records.read(self, base, attr, node)  # r.x
        if isinstance(t, T.Array):
            if attr in ("shape", "strides"):
                elems = [ir.ArrayAttr(base, attr, d, T.int64, loc) for d in range(t.ndim)]
                return ir.TupleExpr(elems, T.Tuple((T.int64,) * t.ndim), loc)
            if attr == "size":
                return ir.ArrayAttr(base, "size", None, T.int64, loc)
            if attr == "ndim":
                return self.const(t.ndim, T.int64, node, weak=True)
            if attr == "dtype":
                return PyObj(t.dtype, "dtype")
            raise self.error(
                f"arrays in kernels have no attribute '{attr}'", node, "supported: .shape, .size, .ndim, .strides, .dtype"
            )
        if isinstance(t, T.Tuple):
            if attr in t.names:  # a namedtuple field
                return self.tuple_get(base, t.names.index(attr), node)
            raise self.error(f"tuples have no attribute '{attr}'", node)
        if isinstance(t, (T.Integer, T.Boolean)) and attr == "bit_count":
            return PyObj(_BoundMethod(base, attr), f"{attr}")
        if attr in ("real", "imag") and t.is_scalar:
            from . import calls

            return calls.real_imag(self, base, attr, node)
        raise self.error(f"a {t} value has no attribute '{attr}'", node)

    def pyobj_attr(self, base: PyObj, attr: str, node):
        v = base.value
        full = f"{base.name}.{attr}" if base.name else attr
        if isinstance(v, stubs.GroupStub):
            from .calls import group_attr

            return group_attr(self, v, attr, node)
        if isinstance(v, stubs.Dim3Stub):
            if attr not in ("x", "y", "z"):
                raise self.error(f"{base.name} has no attribute '{attr}'", node, "use .x, .y or .z")
            return ir.Intrinsic(v.intrinsic, [], T.int32, {"axis": "xyz".index(attr)}, self.loc(node))
        if isinstance(v, np.ndarray):
            if attr in ("shape", "size", "ndim", "strides"):
                return PyObj(tuple(getattr(v, attr)) if attr in ("shape", "strides") else int(getattr(v, attr)), full)
            if attr == "dtype":
                return PyObj(v.dtype, full)
            raise self.error(f"global array '{base.name}': attribute '{attr}' is not supported in kernels", node)
        if isinstance(v, (pytypes.ModuleType, stubs.Namespace)) or (isinstance(v, type) and v.__module__ in ("math", "numpy")):
            try:
                child = getattr(v, attr)
            except AttributeError:
                what = "module" if isinstance(v, pytypes.ModuleType) else "namespace"
                raise self.error(f"{what} '{base.name}' has no attribute '{attr}'", node) from None
            return PyObj(child, full)
        if isinstance(v, type) and issubclass(v, enum.Enum):
            try:
                return PyObj(v[attr], full)  # Color.RED: a compile-time constant
            except KeyError:
                raise self.error(f"enum '{base.name}' has no member '{attr}'", node) from None
        if isinstance(v, enum.Enum) and attr in ("value", "name"):
            return PyObj(getattr(v, attr), full)
        if isinstance(v, tuple) and attr in (getattr(type(v), "_fields", None) or ()):
            return PyObj(getattr(v, attr), full)
        if getattr(v, "__pykern_device__", False) or isinstance(v, stubs.Stub):
            raise self.error(f"'{base.name}' has no attribute '{attr}' usable in kernels", node)
        raise self.error(
            f"attribute access on '{base.name}' (a {type(v).__name__}) is not supported in kernels",
            node,
            hint="kernels can read attributes of modules (math.pi) and of arrays (a.shape)",
        )

    def expr_Subscript(self, node):
        base = self.expr(node.value)
        pre = []
        if isinstance(base, PartialIndex):
            base, pre = base.array, base.indices
        elif isinstance(base, PyObj):
            v = base.value
            key_val = None if isinstance(node.slice, ast.Slice) or not isinstance(v, tuple) else self.expr(node.slice)
            if isinstance(key_val, ir.Expr) and not isinstance(key_val, ir.Const):
                base = self.to_ir(base, node.value)  # run-time index of a frozen tuple
            elif isinstance(v, tuple):
                key = self.const_index(node.slice, "a tuple index")
                try:
                    return PyObj(v[key], f"{base.name}[{key}]")
                except IndexError:
                    raise self.error(f"tuple index {key} out of range for '{base.name}' of length {len(v)}", node) from None
            else:
                base = self.to_ir(base, node.value)
        t = base.type
        if records.is_record_ref(t) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            return records.read(self, base, node.slice.value, node)  # r['x']
        if isinstance(t, T.Array):
            idx = pre + self.index_exprs(node.slice, allow_slices=True)
            if len(idx) > t.ndim:
                raise self.error(f"too many indices for a {t.ndim}-d array: {len(idx)}", node)
            if any(isinstance(i, ir.Slice) for i in idx):
                return self.array_view(base, idx, node)
            if len(idx) < t.ndim:
                return PartialIndex(base, idx, node)
            if isinstance(t.dtype, T.Record):
                return self.array_view(base, idx, node)  # a record element is a reference (numba)
            return ir.Load(base, self.normalize_indices(base, idx, node), t.dtype, self.loc(node))
        if isinstance(t, T.Tuple):
            dyn = self.dynamic_tuple_index(base, node)
            if dyn is not None:
                return dyn
            key = self.const_index(node.slice, "a tuple index")
            n = len(t.elems)
            if isinstance(key, slice):
                ks = range(n)[key]
                return ir.TupleExpr(
                    [self.tuple_get(base, k, node) for k in ks], T.Tuple(tuple(t.elems[k] for k in ks)), self.loc(node)
                )
            if not -n <= key < n:
                raise self.error(f"tuple index {key} out of range for a tuple of length {n}", node)
            return self.tuple_get(base, key % n, node)
        raise self.error(f"cannot index a {t}", node, "only arrays and tuples can be indexed")

    def dynamic_tuple_index(self, tup: ir.Expr, node):
        """``t[i]`` with a run-time ``i`` on a tuple of one scalar type: a select chain."""
        if isinstance(node.slice, ast.Slice):
            return None
        idx = self.expr(node.slice)
        if not isinstance(idx, ir.Expr) or isinstance(idx, ir.Const):
            return None
        t = tup.type
        n = len(t.elems)
        if not n or not all(e == t.elems[0] for e in t.elems) or not t.elems[0].is_scalar:
            raise self.error(
                f"a {t} can only be indexed by a constant", node, "index tuples of one scalar type, or use constants"
            )
        if not isinstance(idx.type, (T.Integer, T.Boolean)):
            raise self.error(f"tuple index must be an integer, not {idx.type}", node.slice)
        if not is_pure(tup) or not is_pure(idx):
            raise self.error("indexing a tuple by a run-time value with side effects", node, "assign it to a variable first")
        return self.select_tuple_elem(tup, self.cast(idx, T.int64, node), node, wrap=True)

    def select_tuple_elem(self, tup: ir.Expr, i: ir.Expr, node, wrap: bool = False) -> ir.Expr:
        """``tup[i]`` for an int64 run-time ``i`` as a chain of selects."""
        t = tup.type
        n = len(t.elems)
        loc = self.loc(node)
        if wrap:
            i = self.wrap_negative(i, n, loc)
        result = self.tuple_get(tup, n - 1, node)
        for k in range(n - 2, -1, -1):
            test = ir.Compare("==", i, ir.Const(k, T.int64, loc), T.boolean, loc)
            result = ir.IfExp(test, self.tuple_get(tup, k, node), result, t.elems[0], loc)
        return result

    @staticmethod
    def wrap_negative(i, n, loc):
        # negative indices count from the end, as in Python
        return ir.IfExp(
            ir.Compare("<", i, ir.Const(0, T.int64, loc), T.boolean, loc),
            ir.BinOp("+", i, ir.Const(n, T.int64, loc), T.int64, loc),
            i,
            T.int64,
            loc,
        )

    def tuple_get(self, tup: ir.Expr, k: int, node) -> ir.Expr:
        if isinstance(tup, ir.TupleExpr) and all(is_pure(e) for e in tup.elems):
            return tup.elems[k]
        return ir.TupleGet(tup, k, tup.type.elems[k], self.loc(node))

    def const_index(self, node, what: str):
        if isinstance(node, ast.Slice):
            parts = [None if p is None else self.const_index(p, what) for p in (node.lower, node.upper, node.step)]
            return slice(*parts)
        v = self.expr(node)
        if isinstance(v, PyObj) and isinstance(v.value, (int, np.integer)) and not isinstance(v.value, bool):
            return int(v.value)
        if isinstance(v, ir.Const) and isinstance(v.type, T.Integer):
            return int(v.value)
        raise NeedsConstant(f"{what} must be a constant integer", self.loc(node),
                            "tuples can only be indexed by constants, e.g. t[0] or t[-1]")

    def index_exprs(self, node, allow_slices: bool = False) -> list:
        """The index expressions of ``a[...]`` (not yet cast); with ``allow_slices``
        a slice item becomes an ``ir.Slice``."""
        if isinstance(node, ast.Slice):
            if allow_slices:
                return [self.slice_item(node)]
            raise self.error(
                "assigning to a slice is not supported in kernels", node, "assign single elements, e.g. a[i, j] = v"
            )
        if isinstance(node, ast.Tuple):
            out = []
            for e in node.elts:
                out.extend(self.index_exprs(e, allow_slices))
            return out
        v = self.value(node)
        if isinstance(v.type, T.Tuple):
            if not isinstance(v, (ir.TupleExpr, ir.Var)) and not is_pure(v):
                v = self.temp(v, node)
            return [self.tuple_get(v, k, node) for k in range(len(v.type.elems))]
        return [v]

    def normalize_indices(self, arr: ir.Expr, idx: list, node) -> list:
        out = []
        for d, i in enumerate(idx):
            if not isinstance(i.type, (T.Integer, T.Boolean)):
                raise self.error(f"array index must be an integer, not {i.type}", node, "convert with int(x)")
            if isinstance(i, ir.Const) and i.value < 0:
                # wrap constant negative indices like Python: a[-1] is the last element
                i = ir.BinOp(
                    "+", ir.ArrayAttr(arr, "shape", d, T.int64, i.loc), self.const(i.value, T.int64, node), T.int64, i.loc
                )
            out.append(self.cast(i, T.int64, node))
        return out

    def binop_name(self, op, node) -> str:
        name = _BINOPS.get(type(op))
        if name is None:
            raise self.error(f"operator {type(op).__name__} is not supported in kernels", node)
        return name

    def expr_BinOp(self, node):
        op = self.binop_name(node.op, node)
        return self.binop(op, self.value(node.left), self.value(node.right), node)

    def binop(self, op: str, lhs: ir.Expr, rhs: ir.Expr, node) -> ir.Expr:
        if _is_weak(lhs) and _is_weak(rhs):
            return self.fold(op, lhs.value, rhs.value, node)
        try:
            opt, rt = infer.binop_types(op, lhs.type, _weakval(lhs), rhs.type, _weakval(rhs))
        except infer.InferError as e:
            raise self.error(e.msg, node, e.hint) from None
        if op == "**" and isinstance(opt, T.Integer) and isinstance(rhs, ir.Const) and rhs.value < 0:
            raise self.error(
                f"integer {lhs.type} to a negative constant power", node, f"use a float exponent, e.g. x ** {float(rhs.value)}"
            )
        if op in ("<<", ">>") and isinstance(rhs, ir.Const) and rhs.value < 0:
            raise self.error("negative shift count", node)
        if op == "**" and isinstance(opt, T.Complex):
            from . import calls

            return calls.complex_pow(self, self.cast(lhs, opt, node), self.cast(rhs, opt, node), node)
        return ir.BinOp(op, self.cast(lhs, opt, node), self.cast(rhs, opt, node), rt, self.loc(node))

    def fold(self, op: str, a, b, node) -> ir.Const:
        """Python arithmetic on two weak constants."""
        if op == "**" and isinstance(a, int) and isinstance(b, int) and abs(b) > 4096 and abs(a) > 1:
            raise self.error("constant power too large", node)
        try:
            r = _PYOPS[op](a, b)
        except TypeError as e:  # complex // complex...
            raise self.error(f"constant expression failed: {e}", node) from None
        except ZeroDivisionError:
            raise self.error("division by zero in a constant expression", node) from None
        except (OverflowError, ValueError) as e:
            raise self.error(f"constant expression failed: {e}", node) from None
        if isinstance(r, bool):
            return ir.Const(r, T.boolean, self.loc(node))
        if isinstance(r, complex) and not (isinstance(a, complex) or isinstance(b, complex)):
            raise self.error("constant expression gives a complex number", node)
        try:
            t = infer.literal_type(r)
        except infer.InferError:
            raise self.error(f"constant expression overflows 64 bits: {r}", node) from None
        return self.const(r, t, node, weak=True)

    def expr_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            c = self.cond(node.operand)
            if isinstance(c, ir.Const):
                return ir.Const(not c.value, T.boolean, self.loc(node))
            return ir.UnaryOp("not", c, T.boolean, self.loc(node))
        v = self.value(node.operand)
        t = v.type
        if not t.is_scalar:
            raise self.error(f"bad operand type for unary operator: {t}", node)
        loc = self.loc(node)
        if isinstance(node.op, ast.UAdd):
            return self.cast(v, T.int64, node) if isinstance(t, T.Boolean) else v
        if isinstance(node.op, ast.USub):
            if _is_weak(v):
                return self.fold("-", 0, v.value, node) if not isinstance(v.value, float) else self.const(-v.value, T.float64, node, weak=True)
            if isinstance(t, T.Boolean):
                v, t = self.cast(v, T.int64, node), T.int64
            if isinstance(v, ir.Const):
                return ir.Const(_const_value(_fold_cast(-v.value, T.int64 if isinstance(t, T.Integer) else t, t), t), t, loc)
            return ir.UnaryOp("-", v, t, loc)
        if isinstance(node.op, ast.Invert):
            if isinstance(t, T.Boolean):
                return ir.UnaryOp("not", v, T.boolean, loc)
            if not isinstance(t, T.Integer):
                raise self.error(f"bad operand type for ~: {t}", node, "~ needs an integer")
            if _is_weak(v):
                return self.const(~v.value, t, node, weak=True)
            return ir.UnaryOp("~", v, t, loc)
        raise self.error(f"unary operator {type(node.op).__name__} is not supported", node)

    def cond(self, node) -> ir.Expr:
        """A condition as a boolean expression (Python truthiness)."""
        if isinstance(node, ast.BoolOp):
            vals = [self.cond(v) for v in node.values]
            op = "and" if isinstance(node.op, ast.And) else "or"
            return self.make_boolop(op, vals, node)
        v = self.value(node)
        if not v.type.is_scalar:
            raise self.error(f"cannot use a {v.type} as a condition", node, "compare it, e.g. x > 0, or index it")
        return self.cast(v, T.boolean, node)

    def make_boolop(self, op: str, vals: list, node) -> ir.Expr:
        # drop constants that cannot decide, short-circuit on ones that do
        out = []
        for v in vals:
            if isinstance(v, ir.Const):
                if bool(v.value) == (op == "or"):
                    if not out:
                        return ir.Const(op == "or", T.boolean, self.loc(node))
                    out.append(v)
                    break
                continue
            out.append(v)
        if not out:
            return ir.Const(op == "and", T.boolean, self.loc(node))
        if len(out) == 1:
            return out[0]
        return ir.BoolOp(op, out, T.boolean, self.loc(node))

    def expr_BoolOp(self, node):
        op = "and" if isinstance(node.op, ast.And) else "or"
        vals = [self.value(v) for v in node.values]
        if all(v.type == T.boolean for v in vals):
            return self.make_boolop(op, vals, node)
        # Python returns an operand: a and b == (b if a else a)
        for v, n in zip(vals, node.values):
            if not v.type.is_scalar:
                raise self.error(f"cannot use a {v.type} with '{op}'", n)
            if not is_pure(v):
                raise self.error(
                    f"'{op}' of non-boolean values with side effects is not supported",
                    n,
                    hint="assign the value to a variable first, or compare it (x != 0)",
                )
        t, w = vals[0].type, _weakval(vals[0])
        for v in vals[1:]:
            t = infer.common_type(t, w, v.type, _weakval(v))
            w = None
        result = self.cast(vals[-1], t, node)
        for v in reversed(vals[:-1]):
            test = self.cast(v, T.boolean, node)
            cv = self.cast(v, t, node)
            if op == "and":
                result = ir.IfExp(test, result, cv, t, self.loc(node))
            else:
                result = ir.IfExp(test, cv, result, t, self.loc(node))
        return result

    def expr_Compare(self, node):
        for op in node.ops:
            if type(op) not in _CMPOPS:
                what = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}.get(type(op), type(op).__name__)
                raise self.error(f"'{what}' comparisons are not supported in kernels", node, "compare numbers with == != < <= > >=")
        operands = [self.value(node.left)] + [self.value(c) for c in node.comparators]
        comps = []
        for k, (op, rnode) in enumerate(zip(node.ops, node.comparators)):
            name = _CMPOPS.get(type(op))
            if name is None:
                what = {ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in"}.get(type(op), type(op).__name__)
                raise self.error(f"'{what}' comparisons are not supported in kernels", node, "compare numbers with == != < <= > >=")
            lhs, rhs = operands[k], operands[k + 1]
            if k + 1 < len(node.ops) and not is_pure(rhs):
                raise self.error(
                    "the middle operand of a chained comparison has side effects",
                    rnode,
                    hint="assign it to a variable first",
                )
            comps.append(self.compare(name, lhs, rhs, node))
        if len(comps) == 1:
            return comps[0]
        return self.make_boolop("and", comps, node)

    def compare(self, op: str, lhs: ir.Expr, rhs: ir.Expr, node) -> ir.Expr:
        if op not in ("==", "!=") and (isinstance(lhs.type, T.Complex) or isinstance(rhs.type, T.Complex)):
            raise self.error(f"'{op}' is not defined for complex numbers", node, "compare abs(z) or z.real")
        if _is_weak(lhs) and _is_weak(rhs):
            return ir.Const(bool(_PYOPS[op](lhs.value, rhs.value)), T.boolean, self.loc(node))
        try:
            ct = infer.compare_type(lhs.type, _weakval(lhs), rhs.type, _weakval(rhs))
        except infer.InferError as e:
            raise self.error(e.msg, node, e.hint) from None
        return ir.Compare(op, self.cast(lhs, ct, node), self.cast(rhs, ct, node), T.boolean, self.loc(node))

    def expr_IfExp(self, node):
        cond = self.cond(node.test)
        if isinstance(cond, ir.Const):
            return self.expr(node.body if cond.value else node.orelse)
        a, b = self.value(node.body), self.value(node.orelse)
        if a.type.is_scalar and b.type.is_scalar:
            t = infer.common_type(a.type, _weakval(a), b.type, _weakval(b))
        else:
            t = infer.unify(a.type, b.type)
            if t is None:
                raise self.error(f"the two branches of a conditional expression have types {a.type} and {b.type}", node)
        return ir.IfExp(cond, self.cast(a, t, node), self.cast(b, t, node), t, self.loc(node))

    # ---------------------------------------------------------------- calls

    def expr_Call(self, node):
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("conjugate", "conj"):
            from . import calls

            m = calls.number_method(self, node)  # z.conjugate() (complex numbers, lang2)
            if m is not None:
                return m
        fobj = self.expr(node.func)
        if not isinstance(fobj, PyObj):
            t = fobj.array.type if isinstance(fobj, PartialIndex) else fobj.type
            raise self.error(f"a {t} value is not callable", node)
        from . import calls

        return calls.lower_call(self, fobj, node)

    def dtype_arg(self, node) -> T.Type:
        """A dtype argument (``np.float32``, ``pykern.float32``, ``"float32"``, ``a.dtype``)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return self.dtype_of(PyObj(node.value, repr(node.value)), node)
        return self.dtype_of(self.expr(node), node)

    def dtype_of(self, v, node) -> T.Type:
        """A scalar type from a dtype-like compile-time value."""
        if isinstance(v, PyObj):
            v = v.value
        elif isinstance(v, ir.Expr):
            raise self.error(f"expected a dtype, got a {v.type} value", node)
        if isinstance(v, T.Type) and (v.is_scalar or isinstance(v, T.Record)):
            return v
        if v is bool:
            return T.boolean
        if v is int:
            return T.int64
        if v is float:
            return T.float64
        if isinstance(v, str):
            t = T.SCALARS.get(v) or T.ALIASES.get(v)
            if t is not None:
                return t
        elif isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
            try:
                return T.from_dtype(v)
            except TypeError as e:
                raise self.error(str(e), node) from None
        else:
            s = str(v)
            t = T.SCALARS.get(s) or T.ALIASES.get(s)
            if t is not None:
                return t
        raise self.error(
            f"{v!r} is not a dtype",
            node,
            hint="use a numpy type (np.float32), a pykern type (pykern.float32) or a name ('float32')",
        )

    def const_value(self, node, what: str):
        """A compile-time Python value (int/float/bool or tuple of those) of an expression."""
        v = self.expr(node)
        if isinstance(v, PyObj):
            x = v.value
            if isinstance(x, (int, float, np.integer, np.floating, np.bool_)):
                return x.item() if isinstance(x, np.generic) else x
            if isinstance(x, (tuple, list)) and all(isinstance(e, (int, np.integer)) for e in x):
                return tuple(int(e) for e in x)
            if isinstance(x, tuple):
                return x
        elif isinstance(v, ir.Const):
            return v.value
        elif isinstance(v, ir.TupleExpr) and all(isinstance(e, ir.Const) for e in v.elems):
            return tuple(e.value for e in v.elems)
        raise NeedsConstant(f"{what} must be a compile-time constant", self.loc(node),
                            "use a literal or a module-level constant")


def _is_literal_unroll(f) -> bool:
    """pykern.literal_unroll, or numba's (``from numba import literal_unroll``)."""
    return f is stubs.literal_unroll or (
        getattr(f, "__name__", None) == "literal_unroll" and str(getattr(f, "__module__", "")).startswith("numba")
    )


def _contains_array(t: T.Type) -> bool:
    if isinstance(t, T.Array):
        return True
    return isinstance(t, T.Tuple) and any(_contains_array(e) for e in t.elems)
