"""Shared bits of the benchmarks: rows, timing, the machine/version header, tools.

Every ``bench_*.py`` module exposes ``run(quick: bool) -> list[Row]`` and is
runnable alone (``python benchmarks/bench_saxpy.py [--quick]``), which prints
its rows. ``run_all.py`` collects the rows of all of them into one Markdown
report. Nothing here asserts on a time: the numbers are reported, never judged
by a test.

Example::

    rows = [Row("saxpy", "device arrays", 1.0, 0.8, "ms", "<= 1.5x numpy")]
    print(format_rows(rows))
"""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# The benchmarks measure the compiled cpu target unless told otherwise (there is
# no AMD GPU on the machines this was written on).
os.environ.setdefault("PYKERN_TARGET", "cpu")
# Steady-state rows time O3 code from the first launch on: a first call otherwise runs
# first-tier code until its O3 build is swapped in (pykern/codegen/cpu/tiers.py; the same O3
# code either way). The first-call rows turn tiers on in their children (FIRST_CALL_ENV).
os.environ.setdefault("PYKERN_TIERS", "off")
#: environment of a child that times a first call as a user's process makes it
FIRST_CALL_ENV = {"PYKERN_TIERS": "on"}


@dataclass
class Row:
    """One line of the report.

    ``pykern`` and ``baseline`` are numbers in ``unit`` (None when not
    measured); ``ratio`` defaults to pykern/baseline; ``target`` is the goal
    from the issues as text (``"<= 1.5"``) and ``limit`` its number, so that
    ``verdict`` can say met/missed; ``higher_is_better`` flips the ratio's
    sense (GFLOP/s)."""

    bench: str
    case: str
    pykern: Optional[float]
    baseline: Optional[float]
    unit: str
    baseline_name: str = ""
    target: str = ""
    limit: Optional[float] = None
    note: str = ""
    ratio: Optional[float] = None
    higher_is_better: bool = False
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.ratio is None and self.pykern is not None and self.baseline:
            self.ratio = self.pykern / self.baseline

    @property
    def verdict(self) -> str:
        if self.limit is None or self.ratio is None:
            return ""
        ok = self.ratio >= self.limit if self.higher_is_better else self.ratio <= self.limit
        return "met" if ok else "missed"


def fmt(v, digits=3) -> str:
    if v is None:
        return "—"
    if isinstance(v, str):
        return v
    if v == 0:
        return "0"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


HEADER = ("Benchmark", "Case", "pykern", "Baseline", "Unit", "Ratio", "Target", "Verdict", "Notes")

#: ``baseline_name`` prefixes of comparison values that are fixed numbers, not measured in the run:
#: a goal from the issues, or a figure quoted from elsewhere (numba-cuda on an NVIDIA GPU)
FIXED_REFERENCES = ("target", "numba-cuda anchor")


def _fixed_reference(r: Row) -> bool:
    return r.baseline_name.startswith(FIXED_REFERENCES)


def row_cells(r: Row) -> tuple:
    """The table cells of a row. The Baseline column only ever holds a number measured in
    the same run; a fixed goal stays in the Target column (the ratio is then to the goal)
    and a quoted figure moves to the notes."""
    base = fmt(r.baseline) + (f" ({r.baseline_name})" if r.baseline_name and r.baseline is not None else "")
    if r.baseline is None and r.baseline_name:
        base = r.baseline_name
    ratio = fmt(r.ratio) + "x" if r.ratio is not None else "—"
    note = r.note
    if _fixed_reference(r) and r.baseline is not None:
        base = "— (none measured)"
        if r.baseline_name.startswith("target"):
            ratio = f"{fmt(r.ratio)}x of target" if r.ratio is not None else "—"
        else:
            ratio = "—"
            quoted = f"{r.baseline_name} {fmt(r.baseline)} {r.unit} (quoted, not measured here)"
            if "anchor" not in note:
                note = f"{note}; {quoted}" if note else quoted
    return (r.bench, r.case, fmt(r.pykern), base, r.unit, ratio, r.target or "—", r.verdict or "—", note)


def _escape(cell: str) -> str:
    """A cell as Markdown text: ``k[1, 1](...)`` is not a link, ``a*x`` not emphasis."""
    for ch in "\\|[]*":
        cell = cell.replace(ch, "\\" + ch)
    return cell


def markdown_table(rows) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in rows:
        lines.append("| " + " | ".join(_escape(str(c)) for c in row_cells(r)) + " |")
    return "\n".join(lines)


def format_rows(rows) -> str:
    """Rows as a plain-text table for a bench run alone."""
    cells = [HEADER] + [row_cells(r) for r in rows]
    widths = [max(len(str(c[i])) for c in cells) for i in range(len(HEADER))]
    return "\n".join("  ".join(str(c[i]).ljust(widths[i]) for i in range(len(HEADER))).rstrip() for c in cells)


# ----------------------------------------------------------------------------- timing


def best_time(fn: Callable[[], object], repeat: int = 5, number: int = 1, warmup: int = 1) -> float:
    """Best wall time in seconds of one call of ``fn`` (mean over ``number``
    calls, best of ``repeat``), after ``warmup`` untimed calls. Best-of is the
    usual choice on a shared, busy machine: noise only ever adds time."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def median_time(fn: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def scratch_dir(prefix: str) -> str:
    """A fresh temporary directory, removed when the run ends (a benchmark run leaves
    nothing behind in /tmp, and never reads what an earlier run left there)."""
    import atexit
    import tempfile

    d = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, d, ignore_errors=True)
    return d


def bytecode_env() -> dict:
    """Environment for children that import with cached bytecode, as an installed package
    does: a scratch ``__pycache__`` tree, written by the first child that imports a module."""
    return {"PYTHONDONTWRITEBYTECODE": "", "PYTHONPYCACHEPREFIX": scratch_dir("pykern-bench-pyc-")}


def run_child(code: str, env: Optional[dict] = None, timeout: float = 300) -> tuple:
    """Run ``python -c code`` in a fresh interpreter (cwd = benchmarks/); returns
    (wall seconds of the whole subprocess, stdout). Raises on failure with the
    child's stderr."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code], cwd=HERE, env=full_env, capture_output=True, text=True,
                       timeout=timeout)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"child failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return wall, p.stdout


def parse_child_values(stdout: str) -> dict:
    """``KEY=float`` lines printed by a child process, as a dict."""
    out = {}
    for line in stdout.splitlines():
        if "=" in line and line.startswith("BENCH_"):
            k, v = line.split("=", 1)
            try:
                out[k[6:]] = float(v)
            except ValueError:
                out[k[6:]] = v
    return out


# ----------------------------------------------------------------------------- tools


def find_tool(*names) -> Optional[str]:
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return None


def clang() -> Optional[str]:
    return find_tool("clang-22", "clang")


def build_c_library(source: str, flags: list, prefix: str) -> tuple:
    """``(path of a shared library compiled from C source by clang, "")`` or ``(None, why not)``."""
    cc = clang()
    if cc is None:
        return None, "clang-22 not installed (apt-get install clang-22)"
    d = tempfile.mkdtemp(prefix=prefix)
    src, lib = os.path.join(d, "ref.c"), os.path.join(d, "ref.so")
    with open(src, "w") as f:
        f.write(source)
    p = subprocess.run([cc, "-O3", "-march=native", *flags, "-shared", "-fPIC", src, "-o", lib], capture_output=True,
                       text=True)
    if p.returncode != 0:
        return None, f"{os.path.basename(cc)} {' '.join(flags)} failed: " + (p.stderr.strip().splitlines() or ["?"])[-1][:120]
    return lib, ""


def objdump() -> Optional[str]:
    return find_tool("llvm-objdump-22", "llvm-objdump")


def _first_line(cmd) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.splitlines()[0].strip()
    except Exception:
        return "unavailable"


# ----------------------------------------------------------------------------- environment


def machine_info() -> dict:
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = "unknown"
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                    break
    except OSError:
        pass
    try:
        load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "unknown"
    return {
        "CPU": cpu,
        "Cores (os.cpu_count)": str(os.cpu_count()),
        "Cores usable (sched_getaffinity)": str(len(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else "?",
        "Memory": mem,
        "Load average at start (1/5/15 min)": load,
        "OS": f"{platform.system()} {platform.release()} ({platform.machine()})",
    }


def versions() -> dict:
    import numpy

    import pykern

    try:
        import llvmlite
        import llvmlite.binding as llvm

        llvm_v = f"llvmlite {llvmlite.__version__} (LLVM {'.'.join(map(str, llvm.llvm_version_info))})"
    except Exception as e:  # pragma: no cover
        llvm_v = f"unavailable ({e})"
    cl = clang()
    od = objdump()
    return {
        "python": sys.version.split()[0],
        "numpy": numpy.__version__,
        "llvmlite / LLVM": llvm_v,
        "pykern": f"{getattr(pykern, '__version__', '?')} ({_git_rev()})",
        "pykern target": pykern.current_target(),
        "clang": _first_line([cl, "--version"]) if cl else "not installed",
        "llvm-objdump": _first_line([od, "--version"])[:80] if od else "not installed",
    }


def _git_rev() -> str:
    try:
        rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "pykern"], capture_output=True,
                               text=True, timeout=10).stdout.strip()
        return f"git {rev}{' + uncommitted changes in pykern/' if dirty else ''}"
    except Exception:
        return "git unknown"


def quick_flag(argv=None) -> bool:
    argv = sys.argv[1:] if argv is None else argv
    return "--quick" in argv


def main_for(run: Callable[[bool], list]) -> None:
    """The ``__main__`` of a bench module: run it and print its rows."""
    rows = run(quick_flag())
    print(format_rows(rows))
