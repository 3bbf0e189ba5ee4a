"""Row 1: cpu-target saxpy over 1e7 float32 vs numpy ``a*x + y`` (target <= 1.5x numpy).

Two cases: device arrays made with ``cuda.to_device`` (host memory on the cpu
target, so no copies are timed) and plain numpy arrays passed to the launch.
numpy's ``a*x + y`` allocates two temporaries; the in-place variant
(``np.multiply(x, a, out); out += y``) is reported too as the stricter baseline.

Run alone: ``python benchmarks/bench_saxpy.py [--quick]``.
"""

from __future__ import annotations

import numpy as np

from _common import Row, best_time, main_for

import pykern as cuda
from kernels import saxpy

TARGET = 1.5


def run(quick: bool = False) -> list:
    n = 10_000_000 if not quick else 2_000_000
    repeat = 10 if not quick else 3
    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    a = np.float32(2.5)
    out = np.empty_like(x)
    d_x, d_y, d_out = cuda.to_device(x), cuda.to_device(y), cuda.device_array_like(out)
    tpb = 256
    blocks = (n + tpb - 1) // tpb

    def dev():
        saxpy[blocks, tpb](a, d_x, d_y, d_out)
        cuda.synchronize()

    def host():
        saxpy[blocks, tpb](a, x, y, out)
        cuda.synchronize()

    t_dev = best_time(dev, repeat=repeat)  # warmup call compiles
    ok_dev = np.allclose(d_out.copy_to_host(), a * x + y, rtol=1e-6)
    t_host = best_time(host, repeat=repeat)
    ok_host = np.allclose(out, a * x + y, rtol=1e-6)

    t_np = best_time(lambda: a * x + y, repeat=repeat)
    tmp = np.empty_like(x)

    def np_inplace():
        np.multiply(x, a, out=tmp)
        np.add(tmp, y, out=tmp)

    t_np_inplace = best_time(np_inplace, repeat=repeat)
    size = f"n={n:,}"
    check = lambda ok: "" if ok else " RESULT MISMATCH"
    gbs = lambda t: 12 * n / t / 1e9  # 2 loads + 1 store of 4 bytes
    return [
        Row("1 saxpy (cpu)", f"device arrays, {size}", t_dev * 1e3, t_np * 1e3, "ms", "numpy a*x+y",
            f"<= {TARGET}x", TARGET, f"{gbs(t_dev):.1f} GB/s vs {gbs(t_np):.1f}{check(ok_dev)}"),
        Row("1 saxpy (cpu)", f"host numpy arrays, {size}", t_host * 1e3, t_np * 1e3, "ms", "numpy a*x+y",
            f"<= {TARGET}x", TARGET, f"{gbs(t_host):.1f} GB/s{check(ok_host)}"),
        Row("1 saxpy (cpu)", f"device arrays vs in-place numpy, {size}", t_dev * 1e3, t_np_inplace * 1e3, "ms",
            "numpy multiply+iadd, no temporaries", f"<= {TARGET}x", TARGET, "stricter baseline"),
    ]


if __name__ == "__main__":
    main_for(run)
