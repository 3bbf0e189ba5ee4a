"""numba.cuda programs of the fifth probe round, run as written (``import pykern as cuda``) on the
cpu target. Expected values are numba 0.68's (njit of the same kernel bodies, CUDA's numpy error
model where it matters), recorded literally: the tests do not need numba.

The first round fixed wrong answers where pykern's typing left numba's: unary ``-``/``~`` on
small integers (computed in the operand's type, then widened), ``int()`` of an integer (keeps its
type), ``float32 ** int`` (float32, by numba's repeated squaring: bit-exact) and ``uint16`` with
``float32`` (float64 in numba, float32 in numpy)."""

import math

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_uncached")


# ---- 1. unary - and ~ compute in the operand's type, then widen (numba's int_negate_impl)

@cuda.jit
def unary_small(a, out):
    out[0] = -int(a[0])
    out[1] = ~int(a[1])
    out[2] = -a[1]
    out[3] = ~a[1]
    out[4] = -np.uint8(5)
    out[5] = ~np.uint8(5)
    out[6] = -True
    out[7] = ~np.uint16(0)


def test_unary_minus_and_invert_of_small_ints_match_numba():
    out = np.zeros(8, np.float64)
    unary_small[1, 1](np.array([-128, 7], np.int8), out)
    assert out.tolist() == [-128.0, -8.0, -7.0, -8.0, 251.0, 250.0, -1.0, 65535.0]


@cuda.jit
def unary_unsigned(a, out):
    out[0] = -int(a[0])
    out[1] = ~int(a[0])
    out[2] = -a[0]


def test_unary_of_unsigned_wraps_in_its_width_then_widens():
    out = np.zeros(3, np.uint64)
    unary_unsigned[1, 1](np.array([5], np.uint8), out)
    assert out.tolist() == [251, 250, 251]
    out = np.zeros(3, np.uint64)
    unary_unsigned[1, 1](np.array([5], np.uint32), out)
    assert out.tolist() == [4294967291, 4294967290, 4294967291]


# ---- 3. float ** int: the float's type, numba's repeated squaring

@cuda.jit
def powers(a, n, out):
    out[0] = a[0] ** n[0]
    out[1] = a[0] ** -n[0]
    out[2] = a[0] ** 7
    out[3] = pow(a[0], n[0])
    x = a[0]
    x **= n[0]
    out[4] = x


def test_float32_to_an_int_power_is_float32_by_repeated_squaring():
    out = np.zeros(5, np.float64)
    powers[1, 1](np.array([1.1], np.float32), np.array([7], np.int32), out)
    # float32 results: 1.1f ** 7 in float64 would be 1.9487173956611588
    assert out.tolist() == [1.9487173557281494, 0.5131580233573914, 1.9487173557281494,
                            1.9487173557281494, 1.9487173557281494]
    out = np.zeros(5, np.float64)
    powers[1, 1](np.array([0.7], np.float32), np.array([23], np.uint8), out)
    # -n of a uint8 is uint64 233: 0.7f ** 233
    assert out.tolist() == [0.0002736873575486243, 8.087997885016162e-37, 0.08235429227352142,
                            0.0002736873575486243, 0.0002736873575486243]


# ---- 4. uint16 with float32 is float64 (numba), not numpy's float32

@cuda.jit
def uint16_float32(u, f, c, out, oc):
    out[0] = u[0] + f[0]
    out[1] = u[0] * f[0]
    out[2] = f[0] / u[0]
    out[3] = u[0] - f[0]
    oc[0] = u[0] * c[0]


def test_uint16_with_float32_computes_in_float64():
    out, oc = np.zeros(4), np.zeros(1, np.complex128)
    uint16_float32[1, 1](np.array([3], np.uint16), np.array([0.1], np.float32),
                         np.array([0.1 + 0.2j], np.complex64), out, oc)
    assert out.tolist() == [3.100000001490116, 0.30000000447034836, 0.033333333830038704, 2.899999998509884]
    assert oc.tolist() == [0.30000000447034836 + 0.6000000089406967j]
