"""numba-cuda's ``tests/cudapy/test_array.py`` (see conftest.py): device arrays: *_like constructors,
one overload for host and device arrays, reshape."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_array_device_arrays_basic():
    # test_array.py test_gpu_array_zero_length / test_null_shape / test_gpu_array_strided /
    # test_gpu_array_interleaved / test_auto_device_const
    x = np.arange(0)
    dx = cuda.to_device(x)
    hx = dx.copy_to_host()
    assert x.shape == dx.shape == hx.shape and x.size == dx.size == hx.size
    assert cuda.device_array(()).shape == ()
    assert cuda.device_array_like(np.ndarray(())).shape == ()

    @cuda.jit("void(double[:])")
    def kernel(x):
        i = cuda.grid(1)
        if i < x.shape[0]:
            x[i] = i

    x = np.arange(10, dtype=np.double)
    y = np.ndarray(shape=10 * 8, buffer=x, dtype=np.byte)
    z = np.ndarray(9, buffer=y[4:-4], dtype=np.double)
    kernel[10, 10](z)
    assert np.allclose(z, list(range(9)))

    # numba's test_gpu_array_interleaved expects auto_device of a strided view to raise
    # ValueError; pykern copies it (the values are checked instead)
    d, _ = cuda.devicearray.auto_device(np.arange(10, dtype=np.double)[:-1:2])
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(10.0)[:-1:2])

    d, _ = cuda.devicearray.auto_device(2)
    assert np.all(d.copy_to_host() == np.array(2))


@pytest.mark.parametrize("like_func", ["device_array_like", "mapped_array_like", "pinned_array_like"])
def test_array_like(like_func):
    # test_array.py test_array_like_1d .. _3d_f, test_array_like_*_view*, and
    # test_array_like_2d_view_transpose_device
    like_func = getattr(cuda, like_func)
    for shape in (10, (10, 12), (10, 12, 14)):
        for order in "CF":
            d_a = cuda.device_array(shape, order=order)
            like = like_func(d_a)
            assert like.shape == d_a.shape and like.strides == d_a.strides and like.dtype == d_a.dtype
            assert like.flags["C_CONTIGUOUS"] == d_a.flags["C_CONTIGUOUS"]
            assert like.flags["F_CONTIGUOUS"] == d_a.flags["F_CONTIGUOUS"]
    for shape, order, sl in ((10, "C", np.s_[::2]), (10, "F", np.s_[::2]), ((10, 12), "C", np.s_[::2, ::2]),
                             ((10, 12), "F", np.s_[::2, ::2])):
        view = np.zeros(shape, order=order)[sl]
        d_view = cuda.device_array(shape, order=order)[sl]
        for v, dv in ((view, d_view),) + (((view.T, d_view.T),) if order == "F" and view.ndim == 2 else ()):
            nb_like = like_func(dv)
            np_like = np.zeros_like(v)
            assert dv.shape == nb_like.shape and dv.dtype == nb_like.dtype
            assert nb_like.strides == np_like.strides
            assert nb_like.flags["C_CONTIGUOUS"] == np_like.flags["C_CONTIGUOUS"]
            assert nb_like.flags["F_CONTIGUOUS"] == np_like.flags["F_CONTIGUOUS"]
    d_view = cuda.device_array((10, 12))[::2, ::2].T
    like = like_func(d_view)
    assert d_view.shape == like.shape and (40, 8) == like.strides
    assert like.flags["C_CONTIGUOUS"] and not like.flags["F_CONTIGUOUS"]


def test_array_issue_4628_one_overload_for_host_and_device_arrays():
    # test_array.py TestCudaArray.test_issue_4628
    @cuda.jit
    def func(A, out):
        i = cuda.grid(1)
        out[i] = A[i] * 2

    a = np.ones((128,))
    result = np.zeros((128,))
    func[1, 128](a, result)
    func[1, 128](cuda.to_device(a), result)
    assert len(func.overloads) == 1
    assert np.all(result == 2)


def _array_reshape1d(arr, newshape, got):
    y = arr.reshape(newshape)
    for i in range(y.shape[0]):
        got[i] = y[i]


def _array_reshape2d(arr, newshape, got):
    y = arr.reshape(newshape)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            got[i, j] = y[i, j]


def _array_reshape3d(arr, newshape, got):
    y = arr.reshape(newshape)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            for k in range(y.shape[2]):
                got[i, j, k] = y[i, j, k]


def test_array_reshape():
    # test_array.py TestCudaArray.test_array_reshape
    def check(kernelfunc, arr, shape):
        expected = arr.reshape(shape)
        got = np.zeros(expected.shape, dtype=arr.dtype)
        cuda.jit(kernelfunc)[1, 1](arr, shape, got)
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype

    arr = np.arange(24)
    for a in (arr, np.arange(24).reshape((1, 8, 1, 1, 3, 1))):
        check(_array_reshape1d, a, (24,))
        check(_array_reshape2d, a, (4, 6))
        check(_array_reshape2d, a, (8, 3))
        check(_array_reshape3d, a, (8, 1, 3))
    arr = np.arange(25).reshape(5, 5)
    check(_array_reshape1d, arr, -1)
    check(_array_reshape1d, arr, (-1,))
    check(_array_reshape2d, arr, (-1, 5))
    check(_array_reshape3d, arr, (5, -1, 5))
    check(_array_reshape3d, arr, (5, 5, -1))
    arr = np.array([])
    check(_array_reshape1d, arr, 0)
    check(_array_reshape1d, arr, (0,))
    check(_array_reshape3d, arr, (1, 0, 2))
