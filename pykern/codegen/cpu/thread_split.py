"""The bounds guard of a fast-path kernel as a split of its x thread loop.

Nearly every GPU kernel starts ``i = cuda.grid(1); if i < n:`` (or ``if i >= n: return``). On
the cpu target the fast path runs a block's threads in a loop over ``threadIdx.x``; with the
guard inside, LLVM vectorises the loop with masked loads and stores (AVX-512) or not at all, and
a STREAM triad moved half the bytes per second C does. The guard's truth is a prefix of the
threads: ``i`` is ``u + threadIdx.x`` with ``u`` the same for the whole row and no overflow, and
``n`` is the same for every thread, so ``i < n`` holds exactly for ``threadIdx.x < n - u``.
The runner (``target._build_entry``) therefore asks the kernel for that count once per row
(the kernel called in *count* mode runs its straight-line prefix for thread x = 0 and stores
the count), then runs two loops: threads below the count with the comparison known true, the
rest with it known false. After inlining each loop body is branch-free in the guard: the first
vectorises with plain loads and stores, the second is usually empty and deleted. This is LLVM's
inductive range check elimination (IRCE, not in its O3 pipeline) done on pykern's IR, where the
guard is easy to see.

What qualifies (``plan``): the kernel body's statements before its first top-level ``if`` are
assignments of pure expressions (no stores, calls, atomics: count mode runs them an extra time);
the ``if``'s condition contains an ``int64`` comparison (``<``, ``<=``, ``>``, ``>=``, either
operand order) of an *index* -- ``threadIdx.x`` plus a part the same for every thread of a
row, whose interval (from the launch limits of the special registers and constants) leaves no
room for wrapping -- with a *bound* that is the same for every thread of the row (parameters,
array shapes, block and grid registers, ``threadIdx.y``/``z``, arithmetic of them; no memory
reads). Only that comparison is replaced; the rest of the condition (``and y < m``, a mask
load) is evaluated as written. ``debug=True`` kernels are not split.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir as L

from pykern.codegen.lowering.module import FunctionLowering
from pykern.codegen.target_interface import launch_register_range
from pykern.frontend import ir
from pykern.frontend import types as T

I1, I32, I64 = L.IntType(1), L.IntType(32), L.IntType(64)
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
#: the kernel function's split-mode argument: count the row's in-range threads, run a thread
#: known in range, run a thread known out of range
COUNT, IN_RANGE, OUT_OF_RANGE = 0, 1, 2
_MAX_TX = 1023  # threadIdx.x < 1024 (the cpu launcher's block limit)

#: comparisons with the index on the left: (index in range when true, bound inclusive)
_ORIENT = {"<": (True, False), "<=": (True, True), ">=": (False, False), ">": (False, True)}
_SWAP = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
#: integer operators that never trap (division by zero is 0 in pykern's IR) and read nothing
_PURE_BINOPS = frozenset(("+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>"))


@dataclass
class GuardPlan:
    """The guard comparison ``atom`` of top-level ``stmt``: ``index`` (``u + threadIdx.x``)
    against ``bound``; the comparison is true for in-range threads when ``true_in_range``,
    and in range means ``index < bound`` (``<= bound`` when ``inclusive``)."""

    stmt: ir.If
    atom: ir.Compare
    index: ir.Expr
    bound: ir.Expr
    inclusive: bool
    true_in_range: bool


# ------------------------------------------------------------------ analysis

#: what the analysis knows of a value: (coefficient of threadIdx.x: 0 or 1, low, high) of the
#: rest of it as an int64 interval, or None (depends on the thread otherwise, reads memory,
#: not an integer, may wrap)
_UNKNOWN = None


def plan(kernel: ir.Function):
    """The :class:`GuardPlan` of ``kernel`` or None when it has no guard this split handles."""
    env = {}  # variable -> summary of its current value (absent: a parameter, unassigned)
    params = {p.name for p in kernel.params}
    for s in kernel.body:
        if isinstance(s, ir.If):
            return _guard(s, env, params)
        if not isinstance(s, ir.Assign) or not _pure(s.value):
            return None
        env[s.target] = _summary(s.value, env, params)
    return None


def _guard(s: ir.If, env: dict, params: set):
    for atom in _atoms(s.cond):
        for index, bound, op in ((atom.lhs, atom.rhs, atom.op), (atom.rhs, atom.lhs, _SWAP.get(atom.op))):
            if op not in _ORIENT or index.type != T.int64 or bound.type != T.int64:
                continue
            si, sb = _summary(index, env, params), _summary(bound, env, params)
            if si is None or sb is None or si[0] != 1 or sb[0] != 0:
                continue
            if not _pure(atom):
                continue
            true_in_range, inclusive = _ORIENT[op]
            return GuardPlan(s, atom, index, bound, inclusive, true_in_range)
    return None


def _atoms(cond):
    """The comparisons of a condition that an ``and``/``or``/``not`` structure reaches."""
    if isinstance(cond, ir.Compare):
        yield cond
    elif isinstance(cond, ir.BoolOp):
        for v in cond.values:
            yield from _atoms(v)
    elif isinstance(cond, ir.UnaryOp) and cond.op == "not":
        yield from _atoms(cond.operand)


def _pure(e) -> bool:
    """No side effects, no traps, no reads of memory another thread may write."""
    if isinstance(e, (ir.Const, ir.Var)):
        return True
    if isinstance(e, ir.BinOp):
        return (e.op in _PURE_BINOPS or isinstance(e.type, T.Float)) and _pure(e.lhs) and _pure(e.rhs)
    if isinstance(e, (ir.Compare,)):
        return _pure(e.lhs) and _pure(e.rhs)
    if isinstance(e, ir.UnaryOp):
        return _pure(e.operand)
    if isinstance(e, ir.BoolOp):
        return all(_pure(v) for v in e.values)
    if isinstance(e, ir.IfExp):
        return _pure(e.cond) and _pure(e.then) and _pure(e.orelse)
    if isinstance(e, ir.Cast):
        return _pure(e.value)
    if isinstance(e, ir.ArrayAttr):
        return e.attr != "address" and isinstance(e.array, ir.Var)
    if isinstance(e, ir.Intrinsic):
        return launch_register_range(e.name, 1024, 64) is not None and e.name != "laneid"
    return False


def _summary(e, env: dict, params: set):
    """(threadIdx.x coefficient, low, high) of an int64 (or narrower integer) value, or None."""
    if isinstance(e, ir.Const):
        if isinstance(e.type, T.Integer) and not isinstance(e.type, T.Boolean) and isinstance(e.value, int):
            return (0, e.value, e.value)
        return None
    if isinstance(e, ir.Var):
        if e.name in env:
            return env[e.name]
        if e.name in params and _is_int(e.type):
            return (0,) + _type_range(e.type)
        return None
    if isinstance(e, ir.Intrinsic):
        r = launch_register_range(e.name, 1024, 64)
        if r is None or e.name in ("laneid", "warpsize"):
            return None
        if e.name == "thread_idx" and e.attrs.get("axis", 0) == 0:
            return (1, 0, 0)
        return (0,) + tuple(r)
    if isinstance(e, ir.ArrayAttr):
        if e.attr in ("shape", "size", "ndim") and isinstance(e.array, ir.Var) and e.array.name not in env:
            return (0, 0, INT64_MAX)
        if e.attr == "strides" and isinstance(e.array, ir.Var) and e.array.name not in env:
            return (0, INT64_MIN, INT64_MAX)
        return None
    if isinstance(e, ir.Cast):
        inner = _summary(e.value, env, params)
        if inner is None or not (_is_int(e.type) and _is_int(e.value.type)):
            return None
        lo_t, hi_t = _type_range(e.type)
        c, lo, hi = inner
        top = hi + (_MAX_TX if c else 0)
        if lo_t <= lo and top <= hi_t:  # the value fits: the cast keeps it
            return inner
        return None if c else (0, lo_t, hi_t)
    if isinstance(e, ir.BinOp) and _is_int(e.type):
        a, b = _summary(e.lhs, env, params), _summary(e.rhs, env, params)
        if a is None or b is None:
            return None
        lo_t, hi_t = _type_range(e.type)
        if e.op == "+":
            c, lo, hi = a[0] + b[0], a[1] + b[1], a[2] + b[2]
        elif e.op == "-" and b[0] == 0:
            c, lo, hi = a[0], a[1] - b[2], a[2] - b[1]
        elif e.op == "*" and a[0] == 0 and b[0] == 0:
            corners = [x * y for x in a[1:] for y in b[1:]]
            c, lo, hi = 0, min(corners), max(corners)
        elif a[0] == 0 and b[0] == 0 and e.op in _PURE_BINOPS:
            return (0, lo_t, hi_t)  # the same for every thread, value unknown
        else:
            return None
        if c > 1:
            return None
        if lo_t <= lo and hi + (_MAX_TX if c else 0) <= hi_t:
            return (c, lo, hi)
        # it may wrap: a thread-invariant value is still one, an index is no longer monotonic
        return None if c else (0, lo_t, hi_t)
    if _pure(e) and not _reads_thread_x(e, env) and _is_int(getattr(e, "type", None)):
        return (0,) + _type_range(e.type)
    return None


def _reads_thread_x(e, env) -> bool:
    if isinstance(e, ir.Intrinsic):
        return e.name in ("thread_idx", "laneid") and (e.name == "laneid" or e.attrs.get("axis", 0) == 0)
    if isinstance(e, ir.Var):
        s = env.get(e.name, (0,))
        return s is None or s[0] != 0
    return any(_reads_thread_x(c, env) for c in e.children())


def _is_int(t) -> bool:
    return isinstance(t, T.Integer) and not isinstance(t, T.Boolean)


def _type_range(t) -> tuple:
    bits = t.bits
    if t.signed:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


# ------------------------------------------------------------------ lowering


class SplitLowering(FunctionLowering):
    """Lowers a fast-path kernel whose guard is split: the kernel function has one more
    argument (after its parameters), the split mode. In count mode the guard statement stores
    the number of in-range threads of the row (from thread x = 0's index) at ``count_slot`` of
    the thread state and returns; in the other modes the guard comparison is that constant."""

    def __init__(self, ml, irfn, llfn, is_kernel, plan: GuardPlan, mode_index: int, count_slot):
        super().__init__(ml, irfn, llfn, is_kernel)
        self.split = plan
        self._mode = llfn.args[mode_index] if is_kernel else None
        self._count_slot = count_slot  # (builder, tstate) -> pointer to the i64 count
        self._atom_value = None

    def _s_If(self, s):
        if s is not self.split.stmt or self._mode is None or self.inline:
            return super()._s_If(s)
        b = self.builder
        p = self.split
        count_bb, run_bb = self._new_block("split.count"), self._new_block("split.run")
        b.cbranch(b.icmp_unsigned("==", self._mode, L.Constant(I32, COUNT)), count_bb, run_bb)
        b.position_at_end(count_bb)
        index, bound = self.expr(p.index), self.expr(p.bound)
        b.store(_in_range_count(b, index, bound, p.inclusive), self._count_slot(b, self.hidden[0]))
        self.target.kernel_return(self)
        b.position_at_end(run_bb)
        in_range = b.icmp_unsigned("==", self._mode, L.Constant(I32, IN_RANGE))
        self._atom_value = in_range if p.true_in_range else b.not_(in_range)
        try:
            super()._s_If(s)
        finally:
            self._atom_value = None

    def expr(self, e):
        if e is self.split.atom and self._atom_value is not None:
            return self._atom_value
        return super().expr(e)


def _in_range_count(b, index, bound, inclusive: bool):
    """How many of ``index``, ``index + 1``, ... are ``< bound`` (``<= bound``), as an
    unsigned i64 saturated at 2**64 - 1 (the runner clamps it to blockDim.x)."""
    zero = L.Constant(I64, 0)
    diff = b.sub(bound, index)  # exact as unsigned where bound >= index
    if inclusive:
        ok = b.icmp_signed(">=", bound, index)
        full = b.icmp_unsigned("==", diff, L.Constant(I64, -1))
        n = b.select(full, diff, b.add(diff, L.Constant(I64, 1)))
    else:
        ok = b.icmp_signed(">", bound, index)
        n = diff
    return b.select(ok, n, zero)
