"""numba-cuda's ``tests/cudapy/test_boolean.py`` (see conftest.py): boolean arguments and branches."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def _boolean_func(A, vertial):
    if vertial:
        A[0] = 123
    else:
        A[0] = 321


def test_boolean():
    # test_boolean.py test_boolean
    func = cuda.jit("void(float64[:], bool_)")(_boolean_func)
    A = np.array([0], dtype="float64")
    func[1, 1](A, True)
    assert A[0] == 123
    func[1, 1](A, False)
    assert A[0] == 321
