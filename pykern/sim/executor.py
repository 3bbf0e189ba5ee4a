"""Running a kernel on the sim target: its threads, one at a time, block after block.

A kernel without barriers runs each thread to its end in the caller's own thread
(so pdb there is the plain pdb of the program). A kernel with barriers runs each
thread of a block in a Python thread, and a baton lets exactly one run at a time:
a thread reaching a barrier hands it back; when every thread of the block waits at
the same barrier (the same source line), they go on in order; threads waiting at
different barriers is divergence, reported with the lines and threads (threads
that have ended count as arrived).

Example::

    >>> from pykern.sim.executor import thread_name
    >>> thread_name((1, 0, 0), (2, 0, 0))
    'thread (1, 0, 0) of block (2, 0, 0)'
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np

from pykern.core.errors import LaunchError
from pykern.sim import runtime

_HERE = os.path.dirname(os.path.abspath(__file__))


def thread_name(tid, bid) -> str:
    return f"thread {tuple(int(v) for v in tid)} of block {tuple(int(v) for v in bid)}"


class Launch:
    def __init__(self, griddim, blockdim, warpsize: int):
        self.griddim, self.blockdim, self.warpsize = griddim, blockdim, warpsize
        self.bdim = tuple(np.int32(v) for v in blockdim)
        self.gdim = tuple(np.int32(v) for v in griddim)


class Block:
    def __init__(self, sharedmem: int):
        self.shared: dict = {}
        self.dynamic = np.zeros(sharedmem, np.uint8)


class _Abort(BaseException):
    """Unwinds a waiting thread when its block is abandoned (another thread failed)."""


class SimThread:
    __slots__ = ("launch", "block", "tid", "bid", "bdim", "gdim", "linear", "go", "site", "kind", "value",
                 "result", "done", "error", "abort", "sched")

    def __init__(self, launch, block, tid, bid):
        self.launch, self.block = launch, block
        self.tid, self.bid = tid, bid  # tuples of np.int32
        self.bdim, self.gdim = launch.bdim, launch.gdim
        bx, by, _ = launch.blockdim
        self.linear = int(tid[0]) + bx * (int(tid[1]) + by * int(tid[2]))
        self.go = None  # a threading.Event when the block runs threaded
        self.site = self.kind = self.value = self.result = self.error = self.sched = None
        self.done = self.abort = False

    @property
    def name(self) -> str:
        return thread_name(self.tid, self.bid)

    def barrier(self, kind, value):
        if self.sched is None:  # a kernel the scan found no barrier in cannot get here
            raise LaunchError("barrier reached in a kernel run without a scheduler")
        self.site, self.kind, self.value = _user_site(sys._getframe(1)), kind, value
        self.go.clear()
        self.sched.set()
        self.go.wait()
        if self.abort:
            raise _Abort()
        runtime.STATE.thread = self
        return self.result


def _user_site(frame):
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _HERE:
        frame = frame.f_back
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("?", 0)


def _located(exc, t, codes) -> BaseException:
    """An error of thread ``t`` re-raised naming the thread and the kernel's line."""
    tb, where = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code in codes:
            where = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    msg = f"{where}: {t.name}: {exc}" if where else f"{t.name}: {exc}"
    try:
        new = type(exc)(msg)
    except Exception:
        new = LaunchError(msg)
    new.__cause__ = exc
    return new


def _run_one(kernel, args, t, codes):
    runtime.STATE.thread = t
    try:
        kernel(*args)
    except runtime.ThreadExit:
        pass
    except _Abort:
        pass
    except (IndexError, ZeroDivisionError, ValueError, TypeError, NotImplementedError, OverflowError) as exc:
        t.error = _located(exc, t, codes)
    except BaseException as exc:  # bdb.BdbQuit (pdb's quit), KeyboardInterrupt: as they are
        t.error = exc
    finally:
        t.done = True


def _threads_of_block(launch, block, bid):
    bx, by, bz = launch.blockdim
    i32 = np.int32
    bid = tuple(i32(v) for v in bid)
    xs, ys, zs = ([i32(v) for v in range(n)] for n in (bx, by, bz))
    return [SimThread(launch, block, (x, y, z), bid) for z in zs for y in ys for x in xs]


#: modules pdb does not stop in while stepping through a kernel (the simulator's own frames)
SKIP = ["pykern.sim", "pykern.sim.*", "numpy", "numpy.*", "threading"]


def _pdb_hook(*args, **kwargs):
    import pdb

    pdb.Pdb(skip=SKIP).set_trace(sys._getframe(1))


def run(kernel, codes, args, griddim, blockdim, sharedmem, uses_barrier: bool, warpsize: int = 64) -> None:
    """Run ``kernel`` (a generated Python function) over the grid, one thread at a time."""
    # breakpoint() in a kernel opens pdb at the kernel's line, stepping over the simulator's
    # frames -- unless the program chose its own hook (PYTHONBREAKPOINT, sys.breakpointhook)
    own = sys.breakpointhook is sys.__breakpointhook__ and not os.environ.get("PYTHONBREAKPOINT")
    if own:
        sys.breakpointhook = _pdb_hook
    try:
        _run_grid(kernel, codes, args, griddim, blockdim, sharedmem, uses_barrier, warpsize)
    finally:
        if own:
            sys.breakpointhook = sys.__breakpointhook__
        runtime.STATE.thread = None


def _run_grid(kernel, codes, args, griddim, blockdim, sharedmem, uses_barrier, warpsize) -> None:
    launch = Launch(griddim, blockdim, warpsize)
    gx, gy, gz = griddim
    for bz in range(gz):
        for by in range(gy):
            for bx in range(gx):
                block = Block(sharedmem)
                threads = _threads_of_block(launch, block, (bx, by, bz))
                if uses_barrier:
                    _run_block_threaded(kernel, codes, args, threads)
                    continue
                with np.errstate(all="ignore"):  # wraparound is the semantics, not an accident
                    for t in threads:
                        _run_one(kernel, args, t, codes)
                        if t.error is not None:
                            raise t.error


def _run_block_threaded(kernel, codes, args, threads) -> None:
    sched = threading.Event()
    workers = []
    for t in threads:
        t.sched = sched

        t.go = threading.Event()

        def body(t=t):
            t.go.wait()
            if not t.abort:
                with np.errstate(all="ignore"):  # numpy's error state is per thread
                    _run_one(kernel, args, t, codes)
            sched.set()

        w = threading.Thread(target=body, name=t.name, daemon=True)
        workers.append(w)
        w.start()
    try:
        runnable = list(threads)
        while runnable:
            for t in runnable:
                sched.clear()
                runtime.STATE.thread = t
                t.go.set()
                sched.wait()
                if t.error is not None:
                    raise t.error
            waiting = [t for t in threads if not t.done]
            if not waiting:
                break
            _check_convergence(threads, waiting)
            _barrier_results(waiting)
            runnable = waiting
    finally:
        for t in threads:
            if not t.done:
                t.abort = True
                t.go.set()
        for w in workers:
            w.join()


def _check_convergence(threads, waiting) -> None:
    sites = {}
    for t in waiting:
        sites.setdefault(t.site, []).append(t.name)
    if len(sites) == 1:  # threads that have ended count as arrived, as on the GPUs
        return
    ended = [t.name for t in threads if t.done]
    lines = [f"  {len(names)} thread(s) wait at {f}:{l} (first: {names[0]})" for (f, l), names in sites.items()]
    if ended:
        lines.append(f"  {len(ended)} thread(s) have ended (first: {ended[0]})")
    raise LaunchError("barrier divergence: the threads of a block do not all reach the same barrier\n"
                      + "\n".join(lines))


def _barrier_results(waiting) -> None:
    kind = waiting[0].kind
    vals = [bool(t.value) for t in waiting] if kind in ("count", "and", "or") else []
    res = {"count": np.int32(sum(vals)), "and": np.int32(all(vals)), "or": np.int32(any(vals))}.get(kind)
    for t in waiting:
        t.result = res
