"""Runs cpu-target artifacts: loads their object code into an
MCJIT engine per object and launches grids with blocks spread over all cores.

The compiled entry is ``void run(ptr args, ptr ctx, i64 first, i64 last)``
(see ``codegen/cpu/target.py``). ``launch`` splits the blocks into chunks and calls
it from a pool of worker threads (ctypes releases the GIL during the call), checks the
context's error record afterwards and raises ``KernelRuntimeError``. On
Ctrl-C the context's cancel flag is set, which the compiled code checks
between blocks and in every loop (``Target.loop_poll``): a launch on the pool
sets it when ``KeyboardInterrupt`` reaches the waiting main thread; a launch
running on the main thread itself (one block, or few threads) cannot see the
interrupt until it returns, so a watcher thread woken through
``signal.set_wakeup_fd`` sets it (see ``_SigintWatch``).

Example::

    k = load(artifact)
    k.launch((64, 1, 1), (256, 1, 1), 0, argbuf)
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
import time
import weakref

from pykern.core import cpu_context
from pykern.core.abi import ERROR_KINDS, UNSIGNED_INDEX
from pykern.core.errors import KernelRuntimeError, LaunchError, LaunchValueError

#: shared memory (static + dynamic) per block (``core/cpu_context.py``: what the compiled runner allocates)
MAX_SHARED_BYTES = cpu_context.LDS_BYTES
#: blocks*threads below which a launch runs on the calling thread (no pool hand-off)...
INLINE_WORK = 1 << 15
#: ...unless its first block took so long that the others would take longer than this (seconds)
#: on this thread: then the pool runs them. Threads that loop (a reduction's chunk per thread, a
#: grid-stride loop) make a few blocks a lot of work; the pool's hand-off costs ~20-50 us.
POOL_AFTER = 200e-6
#: cooperative launches: the cpu target's "resident threads per compute unit"
#: (one core plays a GPU CU holding 2048 threads), and a cap on OS threads
COOP_THREADS_PER_CORE = 2048
COOP_MAX_BLOCKS = 256


def max_cooperative_blocks(block_threads: int) -> int:
    """How many blocks of ``block_threads`` threads a cooperative launch may
    have on the cpu target (numba's ``max_cooperative_grid_blocks``): like a
    GPU's resident-block limit, cores x blocks per core, at most 256."""
    per_core = max(1, COOP_THREADS_PER_CORE // max(1, int(block_threads)))
    return max(1, min(COOP_MAX_BLOCKS, _NCPU * per_core))


def launch_check(artifact, name: str):
    """``check(grid, block, dynamic_shared)``, the one check of a cpu launch configuration
    (``grid``/``block`` normalised 3-tuples): a ``LaunchValueError`` naming kernel ``name`` for
    more threads per block than ``artifact`` allows, more shared memory (static + dynamic) than a
    block's LDS, more blocks than the compiled loop counts, or more than a cooperative launch
    keeps resident. Limits are read once, here (the dispatcher checks every launch).

    >>> from types import SimpleNamespace as NS
    >>> check = launch_check(NS(max_block_size=256, static_shared_bytes=0), "k")
    >>> check((4, 1, 1), (512, 1, 1), 0)
    Traceback (most recent call last):
    pykern.core.errors.LaunchValueError: k: block (512, 1, 1) of 512 threads exceeds the maximum of 256 threads this kernel allows
    """
    limit, static = artifact.max_block_size, artifact.static_shared_bytes
    max_dynamic = MAX_SHARED_BYTES - static
    cooperative = getattr(artifact, "cooperative", False)

    def refuse(grid, block, dynamic_shared):
        threads = block[0] * block[1] * block[2]
        if threads > limit:
            raise LaunchValueError(f"{name}: block {block} of {threads} threads exceeds the maximum of {limit} threads "
                                   "this kernel allows")
        if dynamic_shared > max_dynamic:
            raise LaunchValueError(
                f"{name}: {dynamic_shared} bytes of dynamic shared memory plus {static} bytes of static shared memory "
                f"exceed the {MAX_SHARED_BYTES} bytes of shared memory (LDS) a block may use")
        if dynamic_shared < 0:
            raise LaunchValueError(f"{name}: dynamic shared memory size must be >= 0 bytes, got {dynamic_shared}")
        blocks = grid[0] * grid[1] * grid[2]
        if blocks >= _MAX_BLOCKS:
            raise LaunchValueError(f"{name}: grid {grid} has too many blocks")
        if cooperative and blocks > max_cooperative_blocks(threads):
            raise LaunchValueError(
                f"{name}: grid {grid} has {blocks} blocks, but a kernel that calls cg.this_grid().sync() runs as a "
                f"cooperative launch, and at most {max_cooperative_blocks(threads)} blocks of {threads} threads can "
                "be resident at once (see max_cooperative_grid_blocks)")

    def check(grid, block, dynamic_shared):
        # one test for a launch that is fine (every launch of the dispatcher passes here); ``refuse`` says what is not
        if (block[0] * block[1] * block[2] > limit or not 0 <= dynamic_shared <= max_dynamic
                or grid[0] * grid[1] * grid[2] >= _MAX_BLOCKS or cooperative):
            refuse(grid, block, dynamic_shared)

    return check


#: blocks a launch may have: the compiled block loop counts them in an int64
_MAX_BLOCKS = 1 << 62


def launcher(kernel: "CpuKernel", nargs: int, kernel_name: str):
    """``launch(values, grid, block, stream, shared)``: a launch of ``kernel`` with ``nargs``
    values, in its steps -- the configuration checked (``launch_check``, the one check), the
    values flattened and packed at the artifact's parameter offsets (``kernargs``), the blocks
    run (``CpuKernel.run``). What an overload launches with on "cpu"
    (``backends.CpuBackend.plan``); ``launch.packer`` is its Packer (fast paths pack with it)."""
    import numpy as np

    from pykern.runtime.kernargs import Packer, array_arguments, get_flattener

    art = kernel.artifact
    params = art.params
    check = launch_check(art, kernel_name)
    flatten = get_flattener(params, nargs)
    pack = Packer(params, max(8, art.kernarg_size))  # the compiled runner reads at least 8 bytes
    run = kernel.run
    arrays = array_arguments(params)
    ndarray = np.ndarray
    # sanitize=: the checker names the launch's arrays and tracks device arrays' writes
    sanitized = functools.partial(kernel.run_sanitized, kernel_name=kernel_name) if art.sanitize else None

    def launch(values, grid, block, stream, shared):
        check(grid, block, shared)
        for i in arrays:  # device memory of another target would be garbage here (numpy's is host memory)
            v = values[i]
            if type(v) is not ndarray and getattr(v, "target", "cpu") != "cpu":
                raise LaunchError(f"{kernel_name}: argument {i + 1} is a HIP device array; the cpu target cannot read it")
        if sanitized is not None:
            sanitized(grid, block, shared, pack(flatten(values)), values)
            return
        run(grid, block, shared, pack(flatten(values)))

    launch.packer = pack
    return launch


_CTYPES = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "ptr": ctypes.c_void_p}


class LaunchCtx(ctypes.Structure):
    """Shared by all blocks of one launch: ``core/cpu_context.py``'s fields, which the compiled code reads."""

    _fields_ = [(name, _CTYPES[kind] if n == 1 else _CTYPES[kind] * n) for name, kind, n in cpu_context.FIELDS]


# (ctypes lays a structure out as C does, which is how cpu_context computes the offsets codegen uses)
assert ctypes.sizeof(LaunchCtx) == cpu_context.SIZE
assert all(getattr(LaunchCtx, f).offset == off for f, off in cpu_context.OFFSETS.items())

_RUNFN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)

_lock = threading.Lock()
#: loaded kernels by symbol, while something (an Overload, a launch in flight)
#: references them: overloads that share an artifact share its library, and
#: the last reference gone unloads it (see ``_Library``)
_loaded: "weakref.WeakValueDictionary[str, CpuKernel]" = weakref.WeakValueDictionary()
_NCPU = os.cpu_count() or 1
#: launches whose workers outlived a double Ctrl-C: their buffers must stay valid
_abandoned: list = []
_pool = None
_pool_pid = 0


def _new_engine():
    # One MCJIT engine per object: adding a second object to an engine that
    # was already finalised crashed (bad relocations) in llvmlite 0.50.
    # An engine costs ~0.2 ms, so this is cheap.
    # The engine owns (and frees with itself) the target machine it is given:
    # never the process-wide one of codegen, since engines are freed with their kernels.
    from pykern.core.llvm_host import llvm, new_host_target_machine

    ll = llvm()
    return ll.create_mcjit_compiler(ll.parse_assembly(""), new_host_target_machine())


class _Batch:
    """The chunks of one launch handed to the workers: counts them down and keeps the
    first exception one raised; ``done`` is set when the last has run (or was skipped
    after ``cancelled`` was set)."""

    __slots__ = ("left", "lock", "done", "cancelled", "error")

    def __init__(self, n: int):
        self.left, self.cancelled, self.error = n, False, None
        self.lock = threading.Lock()
        # an Event, not a bare lock: a Ctrl-C arriving right after a lock was acquired would
        # leave it held, and the wait that follows the cancel would never end
        self.done = threading.Event()

    def run(self, fn, args) -> None:
        try:
            if not self.cancelled:
                fn(*args)
        except BaseException as e:  # noqa: BLE001  (re-raised by the launching thread)
            if self.error is None:
                self.error = e
        finally:
            with self.lock:
                self.left -= 1
                last = self.left == 0
            if last:
                self.done.set()

    def wait(self) -> None:
        """Until every chunk has run; ``KeyboardInterrupt`` reaches the caller meanwhile."""
        self.done.wait()


class _Workers:
    """``n`` daemon threads running launch chunks from one queue.

    Not ``concurrent.futures``: importing it (and the ``logging`` it pulls in) cost the first
    launch of a process ~3.5 ms of interpreter time, and its futures ~10 µs a chunk; a launch
    needs only "run these, tell me when all are done". Daemon threads, so that a kernel that
    outlived a double Ctrl-C (``_abandoned``) does not keep the interpreter from exiting."""

    def __init__(self, n: int):
        import _queue  # the C queue: ``queue`` would import ``heapq`` and more

        self._queue = _queue.SimpleQueue()
        for i in range(n):
            threading.Thread(target=self._work, name=f"pykern-cpu_{i}", daemon=True).start()

    def _work(self) -> None:
        get = self._queue.get
        while True:
            batch, fn, args = get()
            batch.run(fn, args)

    def submit_all(self, fn, argsets) -> _Batch:
        batch = _Batch(len(argsets))
        put = self._queue.put
        for args in argsets:
            put((batch, fn, args))
        return batch


def _get_pool() -> _Workers:
    global _pool, _pool_pid
    # a forked child inherits the pool object but not its threads: make a new one
    if _pool is None or _pool_pid != os.getpid():
        _pool = _Workers(_NCPU)
        _pool_pid = os.getpid()
    return _pool


def load(artifact) -> "CpuKernel":
    """A launchable kernel from a cpu ``KernelArtifact`` (object code added to
    a JIT engine once per symbol; no LLVM optimisation re-run).

    Example: ``load(get_target("cpu").compile(mod)).launch(grid, block, 0, buf)``"""
    if artifact.target != "cpu":
        raise LaunchError(f"artifact for target {artifact.target!r} cannot run on the cpu")
    k = _loaded.get(artifact.name)
    if k is not None:
        return k
    _check_code(artifact)
    _check_host(artifact)
    if artifact.shared_object:
        return _load_shared_object(artifact)
    from pykern.core.llvm_host import LLVM_LOCK, llvm

    with _lock, LLVM_LOCK:
        k = _loaded.get(artifact.name)
        if k is None:
            ll = llvm()
            eng = _new_engine()
            eng.add_object_file(ll.ObjectFileRef.from_data(bytes(artifact.binary)))
            eng.finalize_object()
            addr = eng.get_function_address(artifact.name)
            if not addr:
                raise LaunchError(f"internal error: symbol {artifact.name} not found in the cpu object")
            k = CpuKernel(artifact, _RUNFN(addr))
            k._engine = eng  # keeps the code alive
            _loaded[artifact.name] = k
        return k


def _check_code(artifact) -> None:
    """Refuse code the loader or LLVM would crash on (a damaged artifact from a cache)."""
    from pykern.core.hostinfo import elf_problem

    problem = elf_problem(artifact.shared_object, 3) if artifact.shared_object else elf_problem(artifact.binary, 1)
    if problem:
        raise LaunchError(f"cannot load the cpu kernel {artifact.name}: its code is {problem}")


def _check_host(artifact) -> None:
    """Refuse code built for another host (an artifact pickled elsewhere): its instructions may not exist here."""
    from pykern.core.hostinfo import cpu_identity

    if artifact.host_cpu and artifact.host_cpu != cpu_identity():
        raise LaunchError(
            f"cpu artifact was compiled for another host ({artifact.host_cpu}); recompile it here ({cpu_identity()})"
        )


def _load_shared_object(artifact) -> "CpuKernel":
    """dlopen the artifact's linked shared library: no LLVM in the process, so a
    kernel from the disk cache is ready in well under a millisecond."""
    with _lock:
        k = _loaded.get(artifact.name)
        if k is not None:
            return k
        lib = _Library.open(artifact.name, artifact.shared_object)
        try:
            addr = ctypes.cast(getattr(lib.cdll, artifact.name), ctypes.c_void_p).value
        except AttributeError as e:
            lib.close()
            raise LaunchError(f"internal error: cannot load the cpu kernel {artifact.name}: {e}") from None
        k = CpuKernel(artifact, _RUNFN(addr))
        k._engine = lib  # keeps the code mapped while the kernel lives
        weakref.finalize(k, lib.close).atexit = False  # the process unmaps everything at exit anyway
        _loaded[artifact.name] = k
        return k


def _fd_error(e: OSError, what: str) -> LaunchError:
    import errno

    if e.errno in (errno.EMFILE, errno.ENFILE):
        return LaunchError(f"cannot load the cpu kernel {what}: {e.strerror} (the process has reached its limit of "
                           "open files; raise it with `ulimit -n` or close files)")
    if e.errno == errno.ENOMEM:
        return LaunchError(f"cannot load the cpu kernel {what}: out of memory ({e.strerror})")
    return LaunchError(f"cannot load the cpu kernel {what}: {e}")


class _Library:
    """One dlopen'ed kernel library, unloaded (``dlclose``) by ``close`` when the
    last kernel using it is collected. A launch holds its kernel for its whole
    duration (and a launch abandoned by a double Ctrl-C keeps it forever), so
    the code is never unmapped under a running block.

    The library is written to an anonymous memory file (nothing on disk to clean
    up or race on) and loaded through its ``/proc/self/fd`` path; the descriptor
    is closed right after ``dlopen`` (the loader's mappings keep the file alive),
    so live kernels cost no file descriptors. glibc identifies a loaded library
    by the *name* it was opened with before looking at the file, and the fd
    number will be reused while the library stays loaded: each load therefore
    spells the path differently, a serial number written in ``./`` and ``/``
    steps the kernel ignores (``/proc/self/fd/.//./7`` is ``/proc/self/fd/7``)."""

    _serial = 0  # loads so far in this process (a forked child continues the count)

    def __init__(self, cdll, path):
        self.cdll = cdll
        self.path = path
        self._closed = False

    @classmethod
    def open(cls, name: str, data: bytes) -> "_Library":
        try:
            fd = os.memfd_create(name, getattr(os, "MFD_CLOEXEC", 1))
        except OSError as e:
            raise _fd_error(e, name) from None
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            except OSError as e:
                raise _fd_error(e, name) from None
            _Library._serial += 1  # under _lock
            steps = "".join("./" if bit == "1" else "/" for bit in bin(_Library._serial)[2:])
            path = f"/proc/self/fd/{steps}{fd}"
            try:
                cdll = ctypes.CDLL(path)
            except OSError as e:  # dlopen's message, no errno
                import errno

                text = str(e)
                for code in (errno.EMFILE, errno.ENFILE, errno.ENOMEM):
                    if os.strerror(code) in text:
                        raise _fd_error(OSError(code, os.strerror(code)), name) from None
                raise LaunchError(f"internal error: cannot load the cpu kernel {name}: {e}") from None
        finally:
            os.close(fd)  # the loader's mappings keep the file alive
        return cls(cdll, path)

    def close(self):
        # runs from a finalizer, on whatever thread collected the kernel: no
        # pykern locks here (that thread may hold them); dlclose has its own
        if self._closed:
            return
        self._closed = True
        import _ctypes

        _ctypes.dlclose(self.cdll._handle)
        self.cdll = None


def _dim3(v, what):
    if type(v) is tuple and len(v) == 3 and all(type(x) is int and 0 < x < 0x80000000 for x in v):
        return v  # the common, already normalised case
    if isinstance(v, int):
        v = (v,)
    v = tuple(int(x) for x in v)
    if not 1 <= len(v) <= 3:
        raise LaunchValueError(f"{what} must have 1 to 3 dimensions, got {v}")
    v = v + (1,) * (3 - len(v))
    if any(x < 1 for x in v):
        raise LaunchValueError(f"{what} dimensions must be >= 1, got {v}")
    if any(x > 0x7FFFFFFF for x in v):
        raise LaunchValueError(f"{what} dimension too large: {v}")
    return v


_MAIN_IDENT = threading.main_thread().ident
_get_ident = threading.get_ident
_perf_counter = time.perf_counter


class _SigintWatch:
    """Cancels the launch running on the main thread when SIGINT arrives.

    While the main thread is inside the compiled code, Python only notes the
    signal; its C handler also writes the signal number to the wakeup fd,
    which a daemon thread here reads: it sets the cancel flag of the launch
    in ``ctx``, the kernel stops at its next loop poll, the call returns, and
    Python raises ``KeyboardInterrupt`` as usual. Only when SIGINT still has
    Python's default handler (a user handler may not want the launch cut
    short), and only when no one else (e.g. asyncio) owns the wakeup fd: then
    the watcher stays off and such launches end before the interrupt shows."""

    def __init__(self):
        self.started = False
        self.ctx = None
        self._wfd = -1  # our write end, inherited by a forked child

    def start(self):
        self.started = True  # once per process (a forked child starts its own)
        self.ctx = None
        try:  # the C module signal.py wraps: importing signal.py (its enums) costs ~1.3 ms per process
            import _signal as signal
        except ImportError:  # pragma: no cover - another Python
            import signal

        if not hasattr(signal, "set_wakeup_fd") or threading.get_ident() != _MAIN_IDENT:
            return
        # a pipe, not a socketpair: importing socket would cost the warm-start path ~7 ms
        rfd, wfd = os.pipe()
        os.set_blocking(wfd, False)
        try:
            old = signal.set_wakeup_fd(wfd, warn_on_full_buffer=False)
        except (ValueError, OSError):
            os.close(rfd)
            os.close(wfd)
            return
        if old not in (-1, self._wfd):  # someone else listens: give it back
            signal.set_wakeup_fd(old)
            os.close(rfd)
            os.close(wfd)
            return
        self._wfd = wfd  # stays open: the wakeup fd of this process
        threading.Thread(target=self._loop, args=(rfd, signal), name="pykern-sigint", daemon=True).start()

    def _loop(self, rfd, signal):
        while True:
            try:
                data = os.read(rfd, 64)
            except InterruptedError:
                continue
            except OSError:
                return
            if not data:
                return
            ctx = self.ctx
            if ctx is not None and signal.SIGINT in data \
                    and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                ctx.cancel = 1

    def after_fork(self):
        global _MAIN_IDENT
        _MAIN_IDENT = threading.main_thread().ident
        self.started = False  # the watcher thread did not survive the fork


_watch = _SigintWatch()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_watch.after_fork)


def _after_fork_in_child():
    """Called by ``compiler``'s fork handler (which holds ``_lock`` across the
    fork): the pool's threads did not survive it."""
    global _pool, _pool_pid
    _pool, _pool_pid = None, 0


class CpuKernel:
    """A loaded cpu kernel; ``launch`` runs it."""

    def __init__(self, artifact, fn):
        self.artifact = artifact
        self.name = artifact.name
        self._fn = fn
        # the native calls of this kernel's fast paths (``native_guard.make_call``), which
        # ``adopt`` points at the O3 code; ``_ncall_fn`` is the entry they call
        self._ncalls: weakref.WeakSet = weakref.WeakSet()
        self._ncall_fn = fn
        # idle launch contexts: building one from tuples costs more than the
        # whole rest of a small launch (list.pop/append are atomic under the GIL)
        self._spare_ctx: list = []

    def adopt(self, artifact) -> None:
        """Run ``artifact``'s code from the next launch on: the O3 build of this kernel's
        first-tier code (``codegen/cpu/tiers.py``; the same symbol, parameters and runner).
        The old code stays loaded as long as the kernel: a launch may still be running it."""
        from pykern.core.llvm_host import LLVM_LOCK, llvm

        with _lock, LLVM_LOCK:
            eng = _new_engine()
            eng.add_object_file(llvm().ObjectFileRef.from_data(bytes(artifact.binary)))
            eng.finalize_object()
            addr = eng.get_function_address(artifact.name)
        if not addr:
            raise LaunchError(f"internal error: symbol {artifact.name} not found in the cpu object")
        self._retired = getattr(self, "_retired", []) + [self._engine]
        self._engine = eng
        self.artifact = artifact
        fn = _RUNFN(addr)
        if self._fn is self._ncall_fn:  # (not where a benchmark replaced ``_fn``)
            from pykern.runtime import native_guard

            for ncall in list(self._ncalls):
                native_guard.repoint_call(ncall, fn)
            self._ncall_fn = fn
        self._fn = fn

    def launch(self, grid, block, dynamic_shared: int, argbuf) -> None:
        """Run the kernel over ``grid`` blocks of ``block`` threads (3-tuples or
        ints); ``argbuf`` holds ``kernarg_size`` bytes packed at the
        ``FlatParam`` offsets. Raises ``LaunchError`` for a bad configuration
        and ``KernelRuntimeError`` for a debug bounds failure or a divergent
        barrier."""
        art = self.artifact
        grid = _dim3(grid, "grid")
        block = _dim3(block, "block")
        dynamic_shared = int(dynamic_shared or 0)
        launch_check(art, f"kernel {art.name}")(grid, block, dynamic_shared)
        if len(argbuf) < art.kernarg_size:
            raise LaunchError(f"argument buffer has {len(argbuf)} bytes, kernel needs {art.kernarg_size}")
        if len(argbuf) < 8 or not isinstance(argbuf, bytearray):
            argbuf = bytearray(bytes(argbuf).ljust(8, b"\0"))
        self.run(grid, block, dynamic_shared, argbuf)

    def max_cooperative_blocks(self, block, dynamic_shared: int = 0) -> int:
        """Blocks of ``block`` (1 to 3 extents) a cooperative launch of this kernel may have, as
        ``HipKernel.max_cooperative_blocks`` says on its device (shared memory does not limit
        residency on the cpu)."""
        threads = 1
        for d in block:
            threads *= int(d)
        return max_cooperative_blocks(threads)

    def run(self, grid, block, dynamic_shared: int, argbuf: bytearray) -> None:
        """``launch`` without the checks, for callers that made them once
        (the dispatcher): ``grid``/``block`` valid 3-tuples, ``argbuf`` a
        bytearray of at least max(8, kernarg_size) bytes."""
        if self.artifact.sanitize:
            return self.run_sanitized(grid, block, dynamic_shared, argbuf)
        buf = ctypes.c_char.from_buffer(argbuf)  # the packed bytes themselves, no copy
        nblocks = grid[0] * grid[1] * grid[2]
        try:
            ctx = self._spare_ctx.pop()
            ctx.cancel = 0  # a late Ctrl-C may have hit it after its launch ended
            ctx.grid[0], ctx.grid[1], ctx.grid[2] = grid
            ctx.block[0], ctx.block[1], ctx.block[2] = block
            ctx.dyn_shared = dynamic_shared
        except IndexError:
            ctx = LaunchCtx(grid, block, dynamic_shared)
        args_p = ctypes.addressof(buf)
        ctx_p = ctypes.addressof(ctx)
        if getattr(self.artifact, "cooperative", False):
            # (host) cooperative launch: every block on its own OS thread so that a
            # grid sync can wait for all of them; added for issue 13, kept apart
            # from the pool path on purpose
            ctx.gbar[0] = ctx.gbar[1] = ctx.gbar[2] = 0
            ctx.gbar[3] = nblocks
            self._run_cooperative(args_p, ctx_p, ctx, nblocks, (argbuf, buf))
        elif nblocks == 1 or _NCPU == 1 or nblocks * block[0] * block[1] * block[2] <= INLINE_WORK:
            # on this thread: if it is the main thread, Ctrl-C reaches the
            # kernel only through the watcher
            main = _get_ident() == _MAIN_IDENT
            if main:
                if not _watch.started:
                    _watch.start()
                _watch.ctx = ctx
            try:
                if nblocks == 1:
                    self._fn(args_p, ctx_p, 0, 1)
                else:
                    self._run_inline(args_p, ctx_p, ctx, nblocks, (argbuf, buf))
            finally:
                if main:
                    _watch.ctx = None
        else:
            self._run_pool(args_p, ctx_p, ctx, nblocks, _NCPU, (argbuf, buf))
        if ctx.error:
            self._raise(ctx, block)
        if not ctx.cancel:  # a cancelled launch may still have workers touching it
            self._spare_ctx.append(ctx)

    def run_sanitized(self, grid, block, dynamic_shared: int, argbuf: bytearray, args=(), kernel_name=None) -> None:
        """``run`` of a kernel compiled with ``sanitize=`` (``sanitizer.run``); ``args``: the launch's
        values (device arrays' unwritten bytes), ``kernel_name`` for the reports."""
        from pykern.runtime.cpu import sanitizer

        ctx = LaunchCtx(grid, block, dynamic_shared)
        main = _get_ident() == _MAIN_IDENT  # its blocks run on this thread: Ctrl-C through the watcher
        if main:
            if not _watch.started:
                _watch.start()
            _watch.ctx = ctx
        try:
            sanitizer.run(self, ctx, grid, block, dynamic_shared, argbuf, args, kernel_name)
        finally:
            if main:
                _watch.ctx = None

    def fixed_launch(self, grid, block, dynamic_shared: int, size: int):
        """``(body, namespace)`` for ``kernargs.compile_guarded``: run this
        kernel with one configuration already checked (normalised 3-tuples),
        packing ``{vals}`` straight into a ``size``-byte buffer; None when the
        launch needs the pool or its own threads (``run`` then).

        Each launch takes a spare (buffer, context) pair with its ctypes
        pointers made once: converting Python ints at the native call costs
        ~0.6 us of a ~2 us launch, building a context more."""
        nblocks = grid[0] * grid[1] * grid[2]
        if self.artifact.sanitize or getattr(self.artifact, "cooperative", False) or not (
                nblocks == 1 or _NCPU == 1 or nblocks * block[0] * block[1] * block[2] <= INLINE_WORK):
            return None
        spare: list = []
        assert LaunchCtx.cancel.offset == LaunchCtx.error.offset + 4 and LaunchCtx.error.offset % 8 == 0

        def new_slot():
            buf, ctx = ctypes.create_string_buffer(size), LaunchCtx(grid, block, dynamic_shared)
            # ``ctx.error`` and ``ctx.cancel`` as one int64: one read tells a launch that ended well
            both = ctypes.c_int64.from_buffer(ctx, LaunchCtx.error.offset)
            return buf, ctx, ctypes.c_void_p(ctypes.addressof(buf)), ctypes.c_void_p(ctypes.addressof(ctx)), both

        # ``run`` inline (a Python call is ~5% of the launch); ``_fn`` read per call, a benchmark stubs it
        call = "_k._fn(args_p, ctx_p, _first, _last)" if nblocks == 1 else "_k._run_inline(args_p, ctx_p, ctx, _n, slot)"
        ncall, count_down = None, False
        if nblocks == 1:  # one builtin call instead of ctypes converting four arguments (~0.3 us less)
            from pykern.runtime import native_guard

            ncall = native_guard.make_call(self._fn, 0, 1) if self._fn is self._ncall_fn else None
            if ncall is not None:
                self._ncalls.add(ncall)
                call = f"_ncall(buf, ctx) if _k._fn is _k._ncall_fn else {call}"
            count_down = ncall is None and native_guard.pending()
        body = ("    try:\n"
                "        slot = _spare.pop()\n"
                "    except IndexError:  # (another thread may take the last one between a test and the pop)\n"
                "        slot = _new_slot()\n"
                "    buf, ctx, args_p, ctx_p, both = slot\n"
                "    try:\n"
                "        _pack_into(buf, 0, {vals})\n"
                "    except _PACK_ERRORS:\n"
                "        _spare.append(slot)\n"
                "        return False\n"
                "    ctx.cancel = 0  # a late Ctrl-C may have hit it after its launch ended\n"
                "    if _get_ident() == _cx._MAIN_IDENT:  # Ctrl-C reaches it only through the watcher\n"
                "        if not _watch.started:\n"
                "            _watch.start()\n"
                "        _watch.ctx = ctx\n"
                "        try:\n"
                f"            {call}\n"
                "        finally:\n"
                "            _watch.ctx = None\n"
                "    else:\n"
                f"        {call}\n"
                "    if both.value:  # an error, or cancelled (workers may still touch it: not reused)\n"
                "        if ctx.error:\n"
                "            _k._raise(ctx, _block)\n"
                "        return True\n"
                "    _spare.append(slot)\n"
                "    return True\n")
        import sys

        return body, {"_spare": spare, "_new_slot": new_slot, "_k": self, "_first": ctypes.c_int64(0),
                      "_last": ctypes.c_int64(nblocks), "_n": nblocks, "_block": block, "_get_ident": _get_ident,
                      "_cx": sys.modules[__name__], "_watch": _watch, "_ncall": ncall,
                      "_count_down": count_down}

    def _raise(self, ctx, block):
        from pykern.core.errors import error_class_for_kind, kernel_exception  # IndexError/... subclasses, as numba

        if ctx.kind == ERROR_KINDS["raise"]:  # the kernel's own raise/assert (debug=True)
            v = list(ctx.vals)
            where = ctypes.string_at(ctx.msg1).decode() if ctx.msg1 else "<unknown>"
            raise kernel_exception(self.artifact.exceptions[v[0]], where, v[3:6], v[6:9])
        raise error_class_for_kind(ctx.kind)(self._format_error(ctx, block))

    def _run_cooperative(self, args_p, ctx_p, ctx, nblocks, args_keep):
        """One OS thread per block (ctypes releases the GIL), so all blocks are
        resident at once, as a cooperative launch guarantees on a GPU; the
        launcher bounds ``nblocks`` (``max_cooperative_blocks``)."""
        threads = [threading.Thread(target=self._fn, args=(args_p, ctx_p, b, b + 1), daemon=True,
                                    name=f"pykern-coop-{b}") for b in range(nblocks)]
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():  # a timed join keeps Ctrl-C deliverable
                    t.join(0.1)
        except BaseException:
            ctx.cancel = 1  # blocks stop at their next poll; grid waits see it too
            for t in threads:
                t.join(5.0)
            if any(t.is_alive() for t in threads):
                _abandoned.append((args_keep, ctx, threads))
            raise

    def _run_inline(self, args_p, ctx_p, ctx, nblocks, args_keep=None, serial=False):
        """Blocks in order on this thread (``serial``: always; else the rest go to the pool when the
        first block says they would take over ``POOL_AFTER``)."""
        first = 0
        if _NCPU > 1 and nblocks > 1 and not serial:  # the first block alone, timed: are the others worth the pool?
            t0 = _perf_counter()
            self._fn(args_p, ctx_p, 0, 1)
            if ctx.error or ctx.cancel:
                return
            if (_perf_counter() - t0) * (nblocks - 1) > POOL_AFTER:
                self._run_pool(args_p, ctx_p, ctx, nblocks, _NCPU, args_keep, start=1)
                return
            first = 1
        # chunks keep Ctrl-C responsive even without the pool
        step = max(1, min(nblocks, 4096))
        for first in range(first, nblocks, step):
            self._fn(args_p, ctx_p, first, min(first + step, nblocks))
            if ctx.error:
                break

    def _run_pool(self, args_p, ctx_p, ctx, nblocks, workers, args_keep=None, start=0):
        """Blocks ``[start, nblocks)`` on the pool's workers, in ``workers * 4`` contiguous chunks
        (a worker that finds its core busy with other work takes fewer)."""
        nchunks = min(nblocks - start, workers * 4)
        bounds = [start + (nblocks - start) * i // nchunks for i in range(nchunks + 1)]
        batch = _get_pool().submit_all(self._fn, [(args_p, ctx_p, bounds[i], bounds[i + 1])
                                                  for i in range(nchunks)])
        try:
            batch.wait()
        except BaseException:
            ctx.cancel = 1  # the compiled loop stops at its next block
            batch.cancelled = True  # chunks not started are skipped
            try:
                batch.wait()
            except BaseException:
                # a second Ctrl-C while a block is still running (e.g. a kernel
                # that never ends): keep the memory it uses alive forever
                _abandoned.append((args_keep, ctx, batch, self))
                raise
            raise
        if batch.error is not None:
            raise batch.error

    def _format_error(self, ctx, block):
        art = self.artifact
        kname = art.name
        v = list(ctx.vals)
        msg1 = ctypes.string_at(ctx.msg1).decode() if ctx.msg1 else "<unknown>"
        if ctx.kind == ERROR_KINDS["bounds"]:
            idx, extent, axis = v[0], v[1], v[2] & (UNSIGNED_INDEX - 1)
            if v[2] & UNSIGNED_INDEX:
                idx &= (1 << 64) - 1
            return (
                f"{msg1}: index {idx} is out of bounds for axis {axis} with size {extent} "
                f"(thread ({v[3]}, {v[4]}, {v[5]}), block ({v[6]}, {v[7]}, {v[8]}))"
            )
        if ctx.kind == 4:  # a grid sync not every block reaches (cooperative launch)
            return (f"{msg1} (cg.this_grid().sync()): {v[0]} of {v[2]} blocks wait there but "
                    f"{v[1]} block(s) ended without reaching it; every block of a cooperative launch must "
                    "reach each grid sync")
        if ctx.kind in (ERROR_KINDS["zerodiv"], ERROR_KINDS["value"]):  # division by zero, slice value: the message says where
            return f"{msg1} (thread ({v[3]}, {v[4]}, {v[5]}), block ({v[6]}, {v[7]}, {v[8]}))"
        if ctx.kind in (2, 5):  # divergent barrier (5: found by a work-item loop, msg2 says how)
            bx, by = block[0], block[1]

            def tid(lin):
                return f"({lin % bx}, {lin // bx % by}, {lin // (bx * by)})"

            i0, iother, idone = v[0], v[1], v[2]
            where = f"block ({v[5]}, {v[6]}, {v[7]})"
            if ctx.kind == 5:
                why = f"thread {tid(iother)} {ctypes.string_at(ctx.msg2).decode()}"
            elif iother >= 0:
                msg2 = ctypes.string_at(ctx.msg2).decode() if ctx.msg2 else "another barrier"
                why = f"thread {tid(iother)} waits at {msg2} instead"
            else:
                why = f"thread {tid(idone)} has already exited ({v[3]} of {v[3] + v[4]} threads exited)"
            return (
                f"divergent barrier: {msg1} reached by thread {tid(i0)} of {where}, but {why}; "
                "every thread of a block must reach the same barrier"
            )
        return f"kernel {kname} failed (error kind {ctx.kind})"
