"""numba-cuda's ``tests/cudapy/test_vector_type.py`` (see conftest.py): every vector type
(int8..uint64, float32, float64; 1 to 4 elements) built from scalars and from every combination
of smaller vectors, read back through ``.x .y .z .w``; and the C-name aliases. numba's test walks
its internal ``vector_types`` table; pykern's is ``pykern.lang.stubs.VECTOR_TYPES``."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda
from pykern import types
from pykern.lang.stubs import VECTOR_TYPES

pytestmark = pytest.mark.usefixtures("cpu_target")

# one entry per type (the table also holds each alias under its own name)
VTYPES = sorted({id(v): v for v in VECTOR_TYPES.values()}.values(), key=lambda v: v.__name__)


def make_kernel(vobj):
    base_type = getattr(types, vobj.base)

    def kernel_1elem(res):
        v = vobj(base_type(0))
        res[0] = v.x

    def kernel_2elem(res):
        v = vobj(base_type(0), base_type(1))
        res[0] = v.x
        res[1] = v.y

    def kernel_3elem(res):
        v = vobj(base_type(0), base_type(1), base_type(2))
        res[0] = v.x
        res[1] = v.y
        res[2] = v.z

    def kernel_4elem(res):
        v = vobj(base_type(0), base_type(1), base_type(2), base_type(3))
        res[0] = v.x
        res[1] = v.y
        res[2] = v.z
        res[3] = v.w

    return cuda.jit({1: kernel_1elem, 2: kernel_2elem, 3: kernel_3elem, 4: kernel_4elem}[vobj.n])


def make_fancy_creation_kernel(vobj):
    base_type = getattr(types, vobj.base)
    v1 = getattr(cuda, f"{vobj.__name__[:-1]}1")
    v2 = getattr(cuda, f"{vobj.__name__[:-1]}2")
    v3 = getattr(cuda, f"{vobj.__name__[:-1]}3")
    v4 = getattr(cuda, f"{vobj.__name__[:-1]}4")

    def kernel(res):
        one = base_type(1.0)
        two = base_type(2.0)
        three = base_type(3.0)
        four = base_type(4.0)
        j = 0
        f1_1 = v1(one)
        f1_2 = v1(f1_1)
        res[0] = f1_1.x
        res[1] = f1_2.x
        j += 2

        f2_1 = v2(two, three)
        f2_2 = v2(f1_1, three)
        f2_3 = v2(two, f1_1)
        f2_4 = v2(f1_1, f1_1)
        f2_5 = v2(f2_1)
        for v in (f2_1, f2_2, f2_3, f2_4, f2_5):
            res[j] = v.x
            res[j + 1] = v.y
            j += 2

        f3_1 = v3(f2_1, one)
        f3_2 = v3(f2_1, f1_1)
        f3_3 = v3(one, f2_1)
        f3_4 = v3(f1_1, f2_1)
        f3_5 = v3(one, two, three)
        f3_6 = v3(f1_1, two, three)
        f3_7 = v3(one, f1_1, three)
        f3_8 = v3(one, two, f1_1)
        f3_9 = v3(f1_1, f1_1, three)
        f3_10 = v3(one, f1_1, f1_1)
        f3_11 = v3(f1_1, two, f1_1)
        f3_12 = v3(f1_1, f1_1, f1_1)
        f3_13 = v3(f3_1)
        for v in (f3_1, f3_2, f3_3, f3_4, f3_5, f3_6, f3_7, f3_8, f3_9, f3_10, f3_11, f3_12, f3_13):
            res[j] = v.x
            res[j + 1] = v.y
            res[j + 2] = v.z
            j += 3

        f4_1 = v4(one, two, three, four)
        f4_2 = v4(f1_1, two, three, four)
        f4_3 = v4(one, f1_1, three, four)
        f4_4 = v4(one, two, f1_1, four)
        f4_5 = v4(one, two, three, f1_1)
        f4_6 = v4(f1_1, f1_1, three, four)
        f4_7 = v4(f1_1, two, f1_1, four)
        f4_8 = v4(f1_1, two, three, f1_1)
        f4_9 = v4(one, f1_1, f1_1, four)
        f4_10 = v4(one, f1_1, three, f1_1)
        f4_11 = v4(one, two, f1_1, f1_1)
        f4_12 = v4(f1_1, f1_1, f1_1, four)
        f4_13 = v4(f1_1, f1_1, three, f1_1)
        f4_14 = v4(f1_1, two, f1_1, f1_1)
        f4_15 = v4(one, f1_1, f1_1, f1_1)
        f4_16 = v4(f1_1, f1_1, f1_1, f1_1)
        f4_17 = v4(f2_1, two, three)
        f4_18 = v4(f2_1, f1_1, three)
        f4_19 = v4(f2_1, two, f1_1)
        f4_20 = v4(f2_1, f1_1, f1_1)
        f4_21 = v4(one, f2_1, three)
        f4_22 = v4(f1_1, f2_1, three)
        f4_23 = v4(one, f2_1, f1_1)
        f4_24 = v4(f1_1, f2_1, f1_1)
        f4_25 = v4(one, four, f2_1)
        f4_26 = v4(f1_1, four, f2_1)
        f4_27 = v4(one, f1_1, f2_1)
        f4_28 = v4(f1_1, f1_1, f2_1)
        f4_29 = v4(f2_1, f2_1)
        f4_30 = v4(f3_1, four)
        f4_31 = v4(f3_1, f1_1)
        f4_32 = v4(four, f3_1)
        f4_33 = v4(f1_1, f3_1)
        f4_34 = v4(f4_1)
        for v in tuple((f4_1, f4_2, f4_3, f4_4, f4_5, f4_6, f4_7, f4_8, f4_9, f4_10, f4_11, f4_12,
                        f4_13, f4_14, f4_15, f4_16, f4_17, f4_18, f4_19, f4_20, f4_21, f4_22, f4_23,
                        f4_24, f4_25, f4_26, f4_27, f4_28, f4_29, f4_30, f4_31, f4_32, f4_33, f4_34)):
            res[j] = v.x
            res[j + 1] = v.y
            res[j + 2] = v.z
            res[j + 3] = v.w
            j += 4

    return cuda.jit(kernel)


FANCY_EXPECTED = [
    1, 1,
    2, 3, 1, 3, 2, 1, 1, 1, 2, 3,
    2, 3, 1, 2, 3, 1, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 1, 3, 1, 2, 1, 1, 1, 3, 1, 1, 1,
    1, 2, 1, 1, 1, 1, 2, 3, 1,
    1, 2, 3, 4, 1, 2, 3, 4, 1, 1, 3, 4, 1, 2, 1, 4, 1, 2, 3, 1, 1, 1, 3, 4, 1, 2, 1, 4, 1, 2, 3,
    1, 1, 1, 1, 4, 1, 1, 3, 1, 1, 2, 1, 1, 1, 1, 1, 4, 1, 1, 3, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 2, 3, 2, 3, 2, 3, 1, 3, 2, 3, 2, 1, 2, 3, 1, 1, 1, 2, 3, 3, 1, 2, 3, 3, 1, 2, 3, 1, 1,
    2, 3, 1, 1, 4, 2, 3, 1, 4, 2, 3, 1, 1, 2, 3, 1, 1, 2, 3, 2, 3, 2, 3, 2, 3, 1, 4, 2, 3, 1, 1,
    4, 2, 3, 1, 1, 2, 3, 1, 1, 2, 3, 4,
]


def test_basic():
    # test_vector_type.py TestCudaVectorType.test_basic
    @cuda.jit("void(float64[:])")
    def kernel(arr):
        v1 = cuda.float64x4(1.0, 3.0, 5.0, 7.0)
        v2 = cuda.short2(10, 11)
        arr[0] = v1.x
        arr[1] = v1.y
        arr[2] = v1.z
        arr[3] = v1.w
        arr[4] = v2.x
        arr[5] = v2.y

    res = np.zeros(6, dtype=np.float64)
    kernel[1, 1](res)
    assert np.allclose(res, [1.0, 3.0, 5.0, 7.0, 10, 11])


def test_vector_type_count():
    # numba-cuda's table: 10 base types x 1..4 elements
    assert len(VTYPES) == 40


@pytest.mark.parametrize("vobj", VTYPES, ids=lambda v: v.__name__)
def test_creation_readout(vobj):
    # test_vector_type.py TestCudaVectorType.test_creation_readout (one subtest per type)
    arr = np.zeros((vobj.n,))
    make_kernel(vobj)[1, 1](arr)
    np.testing.assert_almost_equal(arr, np.array(range(vobj.n)))


@pytest.mark.parametrize("vobj", VTYPES, ids=lambda v: v.__name__)
def test_fancy_creation_readout(vobj):
    # test_vector_type.py TestCudaVectorType.test_fancy_creation_readout
    expected = np.array(FANCY_EXPECTED)
    arr = np.zeros(expected.shape)
    make_fancy_creation_kernel(vobj)[1, 1](arr)
    np.testing.assert_almost_equal(arr, expected)


def test_vector_type_alias():
    # test_vector_type.py TestCudaVectorType.test_vector_type_alias
    for vobj in VTYPES:
        for alias in vobj.aliases:
            assert getattr(cuda, vobj.__name__) is getattr(cuda, alias)
