"""Row 3: per-launch host overhead of a do-nothing kernel on the cpu target.

For 1, 4, 16 and 64 device-array arguments:

* **launch**: mean time of ``k[1, 1](*args)`` in a loop (one block of one
  thread that does nothing, so this is almost all host work);
* **host path, execution stubbed**: the same loop with the loaded kernel's
  native entry point (``CpuKernel._fn``, what the executor calls per chunk of
  blocks) replaced by a Python no-op for the duration of the measurement, so it
  times everything from ``k[g, b](...)`` up to, not including, the executor's
  call into compiled code. This reaches into a private attribute of
  ``pykern.runtime.cpu.executor`` (an adapter in this file, pykern is not
  modified); when that attribute is gone the row says so.

numba-cuda anchors from the issue (NVIDIA GPU, real launches): 5.9 µs for 1
array argument, 30 µs for 16; the target is <= 2 µs for 4 arguments.

Run alone: ``python benchmarks/bench_launch.py [--quick]``.
"""

from __future__ import annotations

import time

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


def _per_call_us(fn, number):
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number * 1e6


def _breakdown(k, args) -> str:
    """Where the host time of one launch goes (private pykern internals; empty
    when they moved): ``k[1, 1]`` (one cached launcher), the launcher's
    generated fast path with the executor stubbed (argument checks, packing,
    bookkeeping), and the full path a launch takes when the fast one does not
    apply (argument typing, overload lookup, configuration checks, flattening)."""
    try:
        launcher = k[1, 1]
        fast = launcher._fast
        if fast is None or not fast(tuple(args)):
            return ""
        n = 5000
        parts = {
            "k[1,1]": lambda: k[1, 1],
            "fast path, execution stubbed": lambda: fast(args),
            "full path k.launch(...)": lambda: k.launch(args, (1, 1, 1), (1, 1, 1)),
        }
        undo = _stub_executor(k)
        if undo is None:
            return ""
        try:
            got = {name: min(_per_call_us(f, n) for _ in range(3)) for name, f in parts.items()}
        finally:
            undo()
        return "breakdown: " + ", ".join(f"{name} {v:.2f}" for name, v in got.items())
    except Exception:
        return ""


def _guard_kind(k) -> str:
    """How the fast path of ``k[1, 1]`` checks numpy arguments and calls the kernel (private internals)."""
    fast = getattr(k[1, 1], "_fast", None)
    if fast is None:
        return "no fast path"
    g = fast.__globals__
    return ("native guards" if g.get("_native") is not None else "Python guards") + (
        ", native call" if g.get("_ncall") is not None else ", ctypes call")


def _native_guards():
    """Build the native guards and call now (loading LLVM if this process has not: its
    kernels came from the disk cache), as a process that compiled a kernel, or made
    ``native_guard.UPGRADE_AFTER`` launches, has them; False when unavailable."""
    try:
        from pykern.runtime import native_guard
    except ImportError:
        return False
    native_guard.upgrade()
    return native_guard.available()


def _python_guards_only():
    """Make fast paths made from now on check numpy arguments in Python and call the
    kernel through ctypes (what a process whose kernels all came from the disk cache
    does for its first launches, see ``pykern.runtime.native_guard``); returns an
    undo function, or None."""
    try:
        from pykern.runtime import native_guard
    except ImportError:
        return None
    saved = native_guard.make, native_guard.make_call
    native_guard.make = native_guard.make_call = lambda *a: None

    def undo():
        native_guard.make, native_guard.make_call = saved

    return undo


def _numpy_rows(k, nargs, number, repeat):
    """``k[1, 1](...)`` with host numpy arrays, checked by native guards, and (a new
    dispatcher of the same kernel) by the Python guards."""
    rows = []
    host_args = [np.zeros(16, np.float32) for _ in range(nargs)]
    undo = None
    for variant in ("native", "python"):
        if variant == "python":
            undo = _python_guards_only()
            if undo is None:
                break
            k = cuda.jit(k.py_func)
        try:
            for _ in range(3):
                k[1, 1](*host_args)
            kind = _guard_kind(k)
            t_np = min(_per_call_us(lambda: k[1, 1](*host_args), number) for _ in range(repeat))
            bd = _breakdown(k, host_args)
        finally:
            if undo is not None:
                undo()
        note = f"host memory passed as is; {kind}"
        if bd:
            note += f"; {bd} (µs)"
        case = f"k[1, 1](...), {nargs} numpy arrays" + ("" if variant != "python" else
                                                         ", no native code (cached kernels' first launches)")
        row = Row("3 launch overhead (cpu)", case, t_np, TARGET_US, "µs", "target", f"<= {TARGET_US} µs", 1.0, note)
        row.ratio = t_np / TARGET_US
        rows.append(row)
    return rows


def run(quick: bool = False) -> list:
    number = 3000 if not quick else 500
    repeat = 9 if not quick else 3
    rows = []
    _native_guards()  # as in a process that compiled its kernels (this one may have loaded them from the cache)
    for nargs in (1, 4, 16, 64):
        k = trivial_kernel(nargs)
        args = [cuda.to_device(np.zeros(16, np.float32)) for _ in range(nargs)]
        launcher = k[1, 1]
        launcher(*args)  # compiles
        full = lambda: k[1, 1](*args)
        reused = lambda: launcher(*args)
        t_idx = t_reused = t_host = float("inf")
        stub_ok = True
        # interleaved rounds, best of each, so both see the same machine load
        for _ in range(repeat):
            t_idx = min(t_idx, _per_call_us(full, number))
            t_reused = min(t_reused, _per_call_us(reused, number))
            undo = _stub_executor(k)
            if undo is None:
                stub_ok = False
                continue
            try:
                t_host = min(t_host, _per_call_us(full, number))
            finally:
                undo()
        if not stub_ok:
            t_host = None
        anchor = NUMBA_ANCHOR_US.get(nargs)
        is_target = nargs == 4
        note = f"pre-built launcher k[1,1] reused: {t_reused:.2f} µs"
        if anchor:
            note += f"; numba-cuda anchor {anchor} µs (quoted, not measured here)"
        row = Row("3 launch overhead (cpu)", f"k[1, 1](...), {nargs} array arg(s)", t_idx,
                  TARGET_US if is_target else anchor, "µs",
                  "target" if is_target else ("numba-cuda anchor" if anchor else ""),
                  f"<= {TARGET_US} µs" if is_target else "—", 1.0 if is_target else None, note)
        if is_target:
            row.ratio = t_idx / TARGET_US
        rows.append(row)
        host_note = ("stub unavailable: pykern internals changed" if t_host is None
                     else f"execution share: {t_idx - t_host:.2f} µs" if t_idx - t_host > 0 else "execution share: ~0 (within noise)")
        if is_target:
            bd = _breakdown(k, args)
            if bd:
                host_note += f"; {bd} (µs)"
        host_row = Row("3 launch overhead (cpu)", f"host path only (execution stubbed), {nargs} arg(s)", t_host,
                       TARGET_US if is_target and t_host is not None else None, "µs",
                       "target" if is_target else "", f"<= {TARGET_US} µs" if is_target else "—",
                       1.0 if is_target and t_host is not None else None, host_note)
        if is_target and t_host is not None:
            host_row.ratio = t_host / TARGET_US
        rows.append(host_row)
        if is_target:  # the same launch with host numpy arrays, the cpu target's other common argument
            rows += _numpy_rows(k, nargs, number, repeat)
    return rows


if __name__ == "__main__":
    main_for(run)
