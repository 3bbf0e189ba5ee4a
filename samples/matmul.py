"""Shared-memory tiled matrix multiply (the classic numba.cuda example)."""

import numpy as np

import pykern as cuda
from _util import report, timed

TPB = 16


def make_matmul(tpb, dtype):
    """The kernel ``matmul(A, B, C)``: C = A @ B with ``tpb`` x ``tpb`` tiles of ``dtype`` in
    shared memory; launch it with blocks of (tpb, tpb) threads covering C."""

    def matmul(A, B, C):
        sA = cuda.shared.array(shape=(tpb, tpb), dtype=dtype)
        sB = cuda.shared.array(shape=(tpb, tpb), dtype=dtype)
        x, y = cuda.grid(2)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        bpg = cuda.gridDim.x
        acc = dtype(0.0)
        for i in range(bpg):
            sA[ty, tx] = 0
            sB[ty, tx] = 0
            if y < A.shape[0] and tx + i * tpb < A.shape[1]:
                sA[ty, tx] = A[y, tx + i * tpb]
            if x < B.shape[1] and ty + i * tpb < B.shape[0]:
                sB[ty, tx] = B[ty + i * tpb, x]
            cuda.syncthreads()
            for j in range(tpb):
                acc += sA[ty, j] * sB[j, tx]
            cuda.syncthreads()
        if y < C.shape[0] and x < C.shape[1]:
            C[y, x] = acc

    return matmul


matmul = cuda.jit(make_matmul(TPB, cuda.float32))


def main(n=256):
    rng = np.random.default_rng(1)
    A = rng.random((n, n), dtype=np.float32)
    B = rng.random((n, n), dtype=np.float32)
    C = np.zeros((n, n), np.float32)
    grid = ((n + TPB - 1) // TPB, (n + TPB - 1) // TPB)
    dA, dB, dC = cuda.to_device(A), cuda.to_device(B), cuda.to_device(C)
    t = timed(lambda: matmul[grid, (TPB, TPB)](dA, dB, dC), repeat=1)
    got = dC.copy_to_host()
    report("matmul", np.allclose(got, A @ B, rtol=1e-4, atol=1e-3), t, f"{n}x{n}, {2 * n**3 / t / 1e9:.2f} GFLOP/s")


if __name__ == "__main__":
    main()
