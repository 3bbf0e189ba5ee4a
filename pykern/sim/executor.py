"""Running a kernel on the sim target: its threads, one at a time, block after block.

Everything runs in the caller's own thread (pdb there is the program's plain pdb).
A kernel without barriers runs each thread to its end in turn. In a kernel with
barriers every function that reaches one is a generator (``codegen_py``): each
thread of a block runs up to its next barrier, where it yields; when every thread
of the block waits at the same barrier (the same source line) they go on, in order;
threads waiting at different barriers is divergence, reported with the lines and
threads (threads that have ended count as arrived).

Example::

    >>> from pykern.sim.executor import thread_name
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
    __slots__ = ("launch", "block", "tid", "bid", "bdim", "gdim", "linear", "gen", "site", "kind", "site_id",
                 "args", "wval", "result", "done", "error")

    def __init__(self, launch, block, tid, bid):
        self.launch, self.block = launch, block
        self.tid, self.bid = tid, bid  # tuples of np.int32
        self.bdim, self.gdim = launch.bdim, launch.gdim
        bx, by, _ = launch.blockdim
        self.linear = int(tid[0]) + bx * (int(tid[1]) + by * int(tid[2]))
        self.gen = None  # the kernel's generator when the block has barriers or wave ops
        # where it waits: kind ("syncthreads", "count", ..., "grid", or a wave op's name), the
        # site's id, its (file, line) and operands
        self.site = self.kind = self.site_id = self.args = self.result = self.error = None
        self.wval = 0  # the bits of the value it shuffled last (what another lane's shuffle reads)
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
            t.kind, t.site_id, *t.args = yielded
            t.site = _site_of(t.gen)
            if t.kind in runtime.SHUFFLES:
                t.wval = runtime.value_bits(t.args[2])
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


def run(kernel, codes, args, griddim, blockdim, sharedmem, suspends: bool, warpsize: int = 64) -> None:
    """Run ``kernel`` (a generated Python function) over the grid, one thread at a time.
    ``suspends``: the kernel reaches barriers or wave ops (it is a generator)."""
    # breakpoint() in a kernel opens pdb at the kernel's line, stepping over the simulator's
    # frames -- unless the program chose its own hook (PYTHONBREAKPOINT, sys.breakpointhook)
    own = sys.breakpointhook is sys.__breakpointhook__ and not os.environ.get("PYTHONBREAKPOINT")
    if own:
        sys.breakpointhook = _pdb_hook
    try:
        with np.errstate(all="ignore"):  # wraparound is the semantics, not an accident
            _run_grid(kernel, codes, args, griddim, blockdim, sharedmem, suspends, warpsize)
    finally:
        if own:
            sys.breakpointhook = sys.__breakpointhook__
        runtime.STATE.thread = None


def _blocks(griddim):
    gx, gy, gz = griddim
    return [(bx, by, bz) for bz in range(gz) for by in range(gy) for bx in range(gx)]


def _run_grid(kernel, codes, args, griddim, blockdim, sharedmem, suspends, warpsize) -> None:
    launch = Launch(griddim, blockdim, warpsize)
    if not suspends:
        for bid in _blocks(griddim):
            for t in _threads_of_block(launch, Block(sharedmem), bid):
                _run_one(kernel, args, t, codes)
                if t.error is not None:
                    raise t.error
        return
    # each block is a generator that pauses when all its threads wait at a grid sync; without
    # grid syncs each runs to its end in turn, with them the blocks take turns between syncs
    # (a cooperative launch: every block is resident)
    pending = [_block_steps(kernel, codes, args, _threads_of_block(launch, Block(sharedmem), bid))
               for bid in _blocks(griddim)]
    while pending:
        waiting, ended, site = [], 0, None
        for steps in pending:
            at = next(steps, None)
            if at is None:
                ended += 1
            else:
                waiting.append(steps)
                site = at
        if waiting and ended:
            f, line = site
            raise LaunchError(f"{f}:{line} (cg.this_grid().sync()): {len(waiting)} of {len(waiting) + ended} blocks "
                              f"wait there but {ended} block(s) ended without reaching it; every block of a "
                              "cooperative launch must reach each grid sync")
        pending = waiting


def _block_steps(kernel, codes, args, threads):
    """Run one block (a generator): each runnable thread in order up to its next barrier or wave
    op; then complete the wave ops (per wave, the lanes waiting at one site) and run their lanes
    on, or, when no lane waits at a wave op, pass the block's barrier (yielding its (file, line)
    first when it is a grid sync) -- the cpu target's scheduler, step for step."""
    runnable = threads
    while True:
        for t in runnable:
            _run_one(kernel, args, t, codes)
            if t.error is not None:
                raise t.error
        runnable = _complete_waves(threads)
        if runnable:
            continue
        waiting = [t for t in threads if not t.done]
        if not waiting:
            return
        _check_convergence(threads, waiting)
        if waiting[0].kind == "grid":
            yield waiting[0].site
        _barrier_results(waiting, len(threads))
        runnable = waiting


def _complete_waves(threads) -> list:
    """Complete the wave op of each wave's first lane that waits at one, for every lane waiting
    at that site; those lanes, in order (empty when no lane waits at a wave op)."""
    ws = threads[0].launch.warpsize
    out = []
    for w0 in range(0, len(threads), ws):
        wave = threads[w0:w0 + ws]
        first = next((t for t in wave if not t.done and t.kind in runtime.WAVE_OPS), None)
        if first is None:
            continue
        lanes = [t for t in wave if not t.done and t.site_id == first.site_id and t.kind in runtime.WAVE_OPS]
        active = ballot = 0
        for t in lanes:
            bit = 1 << (t.linear - w0)
            active |= bit
            if first.kind not in runtime.SHUFFLES and (len(t.args) < 3 or t.args[2]):
                ballot |= bit
        for t in lanes:
            t.result = runtime.wave_result(t, wave, active, ballot)
        out += lanes
    return out


def _check_convergence(threads, waiting) -> None:
    sites = {}
    for t in waiting:
        sites.setdefault(t.site_id, []).append(t)
    if len(sites) == 1:  # threads that have ended count as arrived, as on the GPUs
        return
    ended = [t.name for t in threads if t.done]
    lines = [f"  {len(ts)} thread(s) wait at {ts[0].site[0]}:{ts[0].site[1]} (first: {ts[0].name})"
             for ts in sites.values()]
    if ended:
        lines.append(f"  {len(ended)} thread(s) have ended (first: {ended[0]})")
    raise LaunchError("barrier divergence: the threads of a block do not all reach the same barrier\n"
                      + "\n".join(lines))


def _barrier_results(waiting, nthreads: int) -> None:
    kind = waiting[0].kind
    n = sum(bool(t.args[0]) for t in waiting) if kind in ("count", "and", "or") else 0
    # syncthreads_and: true when every thread of the block said so (one that ended did not)
    res = {"count": np.int32(n), "and": np.int32(n == nthreads), "or": np.int32(n > 0)}.get(kind)
    for t in waiting:
        t.result = res
