"""numba.cuda's ``cuda.fp16`` functions: float16 arguments (numbers convert), float16 results
(comparisons give booleans), native half instructions on AMD GPUs."""

from __future__ import annotations

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.arguments import intrinsic, nargs, scalar
from pykern.frontend.calls.registry import lowers, lowers_each
from pykern.lang import stubs


def _half_args(lw, node, which, n):
    """The arguments of an fp16 function, each converted to float16 (numbers only)."""
    nargs(lw, node, which, n)
    out = []
    for a in node.args:
        v = scalar(lw, a, which)
        if isinstance(v.type, T.Complex):
            raise lw.error(f"{which}() takes float16 numbers, not {v.type}", a)
        out.append(lw.cast(v, T.float16, a))
    return out


def _table(pairs: dict) -> dict:
    """``{"hadd": x}`` -> ``{cuda.fp16.hadd: x}``."""
    return {getattr(stubs.fp16, n): v for n, v in pairs.items()}


@lowers_each(_table({"hadd": "+", "hsub": "-", "hmul": "*", "hdiv": "/"}))
def _binop(lw, node, which, op):
    a, b = _half_args(lw, node, which, 2)
    return ir.BinOp(op, a, b, T.float16, lw.loc(node))


@lowers_each(_table({"heq": "==", "hne": "!=", "hlt": "<", "hle": "<=", "hgt": ">", "hge": ">="}))
def _compare(lw, node, which, op):
    a, b = _half_args(lw, node, which, 2)
    return ir.Compare(op, a, b, T.boolean, lw.loc(node))


@lowers_each(_table({"hmax": ">", "hmin": "<"}))
def _max_min(lw, node, which, op):
    # numba.cuda: hmax is ``a if a > b else b`` (so hmax(NaN, x) is x), hmin likewise with <
    a, b = (lw.once(v, node) for v in _half_args(lw, node, which, 2))
    return ir.IfExp(ir.Compare(op, a, b, T.boolean, lw.loc(node)), a, b, T.float16, lw.loc(node))


@lowers(stubs.fp16.hfma)
def _hfma(lw, node, which):
    a, b, c = _half_args(lw, node, which, 3)
    return intrinsic(lw, "fma", [a, b, c], T.float16, node)  # one rounding (targets: math "fma" on half)


@lowers(stubs.fp16.hneg)
def _hneg(lw, node, which):
    (a,) = _half_args(lw, node, which, 1)
    return ir.UnaryOp("-", a, T.float16, lw.loc(node))


@lowers(stubs.fp16.hrcp)
def _hrcp(lw, node, which):
    (a,) = _half_args(lw, node, which, 1)
    return ir.BinOp("/", ir.Const(1.0, T.float16, lw.loc(node)), a, T.float16, lw.loc(node))


#: computed directly on float16 (exact, or correctly rounded from float32: 24 >= 2*11 + 2 bits)
@lowers_each(_table({"hfloor": "floor", "hceil": "ceil", "htrunc": "trunc", "hrint": "rint", "hsqrt": "sqrt",
                     "habs": "fabs"}))
def _direct(lw, node, which, name):
    (a,) = _half_args(lw, node, which, 1)
    return intrinsic(lw, name, [a], T.float16, node)


#: computed in float32 and rounded once, as numpy's float16 ufuncs do
@lowers_each(_table({"hsin": "sin", "hcos": "cos", "hlog": "log", "hlog10": "log10", "hlog2": "log2",
                     "hexp": "exp", "hexp2": "exp2", "hexp10": "exp10", "hrsqrt": "rsqrt"}))
def _via_float32(lw, node, which, name):
    (a,) = _half_args(lw, node, which, 1)
    x = lw.cast(a, T.float32, node)
    loc = lw.loc(node)
    if name == "exp10":
        r = intrinsic(lw, "pow", [ir.Const(10.0, T.float32, loc), x], T.float32, node)
    elif name == "rsqrt":
        r = ir.BinOp("/", ir.Const(1.0, T.float32, loc), intrinsic(lw, "sqrt", [x], T.float32, node), T.float32, loc)
    else:
        r = intrinsic(lw, name, [x], T.float32, node)
    return lw.cast(r, T.float16, node)
