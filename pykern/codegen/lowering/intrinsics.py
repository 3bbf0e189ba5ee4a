"""Lowering of ``ir.Intrinsic`` and ``ir.Atomic`` nodes: special registers, barriers, fences
and wave operations (handed to the ``Target``), math (``Target.math``, or LLVM intrinsics for bit
operations, ``frexp``/``ldexp``), numeric built-ins with Python's or numpy's rules (``abs``,
``min``/``max``, ``minimum``/``fmin``, ``round(x, n)``, integer ``fmod``), output, and atomics.
A mixin of ``lower.FunctionLowering``: it uses its builder, ``expr``, ``cast``, ``_to_bool``,
``element_ptr`` and ``fail``.

Which ``Target`` method receives an intrinsic is read from its category in ``ir.INTRINSICS``
(the sets below); adding an intrinsic is one row there plus its lowering here.

Example::

    fx.expr(ir.Intrinsic("popc", [x], T.int32, {}))  # llvm.ctpop, widened to i32
"""

from __future__ import annotations

from llvmlite import ir as L

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.codegen.lowering.llvm_types import I1, I8, I32, I64, _bits, _fname

#: what each Target method receives, by the intrinsic's category in ir.INTRINSICS
SPECIAL_REGISTERS = ir.intrinsic_names("special")  # Target.special_register (int32 results)
BARRIER_KINDS = ir.intrinsic_names("barrier")  # Target.barrier (kind argument)
WAVE_OPS = ir.intrinsic_names("wave")  # Target.wave_op
_MATH_NAMES = frozenset(ir.intrinsic_names("math"))  # Target.math
_BF16_NAMES = frozenset(ir.intrinsic_names("bf16"))  # lowering/bf16.py
_MATRIX_NAMES = frozenset(ir.intrinsic_names("matrix"))  # Target.matrix_op
_FENCES = {"threadfence_block": "block", "threadfence": "device", "threadfence_system": "system"}


class IntrinsicLowering:
    """Intrinsics and atomics of ``FunctionLowering`` (see the module docstring)."""

    def _x_Intrinsic(self, e):
        n = e.name
        b = self.builder
        tgt = self.target
        if n in SPECIAL_REGISTERS:
            return tgt.special_register(self, n, int(e.attrs.get("axis", 0)))
        if n in BARRIER_KINDS:
            site = self.ml.new_site(n, e.loc or self.loc)
            pred = None
            if n not in ("syncthreads", "grid_sync"):
                pred = self.expr(e.args[0])
                if pred.type != I1:
                    pred = self._to_bool(pred, e.args[0].type)
            return tgt.barrier(self, n, pred, site)
        if n in _FENCES:
            tgt.fence(self, _FENCES[n])
            return None
        if n in WAVE_OPS:
            return self._wave_op(e)
        if n == "lanemask_lt":
            lane = b.zext(tgt.special_register(self, "laneid", 0), I64)
            return b.sub(b.shl(L.Constant(I64, 1), lane), L.Constant(I64, 1))
        args = [self.expr(a) for a in e.args]
        if n in _BF16_NAMES:
            return self.bf16_intrinsic(e, args)
        if n in _MATRIX_NAMES:
            return tgt.matrix_op(self, e, args)
        if n in ("popc", "clz", "ffs", "brev"):
            return self._bit_op(n, args[0], e)
        if n in ("isnan", "isinf", "isfinite"):
            x = args[0]
            if n == "isnan":
                return b.fcmp_unordered("uno", x, x)
            ax = tgt.math(self, "fabs", [x], e.args[0].type)
            inf = L.Constant(x.type, float("inf"))
            return b.fcmp_ordered("==", ax, inf) if n == "isinf" else b.fcmp_ordered("<", ax, inf)
        if n == "abs":
            t = e.type
            if isinstance(t, T.Float):
                return tgt.math(self, "fabs", args, t)
            if isinstance(t, T.Integer) and t.signed:
                x = args[0]
                return b.select(b.icmp_signed("<", x, L.Constant(x.type, 0)), b.neg(x), x)
            return args[0]
        if n in ("min", "max"):
            a, c = args
            t = e.type
            if isinstance(t, T.Float):
                # Python: min(a, b) is b only if b < a; max(a, b) is b only if b > a
                take_c = b.fcmp_ordered("<" if n == "min" else ">", c, a)
            elif isinstance(t, T.Integer) and t.signed:
                take_c = b.icmp_signed("<" if n == "min" else ">", c, a)
            else:
                take_c = b.icmp_unsigned("<" if n == "min" else ">", c, a)
            return b.select(take_c, c, a)
        if n in ("minimum", "maximum", "fmin", "fmax"):
            # numpy's loops: x86 minps order for float32/64 (of equal values, b), float16's
            # half loops keep a; minimum/maximum keep a NaN a, fmin/fmax drop a NaN b
            a, c = args
            cmp = "<" if n in ("minimum", "fmin") else ">"
            if e.type == T.float16:
                cmp += "="
            keep_a = b.fcmp_ordered(cmp, a, c)
            nan = a if n in ("minimum", "maximum") else c
            keep_a = b.or_(keep_a, b.fcmp_unordered("uno", nan, nan))
            return b.select(keep_a, a, c)
        if n == "fmod" and isinstance(e.type, T.Integer):
            return self._int_fmod(args[0], args[1], e.type.signed)
        if n == "round_digits":
            return self._round_digits(args[0], args[1])
        if n == "round":
            nd = (e.attrs or {}).get("ndigits")
            if nd is not None:
                return self._round_ndigits(args[0], nd)
            return tgt.math(self, "rint", args, e.type)
        if n == "print":
            kinds = ["b" if isinstance(a.type, T.Boolean) else "f" if isinstance(a.type, T.Float) else "i"
                     for a in e.args]
            vals = [self._to_bool(v, a.type) if k == "b" and v.type != I1 else v
                    for v, a, k in zip(args, e.args, kinds)]
            tgt.print_line(self, e.attrs["format"], list(zip(kinds, vals)))
            return None
        if n == "frexp":
            return self._frexp(args[0], e)
        if n == "ldexp":
            x = args[0]
            sfx = _fname(x.type)
            return b.call(self.intrinsic(f"llvm.ldexp.{sfx}.i32", x.type, [x.type, I32]), [x, args[1]])
        if n == "nanosleep":
            tgt.nanosleep(self, args[0])
            return None
        if n == "breakpoint":  # only the sim target stops there (the compile warned)
            return None
        if n in ("value_error", "index_error"):
            if self.options.debug:
                fail_bb, after = self._new_block(n), self._new_block(n + ".after")
                b.branch(fail_bb)
                kind, values = ("value", [L.Constant(I64, 0)] * 3) if n == "value_error" else \
                    ("bounds", [args[0], args[1], L.Constant(I64, 0)])
                self.debug_failure(fail_bb, after, kind, (e.attrs or {}).get("message", "bad value"), values)
            return None
        if n == "complex":
            return self._make_complex(args[0], args[1], e.type)
        if n in ("real", "imag"):
            return b.extract_value(args[0], 0 if n == "real" else 1)
        if n in _MATH_NAMES:
            return tgt.math(self, n, args, e.type)
        self.fail(f"internal error: intrinsic {n!r} not implemented by codegen")

    def _frexp(self, x, e):
        b = self.builder
        sfx = _fname(x.type)
        st = L.LiteralStructType([x.type, I32])
        r = b.call(self.intrinsic(f"llvm.frexp.{sfx}.i32", st, [x.type]), [x])
        # LLVM leaves the exponent of inf/NaN unspecified; Python and C give 0
        ax = self.target.math(self, "fabs", [x], e.args[0].type)
        finite = b.fcmp_ordered("<", ax, L.Constant(x.type, float("inf")))
        ex = b.select(finite, b.extract_value(r, 1), L.Constant(I32, 0))
        return b.insert_value(r, ex, 1)

    def _round_ndigits(self, x, nd):
        """Python's ``round(x, nd)`` of a double, selects only. Python rounds the exact
        decimal value: with p = 10**|nd| (exact for |nd| <= 22), x*p (or x/p) is split
        exactly into hi + lo by an FMA, k is the integer nearest to hi + lo (ties to even),
        and k/p (k*p) is one correctly rounded operation. When |hi| >= 2**53 the digit
        is below x's precision and x is the answer (also inf/nan; never an overflow)."""
        b = self.builder
        D = x.type
        f64 = T.float64
        math = lambda name, *a: self.target.math(self, name, list(a), f64)  # noqa: E731
        c = lambda v: L.Constant(D, v)  # noqa: E731
        if nd > 323:  # CPython's NDIGITS_MAX: x rounds to itself
            return x
        if nd < -308:  # NDIGITS_MIN: +-0, inf/nan stay
            finite = b.fcmp_ordered("<", math("fabs", x), c(float("inf")))
            return b.select(finite, math("copysign", c(0.0), x), x)
        p = c(10.0 ** abs(nd))
        if nd > 0:
            hi = b.fmul(x, p)
        else:
            hi = b.fdiv(x, p)
        r = math("rint", hi)
        if abs(nd) <= 22:
            if nd > 0:
                lo, half = math("fma", x, p, b.fneg(hi)), c(0.5)  # x*p == hi + lo
            else:
                lo, half = math("fma", b.fneg(hi), p, x), c(10.0 ** -nd / 2)  # x/p == hi + lo/p
            r = self._round_tie_fix(hi, r, lo, half, math)
        # beyond 10**22 the power of ten is inexact: scaled and unscaled (may differ from
        # Python in the last bit, never overflows)
        res = b.fdiv(r, p) if nd > 0 else b.fmul(r, p)
        small = b.fcmp_ordered("<", math("fabs", hi), c(2.0**53))
        return b.select(small, res, x)

    def _round_tie_fix(self, hi, r, lo, half, math):
        """``r = rint(hi)`` moved by one where the exact value ``hi + lo`` (``lo`` in units
        where ``half`` is half of one) lies on the other side of a tie than ``hi`` alone,
        or on a tie that ties-to-even must break the other way."""
        b = self.builder
        c = lambda v: L.Constant(hi.type, v)  # noqa: E731
        d = b.fsub(hi, r)  # exact, in [-0.5, 0.5]
        hr = b.fmul(r, c(0.5))
        odd = b.fcmp_ordered("!=", math("rint", hr), hr)
        zero = c(0.0)
        up = b.or_(b.and_(b.fcmp_ordered("==", d, c(0.5)), b.fcmp_ordered(">", lo, zero)),
                   b.and_(b.and_(b.fcmp_ordered("==", d, zero), b.fcmp_ordered("==", lo, half)), odd))
        down = b.or_(b.and_(b.fcmp_ordered("==", d, c(-0.5)), b.fcmp_ordered("<", lo, zero)),
                     b.and_(b.and_(b.fcmp_ordered("==", d, zero), b.fcmp_ordered("==", lo, b.fneg(half))), odd))
        return b.select(up, b.fadd(r, c(1.0)), b.select(down, b.fsub(r, c(1.0)), r))

    def _round_digits(self, x, nd):
        """``_round_ndigits`` with ``nd`` an i64 known at run time: the same steps, each
        choice a select. 10**k is exact for k <= 22 (a select among constants); beyond,
        ``pow`` (as the constant form, the last bit may differ from Python there)."""
        b = self.builder
        D = x.type
        f64 = T.float64
        math = lambda name, *a: self.target.math(self, name, list(a), f64)  # noqa: E731
        c = lambda v: L.Constant(D, v)  # noqa: E731
        i = lambda v: L.Constant(I64, v)  # noqa: E731
        pos = b.icmp_signed(">", nd, i(0))
        k = b.select(pos, nd, b.neg(nd))
        exact = b.icmp_signed("<=", k, i(22))
        p = math("pow", c(10.0), b.sitofp(b.select(exact, i(0), k), D))
        for j in range(23):
            p = b.select(b.icmp_signed("==", k, i(j)), c(10.0 ** j), p)
        hi = b.select(pos, b.fmul(x, p), b.fdiv(x, p))
        r = math("rint", hi)
        lo = b.select(pos, math("fma", x, p, b.fneg(hi)), math("fma", b.fneg(hi), p, x))
        half = b.select(pos, c(0.5), b.fmul(p, c(0.5)))
        r = b.select(exact, self._round_tie_fix(hi, r, lo, half, math), r)
        res = b.select(pos, b.fdiv(r, p), b.fmul(r, p))
        small = b.fcmp_ordered("<", math("fabs", hi), c(2.0**53))
        out = b.select(small, res, x)
        finite = b.fcmp_ordered("<", math("fabs", x), c(float("inf")))
        tiny = b.select(finite, math("copysign", c(0.0), x), x)  # NDIGITS_MIN: +-0, inf/nan stay
        out = b.select(b.icmp_signed("<", nd, i(-308)), tiny, out)
        return b.select(b.icmp_signed(">", nd, i(323)), x, out)  # NDIGITS_MAX: x itself

    def _int_fmod(self, a, c, signed):
        """C remainder (numpy's fmod on integers): by 0 gives 0; ``x % -1`` is 0 (no idiv trap)."""
        b = self.builder
        zero, one = L.Constant(a.type, 0), L.Constant(a.type, 1)
        bad = b.icmp_unsigned("==", c, zero)
        if signed:
            bad = b.or_(bad, b.icmp_signed("==", c, L.Constant(a.type, -1)))
        safe = b.select(bad, one, c)
        r = b.srem(a, safe) if signed else b.urem(a, safe)
        return b.select(bad, zero, r)

    def _bit_op(self, n, x, e):
        b = self.builder
        ty = x.type
        w = ty.width
        if n == "brev":
            return b.call(self.intrinsic(f"llvm.bitreverse.i{w}", ty, [ty]), [x])
        if n == "popc":
            r = b.call(self.intrinsic(f"llvm.ctpop.i{w}", ty, [ty]), [x])
        elif n == "clz":
            r = b.call(self.intrinsic(f"llvm.ctlz.i{w}", ty, [ty, I1]), [x, L.Constant(I1, 0)])
        else:
            tz = b.call(self.intrinsic(f"llvm.cttz.i{w}", ty, [ty, I1]), [x, L.Constant(I1, 0)])
            r = b.select(b.icmp_unsigned("==", x, L.Constant(ty, 0)), L.Constant(ty, 0), b.add(tz, L.Constant(ty, 1)))
        if w > 32:
            return b.trunc(r, I32)
        if w < 32:
            return b.zext(r, I32)
        return r

    def _wave_op(self, e):
        b = self.builder
        n = e.name
        site = self.ml.new_site(n, e.loc or self.loc)
        args = [self.expr(a) for a in e.args]
        if n in ("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"):
            mask, val, lane = args
            vt = e.args[1].type
            ity = L.IntType(max(8, _bits(vt)))
            if isinstance(vt, T.Boolean):
                iv = b.zext(val, I8)
            elif isinstance(vt, T.Float):
                iv = b.bitcast(val, ity)
            else:
                iv = val
            if lane.type != I32:
                lane = self.cast(lane, e.args[2].type, T.int32)
            r = self.target.wave_op(self, n, [self._mask(mask, e.args[0].type), iv, lane], site)
            if isinstance(vt, T.Boolean):
                return b.icmp_unsigned("!=", r, L.Constant(I8, 0))
            if isinstance(vt, T.Float):
                return b.bitcast(r, val.type)
            return r
        if n in ("ballot_sync", "all_sync", "any_sync", "eq_sync"):
            mask, p = args
            if p.type != I1:
                p = self._to_bool(p, e.args[1].type)
            return self.target.wave_op(self, n, [self._mask(mask, e.args[0].type), p], site)
        if n == "syncwarp":
            mask = self._mask(args[0], e.args[0].type) if args else L.Constant(I64, -1)
            self.target.wave_op(self, n, [mask], site)
            return None
        if n == "activemask":
            return self.target.wave_op(self, n, [], site)
        self.fail(f"internal error: wave op {n}")

    def _mask(self, m, t):
        if m.type == I64:
            return m
        return self.cast(m, t, T.uint64 if not getattr(t, "signed", False) else T.int64)

    # ---- atomics
    def _x_Atomic(self, e):
        b = self.builder
        arr = self.expr(e.array)
        ptr = self.element_ptr(e.array, arr, e.indices)
        index = self._san_index
        vals = [self.expr(v) for v in e.values]
        self.sanitize_access(ptr, e.array, "atomic", e.loc, index)
        t = e.type
        space = e.array.type.space
        scope = self.target.shared_atomic_syncscope() if space == "shared" else self.target.atomic_syncscope()
        order = (f'syncscope("{scope}") ' if scope else "") + "monotonic"
        if e.op == "cas":
            exp, new = vals
            if isinstance(t, T.Float):
                ity = L.IntType(t.bits)
                r = b.cmpxchg(ptr, b.bitcast(exp, ity), b.bitcast(new, ity), order, "monotonic")
                return b.bitcast(b.extract_value(r, 0), exp.type)
            r = b.cmpxchg(ptr, exp, new, order, "monotonic")
            return b.extract_value(r, 0)
        v = vals[0]
        isf = isinstance(t, T.Float)
        signed = isinstance(t, T.Integer) and t.signed
        if isf and e.op in ("max", "min"):
            return self._atomic_float_minmax(e.op, ptr, v, order, t.bits)
        op = {
            "add": "fadd" if isf else "add",
            "sub": "fsub" if isf else "sub",
            "max": "fmax" if isf else ("max" if signed else "umax"),
            "min": "fmin" if isf else ("min" if signed else "umin"),
            "and": "and",
            "or": "or",
            "xor": "xor",
            "exch": "xchg",
            # NaN is a missing value: LLVM's fmax/fmin (IEEE maxNum) are exactly numba's nanmax/nanmin
            "nanmax": "fmax" if isf else ("max" if signed else "umax"),
            "nanmin": "fmin" if isf else ("min" if signed else "umin"),
            "inc": "uinc_wrap",
            "dec": "udec_wrap",
        }.get(e.op)
        if op is None:
            self.fail(f"internal error: atomic op {e.op}")
        if isf and e.op in ("and", "or", "xor", "inc", "dec"):
            self.fail(f"atomic.{e.op} needs an integer array, not {t}", e.loc)
        return b.atomic_rmw(op, ptr, v, order)

    def _atomic_float_minmax(self, op, ptr, v, order, bits):
        """numba.cuda's float ``atomic.max``/``min``: nothing changes when the value
        or the stored element is NaN (a NaN element stays); otherwise ``v`` is
        stored when it is larger (smaller). A compare-and-swap loop on the bits;
        returns the old value."""
        b = self.builder
        ity = L.IntType(bits)
        pre = b.block
        old0 = b.load_atomic(ptr, "monotonic", bits // 8, typ=ity)
        loop = self._new_block("amax.loop")
        swap = self._new_block("amax.swap")
        done = self._new_block("amax.done")
        b.branch(loop)
        b.position_at_end(loop)
        cur = b.phi(ity)
        cur.add_incoming(old0, pre)
        better = b.fcmp_ordered("<" if op == "max" else ">", b.bitcast(cur, v.type), v)  # false with a NaN
        b.cbranch(better, swap, done)
        b.position_at_end(swap)
        res = b.cmpxchg(ptr, cur, b.bitcast(v, ity), order, "monotonic")
        cur.add_incoming(b.extract_value(res, 0), swap)
        b.cbranch(b.extract_value(res, 1), done, loop)
        b.position_at_end(done)
        return b.bitcast(cur, v.type)  # the element's value before this operation
