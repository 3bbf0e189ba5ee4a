"""numba.cuda.cudadrv's names that user programs reach for, so that ``cuda.cudadrv.devicearray.
DeviceNDArray`` and ``from pykern.cudadrv.driver import CudaAPIError`` keep working after the port.

Only the user-facing part: ``devicearray`` (the array classes, ``is_cuda_ndarray``, ``auto_device``),
``driver`` (``CudaAPIError`` -- pykern's ``HipError`` --, ``CudaSupportError``, ``driver.get_device_count()``,
``is_device_memory``, ``device_pointer``, the ``MemoryPointer`` family from ``memory``), ``devices``
(``gpus``, ``get_context``), ``error``.
Submodules load on first use.
"""

import importlib

#: attribute -> module below this package (``memory``: raw copies and the context's allocations)
_SUBMODULES = {"devicearray": "devicearray", "driver": "driver", "devices": "devices", "error": "error",
               "memory": "driver_memory"}


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{_SUBMODULES[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
