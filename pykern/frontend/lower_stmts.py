"""Statements: assignments (unpacking, augmented, through records), stores, ``if``,
``return``, ``break``/``continue``; the ``FunctionLowerer`` mixin ``StatementLowering``.

Each ``stmt_<AST class>`` method lowers one statement node and ``emit``s IR into the
current block; loops are in ``lower_loops``."""

from __future__ import annotations

import ast

import numpy as np

from pykern.lang import stubs
from pykern.frontend import infer
from pykern.frontend import ir
from pykern.frontend import local_defs
from pykern.frontend import records
from pykern.frontend import slice_store
from pykern.frontend import versions
from pykern.frontend import types as T
from pykern.frontend.values import NeedType, PartialIndex, PyObj, as_const_value, is_pure

#: what an exception argument may be: constants the host can rebuild the exception from
_EXCEPTION_ARG_TYPES = (str, bytes, bool, int, float, complex, type(None))

_UNSUPPORTED_STMTS = {
    "With": ("'with' blocks are not supported in kernels", None),
    "AsyncWith": ("'async with' is not supported in kernels", None),
    "Try": ("try/except is not supported in kernels", "kernels cannot catch exceptions"),
    "TryStar": ("try/except* is not supported in kernels", None),
    "Delete": ("del is not supported in kernels", None),
    "Import": ("import inside a kernel is not supported", "import at module level; the kernel can use the module"),
    "ImportFrom": ("import inside a kernel is not supported", "import at module level; the kernel can use the module"),
    "AsyncFunctionDef": ("async functions are not supported in kernels", None),
    "ClassDef": ("class definitions are not supported in kernels", None),
    "Match": ("match statements are not supported in kernels", "use if/elif/else"),
    "AsyncFor": ("'async for' is not supported in kernels", None),
}


_JUMPS = (ir.Return, ir.Break, ir.Continue)

#: why two values of a variable need one type (``versions`` splits those that never meet)
MEET_HINT = ("both values can reach a later read of the variable (paths join after an if/else or around a "
             "loop), so they need one type; use a different name for the other value")


def _ends(body: list) -> bool:
    """Does no path through ``body`` go on past its end?"""
    return ir.always_returns(body) or bool(body) and isinstance(body[-1], (ir.Break, ir.Continue))


def _describe(v) -> str:
    return "None" if v is None else getattr(v, "__name__", None) or repr(v)


class StatementLowering:
    """One ``stmt_<AST class>`` method per statement (a variable -- after ``versions`` split
    the values that never meet -- keeps one type, widened by ``set_var`` until the typing
    passes settle)."""

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
                    e.node = s if e.node is None else e.node  # a recursive call: its statement
                    self.skipped.append(e)
                if self.out and isinstance(self.out[-1], _JUMPS):
                    break  # the rest is unreachable (and, as in numba, not typed: `if z is None: return`)
            return self.out
        finally:
            self.out = saved

    def emit(self, stmt):
        self.out.append(stmt)

    def stmt_Pass(self, node):
        pass

    def stmt_Global(self, node):
        """``global x`` / ``nonlocal x`` of a name the function only reads changes nothing (the
        name is read from the globals or the closure either way; numba accepts it too); one the
        function assigns would write outside the kernel."""
        bound = versions.assigned_names(self.node)
        for name in node.names:
            if name in bound:
                what = "globals" if isinstance(node, ast.Global) else "variables of the enclosing function"
                raise self.error(f"'{name}' is declared '{type(node).__name__.lower()}' and assigned: kernels cannot "
                                 f"assign {what}", node, "write results to an array argument")

    stmt_Nonlocal = stmt_Global

    def stmt_FunctionDef(self, node):
        """A nested ``def``: a device function of its own (``local_defs``), the name bound to it
        as a compile-time value."""
        self.bind_function(node.name, local_defs.define(self, node))

    def bind_function(self, name: str, local):
        self.static[name] = local
        self.static_replaced.discard(name)
        self.static_optional.discard(name)

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
            if isinstance(v, PyObj) and v.value is None:
                self.bind_none(target.id, target)
                return
            if isinstance(v, PyObj) and isinstance(v.value, local_defs.LocalFunction):  # f = lambda x: ...
                self.bind_function(target.id, v.value)
                return
            self.set_var(target.id, self.to_ir(v, vnode), target)
            return
        self.assign_expr(target, self.value(vnode), stmt_node)

    def assign_expr(self, target, value: ir.Expr, stmt_node):
        if isinstance(target, ast.Name):
            self.set_var(target.id, value, target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            t = value.type
            if isinstance(t, T.Array) and t.ndim == 1:
                self.unpack_array(target, value, stmt_node)
                return
            if not isinstance(t, T.Tuple):
                raise self.error(f"cannot unpack a {t} into {len(target.elts)} targets", stmt_node,
                                 "a tuple or a 1-d array (a row of a 2-d one) can be unpacked")
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
                self.store_view(arr, value, target)
            else:
                self.store(arr, idx, value, target)
        elif isinstance(target, ast.Attribute):
            base = self.expr(target.value)
            if isinstance(base, PartialIndex):
                base = self.to_ir(base, target.value)
            if isinstance(base, ir.Expr) and records.is_record_ref(base.type):
                view, idx = records.target(self, base, target.attr, target)  # r.x = v
                if idx is None:  # r.h = src (an array field), r.s = rec (a record field)
                    self.store_view(view, value, target)
                else:
                    self.store(view, idx, value, target)
                return
            raise self.error(
                f"cannot assign to attribute '{target.attr}' in a kernel", target, "assign to a variable or an array element"
            )
        elif isinstance(target, ast.Starred):
            raise self.error("starred assignment (*x) is not supported in kernels", target)
        else:
            raise self.error(f"cannot assign to {type(target).__name__}", target)

    def return_array_param(self, v, t, node, value):
        """``return A`` where ``A`` is an array parameter the function never rebinds (numba's
        in-place helpers: write into ``A``, hand it back). The function becomes void and records
        which parameter it returns; the caller's value is its own argument (calls/device_functions.py). Other
        arrays (views made in the function, an array variable) are its return value
        (``return_array_value``); tuples holding arrays are an error."""
        k = _returned_param(self, v, t)
        if isinstance(t, T.Array) and (k is None or not self.returns_only(v.id)):
            self.return_array_value(value, t, node)
            return
        if k is None:
            raise self.error(f"device functions cannot return arrays ({t}) other than an array parameter "
                             "returned unchanged", node, "write into an array argument instead")
        if self.ret is not None and self.returned_param != k:
            if self.returned_param is not None:
                was = f"parameter '{self.params[self.returned_param]}'"
            else:
                was = "nothing" if isinstance(self.ret[0], T.Void) else f"a {self.ret[0]}"
            raise self.error(f"'{self.pyname}' returns {was} at line {self.ret[1].line} but the array "
                             f"'{v.id}' here", node, "return the same array parameter everywhere")
        self.returned_param = k
        self.ret = self.ret or (T.void, self.loc(node))
        self.emit(ir.Return(None, self.loc(node)))

    def returns_only(self, name: str) -> bool:
        """Every ``return`` of the function returns the variable ``name``."""
        rets = [n.value for n in ast.walk(self.node) if isinstance(n, ast.Return)]
        return all(isinstance(r, ast.Name) and r.id == name for r in rets)

    def return_array_value(self, value: ir.Expr, t: T.Array, node):
        """``return a[i:j]``, ``return r`` of an array variable: the array (a view of
        memory the caller can reach) is the function's value, as in numba. Local and
        shared arrays cannot leave the function that made them (numba refuses them too)."""
        if t.space in ("local", "shared"):
            raise self.error(f"a device function cannot return a {t.space} array ({t})", node,
                             "return a view of an array argument, or write into one")
        if self.ret is None:
            self.ret = (t, self.loc(node))
            self.changed = True
        elif self.ret[0] != t:
            raise self.error(f"'{self.pyname}' returns a {t} here but a {self.ret[0]} at line {self.ret[1].line}",
                             node, "return arrays of one type (dtype, dimensions and layout)")
        self.emit(ir.Return(value, self.loc(node)))

    def unpack_array(self, target, arr: ir.Expr, stmt_node):
        """``x, y, z = a`` of a 1-d array (numba's unpacking of arrays; ``for dx, dy in steps``
        over a 2-d array's rows): its first elements, all read before any target is assigned.
        The length is not checked (as numba.cuda without debug); under ``debug=True`` a shorter
        array is an index error."""
        loc = self.loc(stmt_node)
        arr = self.once(arr, stmt_node)
        parts = [self.temp(ir.Load(arr, [self.const(k, T.int64, stmt_node)], arr.type.dtype, loc), stmt_node)
                 for k in range(len(target.elts))]
        for tgt, part in zip(target.elts, parts):
            self.assign_expr(tgt, part, stmt_node)

    def bind_none(self, name: str, node):
        """``a = None``: the name is a compile-time None from here on (numba's ``none`` type), as
        an optional argument left out is, so ``a is None`` folds; a value assigned later makes it
        a variable (``set_var``). None where it held a value would be numba's Optional."""
        name = self.renames.get(name, name)
        holds_value = name in self.static_replaced or (name not in self.static and name in self.assigned_so_far)
        if holds_value and (self.loop_depth or name not in self.static):
            raise self.error(f"'{name}' holds a value here; assigning None to it would make it numba's Optional "
                             "type, which pykern does not have", node, "use another name for the None")
        self.static[name] = None
        self.static_replaced.discard(name)
        self.static_optional.discard(name)
        self.assigned_so_far.add(name)

    def set_var(self, name: str, value: ir.Expr, node):
        name = self.renames.get(name, name)
        if name in self.static and name not in self.static_replaced:
            # `if scale is None: scale = 2.0`: from here on the name is a variable. Only where the
            # order of lowering is the order of execution (not in a loop, not in a run-time `if`).
            if self.loop_depth:
                raise self.error(f"'{name}' is a compile-time value ({_describe(self.static[name])}); "
                                 "assigning it inside a loop is not supported", node,
                                 hint=f"assign it before the loop, or use another name than '{name}'")
            self.static_replaced.add(name)
            self.static_optional.discard(name)
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
                        hint=MEET_HINT,
                    )
                if u != dt:
                    self.vartypes[name] = (u, dloc)
                    self.changed = True
        else:
            self.vartypes[name] = (t, self.loc(node))
            self.changed = True
        slice_store.note_assignment(self, name, value)
        self.emit(ir.Assign(name, self.cast(value, self.vartypes[name][0], node), self.loc(node)))

    def once(self, value: ir.Expr, node) -> ir.Expr:
        """``value`` itself when reading it again costs nothing and changes nothing, else a
        temporary holding it: an expression used more than once is evaluated once."""
        return value if is_pure(value) else self.temp(value, node)

    def declare_temp(self, t: T.Type) -> str:
        """A fresh temporary of type ``t``: its name (one counter for every temporary)."""
        name = f"$t{len(self.temps)}"
        self.temps[name] = t
        return name

    def temp(self, value: ir.Expr, node) -> ir.Var:
        if isinstance(value.type, T.Void):
            raise self.error("this call returns nothing; it has no value", node)
        name = self.declare_temp(value.type)
        self.emit(ir.Assign(name, value, self.loc(node)))
        return ir.Var(name, value.type, self.loc(node))

    def stmt_AugAssign(self, node):
        op = self.binop_name(node.op, node)
        target = node.target
        if isinstance(target, ast.Name):
            cur = self.expr_Name(ast.copy_location(ast.Name(target.id, ast.Load()), target))
            cur = self.to_ir(cur, target)
            if isinstance(cur.type, T.Optional):  # r += 1 of an optional r: its number (None: TypeError)
                cur = self.unwrap_optional(cur, target)
            self.set_var(target.id, self.binop(op, cur, self.value(node.value), node), target)
        elif isinstance(target, ast.Subscript):
            arr, idx = self.store_target(target, views=True)
            if idx is None:  # a[1:3] += v, a[i] += v of a 2-d a: every element of the view
                self.store_view(arr, self.value(node.value), target, op)
                return
            arr = self.once(arr, target)
            idx = [self.once(i, target) for i in idx]
            cur = ir.Load(arr, idx, arr.type.dtype, self.loc(target))
            self.store(arr, idx, self.binop(op, cur, self.value(node.value), node), target)
        elif isinstance(target, ast.Attribute):
            base = self.expr(target.value)  # r.x += v
            if isinstance(base, PartialIndex):
                base = self.to_ir(base, target.value)
            if not (isinstance(base, ir.Expr) and records.is_record_ref(base.type)):
                raise self.error(f"cannot assign to attribute '{target.attr}' in a kernel", target,
                                 "assign to a variable or an array element")
            base = self.once(base, target)
            view, idx = records.target(self, base, target.attr, target)
            if idx is None:  # r.h += v of an array field
                self.store_view(view, self.value(node.value), target, op)
                return
            cur = ir.Load(view, idx, view.type.dtype, self.loc(target))
            self.store(view, idx, self.binop(op, cur, self.value(node.value), node), target)
        else:
            raise self.error(f"cannot assign to {type(target).__name__}", target)

    def store_view(self, view: ir.Expr, value: ir.Expr, node, op=None):
        """``view = value`` (``view op= value``) of a slice, row, array field or record:
        every element (a record: every field) is written."""
        self.check_writable(view.type, node)
        if not records.is_record_ref(view.type):
            slice_store.store(self, view, value, node, op)
        elif op is None and records.is_record_ref(value.type):
            records.copy(self, view, value, node)  # r.s = other_record
        else:
            what = f"'{op}=' of a record" if op else f"a {value.type} as a record"
            raise self.error(f"cannot assign {what}", node, "assign the fields one by one")

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
        if records.is_record_ref(value.type) and isinstance(at.dtype, T.Record) and len(idx) == at.ndim:
            # `a[i] = b[j]`, `sm[i] = x[j]`: a whole record (numba copies its bytes)
            records.copy(self, ir.ArrayView(arr, idx, ir.view_type(at, idx), self.loc(node)), value, node)
            return
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
        self.cond_depth += 1
        try:
            before = set(self.static_replaced)
            then = self.block(node.body)
            then_replaced, self.static_replaced = self.static_replaced, set(before)
            orelse = self.block(node.orelse)
            self.join_replaced(before, [(then, then_replaced), (orelse, self.static_replaced)])
        finally:
            self.cond_depth -= 1
        self.emit(ir.If(cond, then, orelse, self.loc(node)))

    def join_replaced(self, before: set, branches) -> None:
        """After a run-time `if`: a compile-time argument assigned in a branch is a variable
        from there on only if every branch that goes on past the `if` assigned it (`if x > 0:
        scale = 2.0; return x * scale` never reaches the join); else it is None on one path
        and a value on another -- numba's Optional, which pykern has not -- and reading it
        there is an error (``expr_Name``)."""
        going_on = [rep for body, rep in branches if not _ends(body)]
        if not going_on:
            self.static_replaced = set(before)
            return
        self.static_replaced = set.intersection(*going_on)
        self.static_optional |= set.union(*going_on) - self.static_replaced

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
        if v is not None and self.is_kernel and not isinstance(v, ast.Constant):
            # numba types a kernel's return as none, so ``return f(x)`` of a device function
            # that returns nothing is a call and a plain return there
            e = self.expr(v)
            if (isinstance(e, PyObj) and e.value is None) or isinstance(getattr(e, "type", None), (T.Void, T.NoneType)):
                if isinstance(e, ir.Expr) and not is_pure(e):
                    self.emit(ir.ExprStmt(e, self.loc(node)))
                v = None
            else:
                raise self.error(
                    "kernels cannot return a value", node, hint="write results into an output array argument"
                )
        if v is None or (isinstance(v, ast.Constant) and v.value is None):
            if self.optional_return(None, node):
                return
            if self.ret is not None and not isinstance(self.ret[0], T.Void) or self.returned_param is not None:
                what = self.ret[0] if self.returned_param is None else "array"
                raise self.error(
                    f"'{self.pyname}' returns a {what} at line {self.ret[1].line} but nothing here", node
                )
            self.ret = self.ret or (T.void, self.loc(node))
            self.emit(ir.Return(None, self.loc(node)))
            return
        if self.is_kernel:
            raise self.error(
                "kernels cannot return a value", node, hint="write results into an output array argument"
            )
        value = self.to_ir(self.expr(v), v)
        if self.optional_return(value, node):
            return
        if isinstance(value.type, T.Optional):
            value = self.unwrap_optional(value, v)
        t = value.type
        if _contains_array(t):
            self.return_array_param(v, t, node, value)
            return
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

    def optional_return(self, value, node) -> bool:
        """numba's Optional return: a device function (without a declared return type) that
        returns ``None`` (or nothing) on some paths and a number on others returns an
        ``OptionalType`` -- (value, present) -- on all of them. ``value`` is the returned
        expression, None for ``return``/``return None``. False when this return is not one."""
        if self.is_kernel or self.declared_ret is not None or self.returned_param is not None:
            return False
        rt = self.ret[0] if self.ret is not None else None
        vt = None if value is None else value.type
        if isinstance(vt, T.Optional):
            vt = vt.type
        if vt is not None and not vt.is_scalar:
            return False
        if isinstance(rt, T.Optional):
            new = rt.type if vt is None else infer.unify(rt.type, vt)
            if new is None:
                return False
        elif value is None and rt is not None and rt.is_scalar:
            new = rt  # None after numbers
        elif value is not None and isinstance(rt, T.Void) and self.returned_none:
            new = vt  # a number after None
        elif isinstance(value, ir.Expr) and isinstance(value.type, T.Optional):
            new = vt  # returns another function's optional as it is
        else:
            if value is None and rt is None:
                self.returned_none = True
            return False
        opt = T.optional(new)
        if self.ret is None or self.ret[0] != opt:
            self.ret = (opt, self.ret[1] if self.ret is not None else self.loc(node))
            self.changed = True
        loc = self.loc(node)
        if value is None:
            out = ir.TupleExpr([ir.Const(as_const_value(0, new), new, loc), ir.Const(False, T.boolean, loc)], opt, loc)
        elif isinstance(value.type, T.Optional):
            inner, present = self.optional_parts(self.once(value, node), loc)
            out = ir.TupleExpr([self.cast(inner, new, node), present], opt, loc)
        else:
            out = ir.TupleExpr([self.cast(value, new, node), ir.Const(True, T.boolean, loc)], opt, loc)
        self.emit(ir.Return(out, loc))
        return True

    # ---- raise / assert: numba's static raise (RewriteConstRaises): an Exception subclass,
    # called or not, with constant arguments; the host builds the exception from them
    def stmt_Raise(self, node):
        if node.exc is None:
            raise self.error("a bare 'raise' re-raises the exception being handled; kernels handle none", node,
                             "raise an exception class, e.g. raise ValueError('message')")
        if node.cause is not None:
            raise self.error("'raise ... from ...' is not supported in kernels", node.cause, "leave out 'from ...'")
        exc, args = node.exc, ()
        if isinstance(exc, ast.Call):
            if exc.keywords:
                raise self.error("keyword arguments of an exception are not supported in kernels", exc,
                                 "pass the arguments by position")
            args = tuple(self.exception_arg(a) for a in exc.args)
            exc = exc.func
        self.emit(ir.Raise(self.exception_class(exc), args, self.loc(node)))

    def stmt_Assert(self, node):
        args = () if node.msg is None else (self.exception_arg(node.msg),)
        fail = ir.Raise("builtins:AssertionError", args, self.loc(node))
        cond = self.cond(node.test)
        if isinstance(cond, ir.Const):
            if not cond.value:  # `assert False`: always raises (a true constant costs nothing)
                self.emit(fail)
            return
        self.emit(ir.If(cond, [], [fail], self.loc(node)))

    def exception_class(self, node) -> str:
        """``module:qualname`` of the exception class ``node`` names (the host finds the class by it)."""
        if isinstance(node, ast.Name) and self.renames.get(node.id, node.id) in self.local_names:
            raise self.error(f"cannot raise the variable '{node.id}': kernels raise an exception class named "
                             "in the code", node, "e.g. raise ValueError('message')")
        v = self.expr(node)
        cls = v.value if isinstance(v, PyObj) else None
        if isinstance(cls, BaseException):
            raise self.error(f"cannot raise the exception object '{v.name}' (numba.cuda cannot either)", node,
                             f"raise {type(cls).__name__}(...) in the kernel")
        if not (isinstance(cls, type) and issubclass(cls, Exception)):
            what = f"'{v.name}'" if isinstance(v, PyObj) else "this value"
            raise self.error(f"{what} is not an exception class; kernels can raise subclasses of Exception", node,
                             "e.g. raise ValueError('message')")
        if "<locals>" in cls.__qualname__:
            raise self.error(f"exception class '{cls.__qualname__}' is defined inside a function", node,
                             "define it at module level: the host re-creates the exception from the class's name")
        return f"{cls.__module__}:{cls.__qualname__}"

    def exception_arg(self, node):
        """The value of a constant exception argument (a literal, or a global/closure constant)."""
        try:
            value = ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            value = self._constant_name(node)
        if not _constant_exception_arg(value):
            raise self.error(f"an exception argument cannot be a {type(value).__name__}", node,
                             "use a string or number constant")
        return value

    def _constant_name(self, node):
        bad = self.error("an exception argument must be a constant: only the exception's class and constant "
                         "arguments reach the host (as in numba.cuda)", node,
                         "use a constant message, e.g. raise ValueError('index out of range')")
        if not isinstance(node, (ast.Name, ast.Attribute)):
            raise bad
        if isinstance(node, ast.Name) and self.renames.get(node.id, node.id) in self.local_names:
            raise bad
        v = self.expr(node)
        if isinstance(v, ir.Const):
            return v.value
        if not isinstance(v, PyObj):
            raise bad
        value = v.value
        return value.item() if isinstance(value, np.generic) else value  # a numpy scalar constant


def _constant_exception_arg(value) -> bool:
    if isinstance(value, tuple):
        return all(_constant_exception_arg(v) for v in value)
    return isinstance(value, _EXCEPTION_ARG_TYPES)


def _returned_param(lw, v, t):
    """The index of the parameter ``return v`` returns unchanged, or None."""
    if isinstance(t, T.Array) and isinstance(v, ast.Name) and v.id in lw.params \
            and v.id not in lw.assigned_params_here:
        return lw.params.index(v.id)
    return None


def _slices(index) -> bool:
    """The subscript ``index`` has a slice item (``a[1:3]``, ``a[i, :]``)."""
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(i, ast.Slice) for i in items)


def _contains_array(t: T.Type) -> bool:
    if isinstance(t, T.Array):
        return True
    return isinstance(t, T.Tuple) and any(_contains_array(e) for e in t.elems)
