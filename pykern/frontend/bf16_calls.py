"""``cuda.bf16``: numba-cuda's bfloat16 functions, as typed IR.

Every function takes its arguments converted to bfloat16 (numbers only) and computes as the
bfloat16 operators do: in float32, rounded once to nearest-even (``bf16_widen``). The names and
meanings are numba-cuda's (``numba.cuda.bf16``, CUDA's ``cuda_bf16.h``):

* ``hadd hsub hmul hdiv`` (and ``_rn``: never contracted, as pykern never contracts them),
  ``_sat`` clamps to [0, 1] (NaN -> +0), ``hfma`` rounds once, ``hfma_relu`` clamps below at 0
  (NaN stays NaN), ``hneg``, ``habs``;
* ``heq hne hlt hle hgt hge`` are ordered (False when either is NaN), ``hequ ... hltu`` unordered
  (True when either is NaN); ``hmax``/``hmin`` return the other operand of a NaN,
  ``hmax_nan``/``hmin_nan`` the NaN; ``hisnan``; ``hisinf`` is -1, 1 or 0 (int32, as CUDA's);
* conversions: ``float32_to_bfloat16[_rn|_rz|_rd|_ru]``, ``float64_to_bfloat16``,
  ``<int>_to_bfloat16_<mode>``, ``bfloat16_to_<int>_<mode>`` (rn: half to even, rz: toward zero,
  rd: down, ru: up; out of range saturates, NaN -> 0, as pykern's casts), the ``_as_`` bit casts;
* math ``htrunc hceil hfloor hrint hsqrt hrsqrt hrcp hlog hlog2 hlog10 hcos hsin hexp hexp2 hexp10
  htanh htanh_approx`` (``htanh_approx`` is ``htanh``: one rounding of ``tanhf``).

Example::

    from pykern import bf16
    out[i] = bf16.hfma(a[i], b[i], c[i])   # a*b+c rounded once to bfloat16
"""

from __future__ import annotations

import re

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.calls.registry import lowers
from pykern.lang import stubs

BF = T.bfloat16
_MODES = ("rn", "rz", "rd", "ru")
_INT_TYPES = {str(t): t for t in (T.int8, T.uint8, T.int16, T.uint16, T.int32, T.uint32, T.int64, T.uint64)}
_BINOP = {"hadd": "+", "hsub": "-", "hmul": "*", "hdiv": "/"}
_CMP = {"heq": "==", "hne": "!=", "hlt": "<", "hle": "<=", "hgt": ">", "hge": ">="}
#: the operator whose negation is each unordered comparison (True when either operand is NaN)
_UNORDERED = {"hneu": "==", "hltu": ">=", "hleu": ">", "hgtu": "<=", "hgeu": "<"}
_MATH = {"htrunc": "trunc", "hceil": "ceil", "hfloor": "floor", "hrint": "rint", "hsqrt": "sqrt", "hlog": "log",
         "hlog2": "log2", "hlog10": "log10", "hcos": "cos", "hsin": "sin", "hexp": "exp", "hexp2": "exp2",
         "htanh": "tanh", "htanh_approx": "tanh"}
#: bfloat16 -> integer rounding: the float32 function applied first
_TO_INT = {"rn": "rint", "rz": "trunc", "rd": "floor", "ru": "ceil"}
_BITS = {"bfloat16_as_int16": "bf16_as_int16", "bfloat16_as_uint16": "bf16_as_uint16",
         "int16_as_bfloat16": "int16_as_bf16", "uint16_as_bfloat16": "uint16_as_bf16"}


def _args(lw, node, which, n, to=BF):
    if node.keywords or len(node.args) != n:
        raise lw.error(f"{which}() takes {n} positional argument(s)", node)
    out = []
    for a in node.args:
        v = lw.value(a)
        if not v.type.is_scalar or isinstance(v.type, T.Complex):
            raise lw.error(f"{which}() takes real numbers, not {v.type}", a)
        out.append(lw.cast(v, to, a) if to is not None else v)
    return out


def _c(x, t, loc):
    return ir.Const(x, t, loc)


def _f32(e):
    return ir.Cast(e, T.float32, e.loc)


def _isnan(e):
    return ir.Compare("!=", e, e, T.boolean, e.loc)


@lowers(*(getattr(stubs.bf16, n) for n in stubs.BF16_NAMES))
def _bf16(lw, node, which):
    n = which.split(".", 1)[1]
    loc = lw.loc(node)
    if n in ("bfloat16", "float32_to_bfloat16", "float64_to_bfloat16", "float32_to_bfloat16_rn"):
        (a,) = _args(lw, node, which, 1)
        return a
    if n == "bfloat16_to_float32":
        (a,) = _args(lw, node, which, 1)
        return lw.cast(a, T.float32, node)
    base = n.split("_")[0]
    if base in _BINOP and n[len(base):] in ("", "_rn", "_sat"):
        a, b = _args(lw, node, which, 2)
        r = ir.BinOp(_BINOP[base], a, b, BF, loc)
        return _sat(lw, r, node) if n.endswith("_sat") else r
    if n in ("hfma", "hfma_sat", "hfma_relu"):
        r = ir.Intrinsic("bf16_fma", _args(lw, node, which, 3), BF, {}, loc)
        if n == "hfma_sat":
            return _sat(lw, r, node)
        if n == "hfma_relu":
            r = lw.once(r, node)
            return ir.IfExp(ir.Compare("<", r, _c(0.0, BF, loc), T.boolean, loc), _c(0.0, BF, loc), r, BF, loc)
        return r
    if n == "hneg":
        (a,) = _args(lw, node, which, 1)
        return ir.UnaryOp("-", a, BF, loc)
    if n == "habs":
        (a,) = _args(lw, node, which, 1)
        return ir.Intrinsic("fabs", [a], BF, {}, loc)
    if n in _CMP:
        a, b = (lw.once(v, node) for v in _args(lw, node, which, 2))
        if n == "hne":  # ordered: False with a NaN (Python's != is True)
            return _less_or_greater(a, b, loc)
        return ir.Compare(_CMP[n], a, b, T.boolean, loc)
    if n == "hequ":
        a, b = (lw.once(v, node) for v in _args(lw, node, which, 2))
        return ir.UnaryOp("not", _less_or_greater(a, b, loc), T.boolean, loc)
    if n in _UNORDERED:
        a, b = _args(lw, node, which, 2)
        return ir.UnaryOp("not", ir.Compare(_UNORDERED[n], a, b, T.boolean, loc), T.boolean, loc)
    if n in ("hmax", "hmin", "hmax_nan", "hmin_nan"):
        a, b = _args(lw, node, which, 2)
        name = {"hmax": "fmax", "hmin": "fmin", "hmax_nan": "maximum", "hmin_nan": "minimum"}[n]
        return ir.Intrinsic(name, [a, b], BF, {}, loc)
    if n == "hisnan":
        (a,) = _args(lw, node, which, 1)
        return ir.Intrinsic("isnan", [a], T.boolean, {}, loc)
    if n == "hisinf":
        (a,) = (lw.once(v, node) for v in _args(lw, node, which, 1))
        inf = ir.Intrinsic("isinf", [a], T.boolean, {}, loc)
        sign = ir.IfExp(ir.Compare("<", a, _c(0.0, BF, loc), T.boolean, loc), _c(-1, T.int32, loc), _c(1, T.int32, loc),
                        T.int32, loc)
        return ir.IfExp(inf, sign, _c(0, T.int32, loc), T.int32, loc)
    if n in _MATH:
        (a,) = _args(lw, node, which, 1)
        return ir.Intrinsic(_MATH[n], [a], BF, {}, loc)
    if n == "hrcp":
        (a,) = _args(lw, node, which, 1)
        return ir.BinOp("/", _c(1.0, BF, loc), a, BF, loc)
    if n == "hrsqrt":  # 1/sqrtf(x), rounded once
        (a,) = _args(lw, node, which, 1)
        s = ir.Intrinsic("sqrt", [_f32(a)], T.float32, {}, loc)
        return ir.Cast(ir.BinOp("/", _c(1.0, T.float32, loc), s, T.float32, loc), BF, loc)
    if n == "hexp10":
        (a,) = _args(lw, node, which, 1)
        p = ir.Intrinsic("pow", [_c(10.0, T.float32, loc), _f32(a)], T.float32, {}, loc)
        return ir.Cast(p, BF, loc)
    if n in _BITS:
        src = BF if n.startswith("bfloat16") else (T.int16 if n.startswith("int16") else T.uint16)
        (a,) = _args(lw, node, which, 1, to=src)
        res = BF if src != BF else (T.int16 if n.endswith("_int16") else T.uint16)
        return ir.Intrinsic(_BITS[n], [a], res, {}, loc)
    m = re.fullmatch(r"(float32|u?int\d+)_to_bfloat16_(r[nzdu])", n)
    if m:
        src = T.float32 if m.group(1) == "float32" else _INT_TYPES[m.group(1)]
        (a,) = _args(lw, node, which, 1, to=src)
        return ir.Intrinsic("bf16_round", [a], BF, {"mode": m.group(2)}, loc)
    m = re.fullmatch(r"bfloat16_to_(u?int\d+)_(r[nzdu])", n)
    if m:
        (a,) = _args(lw, node, which, 1)
        r = ir.Intrinsic(_TO_INT[m.group(2)], [_f32(a)], T.float32, {}, loc)
        return ir.Cast(r, _INT_TYPES[m.group(1)], loc)
    raise lw.error(f"cuda.{which} is not supported", node)


def _less_or_greater(a, b, loc):
    return ir.BoolOp("or", [ir.Compare("<", a, b, T.boolean, loc), ir.Compare(">", a, b, T.boolean, loc)],
                     T.boolean, loc)


def _sat(lw, r, node):
    """``r`` clamped to [0, 1]; NaN -> +0 (CUDA's ``_sat``)."""
    loc = lw.loc(node)
    r = lw.once(r, node)
    zero, one = _c(0.0, BF, loc), _c(1.0, BF, loc)
    low = ir.UnaryOp("not", ir.Compare(">=", r, zero, T.boolean, loc), T.boolean, loc)  # negative or NaN
    return ir.IfExp(low, zero, ir.IfExp(ir.Compare(">", r, one, T.boolean, loc), one, r, BF, loc), BF, loc)

