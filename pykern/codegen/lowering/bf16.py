"""bfloat16 in LLVM: an ``i16`` holding the top half of a float32 (the bits ``ml_dtypes`` stores).

The frontend leaves codegen only conversions, constants, loads and stores of bfloat16
(``frontend/bf16_widen.py`` turns every operation into float32 arithmetic between conversions),
so this module is the one place that knows the format:

* bfloat16 -> float32 is exact: the bits shifted up 16.
* float32 -> bfloat16 rounds by ``mode``: ``rn`` to nearest-even (``Cast``), ``rz``/``rd``/``ru``
  toward zero / down / up (``cuda.bf16``'s ``_rz``/``_rd``/``_ru`` conversions). A NaN becomes
  the quiet NaN ``0x7FC0`` with its sign, as ``ml_dtypes`` gives. Where the target has a
  conversion instruction (``Target.bf16_convert``: gfx950's ``v_cvt_pk_bf16_f32``) ``rn`` is
  LLVM's ``fptrunc float to bfloat``; elsewhere an integer sequence.
* Other sources reach float32 without a rounding that could change the result: float16, integers
  of 16 bits or less exactly; float64 rounded to odd (24 >= 8 + 2 bits, so the second rounding is
  the correct one); 32-bit integers through float64 (exact); 64-bit integers keep their top 53
  bits and a sticky bit for the rest, which float64 holds exactly.

Example::

    fx.to_bf16(fx.expr(x), T.float64, "rn")  # i16, the correctly rounded bfloat16 of a double
"""

from __future__ import annotations

from llvmlite import ir as L

from pykern.frontend import types as T
from pykern.codegen.lowering.llvm_types import I1, I32, I64

I16 = L.IntType(16)
_NAN = 0x7FC0


class _BFloatType(L.types._BaseFloatType):
    """LLVM's ``bfloat`` (llvmlite.ir has none); only ever a cast's operand."""

    null = "0.0"
    intrinsic_name = "bf16"

    def __str__(self):
        return "bfloat"

    def format_constant(self, value):
        raise NotImplementedError("bfloat constants are emitted as i16 bits")


_BFloatType._create_instance()  # llvmlite's float types are singletons made this way


def bf16_bits(value: float) -> int:
    """The bits of ``value`` rounded to nearest-even bfloat16 (``ml_dtypes``' conversion)."""
    import numpy as np

    return int(np.array([value], dtype=np.float64).astype(T.bfloat16_dtype()).view(np.uint16)[0])


class BF16Lowering:
    """bfloat16 conversions of ``FunctionLowering`` (see the module docstring)."""

    def bf16_to_f32(self, v):
        b = self.builder
        return b.bitcast(b.shl(b.zext(v, I32), L.Constant(I32, 16)), L.FloatType())

    def f32_to_bf16(self, f, mode: str = "rn"):
        b = self.builder
        if mode == "rn" and self.target.bf16_convert():
            return b.bitcast(b.fptrunc(f, _BFloatType()), I16)
        bits = b.bitcast(f, I32)
        c = lambda n: L.Constant(I32, n)  # noqa: E731
        top = b.lshr(bits, c(16))
        if mode == "rn":
            r = b.lshr(b.add(b.add(bits, c(0x7FFF)), b.and_(top, c(1))), c(16))
        else:
            inexact = b.icmp_unsigned("!=", b.and_(bits, c(0xFFFF)), c(0))
            neg = b.icmp_signed("<", bits, c(0))
            away = {"rz": None, "ru": b.not_(neg), "rd": neg}[mode]
            r = top if away is None else b.select(b.and_(inexact, away), b.add(top, c(1)), top)
        nan = b.or_(b.and_(top, c(0x8000)), c(_NAN))
        r = b.select(b.fcmp_unordered("uno", f, f), nan, r)
        return b.trunc(r, I16)

    def to_bf16(self, v, src, mode: str = "rn"):
        """``v`` of pykern type ``src`` (a real number or boolean) as bfloat16 bits, rounded by ``mode``."""
        b = self.builder
        if isinstance(src, T.BFloat):
            return v
        if isinstance(src, T.Boolean):
            return self.f32_to_bf16(b.uitofp(v, L.FloatType()), mode)
        if isinstance(src, T.Float):
            if src.bits == 16:
                return self.f32_to_bf16(b.fpext(v, L.FloatType()), mode)
            if src.bits == 32:
                return self.f32_to_bf16(v, mode)
            return self.f32_to_bf16(self._f64_to_f32_round_odd(v), mode)
        if isinstance(src, T.Integer):
            if src.bits <= 16:  # exact in float32
                f = b.sitofp(v, L.FloatType()) if src.signed else b.uitofp(v, L.FloatType())
                return self.f32_to_bf16(f, mode)
            if src.bits < 64:  # exact in float64
                d = b.sitofp(v, L.DoubleType()) if src.signed else b.uitofp(v, L.DoubleType())
            else:
                d = self._int64_to_f64_sticky(v, src.signed)
            return self.f32_to_bf16(self._f64_to_f32_round_odd(d), mode)
        self.fail(f"cannot convert {src} to bfloat16")

    def _int64_to_f64_sticky(self, v, signed: bool):
        """A double that rounds to bfloat16 (through a float rounded to odd) as ``v`` would: the
        magnitude's bits down to bit 11 and one sticky bit for any below, all exact in a double."""
        b = self.builder
        c = lambda n: L.Constant(I64, n)  # noqa: E731
        neg = b.icmp_signed("<", v, c(0)) if signed else L.Constant(I1, 0)
        m = b.select(neg, b.neg(v), v) if signed else v  # INT64_MIN's magnitude is 2**63 unsigned
        low = b.and_(m, c(0xFFF))
        sticky = b.select(b.icmp_unsigned("!=", low, c(0)), c(0x800), c(0))
        m2 = b.select(b.icmp_unsigned(">=", m, c(1 << 53)), b.or_(b.and_(m, c(~0xFFF & (2**64 - 1))), sticky), m)
        d = b.uitofp(m2, L.DoubleType())
        return b.select(neg, b.fneg(d), d)

    def from_bf16(self, v, dst):
        """bfloat16 bits ``v`` converted to pykern type ``dst`` (through the exact float32)."""
        if isinstance(dst, T.BFloat):
            return v
        return self.cast(self.bf16_to_f32(v), T.float32, dst)

    def bf16_intrinsic(self, e, args):
        """The ``bf16`` category of ``ir.INTRINSICS``."""
        n = e.name
        if n == "bf16_round":
            return self.to_bf16(args[0], e.args[0].type, e.attrs["mode"])
        if n == "bf16_fma":
            return self._bf16_fma(*args)
        return args[0]  # the bit casts: the value already is its bits

    def _bf16_fma(self, a, x, c):
        """``a*x + c`` rounded once: the product is exact in a double, the sum is a double ``s``
        plus the error TwoSum finds; ``s`` rounded to odd by that error carries the exact sum's
        rounding to bfloat16 (a double's 53 bits >= 8 + 2)."""
        b = self.builder
        d = L.DoubleType()
        wide = lambda v: b.fpext(self.bf16_to_f32(v), d)  # noqa: E731
        p = b.fmul(wide(a), wide(x))
        cw = wide(c)
        s = b.fadd(p, cw)
        bb = b.fsub(s, p)
        err = b.fadd(b.fsub(p, b.fsub(s, bb)), b.fsub(cw, bb))
        zero = L.Constant(d, 0.0)
        inexact = b.fcmp_ordered("one", err, zero)  # NaN (inf operands): s is already the answer
        bits = b.bitcast(s, I64)
        over = b.xor(b.fcmp_ordered("<", err, zero), b.icmp_signed("<", bits, L.Constant(I64, 0)))
        bits = b.select(b.and_(inexact, over), b.sub(bits, L.Constant(I64, 1)), bits)
        bits = b.select(inexact, b.or_(bits, L.Constant(I64, 1)), bits)
        return self.to_bf16(b.bitcast(bits, d), T.float64)
