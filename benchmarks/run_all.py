"""Run every benchmark and write one Markdown report, whole.

    python benchmarks/run_all.py [--quick] [--out PATH] [--only saxpy,launch]

With no options this measures everything and writes ``benchmarks/RESULTS.md``:
a header (command, date, commit, load average at the start and the end), the
machine and the versions (python, numpy, llvmlite/LLVM, pykern, clang,
llvm-objdump), how the numbers were taken, then one section per benchmark
module (its time and the load average when it started) with one table row per
measurement: pykern's number, the baseline measured in the same run, the ratio
and the target from the issues. The last line is a digest of the rest, so a
hand edit is caught (``tests/benchmarks/test_benchmarks_results_file.py``).
A benchmark that fails becomes an "error" row instead of stopping the run.
``--quick`` uses smaller sizes and fewer repetitions (a smoke run, not numbers
to quote). ``--only`` runs a subset and prints its rows; it writes a report
only to an ``--out`` given with it, never to RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
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

- Every Baseline value is measured in this run, next to pykern's (interleaved where the module says
  so). Where there is no baseline to measure (launch overhead, first call, exit), the Baseline column
  says "none measured", the Target column holds the goal from the issues and the ratio is to that goal;
  numba-cuda's launch figures (NVIDIA GPU) are quoted in the notes, never taken as a baseline.
- Times are the best of several repetitions (noise on a shared machine only adds time), except the
  fresh-interpreter measurements (bench_compile, bench_cache, bench_exit, bench_numba), which are
  medians. Ratios are pykern / baseline (for GFLOP/s and GB/s, higher is better).
- Kernels run on pykern's compiled **cpu** target (`PYKERN_TARGET=cpu`; no AMD GPU on this machine);
  device arrays on the cpu target are host memory, so "device arrays" cases time no copies.
  bench_hip_launch times the hip launch path up to the driver call (no device: the driver call is a
  counter, or machine code that counts).
- bench_compile compiles with `PYKERN_CACHE=off` in a fresh interpreter; clang-22 compiles the same
  kernel in HIP C++ (`benchmarks/hip_kernels.py`) with `-x hip --cuda-device-only --offload-arch=gfx942
  -O3 -nogpulib --no-gpu-bundle-output`; `-nogpuinc` (no headers) is the stricter baseline.
  bench_codegen and bench_matrix count instruction lines in the `.text` of `llvm-objdump-22 -d` and read
  `.vgpr_count` from the amdhsa metadata.
- bench_numba (optional) runs numba from a separate venv (`$PYKERN_BENCH_NUMBA_VENV`), never the main
  environment; with no NVIDIA GPU it is `numba.njit` on the CPU, not numba.cuda.
- The machine is shared: the load average is recorded at the start of every benchmark. Compare ratios
  within one report, not absolute times across reports. Measurements taken by hand while tuning are in
  `docs/developer/benchmark-notes.md`, never in this file.
"""

#: the file is written whole by this script; the digest line lets a test catch a hand edit
DIGEST_PREFIX = "<!-- sha256 of everything above this line: "


def digest(text: str) -> str:
    """sha256 hex digest of the report's text above its digest line."""
    return hashlib.sha256(text.encode()).hexdigest()


def _load() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def _command(argv) -> str:
    return " ".join(["python benchmarks/run_all.py", *argv])


def report(command, started, total, machine, vers, sections, load_end) -> str:
    """The whole Markdown report: header, method, one section per benchmark, digest."""
    lines = [
        "# pykern benchmarks",
        "",
        "<!-- Written whole by benchmarks/run_all.py: do not edit by hand (notes belong in "
        "docs/developer/benchmark-notes.md). -->",
        "",
        f"- Command: `{command}`"
        + (" (quick mode: small sizes and few repetitions, see `run_all.py --help`)" if "--quick" in command else ""),
        f"- Date: {started:%Y-%m-%d %H:%M %Z}; the run took {total:.0f} s",
        f"- pykern and commit: {vers['pykern']}",
        f"- Load average (1/5/15 min) at start: {machine['Load average at start (1/5/15 min)']}; at end: {load_end} "
        f"(on {machine['Cores usable (sched_getaffinity)']} usable cores)",
        "",
        "## Machine",
        "",
        *(f"- {k}: {v}" for k, v in machine.items()),
        "",
        "## Versions",
        "",
        *(f"- {k}: {v}" for k, v in vers.items()),
        "",
        METHOD,
        "## Results",
        "",
    ]
    for modname, title, dt, load, rows in sections:
        lines += [f"### {modname}: {title}", "", f"{dt:.1f} s; load average at its start {load}.", "",
                  markdown_table(rows), ""]
    text = "\n".join(lines)
    return text + DIGEST_PREFIX + digest(text) + " -->\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, few repetitions (smoke run)")
    ap.add_argument("--out", default=None,
                    help="Markdown report path (default benchmarks/RESULTS.md; with --only, no file unless given)")
    ap.add_argument("--only", default="", help="comma-separated subset, e.g. saxpy,launch (rows printed)")
    args = ap.parse_args(argv)
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    unknown = only - {m[len("bench_"):] for m, _ in BENCHMARKS}
    if unknown:
        ap.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    # RESULTS.md always has every benchmark: a subset run writes only where it is told to
    out = args.out or (None if only else os.path.join(HERE, "RESULTS.md"))

    started = datetime.datetime.now().astimezone()
    machine = machine_info()
    vers = versions()
    sections = []
    t_all = time.perf_counter()
    for modname, title in BENCHMARKS:
        short = modname[len("bench_"):]
        if only and short not in only:
            continue
        print(f"== {modname}: {title}", flush=True)
        load = _load()
        t0 = time.perf_counter()
        try:
            mod = importlib.import_module(modname)
            got = mod.run(args.quick)
        except Exception as e:
            traceback.print_exc()
            got = [Row(modname, "error", None, None, "", note=f"benchmark failed: {type(e).__name__}: "
                       + str(e).strip().splitlines()[-1][:200] if str(e).strip() else type(e).__name__)]
        dt = time.perf_counter() - t0
        print(format_rows(got), flush=True)
        print(f"   ({dt:.1f} s)", flush=True)
        sections.append((modname, title, dt, load, got))
    total = time.perf_counter() - t_all

    if out is None:
        print(f"done ({total:.0f} s); no report written (--only without --out)")
        return 0
    text = report(_command(argv), started, total, machine, vers, sections, _load())
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write(text)
    print(f"wrote {out} ({total:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
