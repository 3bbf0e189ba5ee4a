"""Programs from numba-cuda's own cudapy test files (test_casting, test_lang, test_iterators,
...), kernels and assertions kept as numba's tests wrote them, run on the cpu target with
``import pykern as cuda``. Each test names the numba-cuda file and test it comes from;
expected values are those numba's assertions check."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import pykern as cuda
from pykern import float64

pytestmark = pytest.mark.usefixtures("cpu_target")


# ------------------------------------------------------------- test_casting.py
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


# ---------------------------------------------------------------- test_lang.py
def test_lang_enumerate_global_tuple():
    # test_lang.py TestLang.test_enumerate
    tup = (1.0, 2.5, 3.0)

    @cuda.jit("void(float64[:])")
    def foo(a):
        for i, v in enumerate(tup):
            a[i] = v

    a = np.zeros(len(tup))
    foo[1, 1](a)
    assert np.all(a == tup)


def test_lang_zip_global_tuples():
    # test_lang.py TestLang.test_zip
    t1 = (1, 2, 3)
    t2 = (4.5, 5.6, 6.7)

    @cuda.jit("void(float64[:])")
    def foo(a):
        c = 0
        for i, j in zip(t1, t2):
            c += i + j
        a[0] = c

    a = np.zeros(1)
    foo[1, 1](a)
    assert np.all(a == (np.array(t1) + np.array(t2)).sum())


def test_lang_issue_872_kernel_api_in_several_blocks():
    # test_lang.py TestLang.test_issue_872 (numba only launches it; the values are checked here)
    @cuda.jit("void(float64[:,:])")
    def cuda_kernel_api_in_multiple_blocks(ary):
        for i in range(2):
            tx = cuda.threadIdx.x
        for j in range(3):
            ty = cuda.threadIdx.y
        sm = cuda.shared.array((2, 3), float64)
        sm[tx, ty] = 1.0
        ary[tx, ty] = sm[tx, ty]

    a = np.zeros((2, 3))
    cuda_kernel_api_in_multiple_blocks[1, (2, 3)](a)
    assert np.all(a == 1.0)


# ----------------------------------------------------------- test_iterators.py
def _twoarg(f):
    x = np.asarray((10, 9, 8, 7, 6))
    y = np.asarray((1, 2, 3, 4, 5))
    error = np.zeros(1, dtype=np.int32)
    f[1, 1](x, y, error)
    return error[0]


def test_iterators_enumerate():
    # test_iterators.py TestIterators.test_enumerate
    @cuda.jit
    def enumerator(x, error):
        count = 0
        for i, v in enumerate(x):
            if count != i:
                error[0] = 1
            if v != x[i]:
                error[0] = 2
            count += 1
        if count != len(x):
            error[0] = 3

    x = np.asarray((10, 9, 8, 7, 6))
    error = np.zeros(1, dtype=np.int32)
    enumerator[1, 1](x, error)
    assert error[0] == 0


def test_iterators_zip():
    # test_iterators.py TestIterators.test_zip
    @cuda.jit
    def zipper(x, y, error):
        i = 0
        for xv, yv in zip(x, y):
            if xv != x[i]:
                error[0] = 1
            if yv != y[i]:
                error[0] = 2
            i += 1
        if i != len(x):
            error[0] = 3

    assert _twoarg(zipper) == 0


def test_iterators_enumerate_zip():
    # test_iterators.py TestIterators.test_enumerate_zip
    @cuda.jit
    def enumerator_zipper(x, y, error):
        count = 0
        for i, (xv, yv) in enumerate(zip(x, y)):
            if i != count:
                error[0] = 1
            if xv != x[i]:
                error[0] = 2
            if yv != y[i]:
                error[0] = 3
            count += 1
        if count != len(x):
            error[0] = 4

    assert _twoarg(enumerator_zipper) == 0


def test_iterators_zip_enumerate():
    # test_iterators.py TestIterators.test_zip_enumerate
    @cuda.jit
    def zipper_enumerator(x, y, error):
        count = 0
        for (i, xv), yv in zip(enumerate(x), y):
            if i != count:
                error[0] = 1
            if xv != x[i]:
                error[0] = 2
            if yv != y[i]:
                error[0] = 3
            count += 1
        if count != len(x):
            error[0] = 4

    assert _twoarg(zipper_enumerator) == 0
