"""numba-cuda's ``tests/cudapy/test_globals.py`` (see conftest.py): global constants (ints, tuples) as
shared-array shapes and values."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


N = 100


S0 = 10


S1 = 20


def _simple_smem(ary):
    sm = cuda.shared.array(N, cuda.int32)
    i = cuda.grid(1)
    if i == 0:
        for j in range(N):
            sm[j] = j
    cuda.syncthreads()
    ary[i] = sm[i]


def _coop_smem2d(ary):
    i, j = cuda.grid(2)
    sm = cuda.shared.array((S0, S1), cuda.float32)
    sm[i, j] = (i + 1) / (j + 1)
    cuda.syncthreads()
    ary[i, j] = sm[i, j]


def test_globals_int_const():
    # test_globals.py TestCudaTestGlobal.test_global_int_const
    compiled = cuda.jit("void(int32[:])")(_simple_smem)
    ary = np.empty(100, dtype=np.int32)
    compiled[1, 100](ary)
    assert np.all(ary == np.arange(100, dtype=np.int32))


def test_globals_tuple_const():
    # test_globals.py TestCudaTestGlobal.test_global_tuple_const (skipped in numba's suite;
    # its answer is plain arithmetic)
    compiled = cuda.jit("void(float32[:,:])")(_coop_smem2d)
    shape = 10, 20
    ary = np.empty(shape, dtype=np.float32)
    compiled[1, shape](ary)
    exp = np.empty_like(ary)
    for i in range(ary.shape[0]):
        for j in range(ary.shape[1]):
            exp[i, j] = float(i + 1) / (j + 1)
    assert np.allclose(ary, exp)
