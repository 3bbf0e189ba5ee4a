"""The IR verifier: checks every rule of ``ir.py``'s docstring before codegen
sees a module, so that an ill-typed module is a ``CompileError("internal
error: ...")`` instead of an LLVM abort.

Example::

    >>> from pykern.frontend import compile_ir, parse_signature
    >>> def inc(x):
    ...     x[0] += 1
    >>> module = compile_ir(inc, parse_signature("void(int32[::1])")[1])
    >>> verify_module(module)          # raises CompileError on a broken module
    >>> problems(module.kernel, module)  # or list the problems of one function
    []
"""

from __future__ import annotations

import numpy as np

from pykern.core.errors import CompileError
from pykern.frontend import infer
from pykern.frontend import ir
from pykern.frontend import types as T


class _Bad(Exception):
    def __init__(self, msg, loc):
        super().__init__(msg)
        self.msg = msg
        self.loc = loc


_ARRAY_ATTRS = ("shape", "strides", "size", "ndim", "address")


class _Checker:
    def __init__(self, fn: ir.Function, module: ir.Module | None):
        self.fn = fn
        self.module = module
        self.loop_depth = 0

    def bad(self, msg, node=None):
        raise _Bad(msg, getattr(node, "loc", None) or self.fn.loc)

    # -------------------------------------------------------------- function

    def check(self):
        fn = self.fn
        if not isinstance(fn.locals, dict):
            self.bad("locals is not a dict")
        if not isinstance(fn.return_type, T.Type):
            self.bad(f"return type {fn.return_type!r} is not a Type")
        if fn.is_kernel and not isinstance(fn.return_type, T.Void):
            self.bad(f"kernel '{fn.name}' returns {fn.return_type}, kernels must return void")
        names = set()
        for p in fn.params:
            if p.name in names:
                self.bad(f"duplicate parameter '{p.name}'")
            names.add(p.name)
            if fn.locals.get(p.name) != p.type:
                self.bad(f"parameter '{p.name}: {p.type}' is not declared with that type in locals")
            if not isinstance(p.type, T.Type) or isinstance(p.type, T.Void):
                self.bad(f"parameter '{p.name}' has bad type {p.type!r}")
        for n, t in fn.locals.items():
            if not isinstance(t, T.Type) or isinstance(t, T.Void):
                self.bad(f"local '{n}' has bad type {t!r}")
        self.block(fn.body)
        if not isinstance(fn.return_type, T.Void) and not ir.always_returns(fn.body):
            self.bad(f"non-void function '{fn.name}' may reach its end without a return")

    # ------------------------------------------------------------ statements

    def block(self, stmts):
        if not isinstance(stmts, list):
            self.bad(f"statement block is a {type(stmts).__name__}, not a list")
        for s in stmts:
            self.stmt(s)

    def stmt(self, s):
        if isinstance(s, ir.Assign):
            if s.target not in self.fn.locals:
                self.bad(f"assignment to undeclared variable '{s.target}'", s)
            self.expr(s.value)
            if s.value.type != self.fn.locals[s.target]:
                self.bad(f"assigning a {s.value.type} to '{s.target}' declared {self.fn.locals[s.target]}", s)
        elif isinstance(s, ir.Store):
            at = self.array_access(s.array, s.indices, s)
            if at.readonly or at.space == "const":
                self.bad(f"store into read-only array {at}", s)
            self.expr(s.value)
            if s.value.type != at.dtype:
                self.bad(f"storing a {s.value.type} into a {at} (no Cast inserted)", s)
        elif isinstance(s, ir.ExprStmt):
            self.expr(s.value)
        elif isinstance(s, ir.If):
            self.cond(s.cond, s)
            self.block(s.then)
            self.block(s.orelse)
        elif isinstance(s, ir.While):
            self.cond(s.cond, s)
            self.loop(s.body)
        elif isinstance(s, ir.ForRange):
            vt = self.fn.locals.get(s.var)
            if vt is None:
                self.bad(f"loop variable '{s.var}' is not declared", s)
            if not isinstance(vt, T.Integer):
                self.bad(f"loop variable '{s.var}' is {vt}, not an integer", s)
            for what, e in (("start", s.start), ("stop", s.stop), ("step", s.step)):
                self.expr(e)
                if e.type != vt:
                    self.bad(f"range {what} is {e.type} but loop variable '{s.var}' is {vt}", s)
            self.loop(s.body)
        elif isinstance(s, (ir.Break, ir.Continue)):
            if not self.loop_depth:
                self.bad(f"{type(s).__name__.lower()} outside a loop", s)
        elif isinstance(s, ir.Return):
            rt = self.fn.return_type
            if s.value is None:
                if not isinstance(rt, T.Void):
                    self.bad(f"return without a value in a function returning {rt}", s)
            else:
                self.expr(s.value)
                if isinstance(rt, T.Void):
                    self.bad(f"return of a {s.value.type} in a void function", s)
                if s.value.type != rt:
                    self.bad(f"return of a {s.value.type} in a function returning {rt}", s)
        elif isinstance(s, ir.Raise):
            if not isinstance(s.cls, str) or ":" not in s.cls or not isinstance(s.args, tuple):
                self.bad(f"raise of {s.cls!r} with arguments {s.args!r} (want 'module:qualname' and a tuple)", s)
        else:
            self.bad(f"unknown statement {type(s).__name__}", s)

    def loop(self, body):
        self.loop_depth += 1
        try:
            self.block(body)
        finally:
            self.loop_depth -= 1

    def cond(self, e, s):
        self.expr(e)
        if e.type != T.boolean:
            self.bad(f"condition is {e.type}, not boolean", s)

    def array_access(self, arr, indices, node) -> T.Array:
        self.expr(arr)
        at = arr.type
        if not isinstance(at, T.Array):
            self.bad(f"indexing a {at}, not an array", node)
        if not isinstance(indices, list) or len(indices) != at.ndim:
            self.bad(f"{at.ndim}-d array indexed with {len(indices) if isinstance(indices, list) else indices!r} indices", node)
        for i in indices:
            self.expr(i)
            if i.type != T.int64:
                self.bad(f"index of type {i.type}, indices must be int64 (Cast missing)", node)
        return at

    # ----------------------------------------------------------- expressions

    def expr(self, e):
        if not isinstance(e, ir.Expr):
            self.bad(f"{e!r} is not an IR expression")
        t = getattr(e, "type", None)
        if not isinstance(t, T.Type):
            self.bad(f"{type(e).__name__} has no type", e)
        m = getattr(self, "e_" + type(e).__name__, None)
        if m is None:
            self.bad(f"unknown expression {type(e).__name__}", e)
        m(e)

    def e_Const(self, e):
        t, v = e.type, e.value
        if isinstance(t, T.Boolean):
            ok = isinstance(v, (bool, np.bool_))
        elif isinstance(t, T.Integer):
            ok = isinstance(v, int) and not isinstance(v, bool) and t.min <= v <= t.max
        elif isinstance(t, T.Float):
            ok = isinstance(v, float)
        elif isinstance(t, T.Complex):
            ok = isinstance(v, complex)
        else:
            ok = False
        if not ok:
            self.bad(f"constant {v!r} does not fit type {t}", e)

    def e_Var(self, e):
        if e.name not in self.fn.locals:
            self.bad(f"variable '{e.name}' is not declared", e)
        if self.fn.locals[e.name] != e.type:
            self.bad(f"variable '{e.name}' read as {e.type} but declared {self.fn.locals[e.name]}", e)

    def check_op(self, e, known, what: str, *operands):
        """The operator of ``e`` is one of ``known``; its ``operands`` verify."""
        if e.op not in known:
            self.bad(f"unknown {what} {e.op!r}", e)
        for x in operands:
            self.expr(x)

    def operand(self, e, x, cls, complaint) -> T.Type:
        """The type of ``e``'s operand ``x``, which verifies and is a ``cls``; ``complaint(x.type)`` reports one that is not."""
        self.expr(x)
        if not isinstance(x.type, cls):
            self.bad(complaint(x.type), e)
        return x.type

    def values_of_type(self, e, values, t: T.Type, complaint):
        """Each of ``values`` verifies and has type ``t``; ``complaint(v.type)`` reports one that has not."""
        for v in values:
            self.expr(v)
            if v.type != t:
                self.bad(complaint(v.type), e)

    def e_BinOp(self, e):
        self.check_op(e, ir.BINOPS, "binary operator", e.lhs, e.rhs)
        lt, rt = e.lhs.type, e.rhs.type
        if lt != rt or e.type != lt:
            self.bad(f"BinOp {e.op} on {lt} and {rt} typed {e.type} (operands must be cast to one type)", e)
        if not lt.is_scalar:
            self.bad(f"BinOp {e.op} on non-scalar {lt}", e)
        if isinstance(lt, T.Complex) and e.op not in ("+", "-", "*", "/", "**"):
            self.bad(f"BinOp {e.op} on {lt}", e)
        if e.op == "/" and not isinstance(lt, (T.Float, T.Complex)):
            self.bad(f"'/' on {lt}: ints must be cast to float first", e)
        if e.op in ("&", "|", "^") and isinstance(lt, T.Float):
            self.bad(f"bitwise {e.op} on {lt}", e)
        if e.op in ("<<", ">>") and not isinstance(lt, T.Integer):
            self.bad(f"shift on {lt}", e)
        if e.op in ("+", "-", "*", "//", "%", "**") and isinstance(lt, T.Boolean):
            self.bad(f"arithmetic {e.op} on boolean", e)

    def e_UnaryOp(self, e):
        self.check_op(e, ir.UNARYOPS, "unary operator", e.operand)
        t = e.operand.type
        if e.type != t:
            self.bad(f"unary {e.op} of {t} typed {e.type}", e)
        if e.op == "not" and t != T.boolean:
            self.bad(f"'not' of {t} (cast to boolean first)", e)
        if e.op == "~" and not isinstance(t, T.Integer):
            self.bad(f"'~' of {t}", e)
        if e.op == "-" and not isinstance(t, (T.Integer, T.Float, T.Complex)):
            self.bad(f"'-' of {t}", e)

    def e_Compare(self, e):
        self.check_op(e, ir.CMPOPS, "comparison", e.lhs, e.rhs)
        if e.lhs.type != e.rhs.type or not e.lhs.type.is_scalar:
            self.bad(f"comparing {e.lhs.type} with {e.rhs.type} (cast to one scalar type first)", e)
        if e.type != T.boolean:
            self.bad("comparison not typed boolean", e)

    def e_BoolOp(self, e):
        self.check_op(e, ("and", "or"), "boolean operator")
        if len(e.values) < 2:
            self.bad(f"'{e.op}' with {len(e.values)} operand(s)", e)
        self.values_of_type(e, e.values, T.boolean, lambda vt: f"'{e.op}' operand of type {vt} (cast to boolean first)")
        if e.type != T.boolean:
            self.bad(f"'{e.op}' not typed boolean", e)

    def e_IfExp(self, e):
        self.expr(e.cond)
        if e.cond.type != T.boolean:
            self.bad(f"conditional expression test is {e.cond.type}", e)
        self.expr(e.then)
        self.expr(e.orelse)
        if not (e.then.type == e.orelse.type == e.type):
            self.bad(f"conditional expression branches {e.then.type}/{e.orelse.type} typed {e.type}", e)

    def e_RecordField(self, e):
        self.expr(e.value)
        vt = e.value.type
        if not (isinstance(vt, T.Array) and vt.ndim == 0 and isinstance(vt.dtype, T.Record)):
            self.bad(f"field '{e.name}' of a {vt} (records are 0-d arrays of a Record)", e)
            return
        r = ir.record_field_type(vt, e.name)
        # an array field's view may be the unaligned one of a packed record (records.field_view)
        if r is None or r[0] not in (e.type, e.type.with_(aligned=True)) or r[1] != e.offset:
            self.bad(f"record field '{e.name}' typed {e.type} at offset {e.offset}", e)

    def e_Cast(self, e):
        self.expr(e.value)
        if not (e.value.type.is_scalar and e.type.is_scalar):
            self.bad(f"cast from {e.value.type} to {e.type}: only scalars can be cast", e)

    def e_Load(self, e):
        at = self.array_access(e.array, e.indices, e)
        if isinstance(at.dtype, T.Record):
            self.bad(f"load of a whole record from {at} (records are used through views: ArrayView/RecordField)", e)
        if e.type != at.dtype:
            self.bad(f"load from {at} typed {e.type}", e)

    def e_ArrayAttr(self, e):
        at = self.operand(e, e.array, T.Array, lambda t: f".{e.attr} of a {t}")
        if e.attr not in _ARRAY_ATTRS:
            self.bad(f"unknown array attribute {e.attr!r}", e)
        if e.attr in ("shape", "strides"):
            if not isinstance(e.dim, int) or not 0 <= e.dim < at.ndim:
                self.bad(f".{e.attr}[{e.dim}] of a {at.ndim}-d array", e)
        elif e.dim is not None:
            self.bad(f".{e.attr} takes no dimension", e)
        if e.type != T.int64:
            self.bad(f".{e.attr} typed {e.type}, not int64", e)

    def e_TupleExpr(self, e):
        for x in e.elems:
            self.expr(x)
        if not isinstance(e.type, T.Tuple) or tuple(x.type for x in e.elems) != e.type.elems:
            self.bad(f"tuple of ({', '.join(str(x.type) for x in e.elems)}) typed {e.type}", e)

    def e_TupleGet(self, e):
        tt = self.operand(e, e.value, T.Tuple, lambda t: f"tuple index into a {t}")
        if not isinstance(e.index, int) or not 0 <= e.index < len(tt.elems):
            self.bad(f"tuple index {e.index!r} out of range for {tt}", e)
        if e.type != tt.elems[e.index]:
            self.bad(f"element {e.index} of {tt} typed {e.type}", e)

    def e_Call(self, e):
        funcs = self.module.functions if self.module is not None else {}
        callee = funcs.get(e.func)
        if callee is None:
            self.bad(f"call of unknown function '{e.func}'", e)
        if callee.is_kernel:
            self.bad(f"call of kernel '{e.func}'", e)
        if len(e.args) != len(callee.params):
            self.bad(f"'{e.func}' takes {len(callee.params)} arguments, got {len(e.args)}", e)
        for a, p in zip(e.args, callee.params):
            self.expr(a)
            if a.type != p.type:
                self.bad(f"argument '{p.name}' of '{e.func}' is {p.type}, got {a.type}", e)
        if e.type != callee.return_type:
            self.bad(f"call of '{e.func}' typed {e.type} but it returns {callee.return_type}", e)

    def e_ExternCall(self, e):
        if e.abi not in ("numba", "c"):
            self.bad(f"external call of '{e.symbol}' with unknown ABI {e.abi!r}", e)
        if len(e.args) != len(e.params):
            self.bad(f"external '{e.symbol}' takes {len(e.params)} arguments, got {len(e.args)}", e)
        for a, p in zip(e.args, e.params):
            self.expr(a)
            if isinstance(p, T.Array):
                if not isinstance(a.type, T.Array) or a.type.dtype != p.dtype:
                    self.bad(f"external '{e.symbol}' takes a pointer to {p.dtype}, got {a.type}", e)
            elif a.type != p or not p.is_scalar:
                self.bad(f"external '{e.symbol}' takes {p}, got {a.type}", e)
        if not (isinstance(e.type, T.Void) or e.type.is_scalar):
            self.bad(f"external '{e.symbol}' returns {e.type}: only scalars or nothing", e)

    def e_Intrinsic(self, e):
        if e.name not in ir.INTRINSICS:
            self.bad(f"unknown intrinsic {e.name!r}", e)
        for a in e.args:
            self.expr(a)
        why = infer.check_intrinsic(e.name, [a.type for a in e.args], e.type, e.attrs or {})
        if why:
            self.bad(f"intrinsic @{e.name}: {why}", e)

    def e_Atomic(self, e):
        self.check_op(e, ir.ATOMIC_OPS, "atomic op")
        at = self.array_access(e.array, e.indices, e)
        if at.readonly or at.space == "const":
            self.bad(f"atomic on read-only array {at}", e)
        want = 2 if e.op == "cas" else 1
        if len(e.values) != want:
            self.bad(f"atomic {e.op} takes {want} value(s), got {len(e.values)}", e)
        self.values_of_type(e, e.values, at.dtype, lambda vt: f"atomic {e.op} value {vt} on {at} (cast missing)")
        if e.type != at.dtype:
            self.bad(f"atomic {e.op} typed {e.type} on {at}", e)
        if e.op in ("and", "or", "xor", "inc", "dec", "cas") and not isinstance(at.dtype, T.Integer):
            self.bad(f"atomic {e.op} on {at.dtype}", e)

    def e_ArrayView(self, e):
        at = self.operand(e, e.array, T.Array, lambda t: f"view of a {t}, not an array")
        if not isinstance(e.items, list) or len(e.items) > at.ndim:
            self.bad(f"view of a {at.ndim}-d array with {e.items!r} items", e)
        for it in e.items:
            if isinstance(it, ir.Slice):
                for part in (it.start, it.stop, it.step):
                    if part is not None:
                        self.expr(part)
                        if part.type != T.int64:
                            self.bad(f"slice bound of type {part.type}, must be int64 (Cast missing)", e)
            else:
                self.expr(it)
                if it.type != T.int64:
                    self.bad(f"view index of type {it.type}, must be int64 (Cast missing)", e)
        want = ir.view_type(at, e.items)
        if e.type != want:
            self.bad(f"view of {at} typed {e.type}, expected {want}", e)

    def e_Transpose(self, e):
        at = self.operand(e, e.array, T.Array, lambda t: f"transpose of a {t}, not an array")
        if at.ndim < 2:
            self.bad(f"transpose of a {at.ndim}-d array (it is the array itself)", e)
        want = ir.transpose_type(at)
        if e.type != want:
            self.bad(f"transpose of {at} typed {e.type}, expected {want}", e)

    def e_Reinterpret(self, e):
        at = self.operand(e, e.array, T.Array, lambda t: f"reinterpretation of a {t}, not an array")
        nt = e.type
        if not isinstance(nt, T.Array) or nt.ndim != at.ndim or nt.space != at.space or nt.readonly != at.readonly \
                or nt.aligned != at.aligned and not (e.part and not nt.aligned):  # a packed record's field: unaligned
            self.bad(f"reinterpretation of {at} typed {nt}", e)
        old, new = at.dtype.nbytes, nt.dtype.nbytes
        if e.part != (nt.layout == "A" and new < old):
            self.bad(f"reinterpretation of {at} as {nt}: part={e.part} does not fit the types", e)
        if old == new or e.part:  # whole items, or a part of each
            ok = 0 <= e.offset <= old - new
        else:  # items of another size: the last axis is rescaled, so it must be contiguous
            ok = e.offset == 0 and at.layout == "C" and at.ndim > 0
        if not ok:
            self.bad(f"reinterpretation of {at} as {nt} at byte {e.offset}", e)

    def e_Reshape(self, e):
        at = self.operand(e, e.array, T.Array, lambda t: f"reshape of a {t}, not an array")
        if at.layout != "C" or at.ndim == 0:
            self.bad(f"reshape of a {at} (a C-contiguous array of one or more dimensions is needed)", e)
        self.values_of_type(e, e.shape, T.int64, lambda t: f"reshape extent of type {t}, must be int64")
        want = T.as_array(at).with_(ndim=len(e.shape), layout="C")  # carray(p, shape) of a CPointer: an array
        if e.type != want or not e.shape:
            self.bad(f"reshape of {at} typed {e.type}, expected {want}", e)

    def e_Slice(self, e):
        self.bad("a slice outside an array view", e)

    def e_AllocArray(self, e):
        t = e.type
        if e.space not in ("shared", "local"):
            self.bad(f"array allocated in space {e.space!r}", e)
        if not isinstance(e.shape, tuple) or not all(isinstance(s, int) and s >= 0 for s in e.shape):
            self.bad(f"bad allocation shape {e.shape!r}", e)
        if not isinstance(t, T.Array) or t.space != e.space or t.layout != "C" or t.ndim != len(e.shape):
            self.bad(f"allocation of shape {e.shape} in {e.space} typed {t}", e)
        if 0 in e.shape and (e.space != "shared" or e.shape != (0,)):
            self.bad(f"zero-size {e.space} array {e.shape} (only shared (0,) is dynamic)", e)
        if not e.name:
            self.bad("allocation without a name", e)

    def e_GlobalArray(self, e):
        t = e.type
        if not (isinstance(t, T.Array) and t.space == "global" and t.ndim == len(e.shape) == len(e.strides)):
            self.bad(f"global array of shape {e.shape} typed {t}", e)
        if not isinstance(e.address, int) or not 0 <= e.address < 1 << 64:
            self.bad(f"global array address {e.address!r}", e)

    def e_ConstArray(self, e):
        t = e.type
        if not (isinstance(t, T.Array) and t.space == "const" and t.readonly and t.layout == "C"):
            self.bad(f"const array typed {t}", e)
        if t.ndim != len(e.shape):
            self.bad(f"const array of shape {e.shape} typed {t}", e)
        n = int(np.prod(e.shape, dtype=np.int64)) if e.shape else 1
        if len(e.data) != n * t.dtype.nbytes:
            self.bad(f"const array data has {len(e.data)} bytes, shape {e.shape} of {t.dtype} needs {n * t.dtype.nbytes}", e)


def problems(fn: ir.Function, module: ir.Module | None = None) -> list:
    """The first rule ``fn`` breaks, as a list of ``(message, loc)`` (empty if fine)."""
    try:
        _Checker(fn, module).check()
    except _Bad as b:
        return [(b.msg, b.loc)]
    except Exception as e:  # a malformed node (missing field, wrong kind)
        return [(f"malformed IR: {type(e).__name__}: {e}", fn.loc)]
    return []


def verify_function(fn: ir.Function, module: ir.Module | None = None) -> None:
    """Raise ``CompileError("internal error: ...")`` if ``fn`` breaks an IR rule."""
    for msg, loc in problems(fn, module):
        raise CompileError(f"internal error: invalid IR in '{fn.name}': {msg}", loc,
                           hint="this is a pykern bug; please report it with the kernel's source")


def verify_module(module: ir.Module) -> None:
    """Verify the kernel and every device function of ``module``."""
    if not isinstance(module.kernel, ir.Function):
        raise CompileError("internal error: module has no kernel function")
    for name, fn in module.functions.items():
        if fn.name != name:
            raise CompileError(f"internal error: function registered as '{name}' is named '{fn.name}'")
        verify_function(fn, module)
    verify_function(module.kernel, module)
