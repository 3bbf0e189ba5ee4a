"""numba-cuda's ``tests/cudapy/test_vectorize_scalar_arg.py`` (see conftest.py): vectorize with a
scalar argument."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_vectorize_scalar_arg():
    # test_vectorize_scalar_arg.py test_vectorize_scalar_arg / test_vectorize_all_scalars
    @cuda.vectorize([cuda.float64(cuda.float64, cuda.float64)], target="cuda")
    def vector_add(a, b):
        return a + b

    dA = cuda.to_device(np.arange(10, dtype=np.float64))
    v = vector_add(1.0, dA)
    np.testing.assert_array_almost_equal(v.copy_to_host(), np.arange(1, 11, dtype=np.float64))
    np.testing.assert_almost_equal(2.0, vector_add(1.0, 1.0))
