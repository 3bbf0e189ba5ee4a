"""``@pykern.jit``: the object a decorated kernel or device function becomes.

A :class:`Dispatcher` holds the Python function, its compile options and one
compiled overload per (target, argument types). Launching ``k[grid, block](*args)``
types the arguments, finds or compiles the overload (memory, then the on-disk
cache, then the compiler) and hands it to the target's launcher.

Example::

    import numpy as np, pykern as cuda

    @cuda.jit
    def add_one(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    a = np.zeros(100, np.float32)
    add_one[1, 128](a)
"""

from __future__ import annotations

import functools
import sys
import threading

from .arguments import argument_types, convertible
from .errors import CompileError, LaunchError
from .launch_config import normalize_config
from .targets import _chosen, current_target

_rt_launch = None  # pykern.runtime.launch, imported at the first launch (keeps import pykern light)


def _load_rt_launch():
    global _rt_launch
    from .runtime import launch

    _rt_launch = launch
    return launch

_DEFAULT_ARCH = "gfx942"


class Dispatcher:
    """A ``@jit`` function. Kernels launch with ``k[griddim, blockdim](...)``;
    device functions (``device=True``) are only callable from kernels."""

    def __init__(self, py_func, signatures=None, device=False, **options):
        if not callable(py_func) or not hasattr(py_func, "__code__"):
            raise TypeError(f"@pykern.jit needs a Python function, got {py_func!r}")
        self.py_func = py_func
        self.__pykern_device__ = bool(device)
        self.options = _check_options(options)
        self._overloads = {}  # (target, argtypes) -> Overload
        self._aliases = {}  # (target, launch argument types) -> the eager overload they converted to
        self._lock = threading.RLock()
        self._signatures = []  # eager (return, argtypes)
        code = py_func.__code__
        nmax = code.co_argcount
        self._arity = (nmax - len(py_func.__defaults__ or ()), nmax)
        functools.update_wrapper(self, py_func)
        if signatures is not None:
            from .frontend import parse_signature

            sigs = signatures if isinstance(signatures, (list, tuple)) and not _is_type_tuple(signatures) else [signatures]
            for sig in sigs:
                self._signatures.append(parse_signature(sig))
            if not device:
                for _, argtypes in self._signatures:
                    self._get_overload(tuple(argtypes))

    # ------------------------------------------------------------------ launching
    def __getitem__(self, config):
        if self.__pykern_device__:
            raise LaunchError(f"{self.__name__} is a device function (device=True); launch a kernel instead")
        griddim, blockdim, stream, shared = normalize_config(config)
        return _Launch(self, griddim, blockdim, stream, shared)

    def __call__(self, *args, **kwargs):
        if self.__pykern_device__:
            raise LaunchError(
                f"device function {self.__name__}() can only be called from a kernel or another device function"
            )
        raise LaunchError(
            f"kernel {self.__name__} needs a launch configuration: {self.__name__}[griddim, blockdim](...)"
        )

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """A launcher covering ``ntasks`` threads in 1-D: ``k.forall(n)(*args)``.

        ``tpb`` threads per block (default: the target's preferred block size)."""
        ntasks = int(ntasks)
        if ntasks < 0:
            raise LaunchError(f"forall(ntasks={ntasks}): ntasks must be >= 0")
        tpb = int(tpb) or 256
        blocks = max(1, (ntasks + tpb - 1) // tpb)
        if ntasks == 0:
            return _NoLaunch()
        return self[blocks, tpb, stream, sharedmem]

    def launch(self, args, griddim, blockdim, stream=0, sharedmem=0):
        """Launch with explicit configuration (what ``k[g, b, s, m](*args)`` calls)."""
        rt_launch = _rt_launch or _load_rt_launch()
        lo, hi = self._arity
        if len(args) != hi:
            if not lo <= len(args) <= hi:
                want = str(hi) if lo == hi else f"{lo} to {hi}"
                raise LaunchError(f"kernel {self.__name__} takes {want} argument(s) but {len(args)} were given")
            # defaults are passed as arguments, as numba does (they are values, not code)
            args = tuple(args) + self.py_func.__defaults__[len(args) - lo:]
        target = _chosen[0] if _chosen else current_target()
        argtypes, args = argument_types(args, self.__name__, target)
        ov = self._overloads.get((target, argtypes)) or self._aliases.get((target, argtypes))
        if ov is None:
            ov = self._get_overload(argtypes, target)
            if self._signatures:  # argument types that converted to an eager signature: remember the match
                self._aliases[(target, argtypes)] = ov
        rt_launch.launch(ov, args, griddim, blockdim, stream, sharedmem)

    # ------------------------------------------------------------------ compiling
    def _match_eager(self, argtypes):
        """With eager signatures, the one the argument types convert to."""
        for _, sig_types in self._signatures:
            if len(sig_types) == len(argtypes) and all(convertible(a, s) for a, s in zip(argtypes, sig_types)):
                return tuple(sig_types)
        sigs = " | ".join("(" + ", ".join(map(str, s)) + ")" for _, s in self._signatures)
        raise LaunchError(
            f"{self.__name__}: arguments ({', '.join(map(str, argtypes))}) match none of its signatures {sigs}"
        )

    def _get_overload(self, argtypes, target=None):
        from . import targets

        target = target or targets.current_target()
        if self._signatures:
            argtypes = self._match_eager(argtypes)
        key = (target, argtypes)
        with self._lock:
            ov = self._overloads.get(key)
            if ov is None:
                from .compiler import build_overload

                ov = build_overload(self, target, argtypes)
                self._overloads[key] = ov
        return ov

    def compile(self, sig):
        """Compile for signature ``sig`` on the current target; returns the overload."""
        from .frontend import parse_signature

        _, argtypes = parse_signature(sig)
        return self._get_overload(tuple(argtypes))

    @property
    def overloads(self):
        """Compiled overloads of the current target, by argument-type tuple."""
        from . import targets

        t = targets.current_target()
        return {k[1]: v for k, v in self._overloads.items() if k[0] == t}

    @property
    def signatures(self):
        return [argtypes for (_, argtypes) in self._overloads]

    # ----------------------------------------------------------------- inspection
    def _overloads_for(self, sig):
        if sig is None:
            return self.overloads
        from .frontend import parse_signature

        _, argtypes = parse_signature(sig) if not isinstance(sig, tuple) else (None, sig)
        return {tuple(argtypes): self._get_overload(tuple(argtypes))}

    def inspect_llvm(self, sig=None):
        """Optimised LLVM IR: a str for ``sig``, else a dict of every compiled overload."""
        found = self._overloads_for(sig)
        texts = {k: v.artifact.llvm_ir for k, v in found.items()}
        return next(iter(texts.values())) if sig is not None else texts

    def inspect_types(self, file=None):
        """Print the typed IR of every compiled overload (like numba's annotated listing)."""
        file = file or sys.stdout
        for argtypes, ov in self.overloads.items():
            print(f"{self.__name__} ({', '.join(map(str, argtypes))})", file=file)
            print("-" * 70, file=file)
            print(ov.typed_ir(), file=file)
            print("=" * 70, file=file)

    def _amdgpu(self, sig, arch):
        from .compiler import compile_amdgpu

        argtypes = self._sig_argtypes(sig)
        return compile_amdgpu(self, argtypes, arch or _active_arch())

    def _sig_argtypes(self, sig):
        if sig is None:
            if self._signatures:
                return tuple(self._signatures[0][1])
            if self._overloads:
                return next(iter(self._overloads))[1]
            raise CompileError(f"{self.__name__}: no signature given and nothing compiled yet")
        from .frontend import parse_signature

        return tuple(parse_signature(sig)[1])

    def inspect_asm(self, sig=None, arch=None):
        """AMDGPU assembly for ``sig`` on ``arch`` (default: the active GPU's, else
        ``$PYKERN_ARCH`` or gfx942). With ``sig=None``: a dict over compiled overloads."""
        if sig is None and not self._signatures and self._overloads:
            return {k[1]: self._amdgpu(k[1], arch).asm for k in self._overloads}
        return self._amdgpu(sig, arch).asm

    def resources(self, sig=None, arch=None, block_size=None):
        """VGPRs, SGPRs, AGPRs, LDS bytes, scratch bytes, spills, waves per SIMD."""
        ck = self._amdgpu(sig, arch)
        if block_size is None:
            return ck.resources
        from .codegen import archs

        return archs.resources(ck.metadata, ck.arch, block_size)

    def __repr__(self):
        kind = "device function" if self.__pykern_device__ else "kernel"
        return f"<pykern {kind} {self.__name__}>"


def _active_arch():
    import os

    from . import targets

    if targets.current_target() == "hip":
        from .runtime import devices

        return devices.get_device().arch_target_id
    return os.environ.get("PYKERN_ARCH", _DEFAULT_ARCH)


class _Launch:
    """``k[grid, block]``: call it with the kernel's arguments."""

    __slots__ = ("dispatcher", "griddim", "blockdim", "stream", "sharedmem")

    def __init__(self, dispatcher, griddim, blockdim, stream, sharedmem):
        self.dispatcher = dispatcher
        self.griddim = griddim
        self.blockdim = blockdim
        self.stream = stream
        self.sharedmem = sharedmem

    def __call__(self, *args):
        self.dispatcher.launch(args, self.griddim, self.blockdim, self.stream, self.sharedmem)


class _NoLaunch:
    def __call__(self, *args):
        return None


_KNOWN_OPTIONS = {
    "debug", "fastmath", "opt", "cache", "max_registers", "launch_bounds", "lineinfo", "inline",
    "link", "max_block_size", "code_object_version",
}


def _check_options(options):
    unknown = set(options) - _KNOWN_OPTIONS
    if unknown:
        raise TypeError(f"@jit got unknown option(s) {sorted(unknown)}; known: {sorted(_KNOWN_OPTIONS)}")
    if options.get("link"):
        raise CompileError("@jit(link=...) (linking external code) is not supported yet")
    return dict(options)


def _is_type_tuple(obj):
    from .frontend import types as T

    return isinstance(obj, tuple) and all(isinstance(x, T.Type) for x in obj)


def jit(func_or_sig=None, device=False, **options):
    """Decorate a kernel (or, with ``device=True``, a device function).

    Forms: ``@jit``, ``@jit(debug=True)``, ``@jit("void(float32[:], int64)")``,
    ``@jit(["void(float32[:])", "void(float64[:])"])``, ``@jit(device=True)``.

    Example::

        @pykern.jit
        def saxpy(a, x, y, out):
            i = pykern.grid(1)
            if i < out.size:
                out[i] = a * x[i] + y[i]
    """
    if callable(func_or_sig) and hasattr(func_or_sig, "__code__"):
        return Dispatcher(func_or_sig, None, device, **options)
    if isinstance(func_or_sig, Dispatcher):
        return Dispatcher(func_or_sig.py_func, None, device, **{**func_or_sig.options, **options})
    sigs = func_or_sig

    def decorate(fn):
        if isinstance(fn, Dispatcher):
            fn = fn.py_func
        return Dispatcher(fn, sigs, device, **options)

    return decorate
