"""numba-cuda's ``tests/cudapy/test_laplace.py`` (see conftest.py): a Laplace solver with shared-memory
tiles and a grid-wide error reduction."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda
from pykern import float64

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_laplace_small():
    # test_laplace.py TestCudaLaplace.test_laplace_small (256x256 and 1000 iterations there,
    # with no check of the result; smaller here, and each iteration's grid and error compared
    # with the same Jacobi step in numpy)
    tpb = 16
    SM_SIZE = tpb, tpb

    @cuda.jit(float64(float64, float64), device=True, inline="always")
    def get_max(a, b):
        if a > b:
            return a
        else:
            return b

    @cuda.jit(cuda.void(float64[:, :], float64[:, :], float64[:, :]))
    def jocabi_relax_core(A, Anew, error):
        err_sm = cuda.shared.array(SM_SIZE, dtype=float64)
        ty = cuda.threadIdx.x
        tx = cuda.threadIdx.y
        bx = cuda.blockIdx.x
        by = cuda.blockIdx.y
        n = A.shape[0]
        m = A.shape[1]
        i, j = cuda.grid(2)
        err_sm[ty, tx] = 0
        if j >= 1 and j < n - 1 and i >= 1 and i < m - 1:
            Anew[j, i] = 0.25 * (A[j, i + 1] + A[j, i - 1] + A[j - 1, i] + A[j + 1, i])
            err_sm[ty, tx] = Anew[j, i] - A[j, i]
        cuda.syncthreads()
        t = tpb // 2
        while t > 0:
            if ty < t:
                err_sm[ty, tx] = get_max(err_sm[ty, tx], err_sm[ty + t, tx])
            t //= 2
            cuda.syncthreads()
        t = tpb // 2
        while t > 0:
            if tx < t and ty == 0:
                err_sm[ty, tx] = get_max(err_sm[ty, tx], err_sm[ty, tx + t])
            t //= 2
            cuda.syncthreads()
        if tx == 0 and ty == 0:
            error[by, bx] = err_sm[0, 0]

    NN = NM = 64
    A = np.zeros((NN, NM))
    A[:, 0] = 1.0
    Anew = A.copy()
    blockdim = (tpb, tpb)
    griddim = (NN // tpb, NM // tpb)
    error_grid = np.zeros(griddim)
    stream = cuda.stream()
    dA = cuda.to_device(A, stream)
    dAnew = cuda.to_device(Anew, stream)
    derror_grid = cuda.to_device(error_grid, stream)
    rA, rAnew = A.copy(), Anew.copy()
    for _ in range(30):
        jocabi_relax_core[griddim, blockdim, stream](dA, dAnew, derror_grid)
        derror_grid.copy_to_host(error_grid, stream=stream)
        stream.synchronize()

        rAnew[1:-1, 1:-1] = 0.25 * (rA[1:-1, 2:] + rA[1:-1, :-2] + rA[:-2, 1:-1] + rA[2:, 1:-1])
        d = np.zeros_like(rA)
        d[1:-1, 1:-1] = rAnew[1:-1, 1:-1] - rA[1:-1, 1:-1]
        blocks = d.reshape(griddim[1], tpb, griddim[0], tpb).max(axis=(1, 3))
        np.testing.assert_array_equal(error_grid, blocks)
        np.testing.assert_array_equal(dAnew.copy_to_host(), rAnew)
        dA, dAnew = dAnew, dA
        rA, rAnew = rAnew, rA
    assert 0 < np.abs(error_grid).max() < 0.05
