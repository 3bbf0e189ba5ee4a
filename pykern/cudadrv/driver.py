"""numba.cuda.cudadrv.driver's user-facing names on pykern (see ``pykern.cudadrv``)."""

import ctypes

from pykern.cudadrv.error import CudaAPIError, CudaDriverError, CudaSupportError  # noqa: F401
from pykern.runtime.streams import Event, Stream, event_elapsed_time  # noqa: F401
from pykern.compat import profile_start, profile_stop, profiling  # noqa: F401


class _Driver:
    """``driver``: the runtime kernels launch through (HIP; the cpu target needs none)."""

    @property
    def is_available(self) -> bool:
        from pykern.runtime import hip

        return hip.available()[0]

    def get_device_count(self) -> int:
        """AMD GPUs present (0 without one, or without the HIP runtime)."""
        from pykern.errors import HipError
        from pykern.runtime.devices import get_device_count

        try:
            return get_device_count()
        except (HipError, OSError):
            return 0

    def get_version(self) -> tuple:
        """``(major, minor)`` of the HIP runtime, ``(0, 0)`` without one (numba: the CUDA driver's)."""
        from pykern.runtime import get_version

        return get_version()


driver = _Driver()


def is_device_memory(obj) -> bool:
    """numba's test for its own device memory objects (``__cuda_memory__``): pykern device arrays."""
    return bool(getattr(obj, "__cuda_memory__", False))


def device_pointer(obj) -> int:
    """The device address of a device array (or anything with ``__cuda_array_interface__``)."""
    ptr = getattr(obj, "device_ctypes_pointer", None)
    if isinstance(ptr, ctypes.c_void_p):
        return ptr.value or 0
    return obj.__cuda_array_interface__["data"][0] or 0
