"""Row 9: kernels with barriers on the cpu target -- work-item loops ("regions", the default)
against coroutines (``PYKERN_CPU_BARRIERS=coroutine``, measured in a child process) and against
the same algorithms hand-written in C with work-group loops, compiled by clang-22 -O3
-march=native in this run and run on as many threads as pykern uses (blocks split across
pthreads, as pykern splits them across its pool).

* tiled matmul (samples/matmul.py, 16x16 float32 tiles) 512² and 1024²: GFLOP/s, target >= 0.5x C
  (pykern and C called in turns, best of 10 each, so that both see the same load);
* tree reduction in shared memory (samples/tree_sum.py), 2^24 float32, one element per thread:
  target >= 10x faster than the coroutine path;
* barrier cost: ns per thread per barrier in a ping-pong kernel (2 barriers per round): target <= 1.

Run alone: ``python benchmarks/bench_barriers.py [--quick]``.
"""

from __future__ import annotations

import ctypes
import os
import time

import numpy as np

from _common import Row, best_time, build_c_library, clang, main_for, parse_child_values, run_child

import pykern as cuda
from barrier_kernels import RED_TPB, barrier_pingpong, tree_reduce
from kernels import TPB, matmul

C_SOURCE = r"""
#include <pthread.h>
#include <string.h>
#define T 16
#define R 256
typedef struct { const float *a, *b; float *c; int n, b0, b1; } mm_job;
static void *mm_part(void *p) {
    mm_job *j = p; int n = j->n, nb = n / T;
    float sA[T][T], sB[T][T], acc[T][T];
    for (int blk = j->b0; blk < j->b1; blk++) {
        int by = blk / nb, bx = blk % nb;
        memset(acc, 0, sizeof acc);
        for (int i = 0; i < nb; i++) {
            for (int ty = 0; ty < T; ty++)          /* region 1: every thread loads */
                for (int tx = 0; tx < T; tx++) {
                    sA[ty][tx] = j->a[(by * T + ty) * n + i * T + tx];
                    sB[ty][tx] = j->b[(i * T + ty) * n + bx * T + tx];
                }
            for (int ty = 0; ty < T; ty++)          /* region 2: every thread accumulates */
                for (int tx = 0; tx < T; tx++)
                    for (int k = 0; k < T; k++)
                        acc[ty][tx] += sA[ty][k] * sB[k][tx];
        }
        for (int ty = 0; ty < T; ty++)
            for (int tx = 0; tx < T; tx++)
                j->c[(by * T + ty) * n + bx * T + tx] = acc[ty][tx];
    }
    return 0;
}
typedef struct { const float *x; float *out; int b0, b1; } red_job;
static void *red_part(void *p) {
    red_job *j = p; float sh[R];
    for (int blk = j->b0; blk < j->b1; blk++) {
        for (int t = 0; t < R; t++) sh[t] = j->x[blk * R + t];
        for (int s = R / 2; s > 0; s /= 2)
            for (int t = 0; t < s; t++) sh[t] += sh[t + s];
        j->out[blk] = sh[0];
    }
    return 0;
}
#define SPLIT(JOB, FN, NB, ...) do { pthread_t th[64]; JOB jobs[64]; if (nthreads > 64) nthreads = 64; \
    for (int k = 0; k < nthreads; k++) { jobs[k] = (JOB){__VA_ARGS__, (int)((long)NB * k / nthreads), \
        (int)((long)NB * (k + 1) / nthreads)}; pthread_create(&th[k], 0, FN, &jobs[k]); } \
    for (int k = 0; k < nthreads; k++) pthread_join(th[k], 0); } while (0)
void matmul_c(const float *a, const float *b, float *c, int n, int nthreads) {
    SPLIT(mm_job, mm_part, (n / T) * (n / T), a, b, c, n);
}
void tree_c(const float *x, float *out, int nblocks, int nthreads) {
    SPLIT(red_job, red_part, nblocks, x, out);
}
"""

_COROUTINE_CHILD = r"""
import numpy as np, pykern as cuda
from _common import best_time
from kernels import TPB, matmul
from barrier_kernels import RED_TPB, tree_reduce, barrier_pingpong
import sys
n, nred, rounds, rep = (int(v) for v in sys.argv[1:5]) if len(sys.argv) > 4 else ({N}, {NRED}, {ROUNDS}, {REP})
A = np.random.default_rng(1).random((n, n), dtype=np.float32); C = np.zeros_like(A)
t = best_time(lambda: matmul[(n // TPB, n // TPB), (TPB, TPB)](A, A, C), repeat=rep)
print(f"BENCH_matmul={{t}}")
x = np.random.default_rng(2).random(nred, dtype=np.float32); out = np.zeros(nred // RED_TPB, np.float32)
t = best_time(lambda: tree_reduce[nred // RED_TPB, RED_TPB](x, out), repeat=rep)
print(f"BENCH_tree={{t}}")
o = np.zeros(64 * RED_TPB, np.float32)
t = best_time(lambda: barrier_pingpong[64, RED_TPB](o, rounds), repeat=rep)
print(f"BENCH_pingpong={{t}}")
"""


def _c_reference():
    lib, why = build_c_library(C_SOURCE, ["-pthread"], "pykern-bench-c-")
    if lib is None:
        return None, why
    so = ctypes.CDLL(lib)
    fp = np.ctypeslib.ndpointer(np.float32, flags="C_CONTIGUOUS")
    so.matmul_c.argtypes = [fp, fp, fp, ctypes.c_int, ctypes.c_int]
    so.tree_c.argtypes = [fp, fp, ctypes.c_int, ctypes.c_int]
    return so, os.path.basename(clang())


def _paired_best(f, g, repeat):
    """Best wall times of ``f`` and of ``g``, called in turns, so that both see the same phases
    of a busy machine's load (each is warmed up first)."""
    f()
    g()
    bf = bg = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        t1 = time.perf_counter()
        g()
        t2 = time.perf_counter()
        bf, bg = min(bf, t1 - t0), min(bg, t2 - t1)
    return bf, bg


def run(quick: bool = False) -> list:
    sizes = (256,) if quick else (512, 1024)
    nred = 1 << (18 if quick else 24)
    rounds = 20 if quick else 200
    rep = 1 if quick else 3
    mm_rep = 1 if quick else 10  # the matmuls take milliseconds: more tries, less noise on a busy machine
    nthreads = os.cpu_count() or 1
    so, ccname = _c_reference()
    rows = []
    rng = np.random.default_rng(1)
    coro = {}
    for n in sizes:
        A = rng.random((n, n), dtype=np.float32)
        B = rng.random((n, n), dtype=np.float32)
        C = np.zeros((n, n), np.float32)
        grid = (n // TPB, n // TPB)
        flops = 2.0 * n**3
        base, note = None, ccname or ""
        if so is not None:
            Cc = np.zeros_like(C)
            t, tc = _paired_best(lambda: matmul[grid, (TPB, TPB)](A, B, C),
                                 lambda: so.matmul_c(A, B, Cc, n, nthreads), mm_rep)
            ok = np.allclose(C, A @ B, rtol=1e-4, atol=1e-3) and np.allclose(Cc, C, rtol=1e-5, atol=1e-4)
            base = flops / tc / 1e9
            note = f"pykern {t * 1e3:.1f} ms, C {tc * 1e3:.1f} ms ({ccname} -O3 -march=native, {nthreads} threads)"
        else:
            t = best_time(lambda: matmul[grid, (TPB, TPB)](A, B, C), repeat=mm_rep)
            ok = np.allclose(C, A @ B, rtol=1e-4, atol=1e-3)
        _, out = run_child(_COROUTINE_CHILD.format(N=n, NRED=1 << 10, ROUNDS=1, REP=rep),
                           env={"PYKERN_CPU_BARRIERS": "coroutine", "PYKERN_CACHE": "off"}, timeout=1800)
        coro[n] = parse_child_values(out)["matmul"]
        note += f"; coroutine path {flops / coro[n] / 1e9:.2f} GFLOP/s"
        rows.append(Row("9 barrier kernels (cpu)", f"tiled matmul {n}² float32, work-item loops",
                        flops / t / 1e9, base, "GFLOP/s", "same algorithm in C", ">= 0.5", 0.5,
                        note + ("" if ok else " RESULT MISMATCH"), higher_is_better=True))
    # tree reduction and barrier cost: pykern regions vs coroutines (same run, child process)
    x = rng.random(nred, dtype=np.float32)
    out = np.zeros(nred // RED_TPB, np.float32)
    t = best_time(lambda: tree_reduce[nred // RED_TPB, RED_TPB](x, out), repeat=rep)
    ok = np.allclose(out, x.reshape(-1, RED_TPB).sum(1, dtype=np.float64), rtol=1e-4)
    o = np.zeros(64 * RED_TPB, np.float32)
    tp = best_time(lambda: barrier_pingpong[64, RED_TPB](o, rounds), repeat=rep)
    _, cout = run_child(_COROUTINE_CHILD.format(N=sizes[0], NRED=nred, ROUNDS=rounds, REP=rep),
                        env={"PYKERN_CPU_BARRIERS": "coroutine", "PYKERN_CACHE": "off"}, timeout=1800)
    cv = parse_child_values(cout)
    note = f"regions {t * 1e3:.1f} ms, coroutines {cv['tree'] * 1e3:.1f} ms"
    if so is not None:
        oc = np.zeros_like(out)
        tc = best_time(lambda: so.tree_c(x, oc, nred // RED_TPB, nthreads), repeat=rep)
        note += f", C {tc * 1e3:.1f} ms"
    rows.append(Row("9 barrier kernels (cpu)", f"tree reduction 2^{nred.bit_length() - 1} float32, 1 per thread",
                    cv["tree"] / t, 1.0, "x faster", "coroutine path", ">= 10", 10,
                    note + ("" if ok else " RESULT MISMATCH"), ratio=cv["tree"] / t, higher_is_better=True))
    per = 64 * RED_TPB * 2 * rounds
    rows.append(Row("9 barrier kernels (cpu)", f"barrier cost, {RED_TPB} threads x 64 blocks x {2 * rounds} barriers",
                    tp / per * 1e9, cv["pingpong"] / per * 1e9, "ns/thread/barrier", "coroutine path",
                    "<= 1 ns", 1.0, "ratio column: regions / coroutines; target on the pykern value",
                    ratio=tp / per * 1e9))
    return rows


if __name__ == "__main__":
    main_for(run)
