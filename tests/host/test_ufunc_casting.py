"""Which declared signature a vectorize/guvectorize call runs, against numpy's own ufunc casting:
the loop choice of real numpy ufuncs (``resolve_dtypes``) over the same loop lists, Python scalars
by numpy 2's weak rules, and the 'same_kind' conversion where no loop takes the inputs safely (a
float64 array into a gufunc declared for float32 only runs the float32 loop, as numba runs it)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import pykern as cuda
from pykern.core.errors import LaunchError
from pykern.host import ufunc_casting

pytestmark = pytest.mark.usefixtures("cpu_target")

ARRAY_DTYPES = [np.dtype(c) for c in "?bBhHiIlLefdFD"]
PY_SCALARS = [int, float, complex]
_UNSUPPORTED = set("gGOmM")  # long double, objects, datetimes: loops pykern signatures do not declare


def _loops(ufunc):
    """The input dtypes of ``ufunc``'s loops, numpy's order, without those pykern cannot declare."""
    loops = []
    for t in ufunc.types:
        ins = t.split("->")[0]
        if not _UNSUPPORTED & set(t):
            loops.append(tuple(np.dtype(c) for c in ins))
    return loops


def _is_py(x) -> bool:
    return any(x is t for t in PY_SCALARS)  # not ``in``: np.dtype("f8") == float


def _as_weak(inputs):
    """(dtypes, weak flags) of inputs given as dtypes or Python scalar types, as ``choose`` takes them."""
    dtypes = [np.dtype({int: "i8", float: "f8", complex: "c16"}[x]) if _is_py(x) else x for x in inputs]
    return dtypes, [_is_py(x) for x in inputs]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from([np.add, np.arctan2, np.ldexp, np.multiply, np.left_shift, np.logaddexp]),
       st.data())
def test_choice_is_numpys_default_loop_choice(ufunc, data):
    inputs = [data.draw(st.sampled_from(ARRAY_DTYPES + PY_SCALARS)) for _ in range(ufunc.nin)]
    try:
        expect = ufunc.resolve_dtypes(tuple(inputs) + (None,) * ufunc.nout)[: ufunc.nin]
    except TypeError:  # numpy has no loop for these; the same_kind tests cover what pykern does
        assume(False)
    loops = _loops(ufunc)
    assume(tuple(expect) in loops)  # numpy chose a loop pykern cannot declare (long double)
    i = ufunc_casting.choose(loops, *_as_weak(inputs))
    assert i is not None and loops[i] == tuple(expect), (inputs, loops[i] if i is not None else None, expect)


def _numpy_takes(dtypes, loop, casting):
    try:
        np.add.resolve_dtypes(tuple(dtypes) + (None,), signature=tuple(loop) + (None,), casting=casting)
        return True
    except TypeError:
        return False


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(ARRAY_DTYPES), min_size=2, max_size=2),
       st.lists(st.booleans(), min_size=len(_loops(np.add)), max_size=len(_loops(np.add))))
def test_subsets_of_loops_choose_by_numpys_casting(dtypes, keep):
    # any declared subset (in declaration order) of np.add's loops, array inputs: the exact loop,
    # else the first numpy takes with casting='safe', else the first with casting='same_kind'
    loops = [lp for lp, k in zip(_loops(np.add), keep) if k]
    expect = next((lp for lp in loops if list(lp) == dtypes), None)
    for casting in ("safe", "same_kind"):
        if expect is None:
            expect = next((lp for lp in loops if _numpy_takes(dtypes, lp, casting)), None)
    i = ufunc_casting.choose(loops, dtypes, [False, False])
    assert (loops[i] if i is not None else None) == expect


def test_weak_python_scalars_follow_numpy_2():
    f2, f4, f8 = (np.dtype(c) for c in "efd")
    loops = [(f2, f2), (f4, f4), (f8, f8)]  # np.arctan2's
    # a bool array does not make a Python int weak: it is int64, so float64 (numpy: arctan2(bools, 1))
    assert loops[ufunc_casting.choose(loops, *_as_weak([np.dtype("?"), int]))] == (f8, f8)
    assert np.arctan2(np.array([True]), 1).dtype == f8
    # an int8 array does: float16 takes both
    assert loops[ufunc_casting.choose(loops, *_as_weak([np.dtype("i1"), int]))] == (f2, f2)
    assert np.arctan2(np.array([1], np.int8), 1).dtype == f2
    # only Python scalars: their default dtypes
    assert loops[ufunc_casting.choose(loops, *_as_weak([int, int]))] == (f8, f8)


# -- calls -------------------------------------------------------------------------------------

@cuda.guvectorize(["void(float32[:], float32[:])"], "(n)->(n)")
def _cumsum32(a, out):
    s = a[0] * 0
    for i in range(a.shape[0]):
        s += a[i]
        out[i] = s


def test_gufunc_declared_for_float32_converts_a_float64_array():
    x = np.linspace(-1.0, 1.0, 30) * np.pi
    r = _cumsum32(x)
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r, np.cumsum(x.astype(np.float32), dtype=np.float32))
    with pytest.raises(LaunchError, match="no signature matches"):
        _cumsum32(x.astype(np.complex128))  # complex to float is not same_kind: numpy refuses it too


@cuda.vectorize(["int8(int8, int8)", "float32(float32, float32)"])
def _vadd_narrow(a, b):
    return a + b


def test_vectorize_same_kind_runs_the_first_loop_and_wraps_as_numpy():
    x = np.array([100, -3, 2**40, 7], np.int64)
    y = np.array([100, 5, 1, -2**33], np.int64)
    r = _vadd_narrow(x, y)  # int64 takes no loop safely; int8 is the first same_kind one
    assert r.dtype == np.int8
    np.testing.assert_array_equal(r, np.add(x, y, dtype=np.int8))
    assert _vadd_narrow(np.float64(1.5), np.float64(2.25)).dtype == np.float32


def test_python_int_out_of_the_loops_range_is_numpys_overflow_error():
    x = np.arange(4, dtype=np.int8)
    np.testing.assert_array_equal(_vadd_narrow(x, 5), np.add(x, 5))
    with pytest.raises(OverflowError):
        np.add(x, 1000)
    with pytest.raises(OverflowError, match="1000 out of bounds for int8"):
        _vadd_narrow(x, 1000)  # after a call with 5: the replayed call plan checks too
    with pytest.raises(OverflowError):
        _vadd_narrow(x, -129)
    np.testing.assert_array_equal(_vadd_narrow(x, -128), np.add(x, -128))


@cuda.vectorize(["float16(float16, float16)", "float32(float32, float32)", "float64(float64, float64)"])
def _vadd_floats(a, b):
    return a + b


def test_bool_array_and_python_int_run_the_float64_loop_as_numpy():
    b = np.array([True, False, True])
    r = _vadd_floats(b, 1)
    assert r.dtype == np.arctan2(b, 1).dtype == np.float64
    np.testing.assert_array_equal(r, [2.0, 1.0, 2.0])


_ADD_LOOPS = [lp for lp in _loops(np.add) if lp[0] == lp[1] and lp[0].kind != "b"]
_ADD_SIGS = list(dict.fromkeys(f"{d[0].name}({d[0].name}, {d[0].name})" for d in _ADD_LOOPS))


@cuda.vectorize(_ADD_SIGS)
def _vadd_all(a, b):
    return a + b


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(ARRAY_DTYPES + PY_SCALARS), st.sampled_from(ARRAY_DTYPES + PY_SCALARS),
       st.lists(st.integers(0, 100), min_size=3, max_size=3), st.integers(-50, 50))
def test_vectorize_result_is_numpys_add(ta, tb, values, scalar):
    # a vectorize ufunc with np.add's loops (but bool's) against np.add itself on the same inputs
    expect_loop = np.add.resolve_dtypes((ta, tb, None))
    assume(expect_loop[0] in [lp[0] for lp in _ADD_LOOPS] and expect_loop[0] == expect_loop[1])

    def make(t):
        return t(scalar) if _is_py(t) else np.array(values, dtype=t)

    a, b = make(ta), make(tb)
    assume(not (_is_py(ta) and _is_py(tb)))
    try:
        expect = np.add(a, b)
    except OverflowError:  # a negative Python int into an unsigned loop: the same error
        with pytest.raises(OverflowError):
            _vadd_all(a, b)
        return
    got = _vadd_all(a, b)
    assert got.dtype == expect.dtype
    np.testing.assert_array_equal(got, expect)
