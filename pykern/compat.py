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
        return 32 if os.environ.get("PYKERN_CPU_WAVESIZE", "").strip() == "32" else 64

    MULTIPROCESSOR_COUNT = property(lambda self: self.compute_units)
    WARP_SIZE = property(lambda self: self.wave_size)
    MAX_THREADS_PER_BLOCK = property(lambda self: self.max_threads_per_block)
    MAX_SHARED_MEMORY_PER_BLOCK = property(lambda self: self.max_shared_per_block)
    MAX_BLOCK_DIM_X = property(lambda self: self.max_block_dim[0])
    MAX_GRID_DIM_X = property(lambda self: self.max_grid_dim[0])


def _target() -> str:
    from .targets import current_target

    return current_target()


def get_current_device():
    """The device launches go to: a HIP ``Device``, or the ``CpuDevice`` on the cpu target."""
    if _target() == "hip":
        from .runtime.devices import get_device

        return get_device()
    return CpuDevice()


class _Gpus(list):
    """``pykern.gpus``: the AMD GPUs present (empty without one), like numba's ``cuda.gpus``."""

    @property
    def current(self):
        return get_current_device()


def _gpus() -> _Gpus:
    from .runtime import hip

    ok, _ = hip.available()
    if not ok:
        return _Gpus()
    from .runtime.devices import list_devices

    return _Gpus(list_devices())


class Context:
    """``current_context()``: the device and its memory (numba's context API subset)."""

    def __init__(self, device):
        self.device = device

    def get_memory_info(self):
        """``(free, total)`` bytes of device memory (host memory on the cpu target)."""
        if isinstance(self.device, CpuDevice):
            info = {}
            with open("/proc/meminfo") as f:
                for line in f:
                    k, _, v = line.partition(":")
                    info[k] = int(v.split()[0]) * 1024
            return info.get("MemAvailable", info.get("MemFree", 0)), info.get("MemTotal", 0)
        import ctypes

        from .runtime.hip import lib

        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        lib().hipMemGetInfo(ctypes.byref(free), ctypes.byref(total))
        return free.value, total.value

    def synchronize(self):
        from .runtime.streams import synchronize

        synchronize()

    def reset(self):
        """numba releases the context's memory; pykern frees arrays when they die."""


def current_context() -> Context:
    return Context(get_current_device())


def close() -> None:
    """Wait for outstanding work (numba tears the context down; pykern's memory is
    freed with its arrays, so there is nothing else to release)."""
    from .runtime.streams import synchronize

    synchronize()


@contextlib.contextmanager
def pinned(*arrays):
    """``with pykern.pinned(a, b):`` -- numba page-locks existing host arrays for
    faster copies. pykern copies from them either way, so this only keeps the
    program's shape (use ``pinned_array`` for page-locked allocations)."""
    yield


def mapped_array(shape, dtype=float, order="C", stream=0, portable=False, wc=False):
    """A host array kernels use in place (see ``runtime.memory.mapped_array``):
    zero-copy mapped page-locked memory on "hip", host memory on "cpu"."""
    from .runtime.memory import mapped_array as _mapped

    return _mapped(shape, dtype, order, stream, portable, wc)


def from_cuda_array_interface(desc: dict, owner=None, sync: bool = True):
    """numba's ``cuda.from_cuda_array_interface(desc, owner=None, sync=True)``: a zero-copy device
    array over the memory a ``__cuda_array_interface__`` dict describes (``owner`` is kept alive;
    ``sync=False`` skips waiting on the dict's ``stream``)."""
    from types import SimpleNamespace

    from .runtime.memory import from_cuda_array_interface as _from_cai

    d = dict(desc)
    if not sync:
        d.pop("stream", None)
    return _from_cai(SimpleNamespace(__cuda_array_interface__=d, owner=owner))
