"""numba-cuda's ``tests/cudapy/test_freevar.py`` (see conftest.py): a free variable as a shared array's
size and type."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_freevar_shared_array_size_and_type():
    # test_freevar.py TestFreeVar.test_freevar
    from pykern import float32

    size = 1024
    nbtype = float32

    @cuda.jit("(float32[::1], intp)")
    def foo(A, i):
        sdata = cuda.shared.array(size, dtype=nbtype)
        sdata[i] = A[i] + 1
        A[i] = sdata[i]

    A = np.arange(2, dtype="float32")
    foo[1, 1](A, 0)
    assert A.tolist() == [1.0, 1.0]
