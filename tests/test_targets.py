"""Target selection: "hip" without a GPU gives one clear error; the default falls back to cpu and says so once."""

import os
import subprocess
import sys
import textwrap

import pytest

import pykern


def run(code, tmp_path, **env):
    e = {k: v for k, v in os.environ.items() if k != "PYKERN_TARGET"}
    e.setdefault("PYKERN_CACHE_DIR", str(tmp_path / "cache"))
    e.update(env)
    script = tmp_path / "script.py"  # kernels need a source file (inspect), as in real programs
    script.write_text(textwrap.dedent(code))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=e, timeout=300)


def test_default_falls_back_to_cpu_and_says_so_once(tmp_path):
    r = run('''
        import warnings, numpy as np, pykern as cuda
        warnings.simplefilter("always")
        @cuda.jit
        def k(a):
            a[cuda.grid(1)] = 1
        a = np.zeros(4)
        k[1, 4](a); k[1, 4](a)
        print(cuda.current_target(), a.sum())
    ''', tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["cpu", "4.0"]
    assert r.stderr.count("no usable AMD GPU") == 1
    assert "hipErrorNoDevice" in r.stderr or "not found" in r.stderr


def test_env_hip_without_gpu_names_the_reason(tmp_path):
    r = run('''
        import numpy as np, pykern as cuda
        @cuda.jit
        def k(a):
            a[0] = 1
        try:
            k[1, 1](np.zeros(1))
        except cuda.LaunchError as e:
            print("LaunchError:", e)
    ''', tmp_path, PYKERN_TARGET="hip")
    assert r.returncode == 0, r.stderr
    assert "LaunchError: the 'hip' target is not usable here" in r.stdout
    assert "hipErrorNoDevice" in r.stdout or "not found" in r.stdout


def test_set_target_checks_names_and_hip():
    with pytest.raises(ValueError, match="unknown target 'cuda'"):
        pykern.set_target("cuda")
    before = pykern.current_target()
    with pytest.raises(pykern.LaunchError, match="not usable"):
        pykern.set_target("hip")
    assert pykern.current_target() == before
    pykern.set_target("cpu")
    assert pykern.current_target() == "cpu"


def test_hip_library_missing_is_named(tmp_path):
    r = run('''
        import pykern as cuda
        try:
            cuda.set_target("hip")
        except cuda.LaunchError as e:
            print(e)
    ''', tmp_path, PYKERN_HIP_LIBRARY=str(tmp_path / "nope" / "libamdhip64.so"))
    assert r.returncode == 0, r.stderr
    assert "not usable" in r.stdout and str(tmp_path / "nope") in r.stdout
