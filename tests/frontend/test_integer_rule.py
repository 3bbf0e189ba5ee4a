"""Integer arithmetic follows numba's integer rule (NBEP 1), so numba.cuda programs give
numba's answers: integer x integer ``+ - * // % ** & | ^`` compute in int64/uint64
(signed if either operand is), shifts in the left operand's signedness, unary ``-``/``~``
widen small integers, int literals are int64. Each kernel runs on the cpu target and is
compared with numpy computing numba's semantics (operands widened to 64 bits first)."""

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

import pykern as cuda
from pykern.lang.random import create_xoroshiro128p_states, xoroshiro128p_next

pytestmark = pytest.mark.usefixtures("cpu_target")


@cuda.jit
def sobel_x(img, out):
    y, x = cuda.grid(2)
    if 1 <= y < img.shape[0] - 1 and 1 <= x < img.shape[1] - 1:
        out[y, x] = (-img[y - 1, x - 1] + img[y - 1, x + 1] - 2 * img[y, x - 1] + 2 * img[y, x + 1]
                     - img[y + 1, x - 1] + img[y + 1, x + 1])


def test_sobel_on_a_uint8_image_negates_in_uint8_then_widens():
    """numba negates in the operand's type then widens: ``-img[...]`` of a uint8 is the uint8
    ``(256 - v) % 256`` as a uint64, the other terms are exact (uint8 + int64 literal products are
    int64, the uint64 - int64 mix float64). Checked against numba 0.68 njit of the same kernel body
    (sum 76103, row 5 ``[432, 392, 177, -40]``)."""
    rng = np.random.default_rng(1)
    img = rng.integers(0, 256, (18, 20), dtype=np.uint8)
    img[5, 5:9] = [255, 0, 255, 0]
    out = np.zeros(img.shape, np.float32)
    sobel_x[(3, 3), (8, 8)](img, out)
    i = img.astype(np.int64)
    neg = (-img).astype(np.int64)  # numpy's uint8 negation wraps as numba's does
    ref = np.zeros(img.shape, np.float32)
    ref[1:-1, 1:-1] = (neg[:-2, :-2] + i[:-2, 2:] - 2 * i[1:-1, :-2] + 2 * i[1:-1, 2:] - i[2:, :-2] + i[2:, 2:])
    np.testing.assert_array_equal(out, ref)
    assert out.sum() == 76103 and out[5, 5:9].tolist() == [432, 392, 177, -40]
    assert out[1, 1:4].tolist() == [53, 3, 372]


@cuda.jit
def day08_jump(ops, out):
    i = cuda.grid(1)
    if i < ops.size:
        op = ops[i]
        operand = op & 0x3FFF
        if op & 0x4000:
            out[i] = -(16384 - operand)
        else:
            out[i] = operand


def test_uint16_mask_then_negate_is_int64():
    """advent-of-numba day08: ``op & 0x3FFF`` of a uint16 is int64, so ``-(16384 - x)`` is
    a negative jump, not a wrapped uint16."""
    ops = np.array([0x4000 | 5, 0x0007, 0x4000 | 0x3FFF, 0x4000], np.uint16)
    out = np.zeros(4, np.int64)
    day08_jump[1, 4](ops, out)
    assert out.tolist() == [-(16384 - 5), 7, -1, -16384]


@cuda.jit
def pick(u, n, a, out, idx):
    i = cuda.grid(1)
    if i < u.size:
        r = u[i] % n  # uint64 % int64 -> int64 (numba), a valid index
        idx[i] = r
        out[i] = a[r]


def test_uint64_mod_int64_is_an_int64_index():
    u = np.array([0, 5, 2**63 - 1, 123456789012345], np.uint64)
    a = np.arange(7, dtype=np.float64) * 10
    out, idx = np.zeros(4), np.zeros(4, np.int64)
    pick[1, 4](u, 7, a, out, idx)
    ref = [int(v) % 7 for v in u]
    assert idx.tolist() == ref and out.tolist() == [a[r] for r in ref]


@cuda.jit
def rng_pick(states, a, out, idx):
    i = cuda.grid(1)
    if i < out.size:
        r = xoroshiro128p_next(states, i) % a.size
        idx[i] = r
        out[i] = a[r]


def test_xoroshiro_next_mod_n_indexes_an_array():
    n = 64
    states = create_xoroshiro128p_states(n, seed=7)
    a = np.arange(13, dtype=np.float64) + 0.5
    out, idx = np.zeros(n), np.zeros(n, np.int64)
    rng_pick[1, n](states, a, out, idx)
    # uint64 % int64 is a signed remainder of the value as int64 (numba's rule): C-style
    # would be wrong for draws >= 2**63, Python-style floor modulo stays in [0, n)
    assert ((0 <= idx) & (idx < a.size)).all()
    np.testing.assert_array_equal(out, a[idx])
    assert len(set(idx.tolist())) > 5


@cuda.jit
def products(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] * b[i]


def test_int32_products_are_computed_in_int64():
    a = np.array([2**31 - 1, -(2**31), 65536, 3], np.int32)
    b = np.array([2**31 - 1, -(2**31), 65536, -7], np.int32)
    out = np.zeros(4, np.int64)
    products[1, 4](a, b, out)
    assert out.tolist() == [int(x) * int(y) for x, y in zip(a, b)]


@cuda.jit
def unary(a, out):
    out[0] = -a[0]
    out[1] = ~a[0]
    out[2] = +a[0]
    out[3] = abs(a[0])  # numba's abs keeps the type: abs(int8 -128) wraps to -128


def test_unary_computes_in_the_operand_type_then_widens_like_numba():
    """numba's int_negate_impl/int_invert_impl: the operation in the operand's type, then the
    widening to 64 bits (values from numba 0.68 njit of the same body)."""
    out = np.zeros(4, np.int64)
    unary[1, 1](np.array([-128], np.int8), out)
    assert out.tolist() == [-128, 127, -128, -128]
    outu = np.zeros(4, np.uint64)
    unary[1, 1](np.array([1], np.uint8), outu)
    assert outu.tolist() == [255, 254, 1, 1]


@cuda.jit
def mixed_ops(a, b, out):
    x = a[0]
    y = b[0]
    out[0] = x + y
    out[1] = x - y
    out[2] = x * y
    out[3] = x & y
    out[4] = x | y
    out[5] = x ^ y
    if y != 0:
        out[6] = x // y
        out[7] = x % y


def _numba_result(da, db):
    signed = any(np.dtype(d).kind in "ib" for d in (da, db))
    return np.dtype(np.int64 if signed else np.uint64)


def _reference(x, y, rt):
    """numba: both operands are converted to the 64-bit result type, then Python
    semantics (floor division, sign of the divisor for %) wrapped to 64 bits."""
    bits = 1 << 64
    def conv(v):
        v %= bits
        return v - bits if rt.kind == "i" and v >= bits // 2 else v
    x, y = conv(int(x)), conv(int(y))
    res = [x + y, x - y, x * y, x & y, x | y, x ^ y]
    if y != 0:
        res += [x // y, x % y]
    return [conv(v) for v in res]


PAIRS = [("uint8", "uint8"), ("int8", "uint8"), ("uint64", "int64"), ("int32", "int32"), ("uint32", "int16"),
         ("uint16", "uint64"), ("bool", "uint8"), ("int64", "uint32"), ("uint64", "uint64")]


@pytest.mark.parametrize("da, db", PAIRS)
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_integer_ops_match_numba_semantics(da, db, data):
    def value(d):
        info = np.iinfo(d) if d != "bool" else None
        if info is None:
            return data.draw(st.booleans())
        return data.draw(st.one_of(st.sampled_from([info.min, info.max, 0, 1, -1 if info.min < 0 else 2]),
                                   st.integers(int(info.min), int(info.max))))
    x, y = value(da), value(db)
    rt = _numba_result(da, db)
    if rt.kind == "i":
        xs, ys = np.array([x], da).astype(np.int64)[0], np.array([y], db).astype(np.int64)[0]
        if xs == np.iinfo(np.int64).min and ys == -1:
            return  # int64 min // -1 overflows (numba: undefined)
    out = np.zeros(8, rt)
    mixed_ops[1, 1](np.array([x], da), np.array([y], db), out)
    ref = _reference(x, y, rt)
    assert out[:len(ref)].astype(object).tolist() == ref, (da, db, x, y)


@cuda.jit
def shifts(a, c, out):
    out[0] = a[0] << c[0]
    out[1] = a[0] >> c[0]


@pytest.mark.parametrize("da", ["int8", "uint8", "int32", "uint32", "int64", "uint64"])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_shifts_take_the_left_operands_signedness_in_64_bits(da, data):
    info = np.iinfo(da)
    x = data.draw(st.one_of(st.sampled_from([info.min, info.max, -1 if info.min < 0 else 1]),
                            st.integers(int(info.min), int(info.max))))
    c = data.draw(st.integers(0, 63))
    rt = np.dtype(np.int64 if info.min < 0 else np.uint64)
    out = np.zeros(2, rt)
    shifts[1, 1](np.array([x], da), np.array([c], np.int64), out)
    bits = 1 << 64
    wrap = (lambda v: (v % bits) - bits if v % bits >= bits // 2 else v % bits) if rt.kind == "i" else (lambda v: v % bits)
    assert out.astype(object).tolist() == [wrap(int(x) << c), wrap(int(x) >> c)]


@cuda.jit
def literal_ops(a, out):
    out[0] = a[0] + 1          # uint64 + int literal -> int64 (numba)
    out[1] = a[0] * 2


def test_uint64_with_an_int_literal_is_int64():
    out = np.zeros(2, np.int64)
    literal_ops[1, 1](np.array([2**64 - 1], np.uint64), out)
    assert out.tolist() == [0, -2]  # 2**64 - 1 is int64 -1


@cuda.jit
def accumulate(a, out):
    s = a[0]
    for k in range(1, a.size):
        s += a[k]  # uint8 + uint8 is uint64: the running sum does not wrap at 256
    out[0] = s
    a[0] += a[1]  # an array store casts back to the array's dtype


def test_augmented_assignment_of_small_ints():
    a = np.array([200, 100, 50], np.uint8)
    out = np.zeros(1, np.int64)
    accumulate[1, 1](a, out)
    assert out[0] == 350 and a[0] == (200 + 100) % 256


@cuda.jit
def scalar_ufuncs(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        x, y = a[i], b[i]
        out[i, 0] = np.add(x, y)
        out[i, 1] = np.subtract(x, y)
        out[i, 2] = np.multiply(x, y)
        out[i, 3] = np.negative(x)
        out[i, 4] = np.invert(x)
        out[i, 5] = np.left_shift(x, np.uint8(3)) if x >= 0 else 0


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16])
def test_numpy_ufuncs_on_scalars_keep_numpys_loop_type(dtype):
    """numba types np.add(x, y) by numpy's loops, not by its integer rule: np.add of two
    int8 is int8 and wraps, np.negative of a uint8 is uint8 (the operators widen)."""
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, 1, 100, info.max // 3], dtype)
    b = np.array([info.max, 2, info.max, 3, 7], dtype)
    out = np.zeros((a.size, 6), np.float64)
    scalar_ufuncs[1, a.size](a, b, out)
    with np.errstate(all="ignore"):
        ref = np.stack([np.add(a, b), np.subtract(a, b), np.multiply(a, b), np.negative(a), np.invert(a),
                        np.where(a >= 0, np.left_shift(a, np.uint8(3)), 0)], axis=1)
    np.testing.assert_array_equal(out, ref.astype(np.float64))


@cuda.jit
def ufunc_with_literal(a, out):
    out[0] = np.add(a[0], 1)  # numba: the literal is int64, so the int8 loop is not chosen
    np.subtract(a, 1, out[1:])  # array form: numba picks the loop from a's dtype (wraps)


def test_numpy_ufunc_with_an_int_literal():
    a = np.array([127], np.int8)
    out = np.zeros(2, np.float64)
    ufunc_with_literal[1, 1](a, out)
    assert out[0] == 128  # int64, as numba types np.add(int8, int64 literal)


@cuda.jit
def ufunc_array_form(a, b, out):
    np.subtract(a, b, out)


def test_numpy_ufunc_array_form_wraps_in_the_input_dtype():
    """np.subtract(uint8, uint8, out=float64) computes in uint8 and then stores, as numpy."""
    a = np.array([1, 0, 200], np.uint8)
    b = np.array([2, 255, 100], np.uint8)
    out = np.zeros(3)
    ufunc_array_form[1, 1](a, b, out)
    np.testing.assert_array_equal(out, np.subtract(a, b).astype(np.float64))


@cuda.jit
def bool_ufuncs(a, b, out):
    out[0] = np.add(a[0], b[0])
    out[1] = np.multiply(a[0], b[0])


def test_numpy_ufuncs_of_two_booleans_compile():
    """Two booleans take numpy's boolean loops, as numba picks them: ``np.add`` is a logical
    or (True, not 2), ``np.multiply`` a logical and -- they compiled to invalid IR once the
    ufunc operators stopped using the integer rule."""
    out = np.zeros(2)
    bool_ufuncs[1, 1](np.array([True]), np.array([True]), out)
    assert out.tolist() == [1.0, 1.0]


@cuda.jit
def bit_intrinsic_types(u, s, out):
    out[0] = cuda.popc(u[0]) - cuda.popc(u[1])  # uint32 - uint32: uint64 under numba's rule
    out[1] = cuda.ffs(s[0]) - cuda.ffs(s[1])  # ffs is uint32 in numba, whatever the argument
    out[2] = cuda.brev(s[2])  # int32 converts to uint32 (numba's only 32-bit case)
    out[3] = -cuda.clz(u[0])  # clz keeps uint32: negated in uint32, then widened to uint64
    out[4] = cuda.popc(s[0]) - cuda.popc(s[1])  # int32 counts: signed


def test_bit_intrinsics_have_numbas_result_types():
    u = np.array([0x1, 0xFF], np.uint32)
    s = np.array([1, 8, 1], np.int32)
    out = np.zeros(5, np.uint64)
    bit_intrinsic_types[1, 1](u, s, out.view(np.int64))
    m = 2**64
    assert out.tolist() == [(1 - 8) % m, (1 - 4) % m, 2**31, 2**32 - 31, (1 - 1) % m]


@cuda.jit
def range_var_signedness(n, m, out):
    for i in range(0, n):  # numba: int64 (the literal start), so i - m can be negative
        out[i, 0] = i - m
    for j in range(n):  # numba: uint64 for an unsigned bound
        out[j, 1] = j - m


def test_range_loop_variable_has_numbas_type():
    n, m = np.uint32(4), np.uint32(2)
    out = np.zeros((4, 2), np.float64)
    range_var_signedness[1, 1](n, m, out)
    assert out[:, 0].tolist() == [-2.0, -1.0, 0.0, 1.0]
    assert out[:, 1].tolist() == [float((k - 2) % 2**64) for k in range(4)]


@cuda.jit
def range_mixed_signs(a, b, out):
    s = 0
    for i in range(a, b):  # uint64 and int64 bounds: numba picks int64 (first of equals)
        s += i
    out[0] = s


def test_range_of_uint64_and_int64_bounds_is_int64():
    out = np.zeros(1, np.int64)
    range_mixed_signs[1, 1](np.uint64(3), np.int64(7), out)
    assert out[0] == 3 + 4 + 5 + 6


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
