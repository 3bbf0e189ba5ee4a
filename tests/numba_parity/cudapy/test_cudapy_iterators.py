"""numba-cuda's ``tests/cudapy/test_iterators.py`` (see conftest.py): enumerate and zip (and their
nesting) over arrays in kernels."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def _twoarg(f):
    x = np.asarray((10, 9, 8, 7, 6))
    y = np.asarray((1, 2, 3, 4, 5))
    error = np.zeros(1, dtype=np.int32)
    f[1, 1](x, y, error)
    return error[0]


def test_iterators_enumerate():
    # test_iterators.py TestIterators.test_enumerate
    @cuda.jit
    def enumerator(x, error):
        count = 0
        for i, v in enumerate(x):
            if count != i:
                error[0] = 1
            if v != x[i]:
                error[0] = 2
            count += 1
        if count != len(x):
            error[0] = 3

    x = np.asarray((10, 9, 8, 7, 6))
    error = np.zeros(1, dtype=np.int32)
    enumerator[1, 1](x, error)
    assert error[0] == 0


def test_iterators_zip():
    # test_iterators.py TestIterators.test_zip
    @cuda.jit
    def zipper(x, y, error):
        i = 0
        for xv, yv in zip(x, y):
            if xv != x[i]:
                error[0] = 1
            if yv != y[i]:
                error[0] = 2
            i += 1
        if i != len(x):
            error[0] = 3

    assert _twoarg(zipper) == 0


def test_iterators_enumerate_zip():
    # test_iterators.py TestIterators.test_enumerate_zip
    @cuda.jit
    def enumerator_zipper(x, y, error):
        count = 0
        for i, (xv, yv) in enumerate(zip(x, y)):
            if i != count:
                error[0] = 1
            if xv != x[i]:
                error[0] = 2
            if yv != y[i]:
                error[0] = 3
            count += 1
        if count != len(x):
            error[0] = 4

    assert _twoarg(enumerator_zipper) == 0


def test_iterators_zip_enumerate():
    # test_iterators.py TestIterators.test_zip_enumerate
    @cuda.jit
    def zipper_enumerator(x, y, error):
        count = 0
        for (i, xv), yv in zip(enumerate(x), y):
            if i != count:
                error[0] = 1
            if xv != x[i]:
                error[0] = 2
            if yv != y[i]:
                error[0] = 3
            count += 1
        if count != len(x):
            error[0] = 4

    assert _twoarg(zipper_enumerator) == 0
