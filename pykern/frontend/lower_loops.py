"""Loops: ``while``, ``for`` over ``range``, arrays, tuples, ``enumerate``/``zip``,
``np.ndindex``/``np.ndenumerate`` and ``literal_unroll``, and ``for``/``while`` ``else`` blocks; the ``FunctionLowerer`` mixin
``LoopLowering``. Every loop but ``while`` becomes an ``ir.ForRange`` (over a hidden
int64 index when the loop is not over ``range``)."""

from __future__ import annotations

import ast
import builtins

import numpy as np

from pykern.lang import stubs
from pykern.frontend import infer
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls import NOT_STATIC, static_value
from pykern.frontend.lower_index import selectable_tuple
from pykern.frontend.lower_stmts import MEET_HINT
from pykern.frontend.values import ArrayFlat, PartialIndex, PyObj, weakval


class LoopLowering:
    """``stmt_While``/``stmt_For`` and the loop forms they lower to."""

    def stmt_While(self, node):
        flag = self.loop_else_begin(node)
        saved, self.out = self.out, []
        try:
            cond = self.cond(node.test)
            pre = self.out  # statements the test needs (a temporary, a checked optional)
        finally:
            self.out = saved
        self.loop_depth += 1
        self.else_flags.append(flag)
        try:
            body = self.block(node.body)
        finally:
            self.loop_depth -= 1
            self.else_flags.pop()
        loc = self.loc(node)
        if pre:
            # they belong to every test, not only the first: the loop tests at its top
            # (this break is no `break` of the user's: a while/else's else still runs)
            exit_ = ir.If(ir.UnaryOp("not", cond, T.boolean, loc), [ir.Break(loc)], [], loc)
            body, cond = pre + [exit_] + body, ir.Const(True, T.boolean, loc)
        self.emit(ir.While(cond, body, loc))
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
        if isinstance(node.iter, ast.List):
            # `for j in [1, 2, 4, 8]`: a literal only iterated cannot be changed, so it is a tuple
            node = ast.copy_location(ast.For(node.target, ast.copy_location(
                ast.Tuple(node.iter.elts, ast.Load()), node.iter), node.body, node.orelse, None), node)
        it = node.iter
        fobj = self.expr(it.func) if isinstance(it, ast.Call) else None
        unroll = isinstance(fobj, PyObj) and _is_literal_unroll(fobj.value)
        # a tuple may turn out to hold tuples, whose loop is unrolled (for_each): give it the flag
        # that a `break` in an unrolled copy sets (a name is read here only to see its type)
        maybe_unrolled = isinstance(it, ast.Tuple) or (
            isinstance(it, ast.Name) and _uniform_tuples(getattr(self.expr(it), "type", None)))
        flag = self.loop_else_begin(node, force=unroll or maybe_unrolled)
        self.else_flags.append(flag)
        try:
            if unroll:
                self.for_unroll(node, flag)
            elif isinstance(fobj, PyObj) and any(fobj.value is f for f in _ITERATORS):
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
        # numba's loop variable type (its Range template), from the arguments as written
        lt = infer.range_loop_type([(a.type, weakval(a)) for a in args])
        if len(args) == 1:
            args = [self.const(0, T.int64, node, weak=True), args[0], self.const(1, T.int64, node, weak=True)]
        elif len(args) == 2:
            args.append(self.const(1, T.int64, node, weak=True))
        if isinstance(args[2], ir.Const) and args[2].value == 0:
            raise self.error("range() step must not be zero", it.args[2])
        var = node.target.id
        self.assigned_so_far.add(var)
        if var in self.vartypes:
            dt, dloc = self.vartypes[var]
            u = infer.unify(dt, lt)
            if not isinstance(u, (T.Integer, T.Float, T.Complex)):
                raise self.error(
                    f"loop variable '{var}' is an integer here but a {dt} at line {dloc.line}",
                    node.target,
                    hint=MEET_HINT,
                )
            if u != dt:
                self.vartypes[var] = (u, dloc)
                self.changed = True
        else:
            self.vartypes[var] = (lt, self.loc(node.target))
            self.changed = True
        vt = self.vartypes[var][0]
        # a float value of the variable meets the loop's where paths join (`for t in range(n): ...
        # else: t = 0.5`): numba widens the variable to float there; the loop counts in an integer
        counter, ct = (var, vt) if isinstance(vt, T.Integer) else (f"$r{node.lineno}_{node.col_offset}", lt)
        start, stop, step = (self.cast(a, ct, an) for a, an in zip(args, [it] * 3))
        self.loop_depth += 1
        try:
            body = self.block(node.body)
        finally:
            self.loop_depth -= 1
        if counter != var:
            self.vartypes[counter] = (ct, self.loc(node))
            loc = self.loc(node.target)
            body.insert(0, ir.Assign(var, self.cast(ir.Var(counter, ct, loc), vt, node.target), loc))
        self.emit(ir.ForRange(counter, start, stop, step, body, self.loc(node)))

    def iterated_value(self, it):
        """The value a ``for`` loop iterates over (``it`` where it is not a flat array); a 0-d
        array or a raw pointer, which have no length, is a CompileError."""
        seq = self.value(it)
        t = seq.type
        if isinstance(t, T.Array):
            if t.ndim == 0:
                raise self.error("iteration over a 0-d array", it, "index it with a[()]")
            if isinstance(t, T.CPointer):
                raise self.error(f"iteration over a raw pointer ({t}): it has no length", it,
                                 "loop over range(n) with n passed as an argument")
        return seq

    def for_each(self, node):
        """``for x in seq`` over a 1-d array or a tuple of one scalar type: a loop over
        a hidden index ``for $i in range(len(seq)): x = seq[$i]``."""
        it = node.iter
        flat = self.flat_array(it)
        if flat is not None:
            self.index_loop(node, *self.flat_seq(flat, it))
            return
        seq = self.iterated_value(it)
        t = seq.type
        if isinstance(t, T.Tuple):
            if _uniform_tuples(t) and self.else_flags and self.else_flags[-1]:
                # numba iterates any UniTuple; tuples of tuples (vectors, namedtuples) have no
                # run-time element select, so the body is copied per element (as literal_unroll)
                seq = self.once(seq, it)
                items = [self.tuple_get(seq, k, it) for k in range(len(t.elems))]
                self.unroll_body(node, self.else_flags[-1], items, it)
                return
            if t.elems and not selectable_tuple(t):
                raise self.error(
                    f"kernels can loop over tuples of one scalar or array type, not {t}", it,
                    "loop over a tuple of mixed types with literal_unroll(t), or index it by constants",
                )
        elif not isinstance(t, T.Array):
            raise self.error(
                f"kernels can loop over range(...), 1-d arrays and tuples, not a {t}",
                it,
                hint="write for i in range(n): ...",
            )
        seq = self.once(seq, it)
        loc = self.loc(node)
        if isinstance(t, T.Array):
            stop = ir.ArrayAttr(seq, "shape", 0, T.int64, loc)
        else:
            stop = ir.Const(len(t.elems), T.int64, loc)

        def elem(index):
            if isinstance(t, T.Array) and (t.ndim > 1 or isinstance(t.dtype, T.Record)):
                return ir.ArrayView(seq, [index], ir.view_type(t, [index]), loc)  # rows (and records) are views
            if isinstance(t, T.Array):
                return ir.Load(seq, [index], t.dtype, loc)
            return self.select_tuple_elem(seq, index, node) if t.elems else None

        self.index_loop(node, stop, elem)

    def for_iter(self, node):
        """``for i, x in enumerate(seq)`` / ``for a, b in zip(s, t)`` (nested freely, over
        arrays, tuples of one scalar type and ``range``): a hidden int64 index loop."""
        length, elem = self.iter_seq(node.iter)
        self.index_loop(node, length, elem)

    def index_loop(self, node, length: ir.Expr, elem):
        """The loop of ``node`` over a hidden int64 index ``$i`` in ``range(length)``; its
        body starts by assigning ``elem($i)`` to the loop target (unless that is None)."""
        ivar = f"$i{node.lineno}_{node.col_offset}"
        self.vartypes.setdefault(ivar, (T.int64, self.loc(node)))
        loc = self.loc(node)
        self.loop_depth += 1
        saved = self.out
        try:
            self.out = []
            e = elem(ir.Var(ivar, T.int64, loc))
            if e is not None:
                self.assign_expr(node.target, e, node)
            head = self.out
        finally:
            self.out = saved
        try:
            body = head + self.block(node.body)
        finally:
            self.loop_depth -= 1
        self.emit(ir.ForRange(ivar, ir.Const(0, T.int64, loc), length, ir.Const(1, T.int64, loc), body, loc))

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
                start = self.once(self.cast(start, i64, start_node), start_node)

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
        if fv is np.ndindex or fv is np.ndenumerate or fv is np.nditer:
            return self.iter_nd(it, fv)
        if fv is builtins.range:
            if it.keywords or not 1 <= len(it.args) <= 3:
                raise self.error("range() takes 1 to 3 positional arguments", it)
            args = []
            for a in it.args:
                v = self.value(a)
                if not isinstance(v.type, (T.Integer, T.Boolean)):
                    raise self.error(f"range() arguments must be integers, not {v.type}", a)
                args.append(self.once(self.cast(v, i64, a), a))
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
        flat = self.flat_array(it)
        if flat is not None:
            return self.flat_seq(flat, it)
        seq = self.iterated_value(it)
        t = seq.type
        if isinstance(t, T.Array):
            seq = self.once(seq, it)

            def elem(i):
                if t.ndim > 1:
                    return ir.ArrayView(seq, [i], ir.view_type(t, [i]), loc)
                return ir.Load(seq, [i], t.dtype, loc)

            return ir.ArrayAttr(seq, "shape", 0, i64, loc), elem
        if isinstance(t, T.Tuple):
            if not selectable_tuple(t):
                raise self.error(
                    f"kernels can loop over tuples of one scalar or array type, not {t}", it,
                    "loop over a tuple of mixed types with literal_unroll(t)",
                )
            seq = self.once(seq, it)
            return ir.Const(len(t.elems), i64, loc), lambda i: self.select_tuple_elem(seq, i, it)
        raise self.error(f"kernels can iterate over range(), arrays, tuples, enumerate() and zip(), not a {t}", it)

    def unravel(self, i, dims, loc):
        """The C-order index tuple (int64s) of flat index ``i`` over extents ``dims``."""
        i64 = T.int64
        parts, inner = [], None
        for d in reversed(dims):  # the last index varies fastest
            q = i if inner is None else ir.BinOp("//", i, inner, i64, loc)
            parts.append(ir.BinOp("%", q, d, i64, loc))
            inner = d if inner is None else ir.BinOp("*", inner, d, i64, loc)
        parts.reverse()
        return parts

    def element_at(self, arr, parts, loc):
        """``arr[parts]`` of in-range indices: a scalar, or a view of a record (numba's reference)."""
        if isinstance(arr.type.dtype, T.Record):
            return ir.ArrayView(arr, parts, ir.view_type(arr.type, parts), loc)
        return ir.Load(arr, parts, arr.type.dtype, loc)

    def flat_array(self, it):
        """The array of ``it`` when it is ``a.flat``, else None."""
        if isinstance(it, ast.Attribute) and it.attr == "flat":
            v = self.expr(it)
            if isinstance(v, PyObj) and isinstance(v.value, ArrayFlat):
                return v.value.array
        return None

    def flat_seq(self, arr, node):
        """``(length, elem)`` of ``a.flat``: every element in C order (numba's flat iterator)."""
        loc = self.loc(node)
        dims = [self.once(ir.ArrayAttr(arr, "shape", d, T.int64, loc), node) for d in range(arr.type.ndim)]

        def elem(i):
            return self.element_at(arr, [self.once(p, node) for p in self.unravel(i, dims, loc)], loc)

        return ir.ArrayAttr(arr, "size", None, T.int64, loc), elem

    def iter_nd(self, it, fv):
        """``np.ndindex(shape)`` (or ``np.ndindex(3, 2)``) and ``np.ndenumerate(a)``: one hidden
        index over the product of the extents, split into the C-order index tuple (int64s, as
        numba's intp); ``ndenumerate`` pairs it with the element."""
        loc = self.loc(it)
        i64 = T.int64
        name = "np." + fv.__name__
        if it.keywords:
            raise self.error(f"{name}() takes no keyword arguments in kernels", it)
        arr = None
        if fv is np.ndenumerate or fv is np.nditer:
            if len(it.args) != 1 or isinstance(it.args[0], (ast.Tuple, ast.List)):
                hint = "iterate over one array (numba's np.nditer takes one too)" if fv is np.nditer else None
                raise self.error(f"{name}() takes one array", it, hint)
            arr = self.value(it.args[0])
            if not isinstance(arr.type, T.Array) or isinstance(arr.type, T.CPointer):
                raise self.error(f"{name}() takes an array, not a {arr.type}", it.args[0])
            arr = self.once(arr, it)
            dims = [ir.ArrayAttr(arr, "shape", d, i64, loc) for d in range(arr.type.ndim)]
        else:
            vals = []
            for a in it.args:  # np.ndindex(shape), np.ndindex(3, 2) or np.ndindex(*shape)
                v = self.value(a.value if isinstance(a, ast.Starred) else a)
                if isinstance(v.type, T.Tuple) and (isinstance(a, ast.Starred) or len(it.args) == 1):
                    tup = self.once(v, a)
                    vals += [self.tuple_get(tup, k, a) for k in range(len(tup.type.elems))]
                else:
                    vals.append(v)
            dims = []
            for v in vals:
                if not isinstance(v.type, (T.Integer, T.Boolean)):
                    raise self.error(f"np.ndindex() extents must be integers, not {v.type}", it)
                dims.append(self.cast(v, i64, it))
        zero = ir.Const(0, i64, loc)
        # a negative extent iterates nothing (numpy refuses it; numba's loop never runs)
        dims = [self.once(ir.IfExp(ir.Compare("<", d, zero, T.boolean, loc), zero, d, i64, loc), it) for d in dims]
        n = ir.Const(1, i64, loc)
        for d in dims:
            n = ir.BinOp("*", n, d, i64, loc)
        n = self.once(n, it)

        def elem(i):
            if fv is np.nditer:
                # numba's nditer: a writable 0-d view of each element, in memory order for an
                # F-contiguous array, else in C order (numpy's K order differs for strided views)
                fortran = arr.type.layout == "F"
                parts = self.unravel(i, dims[::-1] if fortran else dims, loc)
                parts = [self.once(p, it) for p in (parts[::-1] if fortran else parts)]
                return ir.ArrayView(arr, parts, ir.view_type(arr.type, parts), loc)
            parts = self.unravel(i, dims, loc)
            if arr is None:
                return ir.TupleExpr(parts, T.Tuple((i64,) * len(parts)), loc)
            # ndenumerate: (index, element); the index is read twice, so it is evaluated once
            parts = [self.once(p, it) for p in parts]
            idx = ir.TupleExpr(parts, T.Tuple((i64,) * len(parts)), loc)
            e = self.element_at(arr, parts, loc)
            return ir.TupleExpr([idx, e], T.Tuple((idx.type, e.type)), loc)

        return n, elem

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
            items = [self.once(x, arg) if isinstance(x, ir.Expr) else x for x in items]
        elif isinstance(v, PyObj) and isinstance(v.value, tuple):
            items = [PyObj(x, f"{v.name}[{k}]") for k, x in enumerate(v.value)]
        else:
            seq = self.to_ir(v, arg)
            if not isinstance(seq.type, T.Tuple):
                # numba: literal_unroll of anything else is an ordinary loop
                self.for_each(ast.copy_location(ast.For(node.target, arg, node.body, [], None), node))
                return
            seq = self.once(seq, arg)
            items = [self.tuple_get(seq, k, arg) for k in range(len(seq.type.elems))]
        self.unroll_body(node, flag, items, arg)

    def unroll_body(self, node, flag, items, arg):
        """The loop body once per element of ``items`` (IR values or compile-time ``PyObj``s)."""
        if not isinstance(node.target, ast.Name):
            raise self.error("the loop variable of an unrolled loop must be a plain name", node.target)
        name = node.target.id
        loc = self.loc(node)
        saved_static, saved_rename = dict(self.static), dict(self.renames)
        self.loop_depth += 1
        try:
            for k, item in enumerate(items):
                sv = static_value(item) if isinstance(item, PyObj) else NOT_STATIC
                saved = self.out
                self.out = []
                try:
                    if sv is not NOT_STATIC and not isinstance(sv, int):
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


def _uniform_tuples(t) -> bool:
    """A tuple whose elements are tuples of one type (numba's UniTuple of tuples)."""
    return (isinstance(t, T.Tuple) and bool(t.elems) and isinstance(t.elems[0], T.Tuple)
            and all(e == t.elems[0] for e in t.elems))


def _is_literal_unroll(f) -> bool:
    """pykern.literal_unroll, or numba's (``from numba import literal_unroll``)."""
    return f is stubs.literal_unroll or (
        getattr(f, "__name__", None) == "literal_unroll" and str(getattr(f, "__module__", "")).startswith("numba")
    )


#: iterables lowered by ``iter_seq`` (one hidden index loop)
_ITERATORS = (builtins.enumerate, builtins.zip, np.ndindex, np.ndenumerate, np.nditer)
