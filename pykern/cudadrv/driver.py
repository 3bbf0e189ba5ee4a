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


def _address(obj) -> int:
    """Where ``obj``'s bytes are: a device pointer for device memory (and mapped arrays), the
    buffer address of a plain host array."""
    if hasattr(obj, "__cuda_array_interface__") or hasattr(obj, "device_ctypes_pointer"):
        return device_pointer(obj)
    import numpy as np

    return np.asarray(obj).ctypes.data


def _hip_stream(stream):
    from pykern.runtime.streams import as_stream

    return None if not stream else as_stream(stream, "hip")


def device_memory_size(obj) -> int:
    """Bytes of memory a device array spans (numba's ``device_memory_size``)."""
    size = getattr(obj, "alloc_size", None)
    return int(size if size is not None else obj.nbytes)


def device_memset(dst, val: int, size: int, stream=0) -> None:
    """numba's ``driver.device_memset``: ``size`` bytes at ``dst`` set to the byte ``val``."""
    from pykern.targets import current_target

    ptr = _address(dst)
    if current_target() != "hip":
        ctypes.memset(ptr, val, size)
        return
    from pykern.runtime.hip import lib as hip

    s = _hip_stream(stream)
    if s is None:
        hip().hipMemset(ptr, val, size)
    else:
        hip().hipMemsetAsync(ptr, val, size, s.handle)


def _memcpy(dst, src, size: int, stream=0) -> None:
    """``size`` bytes from ``src`` to ``dst``, host or device memory either way (HIP's unified
    addressing tells which: ``hipMemcpyDefault``)."""
    from pykern.targets import current_target

    d, s_ = _address(dst), _address(src)
    if current_target() != "hip":
        ctypes.memmove(d, s_, size)
        return
    from pykern.runtime import hip_api
    from pykern.runtime.hip import lib as hip

    s = _hip_stream(stream)
    if s is None:
        hip().hipMemcpy(d, s_, size, hip_api.hipMemcpyDefault)
    else:
        hip().hipMemcpyAsync(d, s_, size, hip_api.hipMemcpyDefault, s.handle)


def host_to_device(dst, src, size: int, stream=0) -> None:
    """numba's ``driver.host_to_device(dst, src, size, stream=0)``: raw bytes, no shape checks."""
    _memcpy(dst, src, size, stream)


def device_to_host(dst, src, size: int, stream=0) -> None:
    """numba's ``driver.device_to_host(dst, src, size, stream=0)``: raw bytes, no shape checks."""
    _memcpy(dst, src, size, stream)


def device_to_device(dst, src, size: int, stream=0) -> None:
    """numba's ``driver.device_to_device(dst, src, size, stream=0)``: raw bytes, no shape checks."""
    _memcpy(dst, src, size, stream)
