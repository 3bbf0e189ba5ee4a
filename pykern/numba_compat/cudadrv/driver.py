"""numba.cuda.cudadrv.driver's user-facing names on pykern (see ``pykern.numba_compat.cudadrv``)."""

from pykern.numba_compat.cudadrv.error import CudaAPIError, CudaDriverError, CudaSupportError  # noqa: F401
from pykern.runtime.streams import Event, Stream, event_elapsed_time  # noqa: F401
from pykern.numba_compat.host_api import profile_start, profile_stop, profiling  # noqa: F401
from pykern.numba_compat.cudadrv.driver_memory import is_device_memory, device_pointer, device_memory_size, device_memset, host_to_device, device_to_host, device_to_device, MemoryPointer, OwnedPointer, MappedMemory, PinnedMemory, ManagedMemory, memalloc, memhostalloc, mempin, memallocmanaged, require_device_memory, host_memory_extents, host_memory_size


class _Driver:
    """``driver``: the runtime kernels launch through (HIP; the cpu target needs none)."""

    @property
    def is_available(self) -> bool:
        from pykern.runtime.hip import library as hip

        return hip.available()[0]

    def get_device_count(self) -> int:
        """The devices in ``pykern.gpus``: the AMD GPUs, or the cpu target's one device."""
        import pykern

        return len(pykern.gpus)

    def get_version(self) -> tuple:
        """``(major, minor)`` of the HIP runtime, ``(0, 0)`` without one (numba: the CUDA driver's)."""
        from pykern.runtime import get_version

        return get_version()


driver = _Driver()
