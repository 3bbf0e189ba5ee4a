"""Row 11: ``vectorize``/``guvectorize`` calls on small arrays (1 element), target <= 5 µs.

The cases: two host arrays, an array and a Python scalar (broadcast), ``out=`` a host array,
device arrays in and a new device array out, device arrays in and ``out=`` a device array, and a
guvectorize ``(n),()->(n)`` on a host array and a scalar. Baselines: numpy's ``np.add`` on the
same host arrays, and a plain kernel launch ``k[1, 1](x, y, out)`` of the same loop body.

Each call is timed by the calling thread's CPU time (``time.thread_time``), best of 7 rounds of
2000 calls: on a shared machine wall time mostly measures the other jobs, and everything here
runs on the calling thread (a one-block launch runs inline). Wall times are in the notes.

Run alone: ``python benchmarks/bench_ufunc.py [--quick]``.
"""

from __future__ import annotations

import os
import time

import numpy as np

from _common import Row, main_for

import pykern as cuda

TARGET = 5.0


@cuda.vectorize(["float32(float32, float32)", "float64(float64, float64)"])
def vadd(a, b):
    return a + b


@cuda.guvectorize(["void(float32[:], float32, float32[:])"], "(n),()->(n)")
def gadd(a, s, out):
    for i in range(a.shape[0]):
        out[i] = a[i] + s


@cuda.jit
def kadd(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


def _per_call(fn, rounds: int, number: int, clock) -> float:
    """Best of ``rounds`` of the mean ``clock`` time of ``number`` calls, in µs."""
    fn()
    fn()  # the second call makes the call plan / the launch fast path
    best = float("inf")
    for _ in range(rounds):
        t0 = clock()
        for _ in range(number):
            fn()
        best = min(best, (clock() - t0) / number)
    return best * 1e6


def run(quick: bool = False) -> list:
    rounds, number = (7, 2000) if not quick else (2, 200)
    x, y, o = np.ones(1, np.float32), np.full(1, 2, np.float32), np.empty(1, np.float32)
    dx, dy, do = cuda.to_device(x), cuda.to_device(y), cuda.device_array(1, np.float32)
    launch = kadd[1, 1]
    cases = [
        ("vectorize(x, y), host arrays", lambda: vadd(x, y), lambda: np.array_equal(vadd(x, y), x + y)),
        ("vectorize(x, 2.0), scalar broadcast", lambda: vadd(x, 2.0), lambda: np.array_equal(vadd(x, 2.0), x + 2)),
        ("vectorize(x, y, out=o), host", lambda: vadd(x, y, out=o),
         lambda: vadd(x, y, out=o) is o and o[0] == 3),
        ("vectorize(dx, dy) -> device array", lambda: vadd(dx, dy),
         lambda: np.array_equal(vadd(dx, dy).copy_to_host(), x + y)),
        ("vectorize(dx, dy, out=do), device", lambda: vadd(dx, dy, out=do),
         lambda: vadd(dx, dy, out=do) is do and do.copy_to_host()[0] == 3),
        ("guvectorize (n),()->(n) (x, 2.0), host", lambda: gadd(x, 2.0),
         lambda: np.array_equal(gadd(x, 2.0), x + 2)),
    ]
    t_np = _per_call(lambda: np.add(x, y), rounds, number, time.thread_time)
    t_k = _per_call(lambda: launch(x, y, o), rounds, number, time.thread_time)
    load = f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    rows = []
    for case, fn, check in cases:
        t = _per_call(fn, rounds, number, time.thread_time)
        wall = _per_call(fn, max(2, rounds // 2), number, time.perf_counter)
        ok = "" if check() else " RESULT MISMATCH"
        rows.append(Row("11 ufunc calls (cpu)", case + ", 1 element", t, TARGET, "µs", "target", f"<= {TARGET} µs",
                        1.0, f"np.add {t_np:.2f} µs, kernel launch k[1, 1] {t_k:.2f} µs (thread CPU time); "
                             f"wall {wall:.2f} µs; {load}{ok}"))
    return rows


if __name__ == "__main__":
    main_for(run)
