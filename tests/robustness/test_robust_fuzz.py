"""Generated kernel programs: every valid one compiles and matches plain
Python per thread, every invalid one is a CompileError with a location, and
no program crashes or hangs the process.

Programs run in worker subprocesses (``fuzz/run.py``), so a segfault or an
LLVM abort is reported as a crash of one program instead of killing pytest.
CI is reproducible (fixed seed); explore with ``PYKERN_FUZZ_SEED=<n>`` and
``PYKERN_FUZZ_COUNT=<n>``. Reproduce one program with
``python tests/fuzz/run.py show <seed> <index> run``.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from fuzz import gen, run

SEED = int(os.environ.get("PYKERN_FUZZ_SEED", "20261202"))
#: programs of the default run; ``-m slow`` judges the first SWEEP_COUNT (these included) again
COUNT = int(os.environ.get("PYKERN_FUZZ_COUNT", "500"))
SWEEP_COUNT = 2000

#: mutations that currently find a pykern bug; each has a strict xfail in
#: test_robust_limits.py. Their results are reported, not asserted, here;
#: remove an entry once its bug is fixed.
KNOWN_BUGS: dict = {}  # mutation -> the open bug that exempts it (all fixed so far)


@pytest.fixture(scope="module")
def fuzz_results():
    return run.run_parallel(SEED, COUNT, workers=2)


def _fmt(rs):
    return "\n".join(json.dumps({k: r.get(k) for k in ("id", "index", "kind", "mutation", "status", "message",
                                                       "expect_line", "line")})[:600] for r in rs[:10])


def _judged(rs, count):
    assert len(rs) == count
    summary = run.summarize(rs)
    print(json.dumps(summary, indent=1))
    assert summary["status"].get("ok_match", 0) > count // 4, summary  # the grammar stays mostly valid
    assert summary["status"].get("ok_rejected", 0) > count // 3, summary
    assert len(summary["error_kinds"]) >= 30, summary  # rejections are varied, not one catch-all


def _no_crash_and_no_hang(rs, count):
    bad = [r for r in rs if r["status"] in ("FAIL_CRASH", "FAIL_HANG") and r["mutation"] not in KNOWN_BUGS]
    assert not bad, f"python tests/fuzz/run.py show {SEED} <index> run\n" + _fmt(bad)


def _valid_programs_match_python(rs, count):
    bad = [r for r in rs if r["status"] in ("FAIL_mismatch", "FAIL_rejected_valid")]
    assert not bad, f"python tests/fuzz/run.py show {SEED} <index> run\n" + _fmt(bad)


def _cpu_programs_compile_for_amdgpu(rs, count):
    assert sum(1 for r in rs if r.get("amdgpu")) >= count // (4 * run.AMDGPU_EVERY)
    bad = [r for r in rs if r["status"].startswith("FAIL_amdgpu")]
    assert not bad, f"python tests/fuzz/run.py show {SEED} <index> run\n" + _fmt(bad)


def _rejections_are_located_compile_errors(rs, count):
    bad = [r for r in rs
           if r["status"] in ("FAIL_internal_exception", "FAIL_other_pykern_error", "FAIL_unlocated_error",
                              "FAIL_bad_location", "FAIL_wrong_line", "FAIL_accepted_invalid")
           and r.get("mutation") not in KNOWN_BUGS]
    assert not bad, f"python tests/fuzz/run.py show {SEED} <index> run\n" + _fmt(bad)


def test_programs_generated_and_all_judged(fuzz_results):
    _judged(fuzz_results, COUNT)


def test_no_crash_and_no_hang(fuzz_results):
    _no_crash_and_no_hang(fuzz_results, COUNT)


def test_valid_programs_match_python(fuzz_results):
    _valid_programs_match_python(fuzz_results, COUNT)


def test_programs_that_run_on_the_cpu_also_compile_for_amdgpu(fuzz_results):
    _cpu_programs_compile_for_amdgpu(fuzz_results, COUNT)


def test_every_rejection_is_a_located_compile_error(fuzz_results):
    _rejections_are_located_compile_errors(fuzz_results, COUNT)


@pytest.mark.slow
def test_the_longer_sweep_passes_every_check():
    """The first SWEEP_COUNT programs of the seed (minutes): every check of the default run."""
    rs = run.run_parallel(SEED, SWEEP_COUNT, workers=2)
    for check in (_judged, _no_crash_and_no_hang, _valid_programs_match_python, _cpu_programs_compile_for_amdgpu,
                  _rejections_are_located_compile_errors):
        check(rs, SWEEP_COUNT)


def test_known_bug_mutations_are_still_generated(fuzz_results):
    # keeps the KNOWN_BUGS exemption honest: it covers programs that exist
    seen = {r.get("mutation") for r in fuzz_results}
    assert set(KNOWN_BUGS) <= seen | {None}


_HYPO = r"""
import json, sys
sys.path.insert(0, {tests!r})
from hypothesis import given, settings, HealthCheck, assume
from fuzz import gen, run
import pykern
pykern.set_target("cpu")
known = set({known!r})
seen = []

@settings(derandomize=True, max_examples={n}, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(gen.programs())
def check(p):
    assume(p.mutation not in known)
    r = run.check_program(p)
    seen.append(r["status"])
    assert r["status"].startswith("ok") or r["status"] == "skip_python_syntax", (p.source, r)

check()
print(json.dumps(seen))
"""


def test_hypothesis_programs_shrink_in_a_subprocess():
    """The same generator through hypothesis (derandomized), so a failure is
    shrunk to a small program; isolated so a crash cannot take pytest down."""
    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = _HYPO.format(tests=tests, known=sorted(KNOWN_BUGS), n=100)
    env = dict(os.environ, PYKERN_TARGET="cpu", PYKERN_CACHE="off")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-5000:]
    seen = json.loads(p.stdout.strip().splitlines()[-1])
    assert len(seen) >= 30


# ------------------------------------------------------------------ the oracle itself
_ORACLE_SRC = """import math
import numpy as np
import pykern as cuda

def kern_oracle(out_i, out_f, x, y):
    i = cuda.grid(1)
    if i >= out_i.size:
        return
    v = x[i] * 4611686018427387904 + x[i] // -3 + x[i] % -3
    out_i[i] = v ** 3
    out_f[i] = y[i] // 0.75 + y[i] % -0.75 + math.floor(y[i]) + round(y[i])
"""


@pytest.fixture
def cpu():
    import pykern

    pykern.set_target("cpu")


def _oracle_program():
    return gen.Program(_ORACLE_SRC, "kern_oracle", "valid", ident="oracle", nthreads=9)


def test_reference_wraps_like_int64_and_keeps_python_division(cpu):
    p = _oracle_program()
    x = np.array([-7, -1, 0, 1, 2, 5, 2**62, -(2**63), 2**63 - 1], np.int64)
    y = np.array([-2.5, -0.5, 0.0, 0.5, 1.5, 2.5, -1.25, 3.75, 7.0])
    ri, rf, ok = run.reference_outputs(p, 9, x, y)
    with np.errstate(all="ignore"):
        v = x * np.int64(4611686018427387904) + x // -3 + x % -3  # numpy int64: wraps, floors
        want_i = v * v * v
    want_f = [q // 0.75 + q % -0.75 + math.floor(q) + round(q) for q in y.tolist()]  # Python floats
    assert ok.all() and (ri == want_i).all() and (rf == np.array(want_f)).all()
    # and the kernel agrees with it
    assert run.check_program(p)["status"] == "ok_match"


def test_judge_reports_a_mismatch(cpu):
    def off_by_one(prog, n, x, y):
        ri, rf, ok = run.reference_outputs(prog, n, x, y)
        ri[3] += 1
        return ri, rf, ok

    r = run.check_program(_oracle_program(), reference=off_by_one)
    assert r["status"] == "FAIL_mismatch" and "thread 3" in r["message"]


def test_judge_reports_an_accepted_invalid_program_and_a_wrong_line(cpu):
    p = _oracle_program()
    assert run.check_program(gen.Program(p.source, p.entry, "invalid", "none", 7, "o2", 9))["status"] == \
        "FAIL_accepted_invalid"
    bad = p.source.replace("    out_i[i] = v ** 3", "    out_i[i] = v ** 3 + undefined_xyz")
    r = run.check_program(gen.Program(bad, p.entry, "invalid", "name_unknown", 7, "o3", 9))
    assert r["status"] == "FAIL_wrong_line" and r["line"] == 10
    r = run.check_program(gen.Program(bad, p.entry, "invalid", "name_unknown", 10, "o4", 9))
    assert r["status"] == "ok_rejected"


# ------------------------------------------------------------------ found while probing
def test_maybe_unassigned_variable_reads_as_zero(cpu):
    """A variable assigned on one branch only is accepted, as numba.cuda accepts it:
    kernels commonly guard a load and its later use by the same condition
    (``if i < n: x = a[i]`` ... ``if i < n: out[i] = x``). Python would raise
    UnboundLocalError on the other path; pykern defines the value instead of
    leaving it arbitrary: every local starts at zero (documented in ARCHITECTURE.md)."""
    src = ("import pykern as cuda\n\n"
           "def kern_maybe(a):\n"
           "    if a[0] > 0:\n"
           "        v = 3\n"
           "    a[1] = v\n")
    p = gen.Program(src, "kern_maybe", "invalid", "maybe_unassigned", 6, "maybe", 1)
    fn = run.load(p)
    import pykern

    try:
        k = pykern.jit(fn, cache=False)
        for first, expect in ((5, 3), (0, 0), (-1, 0)):
            a = np.array([first, 99], np.int64)
            k[1, 1](a)
            assert a[1] == expect, (first, a)
    finally:
        run.unload(p)
