"""Smoke test of the benchmark suite: ``benchmarks/run_all.py --quick`` runs
end to end and writes a Markdown report with every expected row. Never a
timed assertion: the numbers are reported, not judged here."""

import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

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
]


def test_run_all_quick_writes_markdown_report(tmp_path):
    out = tmp_path / "RESULTS.md"
    env = dict(os.environ, PYKERN_TARGET="cpu")
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
    assert all(line.count(" | ") == header.count(" | ") for line in rows), rows
    for bench, case in EXPECTED_CASES:
        hits = [r for r in rows if r.startswith(f"| {bench} |") and case in r]
        assert hits, f"no row for {bench!r} / {case!r} in:\n{text}"
    failed = [r for r in rows if "benchmark failed" in r or "RESULT MISMATCH" in r]
    assert not failed, failed
    # pykern's own measurements are numbers (clang's may honestly be "unavailable")
    for r in rows:
        cells = [c.strip() for c in r.strip("|").split(" | ")]
        assert re.fullmatch(r"[0-9][0-9.,e+-]*", cells[2]), r
