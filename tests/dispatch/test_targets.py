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
    assert "hipErrorNoDevice" in r.stderr or "not found" in r.stderr or "no AMD GPU device node" in r.stderr


NO_NODES = not any(os.path.exists(n) for n in ("/dev/kfd", "/dev/dxg"))


@pytest.mark.skipif(not NO_NODES, reason="this machine has a GPU device node")
def test_default_without_device_nodes_does_not_load_hip(tmp_path):
    # no /dev/kfd (nor WSL's /dev/dxg): the HIP runtime cannot see a device, so choosing the
    # target does not load libamdhip64 to ask
    r = run('''
        import warnings, numpy as np, pykern as cuda
        from pykern.runtime.hip.presence import hip_loaded_in_process
        warnings.simplefilter("always")
        print(cuda.current_target(), hip_loaded_in_process(), "pykern.runtime.hip.library" in __import__("sys").modules)
    ''', tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["cpu", "[]", "False"]
    assert r.stderr.count("no usable AMD GPU (no AMD GPU device node (/dev/kfd or /dev/dxg)") == 1


@pytest.mark.skipif(not NO_NODES, reason="this machine has a GPU device node")
def test_default_asks_a_library_named_by_the_environment(tmp_path):
    # PYKERN_HIP_LIBRARY (e.g. a stand-in runtime) is always asked: its reason is the one given
    r = run('''
        import warnings, pykern as cuda
        warnings.simplefilter("always")
        print(cuda.current_target())
    ''', tmp_path, PYKERN_HIP_LIBRARY=str(tmp_path / "nope" / "libamdhip64.so"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["cpu"]
    assert "no usable AMD GPU" in r.stderr and str(tmp_path / "nope") in r.stderr


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
