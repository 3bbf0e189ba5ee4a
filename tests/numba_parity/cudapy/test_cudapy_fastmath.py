"""numba-cuda's ``tests/cudapy/test_fastmath.py`` (see conftest.py): fastmath on division and unary
math functions in kernels and device functions."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_fastmath_divf_exception():
    # test_fastmath.py TestFastMathOption.test_divf_exception
    def f10(r, x, y):
        r[0] = x / y

    sig = (cuda.float32[::1], cuda.float32, cuda.float32)
    fastver = cuda.jit(sig, fastmath=True, debug=True, opt=False)(f10)
    precver = cuda.jit(sig, debug=True, opt=False)(f10)
    ary = np.empty(10, dtype=np.float32)
    with pytest.raises(ZeroDivisionError):
        precver[1, 10](ary, 10.0, 0.0)
    fastver[1, 10](ary, 10.0, 0.0)


@pytest.mark.parametrize("op", [math.cos, math.sin, math.tan, math.tanh, math.exp, math.log,
                                math.log10, math.log2])
def test_fastmath_unary_kernels_and_device_functions(op):
    # test_fastmath.py test_cosf .. test_log2f compile each function as a kernel and a device
    # function with and without fastmath=True and read the PTX (NVIDIA-only); here both run
    # and give the function's value to float32 approximation accuracy
    def kernel(r, x):
        r[0] = op(x)

    def device_function(x):
        return op(x)

    x = np.float32(0.7)
    for fm in (False, True):
        r = np.zeros(1, np.float32)
        cuda.jit((cuda.float32[::1], cuda.float32), fastmath=fm)(kernel)[1, 1](r, x)
        np.testing.assert_allclose(r[0], op(float(x)), rtol=2e-6 if fm else 1e-6)
        dev = cuda.jit((cuda.float32,), device=True, fastmath=fm)(device_function)

        @cuda.jit
        def call(r, x):
            r[0] = dev(x)

        r = np.zeros(1, np.float32)
        call[1, 1](r, x)
        np.testing.assert_allclose(r[0], op(float(x)), rtol=2e-6 if fm else 1e-6)
