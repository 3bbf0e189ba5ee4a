"""Every sample and the suite's kernel programs on the sim target: each kernel launch the cpu
target makes is run again on the sim from the same inputs and compared byte for byte
(``sim_shadow``). Launches not compared are counted with their reason; a program in ``EXCEPTIONS``
says why it is not compared at all.

The default run takes the samples at small sizes and one program file; ``-m slow`` runs the
suite's other program files (tests/programs, numba's documentation examples, numba's own cudapy
tests) under the shadow, in a subprocess each.
"""

import collections
import importlib
import json
import os
import subprocess
import sys

import pytest

from sim_shadow import shadowing

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "samples")) if f.endswith(".py") and not f.startswith("_"))

#: each sample's main() at a size the sim runs in a few seconds (every kernel, every code path)
SMALL = {
    "grid_sync": dict(steps=3),
    "heat2d": dict(n=24, steps=3),
    "histogram": dict(n=3000),
    "mandelbrot": dict(w=40, h=24, max_iter=40),
    "matmul": dict(n=24),
    "monte_carlo_pi": dict(blocks=8, per_thread=256),  # its check wants ~2.5e5 samples
    "nbody": dict(n=96),
    "reduce": dict(n=3000),
    "reduction": dict(n=3000),
    "saxpy": dict(n=3000),
    "scan": dict(n=3000),
    "tree_sum": dict(n=2560),
    "ufuncs": dict(n=1000),
    "wmma_gemm": dict(n=32),
}

#: a sample kernel's array arguments whose bytes may differ, each with why
SAMPLE_DIFFERS = {
    ("reduction.block_sum", 1): "float atomic.add of 64 blocks' partial sums: the cpu target may run the blocks on "
                                "several OS threads, so the order of the adds, and the total's last bit, varies "
                                "from run to run",
}

#: samples not run on the sim, each with why
EXCEPTIONS = {
    "dask_heat2d": "a dask cluster of worker processes: its kernels are heat2d's, compared with that sample",
}


def _run_sample(name, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(os.path.join(ROOT, "samples"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYKERN_CACHE", "off")
    util = importlib.import_module("_util")
    monkeypatch.setattr(util, "timed", lambda fn, *a, **k: (fn(*a), 1.0)[1])  # once: the sim is slow
    sys.modules.pop(name, None)
    mod = importlib.import_module(name)
    kwargs = dict(SMALL[name])
    if name == "mandelbrot":
        kwargs["out"] = str(tmp_path / "m.png")
    import pykern
    from pykern import runtime as targets

    saved = list(targets._chosen)
    pykern.set_target("cpu")
    try:
        with shadowing(name) as rows:
            mod.main(**kwargs)  # its own check against numpy passes (report() exits otherwise)
    finally:
        targets._chosen[:] = saved
        sys.modules.pop(name, None)
    return rows


def test_every_sample_is_listed():
    assert set(SAMPLES) == set(SMALL) | set(EXCEPTIONS)


#: the default run's samples (a few seconds together); the others run under -m slow
QUICK = {"saxpy", "heat2d", "mandelbrot", "histogram", "tree_sum", "nbody"}


@pytest.mark.parametrize("name", [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow) for n in sorted(SMALL)])
def test_sample_on_the_sim_matches_the_cpu_target(name, tmp_path, monkeypatch, capsys):
    rows = _run_sample(name, tmp_path, monkeypatch)
    assert "check=OK" in capsys.readouterr().out
    compared = [r for r in rows if r["status"] != "skipped"]
    assert compared, f"{name}: no kernel launch was compared ({rows})"
    bad = [r for r in rows if r["status"] not in ("same", "skipped")
           and not all((r["kernel"], k) in SAMPLE_DIFFERS for k in r.get("arrays", [None]))]
    assert not bad, bad
    skipped = [r for r in rows if r["status"] == "skipped" and not r["detail"].startswith("more than")]
    assert not skipped, skipped


def shadow_run(files, tmp_path):
    """The rows of ``files`` (test files of the suite) run under the shadow, in a subprocess."""
    report = tmp_path / "rows.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, HERE]))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                        "-p", "sim_shadow", f"--sim-shadow-report={report}", *files],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=3000)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return json.loads(report.read_text())


#: launches of the suite's programs whose sim result differs, each with why
DIFFERS = {
    "test_cudapy_sm.test_sm_issue_2393.<locals>.costs_func":
        "reads shared memory nothing wrote (numba's test checks completion only): whatever the cpu "
        "target's block memory held, zeros on the sim",
}


def check_rows(rows):
    counts = collections.Counter(r["status"] for r in rows)
    bad = [r for r in rows if r["status"] in ("differs", "sim error") and r["kernel"] not in DIFFERS]
    assert not bad, bad
    reasons = collections.Counter(r["detail"] if not r["detail"].startswith("more than") else "more launches"
                                  for r in rows if r["status"] == "skipped")
    # not compared: a pointer (the sim would change the memory a second time), a Python object
    # argument the copies cannot hold, a grid too big for the sim in a test, a kernel's 4th+ launch
    assert all(d in ("more launches", "a raw pointer argument") or d.endswith(" threads")
               or d.startswith("an argument of type ") for d in reasons), reasons
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("files", [["tests/programs/test_algorithms.py", "tests/numba_parity/test_parity_programs.py",
                                    "tests/numba_parity/test_numba_doc_examples.py"],
                                   ["tests/numba_parity/cudapy"]], ids=["programs", "cudapy"])
def test_the_suites_kernel_programs_on_the_sim_match(files, tmp_path):
    counts = check_rows(shadow_run(files, tmp_path))
    assert counts["same"] > 50, counts
