"""``reduce`` of a CUDA ``vectorize`` ufunc, as numba-cuda computes it: halves combined
pairwise by the ufunc (an odd last element folded in after), no initial value. It was a
``cuda.reduce`` with init 0 folded in: ``mul.reduce`` gave 0, a max of negatives 0."""

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_uncached")


@cuda.vectorize(["float64(float64, float64)", "int64(int64, int64)"])
def mul(a, b):
    return a * b


@cuda.vectorize(["int64(int64, int64)"])
def biggest(a, b):
    return max(a, b)


@cuda.vectorize(["float64(float64, float64)"])
def sub(a, b):
    return a - b


@cuda.vectorize(["float32(float32, float32)"])
def add32(a, b):
    return a + b


def _numba_order(f, x):
    """numba's DeviceVectorize reduction order, on the host."""
    n = len(x)
    if n % 2:
        return f(_numba_order(f, x[: n - 1]), x[n - 1 :])
    left = f(x[: n // 2], x[n // 2 :])
    return _numba_order(f, left) if n // 2 > 1 else left


def test_products_and_maxima_have_no_zero_folded_in():
    assert mul.reduce(np.arange(1.0, 6.0)) == 120.0
    r = mul.reduce(np.arange(1, 8))
    assert r == 5040 and np.asarray(r).dtype == np.int64
    assert biggest.reduce(np.array([-5, -3, -9])) == -3


@pytest.mark.parametrize("n", [2, 3, 7, 8, 13, 100])
def test_non_associative_order_is_numbas(n):
    x = np.arange(1.0, n + 1.0)
    assert sub.reduce(x) == _numba_order(np.subtract, x)[0]


def test_float32_sum_rounds_in_numbas_order():
    x = np.random.default_rng(0).random(1001).astype(np.float32) * 1000
    want = _numba_order(np.add, x)[0]
    got = add32.reduce(cuda.to_device(x))
    assert got == want and np.asarray(got).dtype == np.float32


def test_edges():
    assert mul.reduce(np.array([7.0])) == 7.0
    with pytest.raises(TypeError, match="empty"):
        mul.reduce(np.zeros(0))
    with pytest.raises(TypeError):
        mul.reduce(np.ones((2, 2)))
