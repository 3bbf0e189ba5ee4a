"""Every sample runs on the cpu target and its own check against numpy passes."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLES = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "samples")) if f.endswith(".py") and not f.startswith("_"))


def _param(name):
    if name.startswith("dask_"):  # a cluster of processes: needs the dask extra, takes a while
        try:
            import distributed  # noqa: F401
        except ImportError:
            return pytest.param(name, marks=pytest.mark.skip(reason="dask[distributed] is not installed"))
        return pytest.param(name, marks=pytest.mark.slow)
    return name


def run_sample(name, tmp_path, **env_extra):
    """Run ``samples/<name>.py`` on the cpu target (``env_extra`` added to its environment) and
    check that it passed its own check."""
    env = dict(os.environ, PYKERN_TARGET="cpu", PYKERN_CACHE_DIR=str(tmp_path / "cache"), **env_extra)
    args = [sys.executable, os.path.join(ROOT, "samples", f"{name}.py")]
    if name == "mandelbrot":
        args.append(str(tmp_path / "m.png"))
    r = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "check=OK" in r.stdout and "target=cpu" in r.stdout, r.stdout


@pytest.mark.parametrize("name", [_param(n) for n in SAMPLES])
def test_sample_runs_and_checks(name, tmp_path):
    run_sample(name, tmp_path)
    if name == "mandelbrot":
        png = (tmp_path / "m.png").read_bytes()
        assert png.startswith(b"\x89PNG") and len(png) > 1000


def test_sample_list_is_complete():
    assert {"saxpy", "heat2d", "matmul", "reduction", "histogram", "scan", "monte_carlo_pi", "nbody",
            "mandelbrot", "ufuncs", "reduce", "grid_sync"} <= set(SAMPLES)
