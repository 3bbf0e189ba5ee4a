"""Calls inside kernels: kernel-language stubs, builtins, math/numpy functions,
type constructors and device functions, each lowered to IR.

``lower_call(lowerer, fobj, node)`` is the single entry point (used by
``lower_exprs.ExpressionLowering.expr_Call``); the typing rules are in ``infer``.

Example: ``math.sqrt(x)`` with ``x: float32`` becomes
``@sqrt(x):float32``; ``cuda.grid(1)`` becomes
``((int64(@block_idx(axis=0)) * int64(@block_dim(axis=0))) + int64(@thread_idx(axis=0)))``.
"""

from __future__ import annotations

import ast
import builtins
import cmath
import collections
import functools
import inspect
import math

import numpy as np

from pykern.lang import stubs
from pykern.frontend import user_overloads as extending
from pykern.frontend import infer
from pykern.frontend import ir
from pykern.frontend import local_defs
from pykern.frontend import np_scalar
from pykern.frontend import types as T
from pykern.core.errors import CompileError, CompileValueError
from pykern.frontend.values import BoundMethod, PartialIndex, PyObj, is_pure, is_weak, weakval

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
    if isinstance(f, stubs.VectorTypeStub):
        return _vector(lw, node, f)
    if isinstance(f, stubs.Stub):
        handler = _STUB_HANDLERS.get(f._pk_name)
        if handler is None:
            raise lw.error(f"'{name}' cannot be called", node)
        return handler(lw, node, f._pk_name)
    if isinstance(f, local_defs.LocalFunction):  # a nested def: its captured run-time locals first
        return _device_call(lw, f, name, local_defs.call(lw, f, node))
    if hasattr(f, "py_func") and (hasattr(f, "__pykern_device__") or _numba_dispatcher(f)):
        # a device function, or a plain @jit function called from a kernel: numba-cuda
        # compiles the callee as a device function either way
        return _device_call(lw, f, name, node)
    if extending.is_overloaded(f):  # numba.extending: @overload(f) / @register_jitable
        r = _overload_call(lw, f, name, node)
        if r is not None:
            return r
    if isinstance(f, np.ufunc):  # np.sin(x, out) on arrays (numba accepts it), np.add(a, b) on scalars
        from pykern.frontend.ufunc_loops import array_form

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
    if handler is None and getattr(f, "__module__", None) == "pdb" and getattr(f, "__name__", "") == "set_trace":
        handler = _breakpoint
    if handler is not None:
        return handler(lw, node, name)
    if _hashable(f) and f in _operator_table():
        return _operator_call(lw, node, name, _operator_table()[f])
    handler = _EXTRA_CALLS.get(f) if _hashable(f) else None  # complex, cmath, fp16, math extras (lang2)
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
            if np_unary[f] in _CMATH_UNARY or np_unary[f] in ("log", "log2", "rint"):  # numpy ufuncs take complex numbers too
                _nargs(lw, node, name, 1)
                v = _scalar(lw, node.args[0], name)
                if isinstance(v.type, T.Complex):
                    if np_unary[f] == "rint":
                        return np_complex_unary(lw, "rint", v, node)
                    return _cmath_value(lw, np_unary[f], v, node)
                return _unary_math(lw, node, name, np_unary[f], to_int=False, v=v, ufunc=True)
            return _unary_math(lw, node, name, np_unary[f], to_int=False, ufunc=True)
        if f is np.fmod:
            return _np_fmod(lw, node, name)
        if f in _NP_ANGLE:
            return _np_angle(lw, node, name, _NP_ANGLE[f])
        if f in binary or f in np_binary:
            return _binary_math(lw, node, name, binary.get(f) or np_binary[f], ufunc=f in np_binary)
        if f in preds or f in np_preds:
            return _predicate(lw, node, name, preds.get(f) or np_preds[f], ufunc=f in np_preds)
        if f in (np.abs, np.absolute):
            return _abs(lw, node, name, ufunc=True)
        if f in _NP_MINMAX:
            return _np_minmax(lw, node, name, _NP_MINMAX[f])
        if f in np_scalar.HANDLERS:
            return np_scalar.HANDLERS[f](lw, node, name)
        if f is np.power:
            _nargs(lw, node, name, 2)
            return lw.binop("**", lw.value(node.args[0]), lw.value(node.args[1]), node)
    if f is np.iinfo or f is np.finfo:
        return _xinfo(lw, node, name, f)
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
    if isinstance(f, type) and issubclass(f, tuple) and isinstance(getattr(f, "_fields", None), tuple):
        return _namedtuple(lw, node, f)
    if isinstance(f, BoundMethod):
        if f.attr == "transpose":
            return _transpose(lw, node, "transpose", f.value)
        if f.attr == "view":
            return _view(lw, node, f.value)
        if f.attr == "reshape":
            return _reshape(lw, node, f.value)
        if f.attr in ARRAY_REDUCTION_METHODS:
            return _array_reduction(lw, node, f"{f.attr}", f.attr, f.value)
        if f.attr == "copy":
            _nargs(lw, node, "copy", 0)
            return copy_array(lw, node, f.value)
        if f.attr == "fill":
            return _fill(lw, node, f.value)
        if f.attr == "item":
            return _array_item(lw, node, f.value)
        return _bit_count(lw, node, f)
    if _hashable(f) and f is np.copy:
        _nargs(lw, node, name, 1)
        return copy_array(lw, node, lw.value(node.args[0]))
    if _hashable(f) and f in _NP_REDUCTIONS:
        return _array_reduction(lw, node, name, _NP_REDUCTIONS[f])
    if _hashable(f) and f in _NP_ALLOC:
        return _np_alloc(lw, node, name, _NP_ALLOC[f])
    if _hashable(f) and f is np.transpose:
        _nargs(lw, node, name, 1)
        return _transpose(lw, node, name, None)
    if isinstance(f, type) and f is not bool and f is not int and f is not float:
        raise lw.error(f"cannot create {name} objects in kernels", node)
    foreign = _foreign_scalar_type(f)
    if foreign is not None:
        return _convert(lw, node, name, foreign)
    raise lw.error(
        f"cannot call Python function '{name}' from a kernel",
        node,
        hint="kernels can call device functions (@pykern.jit(device=True)), math/numpy math functions, "
        "builtins abs/min/max/sum/any/all/round/divmod/int/float/bool/len/ord and the pykern kernel functions",
    )


#: the attributes numba's ``np.iinfo``/``np.finfo`` give (numba/np/arraymath.py), as its namedtuples
_IINFO = collections.namedtuple("iinfo", ("min", "max", "bits"))
_FINFO = collections.namedtuple("finfo", ("eps", "epsneg", "iexp", "machep", "max", "maxexp", "min", "minexp", "negep",
                                          "nexp", "nmant", "precision", "resolution", "tiny", "bits"))


def _xinfo(lw, node, name, f):
    """``np.iinfo(t)``/``np.finfo(t)`` of a type, a dtype, an array or a value (numba takes the
    ``.dtype`` of what has one, else its type): a constant namedtuple of numpy's numbers for it,
    as numba builds one at compile time (``.max`` of int16 is an int, ``.eps`` of float32 a
    float32)."""
    _nargs(lw, node, name, 1)
    v = lw.expr(node.args[0])
    if isinstance(v, ir.Expr):
        t = v.type.dtype if isinstance(v.type, T.Array) else v.type
    else:
        t = lw.dtype_of(v, node.args[0])
    kind = "an integer" if f is np.iinfo else "a float"
    try:
        info = f(t.np_dtype)
    except (ValueError, AttributeError, TypeError):
        raise lw.error(f"{name}() of {t}: numpy has no such information (it takes {kind} type)", node) from None
    cls = _IINFO if f is np.iinfo else _FINFO
    return PyObj(cls(*(getattr(info, a) for a in cls._fields)), f"{name}(...)")


_NP_REDUCTIONS = {
    np.sum: "sum", np.prod: "prod", np.min: "min", np.amin: "min", np.max: "max", np.amax: "max",
    np.mean: "mean", np.var: "var", np.std: "std", np.all: "all", np.any: "any",
    np.argmin: "argmin", np.argmax: "argmax", np.median: "median",
    np.nansum: "nansum", np.nanprod: "nanprod", np.nanmin: "nanmin", np.nanmax: "nanmax",
    np.nanmean: "nanmean", np.nanvar: "nanvar", np.nanstd: "nanstd",
}  # fmt: skip
#: reductions that are also array methods (``a.sum()``), as numba types them
ARRAY_REDUCTION_METHODS = ("sum", "prod", "min", "max", "mean", "var", "std", "all", "any", "argmin", "argmax")
_ORDERED_ONLY = ("min", "max", "argmin", "argmax", "nanmin", "nanmax", "median")


def _reduction_type(which, dt):
    """numba's result type of reduction ``which`` of ``dt`` elements (for var/std: the mean's type;
    the real part of it is theirs)."""
    if which in ("all", "any"):
        return T.boolean
    if which in ("argmin", "argmax"):
        return T.int64
    if which in ("min", "max", "nanmin", "nanmax", "pymin", "pymax"):
        return dt
    if which in ("sum", "prod", "nansum", "nanprod"):  # integers widen to 64 bits, as numba's sum
        if isinstance(dt, T.Boolean) or (isinstance(dt, T.Integer) and dt.signed):
            return T.int64
        return T.uint64 if isinstance(dt, T.Integer) else dt
    return T.float64 if isinstance(dt, (T.Integer, T.Boolean)) else dt


def _array_reduction(lw, node, name, which, base=None):
    """``np.sum(a)``, ``a.max()``, ``np.nanmean(a)``... of a whole array: a call of the generated
    device function of ``pykern/lang/array_reductions.py``."""
    if node.keywords or len(node.args) != (0 if base is not None else 1):
        raise lw.error(f"{name}() in kernels reduces a whole array: {name}(a) or a.{which}(); "
                       "axis=, dtype=, out= and other arguments are not supported", node,
                       hint="kernels cannot allocate the result array of a reduction along an axis; "
                       "loop over the axis instead")
    a = base if base is not None else lw.value(node.args[0])
    if not isinstance(a.type, T.Array):
        raise lw.error(f"{name}() in kernels takes an array, not a {a.type}", node.args[0] if node.args else node)
    return _reduce_array(lw, node, name, which, a)


def _reduce_array(lw, node, name, which, a):
    dt = a.type.dtype
    kind = ("b" if isinstance(dt, T.Boolean) else "c" if isinstance(dt, T.Complex) else "f" if isinstance(dt, T.Float)
            else ("i" if dt.signed else "u") if isinstance(dt, T.Integer) else None)
    if kind is None or (kind == "c" and which in _ORDERED_ONLY):
        raise lw.error(f"{name}() of an array of {dt} is not supported in kernels", node,
                       hint="reductions take arrays of numbers (complex ones: sum, prod, mean, var, std, all, any)")
    lib = stubs.DEVICE_LIBRARIES["reductions"]
    dev = lib.device_function(which, a.type.ndim, str(_reduction_type(which, dt).np_dtype), kind)
    fn = lw.mb.device_function(dev.py_func, [a.type], lw.loc(node))
    return ir.Call(fn.name, [a], fn.return_type, lw.loc(node))


def _numba_dispatcher(f) -> bool:
    """``@numba.njit``/``@numba.jit`` functions: numba-cuda compiles them for the GPU
    when a kernel calls them; so does pykern (from their ``py_func``)."""
    mod = str(getattr(type(f), "__module__", ""))
    return mod.startswith("numba") and hasattr(getattr(f, "py_func", None), "__code__")


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
    if len(shape) > T.MAX_NDIM:
        raise lw.error(f"{fname}() arrays have at most {T.MAX_NDIM} dimensions", node)
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
    a = _args(lw, node, ["shape", "dtype", "alignment"], {"alignment": None}, which)
    shape = _shape_of(lw, a["shape"], which, allow_zero=space == "shared")
    dtype = lw.dtype_arg(a["dtype"])
    align = _alignment(lw, a.get("alignment"))
    t = T.Array(dtype, len(shape), "C", space)
    lw.alloc_count += 1
    name = f"{lw.name}__{space}{lw.alloc_count}" if shape != (0,) else f"{lw.name}__dynshared"
    return ir.AllocArray(name, space, shape, t, lw.loc(node), align)


def _alignment(lw, node) -> int:
    """numba-cuda's ``alignment=`` of local/shared arrays: a constant power of two (0: none given)."""
    if node is None:
        return 0
    try:
        v = lw.expr(node)
        n = None if isinstance(v, PyObj) and v.value is None else lw.const_value(node, "alignment")
    except CompileError:  # a string, a run-time value...
        v = n = False
    if n is None:  # alignment=None: numba's default
        return 0
    if not isinstance(n, (int, np.integer)) or isinstance(n, (bool, np.bool_)):
        # numba's words (a TypingError there), so programs matching them keep working
        raise lw.error("RequireLiteralValue: alignment must be a constant integer", node)
    n = int(n)
    if n <= 0 or n & (n - 1):
        raise CompileValueError(f"Alignment must be a power of 2 greater than 0, got {n}", lw.loc(node))
    return n


_NP_ALLOC = {np.empty: "empty", np.zeros: "zeros", np.ones: "ones", np.full: "full",
             np.empty_like: "empty_like", np.zeros_like: "zeros_like", np.ones_like: "ones_like",
             np.full_like: "full_like"}


def _np_alloc(lw, node, name, which):
    """``np.zeros((4, 4), np.float32)``, ``np.full(3, x)``, ``np.empty_like(sA)``... in a kernel: a
    per-thread local array (numba.cuda's NRT allocates it on the heap), so its shape must be
    known at compile time; zeros/ones/full are filled where the call runs."""
    like = which.endswith("_like")
    kind = which[:-5] if like else which
    names = (["a"] if like else ["shape"]) + (["fill_value"] if kind == "full" else []) + ["dtype"]
    a = _args(lw, node, names, {"dtype": None}, name)
    if like:
        src = lw.value(a["a"])
        if not isinstance(src.type, T.Array):
            raise lw.error(f"{name}() in kernels takes an array, not a {src.type}", a["a"])
        from pykern.frontend.slice_store import static_shape

        shape = static_shape(lw, src)
        if shape is None or None in shape:
            raise lw.error(f"{name}() in a kernel needs an array whose shape is known at compile time "
                           "(a local, shared or constant array)", node,
                           hint="kernels allocate per-thread arrays of a fixed size: "
                           "np.zeros((N, M), dtype) with constant N, M, or cuda.local.array")
        dtype = src.type.dtype
    else:
        shape = _shape_of(lw, a["shape"], name, allow_zero=False)
        dtype = T.float64
    fill = lw.value(a["fill_value"]) if kind == "full" else None
    if a.get("dtype") is not None:
        dtype = lw.dtype_arg(a["dtype"])
    elif kind == "full" and not like:
        dtype = _strong(lw, fill, node).type  # numpy: np.full(3, 7) is int64, np.full(3, 2.5) float64
    if isinstance(dtype, T.Record):
        raise lw.error(f"{name}() of records is not supported in kernels", node, hint="use cuda.local.array")
    lw.alloc_count += 1
    t = T.Array(dtype, len(shape), "C", "local")
    arr = lw.temp(ir.AllocArray(f"{lw.name}__local{lw.alloc_count}", "local", tuple(shape), t, lw.loc(node)), node)
    lw.__dict__.setdefault("fixed_shapes", {})[arr.name] = tuple(shape)  # z = np.zeros(...): z's shape is known
    if kind != "empty" and 0 not in shape:
        from pykern.frontend.slice_store import store

        value = fill if kind == "full" else lw.const({"zeros": 0, "ones": 1}[kind], dtype, node)
        store(lw, arr, value, node)
    return arr


def copy_array(lw, node, src: ir.Expr) -> ir.Var:
    """``a.copy()``/``np.copy(a)`` of an array whose shape is known at compile time (a global
    numpy array, a fresh local or shared array): a new local array of that shape, as numba's
    copy makes a new array (which numba.cuda can only do with its NRT); other arrays' sizes
    are known only at run time, and a kernel cannot allocate."""
    shape = src.shape if isinstance(src, (ir.ConstArray, ir.AllocArray)) and src.shape != (0,) else None
    if shape is None:
        raise lw.error(f"cannot copy a {src.type} in a kernel: its shape is known only at run time, and kernels "
                       "cannot allocate", node, "copy into a cuda.local.array of a constant shape: "
                       "tmp = cuda.local.array(N, dtype); tmp[:] = a")
    lw.alloc_count += 1
    t = T.Array(src.type.dtype, len(shape), "C", "local")
    dst = lw.temp(ir.AllocArray(f"{lw.name}__local{lw.alloc_count}", "local", tuple(shape), t, lw.loc(node)), node)
    lw.store_view(dst, src, node)
    return dst


def _fill(lw, node, arr: ir.Expr) -> PyObj:
    """``a.fill(v)``: numba's array method (``a[...] = v``, ``v`` cast to the element type), which
    numba.cuda compiles in kernels as it allocates nothing; it returns None."""
    _nargs(lw, node, "fill", 1)
    v = lw.value(node.args[0])
    if not v.type.is_scalar or isinstance(arr.type.dtype, T.Record):
        raise lw.error(f"fill() of a {arr.type} takes a number, not a {v.type}", node)
    if arr.type.ndim == 0:
        raise lw.error("fill() of a 0-d array is not supported", node, "assign the element: a[()] = v")
    lw.store_view(arr, v, node)
    return PyObj(None, "None")


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
    if isinstance(val.type, T.Complex):
        raise lw.error(f"{which}() of a complex value", node.args[1], "shuffle z.real and z.imag separately")
    lane = lw.value(node.args[2])
    if not isinstance(lane.type, (T.Integer, T.Boolean)):
        raise lw.error(f"{which}() lane argument must be an integer, not {lane.type}", node.args[2])
    return _intr(lw, which, [mask, val, lw.cast(lane, T.int32, node)], val.type, node)


def _vote(lw, node, which):
    _nargs(lw, node, which, 2)
    # numba-cuda's vote_sync typing: a bool mask (lane 0 alone) or a float predicate is
    # almost always a swapped argument pair, so both are refused rather than converted
    m = lw.value(node.args[0])
    if not isinstance(m.type, T.Integer):
        raise lw.error(f"Mask type must be an integer, not {m.type}", node.args[0])
    mask = lw.cast(m, T.uint64, node.args[0])
    p = lw.value(node.args[1])
    if not isinstance(p.type, (T.Integer, T.Boolean)):
        raise lw.error(f"Predicate must be an integer or boolean, not {p.type}", node.args[1],
                       hint=f"compare it: {which}(mask, x != 0)")
    pred = lw.cast(p, T.boolean, node.args[1])
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
    # numba.cuda's result types (cudadecl): they matter under its integer rule, where
    # popc(a) - popc(b) of uint32s is uint64 (wraps) and brev(int32(1)) is 2**31, not -2**31
    if which == "brev":  # numba has only uint32/uint64: narrower ints convert to uint32 first
        t = T.uint64 if v.type.bits == 64 else T.uint32
        return _intr(lw, which, [lw.cast(v, t, node)], t, node)
    count = _intr(lw, which, [v], T.int32, node)
    return lw.cast(count, T.uint32 if which == "ffs" else v.type, node)  # popc, clz keep the type


def _fma(lw, node, which):
    _nargs(lw, node, which, 3)
    vals = [_scalar(lw, a, which) for a in node.args]
    t, w = vals[0].type, infer_weak(vals[0])
    for v in vals[1:]:
        t = infer.common_type(t, w, v.type, infer_weak(v))
        w = None
    if not isinstance(t, T.Float):
        t = T.float64
    if t == T.float16:  # one rounding, like cuda.fp16.hfma (not via float32)
        return _intr(lw, "fma", [lw.cast(v, t, node) for v in vals], t, node)
    return _in_float(lw, node, "fma", vals, t)


def infer_weak(e):
    return weakval(e)


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
    return _math_arg_value(lw, lw.value(arg_node), arg_node)


def _math_arg_value(lw, v, arg_node):
    if not v.type.is_scalar:
        raise lw.error(f"math functions take numbers, not {v.type}", arg_node)
    if isinstance(v.type, T.Complex):
        raise lw.error(f"math functions take real numbers, not {v.type}", arg_node, "use the cmath module")
    return v


def _in_float(lw, node, name, vals, ft):
    """``name(*vals)`` computed in float type ``ft`` (float16 via float32), result type ``ft``."""
    ct = T.float32 if ft == T.float16 else ft
    r = _intr(lw, name, [lw.cast(v, ct, node) for v in vals], ct, node)
    return lw.cast(r, ft, node)


#: math names whose numpy function is spelt otherwise
_NUMPY_NAMES = {"acos": "arccos", "asin": "arcsin", "atan": "arctan", "acosh": "arccosh", "asinh": "arcsinh",
                "atanh": "arctanh"}


def _unary_math(lw, node, fname, name, to_int, v=None, ufunc=False):
    _nargs(lw, node, fname, 1)
    v = _math_arg(lw, node.args[0]) if v is None else v
    if name in infer.TO_INT and not isinstance(v.type, T.Float):
        # floor/ceil/trunc of an integer is the integer itself, exactly (no float round trip):
        # math.* gives Python's int (int64; uint64 stays uint64, it may not fit), np.* keeps the
        # type as numpy >= 2.3 does (bool stays bool)
        if not to_int:
            return v
        if is_weak(v):
            return lw.pyconst(int(v.value), node)
        return v if v.type == T.uint64 else lw.cast(v, T.int64, node)
    if is_weak(v) or (isinstance(v, ir.Const) and not isinstance(v.type, T.Float)):
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
                # math.log(0.0), math.sqrt(-1.0), math.exp(1000.0): Python raises, the kernel gives
                # -inf, nan, inf (numba.cuda's numpy error model); numpy's function is that result
                npf = None if to_int or name in infer.TO_INT else getattr(np, _NUMPY_NAMES.get(name, name), None)
                if npf is None:
                    raise lw.error(f"{fname}({v.value!r}): {e}", node) from None
                with np.errstate(all="ignore"):
                    r = float(npf(np.float64(v.value)))
            return lw.pyconst(r, node)
    ft = infer.float_ufunc_type([(v.type, None)]) if ufunc else infer.math_arg_type(v.type)
    r = _in_float(lw, node, name, [v], ft)
    if to_int:
        return lw.cast(r, T.int64, node)
    return r


#: np.deg2rad/np.radians and np.rad2deg/np.degrees: (numerator, denominator) of the factor
_NP_ANGLE = {np.deg2rad: ("pi", 180.0), np.radians: ("pi", 180.0), np.rad2deg: (180.0, "pi"), np.degrees: (180.0, "pi")}


def _np_angle(lw, node, fname, ratio):
    """``np.deg2rad(x)``/``np.rad2deg(x)`` as numpy's loops: ``x * (pi / 180)`` (``180 / pi``) with the
    factor computed in x's float type (float32: ``180.0f / (float)pi``, one ulp from ``(float)(180 / pi)``),
    float16 through float32."""
    _nargs(lw, node, fname, 1)
    v = _math_arg(lw, node.args[0])
    num, den = (math.pi if r == "pi" else r for r in ratio)
    if is_weak(v):
        return lw.pyconst(v.value * (num / den), node)
    ft = infer.float_ufunc_type([(v.type, None)])
    ct = T.float32 if ft == T.float16 else ft
    factor = float(np.float32(num) / np.float32(den)) if ct == T.float32 else num / den
    r = ir.BinOp("*", lw.cast(v, ct, node), ir.Const(factor, ct, lw.loc(node)), ct, lw.loc(node))
    return lw.cast(r, ft, node)


def _binary_math(lw, node, fname, name, ufunc=False):
    _nargs(lw, node, fname, 2)
    a, b = _math_arg(lw, node.args[0]), _math_arg(lw, node.args[1])
    if ufunc:  # numba's loop of the numpy function (np.arctan2(int8, int8) is float32)
        ft = infer.float_ufunc_type([(a.type, infer_weak(a)), (b.type, infer_weak(b))])
        return _in_float(lw, node, name, [a, b], ft)
    (_, tb), ft = _math2_signature(lw, node, name, a, b)
    if isinstance(tb, T.Integer):  # math.pow(float32, int32): numba's powi, here pow in float64, rounded once
        r = _intr(lw, name, [lw.cast(a, T.float64, node), lw.cast(b, T.float64, node)], T.float64, node)
        return lw.cast(r, ft, node)
    return _in_float(lw, node, name, [a, b], ft)


def _math2_signature(lw, node, name, a, b):
    """numba.cuda's signature of ``math.<name>(a, b)`` (``infer.math2_signature``), or a located error."""
    try:
        return infer.math2_signature(name, a.type, infer_weak(a), b.type, infer_weak(b))
    except infer.InferError as e:
        raise lw.error(e.msg, node, e.hint) from None


def _np_fmod(lw, node, fname):
    """``np.fmod`` in the type of numba's loop: on integers exact (C remainder, the dividend's
    sign; by zero 0, as numpy); on floats (or int64 with uint64: float64) the float fmod."""
    _nargs(lw, node, fname, 2)
    a, b = _math_arg(lw, node.args[0]), _math_arg(lw, node.args[1])
    if is_weak(a) and is_weak(b) and not isinstance(a.value, float) and not isinstance(b.value, float):
        x, y = int(a.value), int(b.value)
        r = 0 if y == 0 else (abs(x) % abs(y)) * (-1 if x < 0 else 1)
        return lw.pyconst(r, node)
    try:  # numba's loop: an int literal is int64 (np.fmod(int8, 2) is int64), booleans int8
        (t, _), _ = infer.ufunc_types(np.fmod, [(a.type, infer_weak(a)), (b.type, infer_weak(b))], fname)
    except infer.InferError as e:
        raise lw.error(e.msg, node, e.hint) from None
    if isinstance(t, T.Float):
        return _in_float(lw, node, "fmod", [a, b], t)
    return _intr(lw, "fmod", [lw.cast(a, t, node), lw.cast(b, t, node)], t, node)


def _math_log(lw, node):
    _nargs(lw, node, "math.log", 1, 2)
    if len(node.args) == 1:
        return _unary_math(lw, node, "math.log", "log", False)
    a, b = _math_arg(lw, node.args[0]), _math_arg(lw, node.args[1])
    ft = infer.math2_arg_type(a.type, infer_weak(a), b.type, infer_weak(b))
    la, lb = _in_float(lw, node, "log", [a], ft), _in_float(lw, node, "log", [b], ft)
    return ir.BinOp("/", la, lb, ft, lw.loc(node))


def _predicate(lw, node, fname, name, ufunc=False):
    _nargs(lw, node, fname, 1)
    v = lw.value(node.args[0]) if ufunc else _math_arg(lw, node.args[0])
    if ufunc and isinstance(v.type, T.Complex):  # numpy's loops: of the parts
        re, im = _parts(lw, _strong(lw, v, node), node)
        parts = [_intr(lw, name, [p], T.boolean, node) for p in (re, im)]
        return ir.BoolOp("and" if name == "isfinite" else "or", parts, T.boolean, lw.loc(node))
    if ufunc:
        v = _math_arg_value(lw, v, node.args[0])
    if not isinstance(v.type, T.Float):
        return ir.Const(name == "isfinite", T.boolean, lw.loc(node))
    return _intr(lw, name, [v], T.boolean, node)


# ---------------------------------------------------------------- builtins


def _range(lw, node, name):
    raise lw.error("range() can only be used as the iterable of a for loop", node, "for i in range(n): ...")


def _len(lw, node, name):
    _nargs(lw, node, "len", 1)
    arg = node.args[0]
    if isinstance(arg, ast.Call) and getattr(lw.expr(arg.func), "value", None) is builtins.range:
        return lw.iter_seq(arg)[0]  # len(range(a, b, s)): the loop's trip count
    v = lw.expr(arg)
    if isinstance(v, PyObj) and isinstance(v.value, (tuple, np.ndarray)):
        return PyObj(len(v.value), f"len({v.name})")
    if isinstance(v, PartialIndex):
        v = lw.to_ir(v, node.args[0])
    v = lw.to_ir(v, node.args[0])
    t = v.type
    if isinstance(t, T.Array):
        if t.ndim == 0:
            raise lw.error("len() of a 0-d array", node)
        if isinstance(t, T.CPointer):
            raise lw.error(f"len() of a {t}: a raw pointer has no length", node, "pass the length as an argument")
        return ir.ArrayAttr(v, "shape", 0, T.int64, lw.loc(node))
    if isinstance(t, T.Tuple):
        return lw.const(len(t.elems), T.int64, node, weak=True)
    raise lw.error(f"len() of a {t}", node, "len() works on arrays and tuples")


def _ord(lw, node, name):
    """``ord('a')`` of a one-character string known at compile time: its code point, an int64
    as numba's ``ord`` gives (text bytes compared with ``c == ord('A')``)."""
    _nargs(lw, node, "ord", 1)
    a = node.args[0]
    if isinstance(a, ast.Constant):
        s = a.value
    else:
        v = lw.expr(a)  # a global or closure string
        s = v.value if isinstance(v, PyObj) else None
    if not isinstance(s, str) or len(s) != 1:
        raise lw.error("ord() takes a one-character string constant in kernels", node,
                       "text in a kernel is an array of uint8 codes; compare them with ord('x')")
    return lw.const(ord(s), T.int64, node)


def _abs(lw, node, name, ufunc=False):
    _nargs(lw, node, name, 1)
    v = _scalar(lw, node.args[0], name)
    if is_weak(v):
        return lw.pyconst(abs(v.value), node)
    if isinstance(v.type, T.Boolean):  # abs(True) is numba's int64 1; np.abs takes numpy's boolean loop
        return v if ufunc else lw.cast(v, T.int64, node)
    if isinstance(v.type, T.Integer) and not v.type.signed:
        return v
    if v.type == T.float16:
        return _in_float(lw, node, "abs", [v], T.float16)
    if isinstance(v.type, T.Complex):
        return _complex_abs(lw, v, node)
    return _intr(lw, "abs", [v], v.type, node)


def _minmax(lw, node, name, which=None):
    which = which or name
    for kw in node.keywords:
        raise lw.error(f"{name}() keyword '{kw.arg}' is not supported in kernels", node)
    vals = [lw.value(a) for a in node.args]
    if len(vals) == 1 and isinstance(vals[0].type, T.Array):
        # numba iterates a 1-d array (a 2-d one would compare rows, which numba refuses too)
        a = vals[0]
        if a.type.ndim != 1 or isinstance(a.type.dtype, (T.Complex, T.Record)):
            raise lw.error(f"{name}() of a {a.type} is not supported in kernels", node,
                           f"{name}() takes a 1-d array of real numbers; np.{which}(a) reduces any array")
        return _reduce_array(lw, node, name, "py" + which, a)
    if len(vals) == 1 and isinstance(vals[0].type, T.Tuple):
        tup = vals[0]
        if not is_pure(tup):
            raise lw.error(f"{name}() of a tuple with side effects; assign it to a variable first", node)
        vals = [lw.tuple_get(tup, k, node) for k in range(len(tup.type.elems))]
    if len(vals) < 2:
        raise lw.error(f"{name}() needs at least 2 arguments (or one tuple) in kernels", node)
    for v, a in zip(vals, node.args):
        if not v.type.is_scalar or isinstance(v.type, T.Complex):
            raise lw.error(f"{name}() takes real numbers, not {v.type}", a)
    if all(is_weak(v) for v in vals):
        r = (min if which == "min" else max)(v.value for v in vals)
        return lw.pyconst(r, node)
    t = infer.join_type([(v.type, infer_weak(v)) for v in vals])
    ct = T.int64 if isinstance(t, T.Boolean) else t  # booleans compare as 0/1
    acc = lw.cast(vals[0], ct, node)
    for v in vals[1:]:
        acc = _intr(lw, which, [acc, lw.cast(v, ct, node)], ct, node)
    return lw.cast(acc, t, node)


def _np_minmax(lw, node, name, which):
    """``np.minimum``/``np.maximum`` (a NaN operand gives NaN) and ``np.fmin``/``np.fmax``
    (a NaN operand is ignored), exactly as numpy's loops, sign of equal zeros included."""
    _nargs(lw, node, name, 2)
    vals = [_scalar(lw, a, name) for a in node.args]
    if all(is_weak(v) and not isinstance(v.type, T.Complex) for v in vals):
        return lw.pyconst(_np_minmax_py(which, vals[0].value, vals[1].value), node)
    args = [(v.type, infer_weak(v)) for v in vals]
    if T.float16 in (vals[0].type, vals[1].type):
        t = infer.common_type(*args[0], *args[1])
    else:
        try:
            (t, _), _ = infer.ufunc_types(getattr(np, which), args, f"np.{which}")
        except infer.InferError as e:
            raise lw.error(e.msg, node, e.hint) from None
    if isinstance(t, T.Complex):
        parts = [p for v in vals for p in _parts(lw, lw.cast(v, t, node), node)]
        return _cm_complex(lw, "c" + which, parts, t, node)
    if not isinstance(t, T.Float):
        ct = T.int64 if isinstance(t, T.Boolean) else t
        pick = "min" if which in ("minimum", "fmin") else "max"
        r = _intr(lw, pick, [lw.cast(v, ct, node) for v in vals], ct, node)
        return lw.cast(r, t, node)
    return _intr(lw, which, [lw.cast(v, t, node) for v in vals], t, node)


def _np_minmax_py(which, a, b):
    """The float64 rule of ``minimum``/``maximum``/``fmin``/``fmax`` (``ir.INTRINSICS``), in Python."""
    if not (isinstance(a, float) or isinstance(b, float)):
        return min(a, b) if which in ("minimum", "fmin") else max(a, b)
    a, b = float(a), float(b)
    less = which in ("minimum", "fmin")
    keep_a = a < b if less else a > b
    keep_a = keep_a or ((a != a) if which in ("minimum", "maximum") else (b != b))
    return a if keep_a else b


_NP_MINMAX = {np.minimum: "minimum", np.maximum: "maximum", np.fmin: "fmin", np.fmax: "fmax"}


def _round(lw, node, name):
    _nargs(lw, node, "round", 1, 2, keywords=("ndigits",))
    v = _scalar(lw, node.args[0], "round")
    nd_node = node.args[1] if len(node.args) > 1 else (node.keywords[0].value if node.keywords else None)
    if nd_node is None:
        if is_weak(v):
            try:
                r = round(v.value)
            except (ValueError, OverflowError) as e:  # round(inf), round(nan): as math.floor(inf)
                raise lw.error(f"round({v.value!r}): {e}", node) from None
            return lw.pyconst(r, node)
        if isinstance(v.type, T.Boolean):
            return lw.cast(v, T.int64, node)
        if isinstance(v.type, T.Integer):
            return v
        return lw.cast(_in_float(lw, node, "round", [v], v.type), T.int64, node)
    ndv = lw.value(nd_node)
    if not isinstance(ndv, ir.Const):
        return _round_run_time_digits(lw, v, ndv, node, nd_node)
    nd = ndv.value
    if not isinstance(nd, int) or isinstance(nd, bool) or not isinstance(ndv.type, T.Integer):
        raise lw.error("round()'s ndigits must be an integer", nd_node)
    if is_weak(v):
        return lw.pyconst(round(v.value, nd), node)
    if not isinstance(v.type, T.Float):
        if nd >= 0:
            return lw.cast(v, T.int64, node) if isinstance(v.type, T.Boolean) else v
        raise lw.error("round() of an integer with negative ndigits is not supported in kernels", node)
    ft = v.type
    if nd == 0:
        return _in_float(lw, node, "round", [v], ft)
    # Python rounds the float64 value of x at decimal digit nd (correctly: round(1.7e308, 2) is
    # 1.7e308, never inf); float32/float16 round that float64 result, as np.float32(round(x, nd))
    r = _intr(lw, "round", [lw.cast(v, T.float64, node)], T.float64, node, ndigits=nd)
    return lw.cast(r, ft, node)


def _round_run_time_digits(lw, v, nd, node, nd_node):
    """``round(x, n)`` with ``n`` known at run time only: a float rounds as Python's (its
    float64 value, as the constant form); an integer with ``n >= 0`` is itself (numba gives
    the same), a negative ``n`` is refused as there."""
    if not isinstance(nd.type, (T.Integer, T.Boolean)):
        raise lw.error(f"round()'s ndigits must be an integer, not {nd.type}", nd_node)
    if not isinstance(v.type, T.Float):
        raise lw.error("round() of an integer with ndigits known only at run time is not supported in kernels "
                       "(a negative ndigits rounds it, which numba refuses)", node, "round a float: round(float(x), n)")
    r = _intr(lw, "round_digits", [lw.cast(v, T.float64, node), lw.cast(nd, T.int64, nd_node)], T.float64, node)
    return lw.cast(r, v.type, node)


def _convert(lw, node, name, t):
    if node.keywords:
        raise lw.error(f"{name}() takes no keyword arguments in kernels", node)
    if not node.args:
        return lw.const(0, t, node)
    if isinstance(t, T.Complex) and len(node.args) == 2:
        return _complex_of_parts(lw, node, name, t)
    if len(node.args) != 1:
        raise lw.error(f"{name}() takes one argument in kernels", node)
    v = _scalar(lw, node.args[0], name)
    return lw.cast(v, t, node)


def _complex_of_parts(lw, node, name, t):
    """``np.complex64(re, im)``: numba's two-argument constructor of the numpy complex
    types, which takes real parts only (numpy refuses complex ones too)."""
    re, im = (_scalar(lw, a, name) for a in node.args)
    for v, a in ((re, node.args[0]), (im, node.args[1])):
        if isinstance(v.type, T.Complex):
            raise lw.error(f"{name}(real, imag) takes real parts, not a {v.type}", a)
    return _make(lw, re, im, t, node)


def _pow(lw, node, name):
    _nargs(lw, node, "pow", 2)
    return lw.binop("**", lw.value(node.args[0]), lw.value(node.args[1]), node)


def _divmod(lw, node, name):
    """``divmod(a, b)`` -> ``(a // b, a % b)`` with Python's signs (numba's builtin); each
    argument is evaluated once."""
    _nargs(lw, node, "divmod", 2)
    a, b = lw.value(node.args[0]), lw.value(node.args[1])
    for v, n in ((a, node.args[0]), (b, node.args[1])):
        if not v.type.is_scalar or isinstance(v.type, T.Complex):
            raise lw.error(f"divmod() takes real numbers, not {v.type}", n)
    a, b = lw.once(a, node), lw.once(b, node)
    t = None if is_weak(a) and is_weak(b) else infer.divmod_type(a.type, infer_weak(a), b.type, infer_weak(b))
    if t is not None:  # numba's DivMod signature: both operands converted first
        a, b = lw.cast(a, t, node), lw.cast(b, t, node)
    q, r = lw.binop("//", a, b, node), lw.binop("%", a, b, node)
    # folded constants leave their weakness behind: a tuple element has its own type
    q, r = (ir.Const(x.value, x.type, x.loc) if is_weak(x) else x for x in (q, r))
    return ir.TupleExpr([q, r], T.Tuple((q.type, r.type)), lw.loc(node))


def _int(lw, node, name):
    if len(node.args) == 1 and not node.keywords:
        v = _scalar(lw, node.args[0], "int")
        # numba's int() of an integer keeps its type (int(int8) is int8, so -int(x) negates in int8)
        if type(v.type) is T.Integer and not is_weak(v):
            return v
        return lw.cast(v, T.int64, node)
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
    if len(node.args) == 1 and not node.keywords:
        v = _scalar(lw, node.args[0], "float")
        if v.type in (T.float32, T.float64) and not is_weak(v):
            return v  # numba's float() of a float keeps its type: float(float32) is float32
    return _convert(lw, node, "float", T.float64)


def _bool(lw, node, name):
    if node.args and len(node.args) == 1 and not node.keywords:
        return lw.cond(node.args[0])
    return _convert(lw, node, "bool", T.boolean)


def _iterable_arg(lw, node, name, hi):
    """The iterable of ``sum``/``any``/``all``: a tuple, or a 1-d array (numba's overloads iterate
    it; iterating a 2-d array gives rows, which they cannot add or test)."""
    _nargs(lw, node, name, 1, hi, keywords=("start",) if hi > 1 else ())
    it = lw.value(node.args[0])
    t = it.type
    if isinstance(t, T.Array) and t.ndim == 1 and not isinstance(t.dtype, T.Record):
        return it
    if isinstance(t, T.Tuple) and not isinstance(t, (T.NoneType, T.Optional)) and all(e.is_scalar for e in t.elems):
        return lw.once(it, node)
    raise lw.error(f"{name}() in kernels takes a tuple of numbers or a 1-d array, not a {t}", node.args[0])


def _builtin_sum(lw, node, name):
    """``sum(t)``, ``sum(t, start)`` as numba's overload computes it: ``start`` (0) plus each item in
    turn -- a tuple's items folded with ``+``, a 1-d array's by its sequential sum, then ``start``."""
    it = _iterable_arg(lw, node, name, 2)
    start = (lw.value(node.args[1]) if len(node.args) > 1 else lw.value(node.keywords[0].value) if node.keywords
             else lw.const(0, T.int64, node, weak=True))
    if isinstance(it.type, T.Array):
        return lw.binop("+", start, _reduce_array(lw, node, name, "sum", it), node)
    acc = start
    for k in range(len(it.type.elems)):
        acc = lw.binop("+", acc, lw.tuple_get(it, k, node), node)
    return acc


def _builtin_any_all(lw, node, name, which):
    """``any(t)``/``all(t)`` of a tuple (each item's truth, Python's) or a 1-d array (np.any/np.all)."""
    it = _iterable_arg(lw, node, name, 1)
    if isinstance(it.type, T.Array):
        return _reduce_array(lw, node, name, which, it)
    loc = lw.loc(node)
    if not it.type.elems:
        return lw.const(which == "all", T.boolean, node)
    truths = [lw.cast(lw.tuple_get(it, k, node), T.boolean, node) for k in range(len(it.type.elems))]
    return ir.BoolOp("or" if which == "any" else "and", truths, T.boolean, loc)


_BUILTINS = {
    builtins.sum: _builtin_sum,
    builtins.any: lambda lw, node, name: _builtin_any_all(lw, node, name, "any"),
    builtins.all: lambda lw, node, name: _builtin_any_all(lw, node, name, "all"),
    builtins.range: _range,
    builtins.len: _len,
    builtins.abs: _abs,
    builtins.ord: _ord,
    builtins.min: lambda lw, node, name: _minmax(lw, node, "min"),
    builtins.max: lambda lw, node, name: _minmax(lw, node, "max"),
    builtins.round: _round,
    builtins.int: _int,
    builtins.float: _float,
    builtins.bool: _bool,
    builtins.pow: _pow,
    builtins.divmod: _divmod,
    builtins.print: lambda lw, node, name: _print(lw, node),
    builtins.breakpoint: lambda lw, node, name: _breakpoint(lw, node, name),
}


def _breakpoint(lw, node, name):
    """``breakpoint()`` / ``pdb.set_trace()``: the sim target stops in pdb there."""
    if node.args or node.keywords:
        raise lw.error(f"{name}() in kernels takes no arguments", node)
    return _intr(lw, "breakpoint", [], T.void, node)


def _print(lw, node):
    """``print(a, "text", b)``: one line, items separated by spaces, formatted as
    numba.cuda does (ints ``%lld``/``%llu``, floats ``%f``; booleans True/False; complex
    numbers, which numba.cuda cannot print, as ``(1.000000-2.000000j)``)."""
    for kw in node.keywords:
        raise lw.error(f"print() keyword '{kw.arg}' is not supported in kernels", node,
                       "print numbers and string literals separated by commas")
    fmt, args = [], []
    for a in node.args:
        text = a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None
        v = None
        if text is None:
            v = lw.expr(a)
            if isinstance(v, PyObj) and isinstance(v.value, str):
                text, v = v.value, None
        if text is not None:
            fmt.append(text.replace("%", "%%"))
            continue
        if isinstance(a, ast.Starred):
            raise lw.error("print(*args) is not supported in kernels", a)
        if isinstance(v, PyObj) and isinstance(v.value, stubs.Dim3Stub):  # numba prints a Dim3 as a tuple
            fmt.append("(%lld, %lld, %lld)")
            args += [lw.cast(lw.expr(ast.copy_location(ast.Attribute(a, axis, ast.Load()), a)), T.int64, a)
                     for axis in "xyz"]
            continue
        fmt.append(_print_item(lw, lw.to_ir(v, a), a, args))
    return _intr(lw, "print", args, T.void, node, format=" ".join(fmt) + "\n")


def _print_item(lw, v, a, args):
    """The format of one printed value, its parts appended to ``args``. A tuple prints as
    numba's does: ``(1, (2.000000, 3))``, a 1-tuple ``(1,)``."""
    t = v.type
    if type(t) is T.Tuple and not t.names:
        if not isinstance(v, ir.Var):  # one evaluation however many elements are read
            v = lw.temp(v, a)
        parts = [_print_item(lw, ir.TupleGet(v, i, e, lw.loc(a)), a, args) for i, e in enumerate(t.elems)]
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if not t.is_scalar:
        raise lw.error(f"print() in kernels takes numbers and string literals (and tuples of them), not a {t}", a,
                       "print the elements one by one, e.g. print(a[0], a[1])")
    if isinstance(t, T.Boolean):
        args.append(v)
        return "%s"
    if isinstance(t, T.Integer):
        args.append(lw.cast(v, T.int64 if t.signed else T.uint64, a))
        return "%llu" if not t.signed else "%lld"
    if isinstance(t, T.Complex):  # numba.cuda has no format for it: Python's shape, numba's %f parts
        args += [lw.cast(p, T.float64, a) for p in _parts(lw, v, a)]
        return "(%f%+fj)"
    args.append(lw.cast(v, T.float64, a))
    return "%f"


# ---------------------------------------------------------------- namedtuples, int.bit_count


def _namedtuple(lw, node, cls):
    """``Point(1.0, y=2.0)`` of a ``collections.namedtuple``/``typing.NamedTuple`` class."""
    fields = cls._fields
    defaults = dict(getattr(cls, "_field_defaults", {}) or {})
    a = _args(lw, node, list(fields), defaults, cls.__name__)
    elems = []
    for fname in fields:
        v = lw.value(a[fname]) if fname in a else lw.to_ir(PyObj(defaults[fname], f"{cls.__name__}.{fname}"), node)
        if isinstance(v.type, T.Void):
            raise lw.error("a call that returns nothing cannot be a namedtuple field", node)
        elems.append(_strong(lw, v, node) if is_weak(v) else v)
    return ir.TupleExpr(elems, T.Tuple(tuple(e.type for e in elems), tuple(fields), cls.__name__), lw.loc(node))


def _vector(lw, node, vt):
    """``float4(a, f2, b)``: numba.cuda's vector-type constructor. Scalars convert to the base
    type; vectors of the same base type contribute their elements in order."""
    if node.keywords:
        raise lw.error(f"{vt.__name__}() takes positional arguments only", node)
    base = T.SCALARS[vt.base]
    elems = []
    for a in node.args:
        v = lw.value(a)
        t = v.type
        if isinstance(t, T.Tuple) and t.label in stubs.VECTOR_TYPES:
            other = stubs.VECTOR_TYPES[t.label]
            if other.base != vt.base:
                raise lw.error(f"{vt.__name__}() takes {vt.base} scalars and vectors, not a {t.label}", a)
            v = lw.once(v, a)
            elems += [lw.tuple_get(v, k, a) for k in range(len(t.elems))]
        elif t.is_scalar and not isinstance(t, T.Complex):
            elems.append(lw.cast(v, base, a))
        else:
            raise lw.error(f"{vt.__name__}() takes {vt.base} scalars and vectors, not a {t}", a)
    if len(elems) != vt.n:
        raise lw.error(f"{vt.__name__}() needs {vt.n} elements, got {len(elems)}", node,
                       "pass scalars and smaller vectors adding up to its size")
    names = tuple("xyzw"[: vt.n])
    return ir.TupleExpr(elems, T.Tuple(tuple(e.type for e in elems), names, vt.__name__), lw.loc(node))


def _transpose(lw, node, name, arr):
    """``a.transpose()`` (``arr``: the array) or ``np.transpose(a)`` (``arr`` None):
    ``a.T``. Only the reversed-axes form: no ``axes`` argument."""
    if arr is None:
        arr = lw.value(node.args[0])
    else:
        _nargs(lw, node, name, 0)
    if not isinstance(arr.type, T.Array):
        raise lw.error(f"{name}() of a {arr.type}, not an array", node)
    return lw.transpose(arr, node)


def _view(lw, node, arr):
    """``a.view(dtype)``: the array's bytes as items of another scalar type (numpy's
    view). Items of another size rescale the last axis, which must be contiguous
    (a "C" array: ``a[i:j]``, ``a[i, :]`` of one)."""
    _nargs(lw, node, "view", 1)
    at = arr.type
    dt = lw.dtype_of(lw.expr(node.args[0]), node.args[0])
    if not dt.is_scalar:
        raise lw.error(f"view() needs a scalar dtype, not {dt}", node.args[0])
    if isinstance(at.dtype, T.Record):
        raise lw.error("view() of a record array is not supported in kernels", node)
    if dt.nbytes != at.dtype.nbytes and (at.ndim == 0 or at.layout != "C"):
        raise lw.error(f"view() as {dt} of a {at}: items of another size need a C-contiguous array", node,
                       "view a whole array or a row or unit-step slice of one")
    return ir.Reinterpret(arr, 0, False, ir.reinterpret_type(at, dt, False), lw.loc(node))


def _reshape(lw, node, arr):
    """``a.reshape(shape)`` / ``a.reshape(d0, d1, ...)`` of a C-contiguous array (numba's):
    extents known at run time, one of them may be -1 (numpy's rule). A shape whose size
    differs from the array's gives an empty array (``debug=True``: ``KernelValueError``,
    numpy's ValueError)."""
    at = arr.type
    if node.keywords:
        raise lw.error("reshape() in kernels takes no keyword arguments", node)
    if at.ndim == 0 or at.layout != "C":
        raise lw.error(f"reshape() of a {at}: kernels reshape C-contiguous arrays only (as numba)", node,
                       "reshape the whole array, or a row or unit-step slice of a C-contiguous one")
    if len(node.args) == 1:
        v = lw.value(node.args[0])
        if isinstance(v.type, T.Tuple):
            v = lw.once(v, node)
            dims = [lw.tuple_get(v, k, node) for k in range(len(v.type.elems))]
        else:
            dims = [v]
    else:
        dims = [lw.value(a) for a in node.args]
    if not dims or len(dims) > 4:
        raise lw.error(f"reshape() to {len(dims)} dimensions: kernels take 1 to 4", node)
    for d in dims:
        if not isinstance(d.type, (T.Integer, T.Boolean)):
            raise lw.error(f"reshape() extents must be integers, not {d.type}", node)
    loc = lw.loc(node)
    i64 = T.int64
    c = lambda v: ir.Const(v, i64, loc)  # noqa: E731
    dims = [lw.once(lw.cast(d, i64, node), node) for d in dims]
    arr = lw.once(arr, node)
    size = lw.once(ir.ArrayAttr(arr, "size", None, i64, loc), node)
    known = c(1)  # the product of the extents other than -1
    negs = c(0)
    for d in dims:
        neg = ir.Compare("==", d, c(-1), T.boolean, loc)
        known = ir.BinOp("*", known, ir.IfExp(neg, c(1), d, i64, loc), i64, loc)
        negs = ir.BinOp("+", negs, ir.IfExp(neg, c(1), c(0), i64, loc), i64, loc)
    known, negs = lw.once(known, node), lw.once(negs, node)
    inferred = lw.once(ir.IfExp(ir.Compare("==", known, c(0), T.boolean, loc), c(0),
                                ir.BinOp("//", size, known, i64, loc), i64, loc), node)
    dims = [lw.once(ir.IfExp(ir.Compare("==", d, c(-1), T.boolean, loc), inferred, d, i64, loc), node) for d in dims]
    total = c(1)
    for d in dims:
        total = ir.BinOp("*", total, d, i64, loc)
    ok = [ir.Compare("<=", negs, c(1), T.boolean, loc), ir.Compare("==", total, size, T.boolean, loc)]
    ok += [ir.Compare(">=", d, c(0), T.boolean, loc) for d in dims]
    ok = lw.once(ir.BoolOp("and", ok, T.boolean, loc), node)
    if lw.mb.debug:
        fail = ir.Intrinsic("value_error", [], T.void, {"message": "cannot reshape array: the total size "
                                                                   "of the new array must be unchanged"}, loc)
        lw.emit(ir.If(ok, [], [ir.ExprStmt(fail, loc)], loc))
    dims = [lw.once(ir.IfExp(ok, d, c(0), i64, loc), node) for d in dims]
    return ir.Reshape(arr, dims, at.with_(ndim=len(dims), layout="C"), loc)


def _bit_count(lw, node, bm):
    """``x.bit_count()``: set bits of ``abs(x)`` (Python's int.bit_count), int64."""
    _nargs(lw, node, "bit_count", 0)
    v = _strong(lw, bm.value, node) if is_weak(bm.value) else bm.value
    if is_weak(bm.value):
        return lw.pyconst(abs(bm.value.value).bit_count(), node)
    if isinstance(v.type, T.Boolean):
        return lw.cast(v, T.int64, node)
    if v.type.signed:
        v = ir.IfExp(ir.Compare("<", v, ir.Const(0, v.type, lw.loc(node)), T.boolean, lw.loc(node)),
                     ir.UnaryOp("-", v, v.type, lw.loc(node)), v, v.type, lw.loc(node))
    # abs(MIN) wraps to MIN, whose bit pattern has the one bit Python counts too
    return lw.cast(_intr(lw, "popc", [v], T.int32, node), T.int64, node)


# ---------------------------------------------------------------- the operator module

_OPERATORS = None


def _operator_table():
    """``operator.add`` -> ("bin", "+") etc.: what each supported function means."""
    global _OPERATORS
    if _OPERATORS is None:
        import operator as op

        bins = {op.add: "+", op.sub: "-", op.mul: "*", op.truediv: "/", op.floordiv: "//", op.mod: "%",
                op.pow: "**", op.lshift: "<<", op.rshift: ">>", op.and_: "&", op.or_: "|", op.xor: "^"}
        # the in-place forms act like the plain ones on numbers (which are immutable)
        bins.update({op.iadd: "+", op.isub: "-", op.imul: "*", op.itruediv: "/", op.ifloordiv: "//",
                     op.imod: "%", op.ipow: "**", op.ilshift: "<<", op.irshift: ">>", op.iand: "&",
                     op.ior: "|", op.ixor: "^"})
        cmps = {op.lt: "<", op.le: "<=", op.eq: "==", op.ne: "!=", op.gt: ">", op.ge: ">="}
        unary = {op.neg: ast.USub(), op.pos: ast.UAdd(), op.invert: ast.Invert(), op.inv: ast.Invert(),
                 op.not_: ast.Not()}
        _OPERATORS = {**{f: ("bin", o) for f, o in bins.items()}, **{f: ("cmp", o) for f, o in cmps.items()},
                      **{f: ("unary", o) for f, o in unary.items()}, op.abs: ("abs", None),
                      op.truth: ("truth", None), op.index: ("index", None), op.getitem: ("getitem", None)}
    return _OPERATORS


def _operator_call(lw, node, name, what):
    kind, o = what
    if kind in ("bin", "cmp"):
        _nargs(lw, node, name, 2)
        lhs, rhs = lw.value(node.args[0]), lw.value(node.args[1])
        return lw.binop(o, lhs, rhs, node) if kind == "bin" else lw.compare(o, lhs, rhs, node)
    if kind == "getitem":  # operator.getitem(a, i) is a[i]
        _nargs(lw, node, name, 2)
        return lw.expr(ast.copy_location(ast.Subscript(node.args[0], node.args[1], ast.Load()), node))
    _nargs(lw, node, name, 1)
    if kind == "unary":
        return lw.expr_UnaryOp(ast.copy_location(ast.UnaryOp(o, node.args[0]), node))
    if kind == "abs":
        return _abs(lw, node, name)
    if kind == "truth":
        return lw.cond(node.args[0])
    v = lw.value(node.args[0])
    if not isinstance(v.type, (T.Integer, T.Boolean)):
        raise lw.error(f"operator.index() needs an integer, not {v.type}", node.args[0])
    return v


# ---------------------------------------------------------------- device functions


def _device_call(lw, dev, name, node):
    pyfunc = getattr(dev, "py_func", None)
    if pyfunc is None or not hasattr(pyfunc, "__code__"):
        raise lw.error(f"device function '{name}' has no Python function (py_func)", node)
    code = pyfunc.__code__
    if code.co_flags & inspect.CO_VARKEYWORDS:
        raise lw.error(f"device function '{name}' has **kwargs parameters, which are not supported in kernels", node,
                       "list the parameters explicitly")
    pnames = list(code.co_varnames[: code.co_argcount])
    defaults = pyfunc.__defaults__ or ()
    first_default = len(pnames) - len(defaults)
    star = code.co_varnames[code.co_argcount + code.co_kwonlyargcount] if code.co_flags & inspect.CO_VARARGS else None
    if len(node.args) > len(pnames) and star is None:
        raise lw.error(
            f"device function '{name}' takes {len(pnames)} argument(s) but {len(node.args)} were given", node
        )
    given = {}
    for pn, a in zip(pnames, node.args):
        given[pn] = a
    if star is not None:
        # the arguments past the named ones, as one tuple (numba's StarArgTuple): `def f(*args)`
        given[star] = ast.copy_location(ast.Tuple(list(node.args[len(pnames):]), ast.Load()), node)
    for kw in node.keywords:
        if kw.arg is None:
            raise lw.error("**kwargs in a call is not supported in kernels", node)
        if kw.arg not in pnames:
            raise lw.error(f"device function '{name}' has no parameter '{kw.arg}'", node)
        if kw.arg in given:
            raise lw.error(f"device function '{name}' got two values for '{kw.arg}'", node)
        given[kw.arg] = kw.value
    sigs = getattr(dev, "_signatures", None) or []
    if star is not None:
        pnames.append(star)
    try:
        return _device_call_with(lw, dev, name, node, pnames, given, defaults, first_default, sigs, False)
    except CompileError as e:
        if sigs or not getattr(e, "needs_constant", False):
            raise
        # as numba: int literal arguments become compile-time values only when the callee needs them
        return _device_call_with(lw, dev, name, node, pnames, given, defaults, first_default, sigs, True)


def _device_call_with(lw, dev, name, node, pnames, given, defaults, first_default, sigs, literal_ints):
    pyfunc = dev.py_func
    assigned = lw.mb.assigned_params(pyfunc)
    args, arg_nodes, static = [], [], {}
    for k, pn in enumerate(pnames):
        if pn in given:
            a = given[pn]
            v = lw.expr(a)
        elif k >= first_default:
            a = node
            v = PyObj(defaults[k - first_default], f"default of {pn}")
        else:
            raise lw.error(f"device function '{name}' is missing argument '{pn}'", node)
        sv = static_value(v)
        if _is_literal(sv) and (pn in assigned or not (literal_ints or isinstance(sv, bool))):
            # bool literals always (numba types them as literals, so `if flag:` is pruned and the
            # dead branch never typed); ints and int tuples only when the callee needs a constant
            sv = NOT_STATIC
        if sv is not NOT_STATIC and not sigs:
            static[pn] = sv  # a compile-time value: the callee is specialised to it, as numba does
            continue
        v = lw.to_ir(v, a)
        if isinstance(v.type, T.Void):
            raise lw.error("a call that returns nothing cannot be an argument", a)
        args.append(_strong(lw, v, a))
        arg_nodes.append(a)
    ret = None
    if sigs:
        from pykern.frontend import signature_choice as overloads

        try:
            ret, sig_types = overloads.choose(sigs, [a.type for a in args], f"device function '{name}'",
                                              ambiguous_ok=True)
        except TypeError as e:
            raise lw.error(str(e), node) from None
        # an array keeps its own type where the declared one admits it (a C-contiguous or shared
        # array for `float64[:]`): the callee is specialised to it, as the array is passed as is
        sig_types = [a.type if _admits(t, a.type) else t for a, t in zip(args, sig_types)]
        # the declared signature converts the arguments (numba: int64 params given 1.5 get 1)
        args = [lw.cast(a, t, an) for a, t, an in zip(args, sig_types, arg_nodes)]
    fn = lw.mb.device_function(pyfunc, [a.type for a in args], lw.loc(node), static=static, ret=ret)
    opts = getattr(dev, "options", None) or {}
    if opts.get("forceinline") or opts.get("inline") == "always":  # numba's spellings
        fn.force_inline = True
    if fn.returns_param < 0:
        return ir.Call(fn.name, args, fn.return_type, lw.loc(node))
    # `return A` of an array parameter: call for the effects, the value is the caller's argument
    k = fn.returns_param
    args[k] = lw.once(args[k], arg_nodes[k])
    lw.emit(ir.ExprStmt(ir.Call(fn.name, args, fn.return_type, lw.loc(node)), lw.loc(node)))
    return args[k]


def _overload_call(lw, f, name, node):
    """A call of a function with ``@overload``s: the implementation the first overload that
    accepts the arguments' types returns, compiled as a device function. None when all
    decline and pykern has a meaning of its own for ``f`` (a numpy or math function)."""
    if any(kw.arg is None for kw in node.keywords):
        raise lw.error("**kwargs in a call is not supported in kernels", node)
    argtypes = tuple(_overload_arg_type(lw, a) for a in node.args)
    kwtypes = tuple((kw.arg, _overload_arg_type(lw, kw.value)) for kw in node.keywords)
    shown = ", ".join([*map(str, argtypes), *(f"{k}={t}" for k, t in kwtypes)])
    try:
        impl = extending.implementation(f, argtypes, kwtypes)
    except CompileError:
        raise
    except Exception as e:  # the overload function's own TypingError, or a bug in it
        raise lw.error(f"the overload of '{name}' for ({shown}) raised {type(e).__name__}: {e}", node) from None
    if impl is None:
        if inspect.isfunction(f):
            raise lw.error(f"no overload of '{name}' accepts ({shown})", node,
                           "every @overload function returned None for these argument types")
        return None
    lw.mb.uses_overloads = True
    return _device_call(lw, impl, name, node)


def _overload_arg_type(lw, a):
    """The type an overload function is given for argument ``a`` (evaluated for its type
    only: the statements it needs are emitted when the implementation is called)."""
    saved, lw.out = lw.out, []
    try:
        v = lw.expr(a)
        if isinstance(v, PyObj) and v.value is None:
            return T.none
        return _strong(lw, lw.to_ir(v, a), a).type  # a function or class as an argument is refused here
    finally:
        lw.out = saved


NOT_STATIC = object()


def _is_literal(sv) -> bool:
    """An int, bool or int-tuple literal argument (a candidate compile-time value)."""
    return isinstance(sv, int) or (isinstance(sv, tuple) and bool(sv))


def _admits(declared, actual) -> bool:
    """An array parameter declared ``declared`` takes an ``actual`` array unchanged: same dtype
    and ndim, and the declared layout is "A" (any strides) or the same."""
    return (isinstance(declared, T.Array) and isinstance(actual, T.Array) and declared.dtype == actual.dtype
            and declared.ndim == actual.ndim and declared.layout in ("A", actual.layout))


def static_value(v):
    """The compile-time value of a device-function argument, or ``NOT_STATIC``:
    types (``uint32``, ``np.float64``, numba types), functions (``cuda.atomic.add``,
    device functions, ``operator.add``, ``math.sin``) and int literals are passed
    at compile time; the callee is specialised per value (numba does the same)."""
    if isinstance(v, ir.Const):
        if isinstance(v.type, T.Boolean):
            return bool(v.value)
        if (is_weak(v) or getattr(v, "_literal", False)) and isinstance(v.value, int) and not isinstance(v.value, bool):
            return v.value
        return NOT_STATIC
    if isinstance(v, ir.TupleExpr):
        return _int_tuple([e.value if isinstance(e, ir.Const) else None for e in v.elems])
    if not isinstance(v, PyObj):
        return NOT_STATIC
    x = v.value
    if x is None:
        return None  # an optional argument left out or given None: `if z is None:` is pruned
    if isinstance(x, tuple):
        return _int_tuple(x)
    if isinstance(x, bool) or isinstance(x, (float, np.generic, np.ndarray)):
        return NOT_STATIC
    if isinstance(x, int):
        return x
    if isinstance(x, stubs.Stub):
        return NOT_STATIC if x._pk_name in ("warpsize", "laneid") else x
    if isinstance(x, (T.Type, np.dtype, type)) or callable(x) or _foreign_scalar_type(x) is not None:
        return x
    return NOT_STATIC


def _int_tuple(values):
    """A tuple of Python ints (a shape such as ``(4, 8)``), else ``NOT_STATIC``."""
    if values and all(isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) for x in values):
        return tuple(int(x) for x in values)
    return NOT_STATIC


def _this_group(lw, node, which):
    _nargs(lw, node, which, 0)
    return PyObj(stubs._GRID_GROUP if which == "cg.this_grid" else stubs._BLOCK_GROUP, which + "()")


def _group_sync(lw, node, which):
    _nargs(lw, node, which, 0)
    return _intr(lw, "grid_sync" if which == "cg.grid_group.sync" else "syncthreads", [], T.void, node)


def group_attr(lw, group, attr, node):
    """``g.sync`` (a callable), ``g.size``, ``g.thread_rank`` of a cooperative group
    (int64 values: all threads of the grid or block, and this thread's linear rank)."""
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


# ---------------------------------------------------------------- complex numbers, cmath (lang2)


def _complex_of_value(lw, v, node):
    """``v`` as a complex value: complex stays, reals become complex of their precision."""
    if isinstance(v.type, T.Complex):
        return v
    if is_weak(v):
        return lw.const(complex(v.value), T.complex128, node, weak=True)
    return lw.cast(v, T.complex_of(v.type if isinstance(v.type, T.Float) else T.float64), node)


def _parts(lw, z, node):
    """(real, imag) expressions of a complex value (evaluated once)."""
    z = lw.once(z, node)
    f = z.type.component
    if isinstance(z, ir.Const):
        c = complex(z.value)
        return lw.const(c.real, f, node), lw.const(c.imag, f, node)
    return _intr(lw, "real", [z], f, node), _intr(lw, "imag", [z], f, node)


def _make(lw, re, im, ct, node):
    f = ct.component
    return _intr(lw, "complex", [lw.cast(re, f, node), lw.cast(im, f, node)], ct, node)


def real_imag(lw, v, attr, node):
    """``x.real`` / ``x.imag`` of any number (as numpy scalars have them)."""
    t = v.type
    if is_weak(v):
        return lw.pyconst(getattr(v.value, attr), node)
    if isinstance(t, T.Complex):
        if isinstance(v, ir.Const):
            return lw.const(getattr(complex(v.value), attr), t.component, node)
        return _intr(lw, attr, [v], t.component, node)
    if isinstance(t, T.Boolean):
        t = T.int64
        v = lw.cast(v, t, node)
    return v if attr == "real" else lw.const(0, t, node)


def number_method(lw, node):
    """``z.conjugate()`` / ``z.conj()``; None when ``node.func``'s base is not a kernel value."""
    base = lw.expr(node.func.value)
    if isinstance(base, PyObj) and isinstance(base.value, (int, float, complex, np.number)):
        base = lw.to_ir(base, node.func.value)  # a frozen number
    if not isinstance(base, ir.Expr):
        return None
    if node.args or node.keywords:
        raise lw.error(f"{node.func.attr}() takes no arguments", node)
    return _conjugate_value(lw, base, node)


def _conjugate_value(lw, z, node):
    if not z.type.is_scalar:
        raise lw.error(f"a {z.type} value has no method '{getattr(node.func, 'attr', 'conjugate')}'", node)
    if not isinstance(z.type, T.Complex):
        return z  # conjugate of a real number is itself
    if is_weak(z):
        return lw.pyconst(z.value.conjugate(), node)
    re, im = _parts(lw, z, node)
    return _make(lw, re, ir.UnaryOp("-", im, im.type, lw.loc(node)), z.type, node)


def _np_conj(lw, node, name):
    _nargs(lw, node, name, 1)
    z = _scalar(lw, node.args[0], name)
    if isinstance(z.type, T.Boolean) and not is_weak(z):
        return lw.cast(z, T.int8, node)  # numba's loop for a boolean (numpy's too): int8
    return _conjugate_value(lw, z, node)


def _np_real_imag(attr):
    def handler(lw, node, name):
        _nargs(lw, node, name, 1)
        return real_imag(lw, _scalar(lw, node.args[0], name), attr, node)

    return handler


def _complex_builtin(lw, node, name):
    """``complex()``, ``complex(x)``, ``complex(re, im)``: complex128, as Python's complex, but
    complex64 when the parts are float32 (numba's rule; a literal part stays weak)."""
    a = _args(lw, node, ["real", "imag"], {"real": None, "imag": None}, "complex")
    vals = [_scalar(lw, a[k], "complex()") for k in ("real", "imag") if k in a]
    if all(is_weak(v) for v in vals):
        return lw.const(complex(*[v.value for v in vals]), T.complex128, node, weak=True)
    single = all(v.type == T.float32 or (is_weak(v) and type(v.value) in (int, float)) for v in vals)
    ct = T.complex64 if single else T.complex128
    if len(vals) == 1:
        return lw.cast(vals[0], ct, node)
    re, im = vals
    if not isinstance(re.type, T.Complex) and not isinstance(im.type, T.Complex):
        return _make(lw, re, im, ct, node)
    # complex(a, b) with complex parts is a + b*1j (Python's rule)
    return lw.binop("+", lw.cast(re, ct, node), lw.binop("*", lw.cast(im, ct, node), lw.const(1j, ct, node), node), node)


def _array_item(lw, node, a):
    """``a.item()`` of a 0-d array (what ``np.nditer`` yields): its element."""
    _nargs(lw, node, "item", 0)
    if a.type.ndim != 0 or isinstance(a.type.dtype, T.Record):
        raise lw.error(f"item() of a {a.type} array is not supported in kernels", node,
                       "item() reads a 0-d array (an element of np.nditer); index other arrays: a[i]")
    return ir.Load(a, [], a.type.dtype, lw.loc(node))


def _complex_abs(lw, z, node):
    # numba's abs, np.abs and np.absolute of a complex are all math.hypot (numbers.complex_abs_impl),
    # correctly rounded where numpy's npy_cabsf can be an ulp off
    re, im = _parts(lw, z, node)
    return _intr(lw, "hypot", [re, im], z.type.component, node)


def complex_order(lw, op, a, b, node):
    """``a < b`` ... of complex numbers as numpy's ufuncs order them (``np.less`` and friends):
    by the real parts, then the imaginary parts; a pair with a NaN part is unordered."""
    t = infer.common_type(a.type, infer_weak(a), b.type, infer_weak(b))
    parts = [p for v in (a, b) for p in _parts(lw, lw.cast(v, t, node), node)]
    return _cm_call(lw, {"<": "clt", "<=": "cle", ">": "cgt", ">=": "cge"}[op], parts, node)


def _cm_call(lw, fname, args, node):
    """Call device function ``_cmath.<fname>`` on float args; returns its IR call."""
    _cmath = stubs.DEVICE_LIBRARIES["cmath"]

    dev = getattr(_cmath, fname)
    fn = lw.mb.device_function(dev.py_func, [a.type for a in args], lw.loc(node))
    return ir.Call(fn.name, args, fn.return_type, lw.loc(node))


def _cm_complex(lw, fname, parts, ct, node, special=None):
    """A complex result of ``_cmath.<fname>(*parts)`` (which returns a (re, im) tuple);
    with ``special`` (a Python ``cmath`` function) an argument with an infinite or NaN
    part gets Python's special value, as numba.cuda gives it."""
    r = lw.temp(_cm_call(lw, fname, parts, node), node)
    f = ct.component
    loc = lw.loc(node)
    # a part need not be of the component type: a branch assigning a float64 literal
    # (``re = math.inf``) widens the variable to float64, as numba unifies it
    re, im = (lw.cast(ir.TupleGet(r, k, r.type.elems[k], loc), f, node) for k in (0, 1))
    if special is not None:
        re, im = _special_values(lw, special, parts, f, re, im, node)
    return _intr(lw, "complex", [re, im], ct, node)


_SPECIAL_TABLES = {}


def _special_values(lw, pyfunc, parts, f, re, im, node):
    """``(re, im)``, replaced by a row of ``_cmath.special_table(pyfunc)`` where it has one."""
    _cmath = stubs.DEVICE_LIBRARIES["cmath"]
    key = (pyfunc, f)
    tab = _SPECIAL_TABLES.get(key)
    if tab is None:
        tab = _SPECIAL_TABLES[key] = _cmath.special_table(pyfunc).astype(f.np_dtype)
    loc = lw.loc(node)
    k = lw.temp(_cm_call(lw, "cspecial_index", parts[:2], node), node)
    row = lw.temp(ir.IfExp(ir.Compare("<", k, ir.Const(0, k.type, loc), T.boolean, loc),
                           ir.Const(0, k.type, loc), k, k.type, loc), node)
    arr = lw.const_array(tab, f"cmath_{pyfunc.__name__}_special", node)
    cell = [ir.Load(arr, [row, ir.Const(c, T.int64, loc)], f, loc) for c in range(3)]
    use = lw.temp(ir.BoolOp("and", [ir.Compare(">=", k, ir.Const(0, k.type, loc), T.boolean, loc),
                                    ir.Compare("!=", cell[2], ir.Const(0.0, f, loc), T.boolean, loc)], T.boolean, loc),
                  node)
    return ir.IfExp(use, cell[0], re, f, loc), ir.IfExp(use, cell[1], im, f, loc)


#: numba's cutoff: larger exponents go to ``math.pow`` in float64 (``int_power``)
_POW_CUTOFF = 0x10000


def is_float_int_power(lhs, rhs) -> bool:
    """``lhs ** rhs`` takes numba's float-to-integer-power signatures (``BinOpPower``: float32
    or float64 with int32/int64/uint64, which every integer and boolean converts to)."""
    lt = lhs.type
    if not (lt in (T.float32, T.float64) or (is_weak(lhs) and isinstance(lhs.value, float))):
        return False
    if is_weak(rhs):
        return isinstance(rhs.value, int) and not isinstance(rhs.value, bool)
    return type(rhs.type) in (T.Integer, T.Boolean)


def float_int_power(lw, lhs, rhs, node):
    """``float ** int`` as numba computes it: in the float's type (a weak float literal is
    float64), by repeated squaring (``_integers.float_int_power``), a negative exponent
    inverting the result in float64 (numba's ``1.0 / r``), an exponent beyond 0x10000 in
    magnitude by ``pow`` in float64 (numba's ``math.pow(a, float(b))``). Bit-exact with numba:
    ``pow`` of the float32 operands rounds differently (1.1f ** 7 differs in the last bit)."""
    loc = lw.loc(node)
    t = T.float64 if is_weak(lhs) else lhs.type
    a = lw.once(lw.cast(lhs, t, node), node)

    def inverse(r):  # numba's 1.0 / r, in float64
        return lw.cast(ir.BinOp("/", ir.Const(1.0, T.float64, loc), lw.cast(r, T.float64, node), T.float64, loc), t, node)

    if is_weak(rhs) or isinstance(rhs, ir.Const):
        e = int(rhs.value)
        if abs(e) > _POW_CUTOFF:
            return lw.cast(ir.BinOp("**", lw.cast(a, T.float64, node), ir.Const(float(e), T.float64, loc),
                                    T.float64, loc), t, node)
        # numba's static_power_impl: the same squarings, unrolled
        res, val, n = None, a, abs(e)
        while n:
            if n & 1:
                res = val if res is None else lw.once(ir.BinOp("*", res, val, t, loc), node)
            n >>= 1
            if n:
                val = lw.once(ir.BinOp("*", val, val, t, loc), node)
        res = ir.Const(1.0, t, loc) if res is None else res
        return inverse(res) if e < 0 else res
    signed = isinstance(rhs.type, T.Boolean) or rhs.type.signed
    et = T.int64 if signed else T.uint64
    b = lw.once(lw.cast(rhs, et, node), node)
    zero = ir.Const(0, et, loc)
    if signed:
        neg = lw.once(ir.Compare("<", b, zero, T.boolean, loc), node)
        mag = lw.once(ir.IfExp(neg, ir.UnaryOp("-", b, et, loc), b, et, loc), node)
        # -INT64_MIN stays negative: numba raises OverflowError there; pow gives its limit
        big = lw.once(ir.BoolOp("or", [ir.Compare("<", mag, zero, T.boolean, loc),
                                       ir.Compare(">", mag, ir.Const(_POW_CUTOFF, et, loc), T.boolean, loc)],
                                T.boolean, loc), node)
    else:
        neg, mag = None, b
        big = lw.once(ir.Compare(">", mag, ir.Const(_POW_CUTOFF, et, loc), T.boolean, loc), node)
    dev = stubs.DEVICE_LIBRARIES["integers"].float_int_power
    fn = lw.mb.device_function(dev.py_func, [t, et, t], loc)
    loop = lw.once(ir.Call(fn.name, [a, ir.IfExp(big, zero, mag, et, loc), ir.Const(1.0, t, loc)], t, loc), node)
    res = loop
    if neg is not None:
        res = ir.IfExp(neg, inverse(loop), loop, t, loc)
    far = lw.cast(ir.BinOp("**", lw.cast(a, T.float64, node), lw.cast(b, T.float64, node), T.float64, loc), t, node)
    return ir.IfExp(big, far, res, t, loc)


def complex_div(lw, a, b, node):
    """The ``/`` operator on complex operands (already of one complex type): CPython's
    algorithm, as numba's operator (``np.divide`` keeps numpy's Smith division, as numba's
    ufunc loop)."""
    ar, ai = _parts(lw, a, node)
    br, bi = _parts(lw, b, node)
    return _cm_complex(lw, "cdiv", [ar, ai, br, bi], a.type, node)


def complex_pow(lw, a, b, node):
    """``a ** b`` on complex operands (already of one complex type)."""
    ar, ai = _parts(lw, a, node)
    br, bi = _parts(lw, b, node)
    return _cm_complex(lw, "cpow", [ar, ai, br, bi], a.type, node)


def _cmath_arg(lw, node, name):
    _nargs(lw, node, name, 1)
    v = _scalar(lw, node.args[0], name)
    return _strong(lw, _complex_of_value(lw, v, node), node)


_CMATH_UNARY = {
    "exp": "cexp", "log10": "clog10", "sqrt": "csqrt", "sin": "csin", "cos": "ccos", "tan": "ctan",
    "sinh": "csinh", "cosh": "ccosh", "tanh": "ctanh", "asin": "casin", "acos": "cacos", "atan": "catan",
    "asinh": "casinh", "acosh": "cacosh", "atanh": "catanh",
}  # fmt: skip


def _cmath_unary(fname, pyfunc):
    def handler(lw, node, name):
        z = _cmath_arg(lw, node, name)
        re, im = _parts(lw, z, node)
        return _cm_complex(lw, fname, [re, im], z.type, node, special=pyfunc)

    return handler


def np_complex_unary(lw, which, z, node):
    """``np.sign``/``np.reciprocal``/``np.rint``/``np.square`` of the complex value ``z`` as
    numpy's loops compute them: sign and reciprocal by ``_cmath.csign``/``crecip``, rint of each
    part, square as ``z * z``."""
    z = lw.once(_strong(lw, z, node), node)
    if which == "square":
        return lw.binop("*", z, z, node)
    re, im = _parts(lw, z, node)
    if which == "rint":
        f = z.type.component
        return _make(lw, _intr(lw, "rint", [re], f, node), _intr(lw, "rint", [im], f, node), z.type, node)
    return _cm_complex(lw, {"sign": "csign", "reciprocal": "crecip"}[which], [re, im], z.type, node)


def _cmath_value(lw, name, z, node):
    """numpy's ufunc ``name`` ("sqrt", "log"...) of the complex value ``z``: the cmath
    formulas, with numpy's own special values for infinite and NaN parts."""
    z = _strong(lw, z, node)
    re, im = _parts(lw, z, node)
    fname = {"log": "clog", "log2": "clog2"}.get(name) or _CMATH_UNARY[name]
    return _cm_complex(lw, fname, [re, im], z.type, node,
                       special=_numpy_complex(name))


_NP_NAMES = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh", "acosh": "arccosh",
             "atanh": "arctanh"}


@functools.lru_cache(maxsize=None)
def _numpy_complex(name):
    """numpy's complex128 ufunc for cmath's ``name``, as a function of a Python complex."""
    uf = getattr(np, _NP_NAMES.get(name, name))

    def f(z):
        with np.errstate(all="ignore"):
            return complex(uf(np.complex128(z)))

    f.__name__ = f"np_{uf.__name__}"
    return f


def _cmath_log(lw, node, name):
    _nargs(lw, node, name, 1, 2)
    if len(node.args) == 2:
        # log(z, base) = log(z) / log(base)
        z = _cmath_log(lw, _one_arg(node, 0), name)
        b = _cmath_log(lw, _one_arg(node, 1), name)
        return lw.binop("/", z, b, node)
    z = _cmath_arg(lw, node, name)
    re, im = _parts(lw, z, node)
    return _cm_complex(lw, "clog", [re, im], z.type, node, special=cmath.log)


def _one_arg(node, k):
    c = ast.Call(func=node.func, args=[node.args[k]], keywords=[])
    return ast.copy_location(c, node)


def _cmath_phase(lw, node, name):
    z = _cmath_arg(lw, node, name)
    re, im = _parts(lw, z, node)
    return _intr(lw, "atan2", [im, re], re.type, node)


def _cmath_polar(lw, node, name):
    z = _cmath_arg(lw, node, name)
    re, im = _parts(lw, z, node)
    f = re.type
    r = _intr(lw, "hypot", [re, im], f, node)
    phi = _intr(lw, "atan2", [im, re], f, node)
    return ir.TupleExpr([r, phi], T.Tuple((f, f)), lw.loc(node))


def _cmath_rect(lw, node, name):
    _nargs(lw, node, name, 2)
    r, phi, ft = _float_args2(lw, node)
    if ft == T.float16:
        ft = T.float32
    return _cm_complex(lw, "crect", [lw.cast(r, ft, node), lw.cast(phi, ft, node)], T.complex_of(ft), node,
                       special=_rect_of_complex)


def _rect_of_complex(z):
    """``cmath.rect`` of the parts of ``z``: the shape ``special_table`` tabulates."""
    return cmath.rect(z.real, z.imag)


def _cmath_pred(which):
    def handler(lw, node, name):
        _nargs(lw, node, name, 1)
        v = _scalar(lw, node.args[0], name)
        if not isinstance(v.type, T.Complex):
            if not isinstance(v.type, T.Float):
                return ir.Const(which == "isfinite", T.boolean, lw.loc(node))
            return _intr(lw, which, [v], T.boolean, node)
        re, im = _parts(lw, v, node)
        a, b = _intr(lw, which, [re], T.boolean, node), _intr(lw, which, [im], T.boolean, node)
        return lw.make_boolop("and" if which == "isfinite" else "or", [a, b], node)

    return handler


def _lang2_calls():
    import cmath

    table = {
        builtins.complex: _complex_builtin,
        np.conj: _np_conj,
        np.conjugate: _np_conj,
        np.real: _np_real_imag("real"),
        np.imag: _np_real_imag("imag"),
        cmath.log: _cmath_log,
        cmath.phase: _cmath_phase,
        cmath.polar: _cmath_polar,
        cmath.rect: _cmath_rect,
        cmath.isnan: _cmath_pred("isnan"),
        cmath.isinf: _cmath_pred("isinf"),
        cmath.isfinite: _cmath_pred("isfinite"),
    }
    for n, impl in _CMATH_UNARY.items():
        table[getattr(cmath, n)] = _cmath_unary(impl, getattr(cmath, n))
    return table


_EXTRA_CALLS = _lang2_calls()


# ---------------------------------------------------------------- cuda.fp16 (lang2)


def _half_args(lw, node, which, n):
    """The arguments of an fp16 function, each converted to float16 (numbers only)."""
    _nargs(lw, node, which, n)
    out = []
    for a in node.args:
        v = _scalar(lw, a, which)
        if isinstance(v.type, T.Complex):
            raise lw.error(f"{which}() takes float16 numbers, not {v.type}", a)
        out.append(lw.cast(v, T.float16, a))
    return out


_FP16_BINOP = {"hadd": "+", "hsub": "-", "hmul": "*", "hdiv": "/"}
_FP16_CMP = {"heq": "==", "hne": "!=", "hlt": "<", "hle": "<=", "hgt": ">", "hge": ">="}
#: computed directly on float16 (exact, or correctly rounded from float32: 24 >= 2*11 + 2 bits)
_FP16_DIRECT = {"hfloor": "floor", "hceil": "ceil", "htrunc": "trunc", "hrint": "rint", "hsqrt": "sqrt",
                "habs": "fabs"}
#: computed in float32 and rounded once, as numpy's float16 ufuncs do
_FP16_VIA_F32 = {"hsin": "sin", "hcos": "cos", "hlog": "log", "hlog10": "log10", "hlog2": "log2",
                 "hexp": "exp", "hexp2": "exp2"}


def _fp16(lw, node, which):
    n = which.split(".", 1)[1]
    loc = lw.loc(node)
    if n in _FP16_BINOP:
        a, b = _half_args(lw, node, which, 2)
        return ir.BinOp(_FP16_BINOP[n], a, b, T.float16, loc)
    if n in _FP16_CMP:
        a, b = _half_args(lw, node, which, 2)
        return ir.Compare(_FP16_CMP[n], a, b, T.boolean, loc)
    if n in ("hmax", "hmin"):
        # numba.cuda: hmax is ``a if a > b else b`` (so hmax(NaN, x) is x), hmin likewise with <
        a, b = (lw.once(v, node) for v in _half_args(lw, node, which, 2))
        test = ir.Compare(">" if n == "hmax" else "<", a, b, T.boolean, loc)
        return ir.IfExp(test, a, b, T.float16, loc)
    if n == "hfma":
        a, b, c = _half_args(lw, node, which, 3)
        return _intr(lw, "fma", [a, b, c], T.float16, node)  # one rounding (targets: math "fma" on half)
    if n == "hneg":
        (a,) = _half_args(lw, node, which, 1)
        return ir.UnaryOp("-", a, T.float16, loc)
    if n == "hrcp":
        (a,) = _half_args(lw, node, which, 1)
        return ir.BinOp("/", ir.Const(1.0, T.float16, loc), a, T.float16, loc)
    if n in _FP16_DIRECT:
        (a,) = _half_args(lw, node, which, 1)
        return _intr(lw, _FP16_DIRECT[n], [a], T.float16, node)
    (a,) = _half_args(lw, node, which, 1)
    x = lw.cast(a, T.float32, node)
    if n in _FP16_VIA_F32:
        r = _intr(lw, _FP16_VIA_F32[n], [x], T.float32, node)
    elif n == "hexp10":
        r = _intr(lw, "pow", [ir.Const(10.0, T.float32, loc), x], T.float32, node)
    elif n == "hrsqrt":
        r = ir.BinOp("/", ir.Const(1.0, T.float32, loc), _intr(lw, "sqrt", [x], T.float32, node), T.float32, loc)
    else:
        raise lw.error(f"cuda.{which} is not supported", node)
    return lw.cast(r, T.float16, node)


_STUB_HANDLERS.update({f"fp16.{n}": _fp16 for n in stubs._FP16_NAMES})
_STUB_HANDLERS.update(__import__("pykern.frontend.bf16_calls", fromlist=["HANDLERS"]).HANDLERS)
_STUB_HANDLERS.update(__import__("pykern.frontend.matrix", fromlist=["HANDLERS"]).HANDLERS)


# ---------------------------------------------------------------- more math and intrinsics (lang2)


def _float_args2(lw, node):
    """The two arguments of a binary math call and the float type they compute in (a located
    error when there is none)."""
    a, b = _math_arg(lw, node.args[0]), _math_arg(lw, node.args[1])
    try:
        return a, b, infer.math2_arg_type(a.type, infer_weak(a), b.type, infer_weak(b))
    except infer.InferError as e:
        raise lw.error(e.msg, node, e.hint) from None


def _float_arg(lw, node, fname, k=0):
    v = _math_arg(lw, node.args[k])
    try:
        return v, infer.math_arg_type(v.type)
    except infer.InferError as e:
        raise lw.error(e.msg, node.args[k], e.hint) from None


def _folded_pair(lw, pair, types, node):
    """A pair of Python numbers computed at compile time (``math.frexp`` of a literal) as a tuple of ``types``."""
    return ir.TupleExpr([lw.const(x, t, node) for x, t in zip(pair, types)], T.Tuple(types), lw.loc(node))


def _math_frexp(lw, node, name):
    """``math.frexp(x)`` -> (mantissa of x's float type, int32 exponent), as numba."""
    _nargs(lw, node, name, 1)
    v, ft = _float_arg(lw, node, name)
    if is_weak(v):
        return _folded_pair(lw, math.frexp(v.value), (T.float64, T.int32), node)
    ct = T.float32 if ft == T.float16 else ft  # a half's mantissa is exact in float32
    r = lw.temp(_intr(lw, "frexp", [lw.cast(v, ct, node)], T.Tuple((ct, T.int32)), node), node)
    loc = lw.loc(node)
    m = lw.cast(ir.TupleGet(r, 0, ct, loc), ft, node)
    return ir.TupleExpr([m, ir.TupleGet(r, 1, T.int32, loc)], T.Tuple((ft, T.int32)), loc)


def _math_ldexp(lw, node, name, ufunc=False):
    _nargs(lw, node, name, 2)
    v, ft = _float_arg(lw, node, name)
    e = lw.value(node.args[1])
    if not isinstance(e.type, (T.Integer, T.Boolean)):
        raise lw.error(f"{name}() exponent must be an integer, not {e.type}", node.args[1])
    if ufunc and ft != T.float16:  # numba's loop: np.ldexp(int8, 2) is float32; a uint64 exponent has none
        try:
            (ft, _), _ = infer.ufunc_types(np.ldexp, [(v.type, infer_weak(v)), (e.type, infer_weak(e))], name)
        except infer.InferError as err:
            raise lw.error(err.msg, node, err.hint) from None
    elif ft != T.float16 and not is_weak(v):  # numba.cuda's signatures: math.ldexp(int8, n) is float32
        (_, _), ft = _math2_signature(lw, node, "ldexp", v, e)
    loc = lw.loc(node)
    e = lw.cast(e, T.int64, node)
    # clamp to int32 (beyond it the result is 0 or inf anyway) instead of wrapping
    e = _intr(lw, "max", [_intr(lw, "min", [e, ir.Const(2**31 - 1, T.int64, loc)], T.int64, node),
                          ir.Const(-(2**31), T.int64, loc)], T.int64, node)
    ct = T.float32 if ft == T.float16 else ft
    r = _intr(lw, "ldexp", [lw.cast(v, ct, node), lw.cast(e, T.int32, node)], ct, node)
    return lw.cast(r, ft, node)


def _math_modf(lw, node, name):
    """``math.modf(x)`` -> (fractional part, integral part), both of x's float type, signed like x."""
    _nargs(lw, node, name, 1)
    v, ft = _float_arg(lw, node, name)
    if is_weak(v):
        return _folded_pair(lw, math.modf(v.value), (T.float64, T.float64), node)
    loc = lw.loc(node)
    x = lw.cast(v, ft, node)
    x = lw.once(x, node)
    whole = lw.once(_in_float(lw, node, "trunc", [x], ft), node)
    diff = ir.BinOp("-", x, whole, ft, loc)
    inf = ir.Intrinsic("isinf", [x], T.boolean, {}, loc)
    frac = ir.IfExp(inf, ir.Const(0.0, ft, loc), diff, ft, loc)
    frac = _in_float(lw, node, "copysign", [frac, x], ft)
    return ir.TupleExpr([frac, whole], T.Tuple((ft, ft)), loc)


def _math_nextafter(lw, node, name, ufunc=False):
    _nargs(lw, node, name, 2)
    a, b, ft = _float_args2(lw, node)
    if ufunc and ft != T.float16:  # numba's loop (np.nextafter(int8, int8) is float32)
        ft = infer.float_ufunc_type([(a.type, infer_weak(a)), (b.type, infer_weak(b))])
    elif ft != T.float16:  # numba's signatures: math.nextafter(float32, uint16) is float64
        _, ft = _math2_signature(lw, node, "nextafter", a, b)
    if ft == T.float16:
        raise lw.error(f"{name}() of float16 is not supported in kernels", node,
                       "convert to float32 first (the next float32 is not the next float16)")
    return _intr(lw, "nextafter", [lw.cast(a, ft, node), lw.cast(b, ft, node)], ft, node)


def _cuda_cbrt(lw, node, which):
    _nargs(lw, node, which, 1)
    v, ft = _float_arg(lw, node, which)
    return _in_float(lw, node, "cbrt", [v], ft)


def _selp(lw, node, which):
    """``cuda.selp(pred, a, b)``: both values are evaluated (they are arguments), then one chosen."""
    _nargs(lw, node, which, 3)
    c = lw.cond(node.args[0])
    a, b = _scalar(lw, node.args[1], which), _scalar(lw, node.args[2], which)
    t = infer.common_type(a.type, infer_weak(a), b.type, infer_weak(b))
    a, b = lw.cast(a, t, node), lw.cast(b, t, node)
    a, b = lw.once(a, node), lw.once(b, node)
    return ir.IfExp(c, a, b, t, lw.loc(node))


def _nanosleep(lw, node, which):
    _nargs(lw, node, which, 1)
    ns = lw.value(node.args[0])
    if not isinstance(ns.type, (T.Integer, T.Boolean)):
        raise lw.error(f"{which}() takes an integer number of nanoseconds, not {ns.type}", node.args[0])
    return _intr(lw, "nanosleep", [lw.cast(ns, T.uint32, node)], T.void, node)


_MATCH_TYPES = (T.int32, T.int64, T.uint32, T.uint64, T.float32, T.float64)


def _match(lw, node, which):
    """``match_any_sync(mask, value)`` / ``match_all_sync(mask, value)`` as pykern
    device functions over shuffles and ballots (``pykern/lang/warp.py``); the masks are
    64-bit (a wave has up to 64 lanes)."""
    _nargs(lw, node, which, 2)
    mask = _mask(lw, node.args[0])
    val = _strong(lw, _scalar(lw, node.args[1], which), node)
    if val.type not in _MATCH_TYPES:
        raise lw.error(f"{which}() takes a 32- or 64-bit integer or float, not {val.type}", node.args[1])
    _warp = stubs.DEVICE_LIBRARIES["warp"]

    dev = getattr(_warp, which)
    fn = lw.mb.device_function(dev.py_func, [T.uint64, val.type], lw.loc(node))
    return ir.Call(fn.name, [mask, val], fn.return_type, lw.loc(node))


def _lang2_more_calls():
    table = {
        math.frexp: _math_frexp,
        math.ldexp: _math_ldexp,
        math.modf: _math_modf,
        math.nextafter: _math_nextafter,
        np.nextafter: lambda lw, node, name: _math_nextafter(lw, node, name, ufunc=True),
        np.ldexp: lambda lw, node, name: _math_ldexp(lw, node, name, ufunc=True),
    }
    return table


_EXTRA_CALLS.update(_lang2_more_calls())
_STUB_HANDLERS.update({
    "cbrt": _cuda_cbrt,
    "selp": _selp,
    "nanosleep": _nanosleep,
    "match_any_sync": _match,
    "match_all_sync": _match,
})
