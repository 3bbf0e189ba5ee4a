"""numba-cuda's ``tests/cudapy/test_exception.py`` (see conftest.py): exceptions in kernels: raise,
index errors under debug, zero division, divergent raise."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_exception_tuple_index_in_debug():
    # test_exception.py TestException.test_exception
    def foo(ary):
        x = cuda.threadIdx.x
        if x == 2:
            ary.shape[-x]

    cuda.jit(foo)[1, 3](np.array([0, 1]))
    with pytest.raises(IndexError) as cm:
        cuda.jit(debug=True, opt=False)(foo)[1, 3](np.array([0, 1]))
    assert "tuple index out of range" in str(cm.value)


def test_exception_user_raise():
    # test_exception.py TestException.test_user_raise
    @cuda.jit(debug=True, opt=False)
    def foo(do_raise):
        if do_raise:
            raise ValueError

    foo[1, 1](False)
    with pytest.raises(ValueError):
        foo[1, 1](True)


def test_exception_raise_causing_warp_diverge():
    # test_exception.py TestException.test_raise_causing_warp_diverge
    @cuda.jit(debug=False, opt=True)
    def problematic(x, y):
        tid = cuda.threadIdx.x
        ntid = cuda.blockDim.x
        if tid > 12:
            for i in range(ntid):
                y[i] += x[i] // y[i]
        cuda.syncthreads()
        if tid < 17:
            for i in range(ntid):
                x[i] += x[i] // y[i]

    @cuda.jit
    def oracle(x, y):
        tid = cuda.threadIdx.x
        ntid = cuda.blockDim.x
        if tid > 12:
            for i in range(ntid):
                if y[i] != 0:
                    y[i] += x[i] // y[i]
        cuda.syncthreads()
        if tid < 17:
            for i in range(ntid):
                if y[i] != 0:
                    x[i] += x[i] // y[i]

    n = 32
    got_x = 1.0 / (np.arange(n) + 0.01)
    got_y = 1.0 / (np.arange(n) + 0.01)
    problematic[1, n](got_x, got_y)
    expect_x = 1.0 / (np.arange(n) + 0.01)
    expect_y = 1.0 / (np.arange(n) + 0.01)
    oracle[1, n](expect_x, expect_y)
    np.testing.assert_almost_equal(expect_x, got_x)
    np.testing.assert_almost_equal(expect_y, got_y)


def test_exception_zero_division():
    # test_exception.py test_no_zero_division_error / test_zero_division_error_in_debug
    def f(r, x, y):
        r[0] = y[0] / x[0]
        r[1] = y[0]

    r, x, y = np.zeros(2), np.zeros(1), np.ones(1)
    cuda.jit(f)[1, 1](r, x, y)
    assert np.isinf(r[0])
    assert r[1] == y[0]

    r = np.zeros(2)
    with pytest.raises(ZeroDivisionError):
        cuda.jit(debug=True, opt=False)(f)[1, 1](r, x, y)
    assert r[0] == 0
    assert r[1] == 0


def test_exception_raise_in_device_function():
    # test_exception.py TestException.test_raise_in_device_function (an expected failure on
    # NVIDIA hardware, numba issue #8036; its simulator raises, as pykern does)
    msg = "Device Function Error"

    @cuda.jit(device=True)
    def f():
        raise ValueError(msg)

    @cuda.jit(debug=True, opt=False)
    def kernel():
        f()

    with pytest.raises(ValueError) as raises:
        kernel[1, 1]()
    assert msg in str(raises.value)
