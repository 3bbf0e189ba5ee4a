"""numba.cuda.kernels.transpose: ``transpose(a, b=None)`` of a 2-d device array on the device.

Any dtype, records included: elements are moved as their bytes (the arrays are seen as 3-d
uint8 arrays with the item as the last axis), so whole records move without record
assignment in the kernel.

Example::

    import numpy as np, pykern as cuda
    from pykern.numba_compat.kernels.transpose import transpose

    d = cuda.to_device(np.arange(6.0).reshape(2, 3))
    assert (transpose(d).copy_to_host() == np.arange(6.0).reshape(2, 3).T).all()
"""

from __future__ import annotations

import numpy as np

from pykern.dispatch import dispatcher
from pykern.lang import stubs as cuda

_TILE = 16


@dispatcher.jit
def _transpose_bytes(a, b):
    # b[i, j] = a[j, i], byte by byte; one thread per element of b
    i, j = cuda.grid(2)
    if i < b.shape[0] and j < b.shape[1]:
        for k in range(b.shape[2]):
            b[i, j, k] = a[j, i, k]


def _bytes_view(d):
    from pykern.runtime.memory.arrays import DeviceArray

    return DeviceArray(d.shape + (d.dtype.itemsize,), d.strides + (1,), np.dtype(np.uint8), d.storage, d.ptr,
                       d.stream)


def transpose(a, b=None, stream=0):
    """``b = a.T`` computed on the device (numba's ``cuda.kernels.transpose.transpose``): ``b``, a
    new C-ordered array when not given, must have ``a``'s dtype and the transposed shape."""
    from pykern.runtime.memory.arrays import DeviceArray, as_device_array, device_array

    a = a if isinstance(a, DeviceArray) else as_device_array(a)
    if a.ndim != 2:
        raise ValueError(f"transpose needs a 2-d array, got {a.ndim}-d")
    cols, rows = a.shape
    if b is None:
        b = device_array((rows, cols), a.dtype, stream=stream)
    elif not isinstance(b, DeviceArray):
        b = as_device_array(b)
    if b.shape != (rows, cols) or b.dtype != a.dtype:
        raise ValueError(f"transpose of a {a.shape} {a.dtype} array needs a {(rows, cols)} {a.dtype} result, "
                         f"got {b.shape} {b.dtype}")
    if b.size:
        grid = ((rows + _TILE - 1) // _TILE, (cols + _TILE - 1) // _TILE)
        _transpose_bytes[grid, (_TILE, _TILE), stream](_bytes_view(a), _bytes_view(b))
    return b
