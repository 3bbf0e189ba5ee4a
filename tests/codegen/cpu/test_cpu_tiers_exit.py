"""When the O3 build of first-tier code runs (``pykern/codegen/cpu/tiers.py``): one that the disk
cache stores starts with the kernel, and the cache gets it even from a script that exits at once;
one that nothing stores waits for the kernel's second launch (a script that launches once leaves
no build for its exit to wait on) and ends between its stages when the interpreter shuts down."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import pykern as cuda
from pykern.codegen.artifact import KernelArtifact
from pykern.codegen.cpu import tiers as cpu_tiers
from pykern.dispatch import compiler
from pykern.frontend import parse_signature
from pykern.runtime import backends as rt_launch
from pykern.runtime.cpu import executor as cpu_executor

SIG = "void(float32, float32[::1], float32[::1], float32[::1])"


@cuda.jit
def exit_saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@pytest.fixture(autouse=True)
def _tiers_on(monkeypatch):
    monkeypatch.setenv("PYKERN_TIERS", "on")
    monkeypatch.setenv("PYKERN_CACHE", "off")


def _unstored():
    _, argtypes = parse_signature(SIG)
    art, _ = compiler.compile_artifact(exit_saxpy, "cpu", tuple(argtypes), _skip_cache=True)
    assert isinstance(art, cpu_tiers.FirstTierArtifact) and not art.tier_two.stored
    cpu_executor._loaded.pop(art.name, None)
    kernel = rt_launch.load("cpu", art)
    ov = compiler.Overload(exit_saxpy, "cpu", tuple(argtypes), art, kernel)
    compiler._follow_tier_two(ov, art.tier_two)
    return art, ov


def test_a_build_nothing_stores_starts_at_the_second_launch():
    art, ov = _unstored()
    x = np.arange(640, dtype=np.float32)
    out = np.zeros_like(x)
    rt_launch.launch(ov, (np.float32(2), x, x, out), (10, 1, 1), (64, 1, 1), 0, 0)
    assert np.array_equal(out, 3 * x)
    assert not art.tier_two.started()  # launched once: nothing built, nothing to wait for at exit
    out[:] = 0
    rt_launch.launch(ov, (np.float32(2), x, x, out), (10, 1, 1), (64, 1, 1), 0, 0)
    assert np.array_equal(out, 3 * x)
    assert art.tier_two.started() and art.tier_two._done.wait(60)
    assert type(ov.artifact) is KernelArtifact and ov.kernel.artifact is ov.artifact  # O3 adopted
    out[:] = 0
    rt_launch.launch(ov, (np.float32(2), x, x, out), (10, 1, 1), (64, 1, 1), 0, 0)
    assert np.array_equal(out, 3 * x)


def test_reading_the_ir_builds_it_whatever_the_launches():
    art, ov = _unstored()
    assert not art.tier_two.started()
    assert "define" in art.llvm_ir and art.tier_two.done() and art.tier_two.final is not None


def test_shutdown_ends_a_build_nothing_stores_but_not_a_stored_one(monkeypatch):
    monkeypatch.setattr(cpu_tiers, "_shutting_down", True)
    monkeypatch.setattr(cpu_tiers, "FIRST_LAUNCH_GRACE", 0)
    art, ov = _unstored()
    assert art.tier_two.wait(60) is None and isinstance(art.tier_two.error, cpu_tiers.Abandoned)
    assert ov.artifact is art  # the first tier stays, and computes the same results
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    rt_launch.launch(ov, (np.float32(2), x, x, out), (1, 1, 1), (64, 1, 1), 0, 0)
    assert np.array_equal(out, 3 * x)
    art2, ov2 = _unstored()
    art2.tier_two.stored = True
    assert art2.tier_two.wait(60) is not None


SCRIPT = textwrap.dedent('''
    import sys, threading
    import numpy as np
    import pykern as cuda

    @cuda.jit
    def k(a, x, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + 0.25

    x = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(x)
    for _ in range(int(sys.argv[1])):
        k[4, 256](np.float32(2), x, out)
    assert np.array_equal(out, 2 * x + np.float32(0.25))
    ov = next(iter(k._overloads.values()))
    # what the interpreter's exit would wait for: threads that are not daemons
    print(type(ov.artifact).__name__, ov.from_cache,
          sorted(t.name for t in threading.enumerate() if not t.daemon and t is not threading.main_thread()))
''')


def _script(tmp_path, launches, **env):
    script = tmp_path / "s.py"
    script.write_text(SCRIPT)
    e = dict(os.environ, PYKERN_TARGET="cpu", PYKERN_TIERS="on", **env)
    r = subprocess.run([sys.executable, "-W", "ignore", str(script), str(launches)], capture_output=True, text=True,
                       env=e, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.split("\n")[0]


def test_a_script_that_launches_once_leaves_nothing_for_its_exit_to_wait_for(tmp_path):
    assert _script(tmp_path, 1, PYKERN_CACHE="off") == "FirstTierArtifact False []"
    # launched again: the build runs (and the script still exits cleanly, with or without it)
    kind = _script(tmp_path, 3, PYKERN_CACHE="off").split()[0]
    assert kind in ("FirstTierArtifact", "KernelArtifact")


def test_the_disk_cache_still_gets_the_o3_build_of_a_script_that_exits_at_once(tmp_path):
    cache = str(tmp_path / "cache")
    first = _script(tmp_path, 1, PYKERN_CACHE="on", PYKERN_CACHE_DIR=cache)
    assert first.split()[1] == "False"  # compiled here; its build runs, and the exit waits for it
    assert _script(tmp_path, 1, PYKERN_CACHE="on", PYKERN_CACHE_DIR=cache) == "KernelArtifact True []"
