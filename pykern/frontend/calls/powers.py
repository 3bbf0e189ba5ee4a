"""``float ** int`` as numba computes it (its ``BinOpPower`` signatures of float32/float64 with an
integer exponent): repeated squaring in the float's type, bit-exact with numba, where ``pow``
of the float operands rounds differently (1.1f ** 7 differs in the last bit). The ``**``
operator (``lower_exprs``) asks ``is_float_int_power`` and calls ``float_int_power``."""

from __future__ import annotations

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.values import is_weak
from pykern.lang import stubs

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
    magnitude by ``pow`` in float64 (numba's ``math.pow(a, float(b))``)."""
    t = T.float64 if is_weak(lhs) else lhs.type
    a = lw.once(lw.cast(lhs, t, node), node)
    if is_weak(rhs) or isinstance(rhs, ir.Const):
        return _constant_power(lw, a, int(rhs.value), t, node)
    return _run_time_power(lw, a, rhs, t, node)


def _inverse(lw, r, t, node):
    """numba's ``1.0 / r``, in float64, as a ``t``."""
    loc = lw.loc(node)
    return lw.cast(ir.BinOp("/", ir.Const(1.0, T.float64, loc), lw.cast(r, T.float64, node), T.float64, loc), t, node)


def _constant_power(lw, a, e, t, node):
    loc = lw.loc(node)
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
    return _inverse(lw, res, t, node) if e < 0 else res


def _run_time_power(lw, a, rhs, t, node):
    loc = lw.loc(node)
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
        res = ir.IfExp(neg, _inverse(lw, loop, t, node), loop, t, loc)
    far = lw.cast(ir.BinOp("**", lw.cast(a, T.float64, node), lw.cast(b, T.float64, node), T.float64, loc), t, node)
    return ir.IfExp(big, far, res, t, loc)
