"""llvmlite plumbing shared by the targets: one-time initialisation, parse +
verify (so that LLVM never sees a broken module: its fatal errors kill the
process), and the new-pass-manager optimisation pipeline.

Example::

    mod = parse_and_verify(str(llvmlite_ir_module))
    optimize(mod, tm, level=3)
"""

from __future__ import annotations

import threading

from pykern.core import llvm_host
from pykern.core.errors import CompileError

# one initialisation and one lock for every user of LLVM in the process (codegen and the runtime)
from pykern.core.llvm_host import LLVM_LOCK, llvm  # noqa: E402,F401


_warmup_started = False


def warm_up_in_background(*steps) -> None:
    """Load and initialise LLVM on another thread, once per process, then run
    ``steps`` (callables, e.g. creating the host TargetMachine) there.

    The first compile in a process calls this before running the frontend:
    loading libllvmlite (a ``dlopen`` of ~100 MB, which releases the GIL) and
    initialising the targets then overlap with the frontend and lowering on
    the other core. Whoever needs LLVM meanwhile waits on the same locks, so
    nothing runs twice; errors are left for the main thread to raise."""
    global _warmup_started
    if llvm_host._initialised or _warmup_started:
        return
    _warmup_started = True

    def run():
        try:
            llvm()
            for step in steps:
                step()
        except Exception:  # the compile itself reports it
            pass

    threading.Thread(target=run, name="pykern-llvm-warmup").start()


def parse_and_verify(text: str, what: str = "kernel", context=None):
    """Parse LLVM IR text and run the verifier; any failure is a
    ``CompileError('internal error: ...')`` (a pykern bug, not the user's).
    ``context``: an :class:`own_context` (or an ``llvm().create_context()``) to parse into
    instead of LLVM's global context, which keeps every type and constant ever parsed into it."""
    ll = llvm()
    owner = context if isinstance(context, own_context) else None
    try:
        mod = ll.parse_assembly(text, owner.ctx if owner is not None else context)
        if owner is not None:
            owner.track(mod)
        mod.verify()
    except RuntimeError as e:
        raise CompileError(f"internal error: LLVM rejected the generated IR of {what}: {e}") from None
    return mod


class own_context:
    """``with own_context() as ctx:`` a new LLVM context for modules parsed in the block, freed
    at its end with every module still in it (``parse_and_verify(text, what, ctx)``).

    Freed here, in that order, rather than by the garbage collector: a ``ModuleRef`` keeps its
    context alive by reference, but when both end up unreachable together (e.g. from a frame
    kept by a traceback) the collector runs their finalizers in any order, and a context
    disposed first has freed its modules under their ``ModuleRef``s (a crash, seen at exit)."""

    def __enter__(self):
        self.ctx = llvm().create_context()
        self._modules = []
        return self

    def track(self, mod):
        self._modules.append(mod)
        return mod

    def __exit__(self, *exc):
        for mod in self._modules:
            mod.close()  # (a module linked into another is detached: close is a no-op)
        self._modules = []
        self.ctx.close()
        return False


def optimize(mod, tm, level: int = 3) -> None:
    """Run the default new-pass-manager pipeline ``O<level>`` on ``mod`` in place
    (level 0 still runs always-inline and coroutine lowering)."""
    ll = llvm()
    pto = ll.create_pipeline_tuning_options(speed_level=max(0, min(3, level)))
    if level >= 2:
        pto.loop_vectorization = True
        pto.slp_vectorization = True
    pb = ll.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    try:
        mpm.run(mod, pb)
    finally:
        _dispose_pass_manager(mpm)


def optimize_quick(mod, tm) -> None:
    """The first tier's pipeline (``codegen/cpu/tiers.py``): inline what must be, promote
    allocas to registers, fold and clean the CFG -- ~2.5 ms for saxpy where O3 takes ~22 --
    with no vectoriser, unroller or loop pass. Every pass only rewrites by LLVM IR's
    semantics (no fast-math flags are added), so the code computes what O3's does."""
    run_passes(mod, tm, ("always_inliner", "sroa", "instruction_combine", "simplify_cfg"), speed_level=0)


def run_passes(mod, tm, passes, speed_level: int) -> None:
    """Run llvmlite's module passes ``passes`` (``add_<name>_pass``), in order, on ``mod``
    in place: a hand-picked pipeline instead of a default ``O<n>`` one."""
    ll = llvm()
    pb = ll.create_pass_builder(tm, ll.create_pipeline_tuning_options(speed_level=speed_level))
    mpm = ll.create_new_module_pass_manager()
    for name in passes:
        getattr(mpm, f"add_{name}_pass")()
    try:
        mpm.run(mod, pb)
    finally:
        _dispose_pass_manager(mpm)


def _dispose_pass_manager(mpm) -> None:
    """Free a module pass manager now. llvmlite 0.50's ``ModulePassManager``
    never frees its pipeline (``ObjectRef._dispose``, a no-op, comes before
    ``NewPassManager._dispose`` in its MRO): ~60 KB per optimised kernel, which
    a notebook redefining kernels all day would keep forever."""
    from llvmlite.binding import ffi

    if getattr(mpm, "_closed", True) or type(mpm)._dispose is not ffi.ObjectRef._dispose:
        return  # a fixed llvmlite disposes it itself
    ffi.lib.LLVMPY_DisposeNewModulePassManger(mpm)
    mpm.detach()  # closed: nothing will dispose it again


def clone(mod):
    """An independent copy of a binding module (codegen mutates its input)."""
    return mod.clone()


def no_runtime_unroll(llmodule):
    """A loop-ID metadata node (``distinct !{self, !{"llvm.loop.unroll.runtime.disable"}}``)
    for the back-edge branch of a loop over threads: the vectoriser still runs, but the
    scalar remainder is not runtime-unrolled (8 copies of the kernel body that a
    block of 256 threads never executes). On saxpy this halves the IR that reaches
    codegen and about halves optimise + emit time.

    Example: ``builder.branch(head).set_metadata("llvm.loop", no_runtime_unroll(mod))``"""
    from llvmlite import ir

    cache = llmodule.__dict__.setdefault("_pykern_loop_ids", {})
    if "no_runtime_unroll" not in cache:
        opt = llmodule.add_metadata([ir.MetaDataString(llmodule, "llvm.loop.unroll.runtime.disable")])
        cache["no_runtime_unroll"] = _LoopID(llmodule, opt)
    return cache["no_runtime_unroll"]


def full_unroll(llmodule):
    """A fresh loop-ID node (``distinct !{self, !{"llvm.loop.unroll.full"}}``) for the
    back-edge branch of one loop that LLVM should unroll completely (its trip count
    is a constant; LLVM still refuses past its pragma size limit). One node per loop:
    the unroller rewrites the ID of the loop it leaves behind.

    Example: ``builder.branch(head).set_metadata("llvm.loop", full_unroll(mod))``"""
    from llvmlite import ir

    return _LoopID(llmodule, llmodule.add_metadata([ir.MetaDataString(llmodule, "llvm.loop.unroll.full")]))


def _loop_id_class():
    from llvmlite import ir

    class LoopID(ir.values.MDValue):
        """A self-referential ``distinct`` metadata node (llvmlite cannot make one)."""

        def __init__(self, parent, *props):
            super().__init__(parent, [], name=str(len(parent.metadata)))
            self.props = props

        def descr(self, buf):
            refs = ", ".join([self.get_reference()] + [p.get_reference() for p in self.props])
            buf += (f"distinct !{{ {refs} }}", "\n")

        def __eq__(self, other):
            return self is other

        def __hash__(self):
            return id(self)

    return LoopID


def _LoopID(parent, *props):
    global _LOOP_ID
    if _LOOP_ID is None:
        _LOOP_ID = _loop_id_class()
    return _LOOP_ID(parent, *props)


_LOOP_ID = None


def constant_bytes(llvm_ir: str) -> int:
    """Bytes of the module's constant globals (const.array_like data, global arrays read in
    place, print formats): what numba.cuda's ``get_const_mem_size`` reports of a kernel."""
    ll = llvm()
    mod = ll.parse_assembly(llvm_ir, ll.create_context())  # not into the global context, which keeps all
    td = ll.create_target_data(mod.data_layout)
    total = 0
    for g in mod.global_variables:
        definition = str(g).split("=", 1)[-1].split("[", 1)[0].split("{", 1)[0]
        if " constant " in f" {definition} " and not g.is_declaration:
            total += td.get_abi_size(g.global_value_type)
    return total
