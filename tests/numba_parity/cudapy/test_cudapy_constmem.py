"""numba-cuda's ``tests/cudapy/test_constmem.py`` (see conftest.py): cuda.const.array_like of arrays
and records."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


CONST_EMPTY = np.array([])


CONST1D = np.arange(10, dtype=np.float64) / 2.0


CONST2D = np.asfortranarray(np.arange(100, dtype=np.int32).reshape(10, 10))


CONST3D = (np.arange(5 * 5 * 5, dtype=np.complex64).reshape(5, 5, 5) + 1j) / 2j


CONST3BYTES = np.arange(3, dtype=np.uint8)


CONST_RECORD_EMPTY = np.array([], dtype=[("x", float), ("y", int)])


CONST_RECORD = np.array([(1.0, 2), (3.0, 4)], dtype=[("x", float), ("y", int)])


CONST_RECORD_ALIGN = np.array(
    [(1, 2, 3, 0xDEADBEEF, 8), (4, 5, 6, 0xBEEFDEAD, 10)],
    dtype=np.dtype(dtype=[("a", np.uint8), ("b", np.uint8), ("x", np.uint8), ("y", np.uint32),
                          ("z", np.uint8)], align=True))


def _cuconstEmpty(A):
    C = cuda.const.array_like(CONST_EMPTY)
    i = cuda.grid(1)
    A[i] = len(C)


def _cuconst(A):
    C = cuda.const.array_like(CONST1D)
    i = cuda.grid(1)
    A[i] = C[i] + 1.0


def _cuconst2d(A):
    C = cuda.const.array_like(CONST2D)
    i, j = cuda.grid(2)
    A[i, j] = C[i, j]


def _cuconst3d(A):
    C = cuda.const.array_like(CONST3D)
    i = cuda.threadIdx.x
    j = cuda.threadIdx.y
    k = cuda.threadIdx.z
    A[i, j, k] = C[i, j, k]


def _cuconstRecEmpty(A):
    C = cuda.const.array_like(CONST_RECORD_EMPTY)
    i = cuda.grid(1)
    A[i] = len(C)


def _cuconstRec(A, B):
    C = cuda.const.array_like(CONST_RECORD)
    i = cuda.grid(1)
    A[i] = C[i]["x"]
    B[i] = C[i]["y"]


def _cuconstRecAlign(A, B, C, D, E):
    Z = cuda.const.array_like(CONST_RECORD_ALIGN)
    i = cuda.grid(1)
    A[i] = Z[i]["a"]
    B[i] = Z[i]["b"]
    C[i] = Z[i]["x"]
    D[i] = Z[i]["y"]
    E[i] = Z[i]["z"]


def _cuconstAlign(z):
    a = cuda.const.array_like(CONST3BYTES)
    b = cuda.const.array_like(CONST1D)
    i = cuda.grid(1)
    z[i] = a[i] + b[i]


def test_constmem_arrays():
    # test_constmem.py test_const_array / _empty / _align / _array_2d / _array_3d (the PTX
    # load-width checks are NVIDIA-only)
    A = np.zeros_like(CONST1D)
    cuda.jit((cuda.float64[:],))(_cuconst)[2, 5](A)
    assert np.all(A == CONST1D + 1)

    A = np.full(1, fill_value=-1, dtype=np.int64)
    cuda.jit("void(int64[:])")(_cuconstEmpty)[1, 1](A)
    assert np.all(A == 0)

    A = np.full(3, fill_value=np.nan, dtype=float)
    cuda.jit("void(float64[:])")(_cuconstAlign)[1, 3](A)
    assert np.all(A == (CONST3BYTES + CONST1D[:3]))

    A = np.zeros_like(CONST2D, order="C")
    cuda.jit((cuda.int32[:, :],))(_cuconst2d)[(2, 2), (5, 5)](A)
    assert np.all(A == CONST2D)

    A = np.zeros_like(CONST3D, order="F")
    cuda.jit((cuda.complex64[:, :, :],))(_cuconst3d)[1, (5, 5, 5)](A)
    assert np.all(A == CONST3D)


def test_constmem_records():
    # test_constmem.py test_const_record_empty / test_const_record / test_const_record_align
    A = np.full(1, fill_value=-1, dtype=np.int64)
    cuda.jit("void(int64[:])")(_cuconstRecEmpty)[1, 1](A)
    assert np.all(A == 0)

    A = np.zeros(2, dtype=float)
    B = np.zeros(2, dtype=int)
    jcuconst = cuda.jit(_cuconstRec).specialize(A, B)
    jcuconst[2, 1](A, B)
    np.testing.assert_allclose(A, CONST_RECORD["x"])
    np.testing.assert_allclose(B, CONST_RECORD["y"])

    arrs = [np.zeros(2, dtype=np.float64) for _ in range(5)]
    jcuconst = cuda.jit(_cuconstRecAlign).specialize(*arrs)
    jcuconst[2, 1](*arrs)
    for arr, f in zip(arrs, "abxyz"):
        np.testing.assert_allclose(arr, CONST_RECORD_ALIGN[f])
