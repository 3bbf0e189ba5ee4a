"""The docs site, built once per test session into a temporary directory (sphinx-build -W)."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


@pytest.fixture(scope="session")
def built_docs(tmp_path_factory):
    """Build the HTML site with warnings as errors; returns the output directory."""
    pytest.importorskip("sphinx", reason="sphinx is not installed (pip install -e '.[docs]')")
    pytest.importorskip("myst_parser", reason="myst-parser is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("docs_html")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               PYKERN_TARGET="cpu", PYTHONWARNINGS="ignore")
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                        "-d", str(out / ".doctrees"), str(DOCS), str(out)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, f"sphinx-build -W failed:\n{r.stdout}\n{r.stderr}"
    return out


def load_ext(name: str):
    """The Sphinx extension ``docs/_ext/<name>.py`` as a module (it is not on sys.path in tests)."""
    spec = importlib.util.spec_from_file_location(name, DOCS / "_ext" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, mod)
    spec.loader.exec_module(mod)
    return mod
