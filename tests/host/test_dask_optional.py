"""dask stays optional: ``import pykern`` never imports it, and ``import pykern.host.dask``
without it says which extra to install."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _py(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_import_pykern_does_not_import_dask():
    r = _py("import sys, pykern; print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed') "
            "or m == 'pykern.host.dask'))")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_without_dask_the_error_names_the_extra():
    # a None entry in sys.modules makes "import dask" fail as if it were not installed
    r = _py("import sys; sys.modules['dask'] = None; sys.modules['dask.array'] = None\n"
            "try:\n    import pykern.host.dask\nexcept ImportError as e:\n    print(e)")
    assert r.returncode == 0, r.stderr
    assert "pip install 'pykern[dask]'" in r.stdout
