"""GEMM on the matrix cores: C (float32) = A @ B with bfloat16 or float16 inputs, float32
accumulation, tiles staged through shared memory.

One block of one wave computes a 32x32 tile of C as four 16x16 accumulator fragments. Each step
of k copies a 32x16 tile of A and a 16x32 tile of B into shared memory (every lane a share),
then the wave loads its matrix_a/matrix_b fragments from there and multiplies: on gfx942 that
inner loop is ``v_mfma_f32_16x16x16_{f16,bf16}``, on gfx1100 ``v_wmma_f32_16x16x16_{f16,bf16}``.
The cpu target computes the same function (``pykern.codegen.lowering.matrix_reference``'s order).
"""

import ml_dtypes
import numpy as np

import pykern as cuda
from pykern import wmma
from _util import report, timed

TM = TN = 32  # the block's C tile
TK = 16  # k per step


def make_gemm(dtype):
    """The kernel ``gemm(A, B, C)`` for ``dtype`` (``pykern.bfloat16`` or ``pykern.float16``)
    inputs; M and N multiples of 32, K of 16; launch (M/32, N/32) blocks of one wave."""

    def gemm(A, B, C):
        sA = cuda.shared.array(shape=(TM, TK), dtype=dtype)
        sB = cuda.shared.array(shape=(TK, TN), dtype=dtype)
        row0 = cuda.blockIdx.x * TM
        col0 = cuda.blockIdx.y * TN
        tid = cuda.threadIdx.x
        nthreads = cuda.blockDim.x
        a0 = wmma.fragment(wmma.matrix_a, 16, 16, 16, dtype, wmma.row_major)
        a1 = wmma.fragment(wmma.matrix_a, 16, 16, 16, dtype, wmma.row_major)
        b0 = wmma.fragment(wmma.matrix_b, 16, 16, 16, dtype, wmma.row_major)
        b1 = wmma.fragment(wmma.matrix_b, 16, 16, 16, dtype, wmma.row_major)
        c00 = wmma.fragment(wmma.accumulator, 16, 16, 16, cuda.float32)
        c01 = wmma.fragment(wmma.accumulator, 16, 16, 16, cuda.float32)
        c10 = wmma.fragment(wmma.accumulator, 16, 16, 16, cuda.float32)
        c11 = wmma.fragment(wmma.accumulator, 16, 16, 16, cuda.float32)
        wmma.fill_fragment(c00, 0.0)
        wmma.fill_fragment(c01, 0.0)
        wmma.fill_fragment(c10, 0.0)
        wmma.fill_fragment(c11, 0.0)
        for k0 in range(0, A.shape[1], TK):
            for t in range(tid, TM * TK, nthreads):
                sA[t // TK, t % TK] = A[row0 + t // TK, k0 + t % TK]
                sB[t // TN, t % TN] = B[k0 + t // TN, col0 + t % TN]
            cuda.syncthreads()
            wmma.load_matrix_sync(a0, sA, 0, TK)
            wmma.load_matrix_sync(a1, sA, 16 * TK, TK)
            wmma.load_matrix_sync(b0, sB, 0, TN)
            wmma.load_matrix_sync(b1, sB, 16, TN)
            wmma.mma_sync(c00, a0, b0, c00)
            wmma.mma_sync(c01, a0, b1, c01)
            wmma.mma_sync(c10, a1, b0, c10)
            wmma.mma_sync(c11, a1, b1, c11)
            cuda.syncthreads()
        n = C.shape[1]
        wmma.store_matrix_sync(C, row0 * n + col0, c00, n, wmma.mem_row_major)
        wmma.store_matrix_sync(C, row0 * n + col0 + 16, c01, n, wmma.mem_row_major)
        wmma.store_matrix_sync(C, (row0 + 16) * n + col0, c10, n, wmma.mem_row_major)
        wmma.store_matrix_sync(C, (row0 + 16) * n + col0 + 16, c11, n, wmma.mem_row_major)

    return gemm


gemm_bf16 = cuda.jit(make_gemm(cuda.bfloat16))
gemm_f16 = cuda.jit(make_gemm(cuda.float16))
SIGNATURES = {"bf16": (gemm_bf16, "void(bfloat16[:, ::1], bfloat16[:, ::1], float32[:, ::1])"),
              "f16": (gemm_f16, "void(float16[:, ::1], float16[:, ::1], float32[:, ::1])")}


def error_bound(A, B):
    """The matrix cores' bound against the exact product: (K + 2) * 2**-24 * (|A| @ |B|) per element
    (every step of k rounds once to float32)."""
    a, b = np.abs(A.astype(np.float64)), np.abs(B.astype(np.float64))
    return (A.shape[1] + 2) * 2.0**-24 * (a @ b)


def random_inputs(kind, m, n, k, seed=1):
    """A (m x k) and B (k x n) of ``kind`` ("bf16" or "f16"), standard normal values rounded."""
    rng = np.random.default_rng(seed)
    dt = ml_dtypes.bfloat16 if kind == "bf16" else np.float16
    return rng.standard_normal((m, k)).astype(dt), rng.standard_normal((k, n)).astype(dt)


def main(n=128):
    for kind in ("bf16", "f16"):
        A, B = random_inputs(kind, n, n, n)
        C = np.zeros((n, n), np.float32)
        kern = SIGNATURES[kind][0]
        t = timed(lambda: kern[(n // TM, n // TN), 64](A, B, C), repeat=1)
        exact = A.astype(np.float64) @ B.astype(np.float64)
        ok = bool(np.all(np.abs(C - exact) <= error_bound(A, B)))
        report(f"wmma_gemm {kind}", ok, t, f"{n}x{n}x{n}, {2 * n**3 / t / 1e9:.2f} GFLOP/s")


if __name__ == "__main__":
    main()
