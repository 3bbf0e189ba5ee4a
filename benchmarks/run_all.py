"""Run every benchmark and write one Markdown report.

    python benchmarks/run_all.py [--quick] [--out benchmarks/RESULTS.md] [--only saxpy,launch]

The report lists the machine (CPU model, cores, memory, load), the versions
(python, numpy, llvmlite/LLVM, pykern, clang, llvm-objdump) and one table row
per measurement: pykern's number, the baseline measured in the same run, the
ratio and the target from the issues. A benchmark that fails becomes an
"error" row (with the exception) instead of stopping the run. ``--quick`` uses
smaller sizes and fewer repetitions (a smoke run, not numbers to quote).
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import HERE, Row, format_rows, machine_info, markdown_table, versions  # noqa: E402

#: (module, title) in report order
BENCHMARKS = [
    ("bench_saxpy", "saxpy on the cpu target vs numpy"),
    ("bench_matmul", "tiled matmul on the cpu target vs numpy"),
    ("bench_reduce", "cuda.reduce on the cpu target vs numpy.sum"),
    ("bench_stream", "STREAM copy/scale/add/triad kernels on the cpu target vs C (clang-22 -fopenmp)"),
    ("bench_ufunc", "vectorize/guvectorize calls on small arrays"),
    ("bench_barriers", "barrier kernels on the cpu target: work-item loops vs coroutines vs C (clang-22)"),
    ("bench_launch", "per-launch host overhead"),
    ("bench_hip_launch", "per-launch host overhead on the hip path, driver call counted"),
    ("bench_compile", "cold compile to a gfx942 code object vs clang-22"),
    ("bench_codegen", "code quality vs clang-22 (gfx942, gfx1100)"),
    ("bench_matrix", "matrix-core GEMM loop vs HIP builtins (clang-22); cpu GEMM vs numpy"),
    ("bench_cache", "compile cache"),
    ("bench_sanitizer", "the kernel sanitizer's cost on the cpu target vs the unsanitized kernel"),
    ("bench_exit", "a script's first launch and its exit (fresh interpreters)"),
    ("bench_sim", "the sim target (kernels as Python, for pdb): time per thread and per statement"),
    ("bench_numba", "optional numba reference (separate venv)"),
]

METHOD = """\
## How the numbers were taken

- Times are the best of several repetitions (noise on a shared machine only adds time), except the
  subprocess measurements (rows 4 and 6), which are medians of fresh interpreters run interleaved with
  their baseline. Ratios are pykern / baseline (for GFLOP/s, higher is better).
- Rows 1–3 and 6 run kernels on pykern's compiled **cpu** target (`PYKERN_TARGET=cpu`; no AMD GPU here).
  Device arrays on the cpu target are host memory, so row 1's "device arrays" case times no copies.
- Row 3's "host path only" replaces the loaded kernel's native entry (`CpuKernel._fn`, a private
  attribute) by a Python no-op, so it measures `k[g, b](...)` up to, not including, the call into
  compiled code. numba-cuda anchors (5.9 µs for 1 array argument, 30 µs for 16) are from the issue,
  measured on an NVIDIA GPU, not in this run.
- Row 4 compiles with `PYKERN_CACHE=off` in a fresh interpreter; clang-22 compiles the equivalent HIP C++
  (`benchmarks/hip_kernels.py`) with `-x hip --cuda-device-only --offload-arch=gfx942 -O3 -nogpulib
  --no-gpu-bundle-output` (its HIP wrapper headers pre-included, as in any HIP compile); `-nogpuinc`
  (no headers at all) is the stricter baseline.
- Row 7 (optional) runs numba from a separate venv (`$PYKERN_BENCH_NUMBA_VENV`, default
  `~/.cache/pykern/bench-numba-venv`), never the main environment;
  no NVIDIA GPU here, so it is `numba.njit` on the CPU, not numba.cuda.
- Row 5 counts instruction lines in the `.text` of `llvm-objdump-22 -d` (alignment padding after the last
  `s_endpgm` excluded) and reads `.vgpr_count` from the amdhsa metadata.
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, few repetitions (smoke run)")
    ap.add_argument("--out", default=os.path.join(HERE, "RESULTS.md"), help="Markdown report path")
    ap.add_argument("--only", default="", help="comma-separated subset, e.g. saxpy,launch")
    args = ap.parse_args(argv)
    only = {s.strip() for s in args.only.split(",") if s.strip()}

    started = datetime.datetime.now().astimezone()
    machine = machine_info()
    vers = versions()
    rows, timings = [], []
    t_all = time.perf_counter()
    for modname, title in BENCHMARKS:
        short = modname[len("bench_"):]
        if only and short not in only:
            continue
        print(f"== {modname}: {title}", flush=True)
        t0 = time.perf_counter()
        try:
            mod = importlib.import_module(modname)
            got = mod.run(args.quick)
        except Exception as e:
            traceback.print_exc()
            got = [Row(modname, "error", None, None, "", note=f"benchmark failed: {type(e).__name__}: "
                       + str(e).strip().splitlines()[-1][:200] if str(e).strip() else type(e).__name__)]
        dt = time.perf_counter() - t0
        timings.append((modname, dt))
        print(format_rows(got), flush=True)
        print(f"   ({dt:.1f} s)", flush=True)
        rows.extend(got)
    total = time.perf_counter() - t_all

    lines = [
        "# pykern benchmarks",
        "",
        f"Generated by `python benchmarks/run_all.py{' --quick' if args.quick else ''}` on "
        f"{started:%Y-%m-%d %H:%M %Z} in {total:.0f} s"
        + (" — **quick mode: small sizes, not numbers to quote**" if args.quick else "") + ".",
        "",
        "## Machine",
        "",
        *(f"- {k}: {v}" for k, v in machine.items()),
        "",
        "## Versions",
        "",
        *(f"- {k}: {v}" for k, v in vers.items()),
        "",
        "## Results",
        "",
        markdown_table(rows),
        "",
        METHOD,
        "## Time per benchmark",
        "",
        *(f"- {m}: {dt:.1f} s" for m, dt in timings),
        "",
    ]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {args.out} ({total:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
