"""numba-cuda's ``tests/cudapy/test_lists.py`` (see conftest.py): constant lists round-tripped through
kernels."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_lists_const_roundtrip():
    # test_lists.py ListTest.test_list_const_roundtrip
    lst = [1, 2, 3]

    @cuda.jit
    def kernel(out):
        for i in range(len(lst)):
            out[i] = lst[i]

    out = cuda.to_device(np.zeros(len(lst)))
    kernel[1, 1](out)
    assert out.copy_to_host().tolist() == lst
