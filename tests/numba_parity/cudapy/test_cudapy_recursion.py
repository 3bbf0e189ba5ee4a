"""numba-cuda's ``tests/cudapy/test_recursion.py`` (see conftest.py): recursive device functions and
runaway recursion."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


@cuda.jit("i8(i8)", device=True)
def _fib1(n):
    if n < 2:
        return n
    return _fib1(n - 1) + _fib1(n - 2)


def _make_fib2():
    @cuda.jit("i8(i8)", device=True)
    def fib2(n):
        if n < 2:
            return n
        return fib2(n - 1) + fib2(n - 2)

    return fib2


@cuda.jit
def _fib3(n):
    if n < 2:
        return n
    return _fib3(n - 1) + _fib3(n - 2)


@cuda.jit
def _runaway_self(x):
    return _runaway_self(x)


@pytest.mark.parametrize("which", ["fib1", "fib2", "fib3"])
def test_recursion_fib(which):
    # test_recursion.py TestSelfRecursion.test_global_explicit_sig / test_inner_explicit_sig /
    # test_global_implicit_sig (recursion_usecases.fib1/fib2/fib3)
    cfunc = {"fib1": _fib1, "fib2": _make_fib2(), "fib3": _fib3}[which]

    @cuda.jit
    def kernel(r, x):
        r[0] = cfunc(x[0])

    x = np.asarray([10], dtype=np.int64)
    r = np.zeros_like(x)
    kernel[1, 1](r, x)
    assert r[0] == 55 and r.dtype == np.int64


def test_recursion_runaway():
    # test_recursion.py TestSelfRecursion.test_runaway
    from pykern.core.errors import CompileError

    with pytest.raises(CompileError, match="cannot type infer runaway recursion"):
        @cuda.jit("void()")
        def kernel():
            _runaway_self(1)
