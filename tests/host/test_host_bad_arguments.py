"""Bad arguments that used to be accepted silently: ``reduce(a, size=-1)`` reduced ``a[:-1]``,
``reduce(a, res=<zero-size array>)`` wrote the result nowhere. Both are refused before
anything runs."""

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


@cuda.reduce
def _sum(a, b):
    return a + b


@pytest.mark.parametrize("size", [-1, -10, 11])
def test_reduce_size_outside_the_array_is_a_value_error(size):
    with pytest.raises(ValueError, match=f"size={size}"):
        _sum(np.arange(10.0), size=size)


@pytest.mark.parametrize("size", [2.5, "3", True])
def test_reduce_size_that_is_no_integer_is_a_type_error(size):
    with pytest.raises(TypeError, match="size must be an integer"):
        _sum(np.arange(10.0), size=size)


def test_reduce_sizes_within_the_array_still_reduce_the_first_elements():
    a = np.arange(10.0)
    assert _sum(a, size=0) == 0.0 and _sum(a, size=3) == 3.0 and _sum(a, size=10) == 45.0
    assert _sum(a, size=np.int32(4)) == 6.0


@pytest.mark.parametrize("res", [np.zeros(0), np.zeros((0, 3)), "device"])
def test_reduce_into_a_zero_size_result_is_a_value_error(res):
    if isinstance(res, str):
        res = cuda.to_device(np.zeros(0))
    with pytest.raises(ValueError, match="at least one element"):
        _sum(np.arange(10.0), res=res)
    with pytest.raises(ValueError, match="at least one element"):
        _sum(np.zeros(0), res=res)  # the empty array's init has nowhere to go either


def test_reduce_into_a_result_array_writes_its_first_element():
    res = np.full(3, -1.0)
    assert _sum(np.arange(10.0), res=res) is None
    assert res.tolist() == [45.0, -1.0, -1.0]
