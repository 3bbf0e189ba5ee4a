"""``cuda.syncthreads()`` and its counting forms (``syncthreads_count``/``_and``/``_or``) in kernels
and device functions, inside loops with ``continue``/``break``, reached by only some threads while
the others have exited (which counts as arrived, as on GPUs), and the error of a barrier that not
every thread reaches -- on the cpu target, with kernels written so that a skipped barrier gives a
wrong answer.

How the cpu target runs barriers (regions, coroutines): tests/codegen/cpu/test_cpu_regions.py."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda
from pykern import float64, int32, int64
from pykern.core.errors import KernelRuntimeError

from cpu_helpers import run_py

pytestmark = pytest.mark.usefixtures("cpu_uncached")


rng = np.random.default_rng(1234)


def sync_votes(x, cnt, all_, any_):
    t = cuda.threadIdx.x
    p = x[cuda.grid(1)] > 0.5
    cnt[cuda.blockIdx.x] = cuda.syncthreads_count(p)
    a = cuda.syncthreads_and(p)
    o = cuda.syncthreads_or(p)
    if t == 0:
        all_[cuda.blockIdx.x] = a
        any_[cuda.blockIdx.x] = o


def test_syncthreads_count_and_or():
    x = rng.random(64 * 4)
    x[64:128] = 1.0  # block 1: all true
    x[128:192] = 0.0  # block 2: none
    cnt, all_, any_ = (np.zeros(4, np.int32) for _ in range(3))
    run_py(sync_votes, (4,), (64,), x, cnt, all_, any_)
    p = (x > 0.5).reshape(4, 64)
    assert cnt.tolist() == p.sum(1).tolist()
    assert all_.tolist() == p.all(1).astype(int).tolist() and any_.tolist() == p.any(1).astype(int).tolist()


@cuda.jit(device=True)
def shared_rotate(sh, t, n):
    v = sh[(t + 1) % n]
    cuda.syncthreads()
    sh[t] = v
    cuda.syncthreads()


def rotate(x, out):
    sh = cuda.shared.array(64, np.int64)
    t = cuda.threadIdx.x
    sh[t] = x[t]
    cuda.syncthreads()
    for _ in range(3):
        shared_rotate(sh, t, cuda.blockDim.x)
    out[t] = sh[t]


def test_barrier_inside_device_function():
    x = np.arange(64, dtype=np.int64)
    out = np.zeros_like(x)
    run_py(rotate, (1,), (64,), x, out)
    assert out.tolist() == np.roll(x, -3).tolist()


def divergent(x):
    t = cuda.threadIdx.x
    if t < 5:
        cuda.syncthreads()
    cuda.syncthreads()
    x[t] = t


def divergent2(x):
    t = cuda.threadIdx.x
    if t % 2 == 0:
        cuda.syncthreads()
    else:
        cuda.syncthreads()
    x[t] = t


def test_divergent_barrier_raises_naming_line():
    x = np.zeros(32)
    with pytest.raises(KernelRuntimeError) as ei:
        run_py(divergent, (2,), (32,), x)
    line = divergent.__code__.co_firstlineno
    assert f"test_barriers.py:{line + 3}" in str(ei.value) and "divergent barrier" in str(ei.value)
    with pytest.raises(KernelRuntimeError) as ei:
        run_py(divergent2, (1,), (32,), x)
    l2 = divergent2.__code__.co_firstlineno
    assert f":{l2 + 3}" in str(ei.value) and f":{l2 + 5}" in str(ei.value)


# syncthreads_count/and/or
@cuda.jit
def votes(a, out):
    i = cuda.threadIdx.x
    v = a[i]
    c = cuda.syncthreads_count(v > 0)
    an = cuda.syncthreads_and(v > 0)
    o = cuda.syncthreads_or(v > 5)
    if i == 0:
        out[0] = c
        out[1] = an
        out[2] = o


def test_syncthreads_predicates():
    a = np.arange(-3, 125, dtype=np.int32)
    out = np.zeros(3, np.int32)
    votes[1, 128](a, out)
    assert out[0] == 124
    assert out[1] == 0
    assert out[2] != 0


@cuda.jit
def local_across_barrier(a, out):
    t = cuda.threadIdx.x
    loc = cuda.local.array(4, int64)
    sh = cuda.shared.array(128, int64)
    for k in range(4):
        loc[k] = t * 10 + k
    acc = t
    for r in range(3):
        sh[t] = loc[r] + acc
        cuda.syncthreads()
        acc += sh[(t + 1) % cuda.blockDim.x]
        cuda.syncthreads()
        loc[r + 1] += acc
    out[cuda.grid(1)] = acc * 1000 + loc[3]


def ref_local_across_barrier(nb, bs):
    out = []
    for b in range(nb):
        loc = [[t * 10 + k for k in range(4)] for t in range(bs)]
        acc = list(range(bs))
        for r in range(3):
            sh = [loc[t][r] + acc[t] for t in range(bs)]
            for t in range(bs):
                acc[t] += sh[(t + 1) % bs]
            for t in range(bs):
                loc[t][r + 1] += acc[t]
        out += [acc[t] * 1000 + loc[t][3] for t in range(bs)]
    return out


def test_local_array_and_scalars_across_barriers():
    out = np.zeros(2 * 96, np.int64)
    local_across_barrier[2, 96](np.zeros(1), out)
    assert out.tolist() == ref_local_across_barrier(2, 96)


@cuda.jit(device=True)
def block_reduce(sh, v):
    t = cuda.threadIdx.x
    sh[t] = v
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s //= 2
    r = sh[0]
    cuda.syncthreads()
    return r


@cuda.jit
def two_reductions(a, out):
    sh = cuda.shared.array(256, float64)
    i = cuda.grid(1)
    v = a[i]
    total = block_reduce(sh, v)
    sq = block_reduce(sh, (v - total / cuda.blockDim.x) ** 2)
    if cuda.threadIdx.x == 0:
        out[cuda.blockIdx.x, 0] = total
        out[cuda.blockIdx.x, 1] = sq


def test_barrier_in_device_function():
    a = np.arange(512, dtype=np.float64) % 7
    out = np.zeros((2, 2))
    two_reductions[2, 256](a, out)
    blocks = a.reshape(2, 256)
    np.testing.assert_allclose(out[:, 0], blocks.sum(1))
    np.testing.assert_allclose(out[:, 1], ((blocks - blocks.mean(1, keepdims=True)) ** 2).sum(1), rtol=1e-12)


@cuda.jit
def loop_barrier_continue(a, out):
    sh = cuda.shared.array(64, int32)
    t = cuda.threadIdx.x
    total = 0
    for it in range(6):
        sh[t] = t * it
        cuda.syncthreads()
        if it % 2 == 1:
            cuda.syncthreads()
            continue
        total += sh[63 - t]
        cuda.syncthreads()
    out[t] = total


def test_barriers_with_continue():
    out = np.zeros(64, np.int64)
    loop_barrier_continue[1, 64](np.zeros(1), out)
    t = np.arange(64)
    np.testing.assert_array_equal(out, (63 - t) * (0 + 2 + 4))


@cuda.jit(device=True)
def _stage(sh, loc, t, r):
    sh[t] = loc[r % 4] * (r + 1)
    cuda.syncthreads()
    v = sh[(t + r + 1) % cuda.blockDim.x]
    cuda.syncthreads()
    return v


@cuda.jit
def barrier_maze(a, out):
    sh = cuda.shared.array(128, float64)
    cnt = cuda.shared.array(1, int64)
    t = cuda.threadIdx.x
    loc = cuda.local.array(4, float64)
    for q in range(4):
        loc[q] = a[cuda.grid(1)] + q
    if t == 0:
        cnt[0] = 0
    acc = 0.0
    odd = t % 2 == 1
    if odd:
        extra = t * 1.5
    else:
        extra = -1.0
    cuda.syncthreads()
    r = 0
    while r < 5:
        for inner in range(3):
            v = _stage(sh, loc, t, r + inner)
            if odd:
                acc += v
            else:
                acc -= v * 0.5
            loc[(r + inner) % 4] += v * 0.01
        cuda.atomic.add(cnt, 0, 1)
        cuda.syncthreads()
        total = cnt[0]
        cuda.syncthreads()
        if total >= 3 * cuda.blockDim.x:
            break
        r += 1
    w = cuda.syncthreads_count(acc > 0)
    out[cuda.grid(1), 0] = acc + extra
    out[cuda.grid(1), 1] = loc[0] + loc[1] + loc[2] + loc[3]
    out[cuda.grid(1), 2] = r * 1000 + w


def test_barriers_in_device_functions_loops_and_uniform_break():
    """Private scalars, a local array and per-thread branches live across barriers in a device
    function called from a loop nest that a uniform (shared-memory) condition breaks out of;
    checked against a lock-step simulation of the block."""
    a = np.random.default_rng(0).random(256)
    out = np.zeros((256, 3))
    barrier_maze[2, 128](a, out)
    B = 128
    exp = np.zeros_like(out)
    for b in range(2):
        g = np.arange(B) + b * B
        loc = np.stack([a[g] + q for q in range(4)], 1)
        t = np.arange(B)
        odd = t % 2 == 1
        acc = np.zeros(B)
        cnt = r = 0
        while r < 5:
            for inner in range(3):
                rr = r + inner
                v = (loc[:, rr % 4] * (rr + 1))[(t + rr + 1) % B]
                acc = np.where(odd, acc + v, acc - v * 0.5)
                loc[:, rr % 4] += v * 0.01
            cnt += B
            if cnt >= 3 * B:
                break
            r += 1
        exp[g, 0] = acc + np.where(odd, t * 1.5, -1.0)
        exp[g, 1] = loc[:, 0] + loc[:, 1] + loc[:, 2] + loc[:, 3]
        exp[g, 2] = r * 1000 + (acc > 0).sum()
    np.testing.assert_array_equal(out, exp)


def test_minitorch_style_block_sum(monkeypatch):
    """A course's block reduction as students write it: a list literal of strides, and barriers
    only some threads reach while the others run to the end (fine on GPUs: threads that have
    exited count as arrived)."""
    block_dim = 32

    @cuda.jit
    def _sum_practice(out, a, size):
        cache = cuda.shared.array(block_dim, cuda.float64)
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        pos = cuda.threadIdx.x
        if i < size:
            val = float(a[i])
            cache[pos] = val
            cuda.syncthreads()
        else:
            cache[pos] = 0.0
        if i < size:
            for j in [1, 2, 4, 8, 16]:
                if pos % (j * 2) == 0:
                    cache[pos] += cache[pos + j]
                    cuda.syncthreads()
            if pos == 0:
                out[cuda.blockIdx.x] = cache[0]

    a = np.arange(70, dtype=np.float64)
    for path in ("regions", "coroutine"):
        monkeypatch.setenv("PYKERN_CPU_BARRIERS", path)
        out = np.zeros(3)
        cuda.jit(_sum_practice.py_func)[3, 32](out, a, 70)
        assert out.tolist() == [a[:32].sum(), a[32:64].sum(), a[64:].sum()]
