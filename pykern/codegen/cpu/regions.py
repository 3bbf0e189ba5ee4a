"""Barrier kernels on the cpu target as work-item loops ("regions").

A kernel whose barriers are plain ``syncthreads()`` statements in uniform control flow is split
at its barriers into regions; each region runs as one loop over the block's threads (x innermost),
so consecutive threads are consecutive loop iterations that LLVM can vectorise, and a barrier costs
nothing but the end of one loop and the start of the next. This is the classic work-group-loop
transform of OpenCL CPU runtimes (POCL), done here on pykern's structured IR, where regions are
easy to find: the kernel body is a statement list, and a barrier can only sit at its top level or
inside ``if``/``while``/``for`` statements that themselves sit there.

* Variables that live in one region only (and not inside a loop that contains a barrier) stay
  ordinary locals, zeroed at the start of each thread's run of the region. The others (and every
  parameter the kernel assigns) get one slot per thread, laid out so that consecutive threads are
  contiguous (``slot[var][thread]``); local arrays get one copy per thread. The slot memory is the
  runner's per-worker frame area (``B_FRAMES``), sized per thread at compile time.
* Control flow around barriers must be uniform. Its condition (``if``/``while``) or range bounds
  (``for``) are evaluated by every live thread in a loop of their own; when threads disagree the
  launch fails with the same divergent-barrier error as the coroutine path, never a hang.
  Kernels where threads could leave such a statement early and then run to the end without
  meeting another barrier (``if i < n:`` around the whole body) take the coroutine path, which
  lets them (``_divergent_tail``).
* ``return`` inside a region marks the thread exited; the thread loops skip it from then on and
  later barriers count it as arrived, as GPUs do and as on the coroutine path.
* ``Plan.block_guess``: the block shape the kernel's first static shared array suggests. The
  runner (``cpu/target.py``) inlines the kernel twice, once reading blockDim as that constant shape, so
  the thread loops of the likely launch have known trip counts; other shapes run the other copy.
* Kernels with wave operations, ``syncthreads_count/and/or``, barriers inside device functions,
  ``break``/``continue`` across a barrier loop, or loops with ``else`` take the coroutine path.

``PYKERN_CPU_BARRIERS=coroutine`` forces the coroutine path for every kernel (the tests run both
paths); ``regions`` or unset picks regions whenever the kernel qualifies.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llvmlite import ir as L

from pykern.core import settings
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.analysis import walk
from pykern.codegen import llvm_util
from pykern.codegen.contract import SyncSite
from pykern.codegen.lowering.module import BARRIER_KINDS, WAVE_OPS, FunctionLowering, _zero, _sizeof
from pykern.codegen.lowering.range_loops import range_trip

I1, I8, I32, I64 = L.IntType(1), L.IntType(8), L.IntType(32), L.IntType(64)

#: thread-loop order: x innermost, so that LLVM vectorises across threadIdx.x
_AXES = (2, 1, 0)
_EXITED = "__pykern_exited"


# ------------------------------------------------------------------ analysis


@dataclass
class Chunk:
    """Barrier-free statements run by every thread in one loop over the block."""

    stmts: list
    in_loop: bool  # inside a loop that contains a barrier (runs several times per thread)


@dataclass
class Barrier:
    stmt: ir.Stmt


@dataclass
class UniformAssign:
    """``v = value`` of a variable that is the same in every thread: run once, between regions."""

    stmt: ir.Assign


@dataclass
class Uniform:
    """An ``if``/``while``/``for`` with a barrier inside: its control is evaluated per thread and
    must agree; ``parts`` are the lowered sub-sequences (then/else, or the loop body)."""

    stmt: ir.Stmt
    parts: list = field(default_factory=list)


@dataclass(frozen=True)
class Plan:
    seq: list  # of Chunk | Barrier | Uniform | UniformAssign
    slotted: frozenset  # variables with one slot per thread
    private: dict  # chunk id -> names of variables local to that chunk
    local_arrays: tuple  # (name, bytes per thread, alignment) of the kernel's local arrays
    uses_return: bool
    uniform: frozenset  # variables with one value for the whole block
    remat: tuple  # (name, value): per-thread values recomputed at the start of every region
    block_guess: tuple = ()  # (x, y, z) the block shape the shared arrays suggest, () if none


class _NotRegions(Exception):
    pass


def _barrier_stmt(s) -> bool:
    return (isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Intrinsic)
            and s.value.name == "syncthreads")


def _has_barrier(node, uses) -> bool:
    for n in walk(node):
        if isinstance(n, ir.Intrinsic) and n.name in BARRIER_KINDS:
            return True
        if isinstance(n, ir.Call) and uses.get(n.func, (False,))[0]:
            return True
    return False


def _escapes_loop(stmts) -> bool:
    """A ``break``/``continue`` not inside a loop of ``stmts`` itself."""
    stack = [(s, 0) for s in stmts]
    while stack:
        s, depth = stack.pop()
        if isinstance(s, (ir.Break, ir.Continue)) and depth == 0:
            return True
        inner = depth + isinstance(s, (ir.While, ir.ForRange))
        for v in s.__dict__.values():
            if isinstance(v, list):
                stack.extend((c, inner) for c in v if isinstance(c, ir.Stmt))
    return False


def _build(stmts, uses, in_loop, chunks):
    seq, cur = [], []

    def flush():
        if cur:
            chunk = Chunk(list(cur), in_loop)
            chunks.append(chunk)
            seq.append(chunk)
            cur.clear()

    for s in stmts:
        if _barrier_stmt(s):
            flush()
            seq.append(Barrier(s))
        elif not _has_barrier(s, uses):
            cur.append(s)
        elif isinstance(s, ir.If):
            flush()
            seq.append(Uniform(s, [_build(s.then, uses, in_loop, chunks),
                                   _build(s.orelse, uses, in_loop, chunks)]))
        elif isinstance(s, (ir.While, ir.ForRange)) and not getattr(s, "orelse", None):
            if _escapes_loop(s.body):
                raise _NotRegions
            flush()
            seq.append(Uniform(s, [_build(s.body, uses, True, chunks)]))
        else:
            raise _NotRegions
    flush()
    return seq


def _site(loc) -> str:
    return SyncSite(0, "syncthreads", loc).describe()


def _at(loc) -> str:
    return f"{loc.file}:{loc.line}" if loc else "<unknown>"


def _first_barrier(seq):
    """Location of the first barrier a thread meets in ``seq`` (None: no barrier)."""
    for node in seq:
        if isinstance(node, Barrier):
            return node.stmt.loc
        if isinstance(node, Uniform):
            for part in node.parts:
                loc = _first_barrier(part)
                if loc is not None:
                    return loc
    return None


def _names(node):
    out = set()
    for n in walk(node):
        if isinstance(n, ir.Var):
            out.add(n.name)
        elif isinstance(n, ir.Assign):
            out.add(n.target)
        elif isinstance(n, ir.ForRange):
            out.add(n.var)
    return out


def _defined_first(name, chunk) -> bool:
    """``name`` gets a new value in ``chunk`` before anything there reads it, so a chunk that
    runs several times per thread (in a loop around barriers) needs no copy of it between runs."""
    for i, st in enumerate(chunk.stmts):
        if name not in _names(st):
            continue
        if isinstance(st, ir.Assign):
            return st.target == name and name not in _names(st.value)
        if isinstance(st, ir.ForRange) and st.var == name:
            # a loop that runs zero times leaves its variable alone: nothing after may read it
            return (name not in _names([st.start, st.stop, st.step])
                    and not any(name in _names(later) for later in chunk.stmts[i + 1:]))
        return False
    return False


def _uniform_names(seq, out):
    for node in seq:
        if isinstance(node, Uniform):
            s = node.stmt
            heads = [s.cond] if isinstance(s, (ir.If, ir.While)) else [s.start, s.stop, s.step]
            out |= _names(heads)
            if isinstance(s, ir.ForRange):
                out.add(s.var)
            for part in node.parts:
                _uniform_names(part, out)
    return out


#: intrinsics whose value is the same in every thread of a block when their arguments are
_UNIFORM_INTRINSICS = frozenset(
    "block_idx block_dim grid_dim warpsize popc clz ffs brev fma sin cos tan asin acos atan sinh cosh "
    "tanh asinh acosh atanh exp exp2 expm1 log log2 log10 log1p sqrt cbrt erf erfc gamma lgamma floor ceil "
    "trunc rint fabs atan2 pow hypot copysign fmod isnan isinf isfinite abs min max round".split())
#: expression nodes that are uniform when their operands are (loads, atomics and calls never are)
_PURE_NODES = (ir.Const, ir.Var, ir.BinOp, ir.UnaryOp, ir.Compare, ir.BoolOp, ir.IfExp, ir.Cast,
               ir.ArrayAttr, ir.TupleExpr, ir.TupleGet, ir.ConstArray, ir.ArrayView, ir.Slice, ir.Transpose,
               ir.Reinterpret, ir.Reshape)


#: ... and those that differ between threads but never change in one
_THREAD_INTRINSICS = _UNIFORM_INTRINSICS | {"thread_idx", "laneid"}


def _is_uniform(e, uniform, intrinsics=_UNIFORM_INTRINSICS) -> bool:
    """``e`` computes the same value wherever it is evaluated, given that the variables in
    ``uniform`` do and using only ``intrinsics`` (no memory reads, atomics or calls)."""
    if e is None:
        return True
    if isinstance(e, list):
        return all(_is_uniform(x, uniform, intrinsics) for x in e)
    if isinstance(e, ir.Var):
        return e.name in uniform
    if isinstance(e, ir.AllocArray):
        return e.space == "shared"  # the same memory for every thread
    if isinstance(e, ir.Intrinsic):
        ok = e.name in intrinsics
    else:
        ok = isinstance(e, _PURE_NODES)
    return ok and all(_is_uniform(v, uniform, intrinsics) for v in e.__dict__.values()
                      if isinstance(v, (ir.Expr, list)))


def _uniform_vars(k, chunks):
    """Variables that hold the same value in every thread of a block: assigned only at the top
    level of regions (not under per-thread control flow) from uniform values, or by a `for`
    around barriers (whose range is checked to agree). One variable serves the whole block, and
    its assignments run once per region (``UniformAssign``) rather than once per thread."""
    cand = set(k.locals)
    top = {}  # variable -> values assigned at the top level of chunks
    for c in chunks:
        for st in c.stmts:
            if isinstance(st, ir.Assign):
                top.setdefault(st.target, []).append(st.value)
                continue
            for n in walk(st):  # assigned under control flow of the region: per thread
                if isinstance(n, ir.Assign):
                    cand.discard(n.target)
                elif isinstance(n, ir.ForRange):
                    cand.discard(n.var)
    changed = True
    while changed:
        changed = False
        for name, values in top.items():
            if name in cand and not all(_is_uniform(v, cand) for v in values):
                cand.discard(name)
                changed = True
    return frozenset(cand)


def _remat_vars(seq, assigned, constant):
    """Per-thread variables defined once, early, from thread/block indices and values that never
    change (read-only parameters, uniform variables assigned once): ``i = cuda.grid(1)``,
    ``tx = cuda.threadIdx.x``. Recomputing them in each region costs a few instructions; keeping
    them in per-thread slots costs a store, loads, and LLVM's knowledge of their range.

    Only the definitions in the kernel's first regions count (before any barrier or control flow
    around one), and only when nothing reads the variable before its definition (where it reads
    as 0)."""
    remat, allowed, seen = {}, set(), set()
    for node in seq:
        if isinstance(node, UniformAssign):
            if assigned.get(node.stmt.target) == 1 and node.stmt.target in constant:
                allowed.add(node.stmt.target)
            seen.add(node.stmt.target)
            continue
        if not isinstance(node, Chunk) or node.in_loop:
            break
        for st in node.stmts:
            if (isinstance(st, ir.Assign) and assigned.get(st.target) == 1 and st.target not in seen
                    and _is_uniform(st.value, allowed | (constant - seen - {st.target}) | set(remat),
                                    _THREAD_INTRINSICS)):
                remat[st.target] = st.value
            seen |= _names(st)
    return remat


def _split(seq, uniform, chunks):
    """Take the assignments of uniform variables out of the regions. Splitting a region between
    two statements is a legal schedule (without a barrier, GPU threads may interleave anyhow)."""
    out = []
    for node in seq:
        if isinstance(node, Chunk):
            cur = []
            for st in node.stmts + [None]:
                if st is None or isinstance(st, ir.Assign) and st.target in uniform:
                    if cur:
                        chunk = Chunk(cur, node.in_loop)
                        chunks.append(chunk)
                        out.append(chunk)
                        cur = []
                    if st is not None:
                        out.append(UniformAssign(st))
                else:
                    cur.append(st)
        elif isinstance(node, Uniform):
            out.append(Uniform(node.stmt, [_split(part, uniform, chunks) for part in node.parts]))
        else:
            out.append(node)
    return out


def _divergent_tail(seq, uniform, later=False) -> bool:
    """Some ``if``/``while``/``for`` around barriers has control that may differ between threads
    and no barrier after it (``later``: one follows the enclosing statement). Threads that leave
    such a statement early run on to the end while the others still sync: GPUs allow that (a
    thread that has exited counts as arrived), the coroutine path follows it, while the regions
    path would have to report a divergent barrier. ``if i < n:`` around a whole tiled kernel is
    the common case."""
    for i, node in enumerate(seq):
        if not isinstance(node, Uniform):
            continue
        s = node.stmt
        after = later or any(isinstance(n, (Barrier, Uniform)) for n in seq[i + 1:])
        heads = [s.cond] if isinstance(s, (ir.If, ir.While)) else [s.start, s.stop, s.step]
        if not after and not _is_uniform(heads, uniform):
            return True
        # inside a loop the next iteration's barriers follow
        if any(_divergent_tail(part, uniform, after or not isinstance(s, ir.If)) for part in node.parts):
            return True
    return False


def plan(module: ir.Module, uses: dict):
    """The region plan of ``module``'s kernel, or None when it must take the coroutine path."""
    if settings.get("PYKERN_CPU_BARRIERS") == "coroutine":
        return None
    k = module.kernel
    kb, kw, _ = uses.get(k.name, (False, False, False))
    if not kb or kw:
        return None
    # barriers reached through calls, or of the value-returning kinds, need the coroutine path
    for n in walk(k.body):
        if isinstance(n, ir.Call) and uses.get(n.func, (False,))[0]:
            return None
        if isinstance(n, ir.Intrinsic) and (n.name in BARRIER_KINDS and n.name != "syncthreads"
                                            or n.name in WAVE_OPS):
            return None
        if isinstance(n, ir.Intrinsic) and n.name == "frag_new":
            return None  # a fragment's storage is an alloca: per thread only in a coroutine's frame
    chunks = []
    try:
        seq = _build(k.body, uses, False, chunks)
    except _NotRegions:
        return None
    uniform = _uniform_vars(k, chunks)
    chunks = []
    seq = _split(seq, uniform, chunks)
    if _divergent_tail(seq, uniform):
        return None
    counts = {}
    for i, c in enumerate(chunks):
        for name in _names(c.stmts):
            counts.setdefault(name, []).append(i)
    assigned = {}
    for n in walk(k.body):
        if isinstance(n, (ir.Assign, ir.ForRange)):
            name = n.target if isinstance(n, ir.Assign) else n.var
            assigned[name] = assigned.get(name, 0) + 1
    params = {p.name for p in k.params}
    remat = _remat_vars(seq, assigned, (params - set(assigned)) | uniform)
    slotted = (set(_uniform_names(seq, set())) | (params & set(assigned))) - uniform - set(remat)
    private = {}
    for name, where in counts.items():
        if name in uniform or name in remat:
            continue  # one variable for the block, or recomputed in every region
        only = chunks[where[0]]
        if name in slotted or len(set(where)) > 1 or only.in_loop and not _defined_first(name, only):
            slotted.add(name)
        else:
            private.setdefault(id(chunks[where[0]]), []).append(name)
    arrays = []
    for n in walk(k.body):
        if isinstance(n, ir.AllocArray) and n.space == "local":
            shape = n.shape if isinstance(n.shape, (tuple, list)) else (n.shape,)
            count = 1
            for s in shape:
                count *= int(s)
            align = max(16, n.align)  # every thread's copy starts at a multiple of it
            arrays.append((n.name, -(-max(count, 1) * _sizeof(n.type.dtype) // align) * align, align))
    # a raise (also in an inlined device function) ends its thread as a return does
    uses_return = k.raises or any(isinstance(n, ir.Return) for n in walk(k.body))
    slotted &= set(k.locals)
    return Plan(seq, frozenset(slotted), private, tuple(arrays), uses_return, uniform, tuple(remat.items()),
                _block_guess(k.body))


def _block_guess(body):
    """The block shape a kernel is most likely launched with: that of its first static shared
    array, reversed (``sA[ty, tx]`` of shape (16, 16) -> blockDim (16, 16, 1); a 1-d tile of
    256 -> (256, 1, 1)). The runner gives this shape a copy of the kernel in which blockDim is
    a constant, so LLVM knows the trip counts of the thread loops: whole-vector iterations, no
    remainders, tile rows kept in registers across rows. Other shapes run the general copy."""
    for n in walk(body):
        if isinstance(n, ir.AllocArray) and n.space == "shared":
            shape = n.shape if isinstance(n.shape, (tuple, list)) else (n.shape,)
            if not 1 <= len(shape) <= 3 or not all(isinstance(d, int) and d > 0 for d in shape):
                continue
            dims = tuple(reversed(shape)) + (1,) * (3 - len(shape))
            if dims[0] * dims[1] * dims[2] <= 1024:
                return dims
    return ()


# ------------------------------------------------------------------ lowering


class RegionLowering(FunctionLowering):
    """Lowers a kernel with a :class:`Plan`: thread loops per region, uniform control between.

    The target's per-thread state ``tstate`` still holds threadIdx (stored at the top of every
    thread iteration), so special registers, debug records and everything else of the cpu target
    work unchanged inside regions."""

    def __init__(self, ml, irfn, llfn, is_kernel, plan: Plan, layout):
        super().__init__(ml, irfn, llfn, is_kernel)
        self.plan = plan
        self.tgt = layout  # the cpu target's byte offsets (T_TID, B_BDIM, ...)
        self._top = True
        self._thread_next = None  # where `return` continues: the next thread of the loop
        self._lin = self._lin64 = None
        self._arrays = {}

    # ---- entry points of FunctionLowering
    def lower_block(self, stmts):
        if not self._top:
            return super().lower_block(stmts)
        self._top = False
        self._prologue()
        self._seq(self.plan.seq)

    def _s_Return(self, s):
        if self.inline:
            return super()._s_Return(s)
        self.exit_thread()

    def exit_thread(self):
        """This thread is done (``return``, ``raise``): mark it exited and go on with the next
        thread of the loop; later regions skip it, and later barriers count it as arrived."""
        if self._thread_next is None:
            self.fail("internal error: a thread exits outside a work-item loop")
        b = self.builder
        b.store(L.Constant(I8, 1), self._slot_ptr(_EXITED))
        n = b.load(self._nexit)
        b.store(b.add(n, L.Constant(I32, 1)), self._nexit)
        b.branch(self._thread_next)

    def _x_Var(self, e):
        ptr = self.var(e.name)
        if isinstance(ptr, L.AllocaInstr):
            return self.builder.load(ptr)
        return self.builder.load(ptr, typ=self._slots[e.name][1])  # this thread's slot

    def _x_AllocArray(self, e):
        arr = super()._x_AllocArray(e)  # checks the limits; its alloca goes unused
        if e.space != "local" or self.inline:
            return arr
        off, nbytes = self._arrays[e.name]
        b = self.builder
        base = b.gep(self._frames, [b.add(b.mul(self._nt64, L.Constant(I64, off)),
                                        b.mul(self._lin64, L.Constant(I64, nbytes)))], source_etype=I8)
        if self.options.sanitize:  # the array lives here, not in the alloca the base class told the checker of
            self.target.sanitize_fresh(self, base, nbytes)
        return b.insert_value(arr, base, 0)

    # ---- set-up
    def _prologue(self):
        b = self.builder
        c = self.tgt
        blk = self.target._blk(self)
        self._dims = [b.load(c.gep(b, blk, c.B_BDIM + 4 * k), typ=I32) for k in range(3)]
        nt = b.load(c.gep(b, blk, c.B_NTHREADS), typ=I32)
        self._nt = nt
        self._nt64 = b.zext(nt, I64)
        frames = b.load(c.gep(b, blk, c.B_FRAMES), typ=L.PointerType())
        td = self.target.target_data()
        names = sorted(self.plan.slotted | ({_EXITED} if self.plan.uses_return else set()))
        types = {n: I8 if n == _EXITED else self.types.value(self.ir_function.locals[n]) for n in names}
        sizes = {n: (max(t.get_abi_size(td), 1) + 15) // 16 * 16 for n, t in types.items()}
        # Scalar slots on the stack, one array per variable: LLVM then knows that no pointer of
        # the kernel reaches them and that they do not overlap, and keeps them in registers
        # within a thread's iteration (the runner's frame area is reachable from the block
        # state, so a store through any shared-memory pointer might change it). Up to 1 KiB per
        # thread (1 MiB at 1024 threads) on the stack; more goes to the frame area.
        on_stack = sum(sizes.values()) <= 1024
        off = 0
        self._slots = {}
        memset = self.intrinsic("llvm.memset.p0.i64", L.VoidType(), [L.PointerType(), I8, I64, I1])
        for n in names:
            if on_stack:
                base = b.alloca(types[n], size=self._nt64, name=f"slot.{n}")
                base.align = 16
                base.type = L.PointerType()
            else:
                base = b.gep(frames, [b.mul(self._nt64, L.Constant(I64, off))], source_etype=I8)
                off += sizes[n]
            nbytes = b.mul(self._nt64, L.Constant(I64, types[n].get_abi_size(td)))
            b.call(memset, [base, L.Constant(I8, 0), nbytes, L.Constant(I1, 0)])
            self._slots[n] = (base, types[n])
        # local arrays: one copy per thread in the frame area, after any scalar slots
        for name, nbytes, align in self.plan.local_arrays:
            off = -(-off // align) * align
            self._arrays[name] = (off, nbytes)
            off += nbytes
        self.info.target_facts["thread_slot_bytes"] = off
        self._frames = frames
        self._nexit = self.alloca(I32, name="nexit")
        b.store(L.Constant(I32, 0), self._nexit)
        self._uniform_params = dict(self.scopes[0])
        # parameters the kernel assigns start as the launch value in every thread's slot
        params = [p.name for p in self.ir_function.params if p.name in self.plan.slotted]
        if params:
            vals = {p: b.load(self._uniform_params[p]) for p in params}

            def init():
                for p in params:
                    self.builder.store(vals[p], self._slot_ptr(p))
            self._thread_loop(init, skip_exited=False)

    def _slot_ptr(self, name):
        base, llty = self._slots[name]
        return self.builder.gep(base, [self._lin64], source_etype=llty)

    # ---- the thread loop
    def _thread_loop(self, body, skip_exited=True, private=(), xrange=None):
        """for tz, ty, tx (x innermost): store threadIdx in tstate, point slotted variables at
        this thread's slots, zero ``private`` variables, run ``body()``. ``xrange``: (lo, hi)
        i32 values within [0, blockDim.x] that bound threadIdx.x (threads outside do nothing)."""
        b = self.builder
        c = self.tgt
        tstate = self.hidden[0]
        outer = L.Constant(I32, 0)
        nests = []
        for k in _AXES:
            head, bod, done = (self._new_block(f"wi{k}.{p}") for p in ("head", "body", "done"))
            lo, hi = xrange if (k == 0 and xrange) else (L.Constant(I32, 0), self._dims[k])
            pre = b.block
            b.branch(head)
            b.position_at_end(head)
            i = b.phi(I32, name=f"wi{k}")
            i.add_incoming(lo, pre)
            b.cbranch(b.icmp_signed("<", i, hi), bod, done)
            b.position_at_end(bod)
            b.store(i, c.gep(b, tstate, c.T_TID + 4 * k))
            outer = b.add(b.mul(outer, self._dims[k], flags=("nuw", "nsw")), i, flags=("nuw", "nsw"))
            nests.append((head, done, i))
        lin = outer
        b.store(lin, c.gep(b, tstate, c.T_LIN))
        saved = self._lin, self._lin64, self._thread_next
        self._lin = lin
        self._lin64 = b.zext(lin, I64)
        nxt = self._new_block("wi.next")
        self._thread_next = nxt
        if skip_exited and self.plan.uses_return:
            go = self._new_block("wi.live")
            gone = b.icmp_unsigned("!=", b.load(self._slot_ptr(_EXITED), typ=I8), L.Constant(I8, 0))
            b.cbranch(gone, nxt, go)
            b.position_at_end(go)
        scope = self.scopes[0]
        for name in self.plan.slotted:
            scope[name] = self._slot_ptr(name)
        for name, value in self.plan.remat:  # unused ones are dead code to LLVM
            b.store(self.expr(value), scope[name])
        for name in private:
            ptr = scope[name]
            b.store(_zero(ptr.allocated_type), ptr)
        body()
        if not b.block.is_terminated:
            b.branch(nxt)
        b.position_at_end(nxt)
        for head, done, i in reversed(nests):
            i.add_incoming(b.add(i, L.Constant(I32, 1), flags=("nuw", "nsw")), b.block)
            # vectorised (x), but not runtime-unrolled: a y loop unrolled by 2 copies the whole
            # vectorised x loop with its remainders, for blocks too small to gain from it
            b.branch(head).set_metadata("llvm.loop", llvm_util.no_runtime_unroll(self.module))
            b.position_at_end(done)
        self._lin, self._lin64, self._thread_next = saved

    # ---- the structured sequence
    def _seq(self, seq):
        for node in seq:
            self._ensure_open()
            if isinstance(node, Chunk):
                self._chunk(node)
            elif isinstance(node, UniformAssign):
                if node.stmt.loc is not None:
                    self.loc = node.stmt.loc
                FunctionLowering._s_Assign(self, node.stmt)
            elif isinstance(node, Barrier):
                if node.stmt.loc is not None:
                    self.loc = node.stmt.loc
                self._barrier(node.stmt)
            else:
                self._uniform(node)

    def _chunk(self, chunk):
        self._thread_loop(lambda: FunctionLowering.lower_block(self, chunk.stmts),
                          private=self.plan.private.get(id(chunk), ()), xrange=self._guard_range(chunk))

    def _guard_range(self, chunk):
        """A region that is one ``if threadIdx.x < u:`` (or ``<=``, ``==``; u uniform) needs to
        visit only the threads the guard admits -- the halving steps of a tree reduction then
        cost what the active threads cost, as in C. The guard stays in the body."""
        if len(chunk.stmts) != 1 or not isinstance(chunk.stmts[0], ir.If) or chunk.stmts[0].orelse:
            return None
        cond = chunk.stmts[0].cond
        if not isinstance(cond, ir.Compare):
            return None
        op, tx, u = cond.op, cond.lhs, cond.rhs
        if not self._is_tid_x(tx):
            op, tx, u = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}.get(op), u, tx
        if op not in ("<", "<=", "==") or not self._is_tid_x(tx) or not self._static(u):
            return None
        if not isinstance(u.type, T.Integer) or not u.type.signed:
            return None
        b = self.builder
        v = b.sext(self.expr(u), I64) if u.type.bits < 64 else self.expr(u)
        one = L.Constant(I64, 1)
        lo = v if op == "==" else L.Constant(I64, 0)
        hi = b.add(v, one) if op in ("<=", "==") else v
        # clamp to [0, blockDim.x]; v + 1 cannot wrap: it is an int64 compared with an int32 index
        bx = b.zext(self._dims[0], I64)

        def clamp(x):
            x = b.select(b.icmp_signed("<", x, L.Constant(I64, 0)), L.Constant(I64, 0), x)
            return b.trunc(b.select(b.icmp_signed(">", x, bx), bx, x), I32)
        return clamp(lo), clamp(hi)

    def _is_tid_x(self, e) -> bool:
        """``e`` is threadIdx.x: directly, through a widening integer cast, or a variable that
        is recomputed from it in every region."""
        while isinstance(e, ir.Cast) and isinstance(e.type, T.Integer) and e.type.signed \
                and isinstance(e.value.type, T.Integer) and e.value.type.bits <= e.type.bits:
            e = e.value
        if isinstance(e, ir.Var):
            e = dict(self.plan.remat).get(e.name)
            return e is not None and self._is_tid_x(e)
        return isinstance(e, ir.Intrinsic) and e.name == "thread_idx" and int(e.attrs.get("axis", 0)) == 0

    def _barrier(self, stmt):
        """Between two regions: nothing to do, as threads that have returned are skipped by
        the thread loops and count as arrived (as on GPUs); when every thread has returned, the
        block is done. (``sanitize=``: the checker hears that the block passed it.)"""
        if self.options.sanitize:
            self.target.sanitize_block_barrier(self, self.ml.new_site("syncthreads", stmt.loc or self.loc))
        if not self.plan.uses_return:
            return
        b = self.builder
        done = self._new_block("bar.alldone")
        ok = self._new_block("bar.ok")
        b.cbranch(b.icmp_unsigned("==", b.load(self._nexit), self._nt), done, ok)
        b.position_at_end(done)
        self.target.kernel_return(self)
        b.position_at_end(ok)

    def _diverge(self, kind, site_loc, i0, iother, idone, nexit, msg2=None):
        """Record a divergent-barrier error in the launch context and leave the block: ``kind``
        ERR_BARRIER is the coroutine path's record (``msg2`` another barrier), ERR_REGION_BARRIER
        the region path's (``msg2`` says what the other thread did instead)."""
        b = self.builder
        c = self.tgt
        ctx = b.load(c.gep(b, self.target._blk(self), c.B_CTX), typ=L.PointerType())
        res = b.cmpxchg(c.gep(b, ctx, c.C_ERROR), L.Constant(I32, 0), L.Constant(I32, 1), "seq_cst", "seq_cst")
        with b.if_then(b.extract_value(res, 1)):
            b.store(L.Constant(I32, kind), c.gep(b, ctx, c.C_KIND))
            b.store(self.cstring(_site(site_loc)), c.gep(b, ctx, c.C_MSG1))
            m2 = self.cstring(msg2) if msg2 else L.Constant(L.PointerType(), None)
            b.store(m2, c.gep(b, ctx, c.C_MSG2))
            blk = self.target._blk(self)
            vals = [i0, iother, idone, nexit, b.sub(self._nt, nexit)]
            vals += [b.load(c.gep(b, blk, c.B_BID + 4 * k), typ=I32) for k in range(3)]
            for k, v in enumerate(vals):
                b.store(b.sext(v, I64), c.gep(b, ctx, c.C_VALS + 8 * k))
        self.target.kernel_return(self)

    def _agree(self, value_fn):
        """Evaluate ``value_fn()`` (a list of integer values) in every live thread. Returns the
        first live thread's values (loads of uniform allocas), that thread's index and the index
        of the first thread whose values differ (-1 when all agree). When every thread has
        returned, the block is done."""
        b = self.builder
        first = self.alloca(I32, name="agree.first")
        other = self.alloca(I32, name="agree.other")
        b.store(L.Constant(I32, -1), first)
        b.store(L.Constant(I32, -1), other)
        slots = []

        def body():
            bb = self.builder
            vals = value_fn()
            if not slots:
                slots.extend(self.alloca(v.type, name="agree.v") for v in vals)
            f = bb.load(first)
            is_first = bb.icmp_signed("<", f, L.Constant(I32, 0))
            differs = L.Constant(I1, 0)
            for v, s in zip(vals, slots):
                ref = bb.select(is_first, v, bb.load(s))
                bb.store(ref, s)
                differs = bb.or_(differs, bb.icmp_unsigned("!=", v, ref))
            bb.store(bb.select(is_first, self._lin, f), first)
            o = bb.load(other)
            take = bb.and_(differs, bb.icmp_signed("<", o, L.Constant(I32, 0)))
            bb.store(bb.select(take, self._lin, o), other)
        self._thread_loop(body)
        f = b.load(first)
        if self.plan.uses_return:
            alldone = self._new_block("agree.none")
            some = self._new_block("agree.some")
            b.cbranch(b.icmp_signed("<", f, L.Constant(I32, 0)), alldone, some)
            b.position_at_end(alldone)
            self.target.kernel_return(self)
            b.position_at_end(some)
        return [b.load(s) for s in slots], f, b.load(other)

    def _check_agreed(self, other, report):
        """Branch to ``report()`` (which records the error) when a thread disagreed."""
        b = self.builder
        bad = self._new_block("agree.bad")
        ok = self._new_block("agree.ok")
        b.cbranch(b.icmp_signed(">=", other, L.Constant(I32, 0)), bad, ok)
        b.position_at_end(bad)
        report()
        b.position_at_end(ok)

    def _static(self, e) -> bool:
        """``e`` is uniform by construction: evaluate it once, no agreement check."""
        return _is_uniform(e, self.plan.uniform)

    def _uniform(self, node):
        s = node.stmt
        b = self.builder
        if s.loc is not None:
            self.loc = s.loc
        at = _at(s.loc)
        zero = L.Constant(I32, 0)
        if isinstance(s, ir.If):
            if self._static(s.cond):
                cond = self.expr(s.cond)
            else:
                (cond,), f, o = self._agree(lambda: [self.expr(s.cond)])
                sites = [_first_barrier(part) for part in node.parts]
                # the thread that takes the `then` branch and the one that does not
                t_in, t_out = b.select(cond, f, o), b.select(cond, o, f)

                def report():
                    if sites[0] and sites[1]:
                        self._diverge(self.tgt.ERR_BARRIER, sites[0], t_in, t_out, zero, zero, msg2=_site(sites[1]))
                    else:
                        i0, i1 = (t_in, t_out) if sites[0] else (t_out, t_in)
                        self._diverge(self.tgt.ERR_REGION_BARRIER, sites[0] or sites[1], i0, i1, zero, zero, msg2=(
                            f"skipped it (the condition of the `if` at {at} differs between threads), so that "
                            "thread exited or waits at another barrier"))
                self._check_agreed(o, report)
            then_bb, else_bb, end = (self._new_block(f"uif.{p}") for p in ("then", "else", "end"))
            b.cbranch(cond, then_bb, else_bb)
            for bb, part in zip((then_bb, else_bb), node.parts):
                b.position_at_end(bb)
                self._seq(part)
                if not b.block.is_terminated:
                    b.branch(end)
            b.position_at_end(end)
        elif isinstance(s, ir.While):
            head, body, end = (self._new_block(f"uwhile.{p}") for p in ("head", "body", "end"))
            b.branch(head)
            b.position_at_end(head)
            if self._static(s.cond):
                cond = self.expr(s.cond)
            else:
                (cond,), f, o = self._agree(lambda: [self.expr(s.cond)])
                self._check_agreed(o, lambda: self._diverge(
                    self.tgt.ERR_REGION_BARRIER, _first_barrier(node.parts[0]), b.select(cond, f, o),
                    b.select(cond, o, f), zero, zero,
                    msg2=(f"left the `while` at {at} (its condition differs between threads), so that "
                          "thread exited or waits at another barrier")))
            b.cbranch(cond, body, end)
            b.position_at_end(body)
            self._seq(node.parts[0])
            if not b.block.is_terminated:
                self._poll()
                b.branch(head)
            b.position_at_end(end)
        else:
            self._uniform_for(node, at)

    def _uniform_for(self, node, at):
        s = node.stmt
        b = self.builder
        llty = self.types.value(s.start.type)
        signed = getattr(s.start.type, "signed", True)
        bounds = [s.start, s.stop, s.step]
        if self._static(bounds):
            start, stop, step = (self.expr(x) for x in bounds)
        else:
            (start, stop, step), f, o = self._agree(lambda: [self.expr(x) for x in bounds])
            zero = L.Constant(I32, 0)
            self._check_agreed(o, lambda: self._diverge(
                self.tgt.ERR_REGION_BARRIER, _first_barrier(node.parts[0]), f, o, zero, zero,
                msg2=f"has another range in the `for` at {at} (it must be the same in every thread of the block)"))
        trip = range_trip(b, start, stop, step, llty, signed)
        kslot = self.alloca(llty, name="urange.k")
        b.store(L.Constant(llty, 0), kslot)
        head, body, end = (self._new_block(f"ufor.{p}") for p in ("head", "body", "end"))
        b.branch(head)
        b.position_at_end(head)
        k = b.load(kslot)
        b.cbranch(b.icmp_unsigned("<", k, trip), body, end)
        b.position_at_end(body)
        value = b.add(start, b.mul(k, step))
        if s.var in self.plan.slotted:
            self._thread_loop(lambda: self.builder.store(value, self.var(s.var)))
        else:
            b.store(value, self.var(s.var))
        self._seq(node.parts[0])
        if not b.block.is_terminated:
            b.store(b.add(b.load(kslot), L.Constant(llty, 1)), kslot)
            self._poll()
            b.branch(head)
        b.position_at_end(end)
