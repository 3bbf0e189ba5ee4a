"""Typing corners where numba's answer is not its integer rule's (NBEP 1) or numpy's plain
promotion: values that meet (``min``/``max`` arguments, the branches of ``x if c else y``),
numpy's ufuncs on booleans, ``divmod``. The expected types are written from numba's sources
(numba/core/typing/builtins.py, context.py ``unify_types``, typeconv/rules.py) and checked
against numba itself where it is installed (``test_against_numba``, optional)."""

import itertools

import numpy as np
import pytest

import pykern as cuda
from pykern.frontend import types as T

from frontend_helpers import lower

INTS = [T.int8, T.uint8, T.int16, T.uint16, T.int32, T.uint32, T.int64, T.uint64]
INTS_BOOL = INTS + [T.boolean]


def numba_unify(*ts):
    """numba's ``unify_types`` of number types: sorted by bit width (stable; its boolean has
    none), then numpy's ``promote_types`` pairwise. An int literal enters as int64."""
    ts = sorted(ts, key=lambda t: 0 if t == T.boolean else t.bits)
    r = ts[0].np_dtype
    for t in ts[1:]:
        r = np.promote_types(r, t.np_dtype)
    return T.from_dtype(r)


def local_type(src, args, name="v"):
    return lower(src, args).kernel.locals[name]


def test_the_reference_knows_numbas_cases():
    """Values numba 0.68 gives (njit, nopython_signatures)."""
    assert numba_unify(T.int8, T.int64) == T.int64
    assert numba_unify(T.uint64, T.int64) == T.float64
    assert numba_unify(T.uint8, T.uint64) == T.uint64
    assert numba_unify(T.float16, T.int8, T.uint8) == T.float32  # int16 first, then float16


# ---------------------------------------------------------------- 1. values that meet

@pytest.mark.parametrize("t", INTS_BOOL, ids=str)
def test_minmax_and_conditional_with_an_int_literal_are_numbas(t):
    """numba: the literal is int64 (max(int8, 1) is int64, max(uint64, 1) float64, an int
    literal above int64's range uint64) -- pykern kept the narrow type before."""
    a = [T.Array(t, 1), T.boolean]
    lit = numba_unify(t, T.int64)
    assert local_type("def k(x, c):\n    v = max(x[0], 1)\n", a) == lit
    assert local_type("def k(x, c):\n    v = min(-1, x[0])\n", a) == lit
    assert local_type("def k(x, c):\n    v = max(x[0], 1, x[1])\n", a) == lit
    assert local_type("def k(x, c):\n    v = x[0] if c else 1\n", a) == lit
    assert local_type("def k(x, c):\n    v = 7 if c else x[0]\n", a) == lit
    assert local_type("def k(x, c):\n    v = np.maximum(x[0], 1)\n", a) == lit
    assert local_type("def k(x, c):\n    v = max(x[0], 2**63)\n", a) == numba_unify(t, T.uint64)


@pytest.mark.parametrize("a, b", list(itertools.product(INTS_BOOL, INTS_BOOL)), ids=str)
def test_minmax_and_conditional_of_two_values_promote(a, b):
    args = [T.Array(a, 1), T.Array(b, 1), T.boolean]
    assert local_type("def k(x, y, c):\n    v = max(x[0], y[0])\n", args) == numba_unify(a, b)
    assert local_type("def k(x, y, c):\n    v = x[0] if c else y[0]\n", args) == numba_unify(a, b)


def test_minmax_of_three_unifies_in_bit_width_order():
    """numpy's promotion is not associative; numba sorts by bit width first."""
    args = [T.Array(T.float16, 1), T.Array(T.int8, 1), T.Array(T.uint8, 1)]
    assert local_type("def k(h, x, y):\n    v = max(h[0], x[0], y[0])\n", args) == T.float32


def test_float_literals_stay_weak_in_minmax_and_conditionals():
    """The documented float-literal difference: float32 stays float32 (numba: float64)."""
    a = [T.Array(T.float32, 1), T.boolean]
    assert local_type("def k(x, c):\n    v = max(x[0], 1)\n", a) == T.float32
    assert local_type("def k(x, c):\n    v = x[0] if c else 0.5\n", a) == T.float32


def test_optional_conditional_with_a_literal_is_optional_int64():
    src = '''
@device
def find(x):
    if x[0] > 0:
        return x[0]
    return None

def k(x, out):
    r = find(x)
    v = -1 if r is None else r
'''
    assert local_type(src, [T.Array(T.int8, 1), T.Array(T.int64, 1)]) == T.optional(T.int64)


@cuda.jit
def _negated_meets(x, c, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = -max(x[i], 1)  # int64: -200, not 2**64 - 200 (uint8 -> uint64 negation)
        out[1, i] = -(x[i] if c else 1)
        out[2, i] = -np.maximum(x[i], 1)


@pytest.mark.usefixtures("cpu_target")
def test_negating_a_joined_uint8_is_signed():
    x = np.array([0, 1, 200, 255], np.uint8)
    for c in (True, False):
        out = np.zeros((3, 4), np.float64)
        _negated_meets[1, 4](x, c, out)
        w = np.maximum(x.astype(np.int64), 1)
        np.testing.assert_array_equal(out, [-w, -(x.astype(np.int64) if c else np.ones(4)), -w])


# ---------------------------------------------------------------- 2. numpy's loops, booleans

#: numba 0.68's result types of ufuncs of scalars (njit, nopython_signatures): numba picks
#: the first of ``ufunc.types`` the inputs cast to safely, skipping float16 loops
NUMBA_UFUNC = {
    ("add", "b", "b"): T.boolean, ("multiply", "b", "b"): T.boolean, ("subtract", "b", "b"): T.int8,
    ("true_divide", "b", "b"): T.float32, ("floor_divide", "b", "b"): T.int8, ("remainder", "b", "b"): T.int8,
    ("power", "b", "b"): T.int8, ("left_shift", "b", "b"): T.int8, ("right_shift", "b", "b"): T.int8,
    ("bitwise_xor", "b", "b"): T.boolean, ("maximum", "b", "b"): T.boolean, ("fmin", "b", "b"): T.boolean,
    ("add", "b", "i8"): T.int8, ("true_divide", "b", "i8"): T.float32, ("maximum", "b", "i8"): T.int8,
    ("true_divide", "i8", "i8"): T.float32, ("true_divide", "i32", "i32"): T.float64,
    ("add", "i64", "f32"): T.float32, ("multiply", "i64", "f32"): T.float32, ("maximum", "i64", "f32"): T.float32,
    ("add", "u64", "i64"): T.float64, ("add", "i8", "u8"): T.int16,
    ("negative", "b"): T.int8, ("positive", "b"): T.int8, ("invert", "b"): T.boolean,
    ("absolute", "b"): T.boolean, ("square", "b"): T.int8, ("sign", "b"): T.int8, ("reciprocal", "b"): T.int8,
    ("conjugate", "b"): T.int8, ("gcd", "b", "b"): T.int8, ("lcm", "b", "i8"): T.int8,
    ("nextafter", "b", "b"): T.float32, ("nextafter", "i8", "i8"): T.float32, ("nextafter", "i32", "i32"): T.float64,
}  # fmt: skip
_SHORT = {"b": T.boolean, "i8": T.int8, "u8": T.uint8, "i32": T.int32, "i64": T.int64, "u64": T.uint64,
          "f32": T.float32}


@pytest.mark.parametrize("key", list(NUMBA_UFUNC), ids=lambda k: "-".join(k))
def test_ufunc_of_scalars_takes_numbas_loop(key):
    name, *ts = key
    args = [T.Array(_SHORT[t], 1) for t in ts]
    params = ", ".join(f"x{k}" for k in range(len(ts)))
    call = ", ".join(f"x{k}[0]" for k in range(len(ts)))
    assert local_type(f"def k({params}):\n    v = np.{name}({call})\n", args) == NUMBA_UFUNC[key]


@cuda.jit
def _bool_ufuncs(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = np.add(a[i], b[i])
        out[1, i] = np.multiply(a[i], b[i])
        out[2, i] = np.subtract(a[i], b[i])
        out[3, i] = np.power(a[i], b[i])
        out[4, i] = np.negative(a[i])
        out[5, i] = np.absolute(a[i])
        out[6, i] = np.square(a[i])
        out[7, i] = np.sign(b[i])


@pytest.mark.usefixtures("cpu_target")
def test_boolean_ufunc_values_are_numbas():
    """numba's values (numpy's where it has the loop): add is or, multiply and."""
    a = np.array([False, False, True, True])
    b = np.array([False, True, False, True])
    out = np.zeros((8, 4))
    _bool_ufuncs[1, 4](a, b, out)
    i8a, i8b = a.astype(np.int8), b.astype(np.int8)
    np.testing.assert_array_equal(out, [a | b, a & b, i8a - i8b, i8a ** i8b, -i8a, a, i8a, np.sign(i8b)])


@cuda.jit
def _ufunc_arrays(a, b, x, out, wide):
    np.add(a, b, out)
    np.add(x, 1, wide)  # numba's int64 loop: 127 + 1 is 128, not int8's -128


@pytest.mark.usefixtures("cpu_target")
def test_array_ufuncs_take_numbas_loops():
    a = np.array([False, False, True, True])
    b = np.array([False, True, False, True])
    out = np.zeros(4, np.int64)
    x = np.array([-128, 0, 126, 127], np.int8)
    wide = np.zeros(4)
    _ufunc_arrays[1, 1](a, b, x, out, wide)
    assert out.tolist() == [0, 1, 1, 1]
    assert wide.tolist() == [-127, 1, 127, 128]


def test_ufunc_without_a_loop_is_a_compile_error():
    from frontend_helpers import compile_error

    e = compile_error("def k(x):\n    v = np.floor_divide(x[0], x[1])\n", [T.Array(T.complex128, 1)])
    assert "np.floor_divide has no loop for complex128" in str(e)


@pytest.mark.parametrize("t", [T.boolean, T.int8, T.uint8, T.int16, T.uint16, T.int32, T.uint64], ids=str)
def test_float_ufuncs_of_small_integers_are_float32(t):
    """numba skips numpy's float16 loops: the next, float32, takes booleans and integers of 16
    bits or less (numpy's own answer is float16); wider integers take float64."""
    want = T.float32 if t == T.boolean or t.bits <= 16 else T.float64
    a = [T.Array(t, 1), T.Array(T.float32, 1), T.Array(T.int64, 1)]
    for f in ("sqrt", "sin", "exp", "rint", "fabs", "deg2rad", "spacing"):
        assert local_type(f"def k(x, y, z):\n    v = np.{f}(x[0])\n", a) == want, f
    for f in ("arctan2", "hypot", "logaddexp", "true_divide"):
        assert local_type(f"def k(x, y, z):\n    v = np.{f}(x[0], x[0])\n", a) == want, f
        # an integer next to a float32 converts to it (numba's mixed-kind rule)
        assert local_type(f"def k(x, y, z):\n    v = np.{f}(z[0], y[0])\n", a) == T.float32, f


@cuda.jit
def _small_int_floats(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[0, i] = np.sqrt(x[i])
        out[1, i] = np.spacing(x[i])


@pytest.mark.usefixtures("cpu_target")
def test_float_ufunc_values_of_int8_are_float32s():
    x = np.array([0, 2, 3, 100], np.int8)
    out = np.zeros((2, 4))
    _small_int_floats[1, 4](x, out)
    f = x.astype(np.float32)
    np.testing.assert_array_equal(out, [np.sqrt(f), np.spacing(f)])


# ---------------------------------------------------------------- 3. divmod

@pytest.mark.parametrize("a, b, want", [
    (T.uint64, T.int64, T.float64), (T.int64, T.uint64, T.float64), (T.uint64, T.int32, T.float64),
    (T.uint32, T.int64, T.int64), (T.uint8, T.int8, T.int64), (T.boolean, T.uint64, T.uint64),
    (T.uint64, T.uint64, T.uint64), (T.int8, T.int8, T.int64), (T.boolean, T.boolean, T.int64),
], ids=str)
def test_divmod_takes_numbas_signature(a, b, want):
    """numba's DivMod has only (t, t) signatures, so mixed-sign 64-bit integers meet in
    float64 -- where ``//`` and ``%`` have numba's mixed (uint64, int64) -> int64."""
    args = [T.Array(a, 1), T.Array(b, 1)]
    assert local_type("def k(x, y):\n    v = divmod(x[0], y[0])\n", args) == T.Tuple((want, want))
    ints = [t for t in (a, b) if t != T.boolean]
    assert local_type("def k(x, y):\n    v = x[0] // y[0]\n", args) == (
        T.int64 if any(t.signed for t in ints) or len(ints) < 2 and T.boolean in (a, b) else T.uint64)


def test_divmod_with_an_int_literal():
    assert local_type("def k(x):\n    v = divmod(x[0], 7)\n", [T.Array(T.uint64, 1)]) == T.Tuple((T.float64,) * 2)
    assert local_type("def k(x):\n    v = divmod(7, x[0])\n", [T.Array(T.uint8, 1)]) == T.Tuple((T.int64,) * 2)


@cuda.jit
def _divmods(u, s, q, r):
    i = cuda.grid(1)
    if i < u.size:
        q[i], r[i] = divmod(u[i], s[i])


@pytest.mark.usefixtures("cpu_target")
def test_divmod_of_uint64_and_int64_is_float_division():
    u = np.array([7, 2**63 + 5, 10, 0], np.uint64)
    s = np.array([-2, 3, 3, -5], np.int64)
    q, r = np.zeros(4), np.zeros(4)
    _divmods[1, 4](u, s, q, r)
    ref = [divmod(float(x), float(y)) for x, y in zip(u, s)]
    assert q.tolist() == [a for a, _ in ref] and r.tolist() == [b for _, b in ref]


# ---------------------------------------------------------------- numba itself, where installed

def _disagreements_with_numba(pairs):
    """(expression, types, numba's type, pykern's) where they differ, for the type pairs given
    (skipped where numba is not installed)."""
    numba = pytest.importorskip("numba")
    nbt = numba.types

    def nb_type(expr, ts):
        ns = {"np": np}
        exec(f"def f({', '.join('ab'[:len(ts)])}):\n    return {expr}\n", ns)
        j = numba.njit(ns["f"])
        j.compile(tuple(getattr(nbt, "boolean" if t == T.boolean else str(t)) for t in ts))
        return str(j.nopython_signatures[-1].return_type).replace("bool", "boolean")

    def pk_type(expr, ts):
        t = local_type(f"def k(x, y):\n    a = x[0]\n    b = y[0]\n    v = {expr}\n",
                       [T.Array(t, 1) for t in (ts * 2)[:2]])
        return f"UniTuple({t.elems[0]} x {len(t.elems)})" if isinstance(t, T.Tuple) else str(t)

    srcs2 = ["divmod(a, b)", "max(a, b)", "np.add(a, b)", "np.multiply(a, b)", "np.true_divide(a, b)",
             "np.maximum(a, b)", "a if a else b", "np.arctan2(a, b)", "np.subtract(a, b)"]
    srcs1 = ["max(a, 1)", "np.negative(a)", "np.add(a, 1)", "divmod(a, 7)", "a if a else 1", "np.sqrt(a)",
             "np.sin(a)", "np.absolute(a)", "np.square(a)"]
    bad = []
    for a, b in pairs:
        for src in srcs2:
            if nb_type(src, (a, b)) != pk_type(src, (a, b)):
                bad.append((src, a, b, nb_type(src, (a, b)), pk_type(src, (a, b))))
    for a in INTS_BOOL:
        for src in srcs1:
            if nb_type(src, (a,)) != pk_type(src, (a,)):
                bad.append((src, a, nb_type(src, (a,)), pk_type(src, (a,))))
    return bad


def _where_the_rules_meet(a, b):
    """The pairs the default run asks numba about, in one order (the -m slow run asks both):
    each type with itself, with bool and with the 64-bit ints (where NBEP 1 picks int64, uint64
    or float64), and signed with unsigned of one width."""
    if INTS_BOOL.index(a) > INTS_BOOL.index(b):
        return False
    return a == b or T.boolean in (a, b) or T.int64 in (a, b) or T.uint64 in (a, b) or (
        T.boolean not in (a, b) and a.bitwidth == b.bitwidth)


def test_against_numba():
    """The same cases typed by numba, for the pairs where the rules meet."""
    pairs = [p for p in itertools.product(INTS_BOOL, INTS_BOOL) if _where_the_rules_meet(*p)]
    assert not _disagreements_with_numba(pairs)


@pytest.mark.slow
def test_against_numba_for_every_pair_of_types():
    assert not _disagreements_with_numba(itertools.product(INTS_BOOL, INTS_BOOL))


@cuda.jit
def powers(a, n, out):
    out[0] = a[0] ** n[0]
    out[1] = a[0] ** -n[0]
    out[2] = a[0] ** 7
    out[3] = pow(a[0], n[0])
    x = a[0]
    x **= n[0]
    out[4] = x


@pytest.mark.usefixtures("cpu_uncached")
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


@cuda.jit
def uint16_float32(u, f, c, out, oc):
    out[0] = u[0] + f[0]
    out[1] = u[0] * f[0]
    out[2] = f[0] / u[0]
    out[3] = u[0] - f[0]
    oc[0] = u[0] * c[0]


@pytest.mark.usefixtures("cpu_uncached")
def test_uint16_with_float32_computes_in_float64():
    out, oc = np.zeros(4), np.zeros(1, np.complex128)
    uint16_float32[1, 1](np.array([3], np.uint16), np.array([0.1], np.float32),
                         np.array([0.1 + 0.2j], np.complex64), out, oc)
    assert out.tolist() == [3.100000001490116, 0.30000000447034836, 0.033333333830038704, 2.899999998509884]
    assert oc.tolist() == [0.30000000447034836 + 0.6000000089406967j]


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


@pytest.mark.usefixtures("cpu_uncached")
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


@pytest.mark.usefixtures("cpu_uncached")
def test_zero_to_a_negative_integer_power_is_the_minimum_as_in_numba_cuda():
    """numba's int_power under CUDA's numpy error model (njit(error_model='numpy') of numba 0.68
    gives the same) returns ``-1 << (bits - 1)`` for ``0 ** negative`` instead of raising."""
    out, small = np.zeros(6, np.int64), np.zeros(2, np.int64)
    int_powers[1, 1](np.array([0, 0, 2, -1, 1, 0], np.int32), np.array([-1, -2, -1, -3, -7, 0], np.int32), out, small)
    assert out.tolist() == [-(2**63), -(2**63), 0, -1, 1, 1]
    assert small.tolist() == [-128, -32768]


@cuda.jit
def int_keeps_type(u, out):
    out[0] = int(u[0]) > 0
    out[1] = int(u[0]) // 2
    out[2] = int(u[1]) * 2


@pytest.mark.usefixtures("cpu_uncached")
def test_int_of_an_integer_keeps_its_type():
    """numba's int(uint64) is uint64 (it was an int64 conversion: 2**63 + 1 turned negative);
    ``// 2`` then follows the integer rule (uint64 with an int64 literal is int64). numba 0.68 njit
    gives ``[1.0, -4.611686018427388e+18, 8589934590.0]``."""
    out = np.zeros(3)
    int_keeps_type[1, 1](np.array([2**63 + 1, 2**32 - 1], np.uint64), out)
    assert out.tolist() == [1.0, -4.611686018427388e+18, 8589934590.0]


@cuda.jit
def int_neg_pow(a, out):
    for i in range(a.size):
        x = a[i]
        out[i, 0] = x ** -3
        out[i, 1] = x ** -2
        out[i, 2] = x ** -1


@pytest.mark.usefixtures("cpu_uncached")
def test_int_to_negative_constant_power():
    m = -9223372036854775808
    for dt in (np.int64, np.int32, np.int8):
        a = np.array([0, 1, -1, 2, -2, 5], dt)
        out = np.zeros((a.size, 3), np.int64)
        int_neg_pow[1, 1](a, out)
        assert out.tolist() == [[m, m, m], [1, 1, 1], [-1, 1, -1], [0, 0, 0], [0, 0, 0], [0, 0, 0]], dt
    for dt in (np.uint8, np.uint64):
        a = np.array([0, 1, 2, 255, np.iinfo(dt).max], dt)
        out = np.zeros((a.size, 3), np.int64)
        int_neg_pow[1, 1](a, out)
        # numba's uint64 max is int64 -1 in int_power
        last = [0, 0, 0] if dt == np.uint8 else [-1, 1, -1]
        assert out.tolist() == [[m, m, m], [1, 1, 1], [0, 0, 0], [0, 0, 0], last], dt
