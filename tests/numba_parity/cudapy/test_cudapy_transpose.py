"""numba-cuda's ``tests/cudapy/test_transpose.py`` (see conftest.py): the transpose kernel on numeric,
record, bool arrays and views."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


_recordwith2darray = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])


def test_transpose_kernel():
    # test_transpose.py TestTranspose.test_transpose / test_transpose_record /
    # test_transpose_bool / test_transpose_view
    from pykern.numba_compat.kernels.transpose import transpose

    for rows, cols, dtype in ((5, 6, np.float64), (128, 128, np.complex128), (1025, 512, np.float64)):
        x = np.arange(rows * cols, dtype=dtype).reshape(cols, rows)
        y = np.zeros(rows * cols, dtype=dtype).reshape(rows, cols)
        dy = cuda.cudadrv.devicearray.from_array_like(y)
        transpose(cuda.to_device(x), dy)
        dy.copy_to_host(y)
        np.testing.assert_array_equal(x.transpose(), y)

    rng = np.random.RandomState(0)
    for rows, cols in ((2, 3), (16, 16), (16, 17), (17, 16), (14, 15), (15, 14), (14, 14)):
        arr = np.recarray((rows, cols), dtype=_recordwith2darray)
        for x in range(rows):
            for y in range(cols):
                arr[x, y].i = x**2 + y
                arr[x, y].j = np.arange(6, dtype=np.float32).reshape(3, 2) * x + y
        d_transposed = cuda.device_array_like(arr.T)
        transpose(cuda.to_device(arr), d_transposed)
        np.testing.assert_array_equal(arr.T, d_transposed.copy_to_host())

        barr = rng.randint(2, size=(rows, cols)).astype(np.bool_)
        d_transposed = cuda.device_array_like(barr.T)
        transpose(cuda.to_device(barr), d_transposed)
        np.testing.assert_array_equal(barr.T, d_transposed.copy_to_host())

    a = np.arange(120, dtype=np.int64).reshape((10, 12))
    d_a_view_t = cuda.to_device(a)[::2, ::2].T
    assert d_a_view_t.shape == (6, 5)
    assert d_a_view_t.strides == (40, 8)
    np.testing.assert_array_equal(a[::2, ::2].T, d_a_view_t.copy_to_host())
