"""The typing rules agree with numba's integer rule (NBEP 1) for integer x integer
operators and with numpy 2 (NEP 50) elsewhere, where the docstring of
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


# ---- numba's overload resolution for integer operators, as a reference independent of
# pykern.frontend.infer. Written from numba/core/typeconv/rules.py (the casting graph),
# numba/core/typing/context.py (_resolve_overload: candidates sorted by (unsafe, safe,
# promote) conversion counts, the first of equals wins) and numba/core/typing/builtins.py
# (integer_binop_cases: choose_result_int over the machine ints int64/uint64; the shift
# template: max(left, intp) with the left operand's signedness).

PROMOTE, SAFE, UNSAFE = 1, 2, 3
_INT_NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def _numba_casts():
    edges = {}
    def rule(a, b, fwd, back):
        edges[a, b], edges[b, a] = fwd, back
    rule("bool", "int8", SAFE, UNSAFE)
    rule("bool", "uint8", SAFE, UNSAFE)
    for s in ("int", "uint"):
        for lo, hi in ((8, 16), (16, 32), (32, 64)):
            rule(f"{s}{lo}", f"{s}{hi}", PROMOTE, UNSAFE)
    for lo, hi in ((8, 16), (16, 32), (32, 64)):
        rule(f"uint{lo}", f"int{hi}", SAFE, UNSAFE)
    # transitive closure: a path is as bad as its worst step, the best path counts
    kind = {(a, a): 0 for a in _INT_NAMES}
    kind.update(edges)
    for m in _INT_NAMES:
        for a in _INT_NAMES:
            for b in _INT_NAMES:
                if (a, m) in kind and (m, b) in kind:
                    k = max(kind[a, m], kind[m, b])
                    if k < kind.get((a, b), 99):
                        kind[a, b] = k
    return kind


_NUMBA_CAST = _numba_casts()


def _numba_resolve(cases, args, unsafe_casting=True):
    rated = []
    for params, result in cases:
        kinds = [_NUMBA_CAST[a, p] for a, p in zip(args, params)]
        if not unsafe_casting and UNSAFE in kinds:
            continue
        rated.append(((kinds.count(UNSAFE), kinds.count(SAFE), kinds.count(PROMOTE)), result))
    rated.sort(key=lambda r: r[0])  # stable: the first of equal ratings wins, as in numba
    return rated[0][1]


def _choose_result_int(*names):
    bits = max(64, *(int(n.lstrip("uint")) for n in names))
    return f"{'int' if any(not n.startswith('u') for n in names) else 'uint'}{bits}"


_MACHINE = ["int64", "uint64"]
_INTEGER_BINOP_CASES = [((a, b), _choose_result_int(a, b)) for a in _MACHINE for b in _MACHINE]
_SHIFT_CASES = ([((a, c), f"int{max(64, int(a[3:]))}") for a in _INT_NAMES[1:5] for c in ("uint64", "int64")]
                + [((a, c), f"uint{max(64, int(a[4:]))}") for a in _INT_NAMES[5:] for c in ("uint64", "int64")])


def numba_int_result(op, a: T.Type, b: T.Type) -> T.Type:
    """numba's result type of ``a op b`` for integers/booleans (not ``/``)."""
    args = tuple("bool" if isinstance(t, T.Boolean) else str(t) for t in (a, b))
    if op in ("<<", ">>"):
        result = _numba_resolve(_SHIFT_CASES, args, unsafe_casting=False)
    elif op in ("&", "|", "^"):
        result = _numba_resolve([(("bool", "bool"), "bool")] + _INTEGER_BINOP_CASES, args, unsafe_casting=False)
    else:
        result = _numba_resolve(_INTEGER_BINOP_CASES, args)
    return T.SCALARS["boolean" if result == "bool" else result]


def expected(op, a: T.Type, b: T.Type) -> T.Type:
    """numba's integer rule for two integers (``/`` is float64 in both), numpy otherwise but for
    numba's uint16 with float32/complex64 (numba 0.68 njit: ``(uint16, float32) -> float64``,
    ``(uint16, complex64) -> complex128``; numpy keeps float32/complex64)."""
    if op != "/" and all(isinstance(t, (T.Integer, T.Boolean)) for t in (a, b)):
        return numba_int_result(op, a, b)
    if {a, b} == {T.uint16, T.float32}:
        return T.float64
    if {a, b} == {T.uint16, T.complex64}:
        return T.complex128
    return np_result(op, a, b)


def test_the_numba_reference_knows_numbas_documented_cases():
    """Spot values from numba's docs and issues, so the reference itself is checked."""
    assert numba_int_result("+", T.uint8, T.uint8) == T.uint64
    assert numba_int_result("*", T.int32, T.int32) == T.int64
    assert numba_int_result("%", T.uint64, T.int64) == T.int64
    assert numba_int_result("&", T.uint64, T.int64) == T.int64
    assert numba_int_result("+", T.boolean, T.boolean) == T.int64
    assert numba_int_result("&", T.boolean, T.boolean) == T.boolean
    assert numba_int_result("<<", T.uint32, T.int64) == T.uint64
    assert numba_int_result(">>", T.int8, T.uint64) == T.int64


@pytest.mark.parametrize("a, b", list(itertools.product(NUMERIC, NUMERIC)), ids=str)
def test_arith_matches_numba_for_integers_and_numpy_otherwise(a, b):
    for op in ("+", "-", "*", "/", "//", "%", "**"):
        if op == "**" and not all(isinstance(t, T.Integer) for t in (a, b)):
            continue  # numpy's float ** int rules are tested by the kernels
        opt, rt = infer.binop_types(op, a, None, b, None)
        assert rt == expected(op, a, b), (op, a, b)
        assert opt == rt


INTS_AND_BOOL = [t for t in ALL if isinstance(t, (T.Integer, T.Boolean))]


@pytest.mark.parametrize("a, b", list(itertools.product(INTS_AND_BOOL, INTS_AND_BOOL)), ids=str)
def test_bitwise_and_shift_match_numba(a, b):
    for op in ("&", "|", "^", "<<", ">>"):
        if op in ("<<", ">>") and a == b == T.boolean:
            continue  # numba finds two equally good shift signatures; ours is int64
        assert infer.binop_types(op, a, None, b, None)[1] == numba_int_result(op, a, b), (op, a, b)


@pytest.mark.parametrize("a", [t for t in NUMERIC if isinstance(t, T.Float)], ids=str)
def test_bitwise_on_floats_is_an_error(a):
    for op in ("&", "|", "^", "<<", ">>"):
        with pytest.raises(infer.InferError):
            infer.binop_types(op, a, None, T.int32, None)


def test_bool_rules():
    # bool with bool arithmetic: Python ints (numba too)
    assert infer.binop_types("+", T.boolean, None, T.boolean, None) == (T.int64, T.int64)
    assert infer.binop_types("&", T.boolean, None, T.boolean, None) == (T.boolean, T.boolean)
    assert infer.binop_types("+", T.boolean, None, T.int8, None)[1] == T.int64
    # numba's first candidate (int64, uint64) ties with (uint64, uint64) and wins
    assert infer.binop_types("+", T.boolean, None, T.uint8, None)[1] == numba_int_result("+", T.boolean, T.uint8) == T.int64
    assert infer.binop_types("/", T.boolean, None, T.int8, None)[1] == T.float64


@pytest.mark.parametrize("t", NUMERIC, ids=str)
def test_python_scalars(t):
    """An int literal next to an integer is numba's int64 literal (``uint64 + 1`` is
    int64, as in numba); a float literal, or an int literal next to a float, is weak
    (NEP 50: float32 * 2.5 stays float32)."""
    x = np.ones(1, t.np_dtype)
    for lit in (1, 2.5):
        if isinstance(t, T.Integer) and isinstance(lit, int):
            expect = numba_int_result("+", t, T.int64)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expect = T.from_dtype((x + lit).dtype)
        assert infer.binop_types("+", t, None, T.float64 if isinstance(lit, float) else T.int64, lit)[1] == expect
        assert infer.binop_types("*", T.float64 if isinstance(lit, float) else T.int64, lit, t, None)[1] == expect
    if isinstance(t, T.Integer):
        # numba types an int literal above int64's range uint64
        assert infer.binop_types("+", t, None, T.uint64, 1 << 63)[1] == numba_int_result("+", t, T.uint64)


@pytest.mark.parametrize("a, b", list(itertools.product(ALL, ALL)), ids=str)
def test_comparisons_promote(a, b):
    assert infer.compare_type(a, None, b, None) == T.promote(a, b)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(NUMERIC), st.sampled_from(NUMERIC), st.sampled_from(["+", "*", "-", "/"]))
def test_kernel_typing_matches_infer(a, b, op):
    """The lowerer uses the rules: the local's type is numba's / numpy's result type."""
    m = lower(f"def k(x, y, out):\n    v = x[0] {op} y[0]\n", [T.Array(a, 1), T.Array(b, 1), T.Array(T.float64, 1)])
    assert m.kernel.locals["v"] == expected(op, a, b)


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
