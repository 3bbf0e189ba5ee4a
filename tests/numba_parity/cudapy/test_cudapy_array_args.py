"""numba-cuda's ``tests/cudapy/test_array_args.py`` (see conftest.py): arrays and tuples of arrays as
arguments."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_array_args_device_function_of_array():
    # test_array_args.py TestCudaArrayArg.test_array_ary
    @cuda.jit("double(double[:],int64)", device=True, inline=True)
    def device_function(a, c):
        return a[c]

    @cuda.jit("void(double[:],double[:])")
    def kernel(x, y):
        i = cuda.grid(1)
        y[i] = device_function(x, i)

    x = np.arange(10, dtype=np.double)
    y = np.zeros_like(x)
    kernel[10, 1](x, y)
    assert np.all(x == y)


def test_array_args_tuples():
    # test_array_args.py test_unituple / test_tuple / test_namedunituple / test_namedtuple /
    # test_empty_tuple / test_tuple_of_empty_tuples / test_tuple_of_tuples /
    # test_tuple_of_tuples_and_scalars / test_tuple_of_arrays / test_tuple_of_array_scalar_tuple
    @cuda.jit
    def f_uni(r, x):
        r[0] = x[0]
        r[1] = x[1]
        r[2] = x[2]

    r = np.zeros(3, dtype=np.int64)
    f_uni[1, 1](r, (1, 2, 3))
    assert r.tolist() == [1, 2, 3]

    @cuda.jit
    def f_tup(r1, r2, x):
        r1[0] = x[0]
        r1[1] = x[1]
        r1[2] = x[2]
        r2[0] = x[3]
        r2[1] = x[4]
        r2[2] = x[5]

    r1 = np.zeros(3, dtype=np.int64)
    r2 = np.zeros(3, dtype=np.float64)
    f_tup[1, 1](r1, r2, (1, 2, 3, 4.5, 5.5, 6.5))
    assert r1.tolist() == [1, 2, 3] and r2.tolist() == [4.5, 5.5, 6.5]

    @cuda.jit
    def f_nuni(r, x):
        r[0] = x.x
        r[1] = x.y

    Point = namedtuple("Point", ("x", "y"))
    r = np.zeros(2, dtype=np.int64)
    f_nuni[1, 1](r, Point(1, 2))
    assert r.tolist() == [1, 2]

    @cuda.jit
    def f_ntup(r1, r2, x):
        r1[0] = x.x
        r1[1] = x.y
        r2[0] = x.r

    Point3 = namedtuple("Point3", ("x", "y", "r"))
    r1 = np.zeros(2, dtype=np.int64)
    r2 = np.zeros(1, dtype=np.float64)
    f_ntup[1, 1](r1, r2, Point3(1, 2, 2.236))
    assert r1.tolist() == [1, 2] and r2[0] == 2.236

    @cuda.jit
    def f_len(r, x):
        r[0] = len(x)

    r = np.ones(1, dtype=np.int64)
    f_len[1, 1](r, tuple())
    assert r[0] == 0

    @cuda.jit
    def f_empties(r, x):
        r[0] = len(x)
        r[1] = len(x[0])

    r = np.ones(2, dtype=np.int64)
    f_empties[1, 1](r, ((), (), ()))
    assert r.tolist() == [3, 0]

    @cuda.jit
    def f_tt(r, x):
        r[0] = len(x)
        r[1] = len(x[0])
        r[2] = len(x[1])
        r[3] = len(x[2])
        r[4] = x[1][0]
        r[5] = x[1][1]
        r[6] = x[2][0]
        r[7] = x[2][1]
        r[8] = x[2][2]

    r = np.ones(9, dtype=np.int64)
    f_tt[1, 1](r, ((), (5, 6), (8, 9, 10)))
    assert r.tolist() == [3, 0, 2, 3, 5, 6, 8, 9, 10]

    @cuda.jit
    def f_tts(r, x):
        r[0] = len(x)
        r[1] = len(x[0])
        r[2] = x[0][0]
        r[3] = x[0][1]
        r[4] = x[0][2]
        r[5] = x[1]

    r = np.ones(9, dtype=np.int64)
    f_tts[1, 1](r, ((6, 5, 4), 7))
    assert r[:6].tolist() == [2, 3, 6, 5, 4, 7]

    @cuda.jit
    def f_arrs(x):
        i = cuda.grid(1)
        if i < len(x[0]):
            x[0][i] = x[1][i] + x[2][i]

    x0 = np.zeros(10)
    x1 = np.ones_like(x0)
    x2 = x1 * 3
    f_arrs[1, 10]((x0, x1, x2))
    np.testing.assert_equal(x0, x1 + x2)

    @cuda.jit
    def f_mixed(r, x):
        r[0] = x[0][0]
        r[1] = x[0][1]
        r[2] = x[1]
        r[3] = x[2][0]
        r[4] = x[2][1]

    z = np.arange(2, dtype=np.int64)
    r = np.zeros(5, dtype=np.int64)
    f_mixed[1, 1](r, (2 * z, 10, (4, 3)))
    assert r.tolist() == [0, 2, 10, 4, 3]
