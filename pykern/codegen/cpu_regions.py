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
* ``return`` inside a region marks the thread exited; a later barrier reached while some threads
  have exited (and others have not) is a divergent barrier, as on the coroutine path.
* Kernels with wave operations, ``syncthreads_count/and/or``, barriers inside device functions,
  ``break``/``continue`` across a barrier loop, or loops with ``else`` take the coroutine path.

``PYKERN_CPU_BARRIERS=coroutine`` forces the coroutine path for every kernel (the tests run both
paths); ``regions`` or unset picks regions whenever the kernel qualifies.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from llvmlite import ir as L

from ..frontend import ir
from ..frontend import types as T
from .lower import FunctionLowering, _walk, _zero, _sizeof, range_trip
from .target import BARRIER_KINDS, CPU_BARRIERS_ENV, WAVE_OPS, SyncSite

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
class Uniform:
    """An ``if``/``while``/``for`` with a barrier inside: its control is evaluated per thread and
    must agree; ``parts`` are the lowered sub-sequences (then/else, or the loop body)."""

    stmt: ir.Stmt
    parts: list = field(default_factory=list)


@dataclass(frozen=True)
class Plan:
    seq: list  # of Chunk | Barrier | Uniform
    slotted: frozenset  # variables with one slot per thread
    private: dict  # chunk id -> names of variables local to that chunk
    local_arrays: tuple  # (name, bytes per thread) of the kernel's local arrays
    uses_return: bool


class _NotRegions(Exception):
    pass


def _barrier_stmt(s) -> bool:
    return (isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Intrinsic)
            and s.value.name == "syncthreads")


def _has_barrier(node, uses) -> bool:
    for n in _walk(node):
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
    for n in _walk(node):
        if isinstance(n, ir.Var):
            out.add(n.name)
        elif isinstance(n, ir.Assign):
            out.add(n.target)
        elif isinstance(n, ir.ForRange):
            out.add(n.var)
    return out


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


def plan(module: ir.Module, uses: dict):
    """The region plan of ``module``'s kernel, or None when it must take the coroutine path."""
    if os.environ.get(CPU_BARRIERS_ENV, "").strip() == "coroutine":
        return None
    k = module.kernel
    kb, kw, _ = uses.get(k.name, (False, False, False))
    if not kb or kw:
        return None
    # barriers reached through calls, or of the value-returning kinds, need the coroutine path
    for n in _walk(k.body):
        if isinstance(n, ir.Call) and uses.get(n.func, (False,))[0]:
            return None
        if isinstance(n, ir.Intrinsic) and (n.name in BARRIER_KINDS and n.name != "syncthreads"
                                            or n.name in WAVE_OPS):
            return None
    chunks = []
    try:
        seq = _build(k.body, uses, False, chunks)
    except _NotRegions:
        return None
    counts = {}
    for i, c in enumerate(chunks):
        for name in _names(c.stmts):
            counts.setdefault(name, []).append(i)
    assigned = set()
    for n in _walk(k.body):
        if isinstance(n, ir.Assign):
            assigned.add(n.target)
        elif isinstance(n, ir.ForRange):
            assigned.add(n.var)
    params = {p.name for p in k.params}
    slotted = set(_uniform_names(seq, set())) | (params & assigned)
    private = {}
    for name, where in counts.items():
        if name in params and name not in assigned:
            continue  # read-only parameter: one value for every thread
        if name in slotted or len(set(where)) > 1 or chunks[where[0]].in_loop:
            slotted.add(name)
        else:
            private.setdefault(id(chunks[where[0]]), []).append(name)
    arrays = []
    for n in _walk(k.body):
        if isinstance(n, ir.AllocArray) and n.space == "local":
            shape = n.shape if isinstance(n.shape, (tuple, list)) else (n.shape,)
            count = 1
            for s in shape:
                count *= int(s)
            arrays.append((n.name, max(count, 1) * _sizeof(n.type.dtype)))
    uses_return = any(isinstance(n, ir.Return) for n in _walk(k.body))
    slotted &= set(k.locals)
    return Plan(seq, frozenset(slotted), private, tuple(arrays), uses_return)


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
        b = self.builder
        b.store(L.Constant(I8, 1), self._slot_ptr(_EXITED))
        n = b.load(self._nexit)
        b.store(b.add(n, L.Constant(I32, 1)), self._nexit)
        b.branch(self._thread_next)

    def _x_Var(self, e):
        ptr = self.var(e.name)
        if isinstance(ptr, L.AllocaInstr):
            return self.builder.load(ptr)
        return self.builder.load(ptr, typ=self._offsets[e.name][2])  # this thread's slot

    def _x_AllocArray(self, e):
        arr = super()._x_AllocArray(e)  # checks the limits; its alloca goes unused
        if e.space != "local" or self.inline:
            return arr
        off, nbytes = self._arrays[e.name]
        b = self.builder
        base = b.gep(self._base, [b.add(b.mul(self._nt64, L.Constant(I64, off)),
                                        b.mul(self._lin64, L.Constant(I64, nbytes)))], source_etype=I8)
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
        self._base = b.load(c.gep(b, blk, c.B_FRAMES), typ=L.PointerType())
        # slot layout: slot[var][thread], scalars first (zeroed per block), then local arrays
        td = self.target.target_data()
        names = sorted(self.plan.slotted | ({_EXITED} if self.plan.uses_return else set()))
        self._offsets = {}
        off = 0
        for name in names:
            llty = I8 if name == _EXITED else self.types.value(self.ir_function.locals[name])
            size = max(llty.get_abi_size(td), 1)
            align = min(16, llty.get_abi_alignment(td))
            off = (off + align - 1) // align * align
            self._offsets[name] = (off, size, llty)
            off += size
        scalar_bytes = (off + 15) // 16 * 16
        off = scalar_bytes
        for name, nbytes in self.plan.local_arrays:
            self._arrays[name] = (off, nbytes)
            off += (nbytes + 15) // 16 * 16
        self.info.target_facts["thread_slot_bytes"] = off
        if scalar_bytes:
            memset = self.intrinsic("llvm.memset.p0.i64", L.VoidType(), [L.PointerType(), I8, I64, I1])
            b.call(memset, [self._base, L.Constant(I8, 0), b.mul(self._nt64, L.Constant(I64, scalar_bytes)),
                            L.Constant(I1, 0)])
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
        off, size, _ = self._offsets[name]
        b = self.builder
        idx = b.add(b.mul(self._nt64, L.Constant(I64, off)), b.mul(self._lin64, L.Constant(I64, size)))
        return b.gep(self._base, [idx], source_etype=I8)

    # ---- the thread loop
    def _thread_loop(self, body, skip_exited=True, private=()):
        """for tz, ty, tx (x innermost): store threadIdx in tstate, point slotted variables at
        this thread's slots, zero ``private`` variables, run ``body()``."""
        b = self.builder
        c = self.tgt
        tstate = self.hidden[0]
        fn = self.function
        outer = L.Constant(I32, 0)
        nests = []
        for k in _AXES:
            head, bod, done = (self._new_block(f"wi{k}.{p}") for p in ("head", "body", "done"))
            pre = b.block
            b.branch(head)
            b.position_at_end(head)
            i = b.phi(I32, name=f"wi{k}")
            i.add_incoming(L.Constant(I32, 0), pre)
            b.cbranch(b.icmp_signed("<", i, self._dims[k]), bod, done)
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
            gone = b.icmp_unsigned("!=", b.load(self._slot_ptr(_EXITED)), L.Constant(I8, 0))
            b.cbranch(gone, nxt, go)
            b.position_at_end(go)
        scope = self.scopes[0]
        for name in self.plan.slotted:
            scope[name] = self._slot_ptr(name)
        for name in private:
            ptr = scope[name]
            b.store(_zero(ptr.allocated_type), ptr)
        body()
        if not b.block.is_terminated:
            b.branch(nxt)
        b.position_at_end(nxt)
        for head, done, i in reversed(nests):
            i.add_incoming(b.add(i, L.Constant(I32, 1), flags=("nuw", "nsw")), b.block)
            b.branch(head)
            b.position_at_end(done)
        self._lin, self._lin64, self._thread_next = saved

    # ---- the structured sequence
    def _seq(self, seq):
        for node in seq:
            self._ensure_open()
            if isinstance(node, Chunk):
                self._chunk(node)
            elif isinstance(node, Barrier):
                if node.stmt.loc is not None:
                    self.loc = node.stmt.loc
                self._barrier(node.stmt)
            else:
                self._uniform(node)

    def _chunk(self, chunk):
        self._thread_loop(lambda: FunctionLowering.lower_block(self, chunk.stmts),
                          private=self.plan.private.get(id(chunk), ()))

    def _barrier(self, stmt):
        """Between two regions: nothing to do unless threads have returned; then either all
        did (the block is done) or it is a divergent barrier."""
        if not self.plan.uses_return:
            return
        b = self.builder
        n = b.load(self._nexit)
        bad = self._new_block("bar.exited")
        ok = self._new_block("bar.ok")
        b.cbranch(b.icmp_unsigned("!=", n, L.Constant(I32, 0)), bad, ok)
        b.position_at_end(bad)
        done = self._new_block("bar.alldone")
        err = self._new_block("bar.diverge")
        b.cbranch(b.icmp_unsigned("==", n, self._nt), done, err)
        b.position_at_end(done)
        self.target.kernel_return(self)
        b.position_at_end(err)
        # one thread that exited and one that did not, for the message
        live = self._find_thread(want_exited=False)
        gone = self._find_thread(want_exited=True)
        self._diverge(2, stmt.loc, live, L.Constant(I32, -1), gone, n)
        b.position_at_end(ok)

    def _find_thread(self, want_exited):
        b = self.builder
        found = self.alloca(I32, name="found")
        b.store(L.Constant(I32, -1), found)

        def body():
            bb = self.builder
            e = bb.icmp_unsigned("!=", bb.load(self._slot_ptr(_EXITED)), L.Constant(I8, 0))
            hit = e if want_exited else bb.not_(e)
            cur = bb.load(found)
            first = bb.and_(hit, bb.icmp_signed("<", cur, L.Constant(I32, 0)))
            bb.store(bb.select(first, self._lin, cur), found)
        self._thread_loop(body, skip_exited=False)
        return b.load(found)

    def _diverge(self, kind, site_loc, i0, iother, idone, nexit, msg2=None):
        """Record a divergent-barrier error in the launch context and leave the block: kind 2 is
        the coroutine path's record (``msg2`` another barrier), kind 3 the region path's (``msg2``
        says what the other thread did instead)."""
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

    def _uniform(self, node):
        s = node.stmt
        b = self.builder
        if s.loc is not None:
            self.loc = s.loc
        at = _at(s.loc)
        zero = L.Constant(I32, 0)
        if isinstance(s, ir.If):
            (cond,), f, o = self._agree(lambda: [self.expr(s.cond)])
            sites = [_first_barrier(part) for part in node.parts]
            # the thread that takes the `then` branch and the one that does not
            t_in, t_out = b.select(cond, f, o), b.select(cond, o, f)

            def report():
                if sites[0] and sites[1]:
                    self._diverge(2, sites[0], t_in, t_out, zero, zero, msg2=_site(sites[1]))
                else:
                    i0, i1 = (t_in, t_out) if sites[0] else (t_out, t_in)
                    self._diverge(3, sites[0] or sites[1], i0, i1, zero, zero, msg2=(
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
            (cond,), f, o = self._agree(lambda: [self.expr(s.cond)])
            self._check_agreed(o, lambda: self._diverge(
                3, _first_barrier(node.parts[0]), b.select(cond, f, o), b.select(cond, o, f), zero, zero,
                msg2=(f"left the `while` at {at} (its condition differs between threads), so that thread "
                      "exited or waits at another barrier")))
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
        (start, stop, step), f, o = self._agree(lambda: [self.expr(s.start), self.expr(s.stop), self.expr(s.step)])
        zero = L.Constant(I32, 0)
        self._check_agreed(o, lambda: self._diverge(
            3, _first_barrier(node.parts[0]), f, o, zero, zero,
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

        def set_var():
            self.builder.store(value, self.var(s.var))
        self._thread_loop(set_var)
        self._seq(node.parts[0])
        if not b.block.is_terminated:
            b.store(b.add(b.load(kslot), L.Constant(llty, 1)), kslot)
            self._poll()
            b.branch(head)
        b.position_at_end(end)
