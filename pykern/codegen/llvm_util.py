"""llvmlite plumbing shared by the targets: one-time initialisation, parse +
verify (so that LLVM never sees a broken module: its fatal errors kill the
process), and the new-pass-manager optimisation pipeline.

Example::

    mod = parse_and_verify(str(llvmlite_ir_module))
    optimize(mod, tm, level=3)
"""

from __future__ import annotations

from ..errors import CompileError

# one initialisation and one lock for every user of LLVM in the process (codegen and the runtime)
from ..llvm_host import LLVM_LOCK, llvm  # noqa: E402,F401


def parse_and_verify(text: str, what: str = "kernel", context=None):
    """Parse LLVM IR text and run the verifier; any failure is a
    ``CompileError('internal error: ...')`` (a pykern bug, not the user's).
    ``context``: an ``llvm().create_context()`` to parse into instead of LLVM's
    global context, which keeps every type and constant ever parsed into it."""
    ll = llvm()
    try:
        mod = ll.parse_assembly(text, context)
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
