"""numba.cuda.cudadrv.devicearray's names on pykern (see ``pykern.cudadrv``)."""

from pykern.runtime.memory import DeviceArray, DeviceRecord, ManagedArray, MappedArray

DeviceNDArray = DeviceNDArrayBase = DeviceArray
MappedNDArray = MappedArray
ManagedNDArray = ManagedArray
__all__ = ["DeviceNDArray", "DeviceNDArrayBase", "DeviceRecord", "MappedNDArray", "ManagedNDArray",
           "is_cuda_ndarray", "auto_device"]


def is_cuda_ndarray(obj) -> bool:
    """numba's check: the object says it is a device ndarray (``__cuda_ndarray__``)."""
    return bool(getattr(obj, "__cuda_ndarray__", False))


def auto_device(obj, stream=0, copy=True, user_explicit=False):
    """numba's ``auto_device``: ``(device_array, new)`` -- ``obj`` itself when it is already device
    memory (or exports ``__cuda_array_interface__``), else a new device copy of it."""
    from pykern.compat import as_cuda_array
    from pykern.runtime.memory import to_device

    if isinstance(obj, DeviceArray):
        return obj, False
    if hasattr(obj, "__cuda_array_interface__"):
        return as_cuda_array(obj), False
    return to_device(obj, stream=stream, copy=copy), True
