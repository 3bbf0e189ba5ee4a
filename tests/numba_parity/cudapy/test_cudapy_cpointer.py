"""numba's ``types.CPointer`` in kernels, from numba-cuda's ``tests/cudapy`` (see conftest.py):
``test_dispatcher.py``'s CPointer arguments, ``test_array.py``'s ``carray``/``farray`` of a
pointer parameter; and beyond them: pointers passed to device functions, ``carray`` with run-time
shapes against numpy's views of the same memory, the host ``carray``/``farray`` of ctypes
pointers, the errors numba gives, and the kernels compiled for AMD GPUs."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pykern as cuda
from pykern import types
from pykern.types import int32, uint32, void

pytestmark = pytest.mark.usefixtures("cpu_target")


def _address(d):
    return d.__cuda_array_interface__["data"][0]


def test_dispatcher_cpointer_arguments():
    # test_dispatcher.py TestDispatcher.test_dispatcher_cpointer_arguments
    ptr = types.CPointer(types.int32)
    sig = void(ptr, int32, ptr, ptr, uint32)

    @cuda.jit(sig)
    def axpy(r, a, x, y, n):
        i = cuda.grid(1)
        if i < n:
            r[i] = a * x[i] + y[i]

    N = 10  # numba's test passes 16 for 10-element arrays (on a GPU, inside the allocation's
    # granularity); on the cpu target those 6 more writes would land past a host allocation
    a = 5
    hx = np.arange(10, dtype=np.int32)
    hy = np.arange(10, dtype=np.int32) * 2
    dx = cuda.to_device(hx)
    dy = cuda.to_device(hy)
    dr = cuda.device_array_like(dx)
    axpy[1, 32](_address(dr), a, _address(dx), _address(dy), N)
    np.testing.assert_equal(a * hx + hy, dr.copy_to_host())


@pytest.mark.parametrize("cfarray", [cuda.carray, cuda.farray], ids=["carray", "farray"])
def test_cfarray(cfarray):
    # test_array.py TestCudaArray.test_carray / test_farray
    @cuda.jit(types.void(types.CPointer(types.float32)))
    def add(a_ptr):
        a = cfarray(a_ptr, (1,), dtype=cuda.float32)
        a[0] += 1.2

    a = cuda.to_device(np.array([0.0], dtype=np.float32))
    add[1, 1](int(a.__cuda_array_interface__["data"][0]))
    cuda.synchronize()
    a = a.copy_to_host()
    assert a[0] == np.float32(1.2)


@cuda.jit(device=True)
def _get(p, i):
    return p[i]


@cuda.jit(device=True)
def _put(p, i, v):
    p[i] = v


def test_pointers_pass_to_device_functions():
    ptr = types.CPointer(types.float64)

    @cuda.jit(void(ptr, ptr, types.int64))
    def k(dst, src, n):
        i = cuda.grid(1)
        if i < n:
            _put(dst, i, _get(src, n - 1 - i) * 2.0)

    src = np.linspace(-1, 1, 37)
    dst = np.zeros_like(src)
    k[1, 64](dst.ctypes.data, src.ctypes.data, src.size)
    np.testing.assert_array_equal(dst, src[::-1] * 2.0)


def _views(p, m, n, out):
    c = cuda.carray(p, (m, n))
    f = cuda.farray(p, (m, n), np.int32)
    one = cuda.carray(p, m * n)
    for i in range(m):
        for j in range(n):
            out[0, i, j] = c[i, j]
            out[1, i, j] = f[i, j]
    out[2, 0, 0] = one[m * n - 1]
    out[2, 0, 1] = c.shape[0] * 100 + c.shape[1]
    out[2, 0, 2] = f.strides[1]


VIEWS = cuda.jit("void(CPointer(int32), int64, int64, int64[:, :, :])")(_views)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6))
def test_carray_farray_are_numpys_views_of_the_memory(m, n):
    mem = np.arange(m * n, dtype=np.int32) * 7 - 3
    out = np.zeros((3, m, max(n, 3)), np.int64)
    VIEWS[1, 1](mem.ctypes.data, m, n, out)
    np.testing.assert_array_equal(out[0, :, :n], mem.reshape(m, n))
    np.testing.assert_array_equal(out[1, :, :n], mem.reshape((m, n), order="F"))
    assert out[2, 0, 0] == mem[-1]
    assert out[2, 0, 1] == m * 100 + n
    assert out[2, 0, 2] == mem.reshape((m, n), order="F").strides[1]


def test_host_carray_farray_of_ctypes_pointers():
    mem = np.arange(6, dtype=np.int64)
    p = ctypes.cast(mem.ctypes.data, ctypes.POINTER(ctypes.c_int64))
    np.testing.assert_array_equal(cuda.carray(p, (2, 3)), mem.reshape(2, 3))
    np.testing.assert_array_equal(cuda.farray(p, (2, 3)), mem.reshape((2, 3), order="F"))
    v = cuda.carray(ctypes.c_void_p(mem.ctypes.data), 6, dtype=np.int64)
    v[0] = 99  # a view: the memory changes
    assert mem[0] == 99
    with pytest.raises(TypeError, match="explicit dtype required"):
        cuda.carray(ctypes.c_void_p(mem.ctypes.data), 6)
    with pytest.raises(TypeError, match="mismatching dtype"):
        cuda.carray(p, 6, dtype=np.float64)


def test_carray_errors_are_numbas():
    def wrong_dtype(p):
        x = cuda.carray(p, 4, np.float32)

    with pytest.raises(cuda.CompileError, match="mismatching dtype 'float32' for pointer type 'CPointer\\(int32\\)'"):
        cuda.jit("void(CPointer(int32))")(wrong_dtype)

    @cuda.jit
    def not_a_pointer(a):
        x = cuda.carray(a, 4)

    with pytest.raises(cuda.CompileError, match="takes a pointer"):
        not_a_pointer[1, 1](np.zeros(4))

    def bad_shape(p):
        x = cuda.carray(p, 2.5)

    with pytest.raises(cuda.CompileError, match="invalid shape"):
        cuda.jit("void(CPointer(int32))")(bad_shape)


@pytest.mark.parametrize("arch", ["gfx90a", "gfx1100"])
def test_cpointer_kernels_compile_for_amdgpu(arch):
    ck = cuda.compile(_views, "void(CPointer(int32), int64, int64, int64[:, :, :])", arch=arch)
    assert ck.artifacts[0].binary[:4] == b"\x7fELF"
    assert "load i32, ptr addrspace(1)" in ck.llvm_ir  # the pointer's memory read as global memory
