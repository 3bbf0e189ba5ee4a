"""Optional row 7: numba on the CPU as a second reference, from a separate venv.

numba is never installed into pykern's environment (it pins its own llvmlite);
this row runs only when a separate venv has numba: ``$PYKERN_BENCH_NUMBA_PYTHON`` (an
interpreter), else ``$PYKERN_BENCH_NUMBA_VENV``, else the user's cache directory
(``${XDG_CACHE_HOME:-~/.cache}/pykern/bench-numba-venv``), e.g. after::

    python -m venv ~/.cache/pykern/bench-numba-venv
    ~/.cache/pykern/bench-numba-venv/bin/pip install numba numpy

There is no NVIDIA GPU here, so numba.cuda cannot launch; the reference is
``@numba.njit(parallel=True)`` saxpy with ``prange`` over the same 1e7
float32 (the CPU JIT a numba user would reach for), and numba's cold compile
of it in a fresh process (cache off) next to pykern's cold cpu-target first
launch. Skipped with a note when the venv is missing.

Run alone: ``python benchmarks/bench_numba.py [--quick]``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np

from _common import FIRST_CALL_ENV, HERE, Row, best_time, main_for, parse_child_values, run_child

import pykern as cuda
from kernels import saxpy

NUMBA_CHILD = r"""
import os, sys, time
t0 = time.perf_counter()
import numpy as np
import numba
from numba import njit, prange
@njit(parallel=True, cache=False)
def saxpy(a, x, y, out):
    for i in prange(x.shape[0]):
        out[i] = a * x[i] + y[i]
n = int(sys.argv[1]); repeat = int(sys.argv[2])
rng = np.random.default_rng(0)
x = rng.random(n, dtype=np.float32); y = rng.random(n, dtype=np.float32); out = np.empty_like(x)
a = np.float32(2.5)
t1 = time.perf_counter()
saxpy(a, x, y, out)
t2 = time.perf_counter()
best = float("inf")
for _ in range(repeat):
    s = time.perf_counter(); saxpy(a, x, y, out); best = min(best, time.perf_counter() - s)
assert np.allclose(out, a * x + y)
@njit(cache=False)
def saxpy_serial(a, x, y, out):
    for i in range(x.shape[0]):
        out[i] = a * x[i] + y[i]
saxpy_serial(a, x, y, out)
serial = float("inf")
for _ in range(repeat):
    s = time.perf_counter(); saxpy_serial(a, x, y, out); serial = min(serial, time.perf_counter() - s)
print(f"BENCH_serial={serial}")
print(f"BENCH_first_call={t2 - t1}")
print(f"BENCH_run={best}")
print(f"BENCH_version={numba.__version__}")
"""

PYKERN_FIRST_CHILD = r"""
import time
import numpy as np
import pykern as cuda
from kernels import saxpy
n = 1000
x = cuda.to_device(np.ones(n, np.float32)); out = cuda.device_array(n, np.float32)
t0 = time.perf_counter()
saxpy[(n + 255) // 256, 256](np.float32(2), x, x, out)
cuda.synchronize()
print(f"BENCH_first_launch={time.perf_counter() - t0}")
"""


def numba_venv() -> str:
    """Where the optional numba venv is looked for (never a fixed /tmp path: a
    shared, world-writable directory another user could plant an interpreter in)."""
    v = os.environ.get("PYKERN_BENCH_NUMBA_VENV")
    if v:
        return v
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "pykern", "bench-numba-venv")


def numba_python():
    p = os.environ.get("PYKERN_BENCH_NUMBA_PYTHON") or os.path.join(numba_venv(), "bin", "python")
    if not os.path.exists(p):
        return None
    ok = subprocess.run([p, "-c", "import numba"], capture_output=True).returncode == 0
    return p if ok else None


def run(quick: bool = False) -> list:
    py = numba_python()
    if py is None:
        venv = numba_venv()
        return [Row("7 numba reference (optional)", "skipped", None, None, "",
                    f"numba venv not found (python -m venv {venv} && {venv}/bin/pip install numba numpy)")]
    n = 10_000_000 if not quick else 2_000_000
    repeat = 5 if not quick else 3
    env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(HERE, ".numba-unused"))
    t0 = time.perf_counter()
    p = subprocess.run([py, "-c", NUMBA_CHILD, str(n), str(repeat)], capture_output=True, text=True, env=env,
                       timeout=600)
    if p.returncode != 0:
        return [Row("7 numba reference (optional)", "failed", None, None, "", note=p.stderr.strip()[-200:])]
    nb = parse_child_values(p.stdout)

    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    a = np.float32(2.5)
    d_x, d_y, d_out = cuda.to_device(x), cuda.to_device(y), cuda.device_array(n, np.float32)
    blocks = (n + 255) // 256

    def dev():
        saxpy[blocks, 256](a, d_x, d_y, d_out)
        cuda.synchronize()

    t = best_time(dev, repeat=repeat)
    _, out = run_child(PYKERN_FIRST_CHILD, {"PYKERN_CACHE": "off", **FIRST_CALL_ENV})
    first = parse_child_values(out)["first_launch"]
    name = f"numba {nb['version']} njit(parallel)"
    best_nb, best_name = min((nb["run"], name), (nb["serial"], f"numba {nb['version']} njit serial"))
    return [
        Row("7 numba reference (optional)", f"saxpy cpu, device arrays, n={n:,}", t * 1e3, best_nb * 1e3, "ms",
            best_name, "—", None, f"faster of njit(parallel) {nb['run'] * 1e3:.2f} ms and serial "
            f"{nb['serial'] * 1e3:.2f} ms; numba from {py}"),
        Row("7 numba reference (optional)", "cold first call (compile) in a fresh process, cache off",
            first * 1e3, nb["first_call"] * 1e3, "ms", name, "—", None,
            "pykern: cpu-target first launch incl. compile"),
    ]


if __name__ == "__main__":
    main_for(run)
