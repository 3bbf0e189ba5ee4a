"""Lowering of scalar expressions: constants, arithmetic on integers, floats and complex numbers,
comparisons, truth values and conversions. A mixin of ``lower.FunctionLowering``: it uses its
builder, ``expr``, ``fail`` and ``debug_failure``, and ``Target.math`` for the functions it needs
(``pow``, ``floor``, ``fma``...).

The rules are Python's and numpy's, never C's where they differ: integer division by zero gives 0
and ``MIN // -1`` wraps (no ``idiv`` trap), a shift by the width or more shifts every bit out,
``//`` and ``%`` round toward negative infinity, float->int conversions saturate, complex ``*`` and
``/`` follow numpy's loops bit for bit. float16 arithmetic is done in LLVM ``half`` directly: for
+ - * / the x86 backend promotes each op to float and rounds back, which is exactly IEEE half
arithmetic (float has more than 2*11+2 bits of precision). Math functions on float16 compute
in float32 and round.

Example::

    fx.cast(fx.expr(x), T.float64, T.int32)  # llvm.fptosi.sat.i32.f64
"""

from __future__ import annotations

from llvmlite import ir as L

from pykern.frontend import types as T
from pykern.codegen.lowering.llvm_types import I1, I32, I64, _fname, _zero

#: operators that are one LLVM instruction (IRBuilder method names)
_INT_OPS = {"+": "add", "-": "sub", "*": "mul", "&": "and_", "|": "or_", "^": "xor"}
_FLOAT_OPS = {"+": "fadd", "-": "fsub", "*": "fmul"}


class ScalarLowering:
    """Scalar expressions of ``FunctionLowering`` (see the module docstring)."""

    def _x_Const(self, e):
        t = e.type
        llty = self.types.value(t)
        if isinstance(t, T.Boolean):
            return L.Constant(I1, 1 if e.value else 0)
        if isinstance(t, T.Integer):
            return L.Constant(llty, int(e.value) & ((1 << t.bits) - 1))
        if isinstance(t, T.BFloat):
            from pykern.codegen.lowering.bf16 import bf16_bits

            return L.Constant(llty, bf16_bits(float(e.value)))
        if isinstance(t, T.Float):
            v = float(e.value)
            if t.bits == 16:
                import numpy as np

                v = float(np.float16(v))
            return L.Constant(llty, v)
        if isinstance(t, T.Complex):
            c = complex(e.value)
            f = self.types.value(t.component)
            return L.Constant(llty, [L.Constant(f, c.real), L.Constant(f, c.imag)])
        self.fail(f"internal error: constant of type {t}")

    def _fast(self):
        """Fast-math flags of float ``+ - *``: all of them under ``fastmath``,
        else ``contract`` where the target fuses multiply-adds by default
        (``Target.fp_contract``: amdgpu, as hipcc; not cpu)."""
        if self.options.fastmath:
            return ("fast",)
        return ("contract",) if self.ml.fp_contract else ()

    def _x_BinOp(self, e):
        a = self.expr(e.lhs)
        c = self.expr(e.rhs)
        t = e.type
        if self.options.debug and e.op in ("/", "//", "%") and isinstance(t, (T.Float, T.Integer, T.Boolean)) and not (
                self.options.fastmath and isinstance(t, T.Float)):  # numba: fastmath float division never raises
            self._zero_division_check(c, e.op)
        if isinstance(t, T.Float):
            return self._float_binop(e.op, a, c, t)
        if isinstance(t, T.Complex):
            return self._complex_binop(e.op, a, c, t)
        if isinstance(t, (T.Integer, T.Boolean)):
            narrow = self.narrow_division(e, a)
            return narrow if narrow is not None else self._int_binop(e.op, a, c, t)
        self.fail(f"internal error: binary {e.op} on {t}")

    def _int_binop(self, op, a, c, t):
        b = self.builder
        signed = getattr(t, "signed", False)
        llty = a.type
        bits = llty.width
        zero = L.Constant(llty, 0)
        one = L.Constant(llty, 1)
        if op in _INT_OPS:
            return getattr(b, _INT_OPS[op])(a, c)
        if op in ("<<", ">>"):
            # numpy's and Python's rule: a count >= the width (or negative, which compares as a
            # huge unsigned) shifts everything out: 0, or the sign for >> of signed. Selects,
            # never a branch; LLVM's shift by >= width would be poison.
            if bits == 1:
                return a if op == ">>" else b.select(b.icmp_unsigned("==", c, zero), a, zero)
            width = L.Constant(llty, bits)
            out = b.icmp_unsigned(">=", c, width)
            if op == ">>" and signed:
                return b.ashr(a, b.select(out, L.Constant(llty, bits - 1), c))
            cnt = b.and_(c, L.Constant(llty, bits - 1))
            r = b.shl(a, cnt) if op == "<<" else b.lshr(a, cnt)
            return b.select(out, zero, r)
        if op in ("//", "%"):
            is0 = b.icmp_unsigned("==", c, zero)
            if not signed:
                safe = b.select(is0, one, c)
                r = b.udiv(a, safe) if op == "//" else b.urem(a, safe)
                return b.select(is0, zero, r)
            m1 = b.icmp_signed("==", c, L.Constant(llty, -1))
            safe = b.select(b.or_(is0, m1), one, c)  # x86 idiv traps on /0 and MIN/-1
            q = b.sdiv(a, safe)
            r = b.srem(a, safe)
            fix = b.and_(b.icmp_signed("!=", r, zero), b.icmp_signed("<", b.xor(r, c), zero))
            if op == "//":
                res = b.select(fix, b.sub(q, one), q)
                res = b.select(m1, b.neg(a), res)
            else:
                res = b.select(fix, b.add(r, c), r)
                res = b.select(m1, zero, res)
            return b.select(is0, zero, res)
        if op == "**":
            f = self._ipow_helper(llty, signed)
            return b.call(f, [a, c])
        if op == "/":
            self.fail("internal error: integer '/' (frontend must cast to float)")
        self.fail(f"internal error: integer operator {op}")

    def _ipow_helper(self, llty, signed):
        name = f"__pykern_ipow_{'i' if signed else 'u'}{llty.width}"
        f = self.module.globals.get(name)
        if f is not None:
            return f
        f = L.Function(self.module, L.FunctionType(llty, [llty, llty]), name)
        f.linkage = "internal"
        base, exp = f.args
        entry = f.append_basic_block("entry")
        loop = f.append_basic_block("loop")
        done = f.append_basic_block("done")
        negb = f.append_basic_block("negexp")
        b = L.IRBuilder(entry)
        zero, one = L.Constant(llty, 0), L.Constant(llty, 1)
        if signed:
            b.cbranch(b.icmp_signed("<", exp, zero), negb, loop)
        else:
            b.branch(loop)
        b.position_at_end(loop)
        acc = b.phi(llty)
        bb = b.phi(llty)
        ee = b.phi(llty)
        acc.add_incoming(one, entry)
        bb.add_incoming(base, entry)
        ee.add_incoming(exp, entry)
        odd = b.trunc(ee, I1) if llty.width > 1 else ee
        acc2 = b.select(odd, b.mul(acc, bb), acc)
        ee2 = b.lshr(ee, one)
        bb2 = b.mul(bb, bb)
        acc.add_incoming(acc2, loop)
        bb.add_incoming(bb2, loop)
        ee.add_incoming(ee2, loop)
        b.cbranch(b.icmp_unsigned("==", ee2, zero), done, loop)
        b.position_at_end(done)
        b.ret(acc2)
        b.position_at_end(negb)
        # negative exponent: 1 -> 1, -1 -> +-1 by parity, else 0 (integer result of 1/x**n), and
        # 0 -> the type's minimum: numba.cuda's int_power returns -1 << (bits - 1) there (its
        # numpy error model does not raise ZeroDivisionError)
        is1 = b.icmp_signed("==", base, one)
        ism1 = b.icmp_signed("==", base, L.Constant(llty, -1))
        odd = b.trunc(exp, I1) if llty.width > 1 else exp
        r = b.select(is1, one, b.select(ism1, b.select(odd, L.Constant(llty, -1), one), zero))
        r = b.select(b.icmp_signed("==", base, zero), L.Constant(llty, -(1 << (llty.width - 1))), r)
        b.ret(r)
        return f

    def _float_binop(self, op, a, c, t):
        b = self.builder
        if op in _FLOAT_OPS:
            return getattr(b, _FLOAT_OPS[op])(a, c, flags=self._fast())
        if op == "/":
            # ``contract`` is about fusing multiply-adds; a division keeps exact rounding
            return b.fdiv(a, c, flags=("fast",) if self.options.fastmath else ())
        if op == "**":
            return self.target.math(self, "pow", [a, c], t)
        if op in ("//", "%"):
            return self._float_divmod(a, c, t)[0 if op == "//" else 1]

    def _complex_binop(self, op, a, c, t):
        """Complex + - * / with numpy's formulas: the product as its x86-64-v3 loop
        computes it (each part one fused multiply-add) and Smith's division
        (loops.c), so that results match numpy bit for bit, infinities and NaNs
        included. ``/`` reaches here from ``np.divide`` only (numba's ufunc loop is
        Smith's too); the operator is ``_cmath.cdiv``, CPython's algorithm as numba's."""
        b = self.builder
        fl = self._fast()
        ar, ai = b.extract_value(a, 0), b.extract_value(a, 1)
        cr, ci = b.extract_value(c, 0), b.extract_value(c, 1)
        if op in ("+", "-"):
            f = b.fadd if op == "+" else b.fsub
            rr, ri = f(ar, cr, flags=fl), f(ai, ci, flags=fl)
        elif op == "*":
            # numpy's loop on FMA hardware (x86-64-v3, every GPU): one product fused
            fma = lambda x, y, z: self.target.math(self, "fma", [x, y, z], t.component)  # noqa: E731
            rr = fma(ar, cr, b.fneg(b.fmul(ai, ci, flags=fl)))
            ri = fma(ar, ci, b.fmul(ai, cr, flags=fl))
        elif op == "/":
            fty = t.component
            ty = ar.type
            one, zero = L.Constant(ty, 1.0), L.Constant(ty, 0.0)
            acr = self.target.math(self, "fabs", [cr], fty)
            aci = self.target.math(self, "fabs", [ci], fty)
            real_big = b.fcmp_ordered(">=", acr, aci)
            both0 = b.and_(b.fcmp_ordered("==", acr, zero), b.fcmp_ordered("==", aci, zero))
            # |c.real| >= |c.imag|
            rat1 = b.fdiv(ci, cr)
            scl1 = b.fdiv(one, b.fadd(cr, b.fmul(ci, rat1)))
            r1 = b.fmul(b.fadd(ar, b.fmul(ai, rat1)), scl1)
            i1 = b.fmul(b.fsub(ai, b.fmul(ar, rat1)), scl1)
            # division by zero: a complex inf or nan, as numpy
            r1 = b.select(both0, b.fdiv(ar, acr), r1)
            i1 = b.select(both0, b.fdiv(ai, acr), i1)
            # |c.real| < |c.imag| (or NaN)
            rat2 = b.fdiv(cr, ci)
            scl2 = b.fdiv(one, b.fadd(ci, b.fmul(cr, rat2)))
            r2 = b.fmul(b.fadd(b.fmul(ar, rat2), ai), scl2)
            i2 = b.fmul(b.fsub(b.fmul(ai, rat2), ar), scl2)
            rr, ri = b.select(real_big, r1, r2), b.select(real_big, i1, i2)
        else:
            self.fail(f"internal error: complex operator {op}")
        return self._make_complex(rr, ri, t)

    def _make_complex(self, re, im, t):
        b = self.builder
        v = b.insert_value(_zero(self.types.value(t)), re, 0)
        return b.insert_value(v, im, 1)

    def _float_divmod(self, a, c, t):
        """Python/numpy divmod on floats (npy_divmod)."""
        b = self.builder
        ty = a.type
        zero = L.Constant(ty, 0.0)
        mod = b.frem(a, c)
        div = b.fdiv(b.fsub(a, mod), c)
        modnz = b.fcmp_unordered("!=", mod, zero)
        sign_differs = b.xor(b.fcmp_ordered("<", c, zero), b.fcmp_ordered("<", mod, zero))
        adj = b.and_(modnz, sign_differs)
        mod2 = b.select(adj, b.fadd(mod, c), mod)
        div2 = b.select(adj, b.fsub(div, L.Constant(ty, 1.0)), div)
        copysign = lambda x, y: self.target.math(self, "copysign", [x, y], t)
        mod3 = b.select(modnz, mod2, copysign(zero, c))
        divnz = b.fcmp_unordered("!=", div2, zero)
        fl = self.target.math(self, "floor", [div2], t)
        fl2 = b.select(b.fcmp_ordered(">", b.fsub(div2, fl), L.Constant(ty, 0.5)), b.fadd(fl, L.Constant(ty, 1.0)), fl)
        q = b.select(divnz, fl2, copysign(zero, b.fdiv(a, c)))
        # division by zero: numpy gives a/b (inf/nan) and fmod -> nan
        cz = b.fcmp_ordered("==", c, zero)
        q = b.select(cz, b.fdiv(a, c), q)
        mod3 = b.select(cz, mod, mod3)
        return q, mod3

    def _x_UnaryOp(self, e):
        b = self.builder
        v = self.expr(e.operand)
        t = e.type
        if e.op == "-":
            if isinstance(t, T.Float):
                return b.fneg(v)
            if isinstance(t, T.Complex):
                return self._make_complex(b.fneg(b.extract_value(v, 0)), b.fneg(b.extract_value(v, 1)), t)
            return b.neg(v)
        if e.op == "~":
            return b.not_(v)
        if e.op == "not":
            if v.type != I1:
                v = self._to_bool(v, e.operand.type)
            return b.not_(v)
        self.fail(f"internal error: unary {e.op}")

    def _x_Compare(self, e):
        b = self.builder
        a = self.expr(e.lhs)
        c = self.expr(e.rhs)
        t = e.lhs.type
        if isinstance(t, T.Float):
            if e.op == "!=":
                return b.fcmp_unordered("!=", a, c)
            return b.fcmp_ordered(e.op, a, c)
        if isinstance(t, T.Complex):  # == and != only (the frontend refuses the rest)
            eq = b.and_(b.fcmp_ordered("==", b.extract_value(a, 0), b.extract_value(c, 0)),
                        b.fcmp_ordered("==", b.extract_value(a, 1), b.extract_value(c, 1)))
            return eq if e.op == "==" else b.not_(eq)
        if isinstance(t, T.Integer) and t.signed:
            return b.icmp_signed(e.op, a, c)
        return b.icmp_unsigned(e.op, a, c)

    def _to_bool(self, v, src):
        b = self.builder
        if isinstance(src, T.Complex):
            re, im = b.extract_value(v, 0), b.extract_value(v, 1)
            z = L.Constant(re.type, 0.0)
            return b.or_(b.fcmp_unordered("!=", re, z), b.fcmp_unordered("!=", im, z))
        if isinstance(src, T.Float):
            return b.fcmp_unordered("!=", v, L.Constant(v.type, 0.0))
        if v.type == I1:
            return v
        return b.icmp_unsigned("!=", v, L.Constant(v.type, 0))

    def _x_Cast(self, e):
        v = self.expr(e.value)
        return self.cast(v, e.value.type, e.type)

    def cast(self, v, src, dst):
        b = self.builder
        if src == dst:
            return v
        if isinstance(dst, T.BFloat) and not isinstance(src, T.Complex):
            return self.to_bf16(v, src)
        if isinstance(src, T.BFloat):
            return self.from_bf16(v, dst)
        dl = self.types.value(dst)
        if isinstance(dst, T.Boolean):
            return self._to_bool(v, src)
        if isinstance(dst, T.Complex):
            c = dst.component
            if isinstance(src, T.Complex):
                re = self.cast(b.extract_value(v, 0), src.component, c)
                im = self.cast(b.extract_value(v, 1), src.component, c)
            else:
                re, im = self.cast(v, src, c), L.Constant(self.types.value(c), 0.0)
            return self._make_complex(re, im, dst)
        if isinstance(src, T.Boolean):
            if isinstance(dst, T.Float):
                return b.uitofp(v, dl)
            return b.zext(v, dl)
        if isinstance(src, T.Integer) and isinstance(dst, T.Integer):
            if dst.bits < src.bits:
                return b.trunc(v, dl)
            if dst.bits > src.bits:
                return b.sext(v, dl) if src.signed else b.zext(v, dl)
            return v
        if isinstance(src, T.Integer) and isinstance(dst, T.Float):
            return b.sitofp(v, dl) if src.signed else b.uitofp(v, dl)
        if isinstance(src, T.Float) and isinstance(dst, T.Float):
            if dst.bits > src.bits:
                return b.fpext(v, dl)
            if src.bits == 64 and dst.bits == 16:
                return b.fptrunc(self._f64_to_f32_round_odd(v), dl)
            return b.fptrunc(v, dl)
        if isinstance(src, T.Float) and isinstance(dst, T.Integer):
            if src.bits == 16:
                v = b.fpext(v, L.FloatType())
            kind = "fptosi" if dst.signed else "fptoui"
            f = self.intrinsic(f"llvm.{kind}.sat.i{dst.bits}.{_fname(v.type)}", dl, [v.type])
            return b.call(f, [v])
        self.fail(f"cannot convert {src} to {dst}")

    def _f64_to_f32_round_odd(self, d):
        """double -> float rounded to odd, so that a following float -> half
        rounding is the correctly rounded double -> half (24 >= 11 + 2 bits).
        Avoids the ``__truncdfhf2`` libcall, which the host process lacks."""
        b = self.builder
        f = b.fptrunc(d, L.FloatType())
        back = b.fpext(f, L.DoubleType())
        inexact = b.fcmp_ordered("!=", back, d)  # false for NaN
        fab = self.target.math(self, "fabs", [back], T.float64)
        dab = self.target.math(self, "fabs", [d], T.float64)
        bits = b.bitcast(f, I32)
        bits = b.select(b.and_(inexact, b.fcmp_ordered(">", fab, dab)), b.sub(bits, L.Constant(I32, 1)), bits)
        bits = b.select(inexact, b.or_(bits, L.Constant(I32, 1)), bits)
        return b.bitcast(bits, L.FloatType())

    def _zero_division_check(self, divisor, op):
        """debug=True: numba's debug mode uses the Python error model, so a
        division or modulo by zero (integer or float) is a ZeroDivisionError."""
        b = self.builder
        if isinstance(divisor.type, L.IntType):
            is0 = b.icmp_unsigned("==", divisor, L.Constant(divisor.type, 0))
        else:
            is0 = b.fcmp_ordered("==", divisor, L.Constant(divisor.type, 0.0))
        fail_bb = self._new_block("divzero")
        ok_bb = self._new_block("divok")
        b.cbranch(is0, fail_bb, ok_bb)
        what = {"/": "division", "//": "integer division or modulo", "%": "modulo"}[op]
        zero = L.Constant(I64, 0)
        self.debug_failure(fail_bb, ok_bb, "zerodiv", f"{what} by zero", [zero, zero, zero])
