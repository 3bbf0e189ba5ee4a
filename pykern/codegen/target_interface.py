"""What differs between code generation targets ("cpu", "amdgpu").

``codegen/lowering/module.py`` turns the typed IR into LLVM IR without knowing the
target; every target-specific decision goes through a :class:`Target` method
below. A target subclass implements the abstract methods; the concrete ones
have defaults that suit most targets.

The lowering passes a *function context* ``fx`` to most methods. It is the
``lower.FunctionLowering`` object and offers (stable, additive only):

* ``fx.builder``   -- the ``llvmlite.ir.IRBuilder`` positioned where code goes
* ``fx.module``    -- the ``llvmlite.ir.Module`` being built
* ``fx.function``  -- the ``llvmlite.ir.Function`` being filled
* ``fx.ir_function`` -- the ``frontend.ir.Function`` being lowered
* ``fx.options``   -- the resolved :class:`CompileOptions`
* ``fx.hidden``    -- list of the current function's hidden arguments (the
  values of ``Target.hidden_param_types()``, in order)
* ``fx.loc``       -- ``SourceLoc`` of the IR node being lowered (or None)
* ``fx.alloca(lltype, name="")`` -- an ``alloca`` in the entry block
* ``fx.intrinsic(name, ret, argtypes)`` -- get-or-declare an LLVM function
* ``fx.cstring(text)`` -- pointer to a private NUL-terminated constant string
* ``fx.info``      -- the module's :class:`KernelInfo`

Example (what a target author writes)::

    class MyTarget(Target):
        name = "mine"
        def special_register(self, fx, name, axis):
            if name == "thread_idx":
                return fx.builder.call(fx.intrinsic(f"llvm.my.tid.{'xyz'[axis]}", I32, []), [])
            ...

and what a user of a target calls::

    from pykern.codegen import get_target
    art = get_target("cpu").compile(ir_module, CompileOptions(opt=3))
"""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # pragma: no cover - for readers and type checkers only
    from llvmlite import ir as llir

    from pykern.frontend import ir
    from pykern.codegen.abi_map import FlatParam
    from pykern.codegen.artifact import KernelArtifact


# the data lowering/module.py and the targets exchange (kept apart so that lowering/module.py need not import this module)
from pykern.codegen.contract import DEFAULT_MAX_LOCAL_BYTES, DEFAULT_MAX_SHARED_BYTES, CompileOptions, KernelInfo, LoweredKernel, SyncSite


#: largest griddim.* a launch allows (``hip/launch.LaunchLimits``, ``cpu/executor._dim3``)
MAX_GRID_DIM = 2**31 - 1


def launch_register_range(name: str, max_block: int, wave: int) -> Optional[tuple]:
    """Inclusive bounds of special register ``name`` under the launch limits both pykern
    launchers check: grid dims in [1, 2**31 - 1], block dims in [1, ``max_block``] (the
    kernel's largest block), ``wave`` lanes per wave."""
    return {"thread_idx": (0, max_block - 1), "block_dim": (1, max_block),
            "block_idx": (0, MAX_GRID_DIM - 1), "grid_dim": (1, MAX_GRID_DIM),
            "warpsize": (wave, wave), "laneid": (0, wave - 1)}.get(name)


def _factorial_table(bits: int) -> list:
    """``[0!, 1!, ...]`` correctly rounded to float64 (``bits`` 64) or float32, up to the
    last finite one (170!, 34!)."""
    import math
    from fractions import Fraction

    import numpy as np

    ft = np.float64 if bits == 64 else np.float32
    vals = []
    for k in range(200):
        exact = math.factorial(k)
        try:
            with np.errstate(over="ignore"):
                v = ft(float(exact))
        except OverflowError:  # beyond float64
            break
        if not np.isfinite(v):
            break
        # the nearest of v and its neighbours: float32 of the float64 may round twice
        v = min((v, np.nextafter(v, ft(0)), np.nextafter(v, ft(np.inf))),
                key=lambda w: abs(Fraction(float(w)) - exact))
        vals.append(float(v))
    return vals


def gamma_at_integers(fx, x, r, bits: int, addrspace: int = 0):
    """``r`` (a library's gamma of ``x``), except at the integers 1, 2, ... up to the last
    finite factorial: there the correctly rounded (x-1)! from a constant table. Both
    targets' libraries are a few ulps off there (ocml's gamma(2.0) is 0.9999998 in float32,
    glibc's gamma(13.0) 479001599.99999994), so ``int(math.gamma(n + 1))`` could be n! - 1;
    Python's math.gamma is exact there."""
    from llvmlite import ir as L

    b = fx.builder
    llty = x.type
    name = f"__pykern_factorials_f{bits}"
    table = fx.module.globals.get(name)
    if table is None:
        vals = _factorial_table(bits)
        ty = L.ArrayType(llty, len(vals))
        table = L.GlobalVariable(fx.module, ty, name, addrspace=addrspace)
        table.global_constant = True
        table.linkage = "internal"
        table.initializer = L.Constant(ty, vals)
    count = table.value_type.count
    i64 = L.IntType(64)
    floor = fx.intrinsic(f"llvm.floor.f{bits}", llty, [llty])
    whole = b.fcmp_ordered("==", b.call(floor, [x]), x)
    inside = b.and_(b.fcmp_ordered(">=", x, L.Constant(llty, 1.0)),
                    b.fcmp_ordered("<=", x, L.Constant(llty, float(count))))
    use = b.and_(whole, inside)
    n = b.select(use, b.fptosi(x, i64), i64(1))
    exact = b.load(b.gep(table, [i64(0), b.sub(n, i64(1))], inbounds=True), typ=llty)
    return b.select(use, exact, r)


class Target(abc.ABC):
    """A code generation target. Instances are cheap; ``get_target`` makes them.

    Subclasses set ``name`` and implement the abstract methods. ``compile`` is
    the one entry point users call.
    """

    name: str = "abstract"
    #: arch string for artifacts (None for cpu)
    arch: Optional[str] = None

    def __init__(self, **opts):
        self.opts = opts

    # ------------------------------------------------------------------ entry
    def compile(self, module: "ir.Module", options: Optional[CompileOptions] = None) -> "KernelArtifact":
        """Compile a typed-IR module (kernel + device functions) to an artifact.

        ``module`` must be verified IR (``frontend.compile_ir`` verifies what it
        returns; hand-built IR goes through ``frontend.verify.verify_module``).
        Raises ``CompileError`` for unsupported input; an internal failure
        (LLVM verifier) becomes ``CompileError('internal error: ...')``.

        Example::

            art = get_target("cpu").compile(mod)          # default options
            art.llvm_ir, art.binary, art.params
        """
        from pykern.codegen.lowering import module as lower

        opts = self.resolve_options(options)
        lowered = lower.lower_module(module, self, opts)
        return self.finalize(lowered)

    def resolve_options(self, options: Optional[CompileOptions]) -> CompileOptions:
        """Fill target defaults into ``options`` (e.g. ``wave_size``).

        Example: ``CpuTarget().resolve_options(None).wave_size == 64``."""
        options = options or CompileOptions()
        if options.wave_size is None:
            options = options.with_(wave_size=self.default_wave_size(options))
        return options

    @abc.abstractmethod
    def default_wave_size(self, options: CompileOptions) -> int:
        """Lanes per wave when the options do not say (cpu 64/env, gfx9 64, RDNA 32)."""

    # --------------------------------------------------------------- module
    @abc.abstractmethod
    def triple(self) -> str:
        """LLVM target triple, e.g. ``"amdgcn-amd-amdhsa"``."""

    @abc.abstractmethod
    def data_layout(self) -> str:
        """LLVM data layout string of the target machine."""

    def begin_module(self, llmodule: "llir.Module", options: CompileOptions) -> None:
        """Called once on the fresh llvmlite module (triple/data layout already
        set): add module flags, global declarations. Default: nothing."""

    def address_space(self, space: str) -> int:
        """LLVM address space of array memory ``space`` ("global", "shared",
        "local", "const"). Array data pointers in lowered code are
        ``ptr addrspace(N)`` of this number. Default: 0 for everything."""
        return 0

    def hidden_param_types(self) -> list:
        """Extra LLVM parameter types appended to every device function and to
        the kernel function created by ``define_kernel``; ``lowering/module.py`` passes
        the caller's ``fx.hidden`` on at each call. Default: none."""
        return []

    def must_inline(self, callee: "ir.Function", info: KernelInfo) -> bool:
        """True when calls of device function ``callee`` must be lowered inline
        (its body copied into the caller) rather than as an LLVM call -- e.g.
        the cpu target inlines callees that reach a barrier, because a
        coroutine can only suspend in its own body. Default: False."""
        return False

    def analyse(self, module: "ir.Module", info: KernelInfo) -> None:
        """Look at the typed IR before lowering and note facts in ``info.target_facts`` (the cpu
        target plans work-item loops for barrier kernels here). Default: nothing."""

    def kernel_lowering(self, info: KernelInfo):
        """A ``FunctionLowering`` subclass (or factory with its signature) to lower the kernel
        with, or None for the default. Default: None."""
        return None

    @abc.abstractmethod
    def define_kernel(self, llmodule: "llir.Module", info: KernelInfo, params: list, param_types: list,
                      options: CompileOptions) -> "llir.Function":
        """Create (empty) the LLVM function that will hold the kernel body.

        Its arguments must be exactly ``param_types`` (one per ``FlatParam`` of
        ``params``, in order: scalars as their LLVM type with booleans as
        ``i8``, data pointers as ``ptr addrspace(global)``, shapes/strides
        ``i64``) followed by ``hidden_param_types()``. ``lowering/module.py`` appends
        the blocks; ``finalize`` may wrap it (cpu) or emit it as is (amdgpu).
        """

    def kernel_prologue(self, fx) -> None:
        """Emit target code at the start of the kernel body (builder is in the
        kernel's first block, after the alloca block). Default: nothing."""

    def kernel_return(self, fx) -> None:
        """Terminate the current block with the kernel's return (default
        ``ret void``). The cpu coroutine path branches to its final suspend."""
        fx.builder.ret_void()

    # ------------------------------------------------------------ registers
    @abc.abstractmethod
    def special_register(self, fx, name: str, axis: int):
        """An ``i32`` value of ``name`` in ``lower_intrinsics.SPECIAL_REGISTERS`` for ``axis``
        0/1/2 (ignored for warpsize/laneid)."""

    def special_register_range(self, fx, name: str, axis: int) -> Optional[tuple]:
        """Inclusive ``(lo, hi)`` bounds that every launch guarantees for special register
        ``name`` (see ``special_register``), or None (default: nothing known beyond int32).
        ``lowering/range_loops.py`` narrows ``range`` loops whose bounds provably fit in 32 bits with them
        (``ranges.py``), so a bound that a launch can break is a wrong answer: targets whose
        launchers check the limits return :func:`launch_register_range`."""
        return None

    # --------------------------------------------------------------- memory
    @abc.abstractmethod
    def shared_array(self, fx, name: str, elem_type, nbytes: int, align: int, offset: int):
        """Pointer (in the shared address space) to static shared array
        ``name`` of ``nbytes``; ``offset`` is its place in the kernel's
        per-block shared area (see ``KernelInfo.shared``). Called where the
        ``AllocArray`` is evaluated; must return the same memory every time."""

    @abc.abstractmethod
    def dynamic_shared(self, fx, elem_type):
        """Pointer to the dynamic shared buffer (sized at launch)."""

    def dynamic_shared_bytes(self, fx):
        """An ``i64`` value: bytes of the dynamic shared buffer of this launch,
        or None when the target cannot tell (then the dynamic array's
        ``shape[0]`` is reported as 2**31-1 elements). Default: None."""
        return None

    def local_array(self, fx, name: str, elem_type, count: int, align: int = 0):
        """Pointer to a per-thread array of ``count`` elements (its address a multiple of
        ``align`` when given). Default: an entry-block alloca of ``[count x elem_type]``
        (in ``address_space('local')``)."""
        from llvmlite import ir as llir

        slot = fx.alloca(llir.ArrayType(elem_type, count), name=name)
        if align:
            slot.align = align
        return slot

    def sanitize_access(self, fx, ptr, nbytes: int, kind: str, site: int, aux=None, skip=None) -> None:
        """``sanitize=``: check an access of ``nbytes`` at ``ptr`` ("read", "write", "atomic") from
        access site ``site`` before it happens (``aux``: a local array element's index, 16 bits
        per axis; None for other arrays; ``skip``: ``(bit, in bounds)`` when the launch may leave
        it unchecked, ``lowering/sanitize_elision.py``). Only the cpu target checks (the
        dispatcher drops the option for GPU builds)."""
        raise NotImplementedError(f"the {self.name} target has no sanitizer")

    def sanitize_fresh(self, fx, ptr, nbytes: int) -> None:
        """``sanitize=``: ``nbytes`` at ``ptr`` are a new local array (nothing written yet)."""
        raise NotImplementedError(f"the {self.name} target has no sanitizer")

    def const_array(self, fx, name: str, data: bytes, elem_type, count: int):
        """Pointer to read-only data ``data`` (C-order bytes). Default: a
        private constant global in ``address_space('const')``."""
        from llvmlite import ir as llir

        mod = fx.module
        gname = f"__pykern_const_{name}"
        if gname not in mod.globals:
            arrty = llir.ArrayType(llir.IntType(8), len(data))
            g = llir.GlobalVariable(mod, arrty, gname, addrspace=self.address_space("const"))
            g.global_constant = True
            g.linkage = "internal"
            g.align = 16
            g.initializer = llir.Constant(arrty, bytearray(data))
        return mod.globals[gname]

    # ----------------------------------------------------------------- sync
    @abc.abstractmethod
    def barrier(self, fx, kind: str, pred, site: SyncSite):
        """Block barrier; ``kind`` in ``lower_intrinsics.BARRIER_KINDS``. ``pred`` is an ``i1``
        for the count/and/or kinds, else None. Returns the ``i32`` result for
        those kinds, None for plain ``syncthreads``. Must order shared and
        global memory like ``__syncthreads`` (workgroup fences)."""

    @abc.abstractmethod
    def fence(self, fx, scope: str) -> None:
        """Memory fence; ``scope`` "block", "device" or "system"."""

    @abc.abstractmethod
    def wave_op(self, fx, name: str, args: list, site: SyncSite):
        """Wave operation ``name`` in ``lower_intrinsics.WAVE_OPS``. ``args`` are LLVM values in
        the INTRINSICS order: ``mask`` (i64) first where the op has one. For
        shuffles the value is passed as an integer of its bit width (i8..i64;
        lowering/intrinsics.py bitcasts floats/booleans around the call) and the lane
        argument is i32. Results: shuffles the same integer type; ballot and
        activemask i64; all/any/eq i1; syncwarp None."""

    def atomic_syncscope(self) -> Optional[str]:
        """LLVM ``syncscope`` for kernel atomics on global memory (None =
        system scope, what the cpu target uses; amdgpu: "agent")."""
        return None

    def shared_atomic_syncscope(self) -> Optional[str]:
        """``syncscope`` for atomics on shared memory (amdgpu: "workgroup")."""
        return self.atomic_syncscope()

    # ----------------------------------------------------------------- math
    def fp_contract(self) -> bool:
        """True when float ``a * b + c`` (and ``a * b - c``) may be fused into
        one rounding (an FMA) without ``fastmath``: ``lowering/scalars.py`` then marks
        float ``+ - *`` with LLVM's ``contract`` flag. amdgpu: True, what
        hipcc does by default (``-ffp-contract=fast``); cpu: False, so that
        results equal numpy's bit for bit. ``fastmath=True`` implies
        contraction on every target. Default: False.

        Example: ``get_target("cpu").fp_contract() is False``."""
        return False

    def matrix_op(self, fx, e, args):
        """Lower matrix-fragment intrinsic ``e`` (``frag_new``, ``frag_fill``, ``frag_load``,
        ``frag_store``, ``frag_mma``; ``args`` its lowered arguments; a fragment is a pointer to
        the storage ``frag_new`` returns). Default: every lane holds whole tiles and computes
        element by element (``lowering/matrix_reference.py``), what the cpu target runs."""
        from pykern.codegen.lowering.matrix_reference import ReferenceMatrix

        return ReferenceMatrix()(fx, e, args)

    def bf16_convert(self) -> bool:
        """True when float32 -> bfloat16 (round to nearest-even) is one instruction that LLVM
        selects for ``fptrunc float to bfloat`` (amdgpu: gfx950); else ``lowering/bf16.py``
        rounds with integer operations. Default: False."""
        return False

    @abc.abstractmethod
    def math(self, fx, name: str, args: list, fty):
        """Float math function ``name`` (an INTRINSICS math name such as
        "sin", "atan2", "fma", "sqrt", "floor", "gamma", "lgamma", ...) on
        ``args`` of LLVM float type for pykern type ``fty`` (float16/32/64).
        Returns the same float type. Bit-exact ops (floor/ceil/trunc/rint/
        fabs/copysign/fma/sqrt) may use LLVM intrinsics on every target."""

    def nanosleep(self, fx, ns) -> None:
        """``cuda.nanosleep(ns)`` (``ns`` an ``i32``): suspend the thread for
        about ``ns`` nanoseconds -- a back-off hint in spin loops, as in CUDA,
        where the delay is approximate. Default: no delay (the cpu target,
        whose threads are scheduled by the host)."""

    # --------------------------------------------------------------- limits
    def max_shared_bytes(self, options: CompileOptions) -> int:
        """Bytes of shared memory (LDS) one block may use, static plus dynamic.
        ``lowering/array_ops.py`` rejects static ``shared.array``s beyond it with a located
        ``CompileError`` (LLVM itself would abort the process on amdgpu); the
        cpu launcher rejects static + dynamic beyond it. Default: 64 KiB, the
        LDS of every AMD GPU pykern targets except gfx950 (160 KiB), so that a
        kernel that runs on one target fits the common GPUs too.

        Example: ``get_target("cpu").max_shared_bytes(CompileOptions()) == 65536``."""
        return DEFAULT_MAX_SHARED_BYTES

    def max_local_bytes(self, options: CompileOptions) -> int:
        """Bytes of ``local.array`` memory one thread may use (the sum over the
        kernel and its device functions); beyond it ``lowering/array_ops.py`` raises a
        located ``CompileError``. Default: 64 KiB -- half of what AMDGPU
        scratch addresses per work-item in wave64 (COMPUTE_TMPRING_SIZE.WAVESIZE:
        8191 KiB per wave on gfx9/gfx10, i.e. 131056 bytes per lane; LLVM's
        ``GCNSubtarget::getMaxWaveScratchSize``), leaving the rest for register
        spills and call frames; on the cpu target it is a safe per-thread stack
        or coroutine-frame size.

        Example: ``get_target("cpu").max_local_bytes(CompileOptions()) == 65536``."""
        return DEFAULT_MAX_LOCAL_BYTES

    # ------------------------------------------------------ loops
    def local_unroll_budget(self) -> int:
        """0 (default): LLVM's cost model alone decides which loops to unroll. N > 0:
        ``lowering/module.py`` asks LLVM to unroll completely (``llvm.loop.unroll.full``) every
        ``for ... in range`` loop with constant bounds whose body indexes a local array,
        when its trip count times the size of its body is at most N (frontend IR nodes as
        unrolling copies them: a nested constant-trip ``range`` loop times its trip count, a
        call with its callee's body, a ``while`` loop once; ``lower._unrolled_size``).
        On amdgpu a local array indexed at run time is a register vector reached through
        indexed moves or compare-select chains per access; unrolled, its indices are
        constants. LLVM's own estimate leaves some nests rolled that clang unrolls (an
        insertion sort of 16 elements: ``AmdgpuTarget.local_unroll_budget``)."""
        return 0

    # ------------------------------------------------------ cancellation
    def loop_poll_interval(self) -> int:
        """0 (default): loops are not polled. N > 0: ``lowering/module.py`` calls
        :meth:`loop_poll` at every ``while`` back-edge and, for ``for ... in
        range`` loops, once every N iterations and when the loop ends (the
        loop is strip-mined so that its inner part stays a plain counted loop
        LLVM can vectorise). The cpu target polls its launch's cancel flag so
        that Ctrl-C stops even a single long block."""
        return 0

    def loop_poll(self, fx):
        """An ``i1`` that is true when the thread must stop now (lowering/module.py then
        leaves the thread like after a debug bounds failure), or None. Only
        called when :meth:`loop_poll_interval` is positive."""
        return None

    # ---------------------------------------------------------------- debug
    def record_error(self, fx, kind: str, message: str, values: list) -> None:
        """Record a run-time failure (``kind`` "bounds"), ``message`` a constant
        text, ``values`` a list of i64 values (for "bounds": index, extent,
        axis). ``lowering/module.py`` then stops the thread (returns from the kernel).
        Default: nothing (targets without an error channel just stop)."""

    def print_line(self, fx, fmt: str, args: list) -> None:
        """``print()`` in a kernel: one whole line. ``fmt`` is printf text (``%lld``
        ``%llu`` ``%f``, ``%s`` for a boolean printed True/False, ``%%``, ending in
        a newline); ``args`` a list of ``(kind, value)``, kind "i" (i64), "f"
        (double) or "b" (i1)."""
        from pykern.core.errors import CompileError

        raise CompileError("print() is not supported on this target")

    # --------------------------------------------------------------- output
    def external_code(self, lowered: LoweredKernel):
        """What the build links before optimising: ``(link items, external symbols called,
        compiled-code store)`` (``codegen/external_build.py``), or None when the kernel calls no
        external code. The store is the ``external_store`` the compiler made the target with."""
        src = lowered.source
        if src is None:
            return None
        from pykern.codegen.external_build import symbols_of

        symbols = symbols_of(src)
        if not symbols and not src.links:
            return None
        return src.links, symbols, self.opts.get("external_store")

    @abc.abstractmethod
    def finalize(self, lowered: LoweredKernel) -> "KernelArtifact":
        """Verify, optimise and emit ``lowered`` into a :class:`KernelArtifact`.
        Must verify the LLVM IR (``llvm_util.parse_and_verify``) before any
        LLVM codegen, turning failures into ``CompileError('internal
        error: ...')``."""
