"""The sim target's speed: kernels run as Python, one thread at a time (for pdb).

Goal from the issue: usable for a few thousand threads (seconds). Measured, best of
a few launches after a warm-up (the Python is generated at the first launch):

* saxpy (samples/saxpy.py), 4096 float32 (quick: 1024): no barrier, each thread runs
  to its end in the caller's thread;
* tiled matmul (samples/matmul.py), 64x64 float32 (quick: 32x32), one Python thread per
  simulated thread and a baton handed at each barrier.

Each row gives the launch time and, in the notes, the time per thread and per executed
kernel statement (line events counted in a separate traced run).

Run alone: ``python benchmarks/bench_sim.py [--quick]``.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from _common import Row, best_time, main_for

import pykern as cuda
from kernels import TPB, matmul, saxpy
from pykern import runtime as targets

BENCH = "sim target (Python, pdb-able)"


def _cases(quick: bool):
    rng = np.random.default_rng(3)
    n = 1024 if quick else 4096
    x, y, out = (rng.random(n, dtype=np.float32) for _ in range(3))
    yield "saxpy", f"{n} threads", saxpy, (n + 255) // 256, 256, (np.float32(2), x, y, out), n
    m = 32 if quick else 64
    A, B = rng.random((m, m), dtype=np.float32), rng.random((m, m), dtype=np.float32)
    C = np.zeros((m, m), np.float32)
    g = (m + TPB - 1) // TPB
    yield "tiled matmul", f"{m}x{m}, {TPB}x{TPB} tiles, {g * g * TPB * TPB} threads", matmul, (g, g), \
        (TPB, TPB), (A, B, C), g * g * TPB * TPB


def _statements(launch, filename) -> int:
    """Kernel lines executed by one launch (line events in frames of the kernel's file)."""
    count = [0]

    def tracer(frame, event, arg):
        if frame.f_code.co_filename != filename:
            return None

        def local(frame, event, arg):
            if event == "line":
                count[0] += 1
            return local
        return local

    sys.settrace(tracer)
    threading.settrace(tracer)
    try:
        launch()
    finally:
        sys.settrace(None)
        threading.settrace(None)
    return count[0]


def run(quick: bool) -> list:
    rows = []
    saved = list(targets._chosen)
    cuda.set_target("sim")
    try:
        for name, size, kernel, grid, block, args, threads in _cases(quick):
            launch = lambda: kernel[grid, block](*args)  # noqa: E731
            t = best_time(launch, repeat=2 if quick else 3)
            stmts = _statements(launch, kernel.py_func.__code__.co_filename)
            rows.append(Row(BENCH, f"{name}, {size}", t * 1e3, None, "ms", target="seconds for thousands of threads",
                            note=f"{t / threads * 1e6:.1f} us/thread, {stmts} statements, "
                                 f"{t / max(stmts, 1) * 1e6:.2f} us/statement"))
    finally:
        targets._chosen[:] = saved
    return rows


if __name__ == "__main__":
    main_for(run)
