"""Row 10: the kernel sanitizer's cost on the cpu target -- a kernel compiled with
``sanitize="race,init"`` against the same kernel unsanitized (the default paths: vectorised
thread loops, work-item loops), launched on the same arrays, best of several launches each.
Goal from the issue: at most 20x. The shadow memory the launch held (16 bytes per byte of memory
touched through 4-byte or wider elements, in 256 KiB pages kept from launch to launch) is given in
the notes, with the array arguments the launch left unchecked (never written, or touched only at
the thread's own grid index: docs/user/debugging.md, "Kernel sanitizer").

* saxpy (samples/saxpy.py), 2^20 float32 (quick: 2^16);
* tiled matmul (samples/matmul.py, 16x16 tiles), 256² float32 (quick: 64²);
* tree reduction in shared memory (samples/tree_sum.py), 2^20 float32 (quick: 2^16);
* histogram with shared-memory atomics (samples/histogram.py), 2^20 float32 (quick: 2^16).

Run alone: ``python benchmarks/bench_sanitizer.py [--quick]``.
"""

from __future__ import annotations

import os
import sys

import numpy as np

from _common import Row, best_time, main_for

import pykern as cuda
from kernels import RED_TPB, TPB, matmul, saxpy, tree_reduce

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples"))
from histogram import NBINS, histogram  # noqa: E402  (samples/histogram.py)

BENCH = "10 sanitizer (cpu)"
MODES = "race,init"


def _cases(quick: bool):
    rng = np.random.default_rng(7)
    n = 1 << (16 if quick else 20)
    x, y, out = (rng.random(n, dtype=np.float32) for _ in range(3))
    yield "saxpy", f"{n} float32", saxpy, (n + 255) // 256, 256, (np.float32(2), x, y, out)
    m = 64 if quick else 256
    A, B = rng.random((m, m), dtype=np.float32), rng.random((m, m), dtype=np.float32)
    C = np.zeros((m, m), np.float32)
    g = (m + TPB - 1) // TPB
    yield "tiled matmul", f"{m}x{m} float32, {TPB}x{TPB} tiles", matmul, (g, g), (TPB, TPB), (A, B, C)
    s = rng.random(n, dtype=np.float32)
    yield "tree reduction", f"{n} float32, blocks of {RED_TPB}", tree_reduce, n // RED_TPB, RED_TPB, (
        s, np.zeros(n // RED_TPB, np.float32))
    h = rng.normal(size=n).astype(np.float32)
    yield "histogram", f"{n} float32, {NBINS} bins, shared atomics", histogram, 32, 256, (
        h, np.float32(-3), np.float32(3), np.zeros(NBINS, np.int32))


def _unchecked(names) -> str:
    """The note on the arrays the sanitizer left unchecked (never written, or own-index)."""
    return f"; unchecked: {', '.join(names)}" if names else ""


def run(quick: bool) -> list:
    from pykern.runtime.cpu import sanitizer

    rows = []
    repeat = 3 if quick else 5
    for name, size, kernel, grid, block, args in _cases(quick):
        checked = cuda.jit(kernel.py_func, sanitize=MODES)
        plain_t = best_time(lambda: kernel[grid, block](*args), repeat=repeat)
        checked_t = best_time(lambda: checked[grid, block](*args), repeat=repeat)
        shadow = sanitizer.last_launch["shadow_bytes"]
        rows.append(Row(BENCH, f"{name}, {size}", checked_t * 1e3, plain_t * 1e3, "ms",
                        baseline_name="unsanitized", target="<= 20x", limit=20.0,
                        note=f"shadow {shadow / 2**20:.1f} MiB ({sanitizer.last_launch['pages']} pages touched)"
                             + _unchecked(sanitizer.last_launch["unchecked"])))
    return rows


if __name__ == "__main__":
    main_for(run)
