"""Row 12: a script's first launch and its exit, in fresh interpreters.

* first launch of a new kernel with ``PYKERN_CACHE=off`` (frontend, first-tier code, launch),
  target <= 50 ms on an idle machine;
* first launch of a kernel found in the disk cache (a second process on the same cache
  directory), target <= 5 ms;
* exit: from the script's last line to the end of the process (the parent's ``wait``), target
  <= 20 ms: a script that launches a kernel once with the cache off, one that launches it three
  times (its O3 build runs from the second launch), one that loads it from the cache. The CPU
  time the process spent after its last line is in the notes (it does not depend on the load:
  most of it is the interpreter's own teardown).

A script that only imports numpy runs in the same rounds: its exit (in the exit rows' notes) is the
floor under them -- the interpreter's teardown collects every object still alive at exit, ~20k
after ``import numpy``, ~33k after pykern compiled and launched a kernel (whose modules, llvmlite's
among them, make the difference).

Medians of fresh processes, the cases interleaved round by round; the children import with
cached bytecode (``bytecode_env``) and ``PYKERN_TIERS=on``, as a user's script runs.

Run alone: ``python benchmarks/bench_exit.py [--quick]``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

from _common import FIRST_CALL_ENV, HERE, Row, bytecode_env, main_for, scratch_dir

CHILD = r'''
import resource, sys, time
import numpy as np
import pykern as cuda

@cuda.jit
def saxpy_exit(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]

n = 100_000
x = np.ones(n, np.float32); out = np.empty_like(x)
t0 = time.perf_counter()
saxpy_exit[(n + 255) // 256, 256](np.float32(2), x, x, out)
first = time.perf_counter() - t0
for _ in range(int(sys.argv[1]) - 1):
    saxpy_exit[(n + 255) // 256, 256](np.float32(2), x, x, out)
assert out[0] == 3.0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(first, ru.ru_utime + ru.ru_stime, time.monotonic(), flush=True)
'''

#: the floor: a script that imports numpy and does nothing else (its "first launch" is 0)
NUMPY_CHILD = r'''
import resource, sys, time
import numpy as np
assert np.ones(4).sum() == 4.0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(0.0, ru.ru_utime + ru.ru_stime, time.monotonic(), flush=True)
'''


def _child(launches: int, env: dict) -> tuple:
    """(first launch s, exit wall s, CPU s after the last line) of one fresh interpreter
    (``launches`` 0: the numpy-only script)."""
    full = dict(os.environ)
    full.update(env)
    p = subprocess.Popen([sys.executable, "-c", CHILD if launches else NUMPY_CHILD, str(launches)], cwd=HERE, env=full,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = p.stdout.read()  # (the child writes little to stderr: read after it ends)
    _, status, ru = os.wait4(p.pid, 0)  # its CPU time, which subprocess's own wait would not give
    end = time.monotonic()
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read()
    p.stdout.close()
    p.stderr.close()
    if p.returncode:
        raise RuntimeError(f"child failed ({p.returncode}):\n{err[-3000:]}")
    first, cpu, last = (float(v) for v in out.split())
    return first, end - last, ru.ru_utime + ru.ru_stime - cpu


def run(quick: bool = False) -> list:
    reps = 7 if not quick else 1
    base = {**bytecode_env(), **FIRST_CALL_ENV}
    _child(1, {**base, "PYKERN_CACHE": "off"})  # writes the bytecode; not timed
    cases = {"off1": (1, {"PYKERN_CACHE": "off"}), "off3": (3, {"PYKERN_CACHE": "off"}),
             "cold": (1, None), "warm": (1, None), "numpy": (0, {})}
    got = {k: [] for k in cases}
    for _ in range(reps):
        cache = {"PYKERN_CACHE": "on", "PYKERN_CACHE_DIR": scratch_dir("pykern-bench-exit-")}
        for name, (launches, env) in cases.items():
            got[name].append(_child(launches, {**base, **(env or cache)}))
    med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in got.items()}
    load = f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    note = f"median of {reps} fresh processes; {load}"
    floor = (f"a script importing only numpy exits in {med['numpy'][1] * 1e3:.1f} ms "
             f"(CPU {med['numpy'][2] * 1e3:.1f} ms)")
    ms = 1e3
    return [
        Row("12 first launch & exit", "first launch of a new kernel, PYKERN_CACHE=off", med["off1"][0] * ms, 50.0, "ms",
            "target", "<= 50 ms", 1.0, f"saxpy n=1e5 after import; {note}"),
        Row("12 first launch & exit", "first launch of a kernel from the disk cache", med["warm"][0] * ms, 5.0, "ms",
            "target", "<= 5 ms", 1.0, f"cold (compile + store) {med['cold'][0] * ms:.1f} ms; {note}"),
        *[Row("12 first launch & exit", f"exit after the last line: {what}", med[k][1] * ms, 20.0, "ms", "target",
              "<= 20 ms", 1.0, f"CPU after the last line {med[k][2] * ms:.1f} ms; {floor}; {note}")
          for k, what in (("off1", "cache off, one launch"), ("off3", "cache off, three launches"),
                          ("cold", "cache on, compiled and stored"), ("warm", "cache on, loaded from it"))],
    ]


if __name__ == "__main__":
    main_for(run)
