"""What the AST walk passes around besides IR values, and constant folding.

A value while lowering is an ``ir.Expr`` (a typed kernel value), a ``PyObj`` (a
compile-time Python object: a module, a stub, a dtype, a frozen global), a
``PartialIndex`` (``a[i]`` of a 2-d array, only valid when indexed again) or a
``BoundMethod``. Python number literals are *weak* constants (NEP 50): they adopt
the type of the other operand. ``ValueLowering`` turns compile-time values into IR
(``materialize``), converts (``cast``, folding constants) and folds Python
arithmetic on weak constants; ``calls`` uses the same helpers.
"""

from __future__ import annotations

import ast
import copy
import enum
import math
import operator
import types as pytypes
import warnings

import numpy as np

from pykern.lang import stubs
from pykern.core.errors import CompileError
from pykern.frontend import infer
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.fingerprint import cuda_array_interface
from pykern.frontend.typeof import typeof


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


class BoundMethod:
    """``x.bit_count`` of a kernel value, only valid when called."""

    def __init__(self, value, attr: str):
        self.value = value
        self.attr = attr


class ArrayCTypes:
    """``a.ctypes`` of a kernel array: only its ``.data`` (the address, numba's uintp) is read."""

    def __init__(self, array):
        self.array = array


class ArrayFlat:
    """``a.flat`` of a kernel array: iterated (``for v in a.flat``) or indexed (``a.flat[k]``) in
    C order over the logical elements, as numba's flat iterator."""

    def __init__(self, array):
        self.array = array


class PartialIndex:
    """``a[i]`` of an n-d array with fewer than n indices: only ``a[i][j]`` is allowed."""

    def __init__(self, array: ir.Expr, indices: list, node):
        self.array = array
        self.indices = indices
        self.node = node


NOT_CONST = object()


def _literal_node(x):
    if isinstance(x, tuple):
        return ast.Tuple([_literal_node(e) for e in x], ast.Load())
    return ast.Constant(x)

# what a constant local's value may be built of (`N = 100`, `shape = (TPB, 2 * TPB)`, `M = N // 2`)
_CONST_NODES = (ast.Constant, ast.Name, ast.Load, ast.Tuple, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop)


class NeedType(Exception):
    """A local variable was read before any assignment gave it a type (this pass)."""

    def __init__(self, name: str, node):
        self.name = name
        self.node = node


class NeedReturnType(NeedType):
    """A function called itself before any of its returns was typed (this pass)."""


PYOPS = {
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


# intrinsics that may be evaluated twice or dropped (``is_pure``)
PURE_INTRINSICS = frozenset(n for n, op in ir.INTRINSICS.items() if not op.effects)


#: float operations Python refuses where IEEE arithmetic (and so the kernel, in numba.cuda's
#: numpy error model) gives inf or nan: 1.0 / 0.0, 0.0 ** -1.0, 10.0 ** 400.0, 1.0 % 0.0
_IEEE_OPS = {"/": np.true_divide, "//": np.floor_divide, "%": np.remainder, "**": np.power}


def ieee_fold(op: str, a, b):
    """``a op b`` in float64 as the kernel computes it, for the float constants Python's
    arithmetic raises on; None where no float is involved (1 // 0 stays an error)."""
    f = _IEEE_OPS.get(op)
    if f is None or not (isinstance(a, float) or isinstance(b, float)) or isinstance(a, complex) \
            or isinstance(b, complex):
        return None
    try:
        with np.errstate(all="ignore"):
            return float(f(np.float64(a), np.float64(b)))
    except OverflowError:  # an int operand beyond float64
        return None


def is_weak(e) -> bool:
    """A Python number literal (NEP 50's weak scalar): it adopts the other operand's type."""
    return isinstance(e, ir.Const) and getattr(e, "_weak", False)


def weakval(e):
    """The value of a weak literal, else None: what ``infer``'s promotion rules take."""
    return e.value if is_weak(e) else None


def is_pure(e: ir.Expr) -> bool:
    """No side effects and cheap enough to evaluate twice."""
    if isinstance(e, (ir.Const, ir.Var, ir.ArrayAttr, ir.ConstArray)):
        return True
    if isinstance(e, (ir.Call, ir.ExternCall, ir.Atomic, ir.AllocArray)):
        return False
    if isinstance(e, ir.Intrinsic) and e.name not in PURE_INTRINSICS:
        return False
    return all(is_pure(c) for c in e.children())


def as_const_value(value, t: T.Type):
    """Normalise a Python value to what ``Const(value, t)`` holds."""
    if isinstance(t, T.Complex):  # each part rounded to the component type
        c = complex(value)
        return complex(as_const_value(c.real, t.component), as_const_value(c.imag, t.component))
    if isinstance(t, T.Boolean):
        return bool(value)
    if isinstance(t, T.Float):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(t.np_dtype.type(value))
    return int(value)


def fold_cast(value, src: T.Type, dst: T.Type):
    """``Cast`` semantics on a constant (numpy astype; float->int truncates, saturates)."""
    if isinstance(dst, T.Boolean):
        return value != 0
    if isinstance(dst, T.Complex):
        return as_const_value(complex(int(value) if isinstance(value, bool) else value), dst)
    if isinstance(dst, T.Float):
        return as_const_value(float(value) if not isinstance(value, bool) else float(int(value)), dst)
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


class ValueLowering:
    """``FunctionLowerer``'s compile-time values and constants: Python values as IR,
    conversions (constants folded), weak-constant arithmetic, dtype and constant arguments."""

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
            return ir.Const(as_const_value(v.item(), t), t, loc)
        if isinstance(v, tuple):
            elems = [self.materialize(PyObj(x, f"{name}[{k}]"), node) for k, x in enumerate(v)]
            elems = [ir.Const(e.value, e.type, e.loc) if is_weak(e) else e for e in elems]
            fields = getattr(type(v), "_fields", None)
            if isinstance(fields, tuple) and len(fields) == len(v):  # a namedtuple keeps its field names
                return ir.TupleExpr(elems, T.Tuple(tuple(e.type for e in elems), fields, type(v).__name__), loc)
            return ir.TupleExpr(elems, T.Tuple(tuple(e.type for e in elems)), loc)
        if isinstance(v, np.ndarray):
            return self.const_array(v, name, node)
        if cuda_array_interface(v) is not None:
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
        c = ir.Const(as_const_value(value, t), t, self.loc(node) if node is not None else None)
        if weak:
            c._weak = True
        return c

    def cast(self, e: ir.Expr, t: T.Type, node) -> ir.Expr:
        """``e`` converted to ``t`` (numpy astype); constants are folded."""
        if e.type == t:
            if is_weak(e):
                return ir.Const(e.value, e.type, e.loc)  # a typed constant from here on
            return e
        if T.is_datetime(e.type) or T.is_datetime(t):
            from pykern.frontend import datetimes

            return datetimes.cast(self, e, t, node)
        if isinstance(t, T.Optional) and (e.type.is_scalar or isinstance(e.type, T.Optional)):
            return self.to_optional(e, t, node)
        if e.type.is_scalar and t.is_scalar:
            if isinstance(e.type, T.Complex) and not isinstance(t, (T.Complex, T.Boolean)):
                raise self.error(f"cannot convert {e.type} to {t}", node,
                                 "take the part you mean: z.real, z.imag or abs(z)")
            if isinstance(e, ir.Const):
                return ir.Const(as_const_value(fold_cast(e.value, e.type, t), t), t, e.loc)
            return ir.Cast(e, t, e.loc or self.loc(node))
        if isinstance(t, T.Optional) and e.type.is_scalar:  # a number where an optional is: present
            loc = e.loc or self.loc(node)
            return ir.TupleExpr([self.cast(e, t.type, node), ir.Const(True, T.boolean, loc)], t, loc)
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

    def to_optional(self, e: ir.Expr, t: T.Optional, node) -> ir.Expr:
        """A number (present) or another optional as the optional ``t``: a variable or tuple
        element that holds an optional on one path and a number on another (numba's unify)."""
        loc = e.loc or self.loc(node)
        if isinstance(e.type, T.Optional):
            e = self.once(e, node)
            value, present = ir.TupleGet(e, 0, e.type.type, loc), ir.TupleGet(e, 1, T.boolean, loc)
        else:
            value, present = e, ir.Const(True, T.boolean, loc)
        return ir.TupleExpr([self.cast(value, t.type, node), present], t, loc)

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

    def fold(self, op: str, a, b, node) -> ir.Const | None:
        """Python arithmetic on two weak constants; None where Python raises but the kernel
        has a result (``3 // 0``, a complex division by zero, ``x << -1``): the caller computes
        it at run time, as numba does (only if that code runs: ``x if c else 1 // 0`` is valid)."""
        if op == "**" and isinstance(a, int) and isinstance(b, int) and abs(b) > 4096 and abs(a) > 1:
            raise self.error("constant power too large", node)
        try:
            r = PYOPS[op](a, b)
        except TypeError as e:  # complex // complex...
            raise self.error(f"constant expression failed: {e}", node) from None
        except (ZeroDivisionError, OverflowError, ValueError) as e:
            r = ieee_fold(op, a, b)
            if r is None:
                if isinstance(e, ZeroDivisionError) or (op in ("<<", ">>") and b < 0):
                    return None
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
            # numba's wording first: code that matches its message keeps working
            f"Invalid NumPy dtype specified: {v!r} is not a dtype",
            node,
            hint="use a numpy type (np.float32), a pykern type (pykern.float32) or a name ('float32')",
        )

    def const_value(self, node, what: str):
        """A compile-time Python value (int/float/bool or tuple of those) of an expression."""
        x = self._const_of(self.expr(self._with_constant_locals(node, frozenset())), set())
        if x is NOT_CONST:
            raise NeedsConstant(f"{what} must be a compile-time constant", self.loc(node),
                                "use a literal, a module-level constant or a local variable assigned one once")
        return x

    def _const_of(self, v, seen: set):
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
        elif isinstance(v, ir.TupleExpr):
            elems = tuple(self._const_of(e, seen) for e in v.elems)
            return NOT_CONST if NOT_CONST in elems else elems
        elif isinstance(v, ir.Var):
            return self._const_local(v.name, seen)
        return NOT_CONST

    def _const_local(self, name: str, seen: set):
        """`N = 100` then `shared.array(N, ...)`: a local assigned a constant once is that
        constant (as numba infers); its expression is folded with the other such locals
        written in as literals (`TPB = N // 2`)."""
        consts = self.single_constant_assigns()
        if name not in consts or name in seen:
            return NOT_CONST
        seen = seen | {name}
        return self._const_of(self.expr(self._with_constant_locals(consts[name], seen)), seen)

    def _with_constant_locals(self, node, seen):
        """A copy of ``node`` with the constant locals it names written in as literals."""
        if not self.single_constant_assigns():
            return node
        lw = self

        class Substitute(ast.NodeTransformer):
            def visit_Name(self, n):
                x = lw._const_local(n.id, seen) if n.id not in lw.static else NOT_CONST
                return n if x is NOT_CONST else ast.copy_location(_literal_node(x), n)

        return ast.fix_missing_locations(Substitute().visit(copy.deepcopy(node)))

    def single_constant_assigns(self) -> dict:
        """Locals stored exactly once in the function, by ``name = <expression of literals and
        names>`` (no calls, subscripts or attributes of kernel values): name -> value node."""
        out = self.__dict__.get("_single_consts")
        if out is None:
            a = self.node.args  # a parameter is a run-time value even if assigned once more
            stores = {p.arg: 1 for p in a.posonlyargs + a.args + a.kwonlyargs}
            values = {}
            for n in ast.walk(self.node):
                if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                    stores[n.id] = stores.get(n.id, 0) + 1
                if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                    if all(isinstance(c, _CONST_NODES) for c in ast.walk(n.value)):
                        values[n.targets[0].id] = n.value
            out = {k: v for k, v in values.items() if stores.get(k) == 1}
            self._single_consts = out
        return out
