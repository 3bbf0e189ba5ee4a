"""``x is True`` / ``x is not False`` in kernels, as numba.cuda compiles them (its SSA
tests use ``if pred is True:``): a boolean compares by value with the literal, any
other type is never it -- on the cpu target against Python."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


@cuda.jit
def is_literals(pred, n, out):
    out[0] = pred is True
    out[1] = pred is not True
    out[2] = pred is False
    out[3] = pred is not False
    out[4] = True is pred
    out[5] = n is True
    out[6] = n is not False


@pytest.mark.parametrize("pred", [True, False])
@pytest.mark.parametrize("n", [0, 1])
def test_is_bool_literal_equals_python(pred, n):
    out = np.zeros(7, np.int64)
    is_literals[1, 1](pred, n, out)
    want = [pred is True, pred is not True, pred is False, pred is not False, True is pred,
            n is True, n is not False]  # noqa: F632  (Python's answer for an int: never the literal)
    assert out.tolist() == [int(w) for w in want]


def test_if_pred_is_true_guards_stores():
    @cuda.jit
    def k(pred, stack):
        i = 0
        if pred is True:
            stack[i] = 1
            i += 1
            stack[i] = 1

    a, b = np.array([0, 666]), np.array([0, 666])
    k[1, 1](True, a)
    k[1, 1](False, b)
    assert a.tolist() == [1, 1] and b.tolist() == [0, 666]


def test_is_between_two_values_is_still_refused():
    @cuda.jit
    def k(a, b, out):
        out[0] = a is b

    with pytest.raises(cuda.CompileError, match="only with None") as ei:
        k[1, 1](True, False, np.zeros(1, np.int64))
    assert "out[0] = a is b" in str(ei.value) and "^" in str(ei.value)
