"""Two tiers of cpu code: a first kernel call in a process should not wait for O3.

O3 and its code generator take ~35 ms of saxpy's ~40 ms of LLVM time; a cheap pipeline
(always-inline, SROA, instcombine, simplifycfg: ``llvm_util.optimize_quick``) with the code
generator at level 0 takes ~4 ms. A kernel the compiler may tier gets that code first; the O3
build of the same linked module runs on a thread and replaces it in the loaded kernel
(``CpuKernel.adopt``) and in the ``Overload`` when it is done.

Both tiers compute the same bits: they compile one LLVM module, and every pass of either
pipeline rewrites only by LLVM IR's semantics. So only kernels whose IR leaves nothing to
the pipeline's or code generator's choice are tiered: no fast-math (``fastmath=True`` lets
LLVM reassociate differently per pipeline), no contraction (the cpu target emits none), no
half arithmetic; ``debug`` and ``opt < 2`` compile once as asked. Only loop-free kernels on
the fast path (no barrier, no wave operation) are tiered, so first-tier code costs a bounded
amount per thread; and a launch of more than ``MAX_FIRST_TIER_THREADS`` threads waits for O3.

When the O3 build starts: where its result is stored (the disk cache is on), as soon as the
kernel is loaded (after its first launch, or ``FIRST_LAUNCH_GRACE``). Where nothing stores it
(``PYKERN_CACHE=off``, or a kernel the cache cannot key), only the process itself would run it:
then the build starts at the kernel's second launch (``BUILD_AT_LAUNCH``), a launch too big for
first-tier code, or a read of ``llvm_ir`` -- a script that launches a kernel once never builds
it, and its interpreter does not wait for a build whose result would be thrown away at exit (a
build that has started cannot be stopped: its thread is not a daemon, LLVM must not be running
while the interpreter is torn down around it).

What never sees first-tier code: the disk cache (the compiler tiers only compiles that store
nowhere; a first-tier artifact refuses to be pickled) and whoever reads its ``llvm_ir``
(``inspect_llvm``/``inspect_asm``: the property waits for O3's). The in-process reuse map
holds the first-tier artifact until its O3 build replaces it, so that a notebook cell run
again at once reuses the kernel. ``PYKERN_TIERS=off`` compiles O3 at once.

Example::

    PYKERN_TIERS=off python bench.py      # steady-state timings never run first-tier code
"""

from __future__ import annotations

import dataclasses
import re
import threading
import weakref

from pykern.codegen.artifact import KernelArtifact
from pykern.core import settings

#: a launch of more threads than this waits for the O3 code: first-tier saxpy is 4-7x slower
#: per thread (2.9 vs 0.4 ms at 2^20 threads, 61 vs 3.3 ms at 2^23), so past this size the
#: slower code would cost more than the ~35 ms the first tier saves
MAX_FIRST_TIER_THREADS = 1 << 20
#: seconds an O3 build waits, on its thread, for the first launch of its first-tier code to end
#: before it begins: the build's own start holds the GIL and takes a core, which the first
#: launch of a process (its argument packing, its worker threads) would wait on -- ~2.5 ms of a
#: ~44 ms first call. A compile that is not launched at once (``compile()``, a cache warm-up)
#: starts its build after this long anyway.
FIRST_LAUNCH_GRACE = 0.05

#: the launch of a kernel whose O3 build nothing stores at which that build starts (the first
#: launch of a process may be its last: a one-shot script does not pay for code it never runs)
BUILD_AT_LAUNCH = 2

class Abandoned(Exception):
    """An O3 build ended early: the interpreter exits and nothing would keep its result."""


#: set when the interpreter starts to shut down (before it waits for the build threads)
_shutting_down = False


def _at_shutdown() -> None:
    global _shutting_down
    _shutting_down = True


try:  # the hook concurrent.futures uses: called before non-daemon threads are joined
    threading._register_atexit(_at_shutdown)
except (AttributeError, RuntimeError):  # pragma: no cover - another Python, or already exiting
    pass

#: tier-two builds not finished, for a forked child (which has none of their threads)
_pending: "weakref.WeakSet[Job]" = weakref.WeakSet()


def enabled() -> bool:
    """``PYKERN_TIERS`` (default on)."""
    return settings.get("PYKERN_TIERS")


def eligible(lowered, text: str, thread_loops: str) -> bool:
    """Whether ``lowered`` (its module ``text``) may run first-tier code: options that leave
    nothing to the pipeline, no half arithmetic (rounded after each operation by the code
    generator: not left to two code generators to agree on), and no loop in any function but
    ``thread_loops`` (the fast path's loops over the block's threads)."""
    o = lowered.options
    return (o.opt >= 2 and not o.fastmath and not o.debug and _HALF.search(text) is None
            and not any(_has_cycle(f) for f in lowered.llmodule.functions if f.blocks and f.name != thread_loops))


_HALF = re.compile(r"\bhalf\b")


def _successors(block):
    term = block.terminator
    if term is None:
        return []
    out = [op for op in term.operands if hasattr(op, "terminator")]
    out += [b for _, b in getattr(term, "cases", ())]
    default = getattr(term, "default", None)
    return out + ([default] if default is not None else [])


def _has_cycle(fn) -> bool:
    """True if ``fn``'s control flow has a loop (an edge back to a block on the DFS path)."""
    state = {}  # id(block) -> 1 on the path, 2 finished
    for root in fn.blocks[:1]:
        stack = [(root, iter(_successors(root)))]
        state[id(root)] = 1
        while stack:
            block, succ = stack[-1]
            nxt = next(succ, None)
            if nxt is None:
                state[id(block)] = 2
                stack.pop()
            elif state.get(id(nxt)) == 1:
                return True
            elif id(nxt) not in state:
                state[id(nxt)] = 1
                stack.append((nxt, iter(_successors(nxt))))
    return False


class FirstTierArtifact(KernelArtifact):
    """A cpu artifact holding first-tier code; its ``tier_two`` job builds the O3 artifact.
    ``llvm_ir`` is O3's once that is built (read waits for it)."""

    @property
    def llvm_ir(self) -> str:
        final = self.tier_two.wait()
        return final.llvm_ir if final is not None else self.__dict__["_first_ir"]

    @llvm_ir.setter
    def llvm_ir(self, text: str) -> None:  # the dataclass __init__'s assignment
        self.__dict__["_first_ir"] = text

    @property
    def first_tier_ir(self) -> str:
        """The first tier's own optimised IR."""
        return self.__dict__["_first_ir"]

    def __reduce__(self):
        raise TypeError("a first-tier cpu artifact is never stored (its O3 build is)")


def first_tier(art: KernelArtifact, build_o3) -> FirstTierArtifact:
    """``art`` (first-tier code) as a :class:`FirstTierArtifact` whose job makes the O3
    artifact with ``build_o3() -> (llvm_ir, object)``; the job starts with ``Job.start``."""
    fields = {f.name: getattr(art, f.name) for f in dataclasses.fields(KernelArtifact)}
    first = FirstTierArtifact(**fields)
    object.__setattr__(first, "tier_two", Job(fields, build_o3))
    return first


class Job:
    """The O3 build of one first-tier artifact, on its own thread."""

    def __init__(self, fields: dict, build_o3):
        self._fields = fields
        self._build = build_o3
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._then: list = []
        self._ended = False  # the callback lists were taken: later ones are called at once
        self.final = None  # the O3 KernelArtifact, once built (None if the build failed)
        self.error = None
        self._started = False
        self._go = threading.Event()  # set when the first launch of the first-tier code ended
        #: whether the result is stored (the disk cache): then the build starts with the kernel
        self.stored = True

    def _checkpoint(self) -> None:
        """Between the build's stages: an interpreter shutting down ends a build whose result
        nothing stores (a stage itself, inside LLVM, cannot be stopped)."""
        if _shutting_down and not self.stored:
            raise Abandoned("the interpreter is exiting and nothing stores this build")

    def go(self) -> None:
        """Let the build begin now rather than after ``FIRST_LAUNCH_GRACE``."""
        self._go.set()

    def start(self) -> None:
        """Build on a thread (not a daemon: the interpreter's exit waits for it rather than
        stopping it inside LLVM)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        _pending.add(self)
        threading.Thread(target=self._run, name="pykern-tier2").start()

    def _run(self) -> None:
        self._go.wait(FIRST_LAUNCH_GRACE)
        try:
            ir_text, obj = self._build(checkpoint=self._checkpoint)
            final = KernelArtifact(**{**self._fields, "llvm_ir": ir_text, "binary": obj})
        except BaseException as e:  # first-tier code stays: it computes the same results
            self.error = e
            final = None
        self._finish(final)

    def _finish(self, final) -> None:
        with self._lock:
            self.final, self._ended = final, True
            then, self._then = self._then, []
        for fn in then:
            try:
                fn(final)
            except Exception:  # e.g. the O3 object did not load: that kernel keeps its code
                pass
        self._done.set()
        _pending.discard(self)

    def when_done(self, fn, first: bool = False) -> None:
        """Call ``fn(final)`` when the build ends (at once if it has): ``final`` is the O3
        artifact, or None if the build failed. Called before ``wait`` returns; ``first``:
        before the callbacks registered so far (swapping the code before storing it)."""
        with self._lock:
            if not self._ended:
                self._then.insert(0, fn) if first else self._then.append(fn)
                return
        fn(self.final)

    def done(self) -> bool:
        return self._done.is_set()

    def started(self) -> bool:
        return self._started

    def wait(self, timeout=None):
        """The O3 artifact (None if its build failed or never ran in this process)."""
        self._go.set()
        if not self._started:
            self.start()
        self._done.wait(timeout)
        return self.final


def guard_big_launches(kernel, job: Job) -> None:
    """Until ``job`` is done, a launch of ``kernel`` over more than
    ``MAX_FIRST_TIER_THREADS`` threads waits for the O3 code; a build not started yet (nothing
    stores its result) starts at the ``BUILD_AT_LAUNCH``-th launch."""
    ref = weakref.ref(kernel)
    cls_run = type(kernel).run
    launches = [0]

    def run(grid, block, dynamic_shared, argbuf):
        k = ref()
        if not job.done() and grid[0] * grid[1] * grid[2] * block[0] * block[1] * block[2] > MAX_FIRST_TIER_THREADS:
            job.wait()
        launches[0] += 1
        if launches[0] >= BUILD_AT_LAUNCH and not job.started():
            job.start()  # this kernel runs again: its O3 code is worth building
        try:
            return cls_run(k, grid, block, dynamic_shared, argbuf)
        finally:
            job.go()

    kernel.run = run
    job.when_done(lambda _final: kernel.__dict__.pop("run", None), first=True)


def wait_all(timeout: float | None = None) -> bool:
    """Wait for every O3 build of this process in flight (e.g. before reading the disk
    cache's entries or stats, which it writes); False if one is still running at ``timeout``."""
    import time

    end = None if timeout is None else time.monotonic() + timeout
    for job in list(_pending):
        if not job._done.wait(None if end is None else max(0.0, end - time.monotonic())):
            return False
    return True


def _after_fork_in_child() -> None:
    """A forked child has none of the build threads: its first-tier kernels keep their code."""
    for job in list(_pending):
        with job._lock:  # (fork waited for every lock: this one is free)
            job._ended = True
            job._then = []
        job._done.set()
    _pending.clear()
