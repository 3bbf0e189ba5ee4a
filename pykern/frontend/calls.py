"""Calls inside kernels: kernel-language stubs, builtins, math/numpy functions,
type constructors and device functions, each lowered to IR.

``lower_call(lowerer, fobj, node)`` is the single entry point (used by
``lower_ast.FunctionLowerer.expr_Call``); the typing rules are in ``infer``.

Example: ``math.sqrt(x)`` with ``x: float32`` becomes
``@sqrt(x):float32``; ``cuda.grid(1)`` becomes
``((int64(@block_idx(axis=0)) * int64(@block_dim(axis=0))) + int64(@thread_idx(axis=0)))``.
"""

from __future__ import annotations

import ast
import builtins
import math

import numpy as np

from .. import stubs
from . import infer, ir
from . import types as T
from .lower_ast import PartialIndex, PyObj, _is_weak, _weakval, is_pure

# ---------------------------------------------------------------- tables

_MATH_UNARY_NAMES = [n for n in infer.UNARY_MATH if hasattr(math, n)]
_MATH_BINARY_NAMES = [n for n in infer.BINARY_MATH if hasattr(math, n)]


def _math_tables():
    unary = {getattr(math, n): n for n in _MATH_UNARY_NAMES}
    binary = {getattr(math, n): n for n in _MATH_BINARY_NAMES}
    preds = {getattr(math, n): n for n in infer.PREDICATES}
    np_unary = {
        np.sin: "sin", np.cos: "cos", np.tan: "tan", np.arcsin: "asin", np.arccos: "acos", np.arctan: "atan",
        np.sinh: "sinh", np.cosh: "cosh", np.tanh: "tanh", np.arcsinh: "asinh", np.arccosh: "acosh",
        np.arctanh: "atanh", np.exp: "exp", np.exp2: "exp2", np.expm1: "expm1", np.log: "log", np.log2: "log2",
        np.log10: "log10", np.log1p: "log1p", np.sqrt: "sqrt", np.cbrt: "cbrt", np.floor: "floor",
        np.ceil: "ceil", np.trunc: "trunc", np.rint: "rint", np.fabs: "fabs",
    }  # fmt: skip
    np_binary = {np.arctan2: "atan2", np.hypot: "hypot", np.copysign: "copysign", np.fmod: "fmod"}
    np_preds = {np.isnan: "isnan", np.isinf: "isinf", np.isfinite: "isfinite"}
    return unary, binary, preds, np_unary, np_binary, np_preds


_TABLES = None


def _tables():
    global _TABLES
    if _TABLES is None:
        _TABLES = _math_tables()
    return _TABLES


_ALL_LANES = (1 << 64) - 1


# ---------------------------------------------------------------- entry


def lower_call(lw, fobj, node):
    f = fobj.value
    name = fobj.name or getattr(f, "__name__", "function")
    if isinstance(f, stubs.Stub):
        handler = _STUB_HANDLERS.get(f._pk_name)
        if handler is None:
            raise lw.error(f"'{name}' cannot be called", node)
        return handler(lw, node, f._pk_name)
    if getattr(f, "__pykern_device__", False):
        return _device_call(lw, f, name, node)
    if isinstance(f, np.ufunc):  # np.sin(x, out) on arrays (numba accepts it), np.add(a, b) on scalars
        from .ufunc_loops import array_form

        r = array_form(lw, f, node, name)
        if r is not None:
            return r
    if hasattr(f, "py_func") and hasattr(f, "__pykern_device__"):
        raise lw.error(
            f"'{name}' is a kernel; kernels cannot call kernels",
            node,
            hint="make the callee a device function: @pykern.jit(device=True)",
        )
    handler = _BUILTINS.get(f) if _hashable(f) else None
    if handler is not None:
        return handler(lw, node, name)
    unary, binary, preds, np_unary, np_binary, np_preds = _tables()
    if _hashable(f):
        if f is math.log:
            return _math_log(lw, node)
        if f in (math.degrees, math.radians):
            factor = 180.0 / math.pi if f is math.degrees else math.pi / 180.0
            _nargs(lw, node, name, 1)
            x = _math_arg(lw, node.args[0])
            return lw.binop("*", x, lw.const(factor, T.float64, node, weak=True), node)
        if f in unary:
            return _unary_math(lw, node, name, unary[f], to_int=unary[f] in infer.TO_INT)
        if f in np_unary:
            return _unary_math(lw, node, name, np_unary[f], to_int=False)
        if f in binary or f in np_binary:
            return _binary_math(lw, node, name, binary.get(f) or np_binary[f])
        if f in preds or f in np_preds:
            return _predicate(lw, node, name, preds.get(f) or np_preds[f])
        if f in (np.abs, np.absolute):
            return _abs(lw, node, name)
        if f in (np.minimum, np.maximum):
            return _minmax(lw, node, name, "min" if f is np.minimum else "max")
        if f is np.power:
            _nargs(lw, node, name, 2)
            return lw.binop("**", lw.value(node.args[0]), lw.value(node.args[1]), node)
    if f is np.dtype:
        _nargs(lw, node, name, 1)
        arg = node.args[0]
        val = arg.value if isinstance(arg, ast.Constant) else lw.expr(arg)
        val = val.value if isinstance(val, PyObj) else val
        try:
            return PyObj(np.dtype(val), "np.dtype(...)")
        except TypeError:
            raise lw.error(f"np.dtype() of {val!r}", node) from None
    if isinstance(f, T.Type) or (isinstance(f, type) and issubclass(f, np.generic)):
        return _convert(lw, node, name, lw.dtype_of(fobj, node.func))
    if isinstance(f, type) and f is not bool and f is not int and f is not float:
        raise lw.error(f"cannot create {name} objects in kernels", node)
    foreign = _foreign_scalar_type(f)
    if foreign is not None:
        return _convert(lw, node, name, foreign)
    raise lw.error(
        f"cannot call Python function '{name}' from a kernel",
        node,
        hint="kernels can call device functions (@pykern.jit(device=True)), math/numpy math functions, "
        "builtins abs/min/max/round/int/float/bool/len and the pykern kernel functions",
    )


def _foreign_scalar_type(f):
    """A type object of another library (numba.float32) whose name is a scalar type."""
    if getattr(f, "__code__", None) is not None or isinstance(f, type):
        return None
    try:
        s = str(f)
    except Exception:
        return None
    return T.SCALARS.get(s) or T.ALIASES.get(s)


def _hashable(f) -> bool:
    try:
        hash(f)
        return True
    except TypeError:
        return False


def _nargs(lw, node, name, lo, hi=None, keywords=()):
    hi = lo if hi is None else hi
    for kw in node.keywords:
        if kw.arg not in keywords:
            raise lw.error(f"{name}() got an unexpected keyword argument '{kw.arg}'", node)
    n = len(node.args) + len(node.keywords)
    if not lo <= n <= hi:
        want = f"{lo}" if lo == hi else f"{lo} to {hi}"
        raise lw.error(f"{name}() takes {want} argument(s), got {n}", node)


def _args(lw, node, names: list, defaults: dict, fname: str):
    """Positional + keyword arguments matched to ``names`` -> dict name -> ast node."""
    out = {}
    for n, a in zip(names, node.args):
        out[n] = a
    if len(node.args) > len(names):
        raise lw.error(f"{fname}() takes at most {len(names)} arguments", node)
    for kw in node.keywords:
        if kw.arg not in names:
            raise lw.error(f"{fname}() got an unexpected keyword argument '{kw.arg}'", node)
        if kw.arg in out:
            raise lw.error(f"{fname}() got multiple values for '{kw.arg}'", node)
        out[kw.arg] = kw.value
    for n in names:
        if n not in out and n not in defaults:
            raise lw.error(f"{fname}() missing argument '{n}'", node)
    return out


def _intr(lw, name, args, t, node, **attrs):
    return ir.Intrinsic(name, args, t, attrs, lw.loc(node))


def _strong(lw, e, node):
    """A weak constant typed with its default type."""
    return lw.cast(e, e.type, node)


def _scalar(lw, arg_node, what: str):
    v = lw.value(arg_node)
    if not v.type.is_scalar:
        raise lw.error(f"{what} takes a number, not a {v.type}", arg_node)
    return v


# ---------------------------------------------------------------- indexing


def _grid(lw, node, which):
    _nargs(lw, node, which, 1)
    n = lw.const_value(node.args[0], f"the argument of {which}()")
    if not isinstance(n, int) or isinstance(n, bool) or n not in (1, 2, 3):
        raise lw.error(f"{which}(n) takes n = 1, 2 or 3, got {n!r}", node.args[0])

    def i64(name, axis):
        return ir.Cast(_intr(lw, name, [], T.int32, node, axis=axis), T.int64, lw.loc(node))

    loc = lw.loc(node)
    parts = []
    for axis in range(n):
        if which == "grid":
            prod = ir.BinOp("*", i64("block_idx", axis), i64("block_dim", axis), T.int64, loc)
            parts.append(ir.BinOp("+", prod, i64("thread_idx", axis), T.int64, loc))
        else:
            parts.append(ir.BinOp("*", i64("block_dim", axis), i64("grid_dim", axis), T.int64, loc))
    if n == 1:
        return parts[0]
    return ir.TupleExpr(parts, T.Tuple((T.int64,) * n), loc)


def _nullary_i32(lw, node, which):
    raise lw.error(f"'{which}' is a value, not a function", node, f"write {which} without ()")


# ---------------------------------------------------------------- memory


def _shape_of(lw, node, fname, allow_zero):
    shape = lw.const_value(node, f"the shape of {fname}()")
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (int(shape),)
    if not isinstance(shape, tuple) or not shape or not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
        raise lw.error(f"the shape of {fname}() must be a constant int or tuple of ints, got {shape!r}", node)
    if len(shape) > 4:
        raise lw.error(f"{fname}() arrays have at most 4 dimensions", node)
    if any(s < 0 for s in shape):
        raise lw.error(f"the shape of {fname}() must not be negative: {shape}", node)
    if 0 in shape:
        if not allow_zero:
            raise lw.error(f"{fname}() needs a positive size, got {shape}", node)
        if shape != (0,):
            raise lw.error(
                f"the dynamic shared array is 1-d: use shared.array(0, dtype), not shape {shape}",
                node,
            )
    return shape


def _alloc(lw, node, which):
    space = "shared" if which == "shared.array" else "local"
    a = _args(lw, node, ["shape", "dtype"], {}, which)
    shape = _shape_of(lw, a["shape"], which, allow_zero=space == "shared")
    dtype = lw.dtype_arg(a["dtype"])
    t = T.Array(dtype, len(shape), "C", space)
    lw.alloc_count += 1
    name = f"{lw.name}__{space}{lw.alloc_count}" if shape != (0,) else f"{lw.name}__dynshared"
    return ir.AllocArray(name, space, shape, t, lw.loc(node))


def _const_array_like(lw, node, which):
    _nargs(lw, node, which, 1)
    v = lw.expr(node.args[0])
    if isinstance(v, ir.ConstArray):
        return v
    if not (isinstance(v, PyObj) and isinstance(v.value, np.ndarray)):
        raise lw.error(
            "const.array_like() takes a numpy array from a global or closure variable",
            node.args[0],
            hint="define the array at module level: TABLE = np.array([...]); then const.array_like(TABLE)",
        )
    return lw.const_array(v.value, v.name, node)


# ---------------------------------------------------------------- sync


def _void0(lw, node, which):
    _nargs(lw, node, which, 0)
    return _intr(lw, which, [], T.void, node)


def _sync_pred(lw, node, which):
    _nargs(lw, node, which, 1)
    return _intr(lw, which, [lw.cond(node.args[0])], T.int32, node)


def _mask(lw, arg_node):
    m = lw.value(arg_node)
    if not isinstance(m.type, (T.Integer, T.Boolean)):
        raise lw.error(f"a lane mask must be an integer, not {m.type}", arg_node)
    return lw.cast(m, T.uint64, arg_node)


def _syncwarp(lw, node, which):
    a = _args(lw, node, ["mask"], {"mask": None}, which)
    mask = _mask(lw, a["mask"]) if "mask" in a else ir.Const(_ALL_LANES, T.uint64, lw.loc(node))
    return _intr(lw, "syncwarp", [mask], T.void, node)


# ---------------------------------------------------------------- wave ops


def _shfl(lw, node, which):
    _nargs(lw, node, which, 3)
    mask = _mask(lw, node.args[0])
    val = _strong(lw, _scalar(lw, node.args[1], which), node)
    lane = lw.value(node.args[2])
    if not isinstance(lane.type, (T.Integer, T.Boolean)):
        raise lw.error(f"{which}() lane argument must be an integer, not {lane.type}", node.args[2])
    return _intr(lw, which, [mask, val, lw.cast(lane, T.int32, node)], val.type, node)


def _vote(lw, node, which):
    _nargs(lw, node, which, 2)
    mask = _mask(lw, node.args[0])
    pred = lw.cond(node.args[1])
    return _intr(lw, which, [mask, pred], T.uint64 if which == "ballot_sync" else T.boolean, node)


def _mask0(lw, node, which):
    _nargs(lw, node, which, 0)
    return _intr(lw, which, [], T.uint64, node)


# ---------------------------------------------------------------- bits


def _bits(lw, node, which):
    _nargs(lw, node, which, 1)
    v = _strong(lw, lw.value(node.args[0]), node)
    if not isinstance(v.type, T.Integer):
        raise lw.error(f"{which}() takes an integer, not {v.type}", node.args[0])
    return _intr(lw, which, [v], v.type if which == "brev" else T.int32, node)


def _fma(lw, node, which):
    _nargs(lw, node, which, 3)
    vals = [_scalar(lw, a, which) for a in node.args]
    t, w = vals[0].type, infer_weak(vals[0])
    for v in vals[1:]:
        t = infer.common_type(t, w, v.type, infer_weak(v))
        w = None
    if not isinstance(t, T.Float):
        t = T.float64
    return _in_float(lw, node, "fma", vals, t)


def infer_weak(e):
    return _weakval(e)


# ---------------------------------------------------------------- atomics

_ATOMIC_OP = {"and_": "and", "or_": "or"}
_ATOMIC_TYPES = (T.int32, T.int64, T.uint32, T.uint64, T.float32, T.float64, T.float16)


def _atomic(lw, node, which):
    op = which.split(".", 1)[1]
    if op == "compare_and_swap":
        _nargs(lw, node, which, 3)
        arr_node, idx_node, val_nodes = node.args[0], None, node.args[1:]
    elif op == "cas":
        _nargs(lw, node, which, 4)
        arr_node, idx_node, val_nodes = node.args[0], node.args[1], node.args[2:]
    else:
        _nargs(lw, node, which, 3)
        arr_node, idx_node, val_nodes = node.args[0], node.args[1], node.args[2:]
    arr = lw.value(arr_node)
    at = arr.type
    if not isinstance(at, T.Array):
        raise lw.error(f"{which}() needs an array as its first argument, not a {at}", arr_node)
    if at.readonly or at.space == "const":
        raise lw.error(f"{which}() cannot modify a read-only array ({at})", arr_node)
    dt = at.dtype
    irop = _ATOMIC_OP.get(op, "cas" if op == "compare_and_swap" else op)
    if dt not in _ATOMIC_TYPES:
        raise lw.error(
            f"{which}() does not support {dt} arrays", arr_node, "atomics work on int32/int64/uint32/uint64/float32/float64 (float16 where available)"
        )
    if irop in ("and", "or", "xor", "inc", "dec", "cas") and not isinstance(dt, T.Integer):
        raise lw.error(f"{which}() needs an integer array, not {at}", arr_node)
    if idx_node is None:
        if at.ndim != 1:
            raise lw.error(f"{which}() needs a 1-d array, not {at}", arr_node, "use atomic.cas(ary, idx, old, val)")
        idx = [ir.Const(0, T.int64, lw.loc(node))]
    else:
        idx = lw.index_exprs(idx_node)
        if len(idx) != at.ndim:
            raise lw.error(f"{which}() on a {at.ndim}-d array needs {at.ndim} indices, got {len(idx)}", idx_node)
        idx = lw.normalize_indices(arr, idx, idx_node)
    vals = []
    for vn in val_nodes:
        v = _scalar(lw, vn, which)
        vals.append(lw.cast(v, dt, vn))
    return ir.Atomic(irop, arr, idx, vals, dt, lw.loc(node))


# ---------------------------------------------------------------- math


def _math_arg(lw, arg_node):
    v = lw.value(arg_node)
    if not v.type.is_scalar:
        raise lw.error(f"math functions take numbers, not {v.type}", arg_node)
    return v


def _in_float(lw, node, name, vals, ft):
    """``name(*vals)`` computed in float type ``ft`` (float16 via float32), result type ``ft``."""
    ct = T.float32 if ft == T.float16 else ft
    r = _intr(lw, name, [lw.cast(v, ct, node) for v in vals], ct, node)
    return lw.cast(r, ft, node)


def _unary_math(lw, node, fname, name, to_int):
    _nargs(lw, node, fname, 1)
    v = _math_arg(lw, node.args[0])
    if _is_weak(v) or (isinstance(v, ir.Const) and not isinstance(v.type, T.Float)):
        # a constant argument: fold with Python's math (same rounding as float64)
        if name == "rint":
            pyf = lambda x: float(round(x))  # noqa: E731  (round half to even, float result)
        elif name in infer.TO_INT and not to_int:
            pyf = lambda x, f=getattr(math, name): float(f(x))  # noqa: E731  (numpy keeps floats)
        else:
            pyf = getattr(math, name, None)
        if pyf is not None:
            try:
                r = pyf(v.value)
            except (ValueError, OverflowError) as e:
                raise lw.error(f"{fname}({v.value!r}): {e}", node) from None
            return lw.pyconst(r, node)
    ft = infer.math_arg_type(v.type)
    r = _in_float(lw, node, name, [v], ft)
    if to_int:
        return lw.cast(r, T.int64, node)
    return r


def _binary_math(lw, node, fname, name):
    _nargs(lw, node, fname, 2)
    a, b = _math_arg(lw, node.args[0]), _math_arg(lw, node.args[1])
    ft = infer.math2_arg_type(a.type, infer_weak(a), b.type, infer_weak(b))
    return _in_float(lw, node, name, [a, b], ft)


def _math_log(lw, node):
    _nargs(lw, node, "math.log", 1, 2)
    if len(node.args) == 1:
        return _unary_math(lw, node, "math.log", "log", False)
    a, b = _math_arg(lw, node.args[0]), _math_arg(lw, node.args[1])
    ft = infer.math2_arg_type(a.type, infer_weak(a), b.type, infer_weak(b))
    la, lb = _in_float(lw, node, "log", [a], ft), _in_float(lw, node, "log", [b], ft)
    return ir.BinOp("/", la, lb, ft, lw.loc(node))


def _predicate(lw, node, fname, name):
    _nargs(lw, node, fname, 1)
    v = _math_arg(lw, node.args[0])
    if not isinstance(v.type, T.Float):
        return ir.Const(name == "isfinite", T.boolean, lw.loc(node))
    return _intr(lw, name, [v], T.boolean, node)


# ---------------------------------------------------------------- builtins


def _range(lw, node, name):
    raise lw.error("range() can only be used as the iterable of a for loop", node, "for i in range(n): ...")


def _len(lw, node, name):
    _nargs(lw, node, "len", 1)
    v = lw.expr(node.args[0])
    if isinstance(v, PyObj) and isinstance(v.value, (tuple, np.ndarray)):
        return PyObj(len(v.value), f"len({v.name})")
    if isinstance(v, PartialIndex):
        v = lw.to_ir(v, node.args[0])
    v = lw.to_ir(v, node.args[0])
    t = v.type
    if isinstance(t, T.Array):
        if t.ndim == 0:
            raise lw.error("len() of a 0-d array", node)
        return ir.ArrayAttr(v, "shape", 0, T.int64, lw.loc(node))
    if isinstance(t, T.Tuple):
        return lw.const(len(t.elems), T.int64, node, weak=True)
    raise lw.error(f"len() of a {t}", node, "len() works on arrays and tuples")


def _abs(lw, node, name):
    _nargs(lw, node, name, 1)
    v = _scalar(lw, node.args[0], name)
    if _is_weak(v):
        return lw.pyconst(abs(v.value), node)
    if isinstance(v.type, T.Boolean):
        return lw.cast(v, T.int64, node)
    if isinstance(v.type, T.Integer) and not v.type.signed:
        return v
    if v.type == T.float16:
        return _in_float(lw, node, "abs", [v], T.float16)
    return _intr(lw, "abs", [v], v.type, node)


def _minmax(lw, node, name, which=None):
    which = which or name
    for kw in node.keywords:
        raise lw.error(f"{name}() keyword '{kw.arg}' is not supported in kernels", node)
    vals = [lw.value(a) for a in node.args]
    if len(vals) == 1 and isinstance(vals[0].type, T.Tuple):
        tup = vals[0]
        if not lw_is_pure(tup):
            raise lw.error(f"{name}() of a tuple with side effects; assign it to a variable first", node)
        vals = [lw.tuple_get(tup, k, node) for k in range(len(tup.type.elems))]
    if len(vals) < 2:
        raise lw.error(f"{name}() needs at least 2 arguments (or one tuple) in kernels", node)
    for v, a in zip(vals, node.args):
        if not v.type.is_scalar:
            raise lw.error(f"{name}() takes numbers, not {v.type}", a)
    if all(_is_weak(v) for v in vals):
        r = (min if which == "min" else max)(v.value for v in vals)
        return lw.pyconst(r, node)
    t, w = vals[0].type, infer_weak(vals[0])
    for v in vals[1:]:
        t = infer.common_type(t, w, v.type, infer_weak(v))
        w = None
    ct = T.int64 if isinstance(t, T.Boolean) else t  # booleans compare as 0/1
    acc = lw.cast(vals[0], ct, node)
    for v in vals[1:]:
        acc = _intr(lw, which, [acc, lw.cast(v, ct, node)], ct, node)
    return lw.cast(acc, t, node)


def lw_is_pure(e):
    return is_pure(e)


def _round(lw, node, name):
    _nargs(lw, node, "round", 1, 2, keywords=("ndigits",))
    v = _scalar(lw, node.args[0], "round")
    nd_node = node.args[1] if len(node.args) > 1 else (node.keywords[0].value if node.keywords else None)
    if nd_node is None:
        if _is_weak(v):
            r = round(v.value)
            return lw.pyconst(r, node)
        if isinstance(v.type, T.Boolean):
            return lw.cast(v, T.int64, node)
        if isinstance(v.type, T.Integer):
            return v
        return lw.cast(_in_float(lw, node, "round", [v], v.type), T.int64, node)
    nd = lw.const_value(nd_node, "round()'s ndigits")
    if not isinstance(nd, int) or isinstance(nd, bool):
        raise lw.error("round()'s ndigits must be a constant integer", nd_node)
    if _is_weak(v):
        return lw.pyconst(round(v.value, nd), node)
    if not isinstance(v.type, T.Float):
        if nd >= 0:
            return lw.cast(v, T.int64, node) if isinstance(v.type, T.Boolean) else v
        raise lw.error("round() of an integer with negative ndigits is not supported in kernels", node)
    ft = v.type
    if nd == 0:
        return _in_float(lw, node, "round", [v], ft)
    p = lw.const(10.0 ** abs(nd), ft, node)
    scaled = ir.BinOp("*" if nd > 0 else "/", v, p, ft, lw.loc(node))
    r = _in_float(lw, node, "round", [scaled], ft)
    return ir.BinOp("/" if nd > 0 else "*", r, p, ft, lw.loc(node))


def _convert(lw, node, name, t):
    if node.keywords:
        raise lw.error(f"{name}() takes no keyword arguments in kernels", node)
    if not node.args:
        return lw.const(0, t, node)
    if len(node.args) != 1:
        raise lw.error(f"{name}() takes one argument in kernels", node)
    v = _scalar(lw, node.args[0], name)
    return lw.cast(v, t, node)


def _pow(lw, node, name):
    _nargs(lw, node, "pow", 2)
    return lw.binop("**", lw.value(node.args[0]), lw.value(node.args[1]), node)


def _int(lw, node, name):
    return _convert(lw, node, "int", T.int64)


def _float(lw, node, name):
    # float("inf") / float("-inf") / float("nan"): the one use of strings Python kernels
    # commonly make (initial values of min/max reductions); a weak constant like 1.0
    if len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str):
        text = node.args[0].value
        try:
            value = float(text)
        except ValueError:
            value = None
        if value is None or (value == value and abs(value) != math.inf):
            raise lw.error(f"float({text!r}) in a kernel: only 'inf', '-inf' and 'nan' are accepted", node,
                           "write numbers as literals, e.g. 1.5")
        return lw.const(value, T.float64, node, weak=True)
    return _convert(lw, node, "float", T.float64)


def _bool(lw, node, name):
    if node.args and len(node.args) == 1 and not node.keywords:
        return lw.cond(node.args[0])
    return _convert(lw, node, "bool", T.boolean)


_BUILTINS = {
    builtins.range: _range,
    builtins.len: _len,
    builtins.abs: _abs,
    builtins.min: lambda lw, node, name: _minmax(lw, node, "min"),
    builtins.max: lambda lw, node, name: _minmax(lw, node, "max"),
    builtins.round: _round,
    builtins.int: _int,
    builtins.float: _float,
    builtins.bool: _bool,
    builtins.pow: _pow,
}


# ---------------------------------------------------------------- device functions


def _device_call(lw, dev, name, node):
    pyfunc = getattr(dev, "py_func", None)
    if pyfunc is None or not hasattr(pyfunc, "__code__"):
        raise lw.error(f"device function '{name}' has no Python function (py_func)", node)
    code = pyfunc.__code__
    pnames = list(code.co_varnames[: code.co_argcount])
    defaults = pyfunc.__defaults__ or ()
    first_default = len(pnames) - len(defaults)
    if len(node.args) > len(pnames):
        raise lw.error(
            f"device function '{name}' takes {len(pnames)} argument(s) but {len(node.args)} were given", node
        )
    given = {}
    for pn, a in zip(pnames, node.args):
        given[pn] = a
    for kw in node.keywords:
        if kw.arg is None:
            raise lw.error("**kwargs in a call is not supported in kernels", node)
        if kw.arg not in pnames:
            raise lw.error(f"device function '{name}' has no parameter '{kw.arg}'", node)
        if kw.arg in given:
            raise lw.error(f"device function '{name}' got two values for '{kw.arg}'", node)
        given[kw.arg] = kw.value
    args = []
    for k, pn in enumerate(pnames):
        if pn in given:
            a = given[pn]
            v = lw.value(a)
        elif k >= first_default:
            a = node
            v = lw.to_ir(PyObj(defaults[k - first_default], f"default of {pn}"), node)
        else:
            raise lw.error(f"device function '{name}' is missing argument '{pn}'", node)
        if isinstance(v.type, T.Void):
            raise lw.error("a call that returns nothing cannot be an argument", a)
        args.append(_strong(lw, v, a))
    fn = lw.mb.device_function(pyfunc, [a.type for a in args], lw.loc(node))
    opts = getattr(dev, "options", None) or {}
    if opts.get("forceinline") or opts.get("inline") == "always":  # numba's spellings
        fn.force_inline = True
    return ir.Call(fn.name, args, fn.return_type, lw.loc(node))


def _this_group(lw, node, which):
    _nargs(lw, node, which, 0)
    from .lower_ast import PyObj

    return PyObj(stubs._GRID_GROUP if which == "cg.this_grid" else stubs._BLOCK_GROUP, which + "()")


def _group_sync(lw, node, which):
    _nargs(lw, node, which, 0)
    return _intr(lw, "grid_sync" if which == "cg.grid_group.sync" else "syncthreads", [], T.void, node)


def group_attr(lw, group, attr, node):
    """``g.sync`` (a callable), ``g.size``, ``g.thread_rank`` of a cooperative group
    (int64 values: all threads of the grid or block, and this thread's linear rank)."""
    from .lower_ast import PyObj

    grid = group is stubs._GRID_GROUP
    if attr == "sync":
        return PyObj(stubs.Stub("cg.grid_group.sync" if grid else "cg.thread_block.sync"), "sync")
    loc = lw.loc(node)

    def reg(name, axis):
        return ir.Cast(_intr(lw, name, [], T.int32, node, axis=axis), T.int64, loc)

    def mul(a, c):
        return ir.BinOp("*", a, c, T.int64, loc)

    def add(a, c):
        return ir.BinOp("+", a, c, T.int64, loc)

    bsize = mul(mul(reg("block_dim", 0), reg("block_dim", 1)), reg("block_dim", 2))
    brank = add(mul(add(mul(reg("thread_idx", 2), reg("block_dim", 1)), reg("thread_idx", 1)), reg("block_dim", 0)),
                reg("thread_idx", 0))
    if attr == "size":
        return mul(bsize, mul(mul(reg("grid_dim", 0), reg("grid_dim", 1)), reg("grid_dim", 2))) if grid else bsize
    if attr == "thread_rank":
        if not grid:
            return brank
        block = add(mul(add(mul(reg("block_idx", 2), reg("grid_dim", 1)), reg("block_idx", 1)), reg("grid_dim", 0)),
                    reg("block_idx", 0))
        return add(mul(block, bsize), brank)
    raise lw.error(f"a cooperative group has no attribute '{attr}'", node, "use .sync(), .size or .thread_rank")


_STUB_HANDLERS = {
    "grid": _grid,
    "gridsize": _grid,
    "warpsize": _nullary_i32,
    "laneid": _nullary_i32,
    "shared.array": _alloc,
    "local.array": _alloc,
    "const.array_like": _const_array_like,
    "syncthreads": _void0,
    "threadfence": _void0,
    "threadfence_block": _void0,
    "threadfence_system": _void0,
    "syncthreads_count": _sync_pred,
    "syncthreads_and": _sync_pred,
    "syncthreads_or": _sync_pred,
    "syncwarp": _syncwarp,
    "shfl_sync": _shfl,
    "shfl_up_sync": _shfl,
    "shfl_down_sync": _shfl,
    "shfl_xor_sync": _shfl,
    "ballot_sync": _vote,
    "all_sync": _vote,
    "any_sync": _vote,
    "eq_sync": _vote,
    "activemask": _mask0,
    "lanemask_lt": _mask0,
    "popc": _bits,
    "clz": _bits,
    "ffs": _bits,
    "brev": _bits,
    "fma": _fma,
    "cg.this_grid": _this_group,
    "cg.this_thread_block": _this_group,
    "cg.grid_group.sync": _group_sync,
    "cg.thread_block.sync": _group_sync,
    **{f"atomic.{n}": _atomic for n in stubs._ATOMIC_NAMES},
}
