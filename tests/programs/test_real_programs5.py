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


# ---- 5. names real programs use: np.iinfo/np.finfo, max(a)/min(a), np.ndindex/np.ndenumerate

@cuda.jit
def xinfo(a, x, out, out32):
    out[0] = np.iinfo(np.int16).max
    out[1] = np.iinfo(a.dtype).min
    out[2] = np.iinfo(x).max
    out[3] = np.iinfo(np.int32).bits
    out[4] = np.finfo(np.float32).eps
    out[5] = np.finfo(np.float64).tiny
    out[6] = np.finfo(np.float32).max
    out[7] = np.finfo(np.float64).eps
    out32[0] = np.float32(1) + np.finfo(np.float32).eps
    out32[1] = np.finfo(np.float32).tiny
    out[8] = np.iinfo(np.uint64).max
    out[9] = np.finfo(np.float32).bits
    out[10] = np.iinfo(x).min - 1


def test_iinfo_and_finfo_of_types_arrays_and_values():
    out, o32 = np.zeros(11), np.zeros(2, np.float32)
    xinfo[1, 1](np.zeros(2, np.int8), np.uint16(3), out, o32)
    assert out.tolist() == [32767.0, -128.0, 65535.0, 32.0, 1.1920928955078125e-07, 2.2250738585072014e-308,
                            3.4028234663852886e+38, 2.220446049250313e-16, 1.8446744073709552e+19, 32.0, -1.0]
    assert o32.tolist() == [1.0000001192092896, 1.1754943508222875e-38]


def test_iinfo_of_a_float_is_a_compile_error():
    @cuda.jit
    def bad(out):
        out[0] = np.iinfo(np.float32).max

    with pytest.raises(cuda.CompileError, match="iinfo"):
        bad[1, 1](np.zeros(1))


@cuda.jit
def builtin_extremes(a, out):
    out[0] = max(a)
    out[1] = min(a)


def test_builtin_max_min_of_a_1d_array_iterate_like_python():
    cases = [([3.0, -1.0, 7.0, np.nan], [7.0, -1.0]), ([np.nan, 3.0, -1.0], [np.nan, np.nan]),
             ([2.5], [2.5, 2.5])]
    for values, ref in cases:
        out = np.zeros(2)
        builtin_extremes[1, 1](np.array(values), out)
        np.testing.assert_array_equal(out, ref)
    out = np.zeros(2)
    builtin_extremes[1, 1](np.array([-0.0, 0.0]), out)
    assert np.signbit(out).tolist() == [True, True]  # 0.0 > -0.0 is false: the first zero stays
    out = np.zeros(2, np.int64)
    builtin_extremes[1, 1](np.array([3, -9, 7, 7], np.int16), out)
    assert out.tolist() == [7, -9]


def test_builtin_max_of_an_empty_array_raises_under_debug():
    @cuda.jit(debug=True)
    def extremes(a, out):
        out[0] = max(a)

    with pytest.raises(ValueError, match="max\\(\\) arg is an empty sequence"):
        extremes[1, 1](np.zeros(0), np.zeros(2))


@cuda.jit
def nd_loops(a, out, res):
    for idx in np.ndindex(a.shape):
        out[idx] = a[idx] * 2 + idx[1]
    t = 0.0
    for idx, v in np.ndenumerate(a):
        t += v * (idx[0] + 1) * (idx[1] + 2)
    for i in np.ndindex(3, 2):
        t += i[0] * 10 + i[1]
    for i in np.ndindex(4):
        t += i[0]
    for i in np.ndindex(*a.shape):
        t += i[0] - i[1]
    res[0] = t


@cuda.jit
def nd_enumerate3(a, res):
    t = 0
    for k, (idx, v) in enumerate(np.ndenumerate(a)):
        t += k * v + idx[2] * 100
    res[0] = t


def test_ndindex_and_ndenumerate_loops():
    a = np.arange(12.0).reshape(3, 4)
    out, res = np.zeros((3, 4)), np.zeros(1)
    nd_loops[1, 1](a, out, res)
    assert res[0] == 673.0 - 6  # the starred loop adds sum(i - j) over the 3x4 grid: -6
    assert out.tolist() == [[0.0, 3.0, 6.0, 9.0], [8.0, 11.0, 14.0, 17.0], [16.0, 19.0, 22.0, 25.0]]
    r = np.zeros(1, np.int64)
    nd_enumerate3[1, 1](np.arange(24, dtype=np.int32).reshape(2, 3, 4), r)
    assert r[0] == 7924


def test_cuda_types_and_from_pykern_import_cuda():
    from pykern import cuda as shim  # a numba program's `from numba import cuda`, with the import changed

    assert shim is cuda and shim.jit is cuda.jit
    assert cuda.types.int32 == cuda.int32  # numba.cuda.types is importable as an attribute


@cuda.jit(device=True)
def _branch_on_inverted_flag(out, flag):
    if ~flag:
        out[0] = 1
    else:
        out[0] = 2


@cuda.jit
def inverted_flag(out):
    _branch_on_inverted_flag(out, True)
    f = True
    out[1] = 1 if ~f else 2


def test_invert_of_a_constant_boolean_is_not_when_branches_are_pruned():
    """numba's ``~`` of a boolean is ``not``; the compile-time pruning of ``if ~flag`` used Python's
    ``~True`` (-2, true) and took the wrong branch (numba 0.68 njit: ``[2, 2]``)."""
    out = np.zeros(2, np.int64)
    inverted_flag[1, 1](out)
    assert out.tolist() == [2, 2]


@cuda.jit
def int_powers(a, b, out, small):
    for i in range(a.size):
        out[i] = a[i] ** b[i]
    small[0] = np.power(np.int8(a[0]), np.int8(b[0]))
    small[1] = np.power(np.int16(a[1]), np.int16(b[3]))


def test_zero_to_a_negative_integer_power_is_the_minimum_as_in_numba_cuda():
    """numba's int_power under CUDA's numpy error model (njit(error_model='numpy') of numba 0.68
    gives the same) returns ``-1 << (bits - 1)`` for ``0 ** negative`` instead of raising."""
    out, small = np.zeros(6, np.int64), np.zeros(2, np.int64)
    int_powers[1, 1](np.array([0, 0, 2, -1, 1, 0], np.int32), np.array([-1, -2, -1, -3, -7, 0], np.int32), out, small)
    assert out.tolist() == [-(2**63), -(2**63), 0, -1, 1, 1]
    assert small.tolist() == [-128, -32768]


# ---- 2. int() of an integer keeps its type

@cuda.jit
def int_keeps_type(u, out):
    out[0] = int(u[0]) > 0
    out[1] = int(u[0]) // 2
    out[2] = int(u[1]) * 2


def test_int_of_an_integer_keeps_its_type():
    """numba's int(uint64) is uint64 (it was an int64 conversion: 2**63 + 1 turned negative);
    ``// 2`` then follows the integer rule (uint64 with an int64 literal is int64). numba 0.68 njit
    gives ``[1.0, -4.611686018427388e+18, 8589934590.0]``."""
    out = np.zeros(3)
    int_keeps_type[1, 1](np.array([2**63 + 1, 2**32 - 1], np.uint64), out)
    assert out.tolist() == [1.0, -4.611686018427388e+18, 8589934590.0]


@cuda.jit
def negate_timedeltas(a, out):
    out[0] = -a[0]
    out[1] = -a[1]
    out[2] = -a[2]
    out[3] = +a[0]


def test_unary_minus_of_a_timedelta_is_a_timedelta():
    """numba 0.68 njit: ``[-5, 3, 'NaT', 5]`` seconds (it was a CompileError: the integer rule's
    widening tried to make the timedelta an int64)."""
    a = np.array([5, -3, "NaT"], "timedelta64[s]")
    out = np.zeros(4, "timedelta64[s]")
    negate_timedeltas[1, 1](a, out)
    assert out.tolist() == np.array([-5, 3, "NaT", 5], "timedelta64[s]").tolist()


@cuda.jit
def unsigned_unary_in_expressions(a, b, c, out):
    for i in range(a.size):
        x = a[i]
        y = b[i]
        z = c[i]
        out[i, 0] = -x + 1
        out[i, 1] = ~y >> 4
        out[i, 2] = -z * 2
        n = -x
        out[i, 3] = n % 1000
        out[i, 4] = (~x) // 3
        out[i, 5] = -x < 0
        out[i, 6] = -(x + y)
        out[i, 7] = ~(z & y)
        out[i, 8] = +x - 1
        out[i, 9] = -np.uint64(z)


def test_unsigned_unary_results_feed_later_operators_as_numba_types_them():
    """The wrapped uint8/uint16/uint32 result is a uint64, which the integer rule then mixes with
    int64 literals (numba 0.68 njit of the same body)."""
    out = np.zeros((4, 10))
    unsigned_unary_in_expressions[1, 1](np.array([0, 1, 200, 255], np.uint8), np.array([0, 7, 40000, 65535], np.uint16),
                                        np.array([0, 3, 2**31, 2**32 - 1], np.uint32), out)
    assert out.tolist() == [
        [1.0, 4095.0, 0.0, 0.0, 85.0, 0.0, 0.0, 1.8446744073709552e+19, -1.0, 0.0],
        [256.0, 4095.0, 8589934586.0, 255.0, 84.0, 0.0, 1.8446744073709552e+19, 1.8446744073709552e+19, 0.0,
         1.8446744073709552e+19],
        [57.0, 1595.0, 4294967296.0, 56.0, 18.0, 0.0, 1.844674407370951e+19, 1.8446744073709552e+19, 199.0,
         1.8446744071562068e+19],
        [2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 1.8446744073709486e+19, 1.8446744073709486e+19, 254.0, 1.8446744069414584e+19]]


@cuda.jit
def flat_and_sizes(a, out):
    out[0] = a.itemsize
    out[1] = a.nbytes
    s = 0.0
    for v in a.flat:
        s = s * 2 + v
    out[2] = s
    out[3] = a.flat[4]
    out[4] = a.flat[a.size - 1]
    t = 0.0
    for j, v in enumerate(a.flat):
        t += j * v
    out[5] = t


def test_array_flat_itemsize_and_nbytes():
    """numba 0.68 njit of the same body, on a C array, a strided view and a 1-d int16 array."""
    a = np.arange(12.0).reshape(3, 4)
    for arr, ref in ((a, [8.0, 96.0, 4083.0, 4.0, 11.0, 506.0]), (a[:, ::2], [8.0, 48.0, 114.0, 8.0, 10.0, 110.0]),
                     (np.arange(5, dtype=np.int16), [2.0, 10.0, 26.0, 4.0, 4.0, 30.0])):
        out = np.zeros(6)
        flat_and_sizes[1, 1](arr, out)
        assert out.tolist() == ref


def test_array_flat_index_out_of_range_is_caught_under_debug():
    @cuda.jit(debug=True)
    def past_the_end(a, out):
        out[0] = a.flat[12]

    with pytest.raises(IndexError):
        past_the_end[1, 1](np.zeros((3, 4)), np.zeros(1))
