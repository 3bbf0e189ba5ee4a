"""Running a kernel on the sim target: its threads, one at a time, block after block.

Everything runs in the caller's own thread (pdb there is the program's plain pdb).
A kernel without barriers runs each thread to its end in turn. In a kernel with
barriers every function that reaches one is a generator (``codegen_py``): each
thread of a block runs up to its next barrier, where it yields; when every thread
of the block waits at the same barrier (the same source line) they go on, in order;
threads waiting at different barriers is divergence, reported with the lines and
threads (threads that have ended count as arrived).

Example::

    >>> from pykern.sim.scheduler import thread_name
    >>> thread_name((1, 0, 0), (2, 0, 0))
    'thread (1, 0, 0) of block (2, 0, 0)'
"""

from __future__ import annotations

import os
import sys
import inspect

import numpy as np

from pykern.core.errors import LaunchError
from pykern.sim import runtime



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


class SimThread:
    __slots__ = ("launch", "block", "tid", "bid", "bdim", "gdim", "linear", "gen", "site", "kind", "value",
                 "result", "done", "error")

    def __init__(self, launch, block, tid, bid):
        self.launch, self.block = launch, block
        self.tid, self.bid = tid, bid  # tuples of np.int32
        self.bdim, self.gdim = launch.bdim, launch.gdim
        bx, by, _ = launch.blockdim
        self.linear = int(tid[0]) + bx * (int(tid[1]) + by * int(tid[2]))
        self.gen = None  # the kernel's generator when the block has barriers
        self.site = self.kind = self.value = self.result = self.error = None
        self.done = False

    @property
    def name(self) -> str:
        return thread_name(self.tid, self.bid)


def _site_of(gen):
    """(file, line) where a generator (through its ``yield from`` chain) waits."""
    while getattr(gen, "gi_yieldfrom", None) is not None:
        gen = gen.gi_yieldfrom
    frame = gen.gi_frame
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


_ENDED = object()


def _resume(gen, value):
    # its own, fresh frame: pdb (skipping this module) does not trace it, so a kernel's end
    # (StopIteration) is not reported as an exception in the simulator's frames while stepping
    try:
        return gen.send(value)
    except StopIteration:
        return _ENDED


def _run_one(kernel, args, t, codes):
    """Run (or resume, for a block with barriers) thread ``t`` up to its end or its next barrier."""
    runtime.STATE.thread = t
    try:
        if t.gen is None:
            r = kernel(*args)
            if not inspect.isgenerator(r):
                t.done = True
                return
            t.gen = r
        yielded = _resume(t.gen, t.result)
        if yielded is not _ENDED:
            t.kind, t.value = yielded
            t.site = _site_of(t.gen)
            return
    except runtime.ThreadExit:
        pass
    except (IndexError, ZeroDivisionError, ValueError, TypeError, NotImplementedError, OverflowError) as exc:
        t.error = _located(exc, t, codes)
    except BaseException as exc:  # bdb.BdbQuit (pdb's quit), KeyboardInterrupt: as they are
        t.error = exc
    t.done = True


def _threads_of_block(launch, block, bid):
    bx, by, bz = launch.blockdim
    i32 = np.int32
    bid = tuple(i32(v) for v in bid)
    xs, ys, zs = ([i32(v) for v in range(n)] for n in (bx, by, bz))
    return [SimThread(launch, block, (x, y, z), bid) for z in zs for y in ys for x in xs]


#: modules pdb does not stop in while stepping through a kernel (the simulator's own frames)
SKIP = ["pykern.sim", "pykern.sim.*", "numpy", "numpy.*"]


def open_pdb(frame) -> None:
    """pdb stopped at ``frame`` (a kernel's), stepping over the simulator's own frames: those
    below it on the stack are not traced (a kernel's end is not an event in them)."""
    import pdb

    debugger = pdb.Pdb(skip=SKIP)
    ours, f = [], frame.f_back
    while f is not None:  # found before tracing starts: afterwards every Python call is traced
        if debugger.is_skipped_module(f.f_globals.get("__name__")):
            ours.append(f)
        f = f.f_back
    debugger.set_trace(frame)
    for f in ours:
        f.f_trace = None


def _pdb_hook(*args, **kwargs):
    open_pdb(sys._getframe(1))


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
                with np.errstate(all="ignore"):  # wraparound is the semantics, not an accident
                    if uses_barrier:
                        _run_block_barriers(kernel, codes, args, threads)
                        continue
                    for t in threads:
                        _run_one(kernel, args, t, codes)
                        if t.error is not None:
                            raise t.error


def _run_block_barriers(kernel, codes, args, threads) -> None:
    runnable = threads
    while runnable:
        for t in runnable:
            _run_one(kernel, args, t, codes)
            if t.error is not None:
                raise t.error
        waiting = [t for t in threads if not t.done]
        if not waiting:
            return
        _check_convergence(threads, waiting)
        _barrier_results(waiting)
        runnable = waiting


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
