"""numba-cuda's ``tests/cudapy/test_device_func.py`` (see conftest.py): device functions: calls,
indirection, casting, calling one as a kernel."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_device_func_add2f_and_indirect():
    # test_device_func.py TestDeviceFunc.test_use_add2f / test_indirect_add2f
    @cuda.jit("float32(float32, float32)", device=True)
    def add2f(a, b):
        return a + b

    @cuda.jit("float32(float32, float32)", device=True)
    def indirect(a, b):
        return add2f(a, b)

    def use_add2f(ary):
        i = cuda.grid(1)
        ary[i] = add2f(ary[i], ary[i])

    def indirect_add2f(ary):
        i = cuda.grid(1)
        ary[i] = indirect(ary[i], ary[i])

    for fn in (use_add2f, indirect_add2f):
        ary = np.arange(10, dtype=np.float32)
        exp = ary + ary
        cuda.jit("void(float32[:])")(fn)[1, 10](ary)
        assert np.all(ary == exp)


def test_device_func_as_kernel_disallowed():
    # test_device_func.py TestDeviceFunc.test_device_func_as_kernel_disallowed
    @cuda.jit(device=True)
    def f():
        pass

    with pytest.raises(RuntimeError) as raises:
        f[1, 1]()
    assert "Cannot compile a device function as a kernel" in str(raises.value)
    with pytest.raises(TypeError):  # pykern's LaunchError, as it was before
        f[1, 1]()


def test_device_func_casting():
    # test_device_func.py TestDeviceFunc.test_device_casting (float32 arguments cast to the
    # device function's int32 signature; numpy arrays in place of cupy's)
    @cuda.jit("int32(int32, int32, int32, int32)", device=True)
    def rgba(r, g, b, a):
        return (((r & 0xFF) << 16) | ((g & 0xFF) << 8) | ((b & 0xFF) << 0) | ((a & 0xFF) << 24))

    @cuda.jit
    def rgba_caller(x, channels):
        x[0] = rgba(channels[0], channels[1], channels[2], channels[3])

    x = np.asarray([1], dtype=np.int32)
    channels = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    rgba_caller[1, 1](x, channels)
    assert x[0] == 0x04010203
