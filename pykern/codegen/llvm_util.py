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
