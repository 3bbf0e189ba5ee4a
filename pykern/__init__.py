"""pykern: Python kernels for AMD GPUs, launched like numba.cuda.

A numba.cuda program ports by changing its import::

    import numpy as np
    import pykern as cuda

    @cuda.jit
    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    n = 1 << 20
    x = np.ones(n, np.float32); y = np.ones(n, np.float32); out = np.empty_like(x)
    saxpy[(n + 255) // 256, 256](np.float32(2), x, y, out)

Kernels run on an AMD GPU through HIP when one is usable, else on the compiled
"cpu" target with the same semantics (see ``set_target``/``current_target``).
Host-side names (``to_device``, ``stream``, ``event``...) load on first use so
that ``import pykern`` stays fast.
"""

from __future__ import annotations

from pykern.core import public_paths as _public_paths
from pykern.core import sources as _sources
from pykern.core.errors import CompileError, HipError, KernelRuntimeError, LaunchError, LaunchValueError  # noqa: F401
from pykern.core.errors import KernelIndexError, KernelValueError, KernelZeroDivisionError  # noqa: F401
from pykern.core.errors import SanitizerError, SanitizerWarning  # noqa: F401
from pykern.frontend.types import bfloat16  # noqa: F401
from pykern.frontend.types import boolean, complex64, complex128, float16, float32, float64, int8, int16, int32, int64, intp, uint8, uint16, uint32, uint64, void
from pykern.lang.stubs import *  # noqa: F401,F403  (the kernel-language namespace)
from pykern.lang.stubs import __all__ as _kernel_names
from pykern.dispatch.dispatcher import jit
from pykern.dispatch.aot import compile as _compile
from pykern.core.tracebacks import trimmed as _trimmed
from pykern.lang import complex_math as _cmath_lib  # noqa: F401,E402,E501  (register the device libraries)
from pykern.lang import warp as _warp_lib
from pykern.lang import array_reductions as _reductions_lib
from pykern.lang import integers as _integers_lib
from pykern.runtime import current_target, set_target

_public_paths.install()  # pykern.random, pykern.cudadrv, ...: numba's paths to modules kept by role
_sources.install_if_asked()  # PYKERN_EXEC_SOURCES=1: remember every exec()'d text (pykern/core/sources.py)

compile = _trimmed(_compile)  # a CompileError points at the caller, not at pykern's frames

__version__ = "0.1.0"

# The warm-start path -- a kernel found in the disk cache launched in a new
# process -- needs these (none loads LLVM or the HIP library). Loading them with
# the package keeps that first launch to a few milliseconds, well inside the
# import budget (issue 6: import < 150 ms, first cached launch < 5 ms beyond it).
from pykern.runtime import backends as _launch_path  # noqa: E402,F401
from pykern.runtime import cache as _cache  # noqa: E402,F401
from pykern.runtime.cpu import executor as _cpu_executor
from pykern.runtime import kernargs as _kernargs
from pykern.frontend import fingerprint as _fingerprint  # noqa: E402,F401
from pykern.codegen import abi_map as _abi  # noqa: E402,F401
from pykern.codegen import artifact as _artifact
from pykern.runtime.memory import arrays as _memory  # noqa: E402,F401  (DeviceArray: argument flattening)
from pykern.core import hostinfo as _hostinfo  # noqa: E402,F401

bool_ = boolean


def from_dtype(dtype):
    """The pykern type of a numpy dtype, as ``numba.from_dtype``: a scalar type, or
    for a structured dtype a record type usable in signatures and as the dtype of
    ``shared.array``/``local.array``::

        rec = pykern.from_dtype(np.dtype([("x", np.float32), ("n", np.int32)], align=True))
        @pykern.jit(pykern.void(rec[:], rec))
        def k(a, r): ...
    """
    from pykern.frontend.types import from_dtype as _from_dtype

    return _from_dtype(dtype)


def typeof(value):
    """The kernel type of a value, as ``numba.typeof``: ``typeof(np.zeros(3, np.float32))`` is
    ``float32[::1]``, usable in signatures (``pykern.jit((pykern.typeof(a),))``); a ``ValueError``
    for a value kernels cannot take (numba's error for an untypeable value)."""
    from pykern.frontend.typeof import typeof as _typeof

    try:
        return _typeof(value)
    except TypeError as e:
        raise ValueError(str(e)) from None


def is_float16_supported() -> bool:
    """True: float16 (and ``pykern.fp16``) works on every pykern target, as numba.cuda's
    ``cuda.is_float16_supported()`` reports for capable devices."""
    return True
float_ = float64
double = float64

# name -> (module, attribute): host API loaded lazily on first access
_LAZY = {
    "to_device": ("pykern.runtime.memory.arrays", "to_device"),
    "device_array": ("pykern.runtime.memory.arrays", "device_array"),
    "device_array_like": ("pykern.runtime.memory.arrays", "device_array_like"),
    "pinned_array": ("pykern.runtime.memory.arrays", "pinned_array"),
    "pinned_array_like": ("pykern.runtime.memory.arrays", "pinned_array_like"),
    "mapped_array_like": ("pykern.runtime.memory.arrays", "mapped_array_like"),
    "managed_array": ("pykern.runtime.memory.arrays", "managed_array"),
    "DeviceNDArray": ("pykern.runtime.memory.arrays", "DeviceArray"),
    "DeviceArray": ("pykern.runtime.memory.arrays", "DeviceArray"),
    "as_cuda_array": ("pykern.numba_compat.host_api", "as_cuda_array"),
    "as_device_array": ("pykern.runtime.memory.arrays", "as_device_array"),
    "from_dlpack": ("pykern.runtime.memory.arrays", "from_dlpack"),
    "is_cuda_array": ("pykern.runtime.memory.arrays", "is_device_array"),
    "from_cuda_array_interface": ("pykern.numba_compat.host_api", "from_cuda_array_interface"),
    "stream": ("pykern.runtime.streams", "stream"),
    "default_stream": ("pykern.runtime.streams", "default_stream"),
    "legacy_default_stream": ("pykern.runtime.streams", "legacy_default_stream"),
    "per_thread_default_stream": ("pykern.runtime.streams", "per_thread_default_stream"),
    "event": ("pykern.runtime.streams", "event"),
    "synchronize": ("pykern.runtime.streams", "synchronize"),
    "Stream": ("pykern.runtime.streams", "Stream"),
    "Event": ("pykern.runtime.streams", "Event"),
    "select_device": ("pykern.numba_compat.host_api", "select_device"),
    "declare_device": ("pykern.numba_compat.host_api", "declare_device"),
    "CUSource": ("pykern.core.external", "CUSource"),
    "compile_ptx": ("pykern.numba_compat.host_api", "compile_ptx"),
    "compile_ptx_for_current_device": ("pykern.numba_compat.host_api", "compile_ptx_for_current_device"),
    "compile_for_current_device": ("pykern.numba_compat.host_api", "compile_for_current_device"),
    "set_memory_manager": ("pykern.numba_compat.host_api", "set_memory_manager"),
    "external_stream": ("pykern.numba_compat.host_api", "external_stream"),
    "defer_cleanup": ("pykern.numba_compat.host_api", "defer_cleanup"),
    "require_context": ("pykern.numba_compat.cudadrv.devices", "require_context"),
    "profile_start": ("pykern.numba_compat.host_api", "profile_start"),
    "profile_stop": ("pykern.numba_compat.host_api", "profile_stop"),
    "profiling": ("pykern.numba_compat.host_api", "profiling"),
    "mapped": ("pykern.numba_compat.host_api", "mapped"),
    "is_bfloat16_supported": ("pykern.numba_compat.host_api", "is_bfloat16_supported"),
    "DeviceRecord": ("pykern.runtime.memory.arrays", "DeviceRecord"),
    "get_current_device": ("pykern.numba_compat.host_api", "get_current_device"),
    "current_context": ("pykern.numba_compat.host_api", "current_context"),
    "close": ("pykern.numba_compat.host_api", "close"),
    "pinned": ("pykern.numba_compat.host_api", "pinned"),
    "mapped_array": ("pykern.numba_compat.host_api", "mapped_array"),
    "event_elapsed_time": ("pykern.runtime.streams", "event_elapsed_time"),
    "list_devices": ("pykern.runtime.device_registry", "list_devices"),
    "PerformanceWarning": ("pykern.runtime", "PerformanceWarning"),
    "In": ("pykern.dispatch.arg_hints", "In"),
    "Out": ("pykern.dispatch.arg_hints", "Out"),
    "InOut": ("pykern.dispatch.arg_hints", "InOut"),
    "vectorize": ("pykern.host.ufuncs", "vectorize"),
    "guvectorize": ("pykern.host.ufuncs", "guvectorize"),
    "Reduce": ("pykern.host.reduce", "Reduce"),
    "reduce": ("pykern.host.reduce", "reduce"),
    "CudaSupportError": ("pykern.numba_compat.cudadrv.error", "CudaSupportError"),  # numba.cuda re-exports it
}


def __getattr__(name):
    if name == "gpus":  # evaluated on access: the devices present now
        from pykern.numba_compat.host_api import _gpus

        return _gpus()
    if name == "cuda":  # `from pykern import cuda`: a numba program's `from numba import cuda`, changed
        return __import__("sys").modules[__name__]
    if name in ("random", "cudadrv", "kernels", "libdevice", "types", "debug"):  # numba.cuda.random, .cudadrv, .kernels, .libdevice, .types (loaded on first use)
        import importlib

        return importlib.import_module(_public_paths.home_of(f"pykern.{name}"))
    if name == "devicearray":  # numba.cuda.devicearray: the cudadrv module, as numba re-exports it
        import importlib

        return importlib.import_module("pykern.numba_compat.cudadrv.devicearray")
    spec = _LAZY.get(name)
    if spec is None:
        raise AttributeError(f"module 'pykern' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(spec[0]), spec[1])
    globals()[name] = value
    return value


def is_available() -> bool:
    """True: pykern can always run kernels (on an AMD GPU, else on the cpu target).

    numba.cuda programs often guard with ``if cuda.is_available()``; they then
    run here too. ``current_target()`` says where."""
    return True


def is_supported_version() -> bool:
    """numba's check of the CUDA toolkit's version: True (pykern supports the HIP runtime it
    finds, and runs kernels on the cpu target without one)."""
    return True


def cuda_error():
    """numba's error from initialising the driver, or None: always None here (without a usable
    AMD GPU pykern runs kernels on the cpu target; ``detect()`` says why there is no GPU)."""
    return None


def detect() -> bool:
    """Print the targets and devices found (like numba.cuda.detect, whose first line is
    "Found N CUDA devices"); returns True."""
    from pykern.runtime.hip import library as hip

    ok, reason = hip.available()
    where = "AMD GPUs, through HIP" if current_target() == "hip" else "the pykern cpu target"
    print(f"Found {len(__getattr__('gpus'))} CUDA devices ({where})")
    print(f"pykern {__version__}: target {current_target()!r}")
    print(f"  hip: {'yes' if ok else 'no'} - {reason}")
    print("  cpu: yes - compiled SIMT execution on the host")
    return True


__all__ = [
    "jit", "compile", "set_target", "current_target", "is_available", "is_supported_version", "cuda_error", "detect", "from_dtype", "typeof", "is_float16_supported",
    "CompileError", "LaunchError", "HipError", "KernelRuntimeError", "LaunchValueError",
    "KernelIndexError", "KernelZeroDivisionError", "KernelValueError",
    "SanitizerError", "SanitizerWarning",
    "boolean", "complex64", "complex128", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "intp",
    "uint8", "uint16", "uint32", "uint64", "void", "bfloat16",
    *_kernel_names, *_LAZY, "gpus", "random", "cudadrv", "kernels",
]

# In a notebook or REPL the compile path (LLVM, frontend, codegen) loads on a thread while the
# user writes the next cell; scripts and cache-only processes stay lean (see pykern/dispatch/preload.py).
from pykern.dispatch import preload as _preload  # noqa: E402

_preload.start()
