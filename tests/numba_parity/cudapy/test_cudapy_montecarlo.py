"""numba-cuda's ``tests/cudapy/test_montecarlo.py`` (see conftest.py): a Monte Carlo step kernel."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_montecarlo_step():
    # test_montecarlo.py TestCudaMonteCarlo.test_montecarlo (numba only compiles it; here it
    # also runs against numpy)
    @cuda.jit("void(double[:], double[:], double, double, double, double[:])")
    def step(last, paths, dt, c0, c1, normdist):
        i = cuda.grid(1)
        if i >= paths.shape[0]:
            return
        noise = normdist[i]
        paths[i] = last[i] * math.exp(c0 * dt + c1 * noise)

    rng = np.random.RandomState(0)
    last = rng.random_sample(100) + 1
    normdist = rng.standard_normal(100)
    paths = np.zeros(100)
    step[4, 32](last, paths, 0.01, 0.5, 0.2, normdist)
    np.testing.assert_allclose(paths, last * np.exp(0.5 * 0.01 + 0.2 * normdist), rtol=1e-15)
