"""No false alarms: the samples, the notebooks, numba.cuda's documentation examples and the
suite's kernel programs run clean under ``PYKERN_SANITIZE=all`` (every kernel compiled with the
race, init and bounds checks; any hazard is a ``SanitizerError`` that fails the program or its
test). The small samples run in the default suite; the whole sweep is ``-m slow``."""

import os
import subprocess
import sys

import numpy as np
import pytest

import pykern as cuda
from pykern import runtime as targets

from test_samples import ROOT, SAMPLES, _param, run_sample

#: samples quick enough under the checker for the default run (each a few seconds)
QUICK = ("tree_sum", "histogram", "reduction", "grid_sync")

#: the suite's kernel programs: test modules whose kernels run on the cpu target
PROGRAM_MODULES = (
    "tests/programs/test_algorithms.py",
    "tests/numba_parity/test_numba_doc_examples.py",
    "tests/codegen/cpu/test_cpu_kernels.py",
    "tests/codegen/cpu/test_cpu_regions.py",
    "tests/lang/test_barriers.py",
    "tests/lang/test_shared_memory.py",
    "tests/lang/test_atomics.py",
    "tests/lang/test_warp_ops.py",
    "tests/lang/test_cooperative_groups.py",
    "tests/notebooks",
)

#: tests of those modules that check something other than their kernels and that a process-wide
#: ``PYKERN_SANITIZE`` changes on purpose: reuse of an unchanged notebook cell's kernel (a
#: sanitized kernel of a re-run cell is compiled again), and the AOT command's clean stderr (it
#: warns that a GPU build drops the race and init checks)
NOT_KERNEL_CHECKS = (
    "tests/notebooks/test_notebook_kernel.py::test_unchanged_cell_reuses_its_kernels_and_an_edit_compiles_only_what_changed",
    "tests/notebooks/test_notebook_reuse.py::test_unchanged_cell_reuses_and_edited_kernel_recompiles",
    "tests/notebooks/test_notebook_reuse.py::test_reuse_in_a_fresh_process_with_the_disk_cache_off",
    "tests/notebooks/test_notebook_samples.py::test_tour_runs_and_renders",
    "tests/notebooks/test_notebook_progress.py",
)

#: tests whose kernels truly race, each with why: the sweep leaves them out, and a test below
#: checks that the sanitizer reports the race
TRULY_RACY = {
    "tests/notebooks/test_notebook_debugging_tools.py::test_a_watchpoint_and_a_breakpoint_find_the_wrong_index":
        "the debugging notebook's transpose_scale has the bug it teaches to find: threads (2, 0) and (0, 1) "
        "both write out[2]",
    "tests/notebooks/test_notebook_samples.py::test_debugging_notebook_shows_short_errors": "the same notebook",
}


def _sweep_param(name):
    p = _param(name)
    if name in QUICK:
        return p
    marks = getattr(p, "marks", ())
    return pytest.param(name, marks=[*marks, pytest.mark.slow]) if not marks else p


@pytest.mark.parametrize("name", [_sweep_param(n) for n in SAMPLES])
def test_sample_is_clean_under_the_sanitizer(name, tmp_path):
    run_sample(name, tmp_path, PYKERN_SANITIZE="all")


def test_quick_samples_exist():
    assert set(QUICK) <= set(SAMPLES)


@pytest.mark.slow
@pytest.mark.parametrize("module", PROGRAM_MODULES)
def test_kernel_programs_are_clean_under_the_sanitizer(module, tmp_path):
    env = dict(os.environ, PYKERN_TARGET="cpu", PYKERN_SANITIZE="all", PYKERN_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    skip = [a for t in (*NOT_KERNEL_CHECKS, *TRULY_RACY) if t.startswith(module)
            for a in (("--ignore", t) if t.endswith(".py") else ("--deselect", t))]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "-x",
                        os.path.join(ROOT, module), *skip], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=3000)
    # exit code 5: nothing collected (an optional extra missing); 0: all passed or skipped
    assert r.returncode in (0, 5), r.stdout[-6000:] + r.stderr[-3000:]
    assert "SanitizerError" not in r.stdout, r.stdout[-6000:]


def test_the_debugging_notebooks_bug_is_reported_as_the_race_it_is():
    @cuda.jit(sanitize="race")
    def transpose_scale(a, out):  # the notebook's kernel, bug included
        r, c = cuda.grid(2)
        if r < a.shape[0] and c < a.shape[1]:
            k = c * a.shape[1] + r
            out[k] = 2 * a[r, c]

    saved = list(targets._chosen)
    cuda.set_target("cpu")
    try:
        with pytest.raises(cuda.SanitizerError) as got:
            transpose_scale[(1, 1), (4, 4)](np.arange(6.0).reshape(3, 2), np.zeros(6))
    finally:
        targets._chosen[:] = saved
    (report,) = got.value.reports
    assert report.kind == "race" and "out" in report.where and "[2]" in report.where
    assert {report.first.thread, report.second.thread} == {(2, 0, 0), (0, 1, 0)}
