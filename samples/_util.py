"""Shared bits of the samples: timing and the one-line result check."""

import time

import pykern


def timed(fn, *args, repeat=3):
    """Best wall time of ``fn(*args)`` over ``repeat`` runs (first run compiles)."""
    fn(*args)
    pykern.synchronize()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args)
        pykern.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best


def report(name, ok, seconds, detail=""):
    print(f"{name}: target={pykern.current_target()} check={'OK' if ok else 'MISMATCH'} "
          f"time={seconds * 1e3:.2f} ms {detail}".rstrip())
    if not ok:
        raise SystemExit(1)
