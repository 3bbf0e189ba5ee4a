"""numba-cuda's ``tests/cudapy/test_casting.py`` (see conftest.py): conversions between integer, float,
fp16 and complex types in device functions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def _to_int8(x):
    return np.int8(x)


def _to_int16(x):
    return np.int16(x)


def _to_int32(x):
    return np.int32(x)


def _to_int64(x):
    return np.int64(x)


def _to_float16(x):
    return np.float16(x) * np.float16(0.5)


def _to_float32(x):
    return np.float32(x) / np.float32(2)


def _to_float64(x):
    return np.float64(x) / np.float64(2)


def _to_complex64(x):
    return np.complex64(x)


def _to_complex128(x):
    return np.complex128(x)


def _cuda_int_literal_to_float16(x):
    return cuda.fp16.hmul(np.float16(x), 2)


def _cuda_float_literal_to_float16(x):
    return cuda.fp16.hmul(np.float16(x), 2.5)


def _wrapped(pyfunc, intype, outtype):
    wrapped_func = cuda.jit(device=True)(pyfunc)

    @cuda.jit
    def cuda_wrapper_fn(arg, res):
        res[0] = wrapped_func(arg[0])

    def wrapper_fn(arg):
        argarray = np.zeros(1, dtype=intype)
        argarray[0] = arg
        resarray = np.zeros(1, dtype=outtype)
        cuda_wrapper_fn[1, 1](argarray, resarray)
        return resarray[0]

    return wrapper_fn


_INT_FUNCS = (_to_int8, _to_int16, _to_int32, _to_int64)


_FLOAT_TYS = (np.float16, np.float32, np.float64)


def test_casting_float_to_int():
    # test_casting.py TestCasting.test_float_to_int
    for pyfunc, toty in zip(_INT_FUNCS, (np.int8, np.int16, np.int32, np.int64)):
        for fromty in _FLOAT_TYS:
            cfunc = _wrapped(pyfunc, fromty, toty)
            assert cfunc(12.3) == pyfunc(12.3) == int(12.3)
            assert cfunc(-12.3) == pyfunc(-12.3) == int(-12.3)


def test_casting_float_to_uint():
    # test_casting.py TestCasting.test_float_to_uint (np.intN in the device function, the
    # result stored to an unsigned array)
    for pyfunc, toty in zip(_INT_FUNCS, (np.uint8, np.uint16, np.uint32, np.uint64)):
        for fromty in _FLOAT_TYS:
            cfunc = _wrapped(pyfunc, fromty, toty)
            assert cfunc(12.3) == pyfunc(12.3) == int(12.3)


def test_casting_int_to_float():
    # test_casting.py TestCasting.test_int_to_float
    for pyfunc, toty in zip((_to_float16, _to_float32, _to_float64), _FLOAT_TYS):
        cfunc = _wrapped(pyfunc, np.int64, toty)
        assert cfunc(321) == pyfunc(321)


def test_casting_literal_to_float16():
    # test_casting.py TestCasting.test_literal_to_float16
    for cudafunc, expected in (
        (_cuda_int_literal_to_float16, np.float16(321) * np.float16(2)),
        (_cuda_float_literal_to_float16, np.float16(321) * np.float16(2.5)),
    ):
        cfunc = _wrapped(cudafunc, np.float16, np.float16)
        assert cfunc(321) == expected


def test_casting_float_to_float():
    # test_casting.py TestCasting.test_float_to_float
    funcs = (_to_float16, _to_float32, _to_float64)
    for (pyfunc, fromty), toty in itertools.product(zip(funcs, _FLOAT_TYS), _FLOAT_TYS):
        cfunc = _wrapped(pyfunc, fromty, toty)
        np.testing.assert_allclose(cfunc(12.3), toty(12.3) / toty(2), rtol=0.0003)
        np.testing.assert_allclose(cfunc(-12.3), toty(-12.3) / toty(2), rtol=0.0003)


def test_casting_float_to_complex():
    # test_casting.py TestCasting.test_float_to_complex
    for pyfunc, toty in zip((_to_complex64, _to_complex128), (np.complex64, np.complex128)):
        for fromty in _FLOAT_TYS:
            cfunc = _wrapped(pyfunc, fromty, toty)
            np.testing.assert_allclose(cfunc(3.21), pyfunc(fromty(3.21)))
            np.testing.assert_allclose(cfunc(-3.21), pyfunc(fromty(-3.21)) + 0j)
