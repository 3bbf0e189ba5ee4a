"""Shared-memory tiled matrix multiply (the classic numba.cuda example)."""

import numpy as np

import pykern as cuda
from _util import report, timed

TPB = 16


@cuda.jit
def matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=cuda.float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=cuda.float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = np.float32(0.0)
    for t in range((A.shape[1] + TPB - 1) // TPB):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if x < A.shape[0] and ty + t * TPB < A.shape[1]:
            sA[tx, ty] = A[x, ty + t * TPB]
        if y < B.shape[1] and tx + t * TPB < B.shape[0]:
            sB[tx, ty] = B[tx + t * TPB, y]
        cuda.syncthreads()
        for j in range(TPB):
            acc += sA[tx, j] * sB[j, ty]
        cuda.syncthreads()
    if x < C.shape[0] and y < C.shape[1]:
        C[x, y] = acc


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
