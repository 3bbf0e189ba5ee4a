"""llvmlite plumbing shared by the targets: one-time initialisation, parse +
verify (so that LLVM never sees a broken module: its fatal errors kill the
process), and the new-pass-manager optimisation pipeline.

Example::

    mod = parse_and_verify(str(llvmlite_ir_module))
    optimize(mod, tm, level=3)
"""

from __future__ import annotations

import threading

from ..errors import CompileError

_init_lock = threading.Lock()
_initialised = False

#: LLVM's global context is not thread-safe: hold this lock around parsing,
#: optimising and emitting (``with llvm_util.LLVM_LOCK: ...``).
LLVM_LOCK = threading.RLock()


def llvm():
    """The ``llvmlite.binding`` module, with all targets/asm printers initialised once."""
    global _initialised
    import llvmlite.binding as ll

    if not _initialised:
        with _init_lock:
            if not _initialised:
                # llvm.initialize() is deprecated in llvmlite 0.50: do not call it
                ll.initialize_all_targets()
                ll.initialize_all_asmprinters()
                ll.initialize_native_target()
                ll.initialize_native_asmprinter()
                _initialised = True
    return ll


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
    if _initialised or _warmup_started:
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


def parse_and_verify(text: str, what: str = "kernel"):
    """Parse LLVM IR text and run the verifier; any failure is a
    ``CompileError('internal error: ...')`` (a pykern bug, not the user's)."""
    ll = llvm()
    try:
        mod = ll.parse_assembly(text)
        mod.verify()
    except RuntimeError as e:
        raise CompileError(f"internal error: LLVM rejected the generated IR of {what}: {e}") from None
    return mod


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
    mpm.run(mod, pb)


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
