"""Dead branches of ``if`` statements on compile-time constants are dropped before the
variables' versions are found (numba's dead_branch_prune runs before its SSA), so a
parameter rebound to another type in the live branch is a variable of its own."""

import numpy as np
import pytest

import pykern as cuda
from frontend_helpers import compile_error, jit
from pykern.numba_compat import numba_types as types
from pykern.numba_compat.extending import overload
from pykern.frontend import types as T

pytestmark = pytest.mark.usefixtures("cpu_target")

DEBUG = False
MODE = "fast"
SCALE = 3


def test_numba_cuda_test_ssa_issue5219():
    """numba-cuda's tests/cudapy/test_ssa.py, as written there."""
    def overload_this(a, b=None):
        if isinstance(b, tuple):
            b = b[0]
        return b

    @overload(overload_this)
    def ol(a, b=None):
        b_is_tuple = isinstance(b, (types.Tuple, types.UniTuple))

        def impl(a, b=None):
            if b_is_tuple is True:
                b = b[0]
            return b

        return impl

    @jit
    def test_tuple(result, a, b):
        result[0] = overload_this(a, b)

    result = np.zeros(1, np.int64)
    test_tuple[1, 1](result, 1, (2,))
    assert result.tolist() == [2]


def test_constant_true_rebinds_a_parameter():
    @jit
    def k(out, x):
        if True:
            x = 1.5
        out[0] = x
        if 1:
            x = 2
        out[1] = x

    out = np.zeros(2)
    k[1, 1](out, np.zeros(3))
    assert out.tolist() == [1.5, 2.0]


def test_global_constants_and_constant_expressions():
    @jit
    def k(out, x):
        if not DEBUG and SCALE * 2 == 6:
            x = x[0] * SCALE
        out[0] = x
        if MODE == "slow":
            x = out  # never compiled: an array into a float variable
        elif MODE == "fast":
            x = 0.25
        out[1] = x

    out = np.zeros(2)
    k[1, 1](out, np.array([2.0]))
    assert out.tolist() == [6.0, 0.25]


def test_none_checks_of_arguments():
    """An omitted optional argument is None; an array parameter is never None."""
    @jit(device=True)
    def pick(x, y=None):
        if y is None:
            x = 3.5
        return x

    @jit
    def k(out, a):
        out[0] = pick(a)
        if a is not None:
            a = 4.5
        out[1] = a

    out = np.zeros(2)
    k[1, 1](out, np.zeros(3))
    assert out.tolist() == [3.5, 4.5]


def test_a_run_time_condition_still_joins_the_values():
    e = compile_error("def k(out, x, c):\n    if c:\n        x = 1.5\n    out[0] = x\n",
                      [T.Array(T.float64, 1), T.Array(T.float64, 1), T.boolean])
    assert "variable 'x' is assigned a float64 here" in str(e)


def test_a_global_assigned_in_the_function_is_not_a_constant():
    """``SCALE = ...`` makes the name local (Python's scoping): its test is a run-time one."""
    e = compile_error("SCALE = 3\ndef k(out, x):\n    SCALE = out[0]\n    if SCALE:\n        x = 1.5\n    out[0] = x\n",
                      [T.Array(T.float64, 1), T.Array(T.float64, 1)])
    assert "variable 'x' is assigned a float64 here" in str(e)
