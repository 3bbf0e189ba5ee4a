"""Every unsupported construct is a CompileError pointing at the user's line."""

import pytest

from frontend_helpers import DeviceFn, compile_error, define, lower
from pykern.core.errors import CompileError
from pykern.frontend import compile_ir, source_of
from pykern.frontend import types as T

F1 = "void(float32[:])"


def check(err: CompileError, line: int, col: int, *words, hint=None):
    """col is 1-based like the message."""
    text = str(err)
    assert err.line == line, text
    assert err.col == col, text
    assert f":{line}:{col}: error: " in text
    for w in words:
        assert w in text, text
    # the source excerpt and a caret under the column
    lines = text.splitlines()
    src = lines[1]
    caret = lines[2]
    assert caret.strip() == "^"
    assert len(caret) - 4 == col  # 4 spaces of indent + col-1 pads + caret
    assert src.strip() == err.source_line.strip()
    if hint is not None:
        assert err.hint is not None and hint in err.hint, text


CASES = [
    # (source, signature, line, col, words, hint)
    ("def k(a):\n    with open('x') as f:\n        pass\n", F1, 2, 5, ["'with' blocks are not supported"], None),
    ("def k(a):\n    i = 0\n    a[i] = 'x'\n", F1, 3, 12, ["strings are not supported"], None),
    ("def k(a):\n    x = [1, 2]\n", F1, 2, 9, ["lists are not supported"], "tuple"),
    ("def k(a):\n    a[0] = undefined_thing + 1\n", F1, 2, 12, ["name 'undefined_thing' is not defined"], None),
    (
        "def k(a):\n    if a[0] > 0:\n        x = a\n    else:\n        x = 1.0\n    a[0] = x\n",
        F1,
        5,
        9,
        ["variable 'x'", "float64", "float32[:]", "line 3"],
        "need one type",
    ),
    ("def k(a, b):\n    c = a + b\n", "void(float32[:], float32[:])", 2, 9, ["float32[:] and float32[:]"], "index"),
    ("def k(a):\n    return 1\n", F1, 2, 5, ["kernels cannot return a value"], "output array"),
    ("def k(a):\n    print(a)\n", F1, 2, 11, ["print() in kernels takes numbers and string literals"], "one by one"),
    ("def k(a):\n    a[0] = (lambda **kw: 1)()\n", F1, 2, 13, ["**kwargs parameters"], None),
    ("def k(a):\n    try:\n        pass\n    except Exception:\n        pass\n", F1, 2, 5, ["try/except"], None),
    ("def k(a):\n    global G\n    G = 1\n", F1, 2, 5, ["'global'"], None),
    ("def k(a):\n    nonlocal_x = 1\n    a[0] = [i for i in range(3)][0]\n", F1, 3, 12, ["list comprehensions"], "for loop"),
    ("def k(a):\n    a[0] = sum(i for i in range(3))\n", F1, 2, 15, ["generator expressions are not supported"], "for loop over range()"),
    ("def k(a):\n    a[0] = a.foo\n", F1, 2, 12, ["no attribute 'foo'"], ".shape"),
    ("def k(a):\n    a[0] = math.nosuch(1.0)\n", F1, 2, 12, ["module 'math' has no attribute 'nosuch'"], None),
    ("def k(a):\n    for x in a:\n        pass\n", "void(float32[])", 2, 14, ["iteration over a 0-d array"], "a[()]"),
    ("def k(a):\n    for x in (1, 2.5):\n        pass\n", F1, 2, 14, ["tuples of one scalar or array type, not Tuple(int64, float64)"], None),
    ("def k(a):\n    for x in 5:\n        pass\n", F1, 2, 14, ["not a int64"], "range(n)"),
    ("def k(a):\n    for i in range(n=3):\n        pass\n", F1, 2, 14, ["range() takes 1 to 3"], None),
    ("def k(a):\n    a[0] = a[1] & 1.5\n", F1, 2, 12, ["&", "float32", "float64"], "integers"),
    ("def k(a, n):\n    s = cuda.shared.array(n, np.float32)\n", "void(float32[:], int64)", 2, 27, ["compile-time constant"], None),
    ("def k(a):\n    s = cuda.shared.array(4, 'floot')\n", F1, 2, 30, ["'floot' is not a dtype"], "np.float32"),
    ("def k(a):\n    s = cuda.local.array(0, np.int32)\n", F1, 2, 26, ["positive size"], None),
    ("def k(a):\n    s = cuda.shared.array((0, 2), np.int32)\n", F1, 2, 27, ["dynamic shared array is 1-d"], None),
    ("def k(a):\n    a[0] = 1\n", "void(readonly float32[:])", 2, 5, ["read-only array"], None),
    ("def k(a):\n    cuda.atomic.add(a, 0, 1)\n", "void(boolean[:])", 2, 21, ["atomic.add() does not support boolean"], None),
    ("def k(a):\n    cuda.atomic.xor(a, 0, 1)\n", F1, 2, 21, ["needs an integer array"], None),
    ("def k(a):\n    cuda.atomic.add(a, 0, 1)\n", "void(float32[:, :])", 2, 24, ["needs 2 indices"], None),
    ("def k(a):\n    t = (1, 2)\n    a[0] = t[5]\n", F1, 3, 12, ["tuple index 5 out of range"], None),
    ("def k(a):\n    t = (1, 2.0)\n    a[0] = t[a[0]]\n", "void(int32[:])", 3, 12, ["Tuple(int64, float64) can only be indexed by a constant"], "one scalar, array or tuple type"),
    ("def k(a):\n    t = (1, 2)\n    a[0] = t[1.5]\n", "void(int32[:])", 3, 14, ["constant integer"], "t[0]"),
    ("def k(a):\n    a[0] = a[0, 1]\n", F1, 2, 12, ["too many indices"], None),
    ("def k(a):\n    a[0] = a[1.5]\n", F1, 2, 12, ["array index must be an integer, not float64"], "int(x)"),
    ("def k(a):\n    x = y + 1\n    y = 2\n", F1, 2, 9, ["local variable 'y' is used before"], None),
    ("def k(a):\n    a[0] = a @ a\n", F1, 2, 12, ["MatMult"], None),
    ("def k(a):\n    a[0] = 1 if a is a else 2\n", F1, 2, 17, ["'is' comparisons"], None),
    ("def k(a):\n    cuda.syncthreads(1)\n", F1, 2, 5, ["syncthreads() takes 0 argument(s), got 1"], None),
    ("def k(a):\n    a[0] = cuda.grid(4)\n", F1, 2, 22, ["grid(n) takes n = 1, 2 or 3"], None),
    ("def k(a):\n    a[0] = cuda.threadIdx.w\n", F1, 2, 12, ["threadIdx has no attribute 'w'"], ".x"),
    ("def k(a):\n    x = cuda.shared\n", F1, 2, 9, ["'cuda.shared' is not a value"], None),
    ("def k(a):\n    x = math\n", F1, 2, 9, ["module 'math' cannot be used as a value"], None),
    ("def k(a):\n    x = 1 << 70\n", F1, 2, 9, ["overflows 64 bits"], None),
    ("def k(a):\n    x, y = 1, 2, 3\n", F1, 2, 5, ["cannot unpack 3 values into 2"], None),
    ("def k(a):\n    t = (1, 2)\n    x, y, z = t\n", F1, 3, 5, ["tuple of 2 values into 3"], None),
    ("def k(a):\n    x = a.shape\n    a[0] = x + 1\n", F1, 3, 12, ["UniTuple(int64, 1)"], None),
    ("def k(a):\n    for i in range(0, 10, 0):\n        pass\n", F1, 2, 27, ["step must not be zero"], None),
    ("def k(a):\n    for i in range(1.5):\n        pass\n", F1, 2, 20, ["range() arguments must be integers"], None),
    ("def k(a):\n    for x, y in zip(a, a, strict=True):\n        pass\n", F1, 2, 17, ["zip() in kernels"], None),
    ("def k(a):\n    a.x = 1\n", F1, 2, 5, ["cannot assign to attribute 'x'"], None),
    ("def k(a):\n    del a\n", F1, 2, 5, ["del is not supported"], None),
    ("def k(a):\n    assert a[0] > 0, a[0]\n", F1, 2, 22, ["exception argument must be a constant"], None),
    ("def k(a):\n    raise ValueError(a)\n", F1, 2, 22, ["exception argument must be a constant"], "constant message"),
    ("def k(a):\n    import os\n", F1, 2, 5, ["import inside a kernel"], None),
    ("def k(a):\n    @inner\n    def inner():\n        pass\n", F1, 2, 6, ["cannot be decorated"], "leave the decorator out"),
    ("def k(a):\n    x = f'{a}'\n", F1, 2, 9, ["f-strings"], None),
    ("def k(a):\n    x = {1: 2}\n", F1, 2, 9, ["dicts"], None),
    ("def k(a):\n    x = 1j < 2j\n", F1, 2, 9, ["complex"], None),
    ("def k(a):\n    x = cuda.shfl_sync(-1, a, 0)\n", F1, 2, 28, ["shfl_sync takes a number, not a float32[:]"], None),
    ("def k(a):\n    x = cuda.popc(1.5)\n", F1, 2, 19, ["popc() takes an integer, not float64"], None),
    ("def k(a):\n    x = a[0] if a[0] > 0 else a\n", F1, 2, 9, ["two branches", "float32[:]"], None),
    ("def k(a):\n    if a:\n        pass\n", F1, 2, 8, ["cannot use a float32[:] as a condition"], None),
    ("def k(a):\n    cuda.shared.array(4, np.float32)[0] = a\n", F1, 2, 5, ["cannot store a float32[:]"], None),
    ("def k(a):\n    x = len(3)\n", F1, 2, 9, ["len() of a int64"], None),
    ("def k(a):\n    x = min(1)\n", F1, 2, 9, ["at least 2 arguments"], None),
    ("def k(a):\n    x = cuda.const.array_like(a)\n", F1, 2, 31, ["numpy array from a global"], "module level"),
    ("def k(a):\n    x = cuda.warpsize()\n", F1, 2, 9, ["a value, not a function"], None),
    ("def k(a):\n    x = np.float32(1, 2)\n", F1, 2, 9, ["takes one argument"], None),
    ("def k(a):\n    a[0] = ~1.5\n", F1, 2, 12, ["~"], None),
    # uint64 | int64 is int64 (numba's integer rule, tests/frontend/test_integer_rule.py); a float is the error
    ("def k(a, n):\n    a[0] = a[0] | n\n", "void(float32[:], int64)", 2, 12, ["|: float32 and int64"], "need integers"),
]


@pytest.mark.parametrize("src, sig, line, col, words, hint", CASES, ids=[c[0].split("\n")[1].strip()[:40] for c in CASES])
def test_error_cases(src, sig, line, col, words, hint):
    err = compile_error(src, sig)
    check(err, line, col, *words, hint=hint)


def test_line_numbers_are_file_lines_of_nested_function():
    src = '''
import math

def outer():
    # some text
    def kern(a):
        x = 1
        a[0] = nope
    return kern
'''
    f = define(src, "outer")()
    with pytest.raises(CompileError) as ei:
        compile_ir(f, [T.Array(T.float32, 1)])
    e = ei.value
    assert e.line == 7  # the file's line (define strips the leading newline)
    assert e.col == 16  # indentation removed by dedent is added back
    assert "a[0] = nope" in str(e)


def test_unknown_names_do_not_list_everything():
    err = compile_error("def k(a):\n    a[0] = zzz\n", F1)
    assert str(err).count("\n") <= 4


def test_device_function_errors():
    helper = define("def helper(x):\n    return x\n")
    rec = define("def rec(x):\n    return rec(x - 1)\n")
    g = {"rec": DeviceFn(rec)}
    rec.__globals__.update(g)
    err = compile_error("def k(a):\n    a[0] = rec(a[0])\n", F1, rec=DeviceFn(rec))
    assert "cannot type infer runaway recursion: 'rec'" in str(err)  # numba's words; no base case
    assert "base case" in err.hint

    ping = define("def ping(x):\n    return pong(x)\n")
    pong = define("def pong(x):\n    return ping(x)\n")
    ping.__globals__["pong"] = DeviceFn(pong)
    pong.__globals__["ping"] = DeviceFn(ping)
    err = compile_error("def k(a):\n    a[0] = ping(a[0])\n", F1, ping=DeviceFn(ping))
    assert "recursive" in str(err) and "ping -> pong -> ping" in str(err)

    err = compile_error("def k(a):\n    a[0] = helper(a[0], 1)\n", F1, helper=DeviceFn(helper))
    assert "device function 'helper' takes 1 argument(s) but 2 were given" in str(err)

    mixed = define("def mixed(x):\n    if x > 0:\n        return x\n    return (x, x)\n")
    err = compile_error("def k(a):\n    a[0] = mixed(a[0])[0]\n", F1, mixed=DeviceFn(mixed))
    assert "'mixed' returns a UniTuple(float32, 2) here but a float32 at line 3" in str(err)

    arr = define("def arr(x):\n    return x, 1\n")
    err = compile_error("def k(a):\n    t = arr(a)\n", F1, arr=DeviceFn(arr))
    assert "device functions cannot return arrays (Tuple(float32[:], int64))" in str(err)

    nothing = define("def nothing(x):\n    x = 1\n")
    err = compile_error("def k(a):\n    a[0] = nothing(a[0])\n", F1, nothing=DeviceFn(nothing))
    assert "returns nothing" in str(err)


def test_calling_a_kernel_from_a_kernel():
    class FakeKernel:
        __pykern_device__ = False

        def __init__(self, f):
            self.py_func = f

    # numba-cuda compiles a plain @jit function called from a kernel as a device function
    other = define("def other(a):\n    a[0] = 1.0\n")
    mod = lower("def k(a):\n    other(a)\n", F1, other=FakeKernel(other))
    assert len(mod.functions) == 1


def test_source_unavailable():
    import ast

    ns = {}
    exec(compile(ast.parse("\n".join(["def nosrc(a):", "    pass", ""])), "<string>", "exec"), ns)  # an AST of a text gone
    with pytest.raises(CompileError) as ei:
        source_of(ns["nosrc"])
    assert "cannot find the source code of nosrc" in str(ei.value)
    with pytest.raises(CompileError):
        compile_ir(ns["nosrc"], [T.int32])


def test_lambda_kernel():
    f = define("k = lambda a: a\ndef unused():\n    pass\n", "k")
    with pytest.raises(CompileError) as ei:
        compile_ir(f, [T.int32])
    assert "lambda" in str(ei.value)


def test_wrong_argument_count_and_varargs():
    f = define("def k(a, b):\n    pass\n")
    with pytest.raises(CompileError, match="takes 2 argument"):
        compile_ir(f, [T.int32])
    f = define("def k(*a):\n    pass\n")
    with pytest.raises(CompileError, match=r"\*args"):
        compile_ir(f, [T.int32])


def test_kernel_returning_value_via_device_ok_but_kernel_not():
    err = compile_error("def k(a):\n    return a[0]\n", F1)
    assert "kernels cannot return a value" in str(err)


def test_columns_count_characters_and_keep_tabs():
    e = compile_error("def k(a):\n    é = 1; a[0] = é + nope\n", F1)
    assert e.col == 23 and str(e).splitlines()[2] == "    " + " " * 22 + "^"
    e = compile_error("def k(a):\n\tx = 1\n\ta[0] = nope\n", F1)
    assert e.line == 3 and e.col == 9
    assert str(e).splitlines()[2] == "    \t       ^"


def test_error_inside_device_function_points_into_it():
    helper = define("def helper(x):\n    y = x\n    return y + nope\n")
    err = compile_error("def k(a):\n    a[0] = helper(a[0])\n", F1, helper=DeviceFn(helper))
    assert err.line == 3 and "name 'nope' is not defined" in str(err)
    assert err.file != compile_error.__code__.co_filename
