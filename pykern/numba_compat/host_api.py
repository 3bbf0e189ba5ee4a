"""numba.cuda host-side names that programs use around their kernels.

``get_current_device``, ``gpus``, ``current_context``, ``close``, ``pinned``,
``mapped_array`` and ``event_elapsed_time`` behave as in numba.cuda on the
"hip" target and have sensible meanings on the "cpu" target (the host is the
device), so a ported program's set-up and reporting code runs unchanged.

Example::

    dev = pykern.get_current_device()
    print(dev.name, dev.WARP_SIZE, dev.MAX_THREADS_PER_BLOCK)
    free, total = pykern.current_context().get_memory_info()
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True)
class CpuDevice:
    """The cpu target seen as a device: limits are the GPU-portable ones pykern enforces."""

    id: int = 0
    name: str = f"pykern cpu target ({os.cpu_count() or 1} cores)"
    compute_units: int = os.cpu_count() or 1
    max_threads_per_block: int = 1024
    max_shared_per_block: int = 64 * 1024
    max_block_dim: tuple = (1024, 1024, 1024)
    max_grid_dim: tuple = (2**31 - 1, 2**31 - 1, 2**31 - 1)

    @property
    def wave_size(self) -> int:
        from pykern.core import settings

        try:
            return settings.get("PYKERN_CPU_WAVESIZE")
        except settings.SettingError:  # the compile reports it; the device reports the default
            return settings.default("PYKERN_CPU_WAVESIZE")

    #: numba's ``(major, minor)``. The cpu target claims 8.0 (Ampere): numba.cuda gates nothing that
    #: pykern lacks below it, so a program choosing a code path by it takes the one it would on a
    #: recent GPU (AMD GPUs report HIP's own numbers: gfx90a 9.0, gfx942 9.4, gfx1100 11.0).
    compute_capability: tuple = (8, 0)
    uuid: str = "CPU-0"  # numba's Device.uuid spelling

    def __eq__(self, other):  # one device, however many handles to it were made
        return isinstance(other, CpuDevice)

    def __hash__(self):
        return hash(CpuDevice)

    def reset(self) -> None:
        """numba's ``Device.reset``: nothing to release on the host."""

    def __enter__(self):  # ``with device:`` as numba's device context manager
        return self

    def __exit__(self, *exc):
        return None

    MULTIPROCESSOR_COUNT = property(lambda self: self.compute_units)
    WARP_SIZE = property(lambda self: self.wave_size)
    MAX_THREADS_PER_BLOCK = property(lambda self: self.max_threads_per_block)
    MAX_SHARED_MEMORY_PER_BLOCK = property(lambda self: self.max_shared_per_block)
    MAX_BLOCK_DIM_X = property(lambda self: self.max_block_dim[0])
    MAX_GRID_DIM_X = property(lambda self: self.max_grid_dim[0])

    def __getattr__(self, name: str) -> int:
        """numba's other device attribute names (``dev.MAX_BLOCK_DIM_Y``, ``dev.L2_CACHE_SIZE``...; the
        hip ``Device`` reads the same names from HIP): the host's values, 0 for what it has not."""
        v = _CPU_ATTRIBUTES.get(name)
        if v is None:
            raise AttributeError(f"'CpuDevice' object has no attribute '{name}'")
        return v(self) if callable(v) else v


def _cpu_clock_khz() -> int:
    from pykern.core.hostinfo import cpuinfo

    try:
        return int(float((cpuinfo() or {})["cpu MHz"]) * 1000)
    except (KeyError, ValueError):
        return 0


#: numba's ``CU_DEVICE_ATTRIBUTE_*`` names (``runtime.devices.NUMBA_ATTRIBUTES``) on the cpu target: the
#: limits pykern enforces, host memory as the device's (integrated, mapped, managed, unified), one block
#: in flight per core.
_CPU_ATTRIBUTES = {
    "MAX_BLOCK_DIM_Y": lambda d: d.max_block_dim[1], "MAX_BLOCK_DIM_Z": lambda d: d.max_block_dim[2],
    "MAX_GRID_DIM_Y": lambda d: d.max_grid_dim[1], "MAX_GRID_DIM_Z": lambda d: d.max_grid_dim[2],
    "SHARED_MEMORY_PER_BLOCK": lambda d: d.max_shared_per_block,
    "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR": lambda d: d.max_shared_per_block,
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": lambda d: d.max_shared_per_block,
    "MAX_THREADS_PER_MULTI_PROCESSOR": lambda d: d.max_threads_per_block,
    "COMPUTE_CAPABILITY_MAJOR": lambda d: d.compute_capability[0],
    "COMPUTE_CAPABILITY_MINOR": lambda d: d.compute_capability[1],
    "CLOCK_RATE": lambda d: _cpu_clock_khz(),
    "TOTAL_CONSTANT_MEMORY": 64 * 1024, "MAX_REGISTERS_PER_BLOCK": 65536, "REGISTERS_PER_BLOCK": 65536,
    "MAX_REGISTERS_PER_MULTIPROCESSOR": 65536, "MAX_BLOCKS_PER_MULTIPROCESSOR": 1, "MAX_PITCH": 2**31 - 1,
    "TEXTURE_ALIGNMENT": 0, "GPU_OVERLAP": 0, "KERNEL_EXEC_TIMEOUT": 0, "INTEGRATED": 1,
    "CAN_MAP_HOST_MEMORY": 1, "COMPUTE_MODE": 0, "CONCURRENT_KERNELS": 1, "ECC_ENABLED": 0, "PCI_BUS_ID": 0,
    "PCI_DEVICE_ID": 0, "PCI_DOMAIN_ID": 0, "TCC_DRIVER": 0, "MEMORY_CLOCK_RATE": 0, "GLOBAL_MEMORY_BUS_WIDTH": 0,
    "L2_CACHE_SIZE": 0, "ASYNC_ENGINE_COUNT": 0, "UNIFIED_ADDRESSING": 1, "STREAM_PRIORITIES_SUPPORTED": 0,
    "GLOBAL_L1_CACHE_SUPPORTED": 1, "LOCAL_L1_CACHE_SUPPORTED": 1, "MANAGED_MEMORY": 1, "MULTI_GPU_BOARD": 0,
    "MULTI_GPU_BOARD_GROUP_ID": 0, "HOST_NATIVE_ATOMIC_SUPPORTED": 1, "SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO": 2,
    "PAGEABLE_MEMORY_ACCESS": 1, "CONCURRENT_MANAGED_ACCESS": 1, "COMPUTE_PREEMPTION_SUPPORTED": 1,
    "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM": 1, "COOPERATIVE_LAUNCH": 1, "COOPERATIVE_MULTI_DEVICE_LAUNCH": 0,
    "DIRECT_MANAGED_MEM_ACCESS_FROM_HOST": 1, "MAX_PERSISTING_L2_CACHE_SIZE": 0,
    "RESERVED_SHARED_MEMORY_PER_BLOCK": 0, "MEMORY_POOLS_SUPPORTED": 0,
}  # fmt: skip


def _target() -> str:
    from pykern.runtime import current_target

    return current_target()


def get_current_device():
    """The device launches go to: a HIP ``Device``, or the ``CpuDevice`` on the cpu target."""
    if _target() == "hip":
        from pykern.runtime.device_registry import get_device

        return get_device()
    return CpuDevice()


def select_device(device_id: int):
    """Make ``device_id`` current and return it (numba's ``select_device``). On the cpu target the
    one device is id 0, the ``CpuDevice``."""
    if _target() == "hip":
        from pykern.runtime.device_registry import select_device as _select

        return _select(device_id)
    if device_id != 0:
        raise ValueError(f"device {device_id} does not exist: the cpu target has one device, id 0")
    return CpuDevice()


class _Gpus(list):
    """``pykern.gpus``: the devices launches can go to, like numba's ``cuda.gpus``: the AMD GPUs,
    or on the cpu target its one device -- so ``for gpu in cuda.gpus: with gpu: k[...](...)`` and
    ``n // len(cuda.gpus)`` run the work there instead of silently doing none."""

    @property
    def current(self):
        return get_current_device()

    @property
    def lst(self) -> list:
        """numba's ``gpus.lst``: the devices as a plain list."""
        return list(self)


def _gpus() -> _Gpus:
    if _target() != "hip":
        return _Gpus([CpuDevice()])
    from pykern.runtime.device_registry import list_devices

    return _Gpus(list_devices())


class MemoryInfo(NamedTuple):
    """numba's ``get_memory_info()`` result."""

    free: int
    total: int


class Context:
    """``current_context()``: the device and its memory (numba's context API subset)."""

    def __init__(self, device):
        self.device = device

    def get_memory_info(self) -> MemoryInfo:
        """``MemoryInfo(free, total)`` bytes of device memory (host memory on the cpu target)."""
        return MemoryInfo(*self._memory_info())

    def _memory_info(self):
        if isinstance(self.device, CpuDevice):
            info = {}
            with open("/proc/meminfo") as f:
                for line in f:
                    k, _, v = line.partition(":")
                    info[k] = int(v.split()[0]) * 1024
            return info.get("MemAvailable", info.get("MemFree", 0)), info.get("MemTotal", 0)
        import ctypes

        from pykern.runtime.hip.library import lib

        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        lib().hipMemGetInfo(ctypes.byref(free), ctypes.byref(total))
        return free.value, total.value

    def synchronize(self):
        from pykern.runtime.streams import synchronize

        synchronize()

    def reset(self):
        """numba releases the context's memory; pykern frees arrays when they die."""

    def defer_cleanup(self):
        """``with ctx.defer_cleanup():`` as ``pykern.defer_cleanup()``."""
        return defer_cleanup()

    @property
    def deallocations(self) -> "_Deallocations":
        """numba's queue of pending frees: ``ctx.deallocations.clear()`` (the idiom that releases
        GPU memory at once) frees what ``defer_cleanup`` blocks queued, once no block is open."""
        return _Deallocations()

    @property
    def memory_manager(self):
        """What newer numba reaches the queue through (``ctx.memory_manager.deallocations``);
        pykern has no pluggable memory managers (EMM), only this."""
        return _MemoryManager(self.deallocations)

    def create_stream(self):
        from pykern.runtime.streams import stream

        return stream()

    def create_external_stream(self, ptr):
        return external_stream(ptr)

    def create_event(self, timing=True):
        from pykern.runtime.streams import event

        return event(timing)

    # numba's raw allocations (``pykern.numba_compat.cudadrv.driver.MemoryPointer`` and its kinds): device
    # memory on "hip", host memory on the cpu target, freed when the returned object dies
    def memalloc(self, bytesize):
        from pykern.numba_compat.cudadrv import driver_memory as memory

        return memory.memalloc(self, bytesize)

    def memhostalloc(self, bytesize, mapped=False, portable=False, wc=False):
        from pykern.numba_compat.cudadrv import driver_memory as memory

        return memory.memhostalloc(self, bytesize, mapped, portable, wc)

    def mempin(self, owner, pointer, size, mapped=False):
        from pykern.numba_compat.cudadrv import driver_memory as memory

        return memory.mempin(self, owner, pointer, size, mapped)

    def memallocmanaged(self, bytesize, attach_global=True):
        from pykern.numba_compat.cudadrv import driver_memory as memory

        return memory.memallocmanaged(self, bytesize, attach_global)

    def get_default_stream(self):
        from pykern.runtime.streams import default_stream

        return default_stream()


class _Deallocations:
    """The frees ``defer_cleanup`` holds back (pykern frees any other memory when its last
    array dies, so nothing else is ever pending)."""

    def __len__(self) -> int:
        from pykern.runtime.memory import arrays as memory

        return len(memory._deferred)

    def clear(self) -> None:
        """Free what is pending now, unless a ``defer_cleanup`` block is open (numba's rule)."""
        from pykern.runtime.memory import arrays as memory

        memory.flush_deferred()


@dataclass(frozen=True)
class _MemoryManager:
    deallocations: _Deallocations


def current_context() -> Context:
    """The context of the current device, as numba's ``cuda.current_context()``: memory queries
    and raw allocations (``memalloc``, ``memhostalloc``, ``mempin``, ``memallocmanaged``).

    Example::

        free, total = pykern.current_context().get_memory_info()
    """
    return Context(get_current_device())


def close() -> None:
    """Wait for outstanding work (numba tears the context down; pykern's memory is
    freed with its arrays, so there is nothing else to release)."""
    from pykern.runtime.streams import synchronize

    synchronize()


@contextlib.contextmanager
def pinned(*arrays):
    """``with pykern.pinned(a, b):`` -- numba page-locks existing host arrays for
    faster copies. pykern copies from them either way, so this only keeps the
    program's shape (use ``pinned_array`` for page-locked allocations)."""
    yield


def mapped_array(shape, dtype=float, strides=None, order="C", stream=0, portable=False, wc=False):
    """A host array kernels use in place (see ``runtime.memory.mapped_array``):
    zero-copy mapped page-locked memory on "hip", host memory on "cpu"."""
    from pykern.runtime.memory.arrays import mapped_array as _mapped

    return _mapped(shape, dtype, strides, order, stream, portable, wc)


def from_cuda_array_interface(desc: dict, owner=None, sync: bool = True):
    """numba's ``cuda.from_cuda_array_interface(desc, owner=None, sync=True)``: a zero-copy device
    array over the memory a ``__cuda_array_interface__`` dict describes (``owner`` is kept alive;
    ``sync=False`` skips waiting on the dict's ``stream``)."""
    from types import SimpleNamespace

    from pykern.runtime.memory.arrays import from_cuda_array_interface as _from_cai

    d = dict(desc)
    if not sync:
        d.pop("stream", None)
    return _from_cai(SimpleNamespace(__cuda_array_interface__=d, owner=owner))


def as_cuda_array(obj, sync: bool = True):
    """numba's ``cuda.as_cuda_array(obj, sync=True)``: a zero-copy device array over an object
    exporting ``__cuda_array_interface__`` (a device array, a mapped array, a torch/cupy tensor);
    anything else -- a numpy array included, on every target -- is a ``TypeError``, as in numba
    (``to_device`` copies host arrays; ``pykern.from_dlpack`` takes ``__dlpack__`` objects)."""
    from pykern.runtime.memory.arrays import DeviceArray

    if isinstance(obj, DeviceArray):
        return obj
    cai = getattr(obj, "__cuda_array_interface__", None)
    if cai is None:
        raise TypeError("*obj* doesn't implement the cuda array interface.")
    return from_cuda_array_interface(cai, owner=obj, sync=sync)


def external_stream(ptr):
    """numba's ``cuda.external_stream(ptr)``: a Stream over a ``hipStream_t`` made elsewhere (torch,
    cupy, a C library); pykern never destroys it."""
    from pykern.runtime.streams import external_stream as _external

    return _external(ptr)


def defer_cleanup():
    """``with pykern.defer_cleanup():`` -- device memory whose arrays die inside the block is freed
    when the outermost such block ends (numba's ``cuda.defer_cleanup``; nestable). Freeing can
    synchronize the device, which would serialize asynchronous work in a timed section."""
    from pykern.runtime.memory.arrays import defer_cleanup as _defer

    return _defer()


def profile_start() -> None:
    """numba's ``cuda.profile_start()`` (cuProfilerStart). pykern starts no profiler: rocprof and
    omniperf profile the whole run; a no-op so that programs marking a region run unchanged."""


def profile_stop() -> None:
    """numba's ``cuda.profile_stop()``; a no-op (see ``profile_start``)."""


@contextlib.contextmanager
def profiling():
    """``with pykern.profiling():`` -- ``profile_start()``/``profile_stop()`` around the block."""
    profile_start()
    try:
        yield
    finally:
        profile_stop()


@contextlib.contextmanager
def mapped(*arrays, stream=0):
    """``with pykern.mapped(a, b) as (da, db):`` -- numba maps existing host arrays into the device's
    address space for the block. Yields device arrays holding the arrays' data (one array: the
    array itself, not a list): on the cpu target views of the same memory; on "hip" device copies
    whose contents are copied back to the host arrays when the block ends (HIP cannot register
    numpy's memory portably), so the host arrays see the kernels' writes afterwards, as in numba."""
    from pykern.runtime.memory.arrays import DeviceArray, as_device_array, to_device
    from pykern.runtime import current_target

    if current_target() == "cpu":
        devs = [as_device_array(a, target="cpu") if not isinstance(a, DeviceArray) else a for a in arrays]
        yield devs[0] if len(devs) == 1 else devs
        return
    devs = [to_device(a, stream=stream) for a in arrays]
    try:
        yield devs[0] if len(devs) == 1 else devs
    finally:
        for a, d in zip(arrays, devs):
            d.copy_to_host(a, stream=stream)
        from pykern.runtime.streams import as_stream

        as_stream(stream, "hip").synchronize()


def is_bfloat16_supported() -> bool:
    """True: ``pykern.bfloat16`` and ``pykern.bf16`` work on every target (numba.cuda: True on
    compute capability >= 8.0). Native conversions on gfx950, float32 arithmetic everywhere."""
    return True


def declare_device(name, sig, link=None, use_cooperative=False, abi="numba"):
    """numba's declaration of an external device function: kernels call the returned object,
    the code comes from ``link`` (HIP/CUDA C++ ``.hip``/``.cpp``/``.cu`` files or ``CUSource``,
    LLVM IR ``.ll``, bitcode ``.bc``; ``codegen/external.py`` compiles them for each target).
    ``abi="numba"`` (the default) calls ``int name(T *result, args...)``, ``abi="c"`` calls
    ``T name(args...)``. Arguments are numbers and pointers: a parameter declared
    ``CPointer(T)`` (or an array type) takes an array, passed as its first element's address.

    Example::

        times2 = pykern.declare_device("times2", "int32(int32)", link="times2.hip")

        @pykern.jit
        def k(r, x):
            i = pykern.grid(1)
            if i < r.size:
                r[i] = times2(x[i])
    """
    from pykern.core.external import ABIS, ExternFunction, link_items
    from pykern.frontend.signature import declares_return, parse_signature
    from pykern.frontend.types import Signature

    if abi not in ABIS:
        raise NotImplementedError(f"Unsupported ABI: {abi}")
    if not declares_return(sig):
        raise TypeError("Return type must be provided for device declarations")
    if use_cooperative:
        raise NotImplementedError("declare_device(use_cooperative=True): external code that needs a cooperative "
                                  "launch is not supported")
    restype, argtypes = parse_signature(sig)
    return ExternFunction(name, Signature(restype, tuple(argtypes)), restype, argtypes, link_items(link), abi)


def _nvidia_only(name: str, instead: str):
    def refuse(*args, **kwargs):
        from pykern.core.errors import CompileError

        raise CompileError(f"cuda.{name} is not supported: {instead}")

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"numba's ``{name}``: refused with the reason (pykern targets AMD GPUs and the cpu)."
    return refuse


# numba.cuda names whose output or mechanism is NVIDIA's own: a program calling one stops
# here with the feature named, not with an AttributeError deep in its setup code
compile_ptx = _nvidia_only(
    "compile_ptx", "PTX is NVIDIA's; pykern.compile(fn, signature, arch=...) gives an AMDGPU code object and .asm")
compile_ptx_for_current_device = _nvidia_only(
    "compile_ptx_for_current_device",
    "PTX is NVIDIA's; pykern.compile(fn, signature, arch=...) gives an AMDGPU code object and .asm")
compile_for_current_device = _nvidia_only(
    "compile_for_current_device",
    "its outputs (PTX, LTO-IR) are NVIDIA's; pykern.compile(fn, signature, arch=...) gives an AMDGPU code object")
set_memory_manager = _nvidia_only(
    "set_memory_manager",
    "numba's External Memory Management plugins (RMM's RMMNumbaManager...) allocate through CUDA; "
    "pykern allocates device memory itself -- drop the call")
