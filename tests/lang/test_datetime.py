"""numpy ``datetime64``/``timedelta64`` values in kernels, as numba.cuda compiles them (its
test_datetime.py): array and scalar arguments, numpy's arithmetic and comparisons with NaT,
unit conversion, ``vectorize``/``guvectorize`` signatures -- on the cpu target against numpy."""

from __future__ import annotations

import warnings

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")

NAT = np.iinfo(np.int64).min
counts = st.integers(-(2**40), 2**40) | st.just(NAT)


def as_(unit_dtype, xs):
    return np.array(xs, np.int64).view(unit_dtype)


def same(got, want):
    return got.dtype == want.dtype and np.array_equal(got.view("i8"), want.view("i8"))


@cuda.jit
def arith(d1, d2, td, n, diff, later, earlier, scaled, halved, ratio, finer):
    for i in range(d1.size):
        diff[i] = d2[i] - d1[i]
        later[i] = d1[i] + td[i]
        earlier[i] = d1[i] - td[i] - 1
        scaled[i] = td[i] * n[i]
        halved[i] = td[i] // n[i] if i % 2 == 0 else td[i] / n[i]
        ratio[i] = td[i] / (d2[i] - d1[i])
        finer[i] = d1[i]  # a datetime64[D] stored into a datetime64[s] array


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(counts, counts, counts, st.integers(-5, 5)), min_size=1, max_size=6))
def test_arithmetic_equals_numpy_with_nat(rows):
    d1 = as_("M8[D]", [r[0] for r in rows])
    d2 = as_("M8[D]", [r[1] for r in rows])
    td = as_("m8[D]", [r[2] for r in rows])
    n = np.array([r[3] for r in rows], np.int64)
    outs = [np.zeros(len(rows), t) for t in ("m8[D]", "M8[D]", "M8[D]", "m8[D]", "m8[D]", "f8", "M8[s]")]
    arith[1, 1](d1, d2, td, n, *outs)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        halved = np.where(np.arange(len(rows)) % 2 == 0, td // n, td / n)
        want = [d2 - d1, d1 + td, d1 - td - 1, td * n, halved, td / (d2 - d1), d1.astype("M8[s]")]
    for got, w in zip(outs, want):
        if got.dtype.kind == "f":
            assert np.array_equal(got, w, equal_nan=True)
        else:
            assert same(got, w), (got, w)


@cuda.jit
def compares(a, b, out):
    for i in range(a.size):
        out[i, 0] = a[i] == b[i]
        out[i, 1] = a[i] != b[i]
        out[i, 2] = a[i] < b[i]
        out[i, 3] = a[i] <= b[i]
        out[i, 4] = a[i] > b[i]
        out[i, 5] = a[i] >= b[i]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(counts, counts), min_size=1, max_size=6), st.sampled_from(["M8[D]", "m8[ms]"]))
def test_comparisons_equal_numpy_with_nat(rows, dt):
    a = as_(dt, [r[0] for r in rows])
    b = as_(dt, [r[1] for r in rows])
    out = np.zeros((len(rows), 6), np.bool_)
    compares[1, 1](a, b, out)
    want = np.stack([a == b, a != b, a < b, a <= b, a > b, a >= b], axis=1)
    assert np.array_equal(out, want)


def test_mixed_units_convert_to_the_finer_one():
    @cuda.jit
    def k(d, s, out, eq):
        out[0] = s[0] - d[0]
        eq[0] = d[0] == s[0]

    d = np.array(["2005-02-01"], "M8[D]")
    s = np.array(["2005-02-01T00:00:30"], "M8[s]")
    out, eq = np.zeros(1, "m8[s]"), np.zeros(1, np.bool_)
    k[1, 1](d, s, out, eq)
    assert same(out, s - d) and not eq[0]


def test_scalar_arguments_and_matches():
    @cuda.jit
    def k(dates, target, delta, matches, outdelta):
        for i in range(cuda.grid(1), matches.size, cuda.gridsize(1)):
            matches[i] = dates[i] == target
            outdelta[i] = dates[i] - delta

    arr = np.arange("2005-02", "2006-02", dtype="datetime64[D]")
    matches = np.zeros(arr.size, np.bool_)
    outdelta = np.zeros_like(arr)
    k[1, 32](arr, arr[5], arr[6] - arr[5], matches, outdelta)
    assert list(matches.nonzero()[0]) == [5] and same(outdelta, arr - (arr[6] - arr[5]))


def test_vectorize_and_guvectorize_with_datetime_signatures():
    dt = cuda.from_dtype(np.dtype("datetime64[D]"))
    td = cuda.from_dtype(np.dtype("timedelta64[D]"))

    @cuda.vectorize([(dt, dt)])
    def vdiff(start, end):
        return end - start

    @cuda.guvectorize([(dt, dt, td[:])], "(),()->()")
    def gdiff(start, end, out):
        out[0] = end - start

    a = np.arange("2005-02", "2006-02", dtype="datetime64[D]")
    b = a + np.arange(a.size) * 3
    assert same(vdiff(a, b), b - a)
    assert same(gdiff(a, b), b - a)


@pytest.mark.parametrize("body,what", [
    ("out[0] = a[0] + a[0]", "unsupported operand types for +"),
    ("out[0] = a[0] < t[0]", "cannot compare"),
    ("out[0] = a[0] * 2", "unsupported operand types for *"),
])
def test_numpys_refusals_are_compile_errors(body, what):
    import linecache

    text = f"def k(a, t, out):\n    {body}\n"
    fname = f"<pa-datetime-{abs(hash(body))}>"
    linecache.cache[fname] = (len(text), None, text.splitlines(True), fname)
    ns = {}
    exec(compile(text, fname, "exec"), ns)
    k = cuda.jit(ns["k"])
    a = np.array(["2005-02-01"], "M8[D]")
    with pytest.raises(cuda.CompileError, match=what) as ei:
        k[1, 1](a, np.zeros(1, "m8[D]"), np.zeros(1, "M8[D]"))
    assert "^" in str(ei.value)


def test_months_and_days_do_not_mix():
    @cuda.jit
    def k(m, d, out):
        out[0] = m[0] - d[0]

    with pytest.raises(cuda.CompileError, match="units M and D"):
        k[1, 1](np.zeros(1, "M8[M]"), np.zeros(1, "M8[D]"), np.zeros(1, "m8[D]"))


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
