"""numba-cuda's ``tests/cudapy/test_random.py`` (see conftest.py): xoroshiro128p states and
uniform/normal draws."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pykern as cuda
from pykern.lang.random import (
    xoroshiro128p_normal_float32,
    xoroshiro128p_normal_float64,
    xoroshiro128p_uniform_float32,
    xoroshiro128p_uniform_float64,
)

pytestmark = pytest.mark.usefixtures("cpu_target")


UNIFORM = 1


NORMAL = 2


@cuda.jit
def _rng_kernel_float32(states, out, count, distribution):
    thread_id = cuda.grid(1)
    for i in range(count):
        idx = thread_id * count + i
        if distribution == UNIFORM:
            out[idx] = xoroshiro128p_uniform_float32(states, thread_id)
        elif distribution == NORMAL:
            out[idx] = xoroshiro128p_normal_float32(states, thread_id)


@cuda.jit
def _rng_kernel_float64(states, out, count, distribution):
    thread_id = cuda.grid(1)
    for i in range(count):
        idx = thread_id * count + i
        if distribution == UNIFORM:
            out[idx] = xoroshiro128p_uniform_float64(states, thread_id)
        elif distribution == NORMAL:
            out[idx] = xoroshiro128p_normal_float64(states, thread_id)


def test_random_create_states():
    # test_random.py test_create / test_create_subsequence_start / test_create_stream
    s1 = cuda.random.create_xoroshiro128p_states(10, seed=1).copy_to_host()
    assert len(np.unique(s1)) == 10
    s2 = cuda.random.create_xoroshiro128p_states(10, seed=1, subsequence_start=3).copy_to_host()
    np.testing.assert_array_equal(s1[3:], s2[:-3])
    s = cuda.random.create_xoroshiro128p_states(10, seed=1, stream=cuda.stream()).copy_to_host()
    assert len(np.unique(s)) == 10


@pytest.mark.parametrize("kernel_func,dtype", [(_rng_kernel_float32, np.float32),
                                               (_rng_kernel_float64, np.float64)])
def test_random_uniform_and_normal(kernel_func, dtype):
    # test_random.py test_uniform_float32/_float64 / test_normal_float32/_float64 (numba's
    # check_uniform passes a float32 output array to both kernels)
    states = cuda.random.create_xoroshiro128p_states(32 * 2, seed=1)
    out = np.zeros(2 * 32 * 32, dtype=np.float32)
    kernel_func[2, 32](states, out, 32, UNIFORM)
    assert abs(out.min() - 0.0) <= 1e-3
    assert abs(out.max() - 1.0) <= 1e-3
    assert abs(out.mean() - 0.5) <= 1.5e-2
    assert abs(out.std() - 1.0 / (2 * math.sqrt(3))) <= 6e-3

    states = cuda.random.create_xoroshiro128p_states(32 * 2, seed=1)
    out = np.zeros(2 * 32 * 32, dtype=dtype)
    kernel_func[2, 32](states, out, 32, NORMAL)
    assert abs(out.mean() - 0.0) <= 4e-3
    assert abs(out.std() - 1.0) <= 2e-3
