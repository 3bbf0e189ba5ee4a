"""Compiled external device code (``declare_device(link=...)``, ``@jit(link=...)``) in the disk
cache. Each step is a fresh interpreter that launches a kernel on the cpu target, counts the
clang runs and compares the result with numpy: a kernel launched again does not compile its
external code again, another kernel linking the same file reuses the compiled code, and an
edited file or a header it includes (same names) is compiled again and its new code runs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(shutil.which("clang-22") is None and shutil.which("clang") is None,
                                reason="clang (clang-22, installed by scripts/setup.sh) is not installed")

SOURCE = '#include "factor.h"\nextern "C" __device__ int scale(int *out, int a) {{ *out = a * FACTOR{plus}; return 0; }}\n'

KERN = """
import os
import pykern as cuda

scale = cuda.declare_device("scale", "int32(int32)", link=os.path.join(os.path.dirname(__file__), "scale.hip"))

@cuda.jit
def k(r, x):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = scale(x[i])

@cuda.jit(link=[os.path.join(os.path.dirname(__file__), "scale.hip")])
def other(r, x):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = scale(x[i]) + 1
"""

RUN = """
import json, sys
import numpy as np
import pykern
pykern.set_target("cpu")
from pykern.codegen import external
runs = []
real = external._run_clang
def counted(*a, **kw):
    runs.append(1)
    return real(*a, **kw)
external._run_clang = counted
sys.path.insert(0, sys.argv[1])
import kern
fn = getattr(kern, sys.argv[2])
x = np.arange(8, dtype=np.int32)
r = np.zeros_like(x)
fn[1, 8](r, x)
if "pykern.codegen.cpu.tiers" in sys.modules:  # a first call's O3 build stores the entry after the call returned
    sys.modules["pykern.codegen.cpu.tiers"].wait_all(300)
ov = next(iter(fn.overloads.values()))
print(json.dumps({"out": r.tolist(), "clang_runs": len(runs), "from_cache": ov.from_cache}))
"""


def _run(workdir: Path, kernel: str) -> dict:
    env = dict(os.environ, PYKERN_CACHE_DIR=str(workdir / "cache"), PYKERN_CACHE="on",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("PYKERN_BUILD_ID", None)
    out = subprocess.run([sys.executable, "-c", RUN, str(workdir), kernel], capture_output=True, text=True,
                         env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_compiled_external_code_is_reused_and_recompiled_when_edited(tmp_path):
    (tmp_path / "kern.py").write_text(KERN)
    src = tmp_path / "scale.hip"
    header = tmp_path / "factor.h"
    src.write_text(SOURCE.format(plus=""))
    header.write_text("#define FACTOR 2\n")
    x = list(range(8))

    first = _run(tmp_path, "k")
    assert first == {"out": [2 * v for v in x], "clang_runs": 1, "from_cache": False}

    again = _run(tmp_path, "k")  # a new process: the kernel comes from the cache, clang does not run
    assert again == {"out": [2 * v for v in x], "clang_runs": 0, "from_cache": True}

    other = _run(tmp_path, "other")  # another kernel linking the same file: its compiled code is reused
    assert other == {"out": [2 * v + 1 for v in x], "clang_runs": 0, "from_cache": False}

    header.write_text("#define FACTOR 30\n")  # a header the source includes, edited
    edited = _run(tmp_path, "k")
    assert edited == {"out": [30 * v for v in x], "clang_runs": 1, "from_cache": False}
    edited_other = _run(tmp_path, "other")  # @jit(link=...) is keyed by the contents too
    assert edited_other == {"out": [30 * v + 1 for v in x], "clang_runs": 0, "from_cache": False}

    src.write_text(SOURCE.format(plus=" + 5"))  # same file name, new contents
    edited_source = _run(tmp_path, "k")
    assert edited_source == {"out": [30 * v + 5 for v in x], "clang_runs": 1, "from_cache": False}
