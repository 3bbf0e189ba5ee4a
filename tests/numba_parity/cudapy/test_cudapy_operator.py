"""numba-cuda's ``tests/cudapy/test_operator.py`` (see conftest.py): the operator module on fp16 and
mixed operands, fp16 comparisons."""

from __future__ import annotations

import itertools
import operator

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def _fp16_div_scalar(ary, a, b):
    ary[0] = a / b


def _fp16add(ary, a, b):
    ary[0] = a + b


def _fp16_iadd(ary, a):
    ary[0] += a


def _fp16_isub(ary, a):
    ary[0] -= a


def _fp16_imul(ary, a):
    ary[0] *= a


def _fp16_idiv(ary, a):
    ary[0] /= a


def _fp16sub(ary, a, b):
    ary[0] = a - b


def _fp16mul(ary, a, b):
    ary[0] = a * b


def _fp16neg(ary, a):
    ary[0] = -a


def _fp16abs(ary, a):
    ary[0] = abs(a)


def _fp16_gt(ary, a, b):
    ary[0] = a > b


def _fp16_ge(ary, a, b):
    ary[0] = a >= b


def _fp16_lt(ary, a, b):
    ary[0] = a < b


def _fp16_le(ary, a, b):
    ary[0] = a <= b


def _fp16_eq(ary, a, b):
    ary[0] = a == b


def _fp16_ne(ary, a, b):
    ary[0] = a != b


@cuda.jit("b1(f2, f2)", device=True)
def _hlt_func_1(x, y):
    return x < y


@cuda.jit("b1(f2, f2)", device=True)
def _hlt_func_2(x, y):
    return x < y


def _multiple_hcmp_1(r, a, b, c):
    r[0] = _hlt_func_1(a, b) and _hlt_func_2(b, c)


def _multiple_hcmp_2(r, a, b, c):
    r[0] = _hlt_func_1(a, b) and b < c


def _multiple_hcmp_3(r, a, b, c):
    r[0] = _hlt_func_1(a, b) and c >= b


def _multiple_hcmp_4(r, a, b, c):
    r[0] = a < b and b < c


def _multiple_hcmp_5(r, a, b, c):
    r[0] = a < b and c >= b


_BIN = ((_fp16add, operator.add), (_fp16sub, operator.sub), (_fp16mul, operator.mul),
        (_fp16_div_scalar, operator.truediv))


_CMP = ((_fp16_gt, operator.gt), (_fp16_ge, operator.ge), (_fp16_lt, operator.lt),
        (_fp16_le, operator.le), (_fp16_eq, operator.eq), (_fp16_ne, operator.ne))


_MIXED_TYS = (np.int8, np.int16, np.int32, np.int64, np.float32, np.float64)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv,
                                operator.floordiv])
def test_operator_module(op):
    # test_operator.py TestOperatorModule.test_add/_sub/_mul/_truediv/_floordiv
    @cuda.jit
    def foo(a, b):
        i = 0
        a[i] = op(a[i], b[i])

    a = np.ones(1)
    b = np.ones(1)
    res = a.copy()
    foo[1, 1](res, b)
    np.testing.assert_equal(res, op(a, b))


def test_operator_fp16_binary():
    # test_operator.py TestOperatorModule.test_fp16_binary
    rng = np.random.RandomState(0)
    for fn, op in _BIN:
        kernel = cuda.jit("void(f2[:], f2, f2)")(fn)
        got = np.zeros(1, dtype=np.float16)
        arg1 = rng.random_sample(1).astype(np.float16)
        arg2 = rng.random_sample(1).astype(np.float16)
        kernel[1, 1](got, arg1[0], arg2[0])
        np.testing.assert_allclose(got, op(arg1, arg2))


def test_operator_mixed_fp16_binary_arithmetic():
    # test_operator.py TestOperatorModule.test_mixed_fp16_binary_arithmetic
    rng = np.random.RandomState(0)
    for (fn, op), ty in itertools.product(_BIN, _MIXED_TYS):
        kernel = cuda.jit(fn)
        arg1 = rng.random_sample(1).astype(np.float16)
        arg2 = (rng.random_sample(1) * 100).astype(ty)
        got = np.zeros(1, dtype=np.result_type(np.float16, ty))
        kernel[1, 1](got, arg1[0], arg2[0])
        np.testing.assert_allclose(got, op(arg1, arg2), err_msg=f"{op} {ty}")


def test_operator_fp16_inplace_binary():
    # test_operator.py TestOperatorModule.test_fp16_inplace_binary
    rng = np.random.RandomState(0)
    for fn, op in ((_fp16_iadd, operator.iadd), (_fp16_isub, operator.isub),
                   (_fp16_imul, operator.imul), (_fp16_idiv, operator.itruediv)):
        kernel = cuda.jit("void(f2[:], f2)")(fn)
        got = rng.random_sample(1).astype(np.float16)
        expected = got.copy()
        arg = rng.random_sample(1).astype(np.float16)[0]
        kernel[1, 1](got, arg)
        op(expected, arg)
        np.testing.assert_allclose(got, expected)


def test_operator_fp16_unary():
    # test_operator.py TestOperatorModule.test_fp16_unary
    rng = np.random.RandomState(0)
    for fn, op in ((_fp16neg, operator.neg), (_fp16abs, operator.abs)):
        kernel = cuda.jit("void(f2[:], f2)")(fn)
        got = np.zeros(1, dtype=np.float16)
        arg1 = rng.random_sample(1).astype(np.float16)
        kernel[1, 1](got, arg1[0])
        np.testing.assert_allclose(got, op(arg1))


def test_operator_fp16_comparison():
    # test_operator.py TestOperatorModule.test_fp16_comparison
    rng = np.random.RandomState(0)
    for fn, op in _CMP:
        kernel = cuda.jit("void(b1[:], f2, f2)")(fn)
        got = np.zeros(1, dtype=np.bool_)
        arg1 = rng.random_sample(1).astype(np.float16)
        arg2 = rng.random_sample(1).astype(np.float16)
        kernel[1, 1](got, arg1[0], arg2[0])
        assert got[0] == op(arg1, arg2)


def test_operator_mixed_fp16_comparison():
    # test_operator.py TestOperatorModule.test_mixed_fp16_comparison
    rng = np.random.RandomState(0)
    for (fn, op), ty in itertools.product(_CMP, _MIXED_TYS):
        kernel = cuda.jit(fn)
        got = np.zeros(1, dtype=np.bool_)
        arg1 = rng.random_sample(1).astype(np.float16)
        arg2 = (rng.random_sample(1) * 100).astype(ty)
        kernel[1, 1](got, arg1[0], arg2[0])
        assert got[0] == op(arg1, arg2), (op, ty)


@pytest.mark.parametrize("fn", [_multiple_hcmp_1, _multiple_hcmp_2, _multiple_hcmp_3,
                                _multiple_hcmp_4, _multiple_hcmp_5])
def test_operator_multiple_float16_comparisons(fn):
    # test_operator.py test_multiple_float16_comparisons / _false
    compiled = cuda.jit("void(b1[:], f2, f2, f2)")(fn)
    ary = np.zeros(1, dtype=np.bool_)
    compiled[1, 1](ary, np.float16(2.0), np.float16(3.0), np.float16(4.0))
    assert ary[0]
    compiled[1, 1](ary, np.float16(2.0), np.float16(3.0), np.float16(1.0))
    assert not ary[0]
