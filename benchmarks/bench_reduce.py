"""Row: ``cuda.reduce`` (a two-pass tree reduction on the device) over 1e7
float32 on the cpu target vs ``numpy.sum``. Tracked, no target.

Run alone: ``python benchmarks/bench_reduce.py [--quick]``.
"""

from __future__ import annotations

import numpy as np

from _common import Row, best_time, main_for

import pykern as cuda


@cuda.reduce
def sum_reduce(a, b):
    return a + b


def run(quick: bool = False) -> list:
    n = 10_000_000 if not quick else 1_000_000
    repeat = 10 if not quick else 3
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    d_x = cuda.to_device(x)
    t_dev = best_time(lambda: sum_reduce(d_x), repeat=repeat)  # the warmup call compiles
    t_host = best_time(lambda: sum_reduce(x), repeat=repeat)
    t_np = best_time(lambda: np.sum(x), repeat=repeat)
    ok = np.isclose(sum_reduce(d_x), np.sum(x, dtype=np.float64), rtol=1e-4)
    gbs = lambda t: 4 * n / t / 1e9  # noqa: E731
    note = f"{gbs(t_dev):.1f} GB/s vs {gbs(t_np):.1f}" + ("" if ok else " RESULT MISMATCH")
    size = f"n={n:,} float32"
    return [
        Row("cuda.reduce (cpu)", f"device array, {size}", t_dev * 1e3, t_np * 1e3, "ms", "numpy.sum", "tracked",
            None, note),
        Row("cuda.reduce (cpu)", f"host numpy array, {size}", t_host * 1e3, t_np * 1e3, "ms", "numpy.sum",
            "tracked", None, f"{gbs(t_host):.1f} GB/s"),
    ]


if __name__ == "__main__":
    main_for(run)
