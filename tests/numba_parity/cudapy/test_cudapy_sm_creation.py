"""numba-cuda's ``tests/cudapy/test_sm_creation.py`` (see conftest.py): shared arrays from global
constant shapes, invalid shapes, dtype spellings."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


GLOBAL_CONSTANT = 5


GLOBAL_CONSTANT_2 = 6


GLOBAL_CONSTANT_TUPLE = 5, 6


def _udt_global_constants(A):
    sa = cuda.shared.array(shape=GLOBAL_CONSTANT, dtype=cuda.float32)
    i = cuda.grid(1)
    sa[i] = 7
    A[i] = sa[i]


def _udt_global_build_tuple(A):
    sa = cuda.shared.array(shape=(GLOBAL_CONSTANT, GLOBAL_CONSTANT_2), dtype=cuda.float32)
    i, j = cuda.grid(2)
    sa[i, j] = 8
    A[i, j] = sa[i, j] + sa.shape[0] * 10 + sa.shape[1]


def _udt_global_build_list(A):
    sa = cuda.shared.array(shape=[GLOBAL_CONSTANT, GLOBAL_CONSTANT_2], dtype=cuda.float32)
    i, j = cuda.grid(2)
    A[i, j] = sa[i, j]


def _udt_global_constant_tuple(A):
    sa = cuda.shared.array(shape=GLOBAL_CONSTANT_TUPLE, dtype=cuda.float32)
    i, j = cuda.grid(2)
    sa[i, j] = 9
    A[i, j] = sa[i, j] + sa.shape[0] * 10 + sa.shape[1]


def _udt_invalid_1(A):
    sa = cuda.shared.array(shape=A[0], dtype=cuda.float32)
    i = cuda.grid(1)
    A[i] = sa[i]


def _udt_invalid_2(A):
    sa = cuda.shared.array(shape=(1, A[0]), dtype=cuda.float32)
    i, j = cuda.grid(2)
    A[i, j] = sa[i, j]


def _udt_invalid_3(A):
    sa = cuda.shared.array(shape=(1, A[0]), dtype=cuda.float32)
    i = cuda.grid(1)
    A[i] = sa[i, 0]


def test_sm_creation_global_constant_shapes():
    # test_sm_creation.py test_global_constants / test_global_build_tuple /
    # test_global_constant_tuple (numba only launches them, reading uninitialised shared
    # memory; here a value is stored first and the shapes are read back)
    a = np.array(100, dtype=np.float32, ndmin=1)
    cuda.jit((cuda.float32[:],))(_udt_global_constants)[1, 1](a)
    assert a[0] == 7
    a = np.array(100, dtype=np.float32, ndmin=1).reshape(1, 1)
    cuda.jit((cuda.float32[:, :],))(_udt_global_build_tuple)[1, 1](a)
    assert a[0, 0] == 8 + 56
    cuda.jit((cuda.float32[:, :],))(_udt_global_constant_tuple)[1, 1](a)
    assert a[0, 0] == 9 + 56


@pytest.mark.parametrize("fn,sig", [(_udt_global_build_list, (cuda.float32[:, :],)),
                                    (_udt_invalid_1, (cuda.float32[:],)),
                                    (_udt_invalid_2, (cuda.float32[:, :],)),
                                    (_udt_invalid_1, (cuda.int32[:],)),
                                    (_udt_invalid_3, (cuda.int32[:],))])
def test_sm_creation_invalid_shapes_fail_at_jit(fn, sig):
    # test_sm_creation.py test_global_build_list / test_invalid_1 .. test_invalid_4: numba's
    # TypingError is raised by cuda.jit(signature) itself; pykern's is a located CompileError
    from pykern.core.errors import CompileError

    with pytest.raises(CompileError):
        cuda.jit(sig)(fn)


@pytest.mark.parametrize("dtype", [cuda.int32, np.int32, "int32"])
def test_sm_creation_dtype_spellings(dtype):
    # test_sm_creation.py test_numba_dtype / test_numpy_dtype / test_string_dtype (numba reads
    # the typemap; here the int32 value round-trips, wrapping as int32 does)
    @cuda.jit(cuda.void(cuda.int32[::1]))
    def f(x):
        s = cuda.shared.array(10, dtype=dtype)
        s[0] = x[0] + 1
        x[0] = s[0]

    x = np.array([2**31 - 1], dtype=np.int32)
    f[1, 1](x)
    assert x[0] == -(2**31)


def test_sm_creation_invalid_string_dtype_fails_at_jit():
    # test_sm_creation.py test_invalid_string_dtype (numba: "Invalid NumPy dtype specified:
    # 'int33'" from the decorator)
    from pykern.core.errors import CompileError

    with pytest.raises(CompileError, match="Invalid NumPy dtype specified: 'int33'"):
        @cuda.jit(cuda.void(cuda.int32[::1]))
        def f(x):
            s = cuda.shared.array(10, dtype="int33")
            s[0] = x[0]
            x[0] = s[0]
