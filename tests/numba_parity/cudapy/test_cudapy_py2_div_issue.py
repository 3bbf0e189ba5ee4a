"""numba-cuda's ``tests/cudapy/test_py2_div_issue.py`` (see conftest.py): true division of integers in
a kernel."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_py2_div_issue():
    # test_py2_div_issue.py TestCudaPy2Div.test_py2_div_issue
    @cuda.jit(cuda.void(cuda.float32[:], cuda.float32[:], cuda.float32[:], cuda.int32))
    def preCalc(y, yA, yB, numDataPoints):
        i = cuda.grid(1)
        k = i % numDataPoints  # noqa: F841
        ans = cuda.float32(1.001 * cuda.float32(i))
        y[i] = ans
        yA[i] = ans * 1.0
        yB[i] = ans / 1.0

    y = np.zeros(15, dtype=np.float32)
    yA = np.zeros(15, dtype=np.float32)
    yB = np.zeros(15, dtype=np.float32)
    preCalc[1, 15](y, yA, yB, 15)
    assert np.all(y == yA)
    assert np.all(y == yB)
    # numba computes 1.001 * float32(i) in float64 (a float literal is float64 there); pykern's
    # float literals stay weak (README, "Differences"), so the product is float32's
    i = np.arange(15, dtype=np.float32)
    np.testing.assert_array_equal(y, np.float32(1.001) * i)
