"""The verifier catches hand-made bad IR (so that LLVM never sees it)."""

import pytest

from frontend_helpers import lower
from pykern.core.errors import CompileError
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.verify import problems, verify_function, verify_module

A1 = T.Array(T.float32, 1, "C")


def fn(body, params=(("a", A1),), locals_=None, ret=T.void, is_kernel=True):
    loc = {n: t for n, t in params}
    loc.update(locals_ or {})
    return ir.Function("f", [ir.Param(n, t) for n, t in params], ret, body, loc, is_kernel)


def V(name, t):
    return ir.Var(name, t)


def C(v, t):
    return ir.Const(v, t)


a = V("a", A1)
i64 = C(0, T.int64)

BAD = [
    ("undeclared variable", [ir.Assign("x", C(1, T.int64))], {}, "undeclared variable 'x'"),
    ("assign wrong type", [ir.Assign("x", C(1.0, T.float64))], {"x": T.int64}, "assigning a float64 to 'x'"),
    ("var type mismatch", [ir.Assign("x", V("y", T.int32))], {"x": T.int32, "y": T.int64}, "read as int32"),
    ("binop mixed", [ir.Assign("x", ir.BinOp("+", C(1, T.int64), C(1, T.int32), T.int64))], {"x": T.int64}, "must be cast"),
    ("int division", [ir.Assign("x", ir.BinOp("/", C(1, T.int64), C(1, T.int64), T.int64))], {"x": T.int64}, "'/' on int64"),
    ("bad op", [ir.Assign("x", ir.BinOp("@", C(1, T.int64), C(1, T.int64), T.int64))], {"x": T.int64}, "unknown binary operator"),
    ("float shift", [ir.Assign("x", ir.BinOp("<<", C(1.0, T.float64), C(1.0, T.float64), T.float64))], {"x": T.float64}, "shift"),
    ("bool arith", [ir.Assign("x", ir.BinOp("+", C(True, T.boolean), C(True, T.boolean), T.boolean))], {"x": T.boolean}, "arithmetic + on boolean"),
    ("index not int64", [ir.Store(a, [C(0, T.int32)], C(1.0, T.float32))], {}, "indices must be int64"),
    ("store no cast", [ir.Store(a, [i64], C(1.0, T.float64))], {}, "no Cast inserted"),
    ("too few indices", [ir.Store(a, [], C(1.0, T.float32))], {}, "1-d array indexed with 0"),
    ("load type", [ir.Assign("x", ir.Load(a, [i64], T.float64))], {"x": T.float64}, "load from float32[::1] typed float64"),
    ("const out of range", [ir.Assign("x", C(300, T.int8))], {"x": T.int8}, "does not fit"),
    ("float const as int", [ir.Assign("x", C(1.5, T.int64))], {"x": T.int64}, "does not fit"),
    ("unknown intrinsic", [ir.ExprStmt(ir.Intrinsic("frobnicate", [], T.void))], {}, "unknown intrinsic 'frobnicate'"),
    ("intrinsic args", [ir.Assign("x", ir.Intrinsic("sqrt", [C(1.0, T.float64)], T.float32))], {"x": T.float32}, "sqrt is (f) -> f"),
    ("axis missing", [ir.Assign("x", ir.Intrinsic("thread_idx", [], T.int32))], {"x": T.int32}, "axis"),
    ("shfl mask", [ir.Assign("x", ir.Intrinsic("shfl_sync", [C(1, T.int64), C(1.0, T.float32), C(0, T.int32)], T.float32))], {"x": T.float32}, "shfl_sync is (uint64, x, int32)"),
    ("break outside loop", [ir.Break()], {}, "break outside a loop"),
    ("continue outside loop", [ir.If(C(True, T.boolean), [ir.Continue()], [])], {}, "continue outside a loop"),
    ("non-bool condition", [ir.If(C(1, T.int64), [], [])], {}, "condition is int64"),
    ("while cond", [ir.While(C(1.0, T.float32), [])], {}, "condition is float32"),
    ("kernel returns value", [ir.Return(C(1, T.int64))], {}, "return of a int64 in a void function"),
    ("for bounds type", [ir.ForRange("i", C(0, T.int32), C(1, T.int64), C(1, T.int64), [])], {"i": T.int64}, "range start is int32"),
    ("for float var", [ir.ForRange("i", C(0.0, T.float64), C(1.0, T.float64), C(1.0, T.float64), [])], {"i": T.float64}, "not an integer"),
    ("store readonly", [ir.Store(V("r", T.Array(T.float32, 1, readonly=True)), [i64], C(1.0, T.float32))], {"r": T.Array(T.float32, 1, readonly=True)}, "read-only"),
    ("atomic value type", [ir.ExprStmt(ir.Atomic("add", a, [i64], [C(1, T.int32)], T.float32))], {}, "cast missing"),
    ("atomic cas arity", [ir.ExprStmt(ir.Atomic("cas", V("b", T.Array(T.int32, 1)), [i64], [C(1, T.int32)], T.int32))], {"b": T.Array(T.int32, 1)}, "takes 2 value(s)"),
    ("atomic xor float", [ir.ExprStmt(ir.Atomic("xor", a, [i64], [C(1.0, T.float32)], T.float32))], {}, "atomic xor on float32"),
    ("bad alloc", [ir.Assign("s", ir.AllocArray("s0", "local", (0,), T.Array(T.float32, 1, "C", "local")))], {"s": T.Array(T.float32, 1, "C", "local")}, "zero-size local"),
    ("alloc type", [ir.Assign("s", ir.AllocArray("s0", "shared", (2, 2), T.Array(T.float32, 1, "C", "shared")))], {"s": T.Array(T.float32, 1, "C", "shared")}, "typed"),
    ("const array size", [ir.Assign("c", ir.ConstArray("c0", b"\0" * 3, (1,), T.Array(T.float32, 1, "C", "const", True)))], {"c": T.Array(T.float32, 1, "C", "const", True)}, "needs 4"),
    ("tuple get range", [ir.Assign("x", ir.TupleGet(V("t", T.Tuple((T.int32,))), 1, T.int32))], {"x": T.int32, "t": T.Tuple((T.int32,))}, "out of range"),
    ("tuple expr type", [ir.Assign("t", ir.TupleExpr([C(1, T.int64)], T.Tuple((T.int32,))))], {"t": T.Tuple((T.int32,))}, "typed"),
    ("array attr dim", [ir.Assign("x", ir.ArrayAttr(a, "shape", 1))], {"x": T.int64}, "shape[1] of a 1-d"),
    ("cast array", [ir.Assign("x", ir.Cast(a, T.int64))], {"x": T.int64}, "only scalars"),
    ("call unknown", [ir.ExprStmt(ir.Call("nope", [], T.void))], {}, "unknown function 'nope'"),
    ("boolop operand", [ir.Assign("b", ir.BoolOp("and", [C(1, T.int64), C(True, T.boolean)]))], {"b": T.boolean}, "cast to boolean"),
    ("ifexp branches", [ir.Assign("x", ir.IfExp(C(True, T.boolean), C(1, T.int64), C(1.0, T.float64), T.int64))], {"x": T.int64}, "branches"),
    ("not on int", [ir.Assign("x", ir.UnaryOp("not", C(1, T.int64), T.int64))], {"x": T.int64}, "'not' of int64"),
    ("compare mixed", [ir.Assign("b", ir.Compare("<", C(1, T.int64), C(1.0, T.float64)))], {"b": T.boolean}, "comparing int64 with float64"),
    ("not an expr", [ir.Assign("x", 5)], {"x": T.int64}, "not an IR expression"),
    ("unknown stmt", ["pass"], {}, "unknown statement"),
]


@pytest.mark.parametrize("name, body, locals_, words", BAD, ids=[b[0] for b in BAD])
def test_bad_ir_is_caught(name, body, locals_, words):
    f = fn(body, locals_=locals_)
    probs = problems(f)
    assert probs, name
    assert words in probs[0][0], probs
    with pytest.raises(CompileError) as ei:
        verify_function(f)
    assert "internal error" in str(ei.value)


def test_good_ir_passes():
    body = [
        ir.Assign("x", ir.BinOp("+", C(1, T.int64), ir.Cast(ir.Load(a, [i64], T.float32), T.int64), T.int64)),
        ir.ForRange("i", C(0, T.int64), V("x", T.int64), C(1, T.int64), [ir.Break()]),
        ir.Store(a, [V("i", T.int64)], ir.Cast(V("x", T.int64), T.float32)),
        ir.Return(),
    ]
    assert problems(fn(body, locals_={"x": T.int64, "i": T.int64})) == []


def test_function_level_rules():
    # kernel with non-void return type
    f = fn([ir.Return(C(1, T.int64))], ret=T.int64)
    assert "kernels must return void" in problems(f)[0][0]
    # device function that can fall off its end
    f = fn([ir.If(C(True, T.boolean), [ir.Return(C(1, T.int64))], [])], ret=T.int64, is_kernel=False)
    assert "without a return" in problems(f)[0][0]
    # parameter not in locals with its type
    f = ir.Function("f", [ir.Param("a", A1)], T.void, [], {"a": T.float32}, True)
    assert "parameter 'a" in problems(f)[0][0]


def test_call_checks_against_module():
    callee = ir.Function("g", [ir.Param("x", T.int32)], T.int32, [ir.Return(V("x", T.int32))], {"x": T.int32}, False)
    good = fn([ir.Assign("y", ir.Call("g", [C(1, T.int32)], T.int32))], locals_={"y": T.int32})
    verify_module(ir.Module(good, {"g": callee}))
    bad = fn([ir.Assign("y", ir.Call("g", [C(1, T.int64)], T.int32))], locals_={"y": T.int32})
    with pytest.raises(CompileError, match="argument 'x' of 'g' is int32, got int64"):
        verify_module(ir.Module(bad, {"g": callee}))


def test_every_intrinsic_the_frontend_emits_is_catalogued():
    # lowering a kernel that uses many intrinsics verifies them (compile_ir runs the verifier)
    m = lower(
        """
        def k(f, i, u):
            x = math.sin(f[0]) + math.atan2(f[0], f[1]) + math.lgamma(f[0]) + math.rint(f[0]) if False else 0
            y = cuda.clz(i[0]) + cuda.ffs(i[0]) + cuda.brev(u[0])
            z = cuda.any_sync(-1, i[0] > 0) + cuda.eq_sync(-1, i[0] > 0)
            w = cuda.syncthreads_and(1) + cuda.syncthreads_or(0)
            cuda.threadfence_block()
            cuda.threadfence_system()
            q = min(f[0], f[1]) + max(i[0], 2) + abs(i[0]) + round(f[0])
            e = math.erf(f[0]) + math.erfc(f[0]) + math.gamma(f[0]) + math.cbrt(f[0]) + math.expm1(f[0]) + math.log1p(f[0])
            r = math.hypot(f[0], 1) + math.copysign(f[0], -1) + math.fmod(f[0], 3) + np.exp2(f[0]) + np.rint(f[0])
            s = cuda.shfl_sync(-1, i[0], 0) + cuda.shfl_up_sync(-1, i[0], 1) + cuda.shfl_xor_sync(-1, i[0], 1)
        """,
        "void(float32[:], int32[:], uint64[:])",
    )
    verify_module(m)


def test_frontend_bug_becomes_internal_compile_error(monkeypatch):
    from pykern.frontend import calls

    def broken(lw, node, name):
        raise KeyError("oops")

    monkeypatch.setitem(calls.registry.CALLS, abs, broken)
    with pytest.raises(CompileError) as ei:
        lower("def k(a):\n    a[0] = abs(a[0])\n", "void(float32[:])")
    assert "internal error while compiling 'k': KeyError" in str(ei.value)
    assert "pykern bug" in ei.value.hint
