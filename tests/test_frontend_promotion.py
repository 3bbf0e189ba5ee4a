"""The typing rules agree with numpy 2 (NEP 50) where the docstring of
pykern.frontend.infer says they do."""

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frontend_helpers import lower
from pykern.frontend import infer
from pykern.frontend import types as T

NUMERIC = [t for t in T.SCALARS.values() if not isinstance(t, T.Boolean)]
ALL = list(T.SCALARS.values())


def np_result(op, a: T.Type, b: T.Type):
    x = np.ones(1, a.np_dtype)
    y = np.ones(1, b.np_dtype)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return T.from_dtype({"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide,
                             "//": np.floor_divide, "%": np.mod, "&": np.bitwise_and, "|": np.bitwise_or,
                             "^": np.bitwise_xor, "<<": np.left_shift, ">>": np.right_shift}[op](x, y).dtype)


@pytest.mark.parametrize("a, b", list(itertools.product(NUMERIC, NUMERIC)), ids=str)
def test_arith_matches_numpy(a, b):
    for op in ("+", "-", "*", "/", "//", "%"):
        opt, rt = infer.binop_types(op, a, None, b, None)
        assert rt == np_result(op, a, b), (op, a, b)
        assert opt == rt


@pytest.mark.parametrize("a, b", list(itertools.product(
    [t for t in NUMERIC if isinstance(t, T.Integer)], [t for t in NUMERIC if isinstance(t, T.Integer)])), ids=str)
def test_bitwise_and_shift_match_numpy(a, b):
    for op in ("&", "|", "^", "<<", ">>"):
        if T.promote(a, b) == T.float64:  # int64 with uint64: numpy refuses ...
            if op in ("<<", ">>"):  # ... but a shift count is a count: shift in the left type (CUDA C)
                assert infer.binop_types(op, a, None, b, None) == (a, a)
                continue
            with pytest.raises(infer.InferError):  # ... and so do we for & | ^
                infer.binop_types(op, a, None, b, None)
            continue
        assert infer.binop_types(op, a, None, b, None)[1] == np_result(op, a, b)


def test_bool_rules():
    # bool with bool arithmetic: Python ints (documented deviation from numpy)
    assert infer.binop_types("+", T.boolean, None, T.boolean, None) == (T.int64, T.int64)
    assert infer.binop_types("&", T.boolean, None, T.boolean, None) == (T.boolean, T.boolean)
    assert infer.binop_types("+", T.boolean, None, T.int8, None)[1] == T.int8
    assert infer.binop_types("/", T.boolean, None, T.int8, None)[1] == T.float64


@pytest.mark.parametrize("t", NUMERIC, ids=str)
def test_weak_python_scalars_match_nep50(t):
    x = np.ones(1, t.np_dtype)
    for lit in (1, 2.5):
        if isinstance(lit, float) or True:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expect = T.from_dtype((x + lit).dtype)
            assert infer.binop_types("+", t, None, T.float64 if isinstance(lit, float) else T.int64, lit)[1] == expect
            assert infer.binop_types("*", T.float64 if isinstance(lit, float) else T.int64, lit, t, None)[1] == expect
    # an int literal that does not fit the integer type: we widen instead of overflowing
    if isinstance(t, T.Integer) and t.bits < 64:
        assert infer.binop_types("+", t, None, T.int64, 1 << 40)[1] == T.promote(t, T.int64)


@pytest.mark.parametrize("a, b", list(itertools.product(ALL, ALL)), ids=str)
def test_comparisons_promote(a, b):
    assert infer.compare_type(a, None, b, None) == T.promote(a, b)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(NUMERIC), st.sampled_from(NUMERIC), st.sampled_from(["+", "*", "-", "/"]))
def test_kernel_typing_matches_infer(a, b, op):
    """The lowerer uses the rules: the local's type is the numpy result type."""
    m = lower(f"def k(x, y, out):\n    v = x[0] {op} y[0]\n", [T.Array(a, 1), T.Array(b, 1), T.Array(T.float64, 1)])
    assert m.kernel.locals["v"] == np_result(op, a, b)


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=-(1 << 63), max_value=(1 << 64) - 1))
def test_int_literal_types(v):
    t = infer.literal_type(v)
    assert t == (T.int64 if v < (1 << 63) else T.uint64)
    assert infer.fits(v, t)


def test_unify():
    assert infer.unify(T.int64, T.float32) == T.float64
    assert infer.unify(T.int32, T.int32) == T.int32
    assert infer.unify(T.Tuple((T.int32, T.float32)), T.Tuple((T.int64, T.float32))) == T.Tuple((T.int64, T.float32))
    assert infer.unify(T.Tuple((T.int32,)), T.Tuple((T.int32, T.int32))) is None
    assert infer.unify(T.Array(T.float32, 1, "C"), T.Array(T.float32, 1, "A")) is None
    assert infer.unify(T.Array(T.float32, 1), T.float32) is None


INTS = [t for t in NUMERIC if isinstance(t, T.Integer)]


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=-(1 << 63), max_value=(1 << 64) - 1), st.sampled_from(INTS), st.sampled_from(INTS + [T.float32, T.float64, T.boolean]))
def test_constant_casts_match_numpy_astype(v, src, dst):
    """Folding Cast(Const) gives what numpy's astype gives (ints wrap)."""
    from pykern.frontend.values import fold_cast as _fold_cast

    if not src.min <= v <= src.max:
        v = v % (1 << src.bits) + src.min if src.signed else v % (1 << src.bits)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expect = np.array([v], src.np_dtype).astype(dst.np_dtype)[0].item()
    got = _fold_cast(v, src, dst)
    if isinstance(dst, T.Float):
        got = float(dst.np_dtype.type(got))
    assert got == expect


@settings(max_examples=100, deadline=None)
@given(st.integers(-1000, 1000), st.integers(-1000, 1000), st.sampled_from(["+", "-", "*", "//", "%", "&", "|", "^"]))
def test_weak_constant_folding_is_python(a, b, op):
    if op in ("//", "%") and b == 0:
        return
    m = lower(f"def k(out):\n    x = {a} {op} ({b})\n", [T.Array(T.int64, 1)])
    text = str(m.kernel)
    expect = eval(f"{a} {op} ({b})")
    assert f"x = {expect}:int64" in text
