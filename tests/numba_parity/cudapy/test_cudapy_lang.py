"""numba-cuda's ``tests/cudapy/test_lang.py`` (see conftest.py): enumerate/zip over global tuples,
kernel API calls in several blocks."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda
from pykern import float64

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_lang_enumerate_global_tuple():
    # test_lang.py TestLang.test_enumerate
    tup = (1.0, 2.5, 3.0)

    @cuda.jit("void(float64[:])")
    def foo(a):
        for i, v in enumerate(tup):
            a[i] = v

    a = np.zeros(len(tup))
    foo[1, 1](a)
    assert np.all(a == tup)


def test_lang_zip_global_tuples():
    # test_lang.py TestLang.test_zip
    t1 = (1, 2, 3)
    t2 = (4.5, 5.6, 6.7)

    @cuda.jit("void(float64[:])")
    def foo(a):
        c = 0
        for i, j in zip(t1, t2):
            c += i + j
        a[0] = c

    a = np.zeros(1)
    foo[1, 1](a)
    assert np.all(a == (np.array(t1) + np.array(t2)).sum())


def test_lang_issue_872_kernel_api_in_several_blocks():
    # test_lang.py TestLang.test_issue_872 (numba only launches it; the values are checked here)
    @cuda.jit("void(float64[:,:])")
    def cuda_kernel_api_in_multiple_blocks(ary):
        for i in range(2):
            tx = cuda.threadIdx.x
        for j in range(3):
            ty = cuda.threadIdx.y
        sm = cuda.shared.array((2, 3), float64)
        sm[tx, ty] = 1.0
        ary[tx, ty] = sm[tx, ty]

    a = np.zeros((2, 3))
    cuda_kernel_api_in_multiple_blocks[1, (2, 3)](a)
    assert np.all(a == 1.0)
