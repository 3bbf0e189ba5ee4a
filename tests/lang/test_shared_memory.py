"""Shared memory in kernels: ``cuda.shared.array`` of static shapes, dynamic shared memory (``shape=0``
and the launch's shared size, several arrays aliasing it), tiles of matmul/transposes/reductions,
arrays picked at run time, and the local arrays they are used with -- on the cpu target against
numpy.

Barriers themselves: test_barriers.py; the AMD GPU side:
tests/codegen/amdgpu/test_amdgpu_frontend.py (dynamic shared and LDS)."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import pykern as cuda
from pykern import float32, float64

from cpu_helpers import BARRIER_PATH, run_py
from frontend_helpers import jit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "samples"))
from matmul import make_matmul  # noqa: E402  (samples/matmul.py)
from tree_sum import make_tree_sum  # noqa: E402  (samples/tree_sum.py)

pytestmark = pytest.mark.usefixtures("cpu_uncached")


rng = np.random.default_rng(1234)


block_sum = make_tree_sum(128, np.float32)


def test_shared_memory_block_reduction():
    x = rng.random(128 * 40, dtype=np.float32)
    out = np.zeros(40, np.float32)
    k = run_py(block_sum, (40,), (128,), x, out)
    assert k.artifact.execution == BARRIER_PATH
    np.testing.assert_allclose(out, x.reshape(40, 128).sum(1), rtol=1e-5)


TILE = 8


matmul = make_matmul(TILE, np.float64)


def test_tiled_matmul_shared_memory():
    a = rng.random((19, 23))
    b = rng.random((23, 17))
    c = np.zeros((19, 17))
    # samples/matmul.py's kernel runs gridDim.x tile steps: enough column blocks to cover k too
    run_py(matmul, (-(-23 // TILE), -(-19 // TILE)), (TILE, TILE), a, b, c)
    np.testing.assert_allclose(c, a @ b)


def local_and_dyn(x, out):
    loc = cuda.local.array(4, np.float64)
    dyn = cuda.shared.array(0, np.float64)
    t = cuda.threadIdx.x
    for k in range(4):
        loc[k] = x[t] * k
    dyn[t] = loc[3]
    cuda.syncthreads()
    out[t] = dyn[(t + 1) % cuda.blockDim.x] + dyn.shape[0]


def test_local_array_and_dynamic_shared():
    x = np.arange(32, dtype=np.float64)
    out = np.zeros(32)
    run_py(local_and_dyn, (1,), (32,), x, out, shared=32 * 8 + 16)
    assert out.tolist() == (np.roll(x, -1) * 3 + 34).tolist()


def test_shared_memory_reduction_and_atomics():
    @jit
    def k(x, out):
        sm = cuda.shared.array(64, np.float32)
        t = cuda.threadIdx.x
        s = 0.0
        for i in range(t, x.shape[0], cuda.blockDim.x):
            s += x[i]
        sm[t] = s
        cuda.syncthreads()
        step = cuda.blockDim.x // 2
        while step > 0:
            if t < step:
                sm[t] += sm[t + step]
            cuda.syncthreads()
            step //= 2
        if t == 0:
            cuda.atomic.add(out, 0, sm[0])

    x = np.arange(1000, dtype=np.float32)
    out = np.zeros(1, np.float32)
    k[3, 64](x, out)
    assert out[0] == pytest.approx(3 * x.sum())


def test_dynamic_shared_and_local_arrays():
    @jit
    def k(out):
        dyn = cuda.shared.array(0, np.int32)
        loc = cuda.local.array((2, 3), np.int64)
        t = cuda.threadIdx.x
        dyn[t] = t * 10
        cuda.syncthreads()
        for a in range(2):
            for b in range(3):
                loc[a, b] = a * 3 + b
        loc[-1, -1] += 100
        out[t] = dyn[(t + 1) % cuda.blockDim.x] + loc[1, 2]

    out = np.zeros(32, np.int64)
    k[1, 32, 0, 32 * 4](out)
    assert list(out) == [((t + 1) % 32) * 10 + 105 for t in range(32)]


# shared memory matmul (numba docs fast_matmul)
TPB = 16


@cuda.jit
def fast_matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = float32(0.)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


def test_matmul_shared():
    rng = np.random.default_rng(0)
    A = rng.random((40, 40), dtype=np.float32)
    B = rng.random((40, 40), dtype=np.float32)
    C = np.zeros((40, 40), np.float32)
    fast_matmul[(3, 3), (TPB, TPB)](A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5)


# shared-memory block reduction with dynamic shared memory
@cuda.jit
def dynamic_block_sum(a, out):
    s = cuda.shared.array(0, dtype=float64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    s[tid] = a[i] if i < a.size else 0.0
    cuda.syncthreads()
    step = cuda.blockDim.x // 2
    while step > 0:
        if tid < step:
            s[tid] += s[tid + step]
        cuda.syncthreads()
        step //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = s[0]


def test_dynamic_shared_reduction():
    a = np.arange(1000, dtype=np.float64)
    out = np.zeros(8)
    dynamic_block_sum[8, 128, 0, 128 * 8](a, out)
    np.testing.assert_array_equal(out, np.pad(a, (0, 24)).reshape(8, 128).sum(1))


@cuda.jit
def transpose_tile(a, out):
    tile = cuda.shared.array((16, 17), float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x; ty = cuda.threadIdx.y
    if x < a.shape[1] and y < a.shape[0]:
        tile[ty, tx] = a[y, x]
    cuda.syncthreads()
    x2 = cuda.blockIdx.y * 16 + tx
    y2 = cuda.blockIdx.x * 16 + ty
    if x2 < out.shape[1] and y2 < out.shape[0]:
        out[y2, x2] = tile[tx, ty]


def test_shared_tile_transpose():
    a = np.random.default_rng(3).random((37, 45)).astype(np.float32)
    out = np.zeros((45, 37), np.float32)
    transpose_tile[(3, 3), (16, 16)](a, out)
    np.testing.assert_array_equal(out, a.T)


@cuda.jit
def pingpong_shared(a, out, steps):
    s0 = cuda.shared.array(64, float64)
    s1 = cuda.shared.array(64, float64)
    bufs = (s0, s1)
    t = cuda.threadIdx.x
    s0[t] = a[t]
    cuda.syncthreads()
    for k in range(steps):
        src = bufs[k % 2]
        dst = bufs[(k + 1) % 2]
        dst[t] = 0.5 * (src[t] + src[(t + 1) % 64])
        cuda.syncthreads()
    out[t] = bufs[steps % 2][t]


def test_double_buffered_shared_arrays_picked_at_run_time():
    """Ping-pong between two shared arrays chosen by bufs[k % 2] (a tuple of arrays indexed at run time)."""
    a = np.random.default_rng(0).random(64)
    out = np.zeros(64)
    pingpong_shared[1, 64](a, out, 5)
    x = a.copy()
    for _ in range(5):
        x = 0.5 * (x + np.roll(x, -1))
    np.testing.assert_array_equal(out, x)


def test_dynamic_shared_memory_doc_examples_alias():
    # numba-cuda docs, "Dynamic shared memory": every shared.array(0, ...) is the same memory; a slice
    # gives another offset
    @cuda.jit
    def f(out):
        f32_arr = cuda.shared.array(0, dtype=np.float32)
        i32_arr = cuda.shared.array(0, dtype=np.int32)
        f32_arr[0] = 3.14
        out[0] = f32_arr[0]
        out[1] = i32_arr[0]

    @cuda.jit
    def f_with_view(out):
        f32_arr = cuda.shared.array(0, dtype=np.float32)
        i32_arr = cuda.shared.array(0, dtype=np.int32)[1:]
        f32_arr[0] = 3.14
        i32_arr[0] = 1
        out[0] = f32_arr[0]
        out[1] = i32_arr[0]
        out[2] = f32_arr[1]

    out = np.zeros(3)
    f[1, 1, 0, 4](out)
    assert out[0] == np.float32(3.14) and out[1] == np.float32(3.14).view(np.int32)
    f_with_view[1, 1, 0, 8](out)
    assert out.tolist() == [np.float32(3.14), 1, np.int32(1).view(np.float32)]


@pytest.mark.parametrize("space", ["local", "shared"])
def test_an_unknown_dtype_name_is_refused_with_numbas_wording(space):
    src = f"def k(out):\n    a = cuda.{space}.array(10, dtype='int33')\n    out[0] = a[0]\n"
    ns = {"cuda": cuda}
    exec(compile(src, f"<nbtests3-{space}>", "exec"), ns)
    with pytest.raises(cuda.CompileError, match="Invalid NumPy dtype specified: 'int33'"):
        cuda.jit(ns["k"])[1, 1](np.zeros(1, np.int32))
