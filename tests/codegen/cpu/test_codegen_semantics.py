"""Exact value semantics of the lowering (hand-built typed IR, run on the cpu
target, compared with Python/numpy). Independent of the frontend."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cpu_helpers import C, V, b1, cast, cmp, compile_module, f32, f64, gtid, i32, i64, intr, kernel, launch, load, op, store
from pykern.frontend import ir
from pykern.frontend import types as T

SET = settings(max_examples=25, deadline=None)


def _arr(t):
    return T.Array(t, 1, "C")


@functools.lru_cache(maxsize=None)
def elementwise(name, in_types: tuple, outs: tuple, **opts):
    """Kernel ``out_k[i] = f_k(a[i], b[i], ...)`` for i < a.size.

    ``outs``: tuple of (out type, fn(*loaded inputs) -> Expr)."""
    ins = [(f"in{k}", _arr(t)) for k, t in enumerate(in_types)]
    outp = [(f"out{k}", _arr(t)) for k, (t, _) in enumerate(outs)]
    i = V("i", i64)
    loaded = [load(V(n, a), i) for n, a in ins]
    stores = [store(V(n, a), i, fn(*loaded)) for (n, a), (_, fn) in zip(outp, outs)]
    body = [
        ir.Assign("i", gtid()),
        ir.If(cmp("<", i, ir.ArrayAttr(V("in0", ins[0][1]), "shape", 0)), stores, []),
    ]
    k = compile_module(kernel(name, ins + outp, body, {"i": i64}), **dict(opts))
    k.argtypes = [a for _, a in ins + outp]
    k.out_types = [t for t, _ in outs]
    return k


def run_elementwise(k, *inputs):
    n = len(inputs[0])
    outs = [np.zeros(n, t.np_dtype) for t in k.out_types]
    launch(k, ((n + 63) // 64,), (64,), *inputs, *outs)
    return outs


def _wrap(v, t):
    m = 1 << t.bits
    v %= m
    if t.signed and v >= m // 2:
        v -= m
    return v


# ----------------------------------------------------------------- integers
INT_TYPES = [T.int8, T.int32, T.int64, T.uint32, T.uint64]


def _int_lists(t):
    el = st.integers(t.min, t.max)
    special = st.sampled_from([0, 1, -1 if t.signed else t.max, t.min, t.max, 7, -7 if t.signed else 3])
    return st.lists(st.one_of(el, special), min_size=1, max_size=40)


@pytest.mark.parametrize("t", INT_TYPES, ids=str)
def test_int_floordiv_mod_python_semantics(t):
    k = elementwise(
        f"idiv_{t}", (t, t),
        ((t, lambda a, b: op("//", a, b)), (t, lambda a, b: op("%", a, b)),
         (t, lambda a, b: op("*", a, b)), (t, lambda a, b: op("-", a, b))),
    )

    @SET
    @given(_int_lists(t), st.data())
    def check(a, data):
        b = data.draw(st.lists(st.one_of(st.integers(t.min, t.max), st.sampled_from([0, 1, t.max] + ([-1] if t.signed else []))),
                               min_size=len(a), max_size=len(a)))
        q, r, m, s = run_elementwise(k, np.array(a, t.np_dtype), np.array(b, t.np_dtype))
        for x, y, qq, rr, mm, ss in zip(a, b, q, r, m, s):
            eq = 0 if y == 0 else _wrap(x // y, t)  # division by zero gives 0, never a trap
            er = 0 if y == 0 else _wrap(x % y, t)
            assert (int(qq), int(rr)) == (eq, er), (x, y)
            assert int(mm) == _wrap(x * y, t) and int(ss) == _wrap(x - y, t)

    check()


def test_int_min_div_minus_one_wraps_not_traps():
    k = elementwise("mindiv", (T.int32, T.int32), ((T.int32, lambda a, b: op("//", a, b)), (T.int32, lambda a, b: op("%", a, b))))
    a = np.array([-2**31, -2**31, 5, -5, 0], np.int32)
    b = np.array([-1, 0, 0, -1, 0], np.int32)
    q, r = run_elementwise(k, a, b)
    assert q.tolist() == [-2**31, 0, 0, 5, 0]
    assert r.tolist() == [0, 0, 0, 0, 0]


def _shift(o, x, c, t):
    """numpy's/Python's shift: a count >= the width or negative shifts everything out."""
    if not 0 <= c < t.bits:
        return 0 if o == "<<" or x >= 0 else -1
    return _wrap(x << c, t) if o == "<<" else x >> c


def test_int_shift_out_of_range_and_bitops():
    t = T.int32
    k = elementwise(
        "shifts", (t, t),
        ((t, lambda a, b: op("<<", a, b)), (t, lambda a, b: op(">>", a, b)),
         (T.uint32, lambda a, b: op(">>", cast(a, T.uint32), cast(b, T.uint32))),
         (t, lambda a, b: op("&", op("|", a, b), op("^", a, b))),
         (i32, lambda a, b: intr("popc", a)), (i32, lambda a, b: intr("clz", a)),
         (i32, lambda a, b: intr("ffs", a)), (t, lambda a, b: intr("brev", a, t=t))),
    )
    a = np.array([1, -8, 12345, 0, -1, 1 << 30], np.int32)
    b = np.array([33, 1, 3, 5, 31, 2], np.int32)
    shl, shr, ushr, logic, popc, clz, ffs, brev = run_elementwise(k, a, b)
    for x, y, *got in zip(a.tolist(), b.tolist(), shl, shr, ushr, logic, popc, clz, ffs, brev):
        ux = x & 0xFFFFFFFF
        assert int(got[0]) == _shift("<<", x, y, t)
        assert int(got[1]) == _shift(">>", x, y, t)
        assert int(got[2]) == _shift(">>", ux, y & 0xFFFFFFFF, T.uint32)
        assert int(got[3]) == _wrap((x | y) & (x ^ y), t)
        assert int(got[4]) == bin(ux).count("1")
        assert int(got[5]) == 32 - ux.bit_length()
        assert int(got[6]) == ((ux & -ux).bit_length() if ux else 0)
        assert int(got[7]) == _wrap(int(f"{ux:032b}"[::-1], 2), t)


def test_int_pow_and_abs_min_max():
    t = T.int64
    k = elementwise(
        "ipow", (t, t),
        ((t, lambda a, b: op("**", a, b)), (t, lambda a, b: intr("abs", a, t=t)),
         (t, lambda a, b: intr("min", a, b, t=t)), (t, lambda a, b: intr("max", a, b, t=t))),
    )
    a = np.array([2, -2, 3, 1, -1, -1, 0, 7, -2**63, 3], np.int64)
    b = np.array([10, 3, -1, -5, -3, -4, 0, 0, 1, 41], np.int64)
    p, ab, mn, mx = run_elementwise(k, a, b)
    for x, y, pp in zip(a.tolist(), b.tolist(), p.tolist()):
        if y < 0:
            exp = 1 if x == 1 else ((-1 if y % 2 else 1) if x == -1 else 0)
        else:
            exp = _wrap(x ** y, t)
        assert pp == exp, (x, y)
    assert ab.tolist() == [_wrap(abs(x), t) for x in a.tolist()]  # abs(MIN) == MIN
    assert mn.tolist() == np.minimum(a, b).tolist() and mx.tolist() == np.maximum(a, b).tolist()


def test_int_casts_wrap_and_bool():
    k = elementwise(
        "icasts", (T.int64,),
        ((T.int8, lambda a: cast(a, T.int8)), (T.uint16, lambda a: cast(a, T.uint16)),
         (b1, lambda a: cast(a, b1)), (f32, lambda a: cast(cast(a, T.uint32), f32))),
    )
    a = np.array([0, 127, 128, -129, 2**40 + 5, -1, 65536], np.int64)
    i8, u16, bo, f = run_elementwise(k, a)
    assert i8.tolist() == a.astype(np.int8).tolist()
    assert u16.tolist() == a.astype(np.uint16).tolist()
    assert bo.tolist() == (a != 0).tolist()
    assert f.tolist() == a.astype(np.uint32).astype(np.float32).tolist()


# ------------------------------------------------------------------- floats
SPECIAL_F = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.5, 1.5, 3.5, np.inf, -np.inf, np.nan, 1e300, -7.25, 5e-324]


@pytest.mark.parametrize("t", [f32, f64], ids=str)
def test_float_floordiv_mod_like_numpy(t):
    k = elementwise(f"fdiv_{t}", (t, t), ((t, lambda a, b: op("//", a, b)), (t, lambda a, b: op("%", a, b)),
                                          (t, lambda a, b: op("/", a, b)), (t, lambda a, b: op("**", a, b))))
    with np.errstate(over="ignore"):
        vals = np.array(SPECIAL_F, t.np_dtype)
    a = np.repeat(vals, len(vals))
    b = np.tile(vals, len(vals))
    q, r, d, p = run_elementwise(k, a, b)
    with np.errstate(all="ignore"):
        eq, er, ed, ep = np.floor_divide(a, b), np.remainder(a, b), a / b, np.power(a, b)
    np.testing.assert_allclose(p, ep, rtol=4 * np.finfo(t.np_dtype).eps)  # libm pow vs numpy's: 1 ulp
    for got, exp in ((q, eq), (r, er), (d, ed)):
        np.testing.assert_array_equal(got, exp)
        assert (np.signbit(got) == np.signbit(exp))[~np.isnan(exp)].all()


def test_float_to_int_casts_saturate():
    k = elementwise(
        "fcasts", (f64,),
        ((T.int32, lambda a: cast(a, T.int32)), (T.uint8, lambda a: cast(a, T.uint8)),
         (T.int64, lambda a: cast(a, T.int64)), (b1, lambda a: cast(a, b1)),
         (T.float16, lambda a: cast(a, T.float16)), (f32, lambda a: cast(a, f32))),
    )
    a = np.array([np.nan, np.inf, -np.inf, 1e20, -1e20, -3.7, 3.7, 255.9, 256.0, -0.0, 0.0, 65520.0], np.float64)
    i, u, l, bo, h, f = run_elementwise(k, a)
    assert i.tolist() == [0, 2**31 - 1, -2**31, 2**31 - 1, -2**31, -3, 3, 255, 256, 0, 0, 65520]
    assert u.tolist() == [0, 255, 0, 255, 0, 0, 3, 255, 255, 0, 0, 255]
    assert l.tolist() == [0, 2**63 - 1, -2**63, 2**63 - 1, -2**63, -3, 3, 255, 256, 0, 0, 65520]
    assert bo.tolist() == [True, True, True, True, True, True, True, True, True, False, False, True]
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(h, a.astype(np.float16))
        np.testing.assert_array_equal(f, a.astype(np.float32))


def test_float_min_max_round_abs_nan():
    t = f64
    k = elementwise(
        "fminmax", (t, t),
        ((t, lambda a, b: intr("min", a, b, t=t)), (t, lambda a, b: intr("max", a, b, t=t)),
         (t, lambda a, b: intr("round", a, t=t)), (t, lambda a, b: intr("abs", a, t=t)),
         (b1, lambda a, b: intr("isnan", a, t=b1)), (b1, lambda a, b: intr("isinf", a, t=b1)),
         (b1, lambda a, b: intr("isfinite", a, t=b1)),
         (b1, lambda a, b: cmp("!=", a, b)), (b1, lambda a, b: cmp("<=", a, b))),
    )
    a = np.array([1.0, np.nan, 2.0, 0.5, 1.5, 2.5, -0.5, -2.5, np.inf, -0.0], t.np_dtype)
    b = np.array([np.nan, 1.0, 2.0, 0.0, 1.0, 3.0, 1.0, np.nan, 1.0, 0.0], t.np_dtype)
    mn, mx, rd, ab, isn, isi, isf, ne, le = run_elementwise(k, a, b)
    np.testing.assert_array_equal(mn, [min(x, y) for x, y in zip(a.tolist(), b.tolist())])
    np.testing.assert_array_equal(mx, [max(x, y) for x, y in zip(a.tolist(), b.tolist())])
    np.testing.assert_array_equal(rd, [round(x) if math.isfinite(x) else x for x in a.tolist()])
    np.testing.assert_array_equal(ab, np.abs(a))
    assert isn.tolist() == np.isnan(a).tolist() and isi.tolist() == np.isinf(a).tolist()
    assert isf.tolist() == np.isfinite(a).tolist()
    assert ne.tolist() == (a != b).tolist() and le.tolist() == (a <= b).tolist()


MATH1 = "sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp exp2 expm1 log log2 log10 log1p sqrt cbrt erf erfc gamma lgamma floor ceil trunc rint fabs".split()
MATH2 = "atan2 pow hypot copysign fmod".split()


@pytest.mark.parametrize("t", [f32, f64, T.float16], ids=str)
def test_math_functions_match_libm(t):
    outs = tuple((t, (lambda n: lambda a, b: intr(n, a, t=t))(n)) for n in MATH1)
    outs += tuple((t, (lambda n: lambda a, b: intr(n, a, b, t=t))(n)) for n in MATH2)
    outs += ((t, lambda a, b: intr("fma", a, b, a, t=t)), (t, lambda a, b: op("+", op("*", a, b), a)))
    k = elementwise(f"math_{t}", (t, t), outs)
    a = np.array([0.3, 1.7, 2.5, 0.9, 4.0], t.np_dtype)
    b = np.array([1.1, -0.4, 2.0, 3.0, 0.5], t.np_dtype)
    got = run_elementwise(k, a, b)
    names = MATH1 + MATH2
    rtol = {16: 2e-3, 32: 2e-6, 64: 1e-13}[t.bits]
    for n, g in zip(names, got):
        for x, y, v in zip(a.tolist(), b.tolist(), g.tolist()):
            ref = _math_ref(n, x, y)
            if math.isnan(ref):
                assert math.isnan(v), (n, x)
            else:
                assert v == pytest.approx(float(t.np_dtype.type(ref)), rel=rtol, abs=rtol), (n, x, y)
    fma, mul_add = got[len(names)], got[len(names) + 1]
    np.testing.assert_allclose(fma, mul_add, rtol=rtol)


def _math_ref(name, x, y):
    m = {"gamma": math.gamma, "lgamma": math.lgamma, "exp2": lambda v: 2.0 ** v, "rint": lambda v: float(round(v)),
         "fabs": abs, "cbrt": lambda v: math.copysign(abs(v) ** (1 / 3), v), "log2": math.log2}
    if name in MATH2:
        return {"pow": math.pow, "atan2": math.atan2, "hypot": math.hypot, "copysign": math.copysign, "fmod": math.fmod}[name](x, y)
    f = m.get(name) or getattr(math, name)
    try:
        return f(x)
    except ValueError:
        return float("nan")


def test_ill_typed_ir_is_compile_error_not_crash():
    from pykern.core.errors import CompileError

    A = _arr(f32)
    bad = kernel("bad", [("x", A)], [store(V("x", A), C(0), C(1, i64))])  # int64 stored into float32[]
    with pytest.raises(CompileError, match="internal error"):
        compile_module(bad)


def test_recursive_barrier_device_function_is_compile_error():
    from cpu_helpers import device
    from pykern.core.errors import CompileError

    A = _arr(f32)
    rec = device("rec", [("n", i64)], T.void, [
        ir.ExprStmt(intr("syncthreads", t=T.void)),
        ir.If(cmp(">", V("n", i64), C(0)), [ir.ExprStmt(ir.Call("rec", [op("-", V("n", i64), C(1))], T.void))], []),
    ])
    mod = kernel("callsrec", [("x", A)], [ir.ExprStmt(ir.Call("rec", [C(3)], T.void))], functions=[rec])
    with pytest.raises(CompileError, match="recursive"):
        compile_module(mod)


# ------------------------------------------------ random integer expressions
_OPS = ["+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>"]


def _random_expr(r, depth):
    if depth == 0 or r.random() < 0.25:
        return r.choice(["a", "b", r.randint(-9, 9), r.choice([-2**31, 2**31 - 1, 0, -1])])
    return (r.choice(_OPS), _random_expr(r, depth - 1), _random_expr(r, depth - 1))


def _to_ir(e, t, a, b):
    if e == "a":
        return a
    if e == "b":
        return b
    if isinstance(e, int):
        return C(_wrap(e, t), t)
    return op(e[0], _to_ir(e[1], t, a, b), _to_ir(e[2], t, a, b))


def _eval(e, t, a, b):
    if e == "a":
        return a
    if e == "b":
        return b
    if isinstance(e, int):
        return _wrap(e, t)
    o, x, y = e[0], _eval(e[1], t, a, b), _eval(e[2], t, a, b)
    if o in ("//", "%"):
        return 0 if y == 0 else _wrap(x // y if o == "//" else x % y, t)
    if o in ("<<", ">>"):
        return _shift(o, x, y, t)
    return _wrap({"+": x + y, "-": x - y, "*": x * y, "&": x & y, "|": x | y, "^": x ^ y}[o], t)


@pytest.mark.parametrize("t", [T.int32, T.int64], ids=str)
def test_random_integer_expressions_match_python(t):
    import random

    r = random.Random(20261202 + t.bits)
    exprs = [_random_expr(r, 4) for _ in range(40)]
    k = elementwise(f"rexpr_{t}", (t, t), tuple((t, (lambda e: lambda a, b: _to_ir(e, t, a, b))(e)) for e in exprs))

    @SET
    @given(st.lists(st.tuples(_int_lists(t).map(lambda v: v[0]), _int_lists(t).map(lambda v: v[0])), min_size=1, max_size=16))
    def check(pairs):
        a = np.array([p[0] for p in pairs], t.np_dtype)
        b = np.array([p[1] for p in pairs], t.np_dtype)
        outs = run_elementwise(k, a, b)
        for e, got in zip(exprs, outs):
            assert got.tolist() == [_eval(e, t, x, y) for x, y in pairs], e

    check()
