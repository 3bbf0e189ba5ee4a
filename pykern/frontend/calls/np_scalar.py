"""numpy ufuncs on numbers in kernels that are compositions of other operations -- numba.cuda
takes them from numba's ufunc table: ``np.sign``, ``np.square``, ``np.reciprocal`` (of complex
numbers too),
``np.signbit``, ``np.heaviside``, ``np.logaddexp``, ``np.logaddexp2``, ``np.float_power`` and
``np.round``/``np.around``,
each written as numpy's loop computes it (its branches, its constants), in the argument's type
as numpy's type resolution picks it (a Python number as numpy takes it: int64 / float64).

Example::

    np.sign(x)           # x > 0 ? 1 : (x < 0 ? -1 : (x == 0 ? 0 : x)), in x's type
    np.logaddexp(a, b)   # a == b ? a + ln 2 : a + log1p(exp(b - a)) for a > b ...
"""

from __future__ import annotations

import math

import numpy as np

from pykern.lang import stubs
from pykern.frontend import infer
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.complex_funcs import np_complex_unary
from pykern.frontend.calls.registry import lowers
from pykern.frontend.values import is_weak, weakval


def _arg(lw, node, name, k=0, nargs=1, complex_ok=False):
    if len(node.args) != nargs or node.keywords:
        raise lw.error(f"{name}() takes {nargs} argument{'s' if nargs > 1 else ''} in kernels", node)
    v = lw.value(node.args[k])
    if not v.type.is_scalar:
        raise lw.error(f"{name}() of a {v.type}: in kernels it takes numbers", node.args[k])
    if isinstance(v.type, T.Complex) and complex_ok:
        return v
    if isinstance(v.type, T.Complex):
        raise lw.error(f"{name}() of a complex number is not supported in kernels", node.args[k])
    if is_weak(v):
        v = lw.cast(v, v.type, node)  # numpy types a Python int as int64, a float as float64
    return lw.once(v, node)


def _c(lw, value, t, node):
    return ir.Const(value, t, lw.loc(node))


def _cmp(lw, op, a, b, node):
    return ir.Compare(op, a, b, T.boolean, lw.loc(node))


def _if(lw, cond, then, orelse, node):
    return ir.IfExp(cond, then, orelse, then.type, lw.loc(node))


def _bin(lw, op, a, b, node):
    return ir.BinOp(op, a, b, a.type, lw.loc(node))


def _compute_type(t):
    """The float type numpy's loop computes in for an argument of type ``t``: float16 in
    float32 (numpy's half loops), integers and booleans in float64."""
    if isinstance(t, T.Float):
        return T.float32 if t == T.float16 else t
    return T.float64


def _math(lw, name, args, t, node):
    return ir.Intrinsic(name, list(args), t, {}, lw.loc(node))


@lowers(np.sign)
def np_sign(lw, node, name):
    v = _arg(lw, node, name, complex_ok=True)
    if isinstance(v.type, T.Complex):
        return np_complex_unary(lw, "sign", v, node)
    t = v.type
    if isinstance(t, T.Boolean):  # numpy refuses; numba takes the int8 loop
        v, t = lw.cast(v, T.int8, node), T.int8
    one = 1.0 if isinstance(t, T.Float) else 1
    zero = 0.0 if isinstance(t, T.Float) else 0
    if isinstance(t, T.Integer) and not t.signed:
        return _if(lw, _cmp(lw, ">", v, _c(lw, 0, t, node), node), _c(lw, 1, t, node), _c(lw, 0, t, node), node)
    inner = _c(lw, zero, t, node)
    if isinstance(t, T.Float):  # NaN stays itself
        inner = _if(lw, _cmp(lw, "==", v, _c(lw, zero, t, node), node), inner, v, node)
    neg = _if(lw, _cmp(lw, "<", v, _c(lw, zero, t, node), node), _c(lw, -one, t, node), inner, node)
    return _if(lw, _cmp(lw, ">", v, _c(lw, zero, t, node), node), _c(lw, one, t, node), neg, node)


@lowers(np.square)
def np_square(lw, node, name):
    v = _arg(lw, node, name, complex_ok=True)
    if isinstance(v.type, T.Complex):
        return np_complex_unary(lw, "square", v, node)
    if isinstance(v.type, T.Boolean):
        v = lw.cast(v, T.int8, node)  # numba's loop for a boolean: int8 (numpy's too)
    return _bin(lw, "*", v, v, node)


@lowers(np.reciprocal)
def np_reciprocal(lw, node, name):
    """Floats: ``1 / x``. Integers: C's ``1 / x`` -- 1 for 1, -1 for -1, else 0 (0 for 0:
    pykern's integer division by zero)."""
    v = _arg(lw, node, name, complex_ok=True)
    if isinstance(v.type, T.Complex):
        return np_complex_unary(lw, "reciprocal", v, node)
    t = v.type
    if isinstance(t, T.Float):
        return _bin(lw, "/", _c(lw, 1.0, t, node), v, node)
    if isinstance(t, T.Boolean):  # numba's loop for a boolean: int8 (numpy's too)
        v, t = lw.cast(v, T.int8, node), T.int8
    result = _c(lw, 0, t, node)
    if t.signed:
        result = _if(lw, _cmp(lw, "==", v, _c(lw, -1, t, node), node), _c(lw, -1, t, node), result, node)
    return _if(lw, _cmp(lw, "==", v, _c(lw, 1, t, node), node), _c(lw, 1, t, node), result, node)


@lowers(np.signbit)
def np_signbit(lw, node, name):
    """The sign bit: of -0.0 and of a negative NaN too (``copysign(1, x) < 0``)."""
    v = _arg(lw, node, name)
    t = v.type
    if not isinstance(t, T.Float):
        if isinstance(t, T.Integer) and t.signed:
            return _cmp(lw, "<", v, _c(lw, 0, t, node), node)
        return _c(lw, False, T.boolean, node)
    ct = _compute_type(t)
    x = lw.cast(v, ct, node)
    return _cmp(lw, "<", _math(lw, "copysign", [_c(lw, 1.0, ct, node), x], ct, node), _c(lw, 0.0, ct, node), node)


def _two_floats(lw, node, name):
    a, b = _arg(lw, node, name, 0, 2), _arg(lw, node, name, 1, 2)
    try:
        rt = infer.float_ufunc_type([(a.type, None), (b.type, None)])
    except infer.InferError as e:
        raise lw.error(e.msg, node, e.hint) from None
    ct = _compute_type(rt)
    return lw.once(lw.cast(a, ct, node), node), lw.once(lw.cast(b, ct, node), node), ct, rt


@lowers(np.heaviside)
def np_heaviside(lw, node, name):
    """numpy's loop: NaN for NaN, ``h`` at 0, 0 below, 1 above."""
    x, h, ct, rt = _two_floats(lw, node, name)
    r = _if(lw, _cmp(lw, "<", x, _c(lw, 0.0, ct, node), node), _c(lw, 0.0, ct, node), _c(lw, 1.0, ct, node), node)
    r = _if(lw, _cmp(lw, "==", x, _c(lw, 0.0, ct, node), node), h, r, node)
    r = _if(lw, _cmp(lw, "!=", x, x, node), x, r, node)
    return lw.cast(r, rt, node)


def _logaddexp(lw, node, name, base2: bool):
    """numpy's npy_logaddexp(2): equal arguments (same-signed infinities too) give ``x + ln 2``
    (``x + 1``); else the larger plus log1p(exp(-|x - y|)) (base 2: ``log2e * log1p(exp2(..))``);
    a NaN difference is the result."""
    x, y, ct, rt = _two_floats(lw, node, name)
    d = lw.once(_bin(lw, "-", x, y, node), node)
    expf = "exp2" if base2 else "exp"

    def tail(big, arg):
        s = _math(lw, "log1p", [_math(lw, expf, [arg], ct, node)], ct, node)
        if base2:
            log2e = float(np.float32(1 / math.log(2))) if ct == T.float32 else 1 / math.log(2)
            s = _bin(lw, "*", _c(lw, log2e, ct, node), s, node)
        return _bin(lw, "+", big, s, node)

    neg_d = ir.UnaryOp("-", d, ct, lw.loc(node))
    r = _if(lw, _cmp(lw, "<=", d, _c(lw, 0.0, ct, node), node), tail(y, d), d, node)
    r = _if(lw, _cmp(lw, ">", d, _c(lw, 0.0, ct, node), node), tail(x, neg_d), r, node)
    same = 1.0 if base2 else (float(np.float32(math.log(2))) if ct == T.float32 else math.log(2))
    r = _if(lw, _cmp(lw, "==", x, y, node), _bin(lw, "+", x, _c(lw, same, ct, node), node), r, node)
    return lw.cast(r, rt, node)


@lowers(np.logaddexp)
def np_logaddexp(lw, node, name):
    return _logaddexp(lw, node, name, False)


@lowers(np.logaddexp2)
def np_logaddexp2(lw, node, name):
    return _logaddexp(lw, node, name, True)


@lowers(np.float_power)
def np_float_power(lw, node, name):
    """``x ** y`` in float64 (numpy's float_power has float64 loops only, and complex128)."""
    if len(node.args) != 2 or node.keywords:
        raise lw.error(f"{name}() takes 2 arguments in kernels", node)
    a, b = lw.value(node.args[0]), lw.value(node.args[1])
    ct = T.complex128 if isinstance(a.type, T.Complex) or isinstance(b.type, T.Complex) else T.float64
    return lw.binop("**", lw.cast(a, ct, node), lw.cast(b, ct, node), node)


@lowers(np.round, np.around)
def np_round(lw, node, name):
    """``np.round(x, decimals=0)`` of a number, as numpy rounds: half to even (``rint``); with
    ``decimals`` (a constant) ``rint(x * 10**d) / 10**d`` in x's float type (``/`` and ``*``
    swapped for negative ``d``); integers with ``decimals >= 0`` are themselves."""
    args = list(node.args) + [k.value for k in node.keywords if k.arg == "decimals"]
    if not 1 <= len(args) <= 2 or any(k.arg != "decimals" for k in node.keywords):
        raise lw.error(f"{name}() takes a number and an optional decimals= in kernels", node)
    d = 0 if len(args) == 1 else lw.const_value(args[1], f"the decimals of {name}()")
    if type(d) is not int:
        raise lw.error(f"the decimals of {name}() must be an integer", args[1])
    v = lw.value(args[0])
    if not v.type.is_scalar or isinstance(v.type, T.Complex):
        raise lw.error(f"{name}() of a {v.type}: in kernels it takes real numbers", args[0])
    if is_weak(v):
        v = lw.cast(v, v.type, node)
    t = v.type
    if not isinstance(t, T.Float):
        if d >= 0:
            return v
        v = lw.cast(v, T.float64, node)  # numpy rounds integers to negative decimals through float64
    ct = _compute_type(v.type)
    x = lw.cast(v, ct, node)
    if d == 0:
        return lw.cast(_math(lw, "rint", [x], ct, node), t, node)
    p10 = 10.0 ** abs(d)  # numpy: the power as a double, then in the array's type
    f = _c(lw, float(np.float32(p10)) if ct == T.float32 else p10, ct, node)
    scaled = _bin(lw, "*" if d > 0 else "/", x, f, node)
    r = _bin(lw, "/" if d > 0 else "*", _math(lw, "rint", [scaled], ct, node), f, node)
    return lw.cast(r, t, node)


@lowers(np.spacing)
def np_spacing(lw, node, name):
    """``np.spacing(x)``: the distance from ``x`` to the next float away from zero (toward +inf
    for +-0.0), negative for negative ``x``; NaN for +-inf and NaN -- numpy's ``npy_spacing``,
    ``nextafter(x, x >= 0 ? inf : -inf) - x``. Integers take numpy's float type for their size."""
    v = _arg(lw, node, name)
    t = v.type if isinstance(v.type, T.Float) else _int_float(v.type)
    if t == T.float16:
        raise lw.error(f"{name}() of a {v.type} (a float16 result) is not supported in kernels", node,
                       "convert the argument to float32 first")
    x = lw.once(lw.cast(v, t, node), node)
    inf = _c(lw, math.inf, t, node)
    away = _if(lw, _cmp(lw, ">=", x, _c(lw, 0.0, t, node), node), inf, _c(lw, -math.inf, t, node), node)
    step = _bin(lw, "-", _math(lw, "nextafter", [x, away], t, node), x, node)
    return _if(lw, _math(lw, "isinf", [x], T.boolean, node), _c(lw, math.nan, t, node), step, node)


def _int_float(t):
    """numba's float type of a one-argument float ufunc of an integer or boolean type (numpy's,
    float16 loops skipped: booleans and integers of 16 bits or less are float32)."""
    return infer.float_ufunc_type([(t, None)])


def _gcd_lcm(lw, node, name, which):
    """``np.gcd``/``np.lcm`` of integers in the type of numba's loop for them: the absolute
    values as unsigned (``abs(INT_MIN)`` is ``2**(n-1)`` there), Euclid's loop in
    ``pykern/lang/integers.py``, the result converted back (wrapping as numpy's does)."""
    if len(node.args) != 2 or node.keywords:
        raise lw.error(f"{name}() takes 2 arguments in kernels", node)
    a, b = lw.value(node.args[0]), lw.value(node.args[1])
    if not all(isinstance(v.type, (T.Integer, T.Boolean)) for v in (a, b)):
        what = next(v.type for v in (a, b) if not isinstance(v.type, (T.Integer, T.Boolean)))
        raise lw.error(f"{name}() of a {what}: numpy has no loop for it (integers only)", node)
    # numba's loop choice: an int literal is int64 (np.lcm(uint8, 2) is int64, 510 for 255), two
    # booleans take the int8 loop, uint64 with a signed type has none (numpy's would be float64)
    try:
        (t, _), _ = infer.ufunc_types(getattr(np, which), [(a.type, weakval(a)), (b.type, weakval(b))], f"np.{which}")
    except infer.InferError as e:
        raise lw.error(e.msg, node, e.hint) from None
    u = T.Integer(t.bits, False)
    args = [_magnitude(lw, lw.cast(v, t, node), u, node) for v in (a, b)]
    dev = getattr(stubs.DEVICE_LIBRARIES["integers"], f"{which}_unsigned")
    fn = lw.mb.device_function(dev.py_func, [u, u], lw.loc(node))
    # narrow types compute in uint64 inside (numba's integer rule); the low bits are numpy's
    return lw.cast(ir.Call(fn.name, args, fn.return_type, lw.loc(node)), t, node)


def _magnitude(lw, v, u, node):
    """``|v|`` as the unsigned type ``u`` of its width (modulo ``2**bits``)."""
    if not v.type.signed:
        return v
    v = lw.once(v, node)
    bits = lw.cast(v, u, node)
    negated = _bin(lw, "-", _c(lw, 0, u, node), lw.cast(v, u, node), node)
    return _if(lw, _cmp(lw, "<", v, _c(lw, 0, v.type, node), node), negated, bits, node)


@lowers(np.gcd)
def np_gcd(lw, node, name):
    return _gcd_lcm(lw, node, name, "gcd")


@lowers(np.lcm)
def np_lcm(lw, node, name):
    return _gcd_lcm(lw, node, name, "lcm")

