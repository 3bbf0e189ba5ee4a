"""numba-cuda's ``tests/cudapy/test_vectorize.py`` (see conftest.py): cuda.vectorize: scalars, n-d
arrays, output arguments, reduce, device arrays, tuples."""

from __future__ import annotations

from collections import namedtuple
from functools import partial
import itertools

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


_VEC_SIGS = [cuda.int32(cuda.int32, cuda.int32), cuda.float32(cuda.float32, cuda.float32),
             cuda.float64(cuda.float64, cuda.float64)]


_VEC_DTYPES = (np.float64, np.float32, np.int32)


# numba's test runs both cuda.vectorize and numba.vectorize(target="cuda")
_VECTORIZERS = [cuda.vectorize, partial(cuda.vectorize, target="cuda")]


def _vector_add_ufuncs():
    out = []
    for vectorize in _VECTORIZERS:
        @vectorize(_VEC_SIGS)
        def vector_add(a, b):
            return a + b

        out.append(vector_add)
    return out


def test_vectorize_scalar_and_1d():
    # test_vectorize.py TestCUDAVectorize.test_scalar / test_1d
    rng = np.random.RandomState(0)
    for vector_add in _vector_add_ufuncs():
        assert vector_add(1.2, 2.3) == 1.2 + 2.3
        for ty in _VEC_DTYPES:
            data = np.array(rng.random_sample(1000001), dtype=ty)
            actual = vector_add(data, data)
            np.testing.assert_allclose(np.add(data, data), actual)
            assert actual.dtype == ty


def test_vectorize_nd():
    # test_vectorize.py TestCUDAVectorize.test_nd
    rng = np.random.RandomState(0)
    for vector_add in _vector_add_ufuncs():
        for nd, dtype, order in itertools.product(range(1, 8), _VEC_DTYPES, ("C", "F")):
            data = rng.random_sample((4,) * nd).astype(dtype)
            data2 = np.array(data.T, order=order)
            actual = vector_add(data, data2)
            np.testing.assert_allclose(data + data2, actual)
            assert actual.dtype == dtype


def test_vectorize_output_arg_and_reduce():
    # test_vectorize.py TestCUDAVectorize.test_output_arg / test_reduce
    for vector_add in _vector_add_ufuncs():
        A = np.arange(10, dtype=np.float32)
        B = np.arange(10, dtype=np.float32)
        actual = np.empty_like(A)
        vector_add(A, B, out=actual)
        np.testing.assert_allclose(A + B, actual)
        for n in (8, 100, 2**10 + 1):
            x = np.arange(n, dtype=np.int32)
            actual = vector_add.reduce(x)
            np.testing.assert_allclose(np.add.reduce(x), actual)
            assert actual.dtype == np.int32


def test_vectorize_device_arrays():
    # test_vectorize.py test_1d_async / test_reduce_async / test_manual_transfer /
    # test_ufunc_output_2d (device arrays from cuda.to_device in place of cupy's)
    for vector_add in _vector_add_ufuncs():
        stream = cuda.stream()
        for ty in _VEC_DTYPES:
            data = np.array(np.random.RandomState(1).random_sample(1001), dtype=ty)
            actual = vector_add(cuda.to_device(data), cuda.to_device(data), stream=stream).copy_to_host()
            np.testing.assert_allclose(np.add(data, data), actual)
            assert actual.dtype == ty
        x = np.arange(1025, dtype=np.int32)
        actual = vector_add.reduce(cuda.to_device(x), stream=stream)
        assert actual == np.add.reduce(x) and actual.dtype == np.int32
        x = np.arange(10, dtype=np.int32)
        actual = vector_add(x, cuda.to_device(x)).copy_to_host()
        np.testing.assert_equal(x + x, actual)
        assert actual.dtype == np.int32
        x = np.arange(10, dtype=np.int32).reshape(2, 5)
        dx = cuda.to_device(x)
        vector_add(dx, dx, out=dx)
        np.testing.assert_equal(x + x, dx.copy_to_host())


def test_vectorize_tuple_args():
    # test_vectorize.py test_tuple_arg / test_namedtuple_arg / test_tuple_of_array_arg /
    # test_tuple_of_namedtuple_arg / test_namedtuple_of_array_arg
    Point = namedtuple("Point", ("x", "y", "z"))
    Points = namedtuple("Points", ("xs", "ys"))
    arr = np.arange(10, dtype=np.int32)
    xs1 = np.arange(10, dtype=np.int32)
    xs2 = np.arange(10, dtype=np.int32) * 2
    cases = [
        ((1.0, 2.0, 3.0), (4.0, 5.0, 6.0)),
        (Point(x=1.0, y=2.0, z=3.0), Point(x=4.0, y=5.0, z=6.0)),
        ((arr, arr + 1), (arr + 2, arr + 2)),
        ((Point(x=1.0, y=2.0, z=3.0), Point(x=1.5, y=2.5, z=3.5)),
         (Point(x=4.0, y=5.0, z=6.0), Point(x=4.5, y=5.5, z=6.5))),
        (Points(xs=xs1, ys=xs1 + 2), Points(xs=xs2, ys=xs2 + 1)),
    ]
    for vector_add in _vector_add_ufuncs():
        for a, b in cases:
            r = vector_add(a, b)
            np.testing.assert_equal(np.asarray(a) + np.asarray(b), r)


def test_vectorize_name_attribute_and_device_data():
    # test_vectorize.py test_name_attribute / TestCUDAVectorizeNoTransfer (result shape)
    noise = np.random.RandomState(0).randn(1, 3, 64, 64).astype(np.float32)
    device_noise = cuda.to_device(noise)
    for vectorize in _VECTORIZERS:
        @vectorize("f8(f8)")
        def bar(x):
            return x**2

        assert bar.__name__ == "bar"

        @vectorize(["float32(float32)"])
        def func(noise):
            return noise + 1.0

        result = func(device_noise)
        assert result.shape == device_noise.shape
        np.testing.assert_array_equal(result.copy_to_host(), noise + np.float32(1.0))
