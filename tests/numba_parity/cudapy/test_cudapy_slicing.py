"""numba-cuda's ``tests/cudapy/test_slicing.py`` (see conftest.py): slices as arguments, assignment to
empty slices."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def _slice_foo(inp, out):
    for i in range(out.shape[0]):
        out[i] = inp[i]


def _slice_copy(inp, out):
    i = cuda.grid(1)
    cufoo(inp[i, :], out[i, :])


def test_slicing_slice_as_arg():
    # test_slicing.py TestCudaSlicing.test_slice_as_arg (numba's cufoo global is set by the
    # test before the kernel is compiled; the copy is also checked here)
    global cufoo
    cufoo = cuda.jit("void(int32[:], int32[:])", device=True)(_slice_foo)
    cucopy = cuda.jit("void(int32[:,:], int32[:,:])")(_slice_copy)
    inp = np.arange(100, dtype=np.int32).reshape(10, 10)
    out = np.zeros_like(inp)
    cucopy[1, 10](inp, out)
    np.testing.assert_array_equal(inp, out)


def test_slicing_assign_empty_slice():
    # test_slicing.py TestCudaSlicing.test_assign_empty_slice
    a = range(0)
    arr = cuda.device_array(len(a))
    arr[:] = cuda.to_device(a)
    assert arr.copy_to_host().shape == (0,)
