"""``for v in range(start, stop, step)`` loops: how each one counts, and its LLVM loop.

Two loop shapes, both giving Python's values (``v`` keeps its last value after the loop and is
unchanged when the loop does not run; assigning ``v`` in the body does not change the next one):

* **counted by the variable** (what clang emits for ``for (t = tid; t < 512; t += nt)``): a
  hidden ``range.v`` steps ``v += step`` and the head compares it with ``stop``. Used when the
  step's sign is provably known and the value after the last, ``v + step``, provably stays in
  the counting type (``ranges.counts_by_variable``): then the add never wraps (``nsw``), the
  compare is exact, and LLVM's induction-variable passes see one induction variable (a
  separate trip counter beside it stays one: on amdgpu an extra add, compare and register
  per loop, and ``start + k * step`` a multiply).
* **counted by a trip counter** (any bounds): ``k`` counts ``0 .. trip`` (``range_trip``,
  unsigned, exact for every bound) and ``v = start + k * step`` (modulo the width: exact,
  as every value lies between start and stop).

Either shape may count in i32 though its type is wider (``narrow``) and may tell LLVM that
``v >= 0`` (``nonneg``); see :meth:`RangeLoopLowering.range_plan`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from llvmlite import ir as L

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.analysis import parts, walk
from pykern.codegen.lowering.llvm_types import I1
from pykern.codegen.lowering.ranges import counts_by_variable, fits_int32, single_definitions, value_range


# --------------------------------------------------------------------------
# unrolling over local arrays
# --------------------------------------------------------------------------


def _const_trips(s: ir.ForRange):
    """The iteration count of a ``range`` loop whose bounds are constants, else None."""
    if not all(isinstance(x, ir.Const) for x in (s.start, s.stop, s.step)) or s.step.value == 0:
        return None
    return len(range(s.start.value, s.stop.value, s.step.value))


def _unrolled_size(node, functions: dict, memo: dict) -> int:
    """Frontend IR nodes of ``node`` (a node or a list) as full unrolling would copy them:
    a nested ``range`` loop with constant bounds counts its trip count times its body, a
    call its callee's body (LLVM inlines device functions), any other loop its body once
    (its trip count is unknown here; LLVM's cost model decides on it, copy by copy)."""
    if isinstance(node, list):
        return sum(_unrolled_size(n, functions, memo) for n in node)
    if not isinstance(node, (ir.Expr, ir.Stmt)):
        return 0
    if isinstance(node, ir.ForRange):
        trips = _const_trips(node)
        body = _unrolled_size(node.body, functions, memo)
        return 4 + max(1, trips if trips is not None else 1) * body
    n = 1
    if isinstance(node, ir.Call) and node.func in functions:
        if node.func not in memo:
            memo[node.func] = 1 << 30  # a recursive call: never unrolled
            memo[node.func] = _unrolled_size(functions[node.func].body, functions, memo)
        n += memo[node.func]
    return n + _unrolled_size(parts(node), functions, memo)


def _unroll_over_local(s: ir.ForRange, trips: int, budget: int, functions: dict) -> bool:
    """Whether the ``range`` loop ``s`` of ``trips`` iterations (a constant) gets
    ``llvm.loop.unroll.full``: its body indexes a local array and ``trips`` times the
    body's unrolled size (:func:`_unrolled_size`) is within the target's ``budget``
    (``Target.local_unroll_budget``)."""
    if budget <= 0 or trips < 2:
        return False
    if trips * _unrolled_size(s.body, functions, {}) > budget:
        return False
    return any(isinstance(n, (ir.Load, ir.Store)) and getattr(n.array.type, "space", None) == "local"
               for n in walk(s.body))


# --------------------------------------------------------------------------
# trip counts and plans
# --------------------------------------------------------------------------


def range_trip(b, start, stop, step, llty, signed):
    """Iteration count of ``range(start, stop, step)``, computed in unsigned arithmetic of the
    same width (no overflow for any bounds); a zero step gives 0 iterations."""
    zero = L.Constant(llty, 0)
    one = L.Constant(llty, 1)
    if signed:
        pos = b.icmp_signed(">", step, zero)
        neg = b.icmp_signed("<", step, zero)
        up_n = b.icmp_signed(">", stop, start)
        dn_n = b.icmp_signed(">", start, stop)
    else:
        pos = b.icmp_unsigned("!=", step, zero)
        neg = L.Constant(I1, 0)
        up_n = b.icmp_unsigned(">", stop, start)
        dn_n = L.Constant(I1, 0)
    safe_step = b.select(b.icmp_unsigned("==", step, zero), one, step)
    abs_step = b.select(neg, b.neg(safe_step), safe_step)
    dist = b.select(pos, b.sub(stop, start), b.sub(start, stop))
    cnt = b.add(b.udiv(b.sub(dist, one), abs_step), one)
    nonempty = b.select(pos, up_n, b.and_(neg, dn_n))
    return b.select(nonempty, cnt, zero)


@dataclass(frozen=True)
class RangePlan:
    """How one ``range`` loop counts. ``narrow``: in i32 although its type is wider. ``nonneg``:
    every value is >= 0. ``up``/``down``: the step is provably >= 0 / <= 0 (a zero step makes
    no iteration: what the body may assume holds). ``by_variable``: the loop steps its
    variable (module docstring), in the counting width. ``zero_step``: the step may be 0 (a
    loop stepping its variable then tests it once: no iteration). ``values``: inclusive bounds
    of every value the variable takes (None: unknown)."""

    narrow: bool = False
    nonneg: bool = False
    up: bool = False
    down: bool = False
    by_variable: bool = False
    zero_step: bool = True
    values: object = None


def plan_range(start, stop, step, bits: int) -> RangePlan:
    """The :class:`RangePlan` of a signed ``bits``-wide ``range`` loop whose start, stop and step
    lie in the (inclusive) value ranges given (``ranges.value_range``; None: unknown).

    ``narrow`` when all three provably lie in int32 (a zero step makes no iteration in either
    width): every value the variable takes lies in [start, stop) (or (stop, start]), so i32
    arithmetic is exact and its extension is the variable's value. ``nonneg``: start >= 0 and
    stop >= -1, so every value is >= 0; LLVM is told (a zero extension from i32, else an
    assumption), so ``t // 16`` and ``t % 16`` become shifts and masks and an index ``row + t //
    16`` needs no negative-index fix-up (``for t in range(threadIdx.x, n, blockDim.x)`` copy
    loops, ``for k0 in range(0, a.shape[1], 16)`` tile loops).

    Example::

        >>> plan_range((0, 1023), (512, 512), (1, 1024), 64)
        RangePlan(narrow=True, nonneg=True, up=True, down=False, by_variable=True, zero_step=False, values=(0, 511))
        >>> plan_range((0, 0), (0, 2**63 - 1), (16, 16), 64).by_variable  # 2**63 - 1 + 15 wraps
        False
    """
    nonneg = start is not None and stop is not None and start[0] >= 0 and stop[0] >= -1
    up, down = step is not None and step[0] >= 0, step is not None and step[1] <= 0
    narrow = bits > 32 and fits_int32(start) and fits_int32(stop) and fits_int32(step)
    width = 32 if narrow else bits
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    zero_step = step is None or step[0] <= 0 <= step[1]
    values = None
    if start is not None and stop is not None:  # between start and stop, the stop excluded
        values = ((start[0], stop[1] - 1) if up else (stop[0] + 1, start[1]) if down
                  else (min(start[0], stop[0]), max(start[1], stop[1])))
    return RangePlan(narrow, nonneg, up, down, counts_by_variable(stop, step, lo, hi), zero_step, values)


def _writes(body, name) -> bool:
    """Whether statements ``body`` may assign variable ``name`` (an assignment, a loop over it)."""
    return any((isinstance(n, ir.Assign) and n.target == name) or (isinstance(n, ir.ForRange) and n.var == name)
               for n in walk(body))


class RangeLoopLowering:
    """The ``_s_ForRange`` of ``FunctionLowering`` (lowering/module.py), and the index
    arithmetic that knows the bounds of the loop variables it reads."""

    def value_bounds(self, e):
        """Inclusive bounds of integer expression ``e`` here: a ``range`` loop variable read in
        its loop's body, which does not assign it, lies between the loop's start and stop;
        anything else as ``ranges.value_range`` finds it."""
        if isinstance(e, ir.Var):
            known = self.__dict__.get("_loop_bounds", {}).get(id(self.var(e.name)))
            if known is not None:
                return known
        special = lambda name, axis: self.target.special_register_range(self, name, axis)  # noqa: E731
        return value_range(e, special, self._definitions())

    def narrow_division(self, e, a):
        """``x // c`` and ``x % c`` of int64 ``x`` (llvm value ``a``) by a constant 0 < c < 2**31
        computed in i32 when ``x`` provably fits in int32 (``value_bounds``): the quotient and
        the remainder then fit too, and the i32 result extends to the int64 one. Else None.
        ``for t in range(tid, 512, nthreads): sA[t // 16, t % 16] = ...`` then shifts and masks
        its 32-bit loop variable as clang does with ``unsigned t`` (a shift of its 64-bit
        extension makes LLVM's strength reduction count the variable in 64 bits: two adds and
        two more registers per iteration on amdgpu)."""
        t = e.type
        if not (e.op in ("//", "%") and type(t) is T.Integer and t.signed and t.bits == 64
                and isinstance(e.rhs, ir.Const) and isinstance(e.rhs.value, int) and 0 < e.rhs.value < 2**31):
            return None
        r = self.value_bounds(e.lhs)
        if not fits_int32(r):
            return None
        b = self.builder
        i32 = L.IntType(32)
        x, c = b.trunc(a, i32), L.Constant(i32, e.rhs.value)
        if r[0] >= 0:  # Python's // and % of a value >= 0 by one > 0: unsigned division
            return b.zext(b.udiv(x, c) if e.op == "//" else b.urem(x, c), a.type)
        return b.sext(self._int_binop(e.op, x, c, T.int32), a.type)

    def range_plan(self, s) -> RangePlan:
        """:func:`plan_range` of ``range`` loop ``s`` (signed integer types; others get the
        default: a trip counter in their own width)."""
        ty = s.start.type
        if not (type(ty) is T.Integer and ty.signed):
            return RangePlan()
        special = lambda name, axis: self.target.special_register_range(self, name, axis)  # noqa: E731
        defs = self._definitions()
        start, stop, step = (value_range(x, special, defs) for x in (s.start, s.stop, s.step))
        return plan_range(start, stop, step, ty.bits)

    def _definitions(self):
        """The single definitions (``ranges.single_definitions``) of the function whose body is
        being lowered (an inlined callee's own)."""
        fn = self.inline[-1].fn if self.inline else self.ir_function
        cache = self.__dict__.setdefault("_defs_cache", {})
        if fn.name not in cache:
            cache[fn.name] = single_definitions(fn)
        return cache[fn.name]

    def _s_ForRange(self, s):
        b = self.builder
        ty = s.start.type
        llty = self.types.value(ty)
        signed = getattr(ty, "signed", True)
        start, stop, step = self.expr(s.start), self.expr(s.stop), self.expr(s.step)
        var_llty = None
        plan = self.range_plan(s)
        if plan.narrow:
            # a 64-bit counter costs amdgpu two scalar adds and a 64-bit compare per
            # iteration (clang's ``int k`` one each); LLVM never narrows one itself
            var_llty, llty = llty, L.IntType(32)
            start, stop, step = (b.trunc(v, llty) for v in (start, stop, step))
        one = L.Constant(llty, 1)
        poll = self.ml.poll_interval
        trips = _const_trips(s)
        if poll and trips is not None and trips <= poll:
            poll = 0  # a short loop of known length: no poll, so LLVM may unroll it whole
        unroll = not poll and trips is not None and _unroll_over_local(
            s, trips, self.target.local_unroll_budget(), self.ml.module.functions)
        if poll:
            # a strip-mined loop (the cpu target polls between chunks) keeps the trip counter:
            # LLVM's vectoriser takes its inner loop, not one stepping the variable to a
            # chunk's end (the one-variable shape is for amdgpu's instruction count)
            plan = dataclasses.replace(plan, by_variable=False)
        head, body, latch, end = (self._new_block(f"for.{p}") for p in ("head", "body", "latch", "end"))
        if plan.by_variable:
            slot = self.alloca(llty, name="range.v")
            b.store(start, slot)
            if plan.zero_step:
                go = self._new_block("for.go")
                b.cbranch(b.icmp_unsigned("==", step, L.Constant(llty, 0)), end, go)
                b.position_at_end(go)
        else:
            slot = self.alloca(llty, name="range.k")
            b.store(L.Constant(llty, 0), slot)
        trip = None if plan.by_variable else range_trip(b, start, stop, step, llty, signed)
        if poll:
            # strip-mined: the inner loop runs at most `poll` iterations with no extra exit
            # (LLVM may still vectorise it); the poll sits between chunks
            chunk = self._new_block("for.chunk")
            polled = self._new_block("for.poll")
            b.branch(chunk)
            b.position_at_end(chunk)
            k0 = b.load(slot)
            if llty.width == 64:
                # k0 < 2**62 unless a loop runs 2**62 iterations (146 years at
                # 1 GHz); in the known bits it lets LLVM bound k as it does
                # without strip-mining (no negative-index fix-ups: vector loads)
                k0 = b.and_(k0, L.Constant(llty, (1 << 62) - 1))
                b.store(k0, slot)
            climit = L.Constant(llty, min(poll, (1 << (llty.width - 1)) - 1))
            last = b.select(b.icmp_unsigned(">", b.sub(trip, k0), climit), b.add(k0, climit), trip)
        else:
            last = stop if plan.by_variable else trip
        b.branch(head)
        b.position_at_end(head)
        cur = b.load(slot)
        if plan.by_variable:
            more = b.icmp_signed("<" if plan.up else ">", cur, last)
        else:
            more = b.icmp_unsigned("<", cur, last)
        b.cbranch(more, body, polled if poll else end)
        if poll:
            b.position_at_end(polled)
            self._poll()
            b.cbranch(b.icmp_unsigned("<", b.load(slot), trip), chunk, end)
        b.position_at_end(body)
        v = cur if plan.by_variable else b.add(start, b.mul(cur, step))
        if var_llty is not None:
            v = (b.zext if plan.nonneg else b.sext)(v, var_llty)
        elif plan.nonneg:
            # below a stop >= 0 with a positive step: 0 <= v < stop, one unsigned compare
            # that also bounds v by what LLVM knows of stop (an extent's argument range)
            known = (b.icmp_unsigned("<", v, stop) if plan.up else b.icmp_signed(">=", v, L.Constant(llty, 0)))
            b.call(self.intrinsic("llvm.assume", L.VoidType(), [I1]), [known])
        b.store(v, self.var(s.var))
        self.loops.append((latch, end))
        bounds = self.__dict__.setdefault("_loop_bounds", {})
        key = id(self.var(s.var))
        outer = bounds.get(key)
        if not _writes(s.body, s.var):
            bounds[key] = plan.values
        self.lower_block(s.body)
        bounds.pop(key, None)
        if outer is not None:
            bounds[key] = outer
        self.loops.pop()
        if not b.block.is_terminated:
            b.branch(latch)
        b.position_at_end(latch)
        # by variable: v + step stays in the type (RangePlan.by_variable), never wraps
        b.store(b.add(b.load(slot), step, flags=["nsw"]) if plan.by_variable else b.add(b.load(slot), one), slot)
        back = b.branch(head)
        if unroll:
            from pykern.codegen.llvm_util import full_unroll

            back.set_metadata("llvm.loop", full_unroll(self.module))
        b.position_at_end(end)
