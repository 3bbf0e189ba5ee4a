"""A name re-bound to a value of another type (numba types each SSA version apart):
versions that never meet are variables of their own (``frontend/versions.py``); versions
that meet where paths join take one type, or are a CompileError at the user's line.
Each kernel runs on the cpu target against the same function run by Python."""

import ast
import math

import numpy as np
import pytest

from frontend_helpers import DeviceFn, compile_error, define, jit, lower
from pykern import literal_unroll
from pykern.lang import stubs as cuda
from pykern.frontend import types as T
from pykern.frontend import versions

pytestmark = pytest.mark.usefixtures("cpu_target")


def run(kernel, *args):
    """``kernel`` launched on one thread with copies of ``args``, and its Python result."""
    got = [np.array(a) if isinstance(a, np.ndarray) else a for a in args]
    want = [np.array(a) if isinstance(a, np.ndarray) else a for a in args]
    jit(kernel)[1, 1](*got)
    kernel(*want)
    return got, want


def check(kernel, *args):
    got, want = run(kernel, *args)
    for g, w in zip(got, want):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == w.dtype


def kernel_locals(src, sig, **globs) -> dict:
    return lower(src, sig, **globs).kernel.locals


# ---------------------------------------------------------------- versions that never meet


def view_then_reshape(a, out):
    t = a[1]  # 2-d
    out[0] = t[1, 0]
    t = t.reshape(4)  # 1-d
    for j in range(4):
        out[1 + j] = t[j]


def loop_variable_then_float(out):
    for t in range(3):
        out[t] = t
    t = 2.5
    out[3] = t * 2


def array_then_scalar(a, out):
    v = a[2]  # a row
    out[0] = v[0] + v[1]
    v = out[0] * 0.5  # a float
    out[1] = v
    v = 7  # an int: another version still
    out[2] = v // 2


def tuple_then_other_tuple(out):
    p = (1, 2.5)
    out[0] = p[0] + p[1]
    p = (3.5, 4, 5)
    out[1] = p[0] * p[2] + p[1]


def loop_variable_reused(a, m, out):
    s = 0.0
    for x in range(4):  # int64
        s += x
    for x in a:  # float32 elements
        s += x
    for x in m:  # rows of a 2-d array
        s += x[0]
    out[0] = s


def parameters_rebound(x, n, out):
    y = x[0, 1]
    x = x.reshape(6)
    out[0] = x[5] + y
    n = float(n)
    out[1] = n / 4


def branches_apart(a, out, c):
    if c > 0:
        t = a[1]  # a row, read in this branch only
        out[0] = t[0] + t[1]
    else:
        t = 3.5
        out[0] = t * 2
    # t is never read after the join: its versions do not meet


def unpack_then_rebind(a, out):
    x, y = 1, a[0]
    out[0] = x + y[1]
    x, y = 2.5, 3
    out[1] = x * y


def augmented_apart(a, out):
    s = a[0]  # a row
    out[0] = s[1]
    s = 0
    s += 1.5  # its own web: s = 0 widened to float64, as before
    out[1] = s


def while_condition(a, out):
    x = a[0]
    k = 0
    while x[k] < 3.0:
        k += 1
    out[0] = k
    x = 1.25
    out[1] = x


def else_of_loop_apart(out, n):
    for t in range(n):
        out[0] += t
    else:
        t = 0.5  # the loop ran out: read only here
        out[1] = t


def reshaped_in_a_loop(m, out):
    for _ in range(2):
        m = m.reshape(m.size)  # 1-d: read by the next line only
        m = m.reshape(3, 2)  # 2-d again: meets the parameter at the loop head
    for i in range(3):
        out[i] = m[i, 1]


def loop_variable_rebound_in_body(b, out, n):
    for t in range(1, n):
        for k in range(2):
            t = b  # an array, read before the next iteration assigns t again
            out[k] += t[k] * k


@pytest.mark.parametrize("kernel, make", [
    (reshaped_in_a_loop, lambda: (np.arange(6.0).reshape(2, 3), np.zeros(3))),
    (loop_variable_rebound_in_body, lambda: (np.arange(2.0) + 1, np.zeros(2), 4)),
    (view_then_reshape, lambda: (np.arange(12.0).reshape(3, 2, 2), np.zeros(5))),
    (loop_variable_then_float, lambda: (np.zeros(4),)),
    (array_then_scalar, lambda: (np.arange(6.0).reshape(3, 2), np.zeros(3))),
    (tuple_then_other_tuple, lambda: (np.zeros(2),)),
    (loop_variable_reused, lambda: (np.arange(3, dtype=np.float32), np.arange(6.0).reshape(3, 2), np.zeros(1))),
    (parameters_rebound, lambda: (np.arange(6.0).reshape(2, 3), 7, np.zeros(2))),
    (branches_apart, lambda: (np.arange(6.0).reshape(3, 2), np.zeros(1), 1)),
    (branches_apart, lambda: (np.arange(6.0).reshape(3, 2), np.zeros(1), 0)),
    (unpack_then_rebind, lambda: (np.arange(6.0).reshape(3, 2), np.zeros(2))),
    (augmented_apart, lambda: (np.arange(6.0).reshape(3, 2), np.zeros(2))),
    (while_condition, lambda: (np.arange(6.0).reshape(1, 6), np.zeros(2))),
    (else_of_loop_apart, lambda: (np.zeros(2), 4)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_versions_apart_match_python(kernel, make):
    check(kernel, *make())


def test_an_int_version_stays_an_int():
    """numba types `v = 7` int64 even when another version of v is a float: `v // 2` is 3, and
    an int64 output gets it exactly (a float64 v would round 2**53 + 1)."""
    def k(out):
        v = 0.5
        out[0] = int(v * 4)
        v = 2 ** 53 + 1
        out[1] = v

    check(k, np.zeros(2, dtype=np.int64))
    loc = kernel_locals("def k(out):\n    v = 0.5\n    out[0] = int(v * 4)\n    v = 2 ** 53 + 1\n    out[1] = v\n",
                        "void(int64[:])")
    assert loc["v"] == T.float64 and loc["v$s1"] == T.int64


def test_local_array_shape_of_a_version():
    """Each version assigned a constant once is that constant (a `local.array` shape)."""
    def k(out):
        n = 3
        buf = cuda.local.array(n, np.float64)
        for i in range(n):
            buf[i] = i
        out[0] = buf[2]
        n = 2.5
        out[1] = n

    out = np.zeros(2)
    jit(k)[1, 1](out)  # (local.array runs in kernels only)
    assert list(out) == [2.0, 2.5]


def test_unrolled_loop_variable_then_array():
    def k(a, out):
        s = 0.0
        for v in literal_unroll((1, 2.5, np.float32(3))):
            s += v
        out[0] = s
        v = a[1]
        out[1] = v[0]

    check(k, np.arange(4.0).reshape(2, 2), np.zeros(2))


def test_value_then_none_apart():
    """`v = None` after a value nothing reads any more is a version of its own (numba's none)."""
    def k(r):
        v = r[0]
        r[1] = v
        v = None
        if v is None:
            r[2] = 1.0

    check(k, np.array([3.0, 0.0, 0.0]))


def test_device_function_parameter_rebound():
    @jit(device=True)
    def last(x):
        x = x.reshape(x.size)
        return x[x.size - 1]

    def k(m, out):
        out[0] = last(m)

    m, out = np.arange(6.0).reshape(2, 3), np.zeros(1)
    jit(k)[1, 1](m, out)
    assert out[0] == 5.0


def test_one_path_only_reads_zero_in_a_split_web():
    """A web assigned on one path only still reads as 0 on the others (README)."""
    def k(a, out, c):
        if c > 0:
            v = 5.0
        out[0] = v
        v = a[1]
        out[1] = v[0]

    a = np.arange(4.0).reshape(2, 2)
    for c in (0, 1):
        out = np.zeros(2)
        jit(k)[1, 1](a, out, c)
        assert list(out) == [5.0 if c else 0.0, 2.0]


# ---------------------------------------------------------------- versions that meet


def test_meeting_versions_unify():
    """`x = 1; if c: x = 2.5`: both reach the read, which is float64 (numba widens there too)."""
    src = "def k(out, c):\n    x = 1\n    if c > 0:\n        x = 2.5\n    out[0] = x\n"
    assert kernel_locals(src, "void(float64[:], int64)")["x"] == T.float64

    def k(out, c):
        x = 1
        if c > 0:
            x = 2.5
        out[0] = x

    check(k, np.zeros(1), 1)
    check(k, np.zeros(1), 0)


def loop_carried(a, out):
    t = 0  # int, then float32 from the previous iteration: one web
    for i in range(a.size):
        out[i] = t
        t = a[i] * 2


@pytest.mark.parametrize("kernel, make", [
    (loop_carried, lambda: (np.arange(4, dtype=np.float32), np.zeros(4))),
], ids=lambda v: getattr(v, "__name__", ""))
def test_meeting_versions_match_python(kernel, make):
    check(kernel, *make())


def _assert_at(err, line, col, *words):
    text = str(err)
    assert (err.line, err.col) == (line, col), text
    caret = text.splitlines()[2]
    assert caret.strip() == "^" and len(caret) - 4 == col, text
    for w in words:
        assert w in text, text
    assert "$s" not in text, text


def test_incompatible_versions_at_an_if_join():
    err = compile_error("def k(a, c):\n    x = 1\n    if c > 0:\n        x = a\n    a[0] = x\n",
                        "void(float64[:], int64)")
    _assert_at(err, 4, 9, "variable 'x'", "float64[:]", "int64", "line 2")
    assert "need one type" in err.hint


def test_incompatible_versions_around_a_loop():
    src = "def k(a, b):\n    t = a\n    for i in range(3):\n        b[i] = t[0]\n        t = 1.5\n"
    err = compile_error(src, "void(float64[:], float64[:])")
    _assert_at(err, 5, 9, "variable 't'", "float64", "line 2")


def test_incompatible_loop_variable_meets_an_array():
    src = "def k(a, n):\n    t = a\n    for t in range(n):\n        pass\n    a[0] = t\n"
    err = compile_error(src, "void(float64[:], int64)")
    _assert_at(err, 3, 9, "loop variable 't'", "integer", "float64[:]")


def test_meeting_versions_widen_every_assignment():
    """One web, one type: the int version is float64 too (numba widens at the join only)."""
    src = ("def k(out, c):\n    x = 1\n    out[0] = x // 2\n    if c > 0:\n        x = 2.5\n"
           "    out[1] = x\n")
    text = str(lower(src, "void(float64[:], int64)").kernel)
    assert "x = 1.0:float64" in text, text


def for_else_meets(out, n, k):
    for t in range(n):
        if t == k:
            break
    else:
        t = -1.5  # meets the loop's t at the read: float64, as numba widens it
    out[0] = t


def float_before_range_loop(out, n):
    t = 0.5
    for t in range(n):
        out[0] += t / 2  # (t is float64 here too: `out[t]` would be refused, numba's t is int64)
    out[3] = t


@pytest.mark.parametrize("kernel, make", [
    (for_else_meets, lambda: (np.zeros(1), 5, 3)),
    (for_else_meets, lambda: (np.zeros(1), 5, 9)),
    (float_before_range_loop, lambda: (np.zeros(4), 3)),
    (float_before_range_loop, lambda: (np.zeros(4), 0)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_range_loop_variable_meets_a_float(kernel, make):
    check(kernel, *make())


def test_error_in_a_renamed_version_names_the_users_variable():
    """A later web is `t$s1` inside pykern; every message says `t`."""
    src = ("def k(a, c):\n    t = 1\n    a[0] = t\n    t = 2\n    if c > 0:\n        t = a\n"
           "    a[1] = t\n")
    err = compile_error(src, "void(float64[:], int64)")
    _assert_at(err, 6, 9, "variable 't'", "line 4")


def test_error_in_an_unrolled_copy_names_the_users_variable():
    src = ("def k(a):\n    for v in literal_unroll((1, 2.5)):\n        if a[0] > 0:\n            v = a\n"
           "        a[1] = v\n")
    err = compile_error(src, "void(float64[:])", literal_unroll=literal_unroll)
    _assert_at(err, 4, 13, "variable 'v'")
    assert "$u" not in str(err)


def test_nested_function_reads_keep_one_variable():
    """A nested def reads its captures when called, not one version: such a name is not split."""
    src = ("def k(a):\n    y = a\n    a[0] = y[1]\n    y = 2.0\n"
           "    def f(z):\n        return z * y\n    a[1] = f(3.0)\n")
    err = compile_error(src, "void(float64[:])")
    _assert_at(err, 4, 5, "variable 'y'", "line 2")


# ---------------------------------------------------------------- the pass itself


def _fn(src):
    return ast.parse(src).body[0]


def test_split_is_deterministic_and_leaves_single_webs_alone():
    src = "def k(a):\n    t = a[0]\n    a[1] = t\n    t = 2.5\n    a[2] = t\n    u = 1\n    u = u + 1\n"
    one, names1 = versions.split(_fn(src), ["a"], set())
    two, names2 = versions.split(_fn(src), ["a"], set())
    assert ast.dump(one) == ast.dump(two) and names1 == names2 == {"t$s1": "t", "u$s1": "u"}
    stores = [n.id for n in ast.walk(one) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    assert stores == ["t", "t$s1", "u", "u$s1"]  # `u = u + 1` is a new version (numba's too)
    aug, names = versions.split(_fn("def k(a):\n    u = 1\n    u += 1.5\n    a[0] = u\n"), ["a"], set())
    assert names == {}  # `u += 1.5` belongs to the web of the u it reads
    plain = _fn("def k(a):\n    x = 1\n    if a[0]:\n        x = 2\n    a[0] = x\n")
    assert versions.split(plain, ["a"], set()) == (plain, {})


def test_split_parameter_keeps_its_name():
    fn, names = versions.split(_fn("def k(x, out):\n    x = x.reshape(4)\n    out[0] = x[3]\n"), ["x", "out"], set())
    assert names == {"x$s1": "x"}
    assert fn.args.args[0].arg == "x"
    assert ast.unparse(fn.body[0]) == "x$s1 = x.reshape(4)"


@pytest.mark.parametrize("src", [
    "def k(a):\n    x = 1\n    del x\n    x = a\n",
    "def k(a):\n    global G\n    G = 1\n    G = a\n",
    "def k(a):\n    x = 1\n    with f():\n        x = a\n",
])
def test_split_leaves_unmodelled_functions_whole(src):
    fn = _fn(src)
    assert versions.split(fn, ["a"], set()) == (fn, {})


def test_user_text():
    assert versions.user_text("'t$s12' and t$s1$u3_0, not a$b, $t0 or n$arg") == "'t' and t, not a$b, $t0 or n$arg"


def test_inspect_types_shows_the_users_names():
    import io

    import pykern

    @pykern.jit
    def k(a, out):
        t = a[0] * 2
        out[0] = t
        t = (a[1], 1)  # another version, of another type
        out[1] = t[0] + t[1]

    k[1, 1](np.ones(2), np.zeros(2))
    buf = io.StringIO()
    k.inspect_types(file=buf)
    text = buf.getvalue()
    assert "$s" not in text
    assert "locals: t: float64, t: Tuple(float64, int64)" in text  # one entry per version's type
    assert "  t = (a[1:int64], 1:int64,)" in text


def test_user_listing_keeps_bracketed_types_whole():
    text = "  locals: a: UniTuple(int64, 2), a$s1: UniTuple(int64, 2), b: float32, b$s2: int64\n  a$s1 = b$s2"
    assert versions.user_listing(text) == "  locals: a: UniTuple(int64, 2), b: float32, b: int64\n  a = b"
