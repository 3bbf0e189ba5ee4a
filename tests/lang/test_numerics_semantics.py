"""Numeric semantics that must equal numpy's/Python's exactly (issue 10's wrong answers), on
the cpu target: np.minimum/np.maximum/np.fmin/np.fmax (NaN, the sign of equal zeros),
np.fmod and floor/ceil/trunc of integers (exact, no float64 round trip), shifts by counts
outside [0, width), round(x, n) near the largest float.

Every kernel here is also compiled for the amdgpu archs by tests/codegen/amdgpu/test_amdgpu_core_suite.py
(this module is one of its core modules).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as cuda
from frontend_helpers import jit

SET = settings(max_examples=30, deadline=None)
FLOATS = (np.float16, np.float32, np.float64)
INTS = (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64)

pytestmark = pytest.mark.usefixtures("cpu_target")


def _launch(k, n, *args):
    k[max(1, (n + 63) // 64), 64](*args)


def same_floats(got, want):
    """Equal values, NaN where NaN, and the same sign of zero."""
    got, want = np.asarray(got), np.asarray(want)
    return (got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)
            and np.array_equal(np.signbit(got), np.signbit(want)))


def specials(dt):
    fi = np.finfo(dt)
    return np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -2.5, fi.max, -fi.max, fi.tiny,
                     -fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal, fi.eps, 3.0, -3.0, 1e-3, 100.0,
                     -100.0, 0.5, -0.5, 7.25, fi.max / 2], dt)


# ------------------------------------------------ np.minimum / maximum / fmin / fmax
@jit
def _np_minmax(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = np.minimum(a[i], b[i])
        out[1, i] = np.maximum(a[i], b[i])
        out[2, i] = np.fmin(a[i], b[i])
        out[3, i] = np.fmax(a[i], b[i])
        out[4, i] = min(a[i], b[i])
        out[5, i] = max(a[i], b[i])


def _check_minmax(a, b):
    out = np.zeros((6, a.size), a.dtype)
    _launch(_np_minmax, a.size, a, b, out)
    # numpy's array loops (what an elementwise kernel is compared with): exact, sign of zero too
    assert same_floats(out[0], np.minimum(a, b)), (a, b, out[0])
    assert same_floats(out[1], np.maximum(a, b)), (a, b, out[1])
    # np.fmin/fmax: numpy's own sign of equal zeros varies with array length and dtype; values
    # and NaN-ness must match, and the zero rule is np.minimum's
    for j, f, g in ((2, np.fmin, np.minimum), (3, np.fmax, np.maximum)):
        assert np.array_equal(out[j], f(a, b), equal_nan=True), (f.__name__, a, b, out[j])
        both = ~np.isnan(a) & ~np.isnan(b)
        assert same_floats(out[j][both], g(a, b)[both])
    # builtin min/max stay Python's
    pa, pb = a.tolist(), b.tolist()
    assert same_floats(out[4], np.array([min(x, y) for x, y in zip(pa, pb)], a.dtype))
    assert same_floats(out[5], np.array([max(x, y) for x, y in zip(pa, pb)], a.dtype))


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: np.dtype(d).name)
def test_np_minimum_maximum_fmin_fmax_all_special_pairs(dt):
    """Every pair of 25 special values (NaN, +-inf, +-0, extremes, subnormals): 625 pairs."""
    s = specials(dt)
    a, b = np.repeat(s, s.size), np.tile(s, s.size)
    _check_minmax(a, b)
    # the issue's example
    out = np.zeros((6, 1), dt)
    _np_minmax[1, 1](np.array([1.0], dt), np.array([np.nan], dt), out)
    assert np.isnan(out[0, 0]) and np.isnan(out[1, 0]) and out[2, 0] == 1 and out[3, 0] == 1


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: np.dtype(d).name)
def test_np_minmax_hypothesis(dt):
    el = st.floats(width=np.finfo(dt).bits, allow_nan=True, allow_infinity=True)

    @SET
    @given(st.lists(st.tuples(el, el | st.sampled_from([0.0, -0.0, float("nan")])), min_size=1, max_size=40))
    def check(pairs):
        a = np.array([p[0] for p in pairs], dt)
        b = np.array([p[1] for p in pairs], dt)
        _check_minmax(a, b)

    check()


@pytest.mark.parametrize("dt", INTS + (np.bool_,), ids=lambda d: np.dtype(d).name)
def test_np_minmax_integers_and_booleans(dt):
    if dt is np.bool_:
        v = np.array([False, True])
    else:
        ii = np.iinfo(dt)
        v = np.array(sorted({ii.min, ii.min + 1, -1 if ii.min else 0, 0, 1, ii.max - 1, ii.max}), dt)
    a, b = np.repeat(v, v.size), np.tile(v, v.size)
    out = np.zeros((6, a.size), dt)
    _launch(_np_minmax, a.size, a, b, out)
    for j, f in enumerate((np.minimum, np.maximum, np.fmin, np.fmax)):
        assert out[j].tolist() == f(a, b).tolist(), f.__name__
    pa, pb = a.tolist(), b.tolist()
    assert out[4].tolist() == [min(x, y) for x, y in zip(pa, pb)] and out[5].tolist() == [max(x, y) for x, y in zip(pa, pb)]


def test_np_minmax_mixed_and_constant_operands():
    @jit
    def k(x, out):
        out[0] = np.minimum(x[0], float("nan"))  # weak NaN keeps float32
        out[1] = np.fmax(x[0], float("nan"))
        out[2] = np.minimum(float("nan"), 1.0)  # folded at compile time: numpy's rule too
        out[3] = np.fmin(float("nan"), 1.0)
        out[4] = np.maximum(-0.0, 0.0)

    x = np.array([2.0], np.float32)
    out = np.zeros(5, np.float32)
    k[1, 1](x, out)
    assert np.isnan(out[0]) and out[1] == 2.0 and np.isnan(out[2]) and out[3] == 1.0
    assert same_floats(out[4:5], np.maximum(np.array([-0.0]), np.array([0.0])).astype(np.float32))


# ------------------------------------------------------------------ np.fmod on integers
@jit
def _fmod(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = np.fmod(a[i], b[i])


def _np_fmod(a, b):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numpy warns on a zero divisor (and gives 0)
        return np.fmod(a, b)


@pytest.mark.parametrize("dt", INTS, ids=lambda d: np.dtype(d).name)
def test_np_fmod_integers_exact(dt):
    ii = np.iinfo(dt)
    v = sorted({ii.min, ii.min + 1, -7 if ii.min else 0, -2 if ii.min else 0, -1 if ii.min else 0, 0, 1, 2, 3, 7,
                ii.max - 1, ii.max})
    a, b = np.repeat(np.array(v, dt), len(v)), np.tile(np.array(v, dt), len(v))
    out = np.zeros(a.size, dt)
    _launch(_fmod, a.size, a, b, out)
    want = _np_fmod(a, b)
    assert want.dtype == np.dtype(dt)
    bad = [(x, y, g, w) for x, y, g, w in zip(a.tolist(), b.tolist(), out.tolist(), want.tolist()) if g != w]
    assert not bad, bad[:10]


def test_np_fmod_issue_examples():
    a = np.array([2**63 - 1], np.int64)
    out = np.zeros(1, np.int64)
    _fmod[1, 1](a, np.array([2], np.int64), out)
    assert out[0] == 1  # was 0: the dividend went through float64
    u = np.array([2**63 - 1], np.uint64)
    outu = np.zeros(1, np.uint64)
    _fmod[1, 1](u, np.array([7], np.uint64), outu)
    assert outu[0] == 0 == np.fmod(u, np.uint64(7))[0]

    @jit
    def k(x, out, fout):
        out[0] = np.fmod(x[0], 2)  # weak literal: int64 stays int64
        out[1] = np.fmod(-(2**62) - 1, 4)  # folded: C remainder, the dividend's sign
        fout[0] = math.fmod(x[0], 2)  # math.fmod is float, as in Python

    out, fout = np.zeros(2, np.int64), np.zeros(1, np.float64)
    k[1, 1](a, out, fout)
    assert out.tolist() == [1, int(np.fmod(np.int64(-(2**62) - 1), np.int64(4)))]
    assert fout[0] == math.fmod(2**63 - 1, 2)


@pytest.mark.parametrize("dt", [np.int32, np.uint64, np.int64], ids=lambda d: np.dtype(d).name)
def test_np_fmod_integers_hypothesis(dt):
    ii = np.iinfo(dt)
    el = st.integers(int(ii.min), int(ii.max))

    @SET
    @given(st.lists(st.tuples(el, el | st.sampled_from([0, 1, 2] + ([-1] if ii.min else []))), min_size=1,
                    max_size=30))
    def check(pairs):
        a, b = np.array([p[0] for p in pairs], dt), np.array([p[1] for p in pairs], dt)
        out = np.zeros(a.size, dt)
        _launch(_fmod, a.size, a, b, out)
        assert out.tolist() == _np_fmod(a, b).tolist()

    check()


# ------------------------------------------------- floor / ceil / trunc of integers
@jit
def _floor_ceil_trunc(a, out, nout):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = math.floor(a[i])
        out[1, i] = math.ceil(a[i])
        out[2, i] = math.trunc(a[i])
        nout[0, i] = np.floor(a[i])
        nout[1, i] = np.ceil(a[i])
        nout[2, i] = np.trunc(a[i])


@pytest.mark.parametrize("dt", INTS, ids=lambda d: np.dtype(d).name)
def test_floor_ceil_trunc_of_integers_exact(dt):
    ii = np.iinfo(dt)
    v = [x for x in (ii.min, ii.min + 1, -(2**53) - 1, -1, 0, 1, 2**53 + 1, 2**63 - 1, 2**64 - 1, ii.max - 1, ii.max)
         if ii.min <= x <= ii.max]
    a = np.array(v, dt)
    # math.* give Python's int: int64 (uint64 keeps uint64, its values may not fit an int64)
    out = np.zeros((3, a.size), np.uint64 if dt is np.uint64 else np.int64)
    nout = np.zeros((3, a.size), dt)
    _launch(_floor_ceil_trunc, a.size, a, out, nout)
    for j, f in enumerate((math.floor, math.ceil, math.trunc)):
        assert out[j].tolist() == [f(x) for x in v], f.__name__
    for j, f in enumerate((np.floor, np.ceil, np.trunc)):  # numpy >= 2.3 keeps integer types
        assert nout[j].tolist() == [int(x) for x in v], f.__name__


def test_math_floor_issue_example():
    out, nout = np.zeros((3, 1), np.int64), np.zeros((3, 1), np.int64)
    _floor_ceil_trunc[1, 1](np.array([2**53 + 1], np.int64), out, nout)
    assert out[:, 0].tolist() == [2**53 + 1] * 3 and nout[:, 0].tolist() == [2**53 + 1] * 3


def test_floor_of_integer_types():
    from pykern.frontend import types as T
    from frontend_helpers import lower

    src = "def f(x, y, out):\n    out[0] = math.floor(x)\n    out[1] = np.floor(y)\n"
    mod = lower(src, "void(uint64, int8, uint64[::1])", math=math, np=np)
    text = str(mod)
    assert "float" not in text, text  # no float round trip anywhere
    assert mod.kernel.params[0].type == T.uint64


# ------------------------------------------------------------------------- shifts
@jit
def _shifts(a, c, out):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = a[i] << c[i]
        out[1, i] = a[i] >> c[i]


def _shift_counts(dt):
    bits = np.dtype(dt).itemsize * 8
    ii = np.iinfo(dt)
    counts = [0, 1, bits - 1, bits, bits + 1, 2 * bits, 63, 64, 65, 200]
    if ii.min < 0:
        counts += [-1, -bits, -bits - 1, int(ii.min)]
    counts.append(int(ii.max))
    return sorted({c for c in counts if ii.min <= c <= ii.max})


@pytest.mark.parametrize("dt", INTS, ids=lambda d: np.dtype(d).name)
def test_shifts_match_numpy_for_every_count(dt):
    """numpy's rule (Python's too): counts >= the width shift everything out -- 0, or -1 for
    >> of a negative signed value; a negative count does the same."""
    ii = np.iinfo(dt)
    xs = sorted({int(ii.min), -5 if ii.min else 5, -1 if ii.min else 3, 0, 1, 0x5A, int(ii.max)})
    cs = _shift_counts(dt)
    a = np.array([x for x in xs for _ in cs], dt)
    c = np.array([k for _ in xs for k in cs], dt)
    out = np.zeros((2, a.size), dt)
    _launch(_shifts, a.size, a, c, out)
    want_l, want_r = a << c, a >> c
    bad = [(x, k, int(g0), int(g1), int(w0), int(w1)) for x, k, g0, g1, w0, w1 in
           zip(a.tolist(), c.tolist(), out[0], out[1], want_l, want_r) if (g0, g1) != (w0, w1)]
    assert not bad, bad[:10]


def test_shift_issue_examples_with_constant_counts():
    @jit
    def k(u, s, out_u, out_s):
        out_u[0] = u[0] << 32
        out_u[1] = u[0] >> 32
        out_s[0] = s[0] << 9
        out_s[1] = s[1] >> 9
        out_s[2] = s[0] >> 8

    out_u, out_s = np.zeros(2, np.uint32), np.zeros(3, np.int8)
    k[1, 1](np.array([1], np.uint32), np.array([1, -3], np.int8), out_u, out_s)
    assert out_u.tolist() == [0, 0]  # were 1 and 1 (count masked to 0)
    assert out_s.tolist() == [0, -1, 0]  # int8 1 << 9 was 2
    assert out_u.tolist() == [int(np.uint32(1) << 32), int(np.uint32(1) >> 32)]
    assert out_s.tolist() == [int(np.int8(1) << 9), int(np.int8(-3) >> 9), int(np.int8(1) >> 8)]


def test_shift_python_ints_match_python():
    """int64 shifts give Python's answers whenever Python's fits in 64 bits."""

    @SET
    @given(st.lists(st.tuples(st.integers(-(2**63), 2**63 - 1), st.integers(0, 300)), min_size=1, max_size=30))
    def check(pairs):
        a = np.array([p[0] for p in pairs], np.int64)
        c = np.array([p[1] for p in pairs], np.int64)
        out = np.zeros((2, a.size), np.int64)
        _launch(_shifts, a.size, a, c, out)
        for (x, n), got_r in zip(pairs, out[1].tolist()):
            assert got_r == x >> n
        for (x, n), got_l in zip(pairs, out[0].tolist()):
            if -(2**63) <= x << n < 2**63:
                assert got_l == x << n

    check()


# ---------------------------------------------------------------------- round(x, n)
NDIGITS = (-5, -2, -1, 1, 2, 3, 7, 15, 22)


@jit
def _round_nd(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = round(a[i], -5)
        out[1, i] = round(a[i], -2)
        out[2, i] = round(a[i], -1)
        out[3, i] = round(a[i], 1)
        out[4, i] = round(a[i], 2)
        out[5, i] = round(a[i], 3)
        out[6, i] = round(a[i], 7)
        out[7, i] = round(a[i], 15)
        out[8, i] = round(a[i], 22)


_ND = np.array(NDIGITS, np.int64)


@jit
def _round_run_time_nd(a, out):
    # ndigits read from an array: known at run time only (numba's round(x, n) with an int n)
    i = cuda.grid(1)
    if i < a.size:
        for j in range(_ND.size):
            out[j, i] = round(a[i], _ND[j])


def _py_round(x, nd, dt):
    try:
        with np.errstate(over="ignore"):  # float16: round(65504.0, -5) is 1e5, inf as a float16
            return dt(round(float(x), nd))  # float32/16: Python's double result, rounded to the type
    except OverflowError:
        return None


def _check_round(a, kernel=_round_nd):
    dt = a.dtype.type
    out = np.zeros((len(NDIGITS), a.size), dt)
    _launch(kernel, a.size, a, out)
    bad = []
    for j, nd in enumerate(NDIGITS):
        for x, got in zip(a, out[j]):
            want = _py_round(x, nd, dt)
            if want is not None and not same_floats(np.array([got]), np.array([want], dt)):
                bad.append((float(x), nd, float(got), float(want)))
    assert not bad, bad[:10]


@pytest.mark.parametrize("kernel", [_round_nd, _round_run_time_nd], ids=["constant", "run-time"])
@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: np.dtype(d).name)
def test_round_ndigits_extremes(dt, kernel):
    fi = np.finfo(dt)
    with np.errstate(over="ignore"):
        extra = np.array([0.125, 0.375, 2.675, 1.005, 0.285, -0.285, 1234.5, -1234.5,
                          12345.678, 0.05, 0.15, 0.25, 0.35, 2.5e-3, 4.5e15, 1e16], dt)
    s = np.concatenate([specials(dt), extra, np.nextafter(fi.max, 0, dtype=dt) * np.array([1, -1], dt)])
    _check_round(s, kernel)
    out = np.zeros((len(NDIGITS), 1), dt)
    kernel[1, 1](np.array([fi.max], dt), out)
    assert out[4, 0] == fi.max  # round(max, 2) was inf


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_round_ndigits_keeps_pythons_ties_under_fastmath(dt):
    """round(x, n) finds a tie from an exact error term, fma(x, 10**n, -x*10**n); fastmath's
    flags must not let LLVM fold it to 0 (round(0.285, 2) would then be 0.28 or 0.29 by luck)."""
    fast = jit(fastmath=True)(_round_nd.py_func)
    xs = np.concatenate([np.arange(-2000, 2000) / 8, np.arange(-20000, 20000, 7) / 1000 + 0.0005,
                         [0.005, 0.015, 0.025, 2.675, 1.005, 0.285, -0.285, 1234.5, 0.125, 0.375]])
    _check_round(xs.astype(dt), fast)


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
def test_round_ndigits_hypothesis(dt):
    bits = np.finfo(dt).bits
    el = (st.floats(width=bits) | st.floats(-1e6, 1e6, width=bits)
          | st.integers(-(10**8), 10**8).map(lambda k: k / 1000) | st.integers(-(2**20), 2**20).map(lambda k: k / 8))

    @settings(max_examples=60, deadline=None)
    @given(st.lists(el, min_size=1, max_size=40))
    def check(xs):
        _check_round(np.array(xs, dt))
        _check_round(np.array(xs, dt), _round_run_time_nd)

    check()


def test_round_run_time_ndigits_every_range():
    """ndigits from -400 to 400 at run time: CPython's limits (x itself past 323, +-0 below
    -308), exact powers of ten up to 22; beyond, as the constant form (the last bit may differ
    from Python there, as documented)."""
    rng = np.random.default_rng(3)
    xs = np.concatenate([rng.standard_normal(2000) * 10.0 ** rng.integers(-12, 14, 2000),
                         [0.005, 2.675, 1.5, 2.5, -0.5, 1e308, -1e308, np.inf, -np.inf, np.nan, -0.0, 5e-324]])
    nds = rng.integers(-24, 25, xs.size)
    nds[:40] = rng.integers(-400, 400, 40)

    @jit
    def k(r, x, n):
        i = cuda.grid(1)
        if i < x.size:
            r[i] = round(x[i], n[i])

    @jit
    def k23(r, x):
        for i in range(x.size):
            r[i] = round(x[i], 23)

    r = np.zeros_like(xs)
    _launch(k, xs.size, r, xs, nds)
    want = np.array([round(float(x), int(n)) for x, n in zip(xs, nds)])
    exact = (np.abs(nds) <= 22) | (nds > 323) | (nds < -308)
    assert same_floats(r[exact], want[exact])
    beyond = np.nonzero(nds == 23)[0]
    r23 = np.zeros(beyond.size)
    k23[1, 1](r23, xs[beyond])
    assert same_floats(r[beyond], r23)


def test_round_huge_ndigits_follow_python():
    @jit
    def k(a, out):
        out[0] = round(a[0], 400)  # beyond CPython's NDIGITS_MAX: x itself
        out[1] = round(a[0], -400)  # below NDIGITS_MIN: a zero of x's sign
        out[2] = round(a[1], -400)

    a = np.array([-123.456, np.inf])
    out = np.zeros(3)
    k[1, 1](a, out)
    assert same_floats(out, np.array([round(-123.456, 400), round(-123.456, -400), round(np.inf, -400)]))


# ------------------------------------------------------------------ small ones
def test_class_named_ndarray_is_a_launch_error():
    """Types are checked by identity, not by class name."""

    class ndarray:  # noqa: N801  (the point: not numpy's)
        dtype = np.dtype(np.float32)

    class DeviceArray:
        pass

    @jit
    def k(a):
        a[0] = 1

    for fake in (ndarray(), DeviceArray()):
        with pytest.raises(cuda.LaunchError, match=r"argument 1: cannot pass a .*\.(ndarray|DeviceArray) to a kernel"):
            k[1, 1](fake)
    a = np.zeros(1, np.float32)
    k[1, 1](a)
    assert a[0] == 1


@jit(debug=True)
def _index_u64(a, i, out):
    out[0] = a[i]


@pytest.mark.parametrize("idx", [2**63 + 3, 2**64 - 1, 10])
def test_debug_reports_uint64_index_unsigned(idx):
    a = np.arange(10, dtype=np.int64)
    out = np.zeros(1, np.int64)
    with pytest.raises(cuda.KernelRuntimeError) as ei:
        _index_u64[1, 1](a, np.uint64(idx), out)
    assert f"index {idx} is out of bounds for axis 0 with size 10" in str(ei.value), str(ei.value)
    _index_u64[1, 1](a, np.uint64(9), out)
    assert out[0] == 9


def test_amdgpu_error_record_shows_uint64_index_unsigned():
    """The amdgpu debug record decodes a uint64 index unsigned too (2**64-1 above is out of
    bounds on both targets, never a[-1])."""
    from pykern.codegen.amdgpu.target import format_error_record
    from pykern.codegen.lowering.array_ops import UNSIGNED_INDEX
    import struct

    raw = struct.pack("<iiqqqqqqqqq", 1, 0, -(2**63) + 3, 10, UNSIGNED_INDEX | 1, 0, 0, 0, 0, 0, 0)
    text = format_error_record(raw + bytes(80 - len(raw)), ["k.py:3: index out of bounds for array 'x'"])
    assert f"index {2**63 + 3} is out of range for axis 1 with extent 10" in text, text


def test_constant_float_expressions_fold_to_what_the_kernel_computes():
    """numba.cuda kernels follow numpy's error model: 1.0 / 0.0 is inf, math.log(0.0) is -inf,
    math.sqrt(-1.0) nan. Python raises on these; folding them was a CompileError. Each folded
    constant must equal the same operation on run-time values (1 // 0 stays an error)."""

    @jit
    def k(out, x, z):
        out[0] = 1.0 / 0.0
        out[1] = -1.0 / 0.0
        out[2] = 0.0 / 0.0
        out[3] = 1.0 // 0.0
        out[4] = 1.0 % 0.0
        out[5] = 0.0 ** -1.0
        out[6] = 10.0 ** 400.0
        out[7] = math.log(0.0)
        out[8] = math.sqrt(-1.0)
        out[9] = math.exp(1000.0)
        out[10] = math.acosh(0.5)
        out[11] = math.atanh(1.0)
        out[12] = x / z
        out[13] = -x / z
        out[14] = z / z
        out[15] = x // z
        out[16] = x % z
        out[17] = z ** -x
        out[18] = (10 * x) ** 400.0
        out[19] = math.log(z)
        out[20] = math.sqrt(-x)
        out[21] = math.exp(1000.0 * x)
        out[22] = math.acosh(0.5 * x)
        out[23] = math.atanh(x)

    out = np.zeros(24)
    k[1, 1](out, 1.0, 0.0)
    assert same_floats(out[:12], out[12:]), out
    want = [np.inf, -np.inf, np.nan, np.inf, np.nan, np.inf, np.inf, -np.inf, np.nan, np.inf, np.nan, np.inf]
    assert np.array_equal(out[:12], np.array(want), equal_nan=True), out[:12]  # (a NaN's sign is the CPU's)
