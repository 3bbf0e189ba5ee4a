"""numba-cuda's ``tests/cudapy/test_math.py`` (see conftest.py): math-module functions against numpy
for every float/int type, fp16, remainder, pow, modf."""

from __future__ import annotations

import math
import operator

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def _unary_kernel(fn):
    def k(A, B):
        i = cuda.grid(1)
        B[i] = fn(A[i])

    return k


def _binary_kernel(fn):
    def k(A, B, C):
        i = cuda.grid(1)
        C[i] = fn(A[i], B[i])

    return k


def _math_unary(func, npfunc, npdtype, nprestype, start, stop):
    # numba's TestCudaMath.unary_template, its tolerances included
    nelem = 50
    A = np.linspace(start, stop, nelem).astype(npdtype)
    B = np.empty_like(A).astype(nprestype)
    arytype = cuda.from_dtype(np.dtype(npdtype))[::1]
    restype = cuda.from_dtype(np.dtype(nprestype))[::1]
    cuda.jit((arytype, restype))(func)[1, nelem](A, B)
    rtol = {np.float64: 1e-13, np.float32: 1e-6}.get(npdtype, 1e-3)
    np.testing.assert_allclose(npfunc(A), B, rtol=rtol, err_msg=f"{npfunc} {npdtype}")


def _math_binary(func, npfunc, npdtype, nprestype, start, stop):
    # numba's TestCudaMath.binary_template (assert_allclose's default rtol=1e-7)
    nelem = 50
    A = np.linspace(start, stop, nelem).astype(npdtype)
    B = np.empty_like(A).astype(nprestype)
    arytype = cuda.from_dtype(np.dtype(npdtype))[::1]
    restype = cuda.from_dtype(np.dtype(nprestype))[::1]
    cuda.jit((arytype, arytype, restype))(func)[1, nelem](A, A, B)
    np.testing.assert_allclose(npfunc(A, A), B, err_msg=f"{npfunc} {npdtype}")


def _pyufunc(f):
    return np.vectorize(f, otypes=[np.float64])


# (math function, reference, float range, int range or None): numba's test_math_<name>
_MATH_UNARY = [
    (math.acos, np.arccos, (0, 1), (0, 0)),
    (math.asin, np.arcsin, (0, 1), (0, 0)),
    (math.atan, np.arctan, (0, 1), (0, 50)),
    (math.acosh, np.arccosh, (1, 2), (1, 2)),
    (math.asinh, np.arcsinh, (0, 1), (0, 50)),
    (math.atanh, np.arctanh, (0, 0.9), (0, 0.9)),
    (math.cos, np.cos, (0, 1), (0, 50)),
    (math.sin, np.sin, (0, 1), (0, 50)),
    (math.tan, np.tan, (0, 1), (0, 50)),
    (math.cosh, np.cosh, (0, 1), (0, 50)),
    (math.sinh, np.sinh, (0, 1), (0, 50)),
    (math.tanh, np.tanh, (0, 1), (0, 50)),
    (math.erf, _pyufunc(math.erf), (0, 1), (0, 50)),
    (math.erfc, _pyufunc(math.erfc), (0, 1), (0, 50)),
    (math.exp, np.exp, (0, 1), (0, 50)),
    (math.exp2, np.exp2, (0, 1), (0, 50)),
    (math.expm1, np.expm1, (0, 1), (0, 50)),
    (math.fabs, np.fabs, (-1, 1), (-1, 50)),
    (math.gamma, _pyufunc(math.gamma), (0.1, 1), (1, 50)),
    (math.lgamma, _pyufunc(math.lgamma), (0.1, 1), (1, 50)),
    (math.log, np.log, (1, 1), (1, 50)),
    (math.log2, np.log2, (1, 1), (1, 50)),
    (math.log10, np.log10, (1, 1), (1, 50)),
    (math.log1p, np.log1p, (0, 1), (0, 50)),
    (math.sqrt, np.sqrt, (0, 1), (0, 50)),
    (math.ceil, np.ceil, (0, 1), (0, 50)),
    (math.floor, np.floor, (0, 1), (0, 50)),
    (math.trunc, np.trunc, (0, 1), (0, 50)),
    (math.degrees, np.degrees, (0, 1), None),
    (math.radians, np.radians, (0, 1), None),
]


@pytest.mark.parametrize("fn,npfunc,frange,irange", _MATH_UNARY, ids=[t[0].__name__ for t in _MATH_UNARY])
def test_math_unary(fn, npfunc, frange, irange):
    # test_math.py TestCudaMath.test_math_<name>: float32, float64, and int64/uint64 arguments
    # giving float64 (numba's test_math_trunc_non_float64 for trunc's float32 and integers)
    k = _unary_kernel(fn)
    _math_unary(k, npfunc, np.float32, np.float32, *frange)
    _math_unary(k, npfunc, np.float64, np.float64, *frange)
    if irange is not None:
        _math_unary(k, npfunc, np.int64, np.float64, *irange)
        _math_unary(k, npfunc, np.uint64, np.float64, *irange)


def test_math_fp16():
    # test_math.py TestCudaMath.test_math_fp16 / test_math_fp16_trunc
    for fn, npfunc, start in ((math.sin, np.sin, 0), (math.cos, np.cos, 0), (math.exp, np.exp, 0),
                              (math.log, np.log, 1), (math.log2, np.log2, 1),
                              (math.log10, np.log10, 1), (math.fabs, np.fabs, -1),
                              (math.sqrt, np.sqrt, 0), (math.ceil, np.ceil, 0),
                              (math.floor, np.floor, 0), (math.exp2, np.exp2, 0),
                              (math.trunc, np.trunc, 0)):
        _math_unary(_unary_kernel(fn), npfunc, np.float16, np.float16, start, 1)


# (math function, reference, float range, whether int64/uint64 run): test_math_<name>
_MATH_BINARY = [
    (math.atan2, np.arctan2, (0, 1), True),
    (math.remainder, np.remainder, (1e-11, 1), True),
    (math.hypot, np.hypot, (0, 1), True),
    (math.pow, np.power, (0, 1), False),
    (operator.pow, np.power, (0, 1), False),
    (math.copysign, np.copysign, (-1, 1), False),
    (math.fmod, np.fmod, (1, 1), False),
    (operator.mod, np.fmod, (1, 1), False),
]


@pytest.mark.parametrize("fn,npfunc,frange,ints", _MATH_BINARY,
                         ids=[t[0].__name__ for t in _MATH_BINARY])
def test_math_binary(fn, npfunc, frange, ints):
    # test_math.py test_math_atan2 / _remainder / _hypot / _pow / _pow_binop / _copysign /
    # _fmod / _mod_binop
    k = _binary_kernel(fn)
    _math_binary(k, npfunc, np.float32, np.float32, *frange)
    _math_binary(k, npfunc, np.float64, np.float64, *frange)
    if ints:
        start = 1 if fn is math.remainder else 0
        _math_binary(k, npfunc, np.int64, np.float64, start, 50)
        _math_binary(k, npfunc, np.uint64, np.float64, start, 50)


def test_math_remainder_0_0():
    # test_math.py TestCudaMath.test_math_remainder_0_0
    @cuda.jit(cuda.void(cuda.float64[::1], cuda.int64, cuda.int64))
    def test_0_0(r, x, y):
        r[0] = math.remainder(x, y)

    r = np.zeros(1, np.float64)
    test_0_0[1, 1](r, 0, 0)
    assert np.isnan(r[0])


@pytest.mark.parametrize("npdtype", [np.float32, np.float64])
def test_math_pow_int32_exponent(npdtype):
    # test_math.py TestCudaMath.pow_template_int32
    def math_pow(A, B, C):
        i = cuda.grid(1)
        C[i] = math.pow(A[i], B[i])

    nelem = 50
    A = np.linspace(0, 25, nelem).astype(npdtype)
    B = np.arange(nelem, dtype=np.int32)
    C = np.empty_like(A)
    arytype = cuda.from_dtype(np.dtype(npdtype))[::1]
    cuda.jit((arytype, cuda.int32[::1], arytype))(math_pow)[1, nelem](A, B, C)
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(np.power(A, B).astype(npdtype), C, rtol=1e-6)


@pytest.mark.parametrize("dtype,arytype", [(np.float32, cuda.float32[:]), (np.float64, cuda.float64[:])])
def test_math_modf(dtype, arytype):
    # test_math.py TestCudaMath.test_math_modf
    def math_modf(A, B, C):
        i = cuda.grid(1)
        B[i], C[i] = math.modf(A[i])

    cfunc = cuda.jit((arytype, arytype, arytype))(math_modf)
    for A in (np.linspace(0, 10, 50), np.array([np.inf, -np.inf])):
        A = A.astype(dtype)
        B = np.zeros_like(A)
        C = np.zeros_like(A)
        cfunc[1, len(A)](A, B, C)
        D, E = np.modf(A)
        assert np.array_equal(B, D)
        assert np.array_equal(C, E)
    A = np.array([np.nan], dtype=dtype)
    B = np.zeros_like(A)
    C = np.zeros_like(A)
    cfunc[1, 1](A, B, C)
    assert np.isnan(B) and np.isnan(C)


@pytest.mark.parametrize("fn,npfunc", [(math.isnan, np.isnan), (math.isinf, np.isinf),
                                       (math.isfinite, np.isfinite)])
def test_math_bool(fn, npfunc):
    # test_math.py test_math_isnan / _isinf / _isfinite
    k = _unary_kernel(fn)
    _math_unary(k, npfunc, np.float32, np.float32, 0, 1)
    _math_unary(k, npfunc, np.float64, np.float64, 0, 1)
    _math_unary(k, npfunc, np.int32, np.int32, 0, 49)
    _math_unary(k, npfunc, np.int64, np.int64, 0, 49)
    for npdtype, nbtype in ((np.float32, cuda.float32), (np.float64, cuda.float64)):
        fi = np.finfo(npdtype)
        A = np.array([0.0, fi.tiny / 4, fi.tiny, 0.5, 1.0, fi.max, np.inf, np.nan], dtype=npdtype)
        B = np.empty_like(A, dtype=np.int32)
        cfunc = cuda.jit((nbtype[::1], cuda.int32[::1]))(k)
        cfunc[1, A.size](A, B)
        np.testing.assert_array_equal(B, npfunc(A))
        cfunc[1, A.size](-A, B)
        np.testing.assert_array_equal(B, npfunc(-A))
