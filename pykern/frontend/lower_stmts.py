"""Statements: assignments (unpacking, augmented, through records), stores, ``if``,
``return``, ``break``/``continue``; the ``FunctionLowerer`` mixin ``StatementLowering``.

Each ``stmt_<AST class>`` method lowers one statement node and ``emit``s IR into the
current block; loops are in ``lower_loops``."""

from __future__ import annotations

import ast

from .. import stubs
from . import infer, ir, records, slice_store
from . import types as T
from .values import NeedType, PartialIndex, PyObj, is_pure

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


class StatementLowering:
    """One ``stmt_<AST class>`` method per statement (variables keep one type, widened by
    ``set_var`` until the typing passes settle)."""

    def stmt(self, node):
        self._visit("stmt_", _UNSUPPORTED_STMTS, "statements", node)

    def block(self, stmts) -> list:
        saved = getattr(self, "out", None)
        self.out = []
        try:
            for s in stmts:
                try:
                    self.stmt(s)
                except NeedType as e:
                    self.skipped.append((e.name, e.node))
            return self.out
        finally:
            self.out = saved

    def emit(self, stmt):
        self.out.append(stmt)

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
            if not is_pure(value) and not isinstance(value, (ir.AllocArray, ir.ConstArray)) and _slices(target.slice):
                value = self.temp(value, stmt_node)  # the value first, as Python evaluates it
            arr, idx = self.store_target(target, views=True)
            if idx is None:
                self.check_writable(arr.type, target)
                slice_store.store(self, arr, value, target)
            else:
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
        slice_store.note_assignment(self, name, value)
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

    def check_writable(self, at: T.Array, node):
        if at.readonly or at.space == "const":
            raise self.error(
                f"cannot write to a read-only array ({at})", node, "const arrays and read-only arguments cannot be written"
            )

    def store(self, arr: ir.Expr, idx: list, value: ir.Expr, node):
        at = arr.type
        self.check_writable(at, node)
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

    def stmt_Break(self, node):
        if not self.loop_depth:
            raise self.error("'break' outside a loop", node)
        if self.else_flags and self.else_flags[-1]:
            self.emit(ir.Assign(self.else_flags[-1], ir.Const(True, T.boolean, self.loc(node)), self.loc(node)))
        self.emit(ir.Break(self.loc(node)))

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


def _slices(index) -> bool:
    """The subscript ``index`` has a slice item (``a[1:3]``, ``a[i, :]``)."""
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(i, ast.Slice) for i in items)


def _contains_array(t: T.Type) -> bool:
    if isinstance(t, T.Array):
        return True
    return isinstance(t, T.Tuple) and any(_contains_array(e) for e in t.elems)
