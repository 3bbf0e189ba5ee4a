"""A wheel built from this checkout installs into a fresh virtual environment and runs a sample.

The venv is made with ``--system-site-packages`` so pykern's dependencies (llvmlite, numpy...)
come from the machine instead of being downloaded; pykern itself is installed from the wheel
with ``--no-deps``, and the test checks the sample imported that copy, not the checkout's."""

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kw)
    assert r.returncode == 0, f"{cmd} failed:\n{r.stdout}\n{r.stderr}"
    return r


def test_wheel_installs_and_runs_saxpy(tmp_path):
    src = tmp_path / "src"
    # build from a copy: building in place would leave build/ and *.egg-info in the checkout
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__",
                                                             "_build", ".pytest_cache"))
    wheels = tmp_path / "wheels"
    # --no-isolation: the build backend (setuptools) comes from this machine, not a download
    _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(wheels), str(src)])
    (wheel,) = wheels.glob("pykern-*.whl")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", str(wheel)])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYKERN_TARGET"] = "cpu"
    env["PYKERN_CACHE_DIR"] = str(tmp_path / "cache")
    where = _run([str(py), "-c", "import pykern; print(pykern.__file__)"], cwd=tmp_path, env=env).stdout.strip()
    assert where.startswith(str(env_dir)), f"the venv imported pykern from {where}, not from the wheel"
    out = _run([str(py), str(ROOT / "samples" / "saxpy.py")], cwd=tmp_path, env=env)
    assert "cpu" in (out.stdout + out.stderr).lower()
