"""numba-cuda's ``tests/cudapy/test_overload.py`` (see conftest.py): @overload for generic and cuda
targets, calls between them, default values."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda
from pykern.numba_compat.extending import overload

pytestmark = pytest.mark.usefixtures("cpu_target")


def generic_func_1():
    pass


def cuda_func_1():
    pass


def generic_func_2():
    pass


def cuda_func_2():
    pass


def generic_calls_generic():
    pass


def generic_calls_cuda():
    pass


def cuda_calls_generic():
    pass


def cuda_calls_cuda():
    pass


def target_overloaded():
    pass


def generic_calls_target_overloaded():
    pass


def cuda_calls_target_overloaded():
    pass


def target_overloaded_calls_target_overloaded():
    pass


def default_values_and_kwargs():
    pass


GENERIC_FUNCTION_1 = 2
CUDA_FUNCTION_1 = 3
GENERIC_FUNCTION_2 = 5
CUDA_FUNCTION_2 = 7
GENERIC_CALLS_GENERIC = 11
GENERIC_CALLS_CUDA = 13
CUDA_CALLS_GENERIC = 17
CUDA_CALLS_CUDA = 19
GENERIC_TARGET_OL = 23
CUDA_TARGET_OL = 29
GENERIC_CALLS_TARGET_OL = 31
CUDA_CALLS_TARGET_OL = 37
GENERIC_TARGET_OL_CALLS_TARGET_OL = 41
CUDA_TARGET_OL_CALLS_TARGET_OL = 43


@overload(generic_func_1, target="generic")
def _ol_generic_func_1(x):
    def impl(x):
        x[0] *= GENERIC_FUNCTION_1
    return impl


@overload(cuda_func_1, target="cuda")
def _ol_cuda_func_1(x):
    def impl(x):
        x[0] *= CUDA_FUNCTION_1
    return impl


@overload(generic_func_2, target="generic")
def _ol_generic_func_2(x):
    def impl(x):
        x[0] *= GENERIC_FUNCTION_2
    return impl


@overload(cuda_func_2, target="cuda")
def _ol_cuda_func(x):
    def impl(x):
        x[0] *= CUDA_FUNCTION_2
    return impl


@overload(generic_calls_generic, target="generic")
def _ol_generic_calls_generic(x):
    def impl(x):
        x[0] *= GENERIC_CALLS_GENERIC
        generic_func_1(x)
    return impl


@overload(generic_calls_cuda, target="generic")
def _ol_generic_calls_cuda(x):
    def impl(x):
        x[0] *= GENERIC_CALLS_CUDA
        cuda_func_1(x)
    return impl


@overload(cuda_calls_generic, target="cuda")
def _ol_cuda_calls_generic(x):
    def impl(x):
        x[0] *= CUDA_CALLS_GENERIC
        generic_func_1(x)
    return impl


@overload(cuda_calls_cuda, target="cuda")
def _ol_cuda_calls_cuda(x):
    def impl(x):
        x[0] *= CUDA_CALLS_CUDA
        cuda_func_1(x)
    return impl


@overload(target_overloaded, target="generic")
def _ol_target_overloaded_generic(x):
    def impl(x):
        x[0] *= GENERIC_TARGET_OL
    return impl


@overload(target_overloaded, target="cuda")
def _ol_target_overloaded_cuda(x):
    def impl(x):
        x[0] *= CUDA_TARGET_OL
    return impl


@overload(generic_calls_target_overloaded, target="generic")
def _ol_generic_calls_target_overloaded(x):
    def impl(x):
        x[0] *= GENERIC_CALLS_TARGET_OL
        target_overloaded(x)
    return impl


@overload(cuda_calls_target_overloaded, target="cuda")
def _ol_cuda_calls_target_overloaded(x):
    def impl(x):
        x[0] *= CUDA_CALLS_TARGET_OL
        target_overloaded(x)
    return impl


@overload(target_overloaded_calls_target_overloaded, target="generic")
def _ol_generic_calls_target_overloaded_generic(x):
    def impl(x):
        x[0] *= GENERIC_TARGET_OL_CALLS_TARGET_OL
        target_overloaded(x)
    return impl


@overload(target_overloaded_calls_target_overloaded, target="cuda")
def _ol_generic_calls_target_overloaded_cuda(x):
    def impl(x):
        x[0] *= CUDA_TARGET_OL_CALLS_TARGET_OL
        target_overloaded(x)
    return impl


@overload(default_values_and_kwargs)
def _ol_default_values_and_kwargs(out, x, y=5, z=6):
    def impl(out, x, y=5, z=6):
        out[0], out[1] = x + y, z
    return impl


def _ovk_generic(x):
    generic_func_1(x)


def _ovk_cuda(x):
    cuda_func_1(x)


def _ovk_generic_and_cuda(x):
    generic_func_1(x)
    cuda_func_1(x)


def _ovk_two_generic(x):
    generic_func_1(x)
    generic_func_2(x)


def _ovk_two_cuda(x):
    cuda_func_1(x)
    cuda_func_2(x)


def _ovk_generic_calls_generic(x):
    generic_calls_generic(x)


def _ovk_generic_calls_cuda(x):
    generic_calls_cuda(x)


def _ovk_cuda_calls_generic(x):
    cuda_calls_generic(x)


def _ovk_cuda_calls_cuda(x):
    cuda_calls_cuda(x)


def _ovk_target_overloaded(x):
    target_overloaded(x)


def _ovk_generic_calls_target_overloaded(x):
    generic_calls_target_overloaded(x)


def _ovk_cuda_calls_target_overloaded(x):
    cuda_calls_target_overloaded(x)


def _ovk_target_overloaded_calls_target_overloaded(x):
    target_overloaded_calls_target_overloaded(x)


_OVERLOAD_CASES = [
    (_ovk_generic, GENERIC_FUNCTION_1),
    (_ovk_cuda, CUDA_FUNCTION_1),
    (_ovk_generic_and_cuda, GENERIC_FUNCTION_1 * CUDA_FUNCTION_1),
    (_ovk_two_generic, GENERIC_FUNCTION_1 * GENERIC_FUNCTION_2),
    (_ovk_two_cuda, CUDA_FUNCTION_1 * CUDA_FUNCTION_2),
    (_ovk_generic_calls_generic, GENERIC_CALLS_GENERIC * GENERIC_FUNCTION_1),
    (_ovk_generic_calls_cuda, GENERIC_CALLS_CUDA * CUDA_FUNCTION_1),
    (_ovk_cuda_calls_generic, CUDA_CALLS_GENERIC * GENERIC_FUNCTION_1),
    (_ovk_cuda_calls_cuda, CUDA_CALLS_CUDA * CUDA_FUNCTION_1),
    (_ovk_target_overloaded, CUDA_TARGET_OL),
    (_ovk_generic_calls_target_overloaded, GENERIC_CALLS_TARGET_OL * CUDA_TARGET_OL),
    (_ovk_cuda_calls_target_overloaded, CUDA_CALLS_TARGET_OL * CUDA_TARGET_OL),
    (_ovk_target_overloaded_calls_target_overloaded, CUDA_TARGET_OL_CALLS_TARGET_OL * CUDA_TARGET_OL),
]


@pytest.mark.parametrize("kernel,expected", _OVERLOAD_CASES, ids=[k.__name__[5:] for k, _ in _OVERLOAD_CASES])
def test_overload_targets(kernel, expected):
    # test_overload.py TestOverload.test_generic .. test_target_overloaded_calls_target_overloaded
    # (the njit half of the last one is numba's CPU target, not part of numba.cuda)
    x = np.ones(1, dtype=np.int32)
    cuda.jit(kernel)[1, 1](x)
    assert x[0] == expected


def test_overload_default_values_and_kwargs():
    # test_overload.py TestOverload.test_default_values_and_kwargs
    @cuda.jit()
    def kernel(a, b, out):
        default_values_and_kwargs(out, a, z=b)

    out = np.empty(2, dtype=np.int64)
    kernel[1, 1](1, 2, out)
    assert tuple(out) == (6, 2)
