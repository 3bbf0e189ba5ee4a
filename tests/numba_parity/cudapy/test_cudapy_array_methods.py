"""numba-cuda's ``tests/cudapy/test_array_methods.py`` (see conftest.py): view/reinterpret and copies
of global arrays in kernels."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_array_methods_reinterpret_array_type():
    # test_array_methods.py TestCudaArrayMethods.test_reinterpret_array_type
    @cuda.jit
    def kernel(byte_arr, start, stop, output):
        val = byte_arr[start:stop].view(np.int32)[0]
        output[0] = val

    byte_arr = np.arange(256, dtype=np.uint8)
    for start in range(0, 256, 4):
        stop = start + 4
        expect = byte_arr[start:stop].view(np.int32)[0]
        output = np.zeros(1, dtype=np.int32)
        kernel[1, 1](byte_arr, start, stop, output)
        assert output[0] == expect


def test_array_methods_global_array_copy():
    # test_array_methods.py TestCudaArrayMethods.test_array_copy
    val = np.array([1, 2, 3])[::-1]

    @cuda.jit
    def kernel(out):
        q = val.copy()
        for i in range(len(out)):
            out[i] = q[i]

    out = np.zeros(len(val), dtype="float64")
    kernel[1, 1](out)
    assert out.tolist() == val.tolist()
