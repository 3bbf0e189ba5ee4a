"""numba-cuda's ``tests/cudapy/test_enums.py`` (see conftest.py): Enum and IntEnum values in kernels
and vectorize."""

from __future__ import annotations

import enum

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


# numba.tests.enum_usecases' classes
class Color(enum.Enum):
    red = 1
    green = 2
    blue = 3


class Planet(enum.Enum):
    MERCURY = (3.303e+23, 2.4397e6)
    VENUS = (4.869e+24, 6.0518e6)
    EARTH = (5.976e+24, 6.37814e6)
    MARS = (6.421e+23, 3.3972e6)


class Shape(enum.IntEnum):
    circle = 2
    square = 500


class RequestError(enum.IntEnum):
    dummy = 2
    not_found = 404
    internal_error = 500


class IntEnumWithNegatives(enum.IntEnum):
    one = 1
    two = 2
    too = 2
    three = 3
    negone = -1
    negtwo = -2
    negthree = -3


def test_enums_compare_intenum_arguments():
    # test_enums.py EnumTest.test_compare, its IntEnum pair (Shape.circle and
    # IntEnumWithNegatives.two: equal values, different classes). Its Enum pairs (Color,
    # Planet) pass plain Enum members as kernel arguments, which pykern documents it refuses.
    def f(a, b, out):
        out[0] = a == b
        out[1] = a != b
        out[2] = a is b
        out[3] = a is not b

    cuda_f = cuda.jit(f)
    for a, b in [(Shape.circle, IntEnumWithNegatives.two), (Shape.circle, Shape.circle),
                 (RequestError.not_found, RequestError.internal_error)]:
        got = np.zeros((4,), dtype=np.bool_)
        expected = got.copy()
        cuda_f[1, 1](a, b, got)
        f(a, b, expected)
        np.testing.assert_array_equal(expected, got, err_msg=f"{a!r} {b!r}")


def test_enums_getattr_getitem():
    # test_enums.py EnumTest.test_getattr_getitem
    def f(out):
        out[0] = Color.red == Color.green
        out[1] = Color["red"] == Color["green"]

    got = np.ones((2,), dtype=np.bool_)
    cuda.jit(f)[1, 1](got)
    assert got.tolist() == [False, False]


def test_enums_return_from_device_func():
    # test_enums.py EnumTest.test_return_from_device_func (numba's inner is an njit function;
    # a device function here)
    @cuda.jit(device=True)
    def inner(pred):
        return Color.red if pred else Color.green

    def f(pred, out):
        out[0] = inner(pred) == Color.red
        out[1] = inner(not pred) == Color.green

    got = np.zeros((2,), dtype=np.bool_)
    cuda.jit(f)[1, 1](True, got)
    assert got.tolist() == [True, True]


def test_enums_int_coerce_and_cast():
    # test_enums.py EnumTest.test_int_coerce / test_int_cast
    def f(x, out):
        if x > RequestError.internal_error:
            out[0] = x - RequestError.not_found
        else:
            out[0] = x + Shape.circle

    def g(x, out):
        if x > cuda.int16(RequestError.internal_error):
            out[0] = x - cuda.int32(RequestError.not_found)
        else:
            out[0] = x + cuda.int16(Shape.circle)

    for fn in (f, g):
        cuda_f = cuda.jit(fn)
        for x in [300, 450, 550]:
            got = np.zeros((1,), dtype=np.int32)
            expected = got.copy()
            cuda_f[1, 1](x, got)
            fn(x, expected)
            assert got[0] == expected[0], (fn.__name__, x)


def test_enums_vectorize():
    # test_enums.py EnumTest.test_vectorize
    def f(x):
        if x != RequestError.not_found:
            return RequestError["internal_error"]
        else:
            return RequestError.dummy

    cuda_func = cuda.vectorize("int64(int64)", target="cuda")(f)
    arr = np.array([2, 404, 500, 404], dtype=np.int64)
    got = cuda_func(arr)
    np.testing.assert_array_equal(np.array([f(x) for x in arr], dtype=np.int64), got)
    assert got.dtype == np.int64
