"""The pipeline of one compilation, in one place: cache -> frontend -> codegen -> load.

``build_overload`` is what a launch calls for a new argument-type signature;
``compile_amdgpu`` and :func:`compile` (``pykern.compile``) are the
ahead-of-time paths that need no GPU.

Example::

    ck = pykern.compile(saxpy, "void(float32, float32[::1], float32[::1], float32[::1])", arch="gfx942")
    open("saxpy.hsaco", "wb").write(ck.code_object)
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
import sys
import threading
import warnings
import weakref
from dataclasses import dataclass, field
from typing import Any, Optional

from pykern.core.bounded import LRU
from pykern.core.errors import CompileError, LaunchError
from pykern.core.external import kernel_links, link_items, links_digest

@dataclass
class Overload:
    """One compiled (kernel, target, argument types), ready to launch."""

    dispatcher: Any
    target: str
    argtypes: tuple
    artifact: Any  # codegen.artifact.KernelArtifact
    kernel: Any  # the runtime's loaded kernel (cpu/executor.CpuKernel / hip/launch.HipKernel)
    from_cache: bool = False
    _typed_ir: Optional[str] = None
    launch_plan: Any = field(default=None, repr=False)  # filled by its backend's first launch (runtime.backends)

    @property
    def cooperative(self) -> bool:
        """numba's ``_Kernel.cooperative``: the kernel syncs its grid, so it is launched
        cooperatively (numba also counts a ``cg.this_grid()`` that never syncs; pykern does
        not, as such a kernel needs no resident-grid limit)."""
        return bool(getattr(self.artifact, "cooperative", False))

    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0) -> int:
        """numba's ``_Kernel.max_cooperative_grid_blocks``: the most blocks of
        ``blockdim`` a cooperative launch (a kernel calling
        ``cg.this_grid().sync()``) may have on the current device."""
        dims = tuple(blockdim) if isinstance(blockdim, (tuple, list)) else (blockdim,)
        return self.kernel.max_cooperative_blocks(dims, int(dynsmemsize))

    # numba's ``_Kernel`` resource queries (``k.overloads[sig].get_regs_per_thread()``): the
    # dispatcher's answers for this overload's argument types
    def get_regs_per_thread(self) -> int:
        return self.dispatcher.get_regs_per_thread(self.argtypes)

    def get_shared_mem_per_block(self) -> int:
        return self.dispatcher.get_shared_mem_per_block(self.argtypes)

    def get_local_mem_per_thread(self) -> int:
        return self.dispatcher.get_local_mem_per_thread(self.argtypes)

    def get_max_threads_per_block(self) -> int:
        return self.dispatcher.get_max_threads_per_block(self.argtypes)

    def get_const_mem_size(self) -> int:
        return self.dispatcher.get_const_mem_size(self.argtypes)

    def typed_ir(self) -> str:
        if self._typed_ir is None:
            with _compile_lock, _deep_recursion(self.dispatcher):
                from pykern.frontend.versions import user_listing

                # the user's variable names: a variable's versions (`x$s1`) are all `x` in the source
                self._typed_ir = user_listing(str(_frontend_ir(self.dispatcher, self.argtypes)))
        return self._typed_ir


def _frontend_ir(dispatcher, argtypes, debug=None):
    from pykern.frontend import compile_ir

    if debug is None:
        debug = bool(dispatcher.options.get("debug", False))
    return compile_ir(dispatcher.py_func, list(argtypes), is_kernel=True, debug=debug)


def compile_options(options: dict, **overrides):
    """Map ``@jit`` options onto codegen's ``CompileOptions``."""
    from pykern.codegen.target_interface import CompileOptions

    opt = options.get("opt", 3)
    opt = 3 if opt is True else 0 if opt is False else int(opt)
    bounds = options.get("launch_bounds") or options.get("max_block_size")
    if isinstance(bounds, (tuple, list)):
        bounds = bounds[0]
    from pykern.core.sanitize import checks, combine

    sanitize = combine(options.get("sanitize"))
    kw = dict(
        opt=opt,
        fastmath=bool(options.get("fastmath", False)),
        fma=bool(options.get("fma", True)),
        # the sanitizer's bounds check is debug=True's
        debug=bool(options.get("debug", False)) or "bounds" in checks(sanitize),
        sanitize=sanitize,
        max_block_size=int(bounds) if bounds else None,
        max_registers=options.get("max_registers"),
        code_object_version=int(options.get("code_object_version", 5)),
    )
    kw.update(overrides)
    return CompileOptions(**kw)


def _signature_text(argtypes) -> str:
    return "(" + ", ".join(map(str, argtypes)) + ")"


def _cache_for(dispatcher):
    if not dispatcher.options.get("cache", True):
        return None
    from pykern.runtime.cache import default_cache

    cache = default_cache()
    return cache if cache.enabled else None


def _devlib_paths(codegen_name: str) -> list:
    """The device libraries an amdgpu compile may link (the cache hashes their
    content, remembered by size/mtime/ctime, so a new process does not re-read them)."""
    if codegen_name != "amdgpu":
        return []
    from pykern.codegen.amdgpu import devicelibs

    try:
        d = devicelibs.find_dir()
    except CompileError:  # none installed: the compile reports it if a kernel needs them
        return []
    return [os.path.join(d, f"{lib}.bc") for lib in devicelibs.LIBS]


#: Artifacts compiled or loaded in this process, by cache-key digest: re-running
#: an unchanged notebook cell (a new function object, the same source and
#: globals) reuses them even with the disk cache off. Bounded like every
#: per-process map (``bounded.entries_limit``: ``PYKERN_MEMORY_CACHE_ENTRIES``,
#: default 256, least recently used evicted), so a notebook redefining kernels
#: all day keeps a fixed amount. It holds artifacts (bytes, ~30 KB for a small
#: kernel), never loaded code: a kernel's library is unloaded when no overload
#: uses it any more (``runtime/cpu/executor.py``).
_in_memory = LRU()


def _recall(digest: str):
    return _in_memory.get(digest)


def _remember(digest: str, artifact) -> None:
    _in_memory.put(digest, artifact)


#: Held around the frontend and codegen of one compilation: on Python 3.11
#: ``ast.parse`` is not safe in two threads at once ("AST constructor recursion
#: depth mismatch"), the recursion limit is process-wide, and LLVM's state is
#: shared. Compiles from several threads therefore run one at a time; cache hits
#: (memory or disk) and launches never take it. Lock order, everywhere (the fork
#: handlers below take them all in it): a Dispatcher's lock, this lock,
#: ``_in_memory.lock``, ``cpu/executor._lock``, ``llvm_util.LLVM_LOCK``, the
#: cpu target-machine lock, llvmlite's own lock. Code run under this lock must
#: not take a Dispatcher's lock.
_compile_lock = threading.RLock()

_recursion_lock = threading.Lock()
_recursion_users = 0
_recursion_saved = 0


@contextlib.contextmanager
def _deep_recursion(dispatcher, limit: int = 12000):
    """Room for long expressions (a 400-term sum is 400 nested BinOps, and the
    frontend and lowering walk them recursively). Python 3.11+ calls between
    Python functions use no C stack, so a higher limit is safe; past it, the
    user gets a located error instead of an internal one. The limit is
    process-wide: the first user raises it and the last one restores it (two
    threads each restoring what they saw would race)."""
    global _recursion_users, _recursion_saved
    with _recursion_lock:
        if _recursion_users == 0:
            _recursion_saved = sys.getrecursionlimit()
            if _recursion_saved < limit:
                sys.setrecursionlimit(limit)
        _recursion_users += 1
    try:
        yield
    except RecursionError:
        from pykern.frontend import nesting_error

        raise nesting_error(dispatcher.py_func, dispatcher.__name__) from None
    finally:
        with _recursion_lock:
            _recursion_users -= 1
            if _recursion_users == 0 and sys.getrecursionlimit() != _recursion_saved:
                sys.setrecursionlimit(_recursion_saved)


# ------------------------------------------------------------------------ fork

#: Dispatcher locks (``fork_safe_rlock``): a thread that held one when another
#: forked does not exist in the child, so the child re-initialises them.
_child_reinit: "weakref.WeakSet" = weakref.WeakSet()
#: Set in a child forked while a lock could not be taken (see ``_before_fork``).
_fork_unsafe_reason = None
#: How long a fork waits for compiles in flight to release the locks.
FORK_WAIT_SECONDS = 120.0


def fork_safe_rlock():
    """A ``threading.RLock`` that a forked child finds released (a Dispatcher's
    lock: another thread may hold it mid-compile when the process forks).

    Example: ``self._lock = fork_safe_rlock()``"""
    lock = threading.RLock()
    _child_reinit.add(lock)
    return lock


def _fork_locks() -> list:
    """Every lock a compile or a load may hold, in the order all code takes them
    (modules not imported yet hold nothing and are not imported here)."""
    mods = sys.modules
    locks = [_compile_lock, _in_memory.lock]
    ex = mods.get("pykern.runtime.cpu.executor")
    if ex is not None:
        locks.append(ex._lock)
    lu = mods.get("pykern.codegen.llvm_util")
    if lu is not None:
        locks.append(lu.LLVM_LOCK)
    host = mods.get("pykern.core.llvm_host")  # LLVM's one-time set-up and the host target machine
    if host is not None:
        locks += [host._tm_lock, host._init_lock]
    ffi = mods.get("llvmlite.binding.ffi")
    raw = getattr(getattr(getattr(ffi, "lib", None), "_lock", None), "_lock", None)
    if raw is not None:  # llvmlite serialises every LLVM call on it
        locks.append(raw)
    return locks


_held_for_fork: list = []
_fork_timed_out = None


def _before_fork():
    """Wait until no other thread is inside pykern's compiler, loader or LLVM,
    so that the child starts with every lock free and LLVM's own (C++) locks
    unheld. A lock still held after ``FORK_WAIT_SECONDS`` (a compile that does
    not end) is left alone: the child then refuses to compile, with an error,
    rather than hang."""
    global _fork_timed_out
    _held_for_fork.clear()
    _fork_timed_out = None
    for lock in _fork_locks():
        if lock.acquire(timeout=FORK_WAIT_SECONDS):
            _held_for_fork.append(lock)
        else:
            _fork_timed_out = "another thread was compiling when this process forked and did not finish"


def _release_fork_locks():
    while _held_for_fork:
        _held_for_fork.pop().release()


def _after_fork_in_child():
    global _fork_unsafe_reason
    _fork_unsafe_reason = _fork_timed_out
    if _fork_unsafe_reason is not None:  # locks held by threads that do not exist here
        for lock in _fork_locks():
            if lock not in _held_for_fork and hasattr(lock, "_at_fork_reinit"):
                lock._at_fork_reinit()
    _release_fork_locks()
    for lock in list(_child_reinit):
        lock._at_fork_reinit()
    ex = sys.modules.get("pykern.runtime.cpu.executor")
    if ex is not None:
        ex._after_fork_in_child()
    tiers = sys.modules.get("pykern.codegen.cpu.tiers")
    if tiers is not None:
        tiers._after_fork_in_child()


def _fork_check():
    if _fork_unsafe_reason is not None:
        raise CompileError(f"cannot compile in this forked process: {_fork_unsafe_reason} (LLVM's state may be "
                           "locked or half-updated)", hint="fork before compiling in other threads, or use the "
                           "'spawn' start method of multiprocessing")


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_release_fork_locks,
                        after_in_child=_after_fork_in_child)


def _cache_key(dispatcher, codegen_name: str, argtypes, options):
    """The full cache key of this compilation, or None without source."""
    from pykern.codegen import key_options
    from pykern.frontend.fingerprint import fingerprint
    from pykern.runtime.cache import default_cache

    try:
        fp = fingerprint(dispatcher.py_func)
    except Exception:  # no source (e.g. built by exec without linecache): compile uncached
        return None
    if fp.get("uncacheable"):
        # an @overload function chooses its implementation while the kernel is typed, from
        # whatever is registered in this process: no key made without the frontend can tell
        # (a kernel stored where nothing was overloaded would hide an overload registered since)
        return None
    links = link_items(dispatcher.options.get("link"))
    return default_cache().make_key(
        fp, signature=_signature_text(argtypes), target=codegen_name, arch=options.arch,
        options=key_options(codegen_name, options), devlibs=_devlib_paths(codegen_name),
        # @jit(link=...) by the files' contents (declare_device's are in the fingerprint's globals)
        extra={"links": links_digest(links)} if links else None,
    )


class _ExternalStore:
    """Compiled external code (``codegen/external_build.py``) kept in the disk cache: ``parts`` (the
    source's digest, clang's version, the flags) make its key."""

    def __init__(self, cache):
        self.cache = cache

    def _key(self, parts):
        from pykern.runtime.cache import CacheKey

        return CacheKey({"name": "external-code", **parts})

    def get(self, parts):
        return self.cache.get(self._key(parts))

    def put(self, parts, data: bytes) -> None:
        self.cache.put(self._key(parts), data)


def _external_store(dispatcher):
    cache = _cache_for(dispatcher)
    return _ExternalStore(cache) if cache is not None else None


def compile_artifact(dispatcher, codegen_name: str, argtypes, _skip_cache=False, **target_opts):
    """The KernelArtifact for ``argtypes``: from this process's memory or the
    disk cache when there, else compiled (and remembered). Returns
    ``(artifact, from_cache)``.

    A hit builds no target and runs neither the frontend nor LLVM. A cpu compile may return
    first-tier code (``codegen/cpu/tiers.py``): its O3 build starts when the caller has loaded
    it (``build_overload``) or reads its ``llvm_ir``/``tier_two.wait()``, and is then stored."""
    from pykern.codegen import get_target

    options = _for_target(compile_options(dispatcher.options, **_arch_opt(target_opts, dispatcher.options)),
                          codegen_name, dispatcher)
    key = None if _skip_cache else _cache_key(dispatcher, codegen_name, argtypes, options)
    disk = _cache_for(dispatcher) if key is not None else None
    if key is not None:
        artifact = _recall(key.digest)
        if artifact is None and disk is not None:
            artifact = _from_disk(disk, key)
        if artifact is not None:
            return artifact, True
    # processes sharing the disk cache compile a key once: the others wait for its entry (the
    # file marker is taken before the compile lock, never while holding it)
    with contextlib.ExitStack() as held:
        claim = held.enter_context(disk.compiling(key)) if disk is not None else None
        artifact = _from_disk(disk, key) if claim is not None and claim.ready else None
        if artifact is not None:
            return artifact, True
        with _compile_lock:
            if key is not None:  # another thread may have compiled it while this one waited
                artifact = _recall(key.digest)
                if artifact is not None:
                    return artifact, True
            _fork_check()
            target = get_target(codegen_name, **target_opts, **_tiers(codegen_name),
                                external_store=_external_store(dispatcher))
            with _deep_recursion(dispatcher):
                module = _frontend_ir(dispatcher, argtypes, options.debug)
                module.links = kernel_links(dispatcher.options.get("link"), module.links)
                _warn_breakpoints(module, codegen_name)
                artifact = target.compile(module, target.resolve_options(options))
            if module.uncacheable:  # its key would hit for other overloads too: never stored
                key = disk = None
        job = getattr(artifact, "tier_two", None)
        if job is not None:
            # first-tier code: remembered until its O3 build replaces it (a cell run again at
            # once reuses it); only the O3 build is stored, and the claim on its disk entry
            # is held until it is (other processes wait for that entry)
            if key is not None:
                _remember(key.digest, artifact)
            job.stored = disk is not None  # else the build waits for a second launch (cpu/tiers)
            job.when_done(functools.partial(_keep_tier_two, key, disk, held.pop_all()))
            return artifact, False  # the caller starts the job once the code is loaded
        if key is not None:
            if disk is not None:
                artifact = _storable(artifact)
            _remember(key.digest, artifact)
            if disk is not None:
                disk.put(key, pickle.dumps(artifact, protocol=pickle.HIGHEST_PROTOCOL))
    return artifact, False


_warned_gpu_sanitize: set = set()


def _warn_breakpoints(module, codegen_name: str) -> None:
    """A ``breakpoint()`` in a kernel stops only on the sim target: a compiled build says it runs past."""
    from pykern.frontend.analysis import walk

    for f in [*module.functions.values(), module.kernel]:
        for n in walk(f.body):
            if getattr(n, "name", None) == "breakpoint" and type(n).__name__ == "Intrinsic":
                warnings.warn(f"{n.loc}: breakpoint() is ignored on the {codegen_name} target; "
                              "pykern.set_target('sim') stops there in pdb", stacklevel=2)
                return


def _for_target(options, codegen_name: str, dispatcher):
    """``options`` as target ``codegen_name`` compiles them: the race and initialisation checks
    exist on the cpu target only (they need its known interleaving of threads); a GPU compile
    drops them with one ``SanitizerWarning`` per kernel and keeps the bounds checks."""
    if codegen_name == "cpu" or not options.sanitize:
        return options
    from pykern.core.sanitize import checks

    lost = sorted(checks(options.sanitize) - {"bounds"})
    if lost and dispatcher.__name__ not in _warned_gpu_sanitize:
        import warnings

        from pykern.core.errors import SanitizerWarning

        _warned_gpu_sanitize.add(dispatcher.__name__)
        warnings.warn(f"kernel {dispatcher.__name__!r}: the sanitizer's {' and '.join(lost)} checks run on the "
                      f"cpu target only; this {codegen_name} build runs unchecked (set_target('cpu') to check it)",
                      SanitizerWarning, stacklevel=4)
    return options.with_(sanitize="")


def _tiers(codegen_name: str) -> dict:
    """Target options asking the cpu target for first-tier code where it may
    (``codegen/cpu/tiers.py``)."""
    if codegen_name != "cpu":
        return {}
    from pykern.codegen.cpu import tiers as cpu_tiers

    return {"tiered": True} if cpu_tiers.enabled() else {}


def _keep_tier_two(key, disk, claim: contextlib.ExitStack, final) -> None:
    """Remember and store ``final``, the O3 build of a first-tier artifact (None: its build
    failed, the first tier stays), then give up the claim on its disk entry."""
    with claim:
        if final is None or key is None:
            return
        if disk is not None:
            final = _storable(final)
            disk.put(key, pickle.dumps(final, protocol=pickle.HIGHEST_PROTOCOL))
        _remember(key.digest, final)


def _follow_tier_two(ov: Overload, job) -> None:
    """When the O3 build of ``ov``'s first-tier code is done, its kernel runs it and
    ``ov.artifact`` is it; meanwhile big launches wait for it."""
    from pykern.codegen.cpu import tiers as cpu_tiers

    cpu_tiers.guard_big_launches(ov.kernel, job)

    def adopt(final):
        if final is None:
            return
        if ov.kernel.artifact is not final:  # (a reused first-tier artifact: its kernel may have it)
            ov.kernel.adopt(final)
        ov.artifact = final

    job.when_done(adopt, first=True)
    # started only now: loading the first-tier code takes LLVM's lock, which the build holds;
    # a build that nothing stores starts when the kernel is launched again (cpu/tiers)
    if job.stored:
        job.start()


def _storable(artifact):
    """The form of ``artifact`` the disk cache keeps: a cpu object linked into a shared
    library, which a new process loads without LLVM (a cache-off compile skips the link and
    runs the object through MCJIT in the process that compiled it)."""
    if artifact.target != "cpu":
        return artifact
    from pykern.codegen.cpu.target import with_shared_object

    return with_shared_object(artifact)


def _from_disk(disk, key):
    payload = disk.get(key)
    if payload is None:
        return None
    from pykern.codegen.artifact import KernelArtifact

    try:
        artifact = pickle.loads(payload)
    except Exception as e:  # an entry from an incompatible build: drop it, recompile
        disk.discard(key, f"unreadable payload: {e!r}")
        return None
    if not isinstance(artifact, KernelArtifact):  # never launch what is not a kernel
        disk.discard(key, f"the payload is a {type(artifact).__name__}, not a kernel artifact")
        return None
    _remember(key.digest, artifact)
    return artifact


def _forget(dispatcher, codegen_name: str, argtypes, target_opts, reason: str) -> None:
    """Drop this compilation's artifact from memory and from the disk cache (with a
    warning): it came from a cache and its code does not load here."""
    options = _for_target(compile_options(dispatcher.options, **_arch_opt(target_opts, dispatcher.options)),
                          codegen_name, dispatcher)
    key = _cache_key(dispatcher, codegen_name, argtypes, options)
    if key is None:
        return
    _in_memory.pop(key.digest, None)
    disk = _cache_for(dispatcher)
    if disk is not None:
        disk.discard(key, reason)


def _arch_opt(target_opts, jit_options=None):
    # the runtime's code object version (4 on ROCm 5) is part of the key unless @jit fixed one
    names = ("arch",) if "code_object_version" in (jit_options or {}) else ("arch", "code_object_version")
    return {n: target_opts[n] for n in names if target_opts.get(n)}


def build_overload(dispatcher, target: str, argtypes) -> Overload:
    """Compile (or load from cache) and load ``dispatcher`` for ``argtypes`` on ``target``."""
    from pykern.runtime.backends import backend as backend_of

    backend = backend_of(target)
    target_opts = backend.compile_options()
    artifact, cached = compile_artifact(dispatcher, backend.codegen, argtypes, **target_opts)
    try:
        kernel = backend.load(artifact)
    except LaunchError as exc:
        if not cached:
            job = getattr(artifact, "tier_two", None)
            if job is not None:  # its O3 build is still stored and remembered: it may load
                job.start()
            raise
        # cached code this host cannot load (a damaged code object, or a shared cache seen
        # from an odd machine: the key names the host): replace it with a fresh compile, so
        # the next process does not trip on it again
        _forget(dispatcher, backend.codegen, argtypes, target_opts, f"its code does not load here: {exc}")
        artifact, cached = compile_artifact(dispatcher, backend.codegen, argtypes, **target_opts)
        kernel = backend.load(artifact)
    if artifact.cooperative and hasattr(kernel, "occupancy_estimate"):  # a GPU's: codegen's model of the code object
        kernel.occupancy_estimate = functools.partial(cooperative_blocks_per_cu, artifact.metadata or {},
                                                      artifact.arch)
    ov = Overload(dispatcher, target, tuple(argtypes), artifact, kernel, from_cache=cached)
    job = getattr(artifact, "tier_two", None)
    if job is not None:
        _follow_tier_two(ov, job)
    return ov


def cooperative_blocks_per_cu(metadata: dict, arch, block_threads: int, dynamic_shared: int = 0) -> int:
    """Blocks of ``block_threads`` resident per CU for this code object (registers, LDS,
    wave slots: codegen's occupancy model), the bound of a cooperative launch per CU.

    >>> cooperative_blocks_per_cu({".vgpr_count": 32, ".sgpr_count": 16}, "gfx942", 256)
    8
    """
    from pykern.codegen.amdgpu import archs

    a = archs.parse_target_id(arch) if isinstance(arch, str) else arch
    res = archs.resources(metadata, a, block_threads, dynamic_shared)
    waves_per_group = -(-max(1, block_threads) // res["wave_size"])
    return max(0, res["waves_per_simd"] * a.simds_per_cu // waves_per_group)


# ----------------------------------------------------------------------------- AOT


@dataclass
class CompiledKernel:
    """Result of :func:`compile`: a linked AMDGPU code object and its facts.

    ``code_object`` is loadable by ``hipModuleLoadData`` (an offload bundle when
    several archs were asked for); ``asm``, ``llvm_ir``, ``metadata`` (parsed
    amdhsa metadata of the kernel) and ``resources`` describe it; ``name`` is
    the kernel symbol for ``hipModuleGetFunction``; ``artifacts`` holds one
    per arch."""

    name: str
    arch: Any
    code_object: bytes
    _asm: Optional[str]  # None: made from the artifacts when ``asm`` is first read
    llvm_ir: str
    metadata: dict
    resources: dict
    artifacts: list

    @property
    def asm(self) -> str:
        """The assembly listing (every arch's, one after the other)."""
        if self._asm is None:
            from pykern.codegen.amdgpu.build import assembly_of

            self._asm = "\n".join(assembly_of(a) for a in self.artifacts)
        return self._asm


def compile_amdgpu(dispatcher, argtypes, arch: str, **options):
    """One arch: the artifact wrapped as a :class:`CompiledKernel`."""
    if options:  # the same function under other options (its class: this module stays below the dispatcher)
        dispatcher = type(dispatcher)(dispatcher.py_func, None, dispatcher.__pykern_device__,
                                      **{**dispatcher.options, **options})
    art, _ = compile_artifact(dispatcher, "amdgpu", tuple(argtypes), arch=arch)
    return CompiledKernel(art.name, art.arch, art.binary, art.asm, art.llvm_ir, art.metadata,
                          dict(art.resources), [art])
