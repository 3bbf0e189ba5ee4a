"""numba-cuda's ``tests/cudapy/test_sync.py`` (see conftest.py): syncthreads/syncwarp, fences,
syncthreads_count/and/or."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def _useless_syncthreads(ary):
    i = cuda.grid(1)
    cuda.syncthreads()
    ary[i] = i


def _useless_syncwarp(ary):
    i = cuda.grid(1)
    cuda.syncwarp()
    ary[i] = i


def _useless_syncwarp_with_mask(ary):
    i = cuda.grid(1)
    cuda.syncwarp(0xFFFF)
    ary[i] = i


def _coop_syncwarp(res):
    sm = cuda.shared.array(32, cuda.int32)
    i = cuda.grid(1)
    sm[i] = i
    cuda.syncwarp()
    if i < 16:
        sm[i] = sm[i] + sm[i + 16]
        cuda.syncwarp(0xFFFF)
    if i < 8:
        sm[i] = sm[i] + sm[i + 8]
        cuda.syncwarp(0xFF)
    if i < 4:
        sm[i] = sm[i] + sm[i + 4]
        cuda.syncwarp(0xF)
    if i < 2:
        sm[i] = sm[i] + sm[i + 2]
        cuda.syncwarp(0x3)
    if i == 0:
        res[0] = sm[0] + sm[1]


@pytest.mark.parametrize("kernel", [_useless_syncthreads, _useless_syncwarp, _useless_syncwarp_with_mask])
def test_sync_useless(kernel):
    # test_sync.py test_useless_syncthreads / _syncwarp / _syncwarp_with_mask
    ary = np.empty(10, dtype=np.int32)
    cuda.jit("void(int32[::1])")(kernel)[1, 10](ary)
    np.testing.assert_equal(ary, np.arange(10, dtype=np.int32))


@pytest.mark.parametrize("wavesize", ["32", "64"])
def test_sync_coop_syncwarp(monkeypatch, wavesize):
    # test_sync.py TestCudaSync.test_coop_syncwarp (the sum 0..31 by one warp)
    monkeypatch.setenv("PYKERN_CPU_WAVESIZE", wavesize)
    res = np.zeros(1, dtype=np.int32)
    cuda.jit("void(int32[::1])")(_coop_syncwarp)[1, 32](res)
    assert res[0] == 496


def test_sync_shared_memory_kernels():
    # test_sync.py test_simple_smem / test_coop_smem2d / test_dyn_shared_memory
    def simple_smem(ary):
        N = 100
        sm = cuda.shared.array(N, cuda.int32)
        i = cuda.grid(1)
        if i == 0:
            for j in range(N):
                sm[j] = j
        cuda.syncthreads()
        ary[i] = sm[i]

    def coop_smem2d(ary):
        i, j = cuda.grid(2)
        sm = cuda.shared.array((10, 20), cuda.float32)
        sm[i, j] = (i + 1) / (j + 1)
        cuda.syncthreads()
        ary[i, j] = sm[i, j]

    def dyn_shared_memory(ary):
        i = cuda.grid(1)
        sm = cuda.shared.array(0, cuda.float32)
        sm[i] = i * 2
        cuda.syncthreads()
        ary[i] = sm[i]

    ary = np.empty(100, dtype=np.int32)
    cuda.jit("void(int32[::1])")(simple_smem)[1, 100](ary)
    assert np.all(ary == np.arange(100))

    ary = np.empty((10, 20), dtype=np.float32)
    cuda.jit("void(float32[:,::1])")(coop_smem2d)[1, (10, 20)](ary)
    i, j = np.indices((10, 20))
    assert np.allclose(ary, (i + 1) / (j + 1))

    ary = np.empty(50, dtype=np.float32)
    cuda.jit("void(float32[::1])")(dyn_shared_memory)[1, 50, 0, ary.size * 4](ary)
    assert np.all(ary == 2 * np.arange(50))


@pytest.mark.parametrize("fence", ["threadfence", "threadfence_block", "threadfence_system"])
def test_sync_threadfence(fence):
    # test_sync.py test_threadfence_codegen / _block_ / _system_ (the PTX membar check is
    # NVIDIA-only)
    f = getattr(cuda, fence)

    def use(ary):
        ary[0] += 123
        f()
        ary[0] += 321

    ary = np.zeros(10, dtype=np.int32)
    cuda.jit((cuda.int32[:],))(use)[1, 1](ary)
    assert ary[0] == 123 + 321


@pytest.mark.parametrize("in_dtype", [np.int32, np.int16, np.int64])
def test_sync_syncthreads_count_and_or(in_dtype):
    # test_sync.py test_syncthreads_count / _and / _or and their _upcast / _downcast variants
    @cuda.jit
    def use_count(ary_in, ary_out):
        i = cuda.grid(1)
        ary_out[i] = cuda.syncthreads_count(ary_in[i])

    @cuda.jit
    def use_and(ary_in, ary_out):
        i = cuda.grid(1)
        ary_out[i] = cuda.syncthreads_and(ary_in[i])

    @cuda.jit
    def use_or(ary_in, ary_out):
        i = cuda.grid(1)
        ary_out[i] = cuda.syncthreads_or(ary_in[i])

    ary_in = np.ones(72, dtype=in_dtype)
    ary_out = np.zeros(72, dtype=np.int32)
    ary_in[31] = 0
    ary_in[42] = 0
    use_count[1, 72](ary_in, ary_out)
    assert np.all(ary_out == 70)

    ary_in = np.ones(100, dtype=in_dtype)
    ary_out = np.zeros(100, dtype=np.int32)
    use_and[1, 100](ary_in, ary_out)
    assert np.all(ary_out == 1)
    ary_in[31] = 0
    use_and[1, 100](ary_in, ary_out)
    assert np.all(ary_out == 0)

    ary_in = np.zeros(100, dtype=in_dtype)
    use_or[1, 100](ary_in, ary_out)
    assert np.all(ary_out == 0)
    ary_in[31] = 1
    use_or[1, 100](ary_in, ary_out)
    assert np.all(ary_out == 1)
