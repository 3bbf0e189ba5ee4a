"""Row 2: shared-memory tiled matmul (16x16 tiles, samples/matmul.py) 512x512
float32 on the cpu target vs numpy ``A @ B`` (BLAS): GFLOP/s and the ratio
pykern/numpy (higher is better; there is no target in the issues, BLAS is
expected to win by orders of magnitude — the row tracks the cpu target's cost
per simulated thread and barrier).

Run alone: ``python benchmarks/bench_matmul.py [--quick]``.
"""

from __future__ import annotations

import numpy as np

from _common import Row, best_time, main_for

import pykern as cuda
from kernels import TPB, matmul


def run(quick: bool = False) -> list:
    n = 512 if not quick else 256
    repeat = 3 if not quick else 1
    rng = np.random.default_rng(1)
    A = rng.random((n, n), dtype=np.float32)
    B = rng.random((n, n), dtype=np.float32)
    dA, dB, dC = cuda.to_device(A), cuda.to_device(B), cuda.device_array((n, n), np.float32)
    grid = ((n + TPB - 1) // TPB, (n + TPB - 1) // TPB)

    def k():
        matmul[grid, (TPB, TPB)](dA, dB, dC)
        cuda.synchronize()

    t = best_time(k, repeat=repeat)
    ok = np.allclose(dC.copy_to_host(), A @ B, rtol=1e-4, atol=1e-3)
    t_np = best_time(lambda: A @ B, repeat=7, number=3, warmup=5)
    flops = 2.0 * n**3
    g, g_np = flops / t / 1e9, flops / t_np / 1e9
    return [
        Row("2 tiled matmul (cpu)", f"{n}x{n} float32, 16x16 shared tiles", g, g_np, "GFLOP/s", "numpy A@B",
            "— (tracked)", None, f"pykern {t * 1e3:.1f} ms, numpy {t_np * 1e3:.2f} ms"
            + ("" if ok else " RESULT MISMATCH"), higher_is_better=True),
    ]


if __name__ == "__main__":
    main_for(run)
