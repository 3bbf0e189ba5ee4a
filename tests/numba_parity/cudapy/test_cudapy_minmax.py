"""numba-cuda's ``tests/cudapy/test_minmax.py`` (see conftest.py): builtin max/min over mixed float
types, compared with np.maximum/np.minimum."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda
from pykern import float64

pytestmark = pytest.mark.usefixtures("cpu_target")


def _builtin_max(A, B, C):
    i = cuda.grid(1)
    if i >= len(C):
        return
    C[i] = float64(max(A[i], B[i]))


def _builtin_min(A, B, C):
    i = cuda.grid(1)
    if i >= len(C):
        return
    C[i] = float64(min(A[i], B[i]))


@pytest.mark.parametrize("kernel,numpy_equivalent", [(_builtin_max, np.maximum), (_builtin_min, np.minimum)])
@pytest.mark.parametrize("dl,dr", [(np.float64, np.float64), (np.float32, np.float64),
                                   (np.float64, np.float32), (np.float32, np.float32)])
def test_minmax(kernel, numpy_equivalent, dl, dr):
    # test_minmax.py test_minmax (the PTX max.f64/min.f32 check is NVIDIA-only)
    kernel = cuda.jit(kernel)
    n = 5
    c = np.zeros(n, dtype=np.float64)
    a = np.arange(n, dtype=dl) + 0.5
    b = np.full(n, fill_value=2, dtype=dr)
    kernel[1, c.shape](a, b, c)
    np.testing.assert_allclose(c, numpy_equivalent(a, b))
