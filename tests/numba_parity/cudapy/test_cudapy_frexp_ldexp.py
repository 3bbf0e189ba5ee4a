"""numba-cuda's ``tests/cudapy/test_frexp_ldexp.py`` (see conftest.py): math.frexp and math.ldexp for
float32/float64."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


@pytest.mark.parametrize("nptype,nbtype", [(np.float32, cuda.float32), (np.float64, cuda.float64)])
def test_frexp_ldexp(nptype, nbtype):
    # test_frexp_ldexp.py test_frexp_f4/_f8 and test_ldexp_f4/_f8
    def simple_frexp(aryx, aryexp, arg):
        aryx[0], aryexp[0] = math.frexp(arg)

    def simple_ldexp(aryx, arg, exp):
        aryx[0] = math.ldexp(arg, exp)

    compiled = cuda.jit(cuda.void(nbtype[:], cuda.int32[:], nbtype))(simple_frexp)
    aryx = np.zeros(1, dtype=nptype)
    aryexp = np.zeros(1, dtype=np.int32)
    compiled[1, 1](aryx, aryexp, 3.1415)
    np.testing.assert_array_equal(aryx, nptype(0.785375))
    assert aryexp[0] == 2
    compiled[1, 1](aryx, aryexp, np.inf)
    np.testing.assert_array_equal(aryx, nptype(np.inf))
    assert aryexp[0] == 0
    compiled[1, 1](aryx, aryexp, np.nan)
    np.testing.assert_array_equal(aryx, nptype(np.nan))
    assert aryexp[0] == 0

    compiled = cuda.jit(cuda.void(nbtype[:], nbtype, cuda.int32))(simple_ldexp)
    compiled[1, 1](aryx, 0.785375, 2)
    np.testing.assert_array_equal(aryx, nptype(3.1415))
    compiled[1, 1](aryx, np.inf, 2)
    np.testing.assert_array_equal(aryx, nptype(np.inf))
    compiled[1, 1](aryx, np.nan, 2)
    np.testing.assert_array_equal(aryx, nptype(np.nan))
