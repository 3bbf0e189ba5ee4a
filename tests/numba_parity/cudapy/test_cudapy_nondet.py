"""numba-cuda's ``tests/cudapy/test_nondet.py`` (see conftest.py): a kernel with loop-carried values
whose ordering must not matter."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_nondet_for_pre():
    # test_nondet.py TestCudaNonDet.test_for_pre (numpy arrays in place of cupy's)
    @cuda.jit(cuda.void(cuda.float32[:, :], cuda.float32[:, :], cuda.float32[:]))
    def diagproduct(c, a, b):
        startX, startY = cuda.grid(2)
        gridX = cuda.gridDim.x * cuda.blockDim.x
        gridY = cuda.gridDim.y * cuda.blockDim.y
        height = c.shape[0]
        width = c.shape[1]
        for x in range(startX, width, (gridX)):
            for y in range(startY, height, (gridY)):
                c[y, x] = a[y, x] * b[x]

    N = 8
    dA = np.arange(N * N).reshape(N, N).astype(np.float32)
    dB = (np.arange(N) + 0).astype(np.float32)
    dF = np.empty(dA.shape, dtype=dA.dtype)
    diagproduct[(1, 1), (32, 8)](dF, dA, dB)
    np.testing.assert_array_almost_equal(dF, np.dot(dA, np.diag(dB)))
