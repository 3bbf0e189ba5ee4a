"""The cpu target: kernels as host machine code with exact GPU semantics.

Execution design (see also ``runtime/cpu/executor.py``):

* The compiled object exports one function
  ``void NAME(ptr args, ptr ctx, i64 first_block, i64 last_block)`` that runs
  blocks ``[first, last)`` of a launch; the executor calls it from several OS
  threads (ctypes releases the GIL), so blocks run in parallel.
* **Fast path** (no barrier, no wave op anywhere): the kernel body is an
  ``alwaysinline`` function called in a plain ``for tz/ty/tx`` loop per
  block; after inlining LLVM sees an ordinary loop it can vectorise.
* **Coroutine path** (barriers or wave ops): the kernel body is an LLVM
  coroutine (``presplitcoroutine`` + ``llvm.coro.*``, split by LLVM's
  CoroSplit pass). It suspends at every barrier and every wave op after
  writing its status/site/operands into its per-thread state. A scheduler,
  also compiled (LLVM IR text below), resumes every runnable thread until all
  are suspended, then either completes wave ops (per wave, lanes waiting at
  the same site) or passes a barrier (only if every thread of the block waits
  at the same barrier site) or reports a divergent barrier naming the source
  lines -- it never hangs. LLVM coroutines were chosen over a hand-written
  state-machine transform because LLVM already does the hard part (spilling
  live values into the frame, any control flow around suspend points) and the
  result is plain machine code.
  Device functions that reach a barrier/wave op are inlined during lowering
  (a coroutine can only suspend in its own body); with ``debug=True`` every
  call is inlined so that a failed bounds check can stop the thread.
* **Cancellation**: every ``while`` back-edge and every 1024th ``for``
  iteration (strip-mined, see ``lowering/module.py``) load the launch's cancel flag
  (``loop_poll``); when set the thread leaves like after a debug bounds
  failure, and the scheduler, seeing the flag, ends the block. So Ctrl-C
  stops even one long block within milliseconds.
* **Limits**: 64 KiB of shared memory per block (static + dynamic, as the
  GPUs' LDS) and 64 KiB of local arrays per thread (``Target.max_*_bytes``).

Per-thread state ``T`` and per-block state ``B`` are byte-addressed structs
(offsets below); the launch context ``ctx`` is ``core/cpu_context.py``'s (the executor's ``LaunchCtx``).
"""

from __future__ import annotations

import functools
import hashlib
import math
import string
import types

from llvmlite import ir as L

from pykern.core import external, settings
from pykern.core.abi import ERROR_KINDS
from pykern.core.cpu_context import LDS_BYTES, OFFSETS as _CTX
from pykern.core.errors import CompileError
from pykern.frontend import types as T
from pykern.core.hostinfo import cpu_identity
from pykern.core.llvm_host import host_target_machine, host_triple
from pykern.core.llvm_host import quick_target_machine
from pykern.codegen import llvm_util
from pykern.codegen.artifact import KernelArtifact
from pykern.codegen.target_interface import DEFAULT_MAX_LOCAL_BYTES, CompileOptions, KernelInfo, LoweredKernel, Target, gamma_at_integers, launch_register_range

I1, I8, I32, I64 = L.IntType(1), L.IntType(8), L.IntType(32), L.IntType(64)
PTR = L.PointerType()

# ---- per-thread state T (bytes)
T_TID, T_LIN, T_BLK, T_STATUS, T_SITE = 0, 12, 16, 24, 28
T_WVAL, T_WSRC, T_WPRED, T_WRES, T_WBALLOT, T_WACTIVE, T_HANDLE = 32, 40, 44, 48, 56, 64, 72
T_FRAME = 80  # preallocated coroutine frame memory of FRAME_CAP bytes
# sanitize=: the launch's thread id base, the ids of the block's threads [BLO, BHI), its threads'
# states in the checker's table (cpu/sanitizer_ir.py): per block, so the work-item-loop path's one
# T per block serves as well as the coroutine path's T per thread
T_SAN_LO, T_SAN_BLO, T_SAN_BHI, T_SAN_TS = 96, 100, 104, 112
# sanitize=: the launch's mask of elided array parameters (``SanCtx.skip``, copied here when a
# thread or block starts): an in-bounds access of one whose bit is set goes unchecked
T_SAN_SKIP = 108
#: sanitize=: the sanitizer context (the launch context's ``san``), kept here when a thread or block
#: starts so that an access reaches it in one load
T_SAN_CTX = 120
# sanitize=, the work-item-loop path: the block barriers every thread of the block has passed and
# the last one's site + 1 (its threads' own epochs and sites stay 0: ``blocksync`` counts here
# once instead of in each thread's state)
T_SAN_BIAS, T_SAN_BSITE = 128, 132
T_SIZE = 136
#: fast path only: the in-range thread count a split kernel stores in count mode (``thread_split``;
#: the coroutine path's wave-value field, which the fast path never uses)
T_SPLIT = T_WVAL
#: coroutine frames up to this size live in memory preallocated per worker
#: (no malloc/free per thread and block); bigger frames fall back to malloc
FRAME_CAP = 1024
# ---- per-block state B (bytes)
B_BID, B_BDIM, B_GDIM, B_NTHREADS = 0, 12, 24, 36
B_SHARED, B_DYNSHARED, B_CTX, B_THREADS, B_BARRES, B_FRAMES = 40, 48, 56, 64, 72, 80
B_SIZE = 88
# ---- launch context: the executor's LaunchCtx, laid out once in core/cpu_context.py
C_GRID, C_BLOCK, C_DYN, C_ERROR, C_CANCEL, C_KIND, C_MSG1, C_MSG2, C_VALS = (
    _CTX[f] for f in ("grid", "block", "dyn_shared", "error", "cancel", "kind", "msg1", "msg2", "vals"))
#: grid barrier of cooperative launches (cg.this_grid().sync()): arrived,
#: generation, exited blocks, blocks in the grid -- i32 each (LaunchCtx.gbar)
C_GBAR = _CTX["gbar"]
#: sanitize=: the sanitizer context (``runtime/cpu/sanitizer.py``), else null
C_SAN = _CTX["san"]
# ---- thread status
RUNNABLE, AT_BARRIER, AT_WAVE, DONE = 0, 1, 2, 3
#: ``for`` loops poll the launch's cancel flag every this many iterations
#: (and once at their end); ``while`` loops at every iteration
POLL_INTERVAL = 1024
# ---- error kinds (ctx.kind) of the cpu target only; the kinds both targets write (bounds 1,
# division by zero 3, raise 6, slice value 7) are abi.ERROR_KINDS, which record_error stores
ERR_BARRIER = 2
ERR_GRIDSYNC = 4  # a grid sync that some block of the cooperative launch never reaches
ERR_REGION_BARRIER = 5  # divergent barrier found by a work-item loop (cpu_regions): msg2 says how

_LIBM_UNARY = set(
    "tan asin acos atan sinh cosh tanh asinh acosh atanh expm1 log1p cbrt erf erfc lgamma".split()
)
_LLVM_UNARY = set("sin cos exp exp2 log log2 log10 sqrt floor ceil trunc rint fabs".split())



def _gep(b, base, off):
    return b.gep(base, [L.Constant(I64, off)], source_etype=I8) if off else base


#: the byte layout the work-item-loop lowering (``cpu_regions``) reads and writes
_LAYOUT = types.SimpleNamespace(
    gep=_gep, T_TID=T_TID, T_LIN=T_LIN, B_BID=B_BID, B_BDIM=B_BDIM, B_NTHREADS=B_NTHREADS, B_CTX=B_CTX,
    B_FRAMES=B_FRAMES, C_ERROR=C_ERROR, C_KIND=C_KIND, C_MSG1=C_MSG1, C_MSG2=C_MSG2, C_VALS=C_VALS,
    ERR_BARRIER=ERR_BARRIER, ERR_REGION_BARRIER=ERR_REGION_BARRIER,
)


class CpuTarget(Target):
    """Host code with GPU semantics; see the module docstring for the design."""

    name = "cpu"
    arch = None

    # ---- options / module
    def default_wave_size(self, options: CompileOptions) -> int:
        try:
            return settings.get("PYKERN_CPU_WAVESIZE")
        except settings.SettingError as e:
            raise CompileError(str(e)) from None

    def resolve_options(self, options):
        options = super().resolve_options(options)
        if options.wave_size not in (32, 64):
            raise CompileError(f"cpu wave size must be 32 or 64, not {options.wave_size}")
        return options

    def triple(self) -> str:
        return host_triple()

    def data_layout(self) -> str:
        return str(host_target_machine().target_data)

    def hidden_param_types(self):
        # (per-thread state T, the block's shared memory): shared memory comes in as an
        # argument so that the kernel function can mark it ``noalias`` (see define_kernel)
        return [PTR, PTR]

    def must_inline(self, callee, info: KernelInfo) -> bool:
        if info.debug:
            return True
        b, w, _ = info.function_uses.get(callee.name, (False, False, False))
        return b or w

    def _coroutine(self, info) -> bool:
        return (info.uses_barrier or info.uses_wave_ops) and self._regions(info) is None

    @staticmethod
    def _regions(info):
        return info.target_facts.get("regions")

    def analyse(self, module, info):
        info.target_facts["split"] = None
        if not info.uses_barrier:  # work-item regions split at barriers: none to split at
            info.target_facts["regions"] = None
            if not info.uses_barrier and not info.uses_wave_ops and not info.debug and not info.sanitize:
                # the fast path: its guard splits the thread loop
                from pykern.codegen.cpu import thread_split

                info.target_facts["split"] = thread_split.plan(module.kernel)
            return
        from pykern.codegen.cpu import regions as cpu_regions

        info.target_facts["regions"] = cpu_regions.plan(module, info.function_uses)

    def kernel_lowering(self, info):
        plan = self._regions(info)
        if plan is None:
            split = info.target_facts.get("split")
            if split is None:
                return None
            from pykern.codegen.cpu.thread_split import SplitLowering

            return functools.partial(SplitLowering, plan=split, mode_index=info.target_facts["split_mode_arg"],
                                     count_slot=lambda b, tstate: _gep(b, tstate, T_SPLIT))
        from pykern.codegen.cpu.regions import RegionLowering

        return functools.partial(RegionLowering, plan=plan, layout=_LAYOUT)

    def target_data(self):
        return host_target_machine().target_data

    # ---- kernel function
    def define_kernel(self, llmodule, info, params, param_types, options):
        base = _sanitize(info.kernel_name)
        if self._coroutine(info):
            fnty = L.FunctionType(PTR, list(param_types) + [PTR, PTR])
            f = L.Function(llmodule, fnty, f"{base}.thread")
            set.add(f.attributes, "presplitcoroutine")  # llvmlite does not know this attribute
        else:
            # a split guard (``thread_split``) adds the split mode after the parameters
            split = [I32] if info.target_facts.get("split") is not None else []
            info.target_facts["split_mode_arg"] = len(param_types)
            fnty = L.FunctionType(L.VoidType(), list(param_types) + split + [PTR, PTR])
            f = L.Function(llmodule, fnty, f"{base}.thread")
            f.attributes.add("alwaysinline")
            # Shared memory is reached only through pointers based on this argument, and one
            # call runs one thread (fast path) or the whole block (regions): LLVM may then
            # assume no kernel argument array overlaps it, and vectorise a thread loop that
            # copies global memory into shared memory without run-time overlap checks (which
            # it cannot form for an index that wraps negative values). Not on the coroutine
            # path: there other threads touch the memory while this call is suspended.
            f.args[-1].add_attribute("noalias")
        f.linkage = "internal"
        return f

    def kernel_prologue(self, fx) -> None:
        if not self._coroutine(fx.info):
            self._sanitize_start(fx)
            return
        b = fx.builder
        mod = fx.module
        tok = _TOKEN
        coro_id = fx.intrinsic("llvm.coro.id", tok, [I32, PTR, PTR, PTR])
        coro_size = fx.intrinsic("llvm.coro.size.i64", I64, [])
        coro_begin = fx.intrinsic("llvm.coro.begin", PTR, [tok, PTR])
        coro_free = fx.intrinsic("llvm.coro.free", PTR, [tok, PTR])
        coro_end = fx.intrinsic("llvm.coro.end", L.VoidType(), [PTR, I1, tok])
        coro_suspend = fx.intrinsic("llvm.coro.suspend", I8, [tok, I1])
        malloc = fx.intrinsic("malloc", PTR, [I64])
        free = fx.intrinsic("free", L.VoidType(), [PTR])
        null = L.Constant(PTR, None)
        cid = b.call(coro_id, [L.Constant(I32, 0), null, null, null])
        size = b.call(coro_size, [])
        tstate = fx.hidden[0]
        prealloc = b.load(_gep(b, tstate, T_FRAME), typ=PTR)
        fits = b.icmp_unsigned("<=", size, L.Constant(I64, FRAME_CAP))
        with b.if_else(fits) as (small, big):
            with small:
                mem_small = prealloc
                bb_small = b.block
            with big:
                mem_big = b.call(malloc, [size])
                bb_big = b.block
        mem = b.phi(PTR)
        mem.add_incoming(mem_small, bb_small)
        mem.add_incoming(mem_big, bb_big)
        hdl = b.call(coro_begin, [cid, mem])
        fn = fx.function
        final = fn.append_basic_block("coro.final")
        cleanup = fn.append_basic_block("coro.cleanup")
        ret = fn.append_basic_block("coro.ret")
        unreach = fn.append_basic_block("coro.unreachable")
        fb = L.IRBuilder(final)
        fb.store(L.Constant(I32, DONE), _gep(fb, tstate, T_STATUS))
        s = fb.call(coro_suspend, [_none_token(), L.Constant(I1, 1)])
        sw = fb.switch(s, ret)
        sw.add_case(L.Constant(I8, 0), unreach)
        sw.add_case(L.Constant(I8, 1), cleanup)
        fb.position_at_end(unreach)
        fb.unreachable()
        fb.position_at_end(cleanup)
        m = fb.call(coro_free, [cid, hdl])
        own = fb.load(_gep(fb, tstate, T_FRAME), typ=PTR)
        with fb.if_then(fb.icmp_unsigned("!=", m, own)):
            fb.call(free, [m])
        fb.branch(ret)
        fb.position_at_end(ret)
        fb.call(coro_end, [hdl, L.Constant(I1, 0), _none_token()])
        fb.ret(hdl)
        fx._cpu_coro = {"final": final, "cleanup": cleanup, "ret": ret, "suspend": coro_suspend}
        self._sanitize_start(fx)

    # ---- sanitize= (the checker is cpu/sanitizer_ir.py, linked in by finalize)
    def _sanitize_start(self, fx):
        if fx.options.sanitize:
            f = fx.intrinsic("pykern.san.start", L.VoidType(), [PTR, PTR, I32])
            whole = self._regions(fx.info) is not None  # one call per block: the body loops its threads
            fx.builder.call(f, [fx.hidden[0], fx.hidden[1], L.Constant(I32, int(whole))])

    def sanitize_block_barrier(self, fx, site):
        """The work-item-loop path passed a ``syncthreads`` (``site``) with every thread."""
        f = fx.intrinsic("pykern.san.blocksync", L.VoidType(), [PTR, I32])
        fx.builder.call(f, [fx.hidden[0], L.Constant(I32, site.id)])

    def _sanitize_sync(self, fx, kind: int, site):
        if fx.options.sanitize:
            f = fx.intrinsic("pykern.san.sync", L.VoidType(), [PTR, I32, I32])
            fx.builder.call(f, [fx.hidden[0], L.Constant(I32, kind), L.Constant(I32, site.id)])

    def sanitize_access(self, fx, ptr, nbytes, kind, site, aux=None, skip=None):
        f = fx.intrinsic("pykern.san.access", L.VoidType(), [PTR, PTR, I64, I32, I64])
        # bit 2: a local array's element (``aux``, its index, given): private to its thread, so
        # checked for reads of unwritten elements only, never for races
        code = site << 3 | (4 if aux is not None else 0) | {"read": 0, "write": 1, "atomic": 2}[kind]
        b = fx.builder
        p = ptr if ptr.type == PTR else b.bitcast(ptr, PTR)
        done = None
        if skip is not None:  # (bit, in bounds): the launch's mask (``T_SAN_SKIP``) says unchecked
            bit, inb = skip
            mask = b.load(_gep(b, fx.hidden[0], T_SAN_SKIP), typ=I32)
            on = b.icmp_unsigned("!=", b.and_(mask, L.Constant(I32, 1 << bit)), L.Constant(I32, 0))
            go = b.and_(on, inb) if inb is not None else on
            check, done = fx._new_block("san.check"), fx._new_block("san.done")
            b.cbranch(go, done, check)
            b.position_at_end(check)
        b.call(f, [fx.hidden[0], p, L.Constant(I64, nbytes), L.Constant(I32, code),
                   aux if aux is not None else L.Constant(I64, 0)])
        if done is not None:
            b.branch(done)
            b.position_at_end(done)

    def sanitize_fresh(self, fx, ptr, nbytes):
        f = fx.intrinsic("pykern.san.fresh", L.VoidType(), [PTR, PTR, I64])
        b = fx.builder
        p = ptr if ptr.type == PTR else b.bitcast(ptr, PTR)
        b.call(f, [fx.hidden[0], p, L.Constant(I64, nbytes)])

    def kernel_return(self, fx) -> None:
        if self._coroutine(fx.info):
            fx.builder.branch(fx._cpu_coro["final"])
        else:
            fx.builder.ret_void()

    def _suspend(self, fx, status: int, site_id: int):
        """Store status/site in T and suspend; continue in a fresh resume block."""
        b = fx.builder
        co = fx._cpu_coro
        t = fx.hidden[0]
        b.store(L.Constant(I32, status), _gep(b, t, T_STATUS))
        b.store(L.Constant(I32, site_id), _gep(b, t, T_SITE))
        s = b.call(co["suspend"], [_none_token(), L.Constant(I1, 0)])
        resume = fx.function.append_basic_block("resume")
        sw = b.switch(s, co["ret"])
        sw.add_case(L.Constant(I8, 0), resume)
        sw.add_case(L.Constant(I8, 1), co["cleanup"])
        b.position_at_end(resume)

    # ---- registers
    def _blk(self, fx):
        b = fx.builder
        return b.load(_gep(b, fx.hidden[0], T_BLK), typ=PTR)

    def special_register_range(self, fx, name, axis):
        # what ``cpu/executor.launch`` checks (the block against the artifact's max_block_size)
        return launch_register_range(name, min(1024, fx.options.max_block_size or 1024), fx.options.wave_size)

    def special_register(self, fx, name, axis):
        b = fx.builder
        t = fx.hidden[0]
        if name == "thread_idx":
            return b.load(_gep(b, t, T_TID + 4 * axis), typ=I32)
        if name == "warpsize":
            return L.Constant(I32, fx.options.wave_size)
        if name == "laneid":
            lin = b.load(_gep(b, t, T_LIN), typ=I32)
            return b.and_(lin, L.Constant(I32, fx.options.wave_size - 1))
        off = {"block_idx": B_BID, "block_dim": B_BDIM, "grid_dim": B_GDIM}[name]
        return b.load(_gep(b, self._blk(fx), off + 4 * axis), typ=I32)

    # ---- memory
    def shared_array(self, fx, name, elem_type, nbytes, align, offset):
        return _gep(fx.builder, fx.hidden[1], offset)

    def dynamic_shared(self, fx, elem_type):
        # based on the shared-memory argument (its offset from the block's shared area), so
        # that its ``noalias`` covers the dynamic array too
        b = fx.builder
        blk = self._blk(fx)
        dyn = b.ptrtoint(b.load(_gep(b, blk, B_DYNSHARED), typ=PTR), I64)
        base = b.ptrtoint(b.load(_gep(b, blk, B_SHARED), typ=PTR), I64)
        return b.gep(fx.hidden[1], [b.sub(dyn, base)], source_etype=I8)

    def dynamic_shared_bytes(self, fx):
        b = fx.builder
        ctx = b.load(_gep(b, self._blk(fx), B_CTX), typ=PTR)
        return b.load(_gep(b, ctx, C_DYN), typ=I64)

    # ---- sync
    def barrier(self, fx, kind, pred, site):
        b = fx.builder
        t = fx.hidden[0]
        if pred is not None:
            b.store(b.zext(pred, I32), _gep(b, t, T_WPRED))
        # all threads of a block run on one OS thread: a compiler-only fence suffices
        b.fence("seq_cst", "singlethread")
        self._suspend(fx, AT_BARRIER, site.id)
        b.fence("seq_cst", "singlethread")
        self._sanitize_sync(fx, 1 if kind == "grid_sync" else 0, site)
        if kind in ("syncthreads", "grid_sync"):  # grid_sync: the scheduler also waits for the grid
            return None
        blk = self._blk(fx)
        count = b.load(_gep(b, blk, B_BARRES), typ=I32)
        if kind == "syncthreads_count":
            return count
        if kind == "syncthreads_or":
            return b.zext(b.icmp_signed("!=", count, L.Constant(I32, 0)), I32)
        n = b.load(_gep(b, blk, B_NTHREADS), typ=I32)
        return b.zext(b.icmp_signed("==", count, n), I32)

    def fence(self, fx, scope):
        fx.builder.fence("seq_cst")
        if fx.options.sanitize and scope != "block":  # the checker's release/acquire (cpu/sanitizer_ir.py)
            fx.info.target_facts["sanitize_fences"] = True
            fx.builder.call(fx.intrinsic("pykern.san.fence", L.VoidType(), [PTR]), [fx.hidden[0]])

    def wave_op(self, fx, name, args, site):
        b = fx.builder
        t = fx.hidden[0]
        ws = fx.options.wave_size
        lane = b.and_(b.load(_gep(b, t, T_LIN), typ=I32), L.Constant(I32, ws - 1))
        if name.startswith("shfl"):
            _mask, val, arg = args
            if name == "shfl_sync":
                src = b.and_(arg, L.Constant(I32, ws - 1))
            elif name == "shfl_up_sync":
                src = b.sub(lane, arg)
            elif name == "shfl_down_sync":
                src = b.add(lane, arg)
            else:
                src = b.xor(lane, arg)
            bad = b.or_(b.icmp_signed("<", src, L.Constant(I32, 0)), b.icmp_signed(">=", src, L.Constant(I32, ws)))
            src = b.select(bad, lane, src)
            w = val.type.width
            wide = b.zext(val, I64) if w < 64 else val
            b.store(wide, _gep(b, t, T_WVAL))
            b.store(src, _gep(b, t, T_WSRC))
            b.store(L.Constant(I32, 0), _gep(b, t, T_WPRED))
        else:
            b.store(lane, _gep(b, t, T_WSRC))
            p = args[1] if len(args) > 1 else L.Constant(I1, 1)
            b.store(b.zext(p, I32), _gep(b, t, T_WPRED))
        b.fence("seq_cst", "singlethread")
        self._suspend(fx, AT_WAVE, site.id)
        b.fence("seq_cst", "singlethread")
        if name == "syncwarp":  # the only wave op that orders memory (see docs/user/debugging.md, "Kernel sanitizer")
            self._sanitize_sync(fx, 2, site)
        if name.startswith("shfl"):
            r = b.load(_gep(b, t, T_WRES), typ=I64)
            return b.trunc(r, val.type) if w < 64 else r
        ballot = b.load(_gep(b, t, T_WBALLOT), typ=I64)
        active = b.load(_gep(b, t, T_WACTIVE), typ=I64)
        if name == "ballot_sync":
            return ballot
        if name == "activemask":
            return active
        if name == "any_sync":
            return b.icmp_unsigned("!=", ballot, L.Constant(I64, 0))
        if name == "all_sync":
            return b.icmp_unsigned("==", ballot, active)
        if name == "eq_sync":
            return b.or_(b.icmp_unsigned("==", ballot, active), b.icmp_unsigned("==", ballot, L.Constant(I64, 0)))
        return None  # syncwarp

    # ---- math
    def math(self, fx, name, args, fty):
        b = fx.builder
        flags = ("fast",) if fx.options.fastmath else ()
        if fty.bits == 16 and name == "fma":
            # a half FMA rounds once: a*b+c is exact in double for halves (or beyond the half
            # range), then one correct rounding to half (fx.cast rounds to odd in between)
            f64 = L.DoubleType()
            r = self.math(fx, "fma", [b.fpext(a, f64) for a in args], T.float64)
            return fx.cast(r, T.float64, T.float16)
        if fty.bits == 16:
            f32 = L.FloatType()
            wide = [b.fpext(a, f32) for a in args]
            r = self.math(fx, name, wide, T.float32)
            return b.fptrunc(r, args[0].type)
        llty = args[0].type
        sfx = "f32" if fty.bits == 32 else "f64"
        c = "f" if fty.bits == 32 else ""
        if name in _LLVM_UNARY:
            return b.call(fx.intrinsic(f"llvm.{name}.{sfx}", llty, [llty]), args, fastmath=flags)
        if name in ("pow", "copysign"):
            return b.call(fx.intrinsic(f"llvm.{name}.{sfx}", llty, [llty, llty]), args, fastmath=flags)
        if name == "fma":
            return b.call(fx.intrinsic(f"llvm.fma.{sfx}", llty, [llty] * 3), args, fastmath=flags)
        if name == "fmod":
            return b.frem(args[0], args[1])
        if name == "gamma":
            r = b.call(fx.intrinsic("tgamma" + c, llty, [llty]), args)
            return gamma_at_integers(fx, args[0], r, fty.bits)
        if name == "cbrt":
            return self._cbrt(fx, args[0], fty)
        if name in _LIBM_UNARY:
            return b.call(fx.intrinsic(name + c, llty, [llty]), args)
        if name == "remainder":
            r = b.call(fx.intrinsic(name + c, llty, [llty, llty]), args)
            # a zero remainder has x's sign (IEEE, Python); glibc answers -0.0 for
            # remainder(2.6e-284, 5e-324) -- a subnormal divisor
            signed = b.call(fx.intrinsic(f"llvm.copysign.{sfx}", llty, [llty, llty]), [r, args[0]])
            return b.select(b.fcmp_ordered("==", r, L.Constant(llty, 0.0)), signed, r)
        if name in ("atan2", "hypot", "nextafter"):
            return b.call(fx.intrinsic(name + c, llty, [llty, llty]), args)
        raise CompileError(f"internal error: math function {name} not implemented on cpu", fx.loc)

    def _cbrt(self, fx, x, fty):
        """cbrt within an ulp, as CUDA's and ocml's: glibc's cbrt is up to 4 ulps off (2 ulps at
        1.45e188), so its result takes one Newton step whose residual y**3 - x is computed
        exactly (FMA error terms). Far from 1 the argument is scaled by 2**(3k) (exact) so that
        the error terms neither underflow nor overflow. float32 goes through this in double."""
        b = fx.builder
        f64 = L.DoubleType()
        if fty.bits == 32:
            return b.fptrunc(self._cbrt(fx, b.fpext(x, f64), T.float64), x.type)

        def c(v):
            return L.Constant(f64, v)

        # not self.math: under fastmath its calls carry "fast", which lets LLVM fold the exact
        # error terms (fma(y, y, -y*y)) to 0
        def fma(p, q, r):
            return b.call(fx.intrinsic("llvm.fma.f64", f64, [f64] * 3), [p, q, r])

        def fabs(v):
            return b.call(fx.intrinsic("llvm.fabs.f64", f64, [f64]), [v])

        ax = fabs(x)
        tiny, huge = b.fcmp_ordered("<", ax, c(2.0 ** -960)), b.fcmp_ordered(">", ax, c(2.0 ** 960))
        s_in = b.select(tiny, c(2.0 ** 600), b.select(huge, c(2.0 ** -600), c(1.0)))
        s_out = b.select(tiny, c(2.0 ** -200), b.select(huge, c(2.0 ** 200), c(1.0)))
        xs = b.fmul(x, s_in)
        y = b.call(fx.intrinsic("cbrt", f64, [f64]), [xs])
        y2 = b.fmul(y, y)
        e2 = fma(y, y, b.fneg(y2))
        y3 = b.fmul(y2, y)
        e3 = fma(y2, y, b.fneg(y3))
        resid = b.fadd(b.fsub(y3, xs), b.fadd(e3, b.fmul(e2, y)))
        step = b.fsub(y, b.fdiv(resid, b.fmul(c(3.0), y2)))
        # 0, inf and NaN (and a step that is not finite) keep the library's exact answer
        ok = b.fcmp_ordered("<", fabs(step), c(math.inf))
        ok = b.and_(ok, b.fcmp_ordered("!=", y, c(0.0)))
        return b.fmul(b.select(ok, step, y), s_out)

    # ---- limits and cancellation
    def max_shared_bytes(self, options) -> int:
        # not the host's limit (there is none): a kernel that runs here should
        # also fit the LDS of the GPUs pykern targets
        return LDS_BYTES

    def max_local_bytes(self, options) -> int:
        # local arrays live on a worker thread's stack (fast path) or in a
        # coroutine frame (x1024 threads per block): 64 KiB is safe for both
        return DEFAULT_MAX_LOCAL_BYTES

    def loop_poll_interval(self) -> int:
        return POLL_INTERVAL

    def loop_poll(self, fx):
        # Ctrl-C sets ctx.cancel (cpu/executor); monotonic: no ordering needed,
        # only eventual visibility, and it compiles to a plain load on x86
        b = fx.builder
        ctx = b.load(_gep(b, self._blk(fx), B_CTX), typ=PTR)
        can = b.load_atomic(_gep(b, ctx, C_CANCEL), "monotonic", 4, typ=I32)
        return b.icmp_unsigned("!=", can, L.Constant(I32, 0))

    # ---- debug
    def record_error(self, fx, kind, message, values):
        b = fx.builder
        t = fx.hidden[0]
        blk = self._blk(fx)
        ctx = b.load(_gep(b, blk, B_CTX), typ=PTR)
        res = b.cmpxchg(_gep(b, ctx, C_ERROR), L.Constant(I32, 0), L.Constant(I32, 1), "seq_cst", "seq_cst")
        won = b.extract_value(res, 1)
        with b.if_then(won):
            b.store(L.Constant(I32, ERROR_KINDS[kind]), _gep(b, ctx, C_KIND))
            b.store(fx.cstring(message), _gep(b, ctx, C_MSG1))
            vals = list(values)
            vals += [b.sext(b.load(_gep(b, t, T_TID + 4 * k), typ=I32), I64) for k in range(3)]
            vals += [b.sext(b.load(_gep(b, blk, B_BID + 4 * k), typ=I32), I64) for k in range(3)]
            for k, v in enumerate(vals[:12]):
                b.store(v, _gep(b, ctx, C_VALS + 8 * k))

    # ---- print(): one snprintf into a stack buffer, then one write(2) call, so that
    # lines from threads running in parallel never interleave mid-line (a write of
    # at most PIPE_BUF bytes to a pipe is atomic; to a file it takes the offset once)
    PRINT_BUFFER = 1024

    def print_line(self, fx, fmt, args):
        b = fx.builder
        mod = fx.module
        i8, i32, i64 = L.IntType(8), L.IntType(32), L.IntType(64)

        def declare(name, fnty):
            f = mod.globals.get(name)
            return f if f is not None else L.Function(mod, fnty, name)

        snprintf = declare("snprintf", L.FunctionType(i32, [PTR, i64, PTR], var_arg=True))
        write = declare("write", L.FunctionType(i64, [i32, PTR, i64]))
        n = self.PRINT_BUFFER
        buf = fx.alloca(L.ArrayType(i8, n), name="print.buf")
        vals = []
        for kind, v in args:
            if kind == "b":
                zero = [L.Constant(i32, 0)] * 2
                v = b.select(v, fx.cstring("True").gep(zero), fx.cstring("False").gep(zero))
            vals.append(v)
        out = b.call(snprintf, [buf, L.Constant(i64, n), fx.cstring(fmt)] + vals)
        out = b.sext(out, i64)
        # a line longer than the buffer is cut, and still ends with its newline
        cut = b.icmp_signed(">=", out, L.Constant(i64, n))
        with b.if_then(cut):
            b.store(L.Constant(i8, 10), b.gep(buf, [L.Constant(i64, 0), L.Constant(i64, n - 2)]))
        size = b.select(cut, L.Constant(i64, n - 1), out)
        size = b.select(b.icmp_signed("<", size, L.Constant(i64, 0)), L.Constant(i64, 0), size)
        b.call(write, [L.Constant(i32, 1), buf, size])

    # ---- output
    def finalize(self, lowered: LoweredKernel) -> KernelArtifact:
        info = lowered.info
        opts = lowered.options
        mod = lowered.llmodule
        base = _sanitize(info.kernel_name)
        coroutine = self._coroutine(info)
        regions = self._regions(info) is not None
        self._build_entry(mod, lowered, base, coroutine, regions)
        text = str(mod)
        # a loop-free fast-path kernel runs first-tier code at once while O3's is built on a
        # thread (``cpu/tiers``; the compiler asks for it with ``tiered=True``)
        quick = bool(self.opts.get("tiered")) and not coroutine and not regions and _tier_eligible(
            lowered, text, f"{base}.block")
        sites = [s.describe() for s in info.sync_sites]
        # the sites' messages (file:line of each barrier and wave op) live in the runner, not in
        # ``text``: one kernel text at two places must not share a symbol, whose loaded code
        # (``cpu/executor._loaded``) would report the other place's lines
        links = lowered.source.links if lowered.source is not None else ()
        digest = hashlib.sha1((text + repr(sites) + repr(opts) + cpu_identity()
                               + repr(external.links_digest(links))).encode()).hexdigest()[:16]
        symbol = f"pykern_cpu_{base}_{digest}"
        static = (info.static_shared_bytes + 15) // 16 * 16
        # the runner's per-worker frame area holds the region path's per-thread slots
        fcap = info.target_facts.get("thread_slot_bytes", 0) if regions else None
        grid_sites = [s.kind == "grid_sync" for s in info.sync_sites]
        from pykern.codegen import abi_map as abi

        tmpl = _runner_ir(symbol, base, static, coroutine, opts.wave_size, sites, info.uses_wave_ops, grid_sites,
                          fcap, info.target_facts.get("array_align", 16), abi.kernarg_size(lowered.params))
        if opts.sanitize:
            from pykern.codegen.cpu.sanitizer_ir import checker_ir

            tmpl += checker_ir(_NAMES)
        build = functools.partial(_machine_code, text, tmpl, symbol, info.kernel_name,
                                  externals=self.external_code(lowered))
        optimized, obj = build("quick" if quick else opts.opt)

        art = KernelArtifact(
            target="cpu",
            arch=None,
            name=symbol,
            params=list(lowered.params),
            kernarg_size=abi.kernarg_size(lowered.params),
            llvm_ir=optimized,
            binary=bytes(obj),
            asm=None,
            metadata={},
            uses_barrier=info.uses_barrier,
            uses_wave_ops=info.uses_wave_ops,
            dynamic_shared=info.uses_dynamic_shared,
            static_shared_bytes=info.static_shared_bytes,
            wave_size=opts.wave_size,
            max_block_size=min(1024, opts.max_block_size or 1024),
            execution="coroutine" if coroutine else "regions" if regions else "fast",
            host_cpu=cpu_identity(),
            cooperative=any(grid_sites),
            exceptions=list(info.exceptions),
            sanitize=opts.sanitize,
            sanitizer_sites={"access": list(info.access_sites), "sync": sites,
                             "shared": dict(info.target_facts.get("shared_layout", {})),
                             "fences": bool(info.target_facts.get("sanitize_fences")),
                             **_elision_sites(lowered)} if opts.sanitize else {},
        )
        if quick:
            from pykern.codegen.cpu.tiers import first_tier

            return first_tier(art, functools.partial(build, opts.opt))
        return art

    def _load_params(self, b, args, params, ptypes):
        vals = []
        for p, ty in zip(params, ptypes):
            vals.append(b.load(_gep(b, args, p.offset), typ=ty, align=min(p.size, 8)))
        return vals

    def _build_entry(self, mod, lowered, base, coroutine, regions=False):
        """``{base}.block(B, args)`` (fast and region paths) or ``{base}.start(T, args)``."""
        kfn = lowered.kernel_function
        ptypes = [a.type for a in kfn.args[:-1]]
        if coroutine:
            # external until linked with the scheduler text, internalised in finalize
            f = L.Function(mod, L.FunctionType(L.VoidType(), [PTR, PTR]), f"{base}.start")
            tstate, args = f.args
            b = L.IRBuilder(f.append_basic_block("entry"))
            vals = self._load_params(b, args, lowered.params, ptypes)
            blk = b.load(_gep(b, tstate, T_BLK), typ=PTR)
            h = b.call(kfn, vals + [tstate, b.load(_gep(b, blk, B_SHARED), typ=PTR)])
            b.store(h, _gep(b, tstate, T_HANDLE))
            b.ret_void()
            return
        f = L.Function(mod, L.FunctionType(L.VoidType(), [PTR, PTR]), f"{base}.block")
        if not regions:
            # Inlined by the always-inliner at the start of the pipeline, so that LLVM simplifies
            # the thread loops once, inside the runner. Otherwise the inliner simplifies this
            # function, inlines it into the runner (its only caller) and simplifies it all
            # again: saxpy's O3 took ~1.5x as long for the same machine code. Not on the region
            # path: there the first simplification shapes the loops (a tree reduction ran 2x
            # slower when inlined first).
            f.attributes.add("alwaysinline")
        blk, args = f.args
        if regions:
            for a in f.args:
                # the block state and the argument buffer are only read here and reachable through
                # no kernel pointer: LLVM may keep their values in registers across kernel stores
                a.add_attribute("noalias")
        # (inlined into the runner, whose argument buffer is ``noalias`` and block state an alloca,
        # the same facts hold without the per-call alias scopes that ``noalias`` here would leave
        # in the block loop: loads under a scope declared in the loop are never hoisted out of it)
        entry = f.append_basic_block("entry")
        b = L.IRBuilder(entry)
        vals = self._load_params(b, args, lowered.params, ptypes)
        tstate = b.alloca(L.ArrayType(I8, T_SIZE), name="tstate")
        tstate.align = 16
        tstate.type = PTR  # byte-addressed: use it as an opaque pointer
        b.store(blk, _gep(b, tstate, T_BLK))
        vals.append(tstate)
        vals.append(b.load(_gep(b, blk, B_SHARED), typ=PTR))
        if regions:
            # the kernel body loops over the block's threads itself (cpu_regions). The block
            # shape the kernel most likely runs with gets its own inlined copy that reads the
            # block state from a stack copy holding that shape: LLVM forwards the stores, so
            # blockDim is a constant there (an if/else of two identical calls would be merged)
            guess = self._regions(lowered.info).block_guess
            if guess:
                blk2, t2 = (b.alloca(L.ArrayType(I8, n), name=nm) for n, nm in ((B_SIZE, "blk.known"),
                                                                               (T_SIZE, "tstate.known")))
                for a in (blk2, t2):
                    a.align = 16
                    a.type = PTR
                same = [b.icmp_unsigned("==", b.load(_gep(b, blk, B_BDIM + 4 * k), typ=I32), L.Constant(I32, v))
                        for k, v in enumerate(guess)]
                with b.if_else(b.and_(b.and_(same[0], same[1]), same[2])) as (known, other):
                    with known:
                        b.call(_memcpy(mod), [blk2, blk, L.Constant(I64, B_SIZE), L.Constant(I1, 0)])
                        for k, v in enumerate(guess):
                            b.store(L.Constant(I32, v), _gep(b, blk2, B_BDIM + 4 * k))
                        b.store(L.Constant(I32, guess[0] * guess[1] * guess[2]), _gep(b, blk2, B_NTHREADS))
                        b.store(blk2, _gep(b, t2, T_BLK))
                        b.call(kfn, vals[:-2] + [t2, vals[-1]])
                    with other:
                        b.call(kfn, vals)
            else:
                b.call(kfn, vals)
            b.ret_void()
            return
        dims = [b.load(_gep(b, blk, B_BDIM + 4 * k), typ=I32) for k in range(3)]
        ctx = b.load(_gep(b, blk, B_CTX), typ=PTR)
        debug = lowered.options.debug
        exit_bb = f.append_basic_block("exit")

        # for z: for y: for x: (x innermost so that LLVM can vectorise it)
        split = lowered.info.target_facts.get("split") is not None

        def call_kernel(mode):
            args = vals if mode is None else vals[:-2] + [L.Constant(I32, mode)] + vals[-2:]
            b.call(kfn, args)

        def loop(level, outer_lin, lo=None, hi=None, mode=None):
            k = 2 - level
            head = f.append_basic_block(f"l{k}.head")
            body = f.append_basic_block(f"l{k}.body")
            done = f.append_basic_block(f"l{k}.done")
            pre = b.block
            b.branch(head)
            b.position_at_end(head)
            i = b.phi(I32, name=f"t{k}")
            i.add_incoming(L.Constant(I32, 0) if lo is None else lo, pre)
            b.cbranch(b.icmp_signed("<", i, dims[k] if hi is None else hi), body, done)
            b.position_at_end(body)
            b.store(i, _gep(b, tstate, T_TID + 4 * k))
            lin = b.add(b.mul(outer_lin, dims[k]), i)
            if k == 0:
                b.store(lin, _gep(b, tstate, T_LIN))
                call_kernel(mode)
                if debug:
                    err = b.load_atomic(_gep(b, ctx, C_ERROR), "monotonic", 4, typ=I32)
                    cont = f.append_basic_block("cont")
                    b.cbranch(b.icmp_signed("!=", err, L.Constant(I32, 0)), exit_bb, cont)
                    b.position_at_end(cont)
            elif k == 1 and split:
                split_row(lin)
            else:
                loop(level + 1, lin)
            nxt = b.add(i, L.Constant(I32, 1), flags=("nuw", "nsw"))
            i.add_incoming(nxt, b.block)
            br = b.branch(head)
            if k == 0:  # vectorise the thread loop, but no unrolled scalar remainder
                br.set_metadata("llvm.loop", llvm_util.no_runtime_unroll(mod))
            b.position_at_end(done)

        def split_row(outer_lin):
            """The x loop of one row as two (``thread_split``): the kernel, asked as thread x = 0,
            counts the row's threads in range; those run with the guard known true, the others
            with it known false."""
            from pykern.codegen.cpu.thread_split import COUNT, IN_RANGE, OUT_OF_RANGE

            b.store(L.Constant(I32, 0), _gep(b, tstate, T_TID))
            b.store(b.mul(outer_lin, dims[0]), _gep(b, tstate, T_LIN))
            call_kernel(COUNT)
            count = b.load(_gep(b, tstate, T_SPLIT), typ=I64)
            bx = b.zext(dims[0], I64)
            cut = b.trunc(b.select(b.icmp_unsigned("<", count, bx), count, bx), I32)
            loop(2, outer_lin, hi=cut, mode=IN_RANGE)
            loop(2, outer_lin, lo=cut, mode=OUT_OF_RANGE)

        loop(0, L.Constant(I32, 0))
        b.branch(exit_bb)
        b.position_at_end(exit_bb)
        b.ret_void()


def _machine_code(text: str, tmpl: str, symbol: str, kname: str, level, checkpoint=None, externals=None) -> tuple:
    """(optimised IR text, object code) of a kernel module ``text`` linked with its runner
    ``tmpl``, only ``symbol`` exported; ``level`` an O-level or ``"quick"`` (the first tier).

    No shared library here: the compiling process has LLVM loaded and runs the object through
    MCJIT (~1 ms), where running a linker costs 5-10 ms and a process start. A copy stored in
    the disk cache gets one (``with_shared_object``), so that other processes load it without
    LLVM. MCJIT would jump to address 0 for a missing symbol: refuse it now. ``checkpoint()``,
    called between the stages, may raise to end a build whose result is no longer wanted."""
    with llvm_util.LLVM_LOCK:
        # a context per kernel: the global one would grow with every kernel
        # compiled (a notebook redefines kernels all day)
        with llvm_util.own_context() as llctx:
            llmod = llvm_util.parse_and_verify(text, kname, llctx)
            if externals is not None:  # before optimising: the calls of it inline
                from pykern.codegen import external_build as extcode

                items, symbols, store = externals
                extcode.link(llmod, items, symbols, tm=host_target_machine(), target="cpu", store=store,
                             context=llctx)
            extra = llvm_util.parse_and_verify(tmpl, "cpu scheduler", llctx)
            extra.triple = llmod.triple
            extra.data_layout = llmod.data_layout
            llmod.link_in(extra)
            # only the runner symbol is exported (its name is unique per kernel build)
            for f in llmod.functions:
                if not f.is_declaration and f.name != symbol:
                    f.linkage = "internal"
            try:
                llmod.verify()
            except RuntimeError as e:
                raise CompileError(f"internal error: LLVM rejected the cpu module: {e}") from None
            if checkpoint is not None:
                checkpoint()
            if level == "quick":
                tm = quick_target_machine()
                llvm_util.optimize_quick(llmod, tm)
            else:
                tm = host_target_machine()
                llvm_util.optimize(llmod, tm, level)
            if checkpoint is not None:
                checkpoint()
            optimized = str(llmod)
            obj = bytes(tm.emit_object(llmod))
    _check_symbols(obj, kname)
    return optimized, obj


def _tier_eligible(lowered, text: str, thread_loops: str) -> bool:
    from pykern.codegen.cpu.tiers import eligible  # imported only when the compiler asks for tiers

    return eligible(lowered, text, thread_loops)


def _memcpy(mod):
    name = "llvm.memcpy.p0.p0.i64"
    f = mod.globals.get(name)
    return f if f is not None else L.Function(mod, L.FunctionType(L.VoidType(), [PTR, PTR, I64, I1]), name)


def assembly_of(artifact: KernelArtifact) -> str:
    """Host assembly of a cpu artifact, made on demand from its optimised IR
    (not stored at compile time: most users never look at it).

    Example: ``print(assembly_of(get_target("cpu").compile(mod)))``"""
    if artifact.asm is not None:
        return artifact.asm
    asm = _asm_made.get(artifact.name)  # the name is unique per build (it holds a digest of the IR)
    if asm is None:
        text = artifact.llvm_ir  # not under the lock: a first-tier artifact's waits for its O3 build
        with llvm_util.LLVM_LOCK, llvm_util.own_context() as llctx:
            mod = llvm_util.parse_and_verify(text, artifact.name, llctx)
            if len(_asm_made) > 256:
                _asm_made.clear()
            asm = _asm_made[artifact.name] = host_target_machine().emit_assembly(mod)
    return asm


_asm_made: dict = {}  # artifact name -> assembly made by assembly_of (artifacts are immutable)


def with_shared_object(artifact: KernelArtifact) -> KernelArtifact:
    """``artifact`` with its object linked into a shared library (``shared_object``), the form
    stored in the disk cache: another process ``dlopen``s it without loading LLVM. Unchanged when
    it has one already, is not a cpu artifact, or no host linker exists (then MCJIT loads it).

    Example: ``with_shared_object(get_target("cpu").compile(mod)).shared_object[:4] == b"\\x7fELF"``"""
    if artifact.target != "cpu" or artifact.shared_object:
        return artifact
    import dataclasses

    from pykern.codegen.amdgpu import toolchain

    so = toolchain.link_host_shared(artifact.binary)
    return dataclasses.replace(artifact, shared_object=so) if so else artifact


def _check_symbols(obj: bytes, kname: str) -> None:
    """Every undefined symbol of the object must exist in this process (MCJIT
    would otherwise jump to address 0); e.g. a compiler-rt helper."""
    import ctypes

    proc = ctypes.CDLL(None)
    missing = [name for name in _undefined_symbols(obj)
               if name != "_GLOBAL_OFFSET_TABLE_" and not hasattr(proc, name)]
    if missing:
        raise CompileError(
            f"internal error: cpu code of kernel '{kname}' needs functions this process "
            f"does not provide: {', '.join(sorted(missing))}"
        )


def _undefined_symbols(obj: bytes) -> list:
    """Names of the undefined symbols in an ELF64 relocatable object's ``.symtab``
    (read with ``struct``: pyelftools takes ~40 ms to import, a third of a first compile)."""
    import struct

    if obj[:4] != b"\x7fELF" or obj[4] != 2:  # not ELF64: the general reader
        import io

        from elftools.elf.elffile import ELFFile

        symtab = ELFFile(io.BytesIO(obj)).get_section_by_name(".symtab")
        return [s.name for s in (symtab.iter_symbols() if symtab else ()) if s["st_shndx"] == "SHN_UNDEF" and s.name]
    end = "<" if obj[5] == 1 else ">"
    shoff, = struct.unpack_from(end + "Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from(end + "HH", obj, 0x3A)
    sections = [struct.unpack_from(end + "IIQQQQIIQQ", obj, shoff + i * shentsize) for i in range(shnum)]
    names = []
    for _name, sh_type, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if sh_type != 2 or not entsize:  # SHT_SYMTAB
            continue
        stroff = sections[link][4]
        for pos in range(offset + entsize, offset + size, entsize):  # entry 0 is the null symbol
            st_name, _st_info, _st_other, st_shndx = struct.unpack_from(end + "IBBH", obj, pos)
            if st_shndx == 0 and st_name:  # SHN_UNDEF
                names.append(obj[stroff + st_name:obj.index(b"\0", stroff + st_name)].decode())
    return names


class _TokenType(L.Type):
    """LLVM's ``token`` type (llvmlite 0.50 has none; coroutine intrinsics need it)."""

    def _to_string(self):
        return "token"

    def __eq__(self, other):
        return isinstance(other, _TokenType)

    def __hash__(self):
        return hash(_TokenType)


_TOKEN = _TokenType()


class _NoneToken(L.Constant):
    def __init__(self):
        super().__init__(_TOKEN, None)

    def _to_string(self):
        return "none"

    def get_reference(self):
        return "none"


def _none_token():
    return _NoneToken()


def _sanitize(name: str) -> str:
    return "".join(c if (c.isalnum() or c == "_") else "_" for c in name)


def _cstr_global(name, text):
    data = text.encode("utf-8") + b"\0"
    esc = "".join(chr(c) if 32 <= c < 127 and chr(c) not in '"\\' else f"\\{c:02X}" for c in data)
    return f'@{name} = private unnamed_addr constant [{len(data)} x i8] c"{esc}"\n'


# ---- the runner and the coroutine scheduler, as LLVM IR text
# Every byte offset and size in the text below is one of the named constants at the top of
# this module ($T_STATUS, $B_BDIM_Y, $C_VALS3, ...: see _names); the snippets that the
# scheduler repeats (loop heads, a thread's state fields, error records) are made by the small
# functions that follow, so each is written once.


def _elision_sites(lowered) -> dict:
    """What a sanitized launch needs to decide which array parameters go unchecked
    (``runtime/cpu/sanitizer.py``, ``elision``): ``elide`` (name -> (mask bit, kind, grid
    axes)), ``itemsize`` of every array argument (by its flat name), ``globals`` (address, shape,
    strides, itemsize) of the device arrays the code names."""
    from pykern.codegen.lowering.llvm_types import _sizeof

    facts = lowered.info.target_facts
    return {"elide": dict(facts.get("sanitize_elide", {})), "globals": list(facts.get("sanitize_globals", [])),
            "itemsize": {p.name.rsplit(".", 1)[0]: _sizeof(p.type.dtype) for p in lowered.params if p.role == "data"}}


def _names() -> dict:
    """The constants the IR text refers to by name: struct offsets (``$B_BDIM_Y`` is blockDim.y
    in the block state), sizes, thread statuses and error kinds."""
    d = dict(T_TID=T_TID, T_LIN=T_LIN, T_BLK=T_BLK, T_STATUS=T_STATUS, T_SITE=T_SITE, T_WVAL=T_WVAL,
             T_WSRC=T_WSRC, T_WPRED=T_WPRED, T_WRES=T_WRES, T_WBALLOT=T_WBALLOT, T_WACTIVE=T_WACTIVE,
             T_HANDLE=T_HANDLE, T_FRAME=T_FRAME, T_SIZE=T_SIZE, C_SAN=C_SAN, T_SAN_LO=T_SAN_LO,
             T_SAN_BLO=T_SAN_BLO, T_SAN_BHI=T_SAN_BHI, T_SAN_TS=T_SAN_TS, T_SAN_SKIP=T_SAN_SKIP,
             T_SAN_CTX=T_SAN_CTX, T_SAN_BIAS=T_SAN_BIAS, T_SAN_BSITE=T_SAN_BSITE,
             B_BID=B_BID, B_BDIM=B_BDIM, B_GDIM=B_GDIM, B_NTHREADS=B_NTHREADS, B_SHARED=B_SHARED,
             B_DYNSHARED=B_DYNSHARED, B_CTX=B_CTX, B_THREADS=B_THREADS, B_BARRES=B_BARRES, B_FRAMES=B_FRAMES,
             B_SIZE=B_SIZE, C_GRID=C_GRID, C_BLOCK=C_BLOCK, C_DYN=C_DYN, C_ERROR=C_ERROR, C_CANCEL=C_CANCEL,
             C_KIND=C_KIND, C_MSG1=C_MSG1, C_MSG2=C_MSG2, C_VALS=C_VALS,
             C_GBAR_ARRIVED=C_GBAR, C_GBAR_GEN=C_GBAR + 4, C_GBAR_EXITED=C_GBAR + 8, C_GBAR_BLOCKS=C_GBAR + 12,
             RUNNABLE=RUNNABLE, AT_BARRIER=AT_BARRIER, AT_WAVE=AT_WAVE, DONE=DONE,
             ERR_BARRIER=ERR_BARRIER, ERR_GRIDSYNC=ERR_GRIDSYNC, LDS=LDS_BYTES)
    for name in ("T_TID", "B_BID", "B_BDIM", "B_GDIM", "C_GRID", "C_BLOCK"):
        for k, axis in enumerate("XYZ"):
            d[f"{name}_{axis}"] = d[name] + 4 * k
    for k in range(12):
        d[f"C_VALS{k}"] = C_VALS + 8 * k
    return d


def _field(tag, base, off):
    """(lines, pointer) of the field at byte ``off`` (a ``$``-name of _names) of ``%base``."""
    if _NAMES[off[1:]] == 0:
        return "", f"%{base}"
    return f"  %{tag}.p = getelementptr i8, ptr %{base}, i64 {off}\n", f"%{tag}.p"


_NAMES = _names()


def _load(name, base, off, ty="i32", md=""):
    gep, ptr = _field(name, base, off)
    return f"{gep}  %{name} = load {ty}, ptr {ptr}{md}\n"


def _store(tag, base, off, value, ty="i32"):
    gep, ptr = _field(tag, base, off)
    return f"{gep}  store {ty} {value}, ptr {ptr}\n"


def _loop_head(label, var, incoming, bound, body, done, carried=""):
    """``label``: the head of a loop over ``%var`` (i32, from the (value, block) pairs
    ``incoming``) while it is below ``bound``; ``carried`` adds more phis."""
    phi = ", ".join(f"[ {v}, %{blk} ]" for v, blk in incoming)
    return (f"{label}:\n  %{var} = phi i32 {phi}\n{carried}"
            f"  %{var}.more = icmp slt i32 %{var}, {bound}\n"
            f"  br i1 %{var}.more, label %{body}, label %{done}\n")


def _thread(p, index, *fields):
    """``%{p}t``: thread ``index``'s state; ``%{p}{field}``: its i32 fields (name, offset)."""
    out = f"  %{p}t = call ptr @$BASE.tptr(ptr %thr, i32 {index})\n"
    for name, off in fields:
        out += f"  %{p}{name} = call i32 @$BASE.ld32(ptr %{p}t, i64 {off})\n"
    return out


def _find_status(p, incoming, bound, done, status, hit, miss):
    """``{p}.loop``: for thread ``%{p}i`` from ``incoming`` while below ``bound``: to ``hit``
    when its status is ``status`` (with ``%{p}t`` its state), else to ``miss`` (which goes on
    with ``%{p}i1``); ``done`` after the last thread."""
    return (_loop_head(f"{p}.loop", f"{p}i", incoming, bound, f"{p}.body", done) + f"{p}.body:\n"
            + _thread(p, f"%{p}i", ("st", "$T_STATUS"))
            + f"  %{p}is = icmp eq i32 %{p}st, {status}\n  %{p}i1 = add i32 %{p}i, 1\n"
            f"  br i1 %{p}is, label %{hit}, label %{miss}\n")


def _at_wave_site(p):
    """``%{p}p``: thread ``%{p}t`` waits at the wave op of ``%site``."""
    return (_thread(p, f"%{p}i", ("st", "$T_STATUS"), ("site", "$T_SITE"))
            + f"  %{p}w = icmp eq i32 %{p}st, $AT_WAVE\n  %{p}s = icmp eq i32 %{p}site, %site\n"
            f"  %{p}p = and i1 %{p}w, %{p}s\n")


def _record(kind, values, ext="sext"):
    """Store the error ``kind`` and ``values`` (i32, widened by ``ext``) in the launch context."""
    out = _store("rk", "ctx", "$C_KIND", kind)
    for k, v in enumerate(values):
        out += f"  %rv{k} = {ext} i32 {v} to i64\n" + _store(f"rv{k}", "ctx", f"$C_VALS{k}", f"%rv{k}", "i64")
    return out


def _stop_flags(label, stop, go):
    """``label``: to ``stop`` when the launch has an error or was cancelled, else to ``go``."""
    return (f"{label}:\n  %{label}.err = load atomic i32, ptr %perr monotonic, align 4\n"
            f"  %{label}.can = load atomic i32, ptr %pcan monotonic, align 4\n"
            f"  %{label}.any = or i32 %{label}.err, %{label}.can\n"
            f"  %{label}.stop = icmp ne i32 %{label}.any, 0\n"
            f"  br i1 %{label}.stop, label %{stop}, label %{go}\n")


def _ctx_flags():
    """``%perr``, ``%pcan``: the launch's error and cancel flags."""
    return ("  %perr = getelementptr i8, ptr %ctx, i64 $C_ERROR\n"
            "  %pcan = getelementptr i8, ptr %ctx, i64 $C_CANCEL\n")


_RUNNER = string.Template(r"""
declare ptr @malloc(i64)
declare ptr @aligned_alloc(i64, i64)
declare ptr @calloc(i64, i64)
declare void @free(ptr)
declare void @$BLOCKFN(ptr, ptr)

define void @$SYMBOL(ptr noalias dereferenceable($ARGBYTES) %args0, ptr %ctx, i64 %first, i64 %last) {
entry:
  ; the blocks read the arguments from a copy on the stack, which nothing else can write: SROA turns
  ; it into values loaded once, before the block loop (the loop's atomic flag loads would otherwise
  ; keep LLVM from hoisting the argument loads and all that is computed from them out of it)
  %args = alloca [$ARGBYTES x i8], align 16
  call void @llvm.memcpy.p0.p0.i64(ptr align 16 %args, ptr align 8 %args0, i64 $ARGBYTES, i1 false)
""" + "".join(_load(n, "ctx", f"$C_GRID_{a}", md=", !range !0") for n, a in (("gx", "X"), ("gy", "Y"), ("gz", "Z")))
    + "".join(_load(n, "ctx", f"$C_BLOCK_{a}", md=", !range !1") for n, a in (("bx", "X"), ("by", "Y"), ("bz", "Z")))
    + _load("dyn", "ctx", "$C_DYN", "i64") + r"""
  %nxy = mul i32 %bx, %by
  %nt = mul i32 %nxy, %bz
  %B = alloca [$B_SIZE x i8], align 16
  call void @llvm.memset.p0.i64(ptr %B, i8 0, i64 $B_SIZE, i1 false)
""" + "".join(_store(f"f{v}", "B", f"${f}_{a}", f"%{v}") for f, vs in (("B_BDIM", "bx by bz"), ("B_GDIM", "gx gy gz"))
              for v, a in zip(vs.split(), "XYZ"))
    + _store("fnt", "B", "$B_NTHREADS", "%nt") + r"""
  %shsize0 = add i64 %dyn, $STATIC
  %shsmall = icmp ult i64 %shsize0, $LDS
  %shsize1 = select i1 %shsmall, i64 $LDS, i64 %shsize0
  %shsize2 = add i64 %shsize1, $ALIGN
  %shsize = and i64 %shsize2, -$ALIGN
  %shm = call ptr @aligned_alloc(i64 $ALIGN, i64 %shsize)  ; alignment= of shared arrays holds for their addresses
""" + _store("fsh", "B", "$B_SHARED", "%shm", "ptr") + r"""
  %dynp = getelementptr i8, ptr %shm, i64 $STATIC
""" + _store("fdyn", "B", "$B_DYNSHARED", "%dynp", "ptr") + _store("fctx", "B", "$B_CTX", "%ctx", "ptr") + r"""
  %nt64 = zext i32 %nt to i64
  %tbytes0 = mul i64 %nt64, $TSIZE
  %tbytes = add i64 %tbytes0, 16
  %thr = call ptr @calloc(i64 %tbytes, i64 1)  ; zeroed: a shuffle from a lane that never wrote reads 0
""" + _store("fthr", "B", "$B_THREADS", "%thr", "ptr") + r"""
  %fbytes0 = mul i64 %nt64, $FCAP
  %fbytes1 = add i64 %fbytes0, $ALIGN
  %fbytes = and i64 %fbytes1, -$ALIGN
  %frames = call ptr @aligned_alloc(i64 $ALIGN, i64 %fbytes)
""" + _store("ffr", "B", "$B_FRAMES", "%frames", "ptr") + r"""
  %gx64 = zext i32 %gx to i64
  %gy64 = zext i32 %gy to i64
  %gxy64 = mul i64 %gx64, %gy64
  ; the first block's index; the loop counts on from it without dividing
  %bidx0.64 = urem i64 %first, %gx64
  %q0 = udiv i64 %first, %gx64
  %bidy0.64 = urem i64 %q0, %gy64
  %bidz0.64 = udiv i64 %first, %gxy64
  %bidx0 = trunc i64 %bidx0.64 to i32
  %bidy0 = trunc i64 %bidy0.64 to i32
  %bidz0 = trunc i64 %bidz0.64 to i32
""" + _ctx_flags() + r"""
  br label %loop
loop:
  %b = phi i64 [ %first, %entry ], [ %b1, %body ]
  %bidx = phi i32 [ %bidx0, %entry ], [ %bidx2, %body ]
  %bidy = phi i32 [ %bidy0, %entry ], [ %bidy2, %body ]
  %bidz = phi i32 [ %bidz0, %entry ], [ %bidz2, %body ]
  %more = icmp slt i64 %b, %last
  br i1 %more, label %check, label %exit
""" + _stop_flags("check", "exit", "body") + r"""
body:
  ; counted, not divided: tell LLVM what it knew of a remainder (no negative-index code)
  %bidx.lt = icmp ult i32 %bidx, %gx
  call void @llvm.assume(i1 %bidx.lt)
  %bidy.lt = icmp ult i32 %bidy, %gy
  call void @llvm.assume(i1 %bidy.lt)
  %bidz.lt = icmp ult i32 %bidz, %gz
  call void @llvm.assume(i1 %bidz.lt)
""" + "".join(_store(f"fbid{a}", "B", f"$B_BID_{a.upper()}", f"%bid{a}") for a in "xyz") + r"""
  call void @$BLOCKFN(ptr %B, ptr %args)
  %b1 = add i64 %b, 1
  %bidx1 = add nuw i32 %bidx, 1
  %wrapx = icmp eq i32 %bidx1, %gx
  %bidx2 = select i1 %wrapx, i32 0, i32 %bidx1
  %carryy = zext i1 %wrapx to i32
  %bidy1 = add nuw i32 %bidy, %carryy
  %wrapy = icmp eq i32 %bidy1, %gy
  %bidy2 = select i1 %wrapy, i32 0, i32 %bidy1
  %carryz = zext i1 %wrapy to i32
  %bidz2 = add nuw i32 %bidz, %carryz
  br label %loop
exit:
  call void @free(ptr %shm)
  call void @free(ptr %thr)
  call void @free(ptr %frames)
  ret void
}

declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.assume(i1)

; grid dims are in [1, 2**31), block dims in [1, 1024] (checked by the launcher):
; lets LLVM prove thread/block indices non-negative (no negative-index wrap code)
!0 = !{i32 1, i32 2147483647}
!1 = !{i32 1, i32 1025}
""")

# The block scheduler of the coroutine path. Thread i's state is at
# threads + i*T_SIZE. See the module docstring for the algorithm.
_SCHED = string.Template(r"""
declare void @$BASE.start(ptr, ptr)
declare void @llvm.coro.resume(ptr)
declare void @llvm.coro.destroy(ptr)

define internal ptr @$BASE.tptr(ptr %thr, i32 %i) alwaysinline {
  %i64 = zext i32 %i to i64
  %off = mul i64 %i64, $T_SIZE
  %p = getelementptr i8, ptr %thr, i64 %off
  ret ptr %p
}
define internal i32 @$BASE.ld32(ptr %t, i64 %off) alwaysinline {
  %p = getelementptr i8, ptr %t, i64 %off
  %v = load i32, ptr %p
  ret i32 %v
}
define internal void @$BASE.st32(ptr %t, i64 %off, i32 %v) alwaysinline {
  %p = getelementptr i8, ptr %t, i64 %off
  store i32 %v, ptr %p
  ret void
}

define internal void @$BASE.sched(ptr %B, ptr %args) {
entry:
""" + _load("thr", "B", "$B_THREADS", "ptr") + _load("n", "B", "$B_NTHREADS")
    + _load("bx", "B", "$B_BDIM_X", md=", !range !1") + _load("by", "B", "$B_BDIM_Y", md=", !range !1") + r"""
  %bxy = mul i32 %bx, %by
""" + _load("ctx", "B", "$B_CTX", "ptr") + _ctx_flags() + _load("frames", "B", "$B_FRAMES", "ptr") + r"""
  br label %init
""" + _loop_head("init", "i", [("0", "entry"), ("%i1", "init.body")], "%n", "init.body", "sweep", carried="".join(
    f"  %t{a} = phi i32 [ 0, %entry ], [ %t{a}2, %init.body ]\n" for a in "xyz")) + r"""
init.body:
""" + _thread("i", "%i") + r"""
  ; (tx, ty, tz) of linear id i, counted without divisions
  %tx1 = add i32 %tx, 1
  %xw = icmp eq i32 %tx1, %bx
  %tx2 = select i1 %xw, i32 0, i32 %tx1
  %ty1 = add i32 %ty, 1
  %ty1s = select i1 %xw, i32 %ty1, i32 %ty
  %yw = icmp eq i32 %ty1s, %by
  %ty2 = select i1 %yw, i32 0, i32 %ty1s
  %tz1 = add i32 %tz, 1
  %tz2 = select i1 %yw, i32 %tz1, i32 %tz
""" + "".join(f"  call void @$BASE.st32(ptr %it, i64 {off}, i32 {v})\n" for off, v in (
    ("$T_TID_X", "%tx"), ("$T_TID_Y", "%ty"), ("$T_TID_Z", "%tz"), ("$T_LIN", "%i"), ("$T_STATUS", "$RUNNABLE"),
    ("$T_SITE", "-1"))) + _store("tb", "it", "$T_BLK", "%B", "ptr") + r"""
  %i64f = zext i32 %i to i64
  %foff = mul i64 %i64f, $FCAP
  %fmem = getelementptr i8, ptr %frames, i64 %foff
""" + _store("tf", "it", "$T_FRAME", "%fmem", "ptr") + r"""
  call void @$BASE.start(ptr %it, ptr %args)
  %i1 = add i32 %i, 1
  br label %init

; ---- after every sweep: all threads are suspended or done
""" + _stop_flags("sweep", "destroy", "waves") + r"""
waves:
  br i1 $HASWAVE, label %w.start, label %barrier
w.start:
  br label %w.loop
""" + _loop_head("w.loop", "w0", [("0", "w.start"), ("%w0n", "w.next")], "%n", "w.find", "w.done",
                 carried="  %anyw = phi i1 [ false, %w.start ], [ %anyw2, %w.next ]\n") + r"""
w.find:
  %wend0 = add i32 %w0, $WS
  %wlt = icmp slt i32 %wend0, %n
  %wend = select i1 %wlt, i32 %wend0, i32 %n
  br label %f.loop
""" + _find_status("f", [("%w0", "w.find"), ("%fi1", "f.body")], "%wend", "w.next0", "$AT_WAVE", "w.found",
                  "f.loop") + r"""
w.found:
  %site = call i32 @$BASE.ld32(ptr %ft, i64 $T_SITE)
  br label %m.loop
""" + _loop_head("m.loop", "mi", [("%w0", "w.found"), ("%mi1", "m.body")], "%wend", "m.body", "r.start", carried=(
    "  %ballot = phi i64 [ 0, %w.found ], [ %ballot2, %m.body ]\n"
    "  %active = phi i64 [ 0, %w.found ], [ %active2, %m.body ]\n")) + r"""
m.body:
""" + _at_wave_site("m") + r"""
  %ml = sub i32 %mi, %w0
  %ml64 = zext i32 %ml to i64
  %mbit = shl i64 1, %ml64
  %mpred = call i32 @$BASE.ld32(ptr %mt, i64 $T_WPRED)
  %mpb = icmp ne i32 %mpred, 0
  %mpp = and i1 %mp, %mpb
  %ab = select i1 %mp, i64 %mbit, i64 0
  %bb = select i1 %mpp, i64 %mbit, i64 0
  %active2 = or i64 %active, %ab
  %ballot2 = or i64 %ballot, %bb
  %mi1 = add i32 %mi, 1
  br label %m.loop
r.start:
  br label %r.loop
""" + _loop_head("r.loop", "ri", [("%w0", "r.start"), ("%ri1", "r.cont")], "%wend", "r.body", "w.next1") + r"""
r.body:
""" + _at_wave_site("r") + r"""
  %ri1 = add i32 %ri, 1
  br i1 %rp, label %r.do, label %r.cont
r.do:
  %src = call i32 @$BASE.ld32(ptr %rt, i64 $T_WSRC)
  %sabs = add i32 %w0, %src
  %sok = icmp slt i32 %sabs, %n
  %sidx = select i1 %sok, i32 %sabs, i32 %ri
""" + _thread("src", "%sidx") + _load("sv", "srct", "$T_WVAL", "i64") + _store("res", "rt", "$T_WRES", "%sv", "i64")
    + _store("bal", "rt", "$T_WBALLOT", "%ballot", "i64") + _store("act", "rt", "$T_WACTIVE", "%active", "i64") + r"""
  call void @$BASE.st32(ptr %rt, i64 $T_STATUS, i32 $RUNNABLE)
  br label %r.cont
r.cont:
  br label %r.loop
w.next0:
  br label %w.next
w.next1:
  br label %w.next
w.next:
  %anyw2 = phi i1 [ %anyw, %w.next0 ], [ true, %w.next1 ]
  %w0n = add i32 %w0, $WS
  br label %w.loop
w.done:
  br i1 %anyw, label %resume, label %barrier

; ---- barrier: every thread that has not exited must wait at the same barrier site
barrier:
  br label %b.loop
""" + _loop_head("b.loop", "bi", [("0", "barrier"), ("%bi1", "b.body")], "%n", "b.body", "b.decide", carried="".join(
    f"  %{v} = phi i32 [ {init}, %barrier ], [ %{v}2, %b.body ]\n"
    for v, init in (("ndone", 0), ("nbar", 0), ("site0", -1), ("i0", -1), ("iother", -1), ("idone", -1),
                    ("count", 0)))) + r"""
b.body:
""" + _thread("b", "%bi", ("st", "$T_STATUS"), ("site", "$T_SITE"), ("pred", "$T_WPRED")) + r"""
  %isdone = icmp eq i32 %bst, $DONE
  %isbar = icmp eq i32 %bst, $AT_BARRIER
  %dinc = zext i1 %isdone to i32
  %ndone2 = add i32 %ndone, %dinc
  %binc = zext i1 %isbar to i32
  %nbar2 = add i32 %nbar, %binc
  %first = icmp eq i32 %site0, -1
  %takefirst = and i1 %isbar, %first
  %site02 = select i1 %takefirst, i32 %bsite, i32 %site0
  %i02 = select i1 %takefirst, i32 %bi, i32 %i0
  %differs = icmp ne i32 %bsite, %site02
  %isother0 = and i1 %isbar, %differs
  %noother = icmp eq i32 %iother, -1
  %isother = and i1 %isother0, %noother
  %iother2 = select i1 %isother, i32 %bi, i32 %iother
  %nodone = icmp eq i32 %idone, -1
  %isfd = and i1 %isdone, %nodone
  %idone2 = select i1 %isfd, i32 %bi, i32 %idone
  %pnz = icmp ne i32 %bpred, 0
  %pc = and i1 %pnz, %isbar
  %pci = zext i1 %pc to i32
  %count2 = add i32 %count, %pci
  %bi1 = add i32 %bi, 1
  br label %b.loop
b.decide:
  %alldone = icmp eq i32 %ndone, %n
  br i1 %alldone, label %destroy, label %b.check
b.check:
  ; threads that have exited count as arrived, as on GPUs (an ended wave leaves the barrier count;
  ; numba's own examples return early and then sync the rest of the block or grid)
  %nwait = add i32 %nbar, %ndone
  %allbar = icmp eq i32 %nwait, %n
  %same = icmp eq i32 %iother, -1
  %pass = and i1 %allbar, %same
  br i1 %pass, label %release, label %diverge
release:
""" + _store("pres", "B", "$B_BARRES", "%count") + r"""
  ; cg.this_grid().sync(): the whole block is here; now wait for the other blocks
  %gsp = getelementptr [$NSITES x i8], ptr @$BASE.gridsite, i32 0, i32 %site0
  %gs = load i8, ptr %gsp
  %isgrid = icmp ne i8 %gs, 0
  br i1 %isgrid, label %gridwait, label %l.loop
gridwait:
  %gok = call i32 @$BASE.gridbar(ptr %ctx, i32 %site0)
  %gpass = icmp eq i32 %gok, 0
  br i1 %gpass, label %l.loop, label %destroy
""" + _find_status("l", [("0", "release"), ("0", "gridwait"), ("%li1", "rel.next")], "%n", "sweep",
                  "$AT_BARRIER", "rel.go", "rel.next") + r"""
rel.go:
  ; release and resume in one pass: a resumed thread only touches its own state (threads that
  ; have exited sit at their final suspend and stay there)
  call void @$BASE.st32(ptr %lt, i64 $T_STATUS, i32 $RUNNABLE)
""" + _load("lh", "lt", "$T_HANDLE", "ptr") + r"""
  call void @llvm.coro.resume(ptr %lh)
  br label %rel.next
rel.next:
  br label %l.loop

diverge:
  %won = cmpxchg ptr %perr, i32 0, i32 1 seq_cst seq_cst
  %wonb = extractvalue { i32, i1 } %won, 1
  br i1 %wonb, label %d.record, label %destroy
d.record:
  %s0p = getelementptr [$NSITES x ptr], ptr @$BASE.sites, i32 0, i32 %site0
  %s0 = load ptr, ptr %s0p
""" + _store("pm1", "ctx", "$C_MSG1", "%s0", "ptr") + r"""
  %hasother = icmp ne i32 %iother, -1
  %io = select i1 %hasother, i32 %iother, i32 0
""" + _thread("o", "%io", ("site", "$T_SITE")) + r"""
  %osp = getelementptr [$NSITES x ptr], ptr @$BASE.sites, i32 0, i32 %osite
  %os = load ptr, ptr %osp
  %m2 = select i1 %hasother, ptr %os, ptr null
""" + _store("pm2", "ctx", "$C_MSG2", "%m2", "ptr")
    + "".join(_load(f"bid{a}", "B", f"$B_BID_{a.upper()}") for a in "xyz")
    + _record("$ERR_BARRIER", ["%i0", "%iother", "%idone", "%ndone", "%nbar", "%bidx", "%bidy", "%bidz"]) + r"""
  br label %destroy

; ---- resume every runnable thread once, then look again
resume:
  br label %s.loop
""" + _find_status("s", [("0", "resume"), ("%si1", "s.cont")], "%n", "sweep", "$RUNNABLE", "s.resume",
                  "s.cont") + r"""
s.resume:
""" + _load("h", "st", "$T_HANDLE", "ptr") + r"""
  call void @llvm.coro.resume(ptr %h)
  br label %s.cont
s.cont:
  br label %s.loop

; ---- free every coroutine frame (done ones wait at their final suspend)
destroy:
  br i1 $HASGRID, label %gexit, label %x.loop
gexit:
  ; a block that ends (or fails) can never reach a later grid sync: tell the waiters
""" + _field("pgx", "ctx", "$C_GBAR_EXITED")[0] + r"""
  %gxold = atomicrmw add ptr %pgx.p, i32 1 acq_rel
  br label %x.loop
""" + _loop_head("x.loop", "xi", [("0", "destroy"), ("0", "gexit"), ("%xi1", "x.body")], "%n", "x.body",
                 "x.done") + r"""
x.body:
""" + _thread("x", "%xi") + _load("xh", "xt", "$T_HANDLE", "ptr") + r"""
  call void @llvm.coro.destroy(ptr %xh)
  %xi1 = add i32 %xi, 1
  br label %x.loop
x.done:
  ret void
}
""")


# The grid barrier of cooperative launches (blocks run on their own OS
# threads then, see cpu/executor): the last block to arrive opens the
# generation; the others yield until it moves. A block that ended while others
# wait (arrived + exited == blocks) can never come: that is reported as an
# error naming the sync's line instead of waiting forever. Ctrl-C and errors
# of other blocks also end the wait.
_GRIDBAR = string.Template(r"""
declare i32 @sched_yield()

define internal i32 @$BASE.gridbar(ptr %ctx, i32 %site) {
entry:
""" + "".join(_field(p, "ctx", f"$C_GBAR_{f}")[0] for p, f in (("pa", "ARRIVED"), ("pg", "GEN"), ("px", "EXITED"),
                                                              ("pn", "BLOCKS")))
    + _ctx_flags() + r"""
  %n = load i32, ptr %pn.p
  %gen = load atomic i32, ptr %pg.p acquire, align 4
  %old = atomicrmw add ptr %pa.p, i32 1 acq_rel
  %now = add i32 %old, 1
  %last = icmp eq i32 %now, %n
  br i1 %last, label %open, label %wait
open:
  store atomic i32 0, ptr %pa.p release, align 4
  %g1 = atomicrmw add ptr %pg.p, i32 1 acq_rel
  ret i32 0
wait:
  %g = load atomic i32, ptr %pg.p acquire, align 4
  %moved = icmp ne i32 %g, %gen
  br i1 %moved, label %passed, label %check
passed:
  ret i32 0
""" + _stop_flags("check", "fail", "dead") + r"""
dead:
  %x = load atomic i32, ptr %px.p acquire, align 4
  %a = load atomic i32, ptr %pa.p acquire, align 4
  %ax = add i32 %a, %x
  %anyx = icmp ne i32 %x, 0
  %all = icmp uge i32 %ax, %n
  %stuck = and i1 %anyx, %all
  br i1 %stuck, label %report, label %yield
yield:
  %y = call i32 @sched_yield()
  br label %wait
report:
  %won = cmpxchg ptr %perr, i32 0, i32 1 seq_cst seq_cst
  %wonb = extractvalue { i32, i1 } %won, 1
  br i1 %wonb, label %record, label %fail
record:
  %sp = getelementptr [$NSITES x ptr], ptr @$BASE.sites, i32 0, i32 %site
  %s = load ptr, ptr %sp
""" + _store("pm1", "ctx", "$C_MSG1", "%s", "ptr") + _record("$ERR_GRIDSYNC", ["%a", "%x", "%n"], ext="zext") + r"""
  br label %fail
fail:
  ret i32 1
}
""")


def _runner_ir(symbol, base, static, coroutine, ws, sites, has_wave=True, grid_sites=(), fcap=None, align=16,
               argbytes=8):
    """The exported block runner; ``fcap``: per-thread bytes of the frame area (default: the
    coroutine frame cap on the coroutine path, nothing on the fast path); ``argbytes``: the
    size of the argument buffer the executor always passes (at least 8)."""
    blockfn = f"{base}.sched" if coroutine else f"{base}.block"
    if fcap is None:
        fcap = FRAME_CAP if coroutine else 0
    names = _names()
    text = _RUNNER.substitute(names, SYMBOL=symbol, BLOCKFN=blockfn, STATIC=static,
                              TSIZE=T_SIZE if coroutine else 0, FCAP=fcap, ALIGN=align, ARGBYTES=max(8, argbytes))
    if coroutine:
        # the scheduler lives in the same text module; drop the external decl of it
        text = text.replace(f"declare void @{blockfn}(ptr, ptr)\n", "")
        strs = "".join(_cstr_global(f"{base}.site{i}", s) for i, s in enumerate(sites))
        n = max(1, len(sites))
        elems = ", ".join(f"ptr @{base}.site{i}" for i in range(len(sites))) or "ptr null"
        table = f"@{base}.sites = internal constant [{n} x ptr] [{elems}]\n"
        flags = ", ".join(f"i8 {int(bool(g))}" for g in grid_sites) or "i8 0"
        table += f"@{base}.gridsite = internal constant [{n} x i8] [{flags}]\n"
        has_grid = any(grid_sites)
        text += strs + table + _SCHED.substitute(
            names, BASE=base, WS=ws, NSITES=n, FCAP=FRAME_CAP,
            HASWAVE="true" if has_wave else "false", HASGRID="true" if has_grid else "false",
        ) + _GRIDBAR.substitute(names, BASE=base, NSITES=n)
    return text
