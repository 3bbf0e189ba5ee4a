"""Barrier kernels on the cpu target as work-item loops (``codegen/cpu_regions.py``).

Every kernel here runs on both barrier paths -- work-item loops ("regions") and coroutines,
chosen with PYKERN_CPU_BARRIERS at compile time -- and both must equal numpy. The kernels are
written so that a barrier the region path got wrong gives a wrong answer (threads read what
other threads wrote before the barrier)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as cuda
from cpu_helpers import compile_py, launch
from pykern.core.errors import KernelRuntimeError

HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "samples"))
from matmul import make_matmul  # noqa: E402  (samples/matmul.py)
from tree_sum import make_tree_sum  # noqa: E402  (samples/tree_sum.py)
PATHS = ("regions", "coroutine")
rng = np.random.default_rng(7)


def run(path, fn, grid, block, *args, monkeypatch, **opts):
    """Compile ``fn`` for ``path`` and launch it; returns the kernel."""
    monkeypatch.setenv("PYKERN_CPU_BARRIERS", path)
    k = compile_py(fn, *args, **opts)
    launch(k, grid, block, *args)
    return k


def both(fn, grid, block, make_args, monkeypatch, **opts):
    """Run ``fn`` on both paths with fresh arguments; returns {path: (kernel, args)}."""
    out = {}
    for path in PATHS:
        args = make_args()
        k = run(path, fn, grid, block, *args, monkeypatch=monkeypatch, **opts)
        out[path] = (k, args)
    return out


# ------------------------------------------------------------ kernels
TILE = 8


tiled_matmul = make_matmul(TILE, cuda.float64)
tree_sum = make_tree_sum(256, cuda.float64)


def tree_sum_thread_step(x, out):
    # the step lives in each thread (it depends on threadIdx through t * 0): the region path
    # keeps one per thread and checks at run time that the loop condition agrees (the barrier
    # after the loop keeps it on that path: see test_divergent_tail_takes_coroutine_path)
    sh = cuda.shared.array(256, cuda.float64)
    t = cuda.threadIdx.x
    sh[t] = x[cuda.grid(1)]
    s = t * 0 + cuda.blockDim.x
    cuda.syncthreads()
    while s > 1:
        s = (s + 1) // 2
        if t < s and t + s < cuda.blockDim.x:
            sh[t] += sh[t + s]
        sh[t + s] = sh[t + s] * 0 if t + s < cuda.blockDim.x and t < s else sh[t + s]
        cuda.syncthreads()
    cuda.syncthreads()
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


def local_across_barriers(x, out):
    # per-thread local array and per-thread scalars that live across barriers
    sh = cuda.shared.array(64, cuda.int64)
    t = cuda.threadIdx.x
    mine = cuda.local.array(4, cuda.int64)
    for k in range(4):
        mine[k] = x[t] * (k + 1)
    acc = t
    sh[t] = x[t]
    cuda.syncthreads()
    other = sh[(t + 1) % cuda.blockDim.x]
    cuda.syncthreads()
    sh[t] = other
    cuda.syncthreads()
    for k in range(4):
        acc += mine[k] + sh[(t + k) % cuda.blockDim.x]
    out[t] = acc


def assigned_param(n, x, out):
    sh = cuda.shared.array(64, cuda.int64)
    t = cuda.threadIdx.x
    n = n + t  # the parameter becomes per-thread
    sh[t] = n
    cuda.syncthreads()
    out[t] = sh[cuda.blockDim.x - 1 - t] + n


def one_path_zero(x, out):
    # `v` is assigned on one path only: it reads as 0 elsewhere, in every region
    sh = cuda.shared.array(64, cuda.float64)
    t = cuda.threadIdx.x
    if t % 3 == 0:
        v = x[t]
    sh[t] = 1.0
    cuda.syncthreads()
    out[t] = v + sh[(t + 1) % cuda.blockDim.x]


def steps_stencil(a, steps, out):
    # a uniform `for` around barriers, with an `if` around a barrier inside it
    sh = cuda.shared.array(130, cuda.float64)
    t = cuda.threadIdx.x
    n = cuda.blockDim.x
    sh[t + 1] = a[t]
    if t == 0:
        sh[0] = 0.0
        sh[n + 1] = 0.0
    cuda.syncthreads()
    for s in range(steps):
        v = 0.25 * sh[t] + 0.5 * sh[t + 1] + 0.25 * sh[t + 2]
        cuda.syncthreads()
        sh[t + 1] = v
        if steps > 2:
            cuda.syncthreads()
        else:
            cuda.syncthreads()
    out[t] = sh[t + 1]


def three_d(x, out):
    sh = cuda.shared.array((2, 4, 8), cuda.int32)
    tx, ty, tz = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    sh[tz, ty, tx] = x[tz, ty, tx]
    cuda.syncthreads()
    out[tz, ty, tx] = sh[1 - tz, 3 - ty, 7 - tx] + tx * 100 + ty * 10 + tz


def early_exit_block(x, out, nblocks):
    # whole blocks return before the barrier: fine on both paths
    if cuda.blockIdx.x >= nblocks:
        return
    sh = cuda.shared.array(32, cuda.float64)
    t = cuda.threadIdx.x
    sh[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    out[cuda.grid(1)] = sh[31 - t]


def exit_after_last_barrier(x, out):
    sh = cuda.shared.array(32, cuda.float64)
    t = cuda.threadIdx.x
    sh[t] = x[t]
    cuda.syncthreads()
    if t % 2 == 1:
        return
    out[t] = sh[31 - t]


def _matmul_args(m, k, n):
    return lambda: (rng.random((m, k)), rng.random((k, n)), np.zeros((m, n)))


# ------------------------------------------------------------ same answers on both paths
def test_tiled_matmul_both_paths(monkeypatch):
    m, k, n = 19, 23, 13
    # the sample's kernel runs gridDim.x tile steps: enough column blocks to cover k too
    res = both(tiled_matmul, (-(-max(n, k) // TILE), -(-m // TILE)), (TILE, TILE),
               _matmul_args(m, k, n), monkeypatch)
    for path, (kern, (A, B, C)) in res.items():
        assert kern.artifact.execution == path
        np.testing.assert_allclose(C, A @ B, rtol=1e-12)


@settings(max_examples=12, deadline=None)
@given(st.sampled_from([1, 2, 4, 8, 32, 64, 128, 256]), st.integers(1, 5))
def test_tree_sum_both_paths(block, blocks):
    x = rng.random(block * blocks)
    for fn in (tree_sum, tree_sum_thread_step):
        outs = []
        for path in PATHS:
            os.environ["PYKERN_CPU_BARRIERS"] = path
            try:
                out = np.zeros(blocks)
                k = compile_py(fn, x, out)
                launch(k, (blocks,), (block,), x, out)
            finally:
                del os.environ["PYKERN_CPU_BARRIERS"]
            assert k.artifact.execution == path
            np.testing.assert_allclose(out, x.reshape(blocks, block).sum(1), rtol=1e-12)
            outs.append(out)
        assert outs[0].tolist() == outs[1].tolist()  # same order of additions: bit-identical


@pytest.mark.parametrize("fn,make,grid,block,expect", [
    (local_across_barriers, lambda: (np.arange(48, dtype=np.int64) * 3, np.zeros(48, np.int64)), 1, 48,
     lambda x: np.arange(48) + sum(x * (k + 1) + np.roll(np.roll(x, -1), -k) for k in range(4))),
    (assigned_param, lambda: (np.int64(5), np.zeros(1), np.zeros(40, np.int64)), 1, 40,
     lambda n, x: (5 + np.arange(40))[::-1] + 5 + np.arange(40)),
    (one_path_zero, lambda: (np.arange(30, dtype=np.float64) + 1, np.zeros(30)), 1, 30,
     lambda x: np.where(np.arange(30) % 3 == 0, x, 0.0) + 1.0),
], ids=["local_across_barriers", "assigned_param", "one_path_zero"])
def test_per_thread_state_across_barriers(fn, make, grid, block, expect, monkeypatch):
    res = both(fn, (grid,), (block,), make, monkeypatch)
    for path, (kern, args) in res.items():
        assert kern.artifact.execution == path
        np.testing.assert_array_equal(args[-1], expect(*args[:-1]))


@pytest.mark.parametrize("steps", [0, 1, 2, 5])
def test_uniform_for_and_if_around_barriers(steps, monkeypatch):
    a = rng.random(128)
    ref = np.concatenate([[0.0], a, [0.0]])
    for _ in range(steps):
        ref[1:-1] = 0.25 * ref[:-2] + 0.5 * ref[1:-1] + 0.25 * ref[2:]
    res = both(steps_stencil, (1,), (128,), lambda: (a.copy(), np.int64(steps), np.zeros(128)), monkeypatch)
    for path, (kern, args) in res.items():
        assert kern.artifact.execution == path
        np.testing.assert_allclose(args[-1], ref[1:-1], rtol=1e-14)


def test_three_d_blocks(monkeypatch):
    x = rng.integers(0, 1000, (2, 4, 8)).astype(np.int32)
    tz, ty, tx = np.meshgrid(np.arange(2), np.arange(4), np.arange(8), indexing="ij")
    ref = x[::-1, ::-1, ::-1] + tx * 100 + ty * 10 + tz
    res = both(three_d, (1,), (8, 4, 2), lambda: (x, np.zeros_like(x)), monkeypatch)
    for path, (kern, (_, out)) in res.items():
        assert kern.artifact.execution == path
        np.testing.assert_array_equal(out, ref)


def test_returns_that_are_not_divergent(monkeypatch):
    x = rng.random(32 * 4)
    res = both(early_exit_block, (4,), (32,), lambda: (x, np.zeros(128), np.int64(2)), monkeypatch)
    ref = np.zeros(128)
    ref[:64] = x[:64].reshape(2, 32)[:, ::-1].ravel()
    for path, (kern, (_, out, _)) in res.items():
        assert kern.artifact.execution == path
        np.testing.assert_array_equal(out, ref)
    res = both(exit_after_last_barrier, (1,), (32,), lambda: (x[:32], np.zeros(32)), monkeypatch)
    for path, (kern, (_, out)) in res.items():
        assert out.tolist() == [x[31 - t] if t % 2 == 0 else 0.0 for t in range(32)]


# ------------------------------------------------------------ which kernels take which path
def shuffle_then_barrier(x):
    t = cuda.threadIdx.x
    v = cuda.shfl_down_sync(-1, x[t], 1)
    cuda.syncthreads()
    x[t] = v


def counted_barrier(x):
    t = cuda.threadIdx.x
    n = cuda.syncthreads_count(x[t] > 0)
    x[t] = n


@cuda.jit(device=True)
def dev_barrier():
    cuda.syncthreads()


def barrier_in_device_function(x):
    x[cuda.threadIdx.x] += 1
    dev_barrier()


def break_across_barrier(x):
    i = 0
    while i < 10:
        cuda.syncthreads()
        if x[0] > 100:
            break
        i += 1
    x[cuda.threadIdx.x] = i


def no_barrier(x):
    x[cuda.threadIdx.x] += 1


@pytest.mark.parametrize("fn,expect", [
    (tree_sum, "regions"), (tiled_matmul, "regions"), (shuffle_then_barrier, "coroutine"),
    (counted_barrier, "coroutine"), (barrier_in_device_function, "coroutine"),
    (break_across_barrier, "coroutine"), (no_barrier, "fast"),
])
def test_path_choice(fn, expect, monkeypatch):
    monkeypatch.delenv("PYKERN_CPU_BARRIERS", raising=False)
    args = {tree_sum: (np.zeros(64), np.zeros(1)), tiled_matmul: _matmul_args(8, 8, 8)()}.get(fn, (np.zeros(64),))
    assert compile_py(fn, *args).artifact.execution == expect
    monkeypatch.setenv("PYKERN_CPU_BARRIERS", "coroutine")
    assert compile_py(fn, *args).artifact.execution == ("fast" if expect == "fast" else "coroutine")


def test_coroutine_fallbacks_still_right(monkeypatch):
    x = np.arange(64, dtype=np.float64)
    k = run("regions", break_across_barrier, (1,), (64,), x, monkeypatch=monkeypatch)
    assert k.artifact.execution == "coroutine" and x.tolist() == [10.0] * 64


# ------------------------------------------------------------ divergence is an error, never a hang
# Threads that skip a barrier and then wait at a later one diverge; threads that skip it and run
# to the end do not: as on GPUs, a thread that has exited counts as arrived.
def if_divergent(x):
    t = cuda.threadIdx.x
    if t < 5:
        cuda.syncthreads()
    cuda.syncthreads()
    x[t] = t


def while_divergent(x):
    t = cuda.threadIdx.x
    i = 0
    while i < t % 2 + 1:
        cuda.syncthreads()
        i += 1
    cuda.syncthreads()
    x[t] = i


def for_divergent(x):
    t = cuda.threadIdx.x
    for i in range(t // 16):
        cuda.syncthreads()
    cuda.syncthreads()
    x[t] = t


@pytest.mark.parametrize("fn,barrier_offset,words", [
    (if_divergent, 3, ("skipped it", "condition of the `if`")),
    (while_divergent, 4, ("left the `while`",)),
    (for_divergent, 3, ("another range in the `for`",)),
])
def test_divergent_barriers_named(fn, barrier_offset, words, monkeypatch):
    line = fn.__code__.co_firstlineno + barrier_offset
    for path in PATHS:
        x = np.zeros(32)
        with pytest.raises(KernelRuntimeError) as ei:
            run(path, fn, (1,), (32,), x, monkeypatch=monkeypatch)
        msg = str(ei.value)
        assert f"test_cpu_regions.py:{line}" in msg and "divergent barrier" in msg
        if path == "regions":
            assert all(w in msg for w in words), msg


def return_then_barrier(x, out):
    # the bounds check every grid-stride kernel starts with, in a block the data does not fill
    sh = cuda.shared.array(32, cuda.float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i >= x.size:
        return
    sh[t] = x[i]
    cuda.syncthreads()
    out[i] = sh[t] + sh[0]


def guarded_tile(x, out):
    # `if i < n:` around everything, barriers inside
    sh = cuda.shared.array(32, cuda.float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < x.size:
        sh[t] = x[i]
        cuda.syncthreads()
        out[i] = sh[t] + sh[0]


def skip_then_exit_while(x, out):
    t = cuda.threadIdx.x
    i = 0
    while i < t % 3:
        cuda.syncthreads()
        i += 1
    out[t] = x[t] + i


def skip_then_exit_for(x, out):
    t = cuda.threadIdx.x
    acc = 0.0
    for j in range(t // 8):
        acc += x[j]
        cuda.syncthreads()
    out[t] = acc


@pytest.mark.parametrize("fn,n,paths", [
    (return_then_barrier, 50, ("regions", "coroutine")),
    (guarded_tile, 50, ("coroutine", "coroutine")),
    (skip_then_exit_while, 64, ("coroutine", "coroutine")),
    (skip_then_exit_for, 64, ("coroutine", "coroutine")),
])
def test_threads_that_exit_count_as_arrived(fn, n, paths, monkeypatch):
    """numba's own examples (the heat equation's early return before grid.sync()) rely on it."""
    x = rng.random(n)
    expect = np.zeros(64)
    for b in range(2):
        for t in range(32):
            i = b * 32 + t
            if fn is skip_then_exit_while:
                expect[i] = x[i] + i % 32 % 3 if b == 0 else 0.0
            elif fn is skip_then_exit_for:
                expect[i] = x[:i // 8].sum() if b == 0 else 0.0
            elif i < n:
                expect[i] = x[i] + x[b * 32]
    grid = (1,) if fn in (skip_then_exit_while, skip_then_exit_for) else (2,)
    res = both(fn, grid, (32,), lambda: (x, np.zeros(64)), monkeypatch)
    for (path, (kern, (_, out))), taken in zip(res.items(), paths):
        assert kern.artifact.execution == taken, path
        np.testing.assert_array_equal(out, expect)


def debug_out_of_bounds(x):
    sh = cuda.shared.array(32, cuda.float64)
    t = cuda.threadIdx.x
    sh[t] = 1.0
    cuda.syncthreads()
    x[t + 30] = sh[t]


def test_debug_bounds_error_inside_a_region(monkeypatch):
    for path in PATHS:
        x = np.zeros(32)
        with pytest.raises(KernelRuntimeError) as ei:
            run(path, debug_out_of_bounds, (1,), (32,), x, monkeypatch=monkeypatch, debug=True)
        assert "out of bounds" in str(ei.value)
        assert x[30] == 1.0 and x[31] == 1.0  # the threads before the failing one stored


def reverse_in_block(x, out):
    # a shared tile of 16 makes (16, 1, 1) the guessed block shape: the runner has a copy of
    # the kernel with blockDim constant for it; other shapes run the general copy
    sh = cuda.shared.array(16, cuda.int64)
    n = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    t = cuda.threadIdx.x + (cuda.threadIdx.y + cuda.threadIdx.z * cuda.blockDim.y) * cuda.blockDim.x
    base = cuda.blockIdx.x * n
    sh[t] = x[base + t]
    cuda.syncthreads()
    out[base + t] = sh[n - 1 - t] * 100 + n


@pytest.mark.parametrize("block", [(16,), (8,), (8, 2), (4, 2, 2), (1,)])
def test_guessed_block_shape_and_the_others_agree(block, monkeypatch):
    n = int(np.prod(block))
    x = np.arange(3 * n, dtype=np.int64) + 7
    ref = x.reshape(3, n)[:, ::-1].reshape(-1) * 100 + n
    res = both(reverse_in_block, (3,), block, lambda: (x, np.zeros_like(x)), monkeypatch)
    for path, (kern, (_, out)) in res.items():
        assert kern.artifact.execution == path
        np.testing.assert_array_equal(out, ref)


def if_divergent_tile(x):
    sh = cuda.shared.array(32, cuda.float64)  # launched with the guessed shape (32, 1, 1)
    t = cuda.threadIdx.x
    sh[t] = t
    if t < 5:
        cuda.syncthreads()
    cuda.syncthreads()
    x[t] = sh[t]


def test_divergent_barrier_named_in_the_guessed_shape_copy(monkeypatch):
    line = if_divergent_tile.__code__.co_firstlineno + 5
    for block in ((32,), (16, 2)):
        x = np.zeros(32)
        with pytest.raises(KernelRuntimeError) as ei:
            run("regions", if_divergent_tile, (1,), block, x, monkeypatch=monkeypatch)
        msg = str(ei.value)
        assert f"test_cpu_regions.py:{line}" in msg and "divergent barrier" in msg and "skipped it" in msg


def static_and_dynamic_shared(x, out):
    # both kinds of shared memory in one kernel: the dynamic array is addressed from the same
    # shared-memory argument as the static one (which the kernel function marks noalias)
    st = cuda.shared.array(8, cuda.float64)
    dyn = cuda.shared.array(0, cuda.float64)
    t = cuda.threadIdx.x
    st[t] = x[t]
    dyn[t] = x[t] * 2.0
    cuda.syncthreads()
    out[t] = st[7 - t] + dyn[(t + 1) % 8]


def test_static_and_dynamic_shared_memory_in_regions(monkeypatch):
    x = rng.random(8)
    for path in PATHS:
        out = np.zeros(8)
        monkeypatch.setenv("PYKERN_CPU_BARRIERS", path)
        k = compile_py(static_and_dynamic_shared, x, out)
        launch(k, (1,), (8,), x, out, shared=8 * 8)
        assert k.artifact.execution == path
        np.testing.assert_array_equal(out, x[::-1] + 2.0 * np.roll(x, -1))


# ------------------------------------------------------------ the rest of the suite on the other path
@pytest.mark.slow
def test_barrier_suites_pass_on_the_coroutine_path():
    """The test modules with barrier kernels, again with every barrier kernel as coroutines
    (the default run covers the region path)."""
    env = dict(os.environ, PYKERN_CPU_BARRIERS="coroutine", PYKERN_CACHE="off")
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/codegen/cpu/test_cpu_kernels.py",
         "tests/codegen/cpu/test_codegen_semantics.py", "tests/lang/test_array_views.py", "tests/dispatch/test_limits_targets.py",
         "tests/lang/test_barriers.py", "tests/lang/test_shared_memory.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]


def drop_out_per_step(x, out, limit):
    # threads leave one by one from the top; the rest keep syncing and read only live threads
    sh = cuda.shared.array(32, cuda.float64)
    t = cuda.threadIdx.x
    acc = 0.0
    for step in range(8):
        if t >= limit - step:
            out[t] = acc
            return
        sh[t] = x[t] * (step + 1)
        cuda.syncthreads()
        acc += sh[(t + 1) % (limit - step)]
        cuda.syncthreads()
    out[t] = acc


@pytest.mark.parametrize("limit", [8, 20, 32])
def test_threads_returning_inside_a_barrier_loop(limit, monkeypatch):
    x = rng.random(32)
    expect = np.zeros(32)
    for t in range(32):
        acc = 0.0
        for step in range(8):
            if t >= limit - step:
                break
            acc += x[(t + 1) % (limit - step)] * (step + 1)
        expect[t] = acc
    res = both(drop_out_per_step, (1,), (32,), lambda: (x, np.zeros(32), limit), monkeypatch)
    for path, (kern, (_, out, _)) in res.items():
        assert kern.artifact.execution == path
        np.testing.assert_array_equal(out, expect)
