"""Typing corners where numba's answer is not its integer rule's (NBEP 1) or numpy's plain
promotion: values that meet (``min``/``max`` arguments, the branches of ``x if c else y``),
numpy's ufuncs on booleans, ``divmod``. The expected types are written from numba's sources
(numba/core/typing/builtins.py, context.py ``unify_types``, typeconv/rules.py) and checked
against numba itself where it is installed (``test_against_numba``, optional)."""

import itertools

import numpy as np
import pytest

import pykern as cuda
from frontend_helpers import lower
from pykern.frontend import types as T

INTS = [T.int8, T.uint8, T.int16, T.uint16, T.int32, T.uint32, T.int64, T.uint64]
INTS_BOOL = INTS + [T.boolean]


def numba_unify(*ts):
    """numba's ``unify_types`` of number types: sorted by bit width (stable; its boolean has
    none), then numpy's ``promote_types`` pairwise. An int literal enters as int64."""
    ts = sorted(ts, key=lambda t: 0 if t == T.boolean else t.bits)
    r = ts[0].np_dtype
    for t in ts[1:]:
        r = np.promote_types(r, t.np_dtype)
    return T.from_dtype(r)


def local_type(src, args, name="v"):
    return lower(src, args).kernel.locals[name]


def test_the_reference_knows_numbas_cases():
    """Values numba 0.68 gives (njit, nopython_signatures)."""
    assert numba_unify(T.int8, T.int64) == T.int64
    assert numba_unify(T.uint64, T.int64) == T.float64
    assert numba_unify(T.uint8, T.uint64) == T.uint64
    assert numba_unify(T.float16, T.int8, T.uint8) == T.float32  # int16 first, then float16


# ---------------------------------------------------------------- 1. values that meet

@pytest.mark.parametrize("t", INTS_BOOL, ids=str)
def test_minmax_and_conditional_with_an_int_literal_are_numbas(t):
    """numba: the literal is int64 (max(int8, 1) is int64, max(uint64, 1) float64, an int
    literal above int64's range uint64) -- pykern kept the narrow type before."""
    a = [T.Array(t, 1), T.boolean]
    lit = numba_unify(t, T.int64)
    assert local_type("def k(x, c):\n    v = max(x[0], 1)\n", a) == lit
    assert local_type("def k(x, c):\n    v = min(-1, x[0])\n", a) == lit
    assert local_type("def k(x, c):\n    v = max(x[0], 1, x[1])\n", a) == lit
    assert local_type("def k(x, c):\n    v = x[0] if c else 1\n", a) == lit
    assert local_type("def k(x, c):\n    v = 7 if c else x[0]\n", a) == lit
    assert local_type("def k(x, c):\n    v = np.maximum(x[0], 1)\n", a) == lit
    assert local_type("def k(x, c):\n    v = max(x[0], 2**63)\n", a) == numba_unify(t, T.uint64)


@pytest.mark.parametrize("a, b", list(itertools.product(INTS_BOOL, INTS_BOOL)), ids=str)
def test_minmax_and_conditional_of_two_values_promote(a, b):
    args = [T.Array(a, 1), T.Array(b, 1), T.boolean]
    assert local_type("def k(x, y, c):\n    v = max(x[0], y[0])\n", args) == numba_unify(a, b)
    assert local_type("def k(x, y, c):\n    v = x[0] if c else y[0]\n", args) == numba_unify(a, b)


def test_minmax_of_three_unifies_in_bit_width_order():
    """numpy's promotion is not associative; numba sorts by bit width first."""
    args = [T.Array(T.float16, 1), T.Array(T.int8, 1), T.Array(T.uint8, 1)]
    assert local_type("def k(h, x, y):\n    v = max(h[0], x[0], y[0])\n", args) == T.float32


def test_float_literals_stay_weak_in_minmax_and_conditionals():
    """The documented float-literal difference: float32 stays float32 (numba: float64)."""
    a = [T.Array(T.float32, 1), T.boolean]
    assert local_type("def k(x, c):\n    v = max(x[0], 1)\n", a) == T.float32
    assert local_type("def k(x, c):\n    v = x[0] if c else 0.5\n", a) == T.float32


def test_optional_conditional_with_a_literal_is_optional_int64():
    src = '''
@device
def find(x):
    if x[0] > 0:
        return x[0]
    return None

def k(x, out):
    r = find(x)
    v = -1 if r is None else r
'''
    assert local_type(src, [T.Array(T.int8, 1), T.Array(T.int64, 1)]) == T.optional(T.int64)


@cuda.jit
def _negated_meets(x, c, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = -max(x[i], 1)  # int64: -200, not 2**64 - 200 (uint8 -> uint64 negation)
        out[1, i] = -(x[i] if c else 1)
        out[2, i] = -np.maximum(x[i], 1)


@pytest.mark.usefixtures("cpu_target")
def test_negating_a_joined_uint8_is_signed():
    x = np.array([0, 1, 200, 255], np.uint8)
    for c in (True, False):
        out = np.zeros((3, 4), np.float64)
        _negated_meets[1, 4](x, c, out)
        w = np.maximum(x.astype(np.int64), 1)
        np.testing.assert_array_equal(out, [-w, -(x.astype(np.int64) if c else np.ones(4)), -w])
