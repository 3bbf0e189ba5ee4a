"""Row 3: per-launch host overhead of a do-nothing kernel on the cpu target.

For 1, 4, 16 and 64 device-array arguments:

* **launch**: mean time of ``k[1, 1](*args)`` in a loop (one block of one
  thread that does nothing, so this is almost all host work);
* **host path, execution stubbed**: the same loop with the loaded kernel's
  native entry point (``CpuKernel._fn``, what the executor calls per chunk of
  blocks) replaced by a Python no-op for the duration of the measurement, so it
  times everything from ``k[g, b](...)`` up to, not including, the executor's
  call into compiled code. This reaches into a private attribute of
  ``pykern.runtime.cpu_executor`` (an adapter in this file, pykern is not
  modified); when that attribute is gone the row says so.

numba-cuda anchors from the issue (NVIDIA GPU, real launches): 5.9 µs for 1
array argument, 30 µs for 16; the target is <= 2 µs for 4 arguments.

Run alone: ``python benchmarks/bench_launch.py [--quick]``.
"""

from __future__ import annotations

import numpy as np

from _common import Row, best_time, main_for

import pykern as cuda
from kernels import trivial_kernel

NUMBA_ANCHOR_US = {1: 5.9, 16: 30.0}
TARGET_US = 2.0


def _noop(*args):
    return None


def _stub_executor(k):
    """Replace the native entry of each loaded overload of ``k``; returns an undo
    function, or None when the internals are not where this adapter expects."""
    saved = []
    for ov in getattr(k, "_overloads", {}).values():
        kern = getattr(ov, "kernel", None)
        if kern is not None and hasattr(kern, "_fn"):
            saved.append((kern, kern._fn))
            kern._fn = _noop
    if not saved:
        return None

    def undo():
        for kern, fn in saved:
            kern._fn = fn

    return undo


def run(quick: bool = False) -> list:
    number = 2000 if not quick else 500
    repeat = 7 if not quick else 3
    rows = []
    for nargs in (1, 4, 16, 64):
        k = trivial_kernel(nargs)
        args = [cuda.to_device(np.zeros(16, np.float32)) for _ in range(nargs)]
        launcher = k[1, 1]

        def launch():
            launcher(*args)

        t = best_time(launch, repeat=repeat, number=number, warmup=3) * 1e6  # warmup compiles
        # the same through a fresh k[1, 1] each time (what user code usually writes)
        t_idx = best_time(lambda: k[1, 1](*args), repeat=repeat, number=number, warmup=3) * 1e6
        undo = _stub_executor(k)
        if undo is not None:
            try:
                t_host = best_time(lambda: k[1, 1](*args), repeat=repeat, number=number, warmup=3) * 1e6
            finally:
                undo()
        else:
            t_host = None
        anchor = NUMBA_ANCHOR_US.get(nargs)
        target = f"<= {TARGET_US} µs" if nargs == 4 else "—"
        limit = TARGET_US if nargs == 4 else None
        note = f"numba-cuda anchor {anchor} µs" if anchor else ""
        rows.append(Row("3 launch overhead (cpu)", f"k[1, 1](...), {nargs} array arg(s)", t_idx,
                        anchor, "µs", "numba-cuda anchor" if anchor else "", target,
                        None, f"pre-built launcher k[1,1] reused: {t:.2f} µs; {note}".rstrip("; "),
                        ratio=(t_idx / anchor) if anchor else None))
        rows[-1].limit = None
        if limit is not None:
            rows[-1].ratio = t_idx / limit
            rows[-1].limit = 1.0
            rows[-1].baseline, rows[-1].baseline_name = limit, "target"
        host_row = Row("3 launch overhead (cpu)", f"host path only (execution stubbed), {nargs} arg(s)", t_host,
                       None, "µs", "", target, None,
                       "stub unavailable: pykern internals changed" if t_host is None else
                       f"execution share: {t_idx - t_host:.2f} µs")
        if limit is not None and t_host is not None:
            host_row.baseline, host_row.baseline_name = limit, "target"
            host_row.ratio, host_row.limit = t_host / limit, 1.0
        rows.append(host_row)
    return rows


if __name__ == "__main__":
    main_for(run)
