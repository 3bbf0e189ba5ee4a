"""numba.cuda.cudadrv.devicearray's names on pykern (see ``pykern.numba_compat.cudadrv``)."""

from pykern.core.strides import is_contiguous as _numpy_contiguous
from pykern.runtime.memory.arrays import DeviceArray, DeviceRecord, ManagedArray, MappedArray, auto_device

DeviceNDArray = DeviceNDArrayBase = DeviceArray
MappedNDArray = MappedArray
ManagedNDArray = ManagedArray
__all__ = ["DeviceNDArray", "DeviceNDArrayBase", "DeviceRecord", "MappedNDArray", "ManagedNDArray",
           "is_cuda_ndarray", "auto_device", "from_array_like", "from_record_like", "array_core", "is_contiguous",
           "errmsg_contiguous_buffer"]

#: numba's message for a copy that needs contiguous memory (pykern copies any layout; kept for
#: programs that compare with it)
errmsg_contiguous_buffer = ("Array contains non-contiguous buffer and cannot be transferred as a single memory "
                            "region. Please ensure contiguous buffer with numpy .ascontiguousarray()")


def is_cuda_ndarray(obj) -> bool:
    """numba's check: the object says it is a device ndarray (``__cuda_ndarray__``)."""
    return bool(getattr(obj, "__cuda_ndarray__", False))


def from_array_like(ary, stream=0, gpu_data=None):
    """numba's ``from_array_like``: an uninitialised device array with ``ary``'s shape, dtype and
    (dense) layout."""
    if gpu_data is not None:
        raise NotImplementedError("from_array_like(gpu_data=...): pykern allocates the memory itself")
    from pykern.runtime.memory.arrays import device_array_like

    return device_array_like(ary, stream=stream)


def from_record_like(rec, stream=0, gpu_data=None):
    """numba's ``from_record_like``: an uninitialised ``DeviceRecord`` of ``rec``'s dtype."""
    if gpu_data is not None:
        raise NotImplementedError("from_record_like(gpu_data=...): pykern allocates the memory itself")
    return DeviceRecord(rec.dtype, stream)


def array_core(ary):
    """``ary`` without its broadcast (zero-stride) axes: index 0 there, as numba's ``array_core``."""
    return ary[tuple(0 if st == 0 else slice(None) for st in ary.strides)]


def is_contiguous(ary) -> bool:
    """C-contiguous once broadcast and length-1 axes are ignored (numba's ``is_contiguous``):
    numpy's rule over the axes of extent > 1 and a nonzero stride."""
    kept = [(n, st) for n, st in zip(ary.shape, ary.strides) if n > 1 and st != 0]
    return _numpy_contiguous([n for n, _ in kept], [st for _, st in kept], ary.dtype.itemsize, "C")
