"""The committed ``benchmarks/RESULTS.md`` is what ``benchmarks/run_all.py`` wrote, whole.

Catches a hand-edited file (the digest line), a stale one (a benchmark module that
``run_all.py`` knows, or that exists in benchmarks/, without its section), a subset run
written over it, and a run where a benchmark failed. Nothing here looks at a number.
"""

import os
import re
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH_DIR = os.path.join(REPO, "benchmarks")
RESULTS = os.path.join(BENCH_DIR, "RESULTS.md")


@pytest.fixture(scope="module")
def run_all():
    sys.path.insert(0, BENCH_DIR)
    try:
        import run_all
    finally:
        sys.path.remove(BENCH_DIR)
    return run_all


@pytest.fixture(scope="module")
def text():
    with open(RESULTS, encoding="utf-8") as f:
        return f.read()


def test_results_file_is_unedited_output_of_run_all(run_all, text):
    body, sep, last = text.rpartition(run_all.DIGEST_PREFIX)
    assert sep, "RESULTS.md has no digest line: it was not written by run_all.py"
    assert last.strip() == run_all.digest(body) + " -->", (
        "RESULTS.md differs from what run_all.py wrote (edited by hand?): run `python benchmarks/run_all.py` "
        "again; notes belong in docs/developer/benchmark-notes.md")


def test_results_header_names_command_date_commit_and_load(text):
    head = text.split("## Results", 1)[0]
    command = re.search(r"^- Command: `(python benchmarks/run_all\.py[^`]*)`", head, re.M)
    assert command, head
    assert "--only" not in command.group(1) and "--out" not in command.group(1), command.group(1)
    assert re.search(r"^- Date: \d{4}-\d\d-\d\d \d\d:\d\d", head, re.M), head
    assert re.search(r"^- pykern and commit: .*\(git [0-9a-f]{7,}", head, re.M), head
    assert re.search(r"^- Load average \(1/5/15 min\) at start: [0-9.]+ / [0-9.]+ / [0-9.]+; at end: [0-9.]+", head,
                     re.M), head
    for section in ("## Machine", "## Versions", "## How the numbers were taken"):
        assert section in head, section


def test_every_benchmark_module_has_its_section_with_rows(run_all, text):
    on_disk = {f[:-3] for f in os.listdir(BENCH_DIR) if f.startswith("bench_") and f.endswith(".py")}
    known = [m for m, _ in run_all.BENCHMARKS]
    assert set(known) == on_disk, "benchmarks/bench_*.py and run_all.BENCHMARKS differ"
    sections = re.split(r"^### ", text.split("## Results", 1)[1], flags=re.M)[1:]
    by_module = {s.split(":", 1)[0]: s for s in sections}
    assert list(by_module) == known, f"RESULTS.md is stale: sections {list(by_module)}, run_all.py knows {known}"
    header = run_all.markdown_table([]).splitlines()[0]
    for module, section in by_module.items():
        rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| Benchmark |")]
        assert rows, f"no rows for {module}"
        failed = [r for r in rows if "benchmark failed" in r or "RESULT MISMATCH" in r]
        assert not failed, failed
        assert header in section, module
