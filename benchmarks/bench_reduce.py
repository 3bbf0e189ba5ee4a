"""Row 8: ``cuda.reduce`` on the cpu target against numpy.

* 1e7 float32 and float64: a sum on device and host arrays, a sum with ``init``, and a custom
  binary function (``max``), each against ``numpy.sum`` of the same array (target: at least as
  fast, ratio <= 1); the max also against ``numpy.max`` (stricter: numpy's max is vectorised
  without pairwise summation's bookkeeping).
* 1000 float64 elements: the time of one call, target <= 10 us; ``numpy.sum`` alongside.

pykern and numpy run in turns (interleaved rounds), rows give the best round, notes the medians.

Run alone: ``python benchmarks/bench_reduce.py [--quick]``.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

from _common import Row, main_for

import pykern as cuda


@cuda.reduce
def sum_reduce(a, b):
    return a + b


@cuda.reduce
def max_reduce(a, b):
    return max(a, b)


def _rounds(fns: dict, rounds: int, number: int = 1) -> dict:
    """Seconds per call of each of ``fns`` in ``rounds`` interleaved rounds (``number`` calls each)."""
    for f in fns.values():
        f()
    out = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            t0 = time.perf_counter()
            for _ in range(number):
                f()
            out[k].append((time.perf_counter() - t0) / number)
    return out


def run(quick: bool = False) -> list:
    n = 10_000_000 if not quick else 1_000_000
    rounds = 15 if not quick else 3
    rows = []
    load = f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    for dt in (np.float32, np.float64):
        x = np.random.default_rng(0).random(n).astype(dt)
        d_x = cuda.to_device(x)
        t = _rounds({"np.sum": lambda: np.sum(x), "np.max": lambda: np.max(x),
                     "device": lambda: sum_reduce(d_x), "host": lambda: sum_reduce(x),
                     "init": lambda: sum_reduce(d_x, init=5), "max": lambda: max_reduce(d_x)}, rounds)
        best = {k: min(v) * 1e3 for k, v in t.items()}
        med = {k: statistics.median(v) * 1e3 for k, v in t.items()}
        ok = {"device": np.isclose(sum_reduce(d_x), np.sum(x, dtype=np.float64), rtol=1e-4),
              "host": np.isclose(sum_reduce(x), np.sum(x, dtype=np.float64), rtol=1e-4),
              "init": np.isclose(sum_reduce(d_x, init=5), np.sum(x, dtype=np.float64) + 5, rtol=1e-4),
              "max": max_reduce(d_x) == np.max(x)}
        name = np.dtype(dt).name
        for key, case, base in (("device", "sum, device array", "np.sum"), ("host", "sum, host numpy array", "np.sum"),
                                ("init", "sum with init=5, device array", "np.sum"),
                                ("max", "custom max(a, b), device array", "np.sum"),
                                ("max", "custom max(a, b), device array, vs numpy.max", "np.max")):
            gbs = n * np.dtype(dt).itemsize / best[key] / 1e6
            note = (f"{gbs:.1f} GB/s; best of {rounds} interleaved rounds, medians {med[key]:.2f} vs "
                    f"{med[base]:.2f} ms; {load}" + ("" if ok[key] else " RESULT MISMATCH"))
            rows.append(Row("8 cuda.reduce (cpu)", f"{case}, n={n:,} {name}", best[key], best[base], "ms",
                            "numpy.max" if base == "np.max" else "numpy.sum", "<= 1x", 1.0, note))
    small = np.random.default_rng(1).random(1000)
    t = _rounds({"np.sum": lambda: np.sum(small), "reduce": lambda: sum_reduce(small)}, 7 if not quick else 2,
                number=2000 if not quick else 200)
    ok = np.isclose(sum_reduce(small), small.sum())
    rows.append(Row("8 cuda.reduce (cpu)", "sum of 1,000 float64 (host array), one call", min(t["reduce"]) * 1e6,
                    10.0, "µs", "target", "<= 10 µs", 1.0,
                    f"numpy.sum {min(t['np.sum']) * 1e6:.2f} µs; medians {statistics.median(t['reduce']) * 1e6:.2f} vs "
                    f"{statistics.median(t['np.sum']) * 1e6:.2f} µs; {load}" + ("" if ok else " RESULT MISMATCH")))
    return rows


if __name__ == "__main__":
    main_for(run)
