"""numba-cuda's ``tests/cudapy/test_localmem.py`` (see conftest.py): local arrays: shapes, complex
elements, dtype spellings, fp16 sizes."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def _culocal(A, B):
    C = cuda.local.array(1000, dtype=cuda.int32)
    for i in range(C.shape[0]):
        C[i] = A[i]
    for i in range(C.shape[0]):
        B[i] = C[i]


def _culocalcomplex(A, B):
    C = cuda.local.array(100, dtype=cuda.complex128)
    for i in range(C.shape[0]):
        C[i] = A[i]
    for i in range(C.shape[0]):
        B[i] = C[i]


def _culocal1tuple(A, B):
    C = cuda.local.array((5,), dtype=cuda.int32)
    for i in range(C.shape[0]):
        C[i] = A[i]
    for i in range(C.shape[0]):
        B[i] = C[i]


def test_localmem_local_array():
    # test_localmem.py TestCudaLocalMem.test_local_array (".local in the PTX" is NVIDIA-only)
    jculocal = cuda.jit((cuda.int32[:], cuda.int32[:]))(_culocal)
    A = np.arange(1000, dtype="int32")
    B = np.zeros_like(A)
    jculocal[1, 1](A, B)
    assert np.all(A == B)


def test_localmem_local_array_1_tuple():
    # test_localmem.py TestCudaLocalMem.test_local_array_1_tuple
    jculocal = cuda.jit("void(int32[:], int32[:])")(_culocal1tuple)
    A = np.arange(5, dtype="int32")
    B = np.zeros_like(A)
    jculocal[1, 1](A, B)
    assert np.all(A == B)


def test_localmem_local_array_complex():
    # test_localmem.py TestCudaLocalMem.test_local_array_complex
    jculocalcomplex = cuda.jit("void(complex128[:], complex128[:])")(_culocalcomplex)
    A = (np.arange(100, dtype="complex128") - 1) / 2j
    B = np.zeros_like(A)
    jculocalcomplex[1, 1](A, B)
    assert np.all(A == B)


@pytest.mark.parametrize("dtype", [cuda.int32, np.int32, "int32"])
def test_localmem_dtype_spellings(dtype):
    # test_localmem.py test_numba_dtype / test_numpy_dtype / test_string_dtype (numba reads the
    # typemap; here the value round-trips through the int32 local array)
    @cuda.jit(cuda.void(cuda.int32[::1]))
    def f(x):
        l = cuda.local.array(10, dtype=dtype)
        l[0] = x[0] + 7
        x[0] = l[0]

    x = np.array([5], dtype=np.int32)
    f[1, 1](x)
    assert x[0] == 12


def test_localmem_invalid_string_dtype():
    # test_localmem.py TestCudaLocalMem.test_invalid_string_dtype
    from pykern.core.errors import CompileError

    with pytest.raises(CompileError):
        @cuda.jit(cuda.void(cuda.int32[::1]))
        def f(x):
            l = cuda.local.array(10, dtype="int33")
            l[0] = x[0]
            x[0] = l[0]

        f[1, 1](np.zeros(1, np.int32))


@pytest.mark.parametrize("ty", [cuda.float16, np.float16])
def test_localmem_fp16_size(ty):
    # test_localmem.py TestCudaLocalMem.test_issue_fp16_support
    @cuda.jit
    def s(a):
        arr = cuda.local.array(2, dtype=ty)
        a[0] = arr.size

    result = np.zeros(1, dtype=np.float16)
    s[1, 1](result)
    assert result[0] == 2
