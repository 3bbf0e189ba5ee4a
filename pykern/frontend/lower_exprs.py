"""Expressions: names, constants, tuples, attributes, operators, comparisons,
conditionals and calls; the ``FunctionLowerer`` mixin ``ExpressionLowering``.

``expr`` returns any walk value (``ir.Expr``, ``PyObj``, ``PartialIndex``); ``value``
an ``ir.Expr``. Typing rules are ``infer``'s; calls are ``calls``'; subscripts are in
``lower_index``."""

from __future__ import annotations

import ast
import enum
import operator
import types as pytypes

import numpy as np

from pykern.lang import stubs
from pykern.frontend import calls
from pykern.frontend.calls import externals
from pykern.frontend import datetimes
from pykern.frontend import infer
from pykern.frontend import ir
from pykern.frontend import local_defs
from pykern.frontend import records
from pykern.frontend import types as T
from pykern.frontend.values import PYOPS, ArrayCTypes, ArrayFlat, BoundMethod, NeedType, PartialIndex, PyObj, as_const_value, fold_cast, is_pure, is_weak, weakval

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

_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!=", ast.Gt: ">", ast.GtE: ">="}


_UNSUPPORTED_EXPRS = {
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
    "Slice": ("slices are not supported in kernels", "index single elements, e.g. a[i, j]"),
}


def _describe_static(v) -> str:
    return "None" if v is None else f"the compile-time value {getattr(v, '__name__', None) or v!r}"


class ExpressionLowering:
    """One ``expr_<AST class>`` method per expression, and the operators they share."""

    def expr(self, node):
        return self._visit("expr_", _UNSUPPORTED_EXPRS, "expressions", node)

    def value(self, node) -> ir.Expr:
        v = self.to_ir(self.expr(node), node)
        return self.unwrap_optional(v, node) if isinstance(v.type, T.Optional) else v

    def unwrap_optional(self, v: ir.Expr, node) -> ir.Expr:
        """An optional used as a number: its value. A None there is numba's TypeError
        ("expected T, got None"), raised before the statement: the thread stops (as a
        ``raise`` does; under debug=True the host raises it)."""
        loc = self.loc(node)
        value, present = self.optional_parts(self.once(v, node), loc)
        absent = ir.UnaryOp("not", present, T.boolean, loc)
        self.emit(ir.If(absent, [ir.Raise("builtins:TypeError", (f"expected {value.type}, got None",), loc)], [], loc))
        return value

    @staticmethod
    def optional_parts(v: ir.Expr, loc) -> tuple:
        """``(value, present)`` of an optional ``v`` (``T.Optional`` is that tuple); both read
        ``v``, so give a ``once`` value when both are used."""
        return ir.TupleGet(v, 0, v.type.type, loc), ir.TupleGet(v, 1, T.boolean, loc)

    def to_ir(self, v, node) -> ir.Expr:
        if isinstance(v, ir.Expr):
            return v
        if isinstance(v, PartialIndex):
            return self.array_view(v.array, v.indices, v.node)
        return self.materialize(v, node)

    def expr_Constant(self, node):
        v = node.value
        if isinstance(v, (bool, int, float)):
            return self.python_number(v, node)
        if isinstance(v, (str, bytes)):
            raise self.error("strings are not supported in kernels", node)
        if v is None:
            # a compile-time value: a device-function argument (``f(x, None)``) or ``x is None``
            return PyObj(None, "None")
        if isinstance(v, complex):
            return self.const(v, T.complex128, node, weak=True)
        raise self.error(f"the constant {v!r} is not supported in kernels", node)

    def expr_Name(self, node):
        if node.id in self.temps:  # a temporary named by an argument expand_starred made
            return ir.Var(node.id, self.temps[node.id], self.loc(node))
        name = self.renames.get(node.id, node.id)
        alias = self.__dict__.get("group_aliases", {}).get(name)
        if alias is not None:  # g = cuda.cg.this_grid()
            return alias
        if name in self.static_optional:
            raise self.error(f"'{name}' is {_describe_static(self.static[name])} on one path to here and assigned "
                             "a value on another (numba's Optional type, which pykern does not have)", node,
                             hint=f"assign '{name}' on every path (an `else:` branch), or use another name")
        if name in self.static and name not in self.static_replaced:
            return self._static_arg(self.static[name], node, name)
        if name in self.local_names:
            entry = self.vartypes.get(name)
            if entry is None:
                raise NeedType(name, node)
            if name not in self.assigned_so_far and not self.loop_depth:
                if self.skipped:
                    raise NeedType(name, node)  # its assignment may be in a statement skipped this pass
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
        return PyObj(_frozen(value), name)

    def _static_arg(self, v, node, name):
        """A compile-time argument's value: an int literal is a typed constant, usable as a
        shape (and an int tuple a tuple of them), a bool literal a constant `if` prunes."""
        loc = self.loc(node)
        if isinstance(v, enum.Enum):  # an IntEnum member stays one: `a is b` tells it from an int
            return PyObj(v, name)
        if isinstance(v, bool):
            return ir.Const(v, T.boolean, loc)
        if isinstance(v, int):
            c = ir.Const(v, infer.literal_type(v), loc)
            c._literal = True  # still a literal when passed on to another device function
            return c
        if isinstance(v, tuple):
            elems = [self._static_arg(x, node, name) for x in v]
            return ir.TupleExpr(elems, T.Tuple(tuple(e.type for e in elems)), loc)
        return PyObj(v, name)

    def expr_Lambda(self, node):
        """``lambda x: x + 1`` in a kernel: a nested function (``local_defs``), as numba compiles it."""
        return PyObj(local_defs.define(self, local_defs.lambda_def(node)), "lambda")

    def expr_Tuple(self, node):
        elems = [self.value(e) for e in node.elts]
        for e, n in zip(elems, node.elts):
            if isinstance(e.type, T.Void):
                raise self.error("a call that returns nothing cannot be a tuple element", n)
        elems = [ir.Const(e.value, e.type, e.loc) if is_weak(e) else e for e in elems]
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
        if isinstance(base, PyObj) and attr in ("T", "transpose") and isinstance(base.value, np.ndarray):
            base = self.materialize(base, node.value)  # TABLE.T: a view of the frozen constant
        if isinstance(base, PyObj):
            return self.pyobj_attr(base, attr, node)
        t = base.type
        loc = self.loc(node)
        if records.is_record_ref(t) and t.dtype.field(attr) is not None:
            return records.read(self, base, attr, node)  # r.x
        if isinstance(t, T.CPointer) and attr not in ("dtype", "ndim"):
            raise self.error(f"a raw pointer ({t}) has no attribute '{attr}': it can only be indexed", node,
                             "pass its length as another argument")
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
            if attr == "T":
                return self.transpose(base, node)
            if attr == "ctypes":
                return PyObj(ArrayCTypes(base), "ctypes")
            if attr == "flat":
                return PyObj(ArrayFlat(self.once(base, node)), "flat")
            if attr in ("itemsize", "nbytes") and not isinstance(t, T.CPointer):
                size = t.dtype.nbytes
                if attr == "itemsize":
                    return self.const(size, T.int64, node, weak=True)
                return ir.BinOp("*", ir.ArrayAttr(base, "size", None, T.int64, loc), ir.Const(size, T.int64, loc), T.int64, loc)
            if calls.has_method("array", attr):
                return PyObj(BoundMethod(base, attr), f"{attr}")
            if attr in ("real", "imag") and isinstance(t.dtype, T.Complex):
                ft = t.dtype.component  # numpy's views of the parts, sharing the memory
                return ir.Reinterpret(base, ft.nbytes if attr == "imag" else 0, True,
                                      ir.reinterpret_type(t, ft, True), loc)
            field = t.dtype.field(attr) if isinstance(t.dtype, T.Record) else None
            if field is not None:  # numba's record-array field view (np.recarray's a.x): strided, shared memory
                ft, off = field
                if not ft.is_scalar:
                    raise self.error(f"the field '{attr}' is a {ft}: only number fields of a record array can be "
                                     "viewed as arrays in kernels", node, f"index first: a[i].{attr}")
                al = T.natural_align(ft)
                aligned = t.aligned and off % al == 0 and t.dtype.align >= al
                return ir.Reinterpret(base, off, True, ir.reinterpret_type(t, ft, True).with_(aligned=aligned), loc)
            raise self.error(
                f"arrays in kernels have no attribute '{attr}'", node,
                "supported: .shape, .size, .ndim, .strides, .dtype, .itemsize, .nbytes, .flat, .T, .transpose(), .view(dtype), .reshape(), .fill(v), .item() (0-d), "
                ".ctypes.data, .real and .imag of complex arrays, fields of record arrays (a.x), .sum() .prod() .min() .max() .mean() .var() .std() .all() .any() "
                ".argmin() .argmax()"
            )
        if isinstance(t, T.Tuple):
            if attr in t.names:  # a namedtuple field
                return self.tuple_get(base, t.names.index(attr), node)
            raise self.error(f"tuples have no attribute '{attr}'", node)
        if calls.has_method(calls.method_kind(t), attr):
            return PyObj(BoundMethod(base, attr), f"{attr}")
        if attr in ("real", "imag") and t.is_scalar:
            return calls.real_imag(self, base, attr, node)
        raise self.error(f"a {t} value has no attribute '{attr}'", node)

    def transpose(self, base: ir.Expr, node) -> ir.Expr:
        """``base.T`` of an array: the array itself when 0-d or 1-d (numpy), else a
        ``Transpose`` view with the axes reversed."""
        if base.type.ndim <= 1:
            return base
        return ir.Transpose(base, ir.transpose_type(base.type), self.loc(node))

    def pyobj_attr(self, base: PyObj, attr: str, node):
        v = base.value
        full = f"{base.name}.{attr}" if base.name else attr
        if isinstance(v, stubs.GroupStub):
            return calls.group_attr(self, v, attr, node)
        if isinstance(v, ArrayCTypes):
            if attr != "data":
                raise self.error(f"a.ctypes.{attr} is not supported in kernels", node, "a.ctypes.data is")
            loc = self.loc(node)
            return ir.Cast(ir.ArrayAttr(v.array, "address", None, T.int64, loc), T.uint64, loc)
        if isinstance(v, stubs.Dim3Stub):
            if attr not in ("x", "y", "z"):
                raise self.error(f"{base.name} has no attribute '{attr}'", node, "use .x, .y or .z")
            return ir.Intrinsic(v.intrinsic, [], T.int32, {"axis": "xyz".index(attr)}, self.loc(node))
        if isinstance(v, np.ndarray):
            if attr in ("shape", "size", "ndim", "strides"):
                return PyObj(tuple(getattr(v, attr)) if attr in ("shape", "strides") else int(getattr(v, attr)), full)
            if attr == "dtype":
                return PyObj(v.dtype, full)
            if attr == "copy":
                return PyObj(BoundMethod(self.materialize(base, node.value), attr), full)
            raise self.error(f"global array '{base.name}': attribute '{attr}' is not supported in kernels", node)
        if isinstance(v, (pytypes.ModuleType, stubs.Namespace)) or (isinstance(v, type) and v.__module__ in ("math", "numpy")):
            try:
                child = getattr(v, attr)
            except AttributeError:
                what = "module" if isinstance(v, pytypes.ModuleType) else "namespace"
                raise self.error(f"{what} '{base.name}' has no attribute '{attr}'", node) from None
            return PyObj(_frozen(child), full)
        if isinstance(v, type) and issubclass(v, enum.Enum):
            try:
                return PyObj(v[attr], full)  # Color.RED: a compile-time constant
            except KeyError:
                raise self.error(f"enum '{base.name}' has no member '{attr}'", node) from None
        if isinstance(v, enum.Enum) and attr in ("value", "name"):
            return PyObj(getattr(v, attr), full)
        if isinstance(v, tuple) and attr in (getattr(type(v), "_fields", None) or ()):
            return PyObj(getattr(v, attr), full)
        if isinstance(v, np.void) and v.dtype.names is not None:
            # a global record (np.rec.array(...)[0]): its fields are constants, as numba freezes it
            if attr not in v.dtype.names:
                raise self.error(f"the record '{base.name}' has no field '{attr}'", node,
                                 f"its fields: {', '.join(v.dtype.names)}")
            return PyObj(v[attr], full)
        if getattr(v, "__pykern_device__", False) or isinstance(v, stubs.Stub):
            raise self.error(f"'{base.name}' has no attribute '{attr}' usable in kernels", node)
        if externals.is_from_buffer_of(v, attr):  # cffi's ffi.from_buffer(array)
            return PyObj(getattr(v, attr), full)
        raise self.error(
            f"attribute access on '{base.name}' (a {type(v).__name__}) is not supported in kernels",
            node,
            hint="kernels can read attributes of modules (math.pi) and of arrays (a.shape)",
        )

    def binop_name(self, op, node) -> str:
        name = _BINOPS.get(type(op))
        if name is None:
            raise self.error(f"operator {type(op).__name__} is not supported in kernels", node)
        return name

    def expr_BinOp(self, node):
        op = self.binop_name(node.op, node)
        return self.binop(op, self.value(node.left), self.value(node.right), node)

    def binop(self, op: str, lhs: ir.Expr, rhs: ir.Expr, node) -> ir.Expr:
        if T.is_datetime(lhs.type) or T.is_datetime(rhs.type):
            return datetimes.binop(self, op, lhs, rhs, node)
        if is_weak(lhs) and is_weak(rhs):
            folded = self.fold(op, lhs.value, rhs.value, node)
            if folded is not None:
                return folded
            # Python raises where the kernel has a result: computed at run time, numba's types
            lhs, rhs = (ir.Const(v.value, v.type, v.loc) for v in (lhs, rhs))
        if op == "**" and getattr(node, "pk_ufunc", None) is None and calls.is_float_int_power(lhs, rhs):
            return calls.float_int_power(self, lhs, rhs, node)
        if op == "+" and isinstance(lhs.type, T.Tuple) and isinstance(rhs.type, T.Tuple):
            # numba's tuple concatenation: ``a.shape + (1,)``
            elems = self._tuple_elems(lhs, node) + self._tuple_elems(rhs, node)
            return ir.TupleExpr(elems, T.Tuple(tuple(e.type for e in elems)), self.loc(node))
        try:
            opt, rt = infer.binop_types(op, lhs.type, weakval(lhs), rhs.type, weakval(rhs),
                                        ufunc=getattr(node, "pk_ufunc", None))
        except infer.InferError as e:
            raise self.error(e.msg, node, e.hint) from None
        if op == "/" and isinstance(opt, T.Complex) and getattr(node, "pk_ufunc", None) is None:
            return calls.complex_div(self, self.cast(lhs, opt, node), self.cast(rhs, opt, node), node)
        if op == "**" and isinstance(opt, T.Complex):
            return calls.complex_pow(self, self.cast(lhs, opt, node), self.cast(rhs, opt, node), node)
        if isinstance(opt, T.Boolean) and op in infer.BOOL_LOOP_OPS:  # np.add(True, True) is True
            op = infer.BOOL_LOOP_OPS[op]
        return ir.BinOp(op, self.cast(lhs, opt, node), self.cast(rhs, opt, node), rt, self.loc(node))

    def expr_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            return self.negate(self.cond(node.operand), node)
        v = self.value(node.operand)
        t = v.type
        if not t.is_scalar:
            raise self.error(f"bad operand type for unary operator: {t}", node)
        loc = self.loc(node)
        # np.negative(uint8) keeps uint8 (numpy's loop), of a boolean is int8; -uint8 is numba's uint64
        by_numba = getattr(node, "pk_ufunc", None) is None
        if not by_numba and not is_weak(v) and t != T.float16:
            uf = {ast.UAdd: np.positive, ast.USub: np.negative, ast.Invert: np.invert}[type(node.op)]
            try:
                ((t,), _) = infer.ufunc_types(uf, [(t, None)], f"np.{uf.__name__}")
            except infer.InferError as e:
                raise self.error(e.msg, node, e.hint) from None
            v = self.cast(v, t, node)
        elif isinstance(node.op, (ast.UAdd, ast.USub)) and isinstance(t, T.NPTimedelta):
            # numpy's (and numba's) -timedelta is a timedelta of the same unit; NaT stays NaT
            return v if isinstance(node.op, ast.UAdd) else ir.UnaryOp("-", v, t, loc)
        elif isinstance(node.op, ast.USub) and type(t) is T.Integer and not is_weak(v):
            # numba negates in the operand's type, then widens: -uint8(5) is 251, -int8(-128) is -128
            if isinstance(v, ir.Const):
                neg = ir.Const(as_const_value(fold_cast(-v.value, T.int64, t), t), t, loc)
            else:
                neg = ir.UnaryOp("-", v, t, loc)
            return self.cast(neg, infer.nbep1_unary(t), node)
        elif isinstance(node.op, (ast.UAdd, ast.USub)) and (not is_weak(v) or isinstance(t, T.Boolean)):
            t = infer.nbep1_unary(t)
            v = self.cast(v, t, node)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.USub):
            if is_weak(v):
                return self.fold("-", 0, v.value, node) if not isinstance(v.value, float) else self.const(-v.value, T.float64, node, weak=True)
            if isinstance(v, ir.Const):
                return ir.Const(as_const_value(fold_cast(-v.value, T.int64 if isinstance(t, T.Integer) else t, t), t), t, loc)
            return ir.UnaryOp("-", v, t, loc)
        if isinstance(node.op, ast.Invert):
            if isinstance(t, T.Boolean):
                return ir.UnaryOp("not", v, T.boolean, loc)
            if not isinstance(t, T.Integer):
                raise self.error(f"bad operand type for ~: {t}", node, "~ needs an integer")
            if is_weak(v):
                return self.const(~v.value, t, node, weak=True)
            # numba inverts in the operand's type, then widens: ~uint8(5) is 250
            inv = ir.UnaryOp("~", v, t, loc)
            return self.cast(inv, infer.nbep1_unary(t), node) if by_numba else inv
        raise self.error(f"unary operator {type(node.op).__name__} is not supported", node)

    def cond(self, node) -> ir.Expr:
        """A condition as a boolean expression (Python truthiness). A compile-time None
        (an optional argument left out or given None) is false, and an ``and``/``or``
        stops at an operand known at compile time to decide it, so the rest -- which may
        use the None (``x is not None and x > 3``) -- is never typed, as numba prunes it."""
        if isinstance(node, ast.BoolOp):
            op = "and" if isinstance(node.op, ast.And) else "or"
            vals, pres = [], []
            for n in node.values:
                v, pre = self.guarded_value(n, self.cond) if vals else (self.cond(n), [])
                vals.append(v)
                pres.append(pre)
                if isinstance(vals[-1], ir.Const) and bool(vals[-1].value) == (op == "or"):
                    break
            if any(pres):
                return self.short_circuit(op, vals, pres, node)
            return self.make_boolop(op, vals, node)
        v = self.expr(node)
        if (isinstance(v, PyObj) and v.value is None) or isinstance(getattr(v, "type", None), T.NoneType):
            if isinstance(v, ir.Expr) and not is_pure(v):
                raise self.error("the truth value of a call's None result is not supported", node)
            return ir.Const(False, T.boolean, self.loc(node))
        v = self.to_ir(v, node)
        if isinstance(v.type, T.Optional):  # numba: None is false, else the value's truth
            loc = self.loc(node)
            value, present = self.optional_parts(self.once(v, node), loc)
            return ir.BoolOp("and", [present, self.cast(value, T.boolean, node)], T.boolean, loc)
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

    def guarded_value(self, node, lower=None) -> tuple:
        """``(value, statements)``: ``node`` lowered (by ``lower``, else ``value``) with the
        statements it needs kept apart, for an operand evaluated only on some paths (the right
        of ``and``, a branch of ``x if c else y``)."""
        saved, self.out = self.out, []
        try:
            return (lower or self.value)(node), self.out
        finally:
            self.out = saved

    def short_circuit(self, op: str, vals: list, pres: list, node) -> ir.Var:
        """``a and b and c`` whose later operands need statements: a boolean temporary set by
        nested ifs, each operand's statements inside the test of the ones before it."""
        loc = self.loc(node)
        name = self.declare_temp(T.boolean)
        r = ir.Var(name, T.boolean, loc)
        test = r if op == "and" else ir.UnaryOp("not", r, T.boolean, loc)
        inner: list = []
        for v, pre in zip(reversed(vals[1:]), reversed(pres[1:])):
            inner = [*pre, ir.Assign(name, v, loc), *([ir.If(test, inner, [], loc)] if inner else [])]
        self.emit(ir.Assign(name, vals[0], loc))
        self.emit(ir.If(test, inner, [], loc))
        return r

    def expr_BoolOp(self, node):
        op = "and" if isinstance(node.op, ast.And) else "or"
        values, first = list(node.values), None
        while len(values) > 1:  # leading compile-time operands: Python's answer, the rest untyped if it decides
            first = self.value(values[0])
            if not (isinstance(first, ir.Const) and first.type == T.boolean):
                break
            if bool(first.value) == (op == "or"):
                return first
            values.pop(0)
            first = None
        vals, pres = [first if first is not None else self.value(values[0])], [[]]
        for v in values[1:]:
            val, pre = self.guarded_value(v)
            vals.append(val)
            pres.append(pre)
        if any(pres):
            # an operand needs statements (a checked optional, a temporary): they run only
            # when the operands before it did not decide, as Python evaluates them
            if not all(v.type == T.boolean for v in vals):
                raise self.error(f"'{op}' of non-boolean values that need statements is not supported", node,
                                 "compare them (x != 0, x is not None) or assign them to variables first")
            return self.short_circuit(op, vals, pres, node)
        if all(v.type == T.boolean for v in vals):
            return self.make_boolop(op, vals, node)
        # Python returns an operand: a and b == (b if a else a)
        for v, n in zip(vals, values):
            if not v.type.is_scalar:
                raise self.error(f"cannot use a {v.type} with '{op}'", n)
            if not is_pure(v):
                raise self.error(
                    f"'{op}' of non-boolean values with side effects is not supported",
                    n,
                    hint="assign the value to a variable first, or compare it (x != 0)",
                )
        t, w = vals[0].type, weakval(vals[0])
        for v in vals[1:]:
            t = infer.common_type(t, w, v.type, weakval(v))
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
        folded = self._enum_compare(node)
        if folded is not None:
            return folded
        if len(node.ops) == 1 and isinstance(node.ops[0], (ast.Is, ast.IsNot)):
            return self._is_none(node)
        for op in node.ops:
            if type(op) not in _CMPOPS and type(op) not in (ast.In, ast.NotIn):
                what = {ast.Is: "is", ast.IsNot: "is not"}.get(type(op), type(op).__name__)
                raise self.error(f"'{what}' comparisons are not supported in kernels", node, "compare numbers with == != < <= > >=")
        operands = [self.value(node.left)] + [self.value(c) for c in node.comparators]
        comps = []
        for k, (op, rnode) in enumerate(zip(node.ops, node.comparators)):
            name = _CMPOPS.get(type(op)) or ("in" if isinstance(op, ast.In) else "not in")
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

    def _enum_compare(self, node):
        """``a == b``, ``a is b`` ... of two Enum members, or ``==``/``!=`` of strings, known at
        compile time: Python's answer (members of different enums differ even with equal
        values; ``MODE == "fast"`` of a global string), or None."""
        ops = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not}
        sides = [node.left] + node.comparators
        if len(node.ops) != 1 or type(node.ops[0]) not in ops or not all(map(_names_a_constant, sides)):
            return None
        vals = [PyObj(n.value, repr(n.value)) if isinstance(n, ast.Constant) else self.expr(n) for n in sides]
        if not all(isinstance(v, PyObj) for v in vals):
            return None
        kinds = [enum.Enum if isinstance(v.value, enum.Enum) else type(v.value) for v in vals]
        if kinds[0] not in (enum.Enum, str, bytes) or kinds[1] not in (enum.Enum, str, bytes):
            return None
        if kinds[0] is not enum.Enum and isinstance(node.ops[0], (ast.Is, ast.IsNot)):
            return None  # Python's `is` of strings depends on interning
        return self.const(bool(ops[type(node.ops[0])](vals[0].value, vals[1].value)), T.boolean, node)

    def _is_none(self, node):
        """``x is None`` / ``x is not None``, decided at compile time as numba does for optional
        arguments: only a parameter given ``None`` (or left at a ``None`` default) is None, and
        the dead branch is pruned (a typed value is never None)."""
        sides = [self.expr(node.left), self.expr(node.comparators[0])]
        # a None argument's value (also inside a tuple argument: t[1], p.scale) has numba's none type
        nones = [(isinstance(v, PyObj) and v.value is None) or isinstance(getattr(v, "type", None), T.NoneType)
                 for v in sides]
        optionals = [isinstance(getattr(v, "type", None), T.Optional) for v in sides]
        if any(optionals) and any(nones):  # a run-time answer: is the optional's value present?
            v = self.to_ir(sides[optionals.index(True)], node)
            present = self.optional_parts(v, self.loc(node))[1]
            return present if isinstance(node.ops[0], ast.IsNot) else \
                ir.UnaryOp("not", present, T.boolean, self.loc(node))
        if not any(nones):
            folded = self._is_bool_literal(node, sides)
            if folded is not None:
                return folded
            what = "is not" if isinstance(node.ops[0], ast.IsNot) else "is"
            raise self.error(f"'{what}' comparisons are supported in kernels only with None, True or False", node,
                             "compare numbers with == != < <= > >=")
        for v, n in zip(sides, (node.left, node.comparators[0])):
            if isinstance(v, ir.Expr) and not is_pure(v):
                raise self.error("the operand of 'is None' has side effects", n, "assign it to a variable first")
        same = all(nones)
        return self.const(same if isinstance(node.ops[0], ast.Is) else not same, T.boolean, node)

    def _is_bool_literal(self, node, sides):
        """``x is True`` / ``x is not False``...: numba compares a boolean with the literal's value,
        and any other type is never the literal (``1 is True`` is False, as in Python); or None."""
        lits = [isinstance(v, ir.Const) and type(v.value) is bool and isinstance(n, ast.Constant)
                for v, n in zip(sides, (node.left, node.comparators[0]))]
        if not any(lits):
            return None
        other = sides[1] if lits[0] else sides[0]
        is_not = isinstance(node.ops[0], ast.IsNot)
        if not isinstance(getattr(other, "type", None), T.Boolean):
            return self.const(is_not, T.boolean, node)
        return self.compare("!=" if is_not else "==", sides[0], sides[1], node)

    def compare(self, op: str, lhs: ir.Expr, rhs: ir.Expr, node) -> ir.Expr:
        if op in ("in", "not in"):
            return self._contains(op, lhs, rhs, node)
        if isinstance(lhs.type, T.Tuple) and isinstance(rhs.type, T.Tuple):
            return self._tuple_compare(op, lhs, rhs, node)
        if T.is_datetime(lhs.type) or T.is_datetime(rhs.type):
            return datetimes.compare(self, op, lhs, rhs, node)
        if op not in ("==", "!=") and (isinstance(lhs.type, T.Complex) or isinstance(rhs.type, T.Complex)):
            if getattr(node, "pk_numpy_order", False):  # np.less(z, w): numpy orders complex numbers
                return calls.complex_order(self, op, lhs, rhs, node)
            raise self.error(f"'{op}' is not defined for complex numbers", node, "compare abs(z) or z.real")
        if is_weak(lhs) and is_weak(rhs):
            return ir.Const(bool(PYOPS[op](lhs.value, rhs.value)), T.boolean, self.loc(node))
        try:
            ct = infer.compare_type(lhs.type, weakval(lhs), rhs.type, weakval(rhs))
        except infer.InferError as e:
            raise self.error(e.msg, node, e.hint) from None
        return ir.Compare(op, self.cast(lhs, ct, node), self.cast(rhs, ct, node), T.boolean, self.loc(node))

    def _tuple_compare(self, op: str, lhs: ir.Expr, rhs: ir.Expr, node) -> ir.Expr:
        """Tuples compare as numba's (and Python's) do: ``==`` element by element (tuples of
        different lengths differ), orderings lexicographically -- the first unequal pair decides,
        else the shorter tuple is the smaller."""
        ls, rs = self._tuple_elems(lhs, node), self._tuple_elems(rhs, node)
        loc = self.loc(node)
        if op in ("==", "!="):
            if len(ls) != len(rs):
                return self.const(op == "!=", T.boolean, node)
            eqs = [self.compare("==", a, b, node) for a, b in zip(ls, rs)]
            same = self.make_boolop("and", eqs, node) if eqs else self.const(True, T.boolean, node)
            return same if op == "==" else self.negate(same, node)
        result = self.const(bool(PYOPS[op](len(ls), len(rs))), T.boolean, node)
        for a, b in reversed(list(zip(ls, rs))):
            # a pair that differs decides with the operator itself (NaN != NaN decides False)
            result = ir.IfExp(self.compare("==", a, b, node), result, self.compare(op, a, b, node), T.boolean, loc)
        return result

    def _contains(self, op: str, item: ir.Expr, seq: ir.Expr, node) -> ir.Expr:
        """``x in (1, 3, 5)``: numba's ``in`` of a tuple, True when an element ``== x`` (the
        elements are compared in order and the first equal one decides)."""
        if not isinstance(seq.type, T.Tuple):
            raise self.error(f"'{op}' is supported in kernels only with a tuple on the right, not {seq.type}", node,
                             "compare with each value, e.g. x == a or x == b")
        if not is_pure(item):
            item = self.temp(item, node)
        eqs = [self.compare("==", item, e, node) for e in self._tuple_elems(seq, node)]
        found = self.make_boolop("or", eqs, node) if eqs else self.const(False, T.boolean, node)
        return found if op == "in" else self.negate(found, node)

    def negate(self, c: ir.Expr, node) -> ir.Expr:
        """``not c`` of a boolean ``c``, folded when ``c`` is a constant."""
        if isinstance(c, ir.Const):
            return ir.Const(not c.value, T.boolean, self.loc(node))
        return ir.UnaryOp("not", c, T.boolean, self.loc(node))

    def _tuple_elems(self, v: ir.Expr, node) -> list:
        if isinstance(v, ir.TupleExpr) and all(map(is_pure, v.elems)):
            return list(v.elems)
        if not is_pure(v):  # its elements are read more than once: evaluate it once
            v = self.temp(v, node)
        return [ir.TupleGet(v, k, et, v.loc) for k, et in enumerate(v.type.elems)]

    def expr_NamedExpr(self, node):
        """``(v := x[i]) > 0.5``: the value is assigned to the variable where it is evaluated
        (in a ``while`` test, on every test) and is the expression's value."""
        value = self.value(node.value)
        if not isinstance(value, ir.Const):
            value = self.temp(value, node)
        self.set_var(node.target.id, value, node.target)
        return value

    def expr_IfExp(self, node):
        cond = self.cond(node.test)
        if isinstance(cond, ir.Const):
            return self.expr(node.body if cond.value else node.orelse)
        branches = (node.body, node.orelse)
        # each branch keeps the statements it needs (a checked optional, a temporary) apart:
        # they run on its path only, as Python evaluates only the branch taken
        sides = [self.guarded_value(n, self.branch_value) for n in branches]
        if any(_is_none(v) or isinstance(v.type, T.Optional) for v, _ in sides):
            # ``r if c else -1`` with an optional ``r`` (or a None branch) is an optional, as
            # numba's join of the branches is: the branch not taken is never unwrapped
            t = T.optional(self.optional_join_type([v for v, _ in sides], node))
            sides = [(part, pre + more) for (v, pre), n in zip(sides, branches)
                     for part, more in [self.guarded_value(n, lambda n, v=v: self.as_optional(v, t, n))]]
        else:
            t = None
        (a, pa), (b, pb) = sides
        if t is None and a.type.is_scalar and b.type.is_scalar:
            t = infer.join_type([(a.type, weakval(a)), (b.type, weakval(b))])
        elif t is None:
            t = infer.unify(a.type, b.type)
            if t is None:
                raise self.error(f"the two branches of a conditional expression have types {a.type} and {b.type}", node)
        if not (pa or pb):
            return ir.IfExp(cond, self.cast(a, t, node), self.cast(b, t, node), t, self.loc(node))
        loc = self.loc(node)
        name = self.declare_temp(t)
        self.emit(ir.If(cond, [*pa, ir.Assign(name, self.cast(a, t, node), loc)],
                        [*pb, ir.Assign(name, self.cast(b, t, node), loc)], loc))
        return ir.Var(name, t, loc)

    def branch_value(self, node):
        """A branch of ``x if c else y``: its IR, an optional kept optional, or the None."""
        v = self.expr(node)
        return v if _is_none(v) else self.to_ir(v, node)

    def optional_join_type(self, sides: list, node) -> T.Type:
        """The number type of ``x if c else y`` when a branch is None or an optional."""
        inner = [None if _is_none(v) else v.type.type if isinstance(v.type, T.Optional) else v.type for v in sides]
        if not all(t is None or t.is_scalar for t in inner) or all(t is None for t in inner):
            raise self.error("a conditional expression of None (or an optional) and a non-number is not supported",
                             node, hint="give both branches numbers")
        if None in inner:
            return inner[1 - inner.index(None)]
        weak = [None if isinstance(v.type, T.Optional) else weakval(v) for v in sides]
        return infer.join_type([(inner[0], weak[0]), (inner[1], weak[1])])

    def as_optional(self, v, opt: T.Optional, node) -> ir.Expr:
        """``v`` (None, an optional or a number) as a value of the optional type ``opt``."""
        loc, t = self.loc(node), opt.type
        if _is_none(v):
            return ir.TupleExpr([ir.Const(as_const_value(0, t), t, loc), ir.Const(False, T.boolean, loc)], opt, loc)
        if v.type == opt:
            return v
        if isinstance(v.type, T.Optional):
            value, present = self.optional_parts(self.once(v, node), loc)
            return ir.TupleExpr([self.cast(value, t, node), present], opt, loc)
        return ir.TupleExpr([self.cast(v, t, node), ir.Const(True, T.boolean, loc)], opt, loc)

    def expr_Call(self, node):
        if any(isinstance(a, ast.Starred) for a in node.args):
            node = self.expand_starred(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("conjugate", "conj"):
            m = calls.number_method(self, node)  # z.conjugate() of a number
            if m is not None:
                return m
        fobj = self.expr(node.func)
        if not isinstance(fobj, PyObj):
            t = fobj.array.type if isinstance(fobj, PartialIndex) else fobj.type
            raise self.error(f"a {t} value is not callable", node)
        return calls.lower_call(self, fobj, node)


    def expand_starred(self, node):
        """``f(x, *t)`` of a tuple ``t``: the call ``f(x, t[0], t[1], ...)``, ``t`` evaluated
        once (a temporary the new argument nodes name)."""
        args = []
        for a in node.args:
            if not isinstance(a, ast.Starred):
                args.append(a)
                continue
            v = self.expr(a.value)
            if isinstance(v, PyObj) and isinstance(v.value, tuple):
                n, base = len(v.value), a.value  # a frozen tuple: its items by constant index
            else:
                v = self.to_ir(v, a.value)
                if not isinstance(v.type, T.Tuple):
                    raise self.error(f"*{ast.unparse(a.value)} of a {v.type}: only tuples can be unpacked into "
                                     "call arguments", a)
                n, tmp = len(v.type.elems), self.temp(v, a)
                base = ast.copy_location(ast.Name(id=tmp.name, ctx=ast.Load()), a)
            args += [ast.copy_location(ast.Subscript(value=base, slice=ast.Constant(k), ctx=ast.Load()), a)
                     for k in range(n)]
        return ast.copy_location(ast.Call(func=node.func, args=args, keywords=node.keywords), node)


def _frozen(value):
    """A global or closure list is read as the tuple of its items when the kernel is
    compiled (a constant, as numba freezes globals; its cache key has the items)."""
    return tuple(value) if type(value) is list else value


def _names_a_constant(node) -> bool:
    """``x``, ``Color.red``, ``Color["red"]``, ``"a"``: an expression that may name a
    compile-time value and costs nothing to look at twice."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (str, bytes))
    if isinstance(node, ast.Attribute):
        return _names_a_constant(node.value)
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and _names_a_constant(node.value)
    return isinstance(node, ast.Name)


def _is_none(v) -> bool:
    return isinstance(v, PyObj) and v.value is None
