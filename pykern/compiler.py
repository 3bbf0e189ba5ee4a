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
import os
import pickle
import sys
from dataclasses import dataclass, field
from typing import Any, Optional

from .errors import CompileError, LaunchError, SourceLoc

#: Which codegen backend each runtime target compiles with.
CODEGEN_FOR_TARGET = {"cpu": "cpu", "hip": "amdgpu"}


@dataclass
class Overload:
    """One compiled (kernel, target, argument types), ready to launch."""

    dispatcher: Any
    target: str
    argtypes: tuple
    artifact: Any  # codegen.artifact.KernelArtifact
    kernel: Any  # the runtime's loaded kernel (cpu_executor.CpuKernel / hip function)
    from_cache: bool = False
    _typed_ir: Optional[str] = None
    launch_plan: Any = field(default=None, repr=False)  # filled by runtime.launch

    def typed_ir(self) -> str:
        if self._typed_ir is None:
            self._typed_ir = str(_frontend_ir(self.dispatcher, self.argtypes))
        return self._typed_ir


def _frontend_ir(dispatcher, argtypes):
    from .frontend import compile_ir

    return compile_ir(dispatcher.py_func, list(argtypes), is_kernel=True,
                      debug=bool(dispatcher.options.get("debug", False)))


def compile_options(options: dict, **overrides):
    """Map ``@jit`` options onto codegen's ``CompileOptions``."""
    from .codegen.target import CompileOptions

    opt = options.get("opt", 3)
    opt = 3 if opt is True else 0 if opt is False else int(opt)
    bounds = options.get("launch_bounds") or options.get("max_block_size")
    if isinstance(bounds, (tuple, list)):
        bounds = bounds[0]
    kw = dict(
        opt=opt,
        fastmath=bool(options.get("fastmath", False)),
        debug=bool(options.get("debug", False)),
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
    from .runtime.cache import default_cache

    cache = default_cache()
    return cache if cache.enabled else None


def _devlib_paths(codegen_name: str) -> list:
    """The device libraries an amdgpu compile may link (the cache hashes their
    content, remembered by size/mtime, so a new process does not re-read them)."""
    if codegen_name != "amdgpu":
        return []
    from .codegen import devicelibs

    try:
        d = devicelibs.find_dir()
    except CompileError:  # none installed: the compile reports it if a kernel needs them
        return []
    return [os.path.join(d, f"{lib}.bc") for lib in devicelibs.LIBS]


#: Artifacts compiled or loaded in this process, by cache-key digest: re-running
#: an unchanged notebook cell (a new function object, the same source and
#: globals) reuses them even with the disk cache off.
_in_memory: dict = {}


@contextlib.contextmanager
def _deep_recursion(dispatcher, limit: int = 12000):
    """Room for long expressions (a 400-term sum is 400 nested BinOps, and the
    frontend and lowering walk them recursively). Python 3.11+ calls between
    Python functions use no C stack, so a higher limit is safe; past it, the
    user gets a located error instead of an internal one."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, limit))
    try:
        yield
    except RecursionError:
        from .frontend import source_of

        try:
            _, filename, first_line = source_of(dispatcher.py_func)
            loc = SourceLoc(filename, first_line, 0)
        except Exception:
            loc = None
        raise CompileError(f"'{dispatcher.__name__}' nests expressions or statements too deeply to compile", loc,
                           hint="split long expressions into several assignments") from None
    finally:
        sys.setrecursionlimit(old)


def _cache_key(dispatcher, codegen_name: str, argtypes, options):
    """The full cache key of this compilation, or None without source."""
    from .codegen import key_options
    from .frontend.fingerprint import fingerprint
    from .runtime.cache import default_cache

    try:
        fp = fingerprint(dispatcher.py_func)
    except Exception:  # no source (e.g. built by exec without linecache): compile uncached
        return None
    return default_cache().make_key(
        fp, signature=_signature_text(argtypes), target=codegen_name, arch=options.arch,
        options=key_options(codegen_name, options), devlibs=_devlib_paths(codegen_name),
    )


def compile_artifact(dispatcher, codegen_name: str, argtypes, _skip_cache=False, **target_opts):
    """The KernelArtifact for ``argtypes``: from this process's memory or the
    disk cache when there, else compiled (and remembered). Returns
    ``(artifact, from_cache)``.

    A hit builds no target and runs neither the frontend nor LLVM."""
    from .codegen import get_target

    options = compile_options(dispatcher.options, **_arch_opt(target_opts))
    key = None if _skip_cache else _cache_key(dispatcher, codegen_name, argtypes, options)
    disk = _cache_for(dispatcher) if key is not None else None
    if key is not None:
        artifact = _in_memory.get(key.digest)
        if artifact is not None:
            return artifact, True
        payload = disk.get(key) if disk is not None else None
        if payload is not None:
            try:
                artifact = pickle.loads(payload)
            except Exception as e:  # an entry from an incompatible build: drop it, recompile
                disk.discard(key, f"unreadable payload: {e!r}")
            else:
                _in_memory[key.digest] = artifact
                return artifact, True
    target = get_target(codegen_name, **target_opts)
    with _deep_recursion(dispatcher):
        module = _frontend_ir(dispatcher, argtypes)
        artifact = target.compile(module, target.resolve_options(options))
    if key is not None:
        _in_memory[key.digest] = artifact
        if disk is not None:
            disk.put(key, pickle.dumps(artifact, protocol=pickle.HIGHEST_PROTOCOL))
    return artifact, False


def _arch_opt(target_opts):
    return {"arch": target_opts["arch"]} if target_opts.get("arch") else {}


def build_overload(dispatcher, target: str, argtypes) -> Overload:
    """Compile (or load from cache) and load ``dispatcher`` for ``argtypes`` on ``target``."""
    from .runtime import launch as rt_launch

    target_opts = {}
    if target == "hip":
        from .runtime import devices

        dev = devices.get_device()
        target_opts = {"arch": dev.arch_target_id, "code_object_version": devices.preferred_code_object_version()}
    artifact, cached = compile_artifact(dispatcher, CODEGEN_FOR_TARGET[target], argtypes, **target_opts)
    try:
        kernel = rt_launch.load(target, artifact)
    except LaunchError:
        if not cached:
            raise
        # a cached binary this host cannot run (the key names the host, so this is
        # a shared cache seen from an odd machine): compile afresh
        artifact, cached = compile_artifact(dispatcher, CODEGEN_FOR_TARGET[target], argtypes, _skip_cache=True,
                                            **target_opts)
        kernel = rt_launch.load(target, artifact)
    ov = Overload(dispatcher, target, tuple(argtypes), artifact, kernel, from_cache=cached)
    return ov


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
            from .codegen.codeobject import assembly_of

            self._asm = "\n".join(assembly_of(a) for a in self.artifacts)
        return self._asm


def compile_amdgpu(dispatcher, argtypes, arch: str, **options):
    """One arch: the artifact wrapped as a :class:`CompiledKernel`."""
    if options:
        from .dispatcher import Dispatcher

        dispatcher = Dispatcher(dispatcher.py_func, None, dispatcher.__pykern_device__, **{**dispatcher.options, **options})
    art, _ = compile_artifact(dispatcher, "amdgpu", tuple(argtypes), arch=arch)
    return CompiledKernel(art.name, art.arch, art.binary, art.asm, art.llvm_ir, art.metadata,
                          dict(getattr(art, "resources", {}) or {}), [art])


def compile(fn, signature, arch="gfx942", **options):
    """Compile ``fn`` ahead of time for AMD GPU ``arch`` -- no GPU needed.

    ``arch`` is a gfx name with optional target-id features (``"gfx90a:xnack-"``)
    or a list of them, which gives one clang offload bundle. Options are those
    of ``@jit`` (``fastmath``, ``opt``, ``debug``, ``code_object_version``...).

    Example::

        ck = pykern.compile(saxpy, "void(float32, float32[::1], float32[::1], float32[::1])", arch="gfx942")
        ck.code_object[:4] == b"\\x7fELF"
    """
    from .dispatcher import Dispatcher
    from .frontend import parse_signature

    disp = fn if isinstance(fn, Dispatcher) else Dispatcher(fn, None, False)
    _, argtypes = parse_signature(signature)
    archs = [arch] if isinstance(arch, str) else list(arch)
    if not archs:
        raise CompileError("compile(): arch list is empty")
    parts = [compile_amdgpu(disp, argtypes, a, **options) for a in archs]
    if len(parts) == 1:
        return parts[0]
    from .codegen import codeobject

    bundle = codeobject.bundle([(p.arch, p.code_object) for p in parts])
    first = parts[0]
    return CompiledKernel(first.name, [p.arch for p in parts], bundle, None,
                          first.llvm_ir, first.metadata, first.resources, [a for p in parts for a in p.artifacts])
