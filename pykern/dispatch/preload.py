"""Getting the compile path ready while a notebook user is still typing.

The first compile in a process spends about half of its time loading things --
llvmlite (a ``dlopen`` of ~100 MB), LLVM's targets, the host TargetMachine and
the ~30 modules of the frontend and codegen -- before any of it is about the
kernel. In an interactive session the user imports pykern in one cell and
launches a kernel seconds later, so ``import pykern`` starts a thread that does
that loading then. A script pays the same total either way, and a process that
only launches kernels from the disk cache must not load LLVM at all (it is the
warm-start path's whole point), so the thread starts only where the gap exists.

``PYKERN_PRELOAD``: ``auto`` (default: interactive sessions only -- IPython,
Jupyter, ``python -i``, the REPL), ``on`` (always), ``off`` (never).

Example::

    PYKERN_PRELOAD=on python -c "import pykern, pykern.dispatch.preload as p; p.wait(); print(p.done())"
"""

from __future__ import annotations

import os
import sys
import threading

from pykern.core import settings
from pykern.lang.stubs import grid

_thread: threading.Thread | None = None


def wanted() -> bool:
    """Whether this process should preload, from ``PYKERN_PRELOAD`` and the session kind."""
    setting = settings.get("PYKERN_PRELOAD")
    if setting != "auto":
        return setting == "on"
    return bool(sys.flags.interactive or hasattr(sys, "ps1") or "IPython" in sys.modules
                or "ipykernel" in sys.modules)


def _load() -> None:
    try:
        from pykern.core.llvm_host import host_target_machine, llvm

        llvm()  # the dlopen and target initialisation release the GIL: they overlap the user's cells
        host_target_machine()
        from pykern.dispatch import compiler  # noqa: F401
        from pykern.codegen.lowering import module as lower  # noqa: F401  (with the frontend, llvmlite.ir: every target's path)
        from pykern.frontend import lower_ast  # noqa: F401

        _exercise_compile()
    except Exception:  # the compile itself reports whatever went wrong here
        pass


def _warm_kernel(a, x):  # what a first kernel looks like: an index, a bound check, a loop LLVM vectorises
    i = grid(1)
    if i < a.size:
        a[i] = x * a[i] + 1.0


def _exercise_compile():
    """Compile ``_warm_kernel`` for the cpu target and run it once, stored nowhere: the
    frontend's and codegen's first-use work, LLVM's pipeline and code generator (paged in,
    their tables built), MCJIT and the executor's thread pool are then ready when the user's
    first kernel comes. Returns the artifact."""
    from pykern.runtime import _chosen

    if _chosen[:1] == ["hip"] or settings.get("PYKERN_TARGET") == "hip":
        return None  # a GPU session compiles for an arch known only once a device is asked for
    import numpy as np

    from pykern.dispatch.compiler import Overload, _cache_key, compile_artifact, compile_options
    from pykern.dispatch.dispatcher import Dispatcher
    from pykern.frontend.types import float32
    from pykern.runtime import backends as rt_launch

    argtypes = (float32[::1], float32)
    disp = Dispatcher(_warm_kernel)
    artifact, _ = compile_artifact(disp, "cpu", list(argtypes), _skip_cache=True)
    # a key is made but not used: the first key of a process reads pykern's and llvmlite's
    # identities (file stats, llvmlite's RECORD; ~1.5 ms, memoised) and compiles the regexes
    # that fingerprinting a kernel's source uses
    _cache_key(disp, "cpu", argtypes, compile_options(disp.options))
    ov = Overload(disp, "cpu", argtypes, artifact, rt_launch.load("cpu", artifact))
    a = np.zeros(64 * 1024, np.float32)  # past the executor's inline limit: its pool starts
    rt_launch.launch(ov, (a, np.float32(2)), (1024, 1, 1), (64, 1, 1), 0, 0)
    if not (a == 1).all():
        raise RuntimeError("pykern preload: the warm-up kernel computed a wrong result")
    job = getattr(artifact, "tier_two", None)
    if job is not None:  # first-tier code ran: page in O3 too, for the user's kernels' second tier
        artifact = job.wait() or artifact
    return artifact


def start() -> bool:
    """Start the preload thread once per process if ``wanted()``; True if it runs."""
    global _thread
    if _thread is not None or not wanted():
        return _thread is not None
    _thread = threading.Thread(target=_load, name="pykern-preload")
    _thread.start()
    # a fork while the thread holds an import or LLVM lock would copy the lock held and
    # the child's first compile would wait forever: let the thread finish first
    os.register_at_fork(before=lambda: wait(30.0))
    return True


def wait(timeout: float | None = None) -> bool:
    """Block until the preload has finished (True), or ``timeout`` seconds passed (False).
    True at once when no preload was started."""
    t = _thread
    if t is None or t is threading.current_thread():
        return True
    t.join(timeout)
    return not t.is_alive()


def done() -> bool:
    """True once a started preload has finished."""
    return _thread is not None and not _thread.is_alive()
