"""numba-cuda's ``tests/cudapy/test_idiv.py`` (see conftest.py): in-place division of float arrays."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_idiv_inplace_div(dtype):
    # test_idiv.py TestCudaIDiv.test_inplace_div / test_inplace_div_double (numpy arrays in
    # place of cupy's)
    from pykern import int32, void

    ty = getattr(cuda, dtype)

    @cuda.jit(void(ty[:, :], int32, int32))
    def div(grid, l_x, l_y):
        for x in range(l_x):
            for y in range(l_y):
                grid[x, y] /= 2.0

    grid = np.ones((2, 2), dtype=dtype)
    div[1, 1](grid, 2, 2)
    assert np.all(grid == 0.5)
