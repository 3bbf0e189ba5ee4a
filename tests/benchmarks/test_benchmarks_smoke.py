"""Smoke test of the benchmark suite: ``benchmarks/run_all.py --quick`` runs
end to end and writes a Markdown report with every expected row. Never a
timed assertion: the numbers are reported, not judged here."""

import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

EXPECTED_CASES = [
    ("1 saxpy (cpu)", "device arrays"),
    ("1 saxpy (cpu)", "host numpy arrays"),
    ("2 tiled matmul (cpu)", "16x16 shared tiles"),
    *[("3 launch overhead (cpu)", f"k[1, 1](...), {n} array arg") for n in (1, 4, 16, 64)],
    *[("3 launch overhead (cpu)", f"execution stubbed), {n} arg") for n in (1, 4, 16, 64)],
    *[("3b launch overhead (hip)", f"to the driver call, {n} device array") for n in (1, 4, 16, 64)],
    ("4 cold compile saxpy gfx942", "pykern.compile call in fresh process"),
    ("4 cold compile saxpy gfx942", "whole pykern subprocess"),
    *[("5 code quality", f"{k} {a}: {what}") for k in ("saxpy", "matmul", "block_sum")
      for a in ("gfx942", "gfx1100") for what in ("instructions", "VGPRs")],
    ("6 cache", "first launch in a new process"),
    ("6 cache", "notebook redefinition (same source"),
    ("6 cache", "notebook redefinition, PYKERN_CACHE=off"),
    *[("10 STREAM (cpu)", f"{op} {kind}") for op in ("copy", "scale", "add", "triad")
      for kind in ("device arrays", "host numpy arrays")],
    ("8 cuda.reduce (cpu)", "sum, device array"),
    ("8 cuda.reduce (cpu)", "sum of 1,000 float64"),
    ("11 ufunc calls (cpu)", "vectorize(x, y), host arrays"),
    ("11 ufunc calls (cpu)", "guvectorize"),
    ("12 first launch & exit", "first launch of a kernel from the disk cache"),
    ("12 first launch & exit", "exit after the last line: cache off, one launch"),
]


def test_run_all_quick_writes_markdown_report(tmp_path):
    out = tmp_path / "RESULTS.md"
    # a fresh machine: no numba venv anywhere the optional row looks (nothing left in /tmp counts)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYKERN_BENCH_NUMBA_")}
    env.update(PYKERN_TARGET="cpu", XDG_CACHE_HOME=str(tmp_path / "xdg-cache"))
    p = subprocess.run([sys.executable, os.path.join(REPO, "benchmarks", "run_all.py"), "--quick", "--out", str(out)],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    text = out.read_text()
    assert "## Machine" in text and "## Versions" in text
    for key in ("CPU:", "Memory:", "python:", "numpy:", "llvmlite / LLVM:", "pykern:", "clang:"):
        assert key in text, key
    header = "| Benchmark | Case | pykern | Baseline | Unit | Ratio | Target | Verdict | Notes |"
    assert header in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and line != header]
    # cells escape Markdown's link and emphasis characters (k\[1, 1\](...)); the cases are matched as written
    rows = [re.sub(r"\\([\[\]*])", r"\1", line) for line in rows]
    assert all(line.count(" | ") == header.count(" | ") for line in rows), rows
    for bench, case in EXPECTED_CASES:
        hits = [r for r in rows if r.startswith(f"| {bench} |") and case in r]
        assert hits, f"no row for {bench!r} / {case!r} in:\n{text}"
    failed = [r for r in rows if "benchmark failed" in r or "RESULT MISMATCH" in r]
    assert not failed, failed
    # pykern's own measurements are numbers (clang's may honestly be "unavailable"); an optional
    # baseline (numba, from its own venv) is a row that says "skipped" when that venv is absent
    optional = [r for r in rows if "(optional)" in r.split(" | ")[0]]
    assert optional and all("| skipped |" in r and "numba venv not found" in r for r in optional), optional
    for r in rows:
        if r in optional:
            continue
        cells = [c.strip() for c in r.strip("|").split(" | ")]
        assert re.fullmatch(r"[0-9][0-9.,e+-]*", cells[2]), r


def test_numba_baseline_location_is_configurable_not_tmp(monkeypatch, tmp_path):
    """The optional numba venv: $PYKERN_BENCH_NUMBA_VENV, else under the user's cache dir."""
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    try:
        import bench_numba
    finally:
        sys.path.remove(os.path.join(REPO, "benchmarks"))
    monkeypatch.delenv("PYKERN_BENCH_NUMBA_VENV", raising=False)
    monkeypatch.delenv("PYKERN_BENCH_NUMBA_PYTHON", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert bench_numba.numba_venv() == os.path.join(str(tmp_path), "pykern", "bench-numba-venv")
    assert bench_numba.numba_python() is None  # nothing there: the row is skipped, not an error
    monkeypatch.setenv("PYKERN_BENCH_NUMBA_VENV", str(tmp_path / "v"))
    assert bench_numba.numba_venv() == str(tmp_path / "v")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.delenv("PYKERN_BENCH_NUMBA_VENV")
    assert not bench_numba.numba_venv().startswith("/tmp")
