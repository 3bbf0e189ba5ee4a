"""Row 10: memory bandwidth of plain kernels on the cpu target against STREAM in C.

The four STREAM loops (copy ``a = b``, scale ``a = s*b``, add ``a = b + c``, triad
``a = b + s*c``) over float32 arrays well beyond the last-level cache (2^26 elements, 256 MiB
each), written as GPU kernels the usual way (``i = cuda.grid(1); if i < a.size: ...``, 256
threads per block), on ``cuda.to_device`` arrays and on host numpy arrays. The reference is the
same loops in C compiled in this run by clang-22 ``-O3 -march=native -ffp-contract=off
-fopenmp`` (every core, ``schedule(static)``). Target: pykern >= 90% of C's GB/s. pykern and C
run in turns (interleaved rounds) so that both see the same load; rows give the best round
(STREAM's convention), notes the medians. Results must be bit-identical to C's.

OpenMP's threads sleep as soon as a loop ends (``KMP_BLOCKTIME=0``, unless set): spinning for
libomp's default 200 ms they would take the cores from pykern's turn.

Without clang (or its OpenMP runtime: ``apt-get install clang-22 libomp-22-dev``) the rows say
"unavailable" instead of a baseline.

Run alone: ``python benchmarks/bench_stream.py [--quick]``.
"""

from __future__ import annotations

import ctypes
import os
import statistics
import time

import numpy as np

from _common import Row, build_c_library, main_for

import pykern as cuda

TARGET = 0.9
TPB = 256

C_SOURCE = r"""
void copy_c(float *restrict a, const float *restrict b, long n) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) a[i] = b[i];
}
void scale_c(float *restrict a, const float *restrict b, float s, long n) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) a[i] = s * b[i];
}
void add_c(float *restrict a, const float *restrict b, const float *restrict c, long n) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) a[i] = b[i] + c[i];
}
void triad_c(float *restrict a, const float *restrict b, const float *restrict c, float s, long n) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
}
"""


@cuda.jit
def copy_k(a, b):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = b[i]


@cuda.jit
def scale_k(a, b, s):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = s * b[i]


@cuda.jit
def add_k(a, b, c):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = b[i] + c[i]


@cuda.jit
def triad_k(a, b, c, s):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = b[i] + s * c[i]


#: name -> (kernel, C function, uses c, uses s, arrays moved per element)
OPS = {
    "copy": (copy_k, "copy_c", False, False, 2),
    "scale": (scale_k, "scale_c", False, True, 2),
    "add": (add_k, "add_c", True, False, 3),
    "triad": (triad_k, "triad_c", True, True, 3),
}


def c_reference():
    """(ctypes library, "") or (None, why not)."""
    lib, why = build_c_library(C_SOURCE, ["-ffp-contract=off", "-fopenmp"], "pykern-bench-stream-")
    if lib is None:
        return None, why + " (apt-get install clang-22 libomp-22-dev)"
    os.environ.setdefault("KMP_BLOCKTIME", "0")  # read when libomp starts its threads
    try:
        so = ctypes.CDLL(lib)
    except OSError as e:
        return None, f"cannot load the C reference: {e}"
    fp = np.ctypeslib.ndpointer(np.float32, flags="C_CONTIGUOUS")
    so.copy_c.argtypes = [fp, fp, ctypes.c_long]
    so.scale_c.argtypes = [fp, fp, ctypes.c_float, ctypes.c_long]
    so.add_c.argtypes = [fp, fp, fp, ctypes.c_long]
    so.triad_c.argtypes = [fp, fp, fp, ctypes.c_float, ctypes.c_long]
    return so, ""


def run(quick: bool = False) -> list:
    n = 1 << 26 if not quick else 1 << 22
    rounds = 10 if not quick else 2
    so, why = c_reference()
    rng = np.random.default_rng(0)
    b, c = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    s = np.float32(3.0)
    a_c, a_h = np.zeros(n, np.float32), np.zeros(n, np.float32)
    d_a, d_b, d_c = cuda.to_device(a_h), cuda.to_device(b), cuda.to_device(c)
    blocks = (n + TPB - 1) // TPB
    rows = []
    for name, (kern, cfn, uses_c, uses_s, arrays) in OPS.items():
        def args(a, bb, cc):
            return (a, bb) + ((cc,) if uses_c else ()) + ((s,) if uses_s else ())

        runs = {
            "device": lambda: kern[blocks, TPB](*args(d_a, d_b, d_c)),
            "host": lambda: kern[blocks, TPB](*args(a_h, b, c)),
        }
        if so is not None:
            runs["C"] = lambda: getattr(so, cfn)(*args(a_c, b, c), n)
        for f in runs.values():  # warm-up: compiles, faults the pages in
            f()
        cuda.synchronize()
        times = {k: [] for k in runs}
        for _ in range(rounds):
            for k, f in runs.items():
                t0 = time.perf_counter()
                f()
                cuda.synchronize()
                times[k].append(time.perf_counter() - t0)
        gbs = {k: arrays * 4 * n / min(v) / 1e9 for k, v in times.items()}
        med = {k: arrays * 4 * n / statistics.median(v) / 1e9 for k, v in times.items()}
        want = a_c if so is not None else None
        for case, key in (("device arrays", "device"), ("host numpy arrays", "host")):
            got = d_a.copy_to_host() if key == "device" else a_h
            mismatch = "" if want is None or np.array_equal(got, want) else " RESULT MISMATCH (vs C)"
            label = f"{name} {case}, n=2^{n.bit_length() - 1} float32"
            note = (f"best of {rounds} interleaved rounds; medians {med[key]:.1f} vs "
                    + (f"{med['C']:.1f} GB/s" if "C" in med else "—")
                    + f"; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores{mismatch}")
            if so is None:
                rows.append(Row("10 STREAM (cpu)", label, gbs[key], None, "GB/s", f"C unavailable: {why}",
                                f">= {TARGET}x C", None, note, higher_is_better=True))
            else:
                rows.append(Row("10 STREAM (cpu)", label, gbs[key], gbs["C"], "GB/s",
                                f"C -O3 -fopenmp, {os.cpu_count()} threads", f">= {TARGET}x C", TARGET, note,
                                higher_is_better=True))
    return rows


if __name__ == "__main__":
    main_for(run)
