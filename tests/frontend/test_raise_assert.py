"""``raise`` and ``assert`` in kernels and device functions, with numba.cuda's semantics.

numba.cuda (``tests/cudapy/test_exception.py``, ``RewriteConstRaises``, the kernel wrapper):
the raising thread stops there -- the kernel returns -- and the other threads go on. Without
``debug=True`` nothing is reported; with it, the host raises the first raising thread's
exception after the launch: the user's own class made from its constant arguments. Here the
place (file:line, source) and the thread are a note on that exception. Kernels run on the
cpu target; amdgpu code objects are built for four archs and checked for the error record.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pykern as cuda
from frontend_helpers import compile_error, define
from pykern.core import abi
from pykern.core.errors import CompileError, KernelRuntimeError, kernel_exception

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tests/
ROOT = os.path.dirname(HERE)
ARCHS = ("gfx90a", "gfx942", "gfx1100", "gfx1201")


class BadInput(Exception):
    """A user exception class at module level (the host finds it by module and name)."""


MSG = "from a module constant"
LIMIT = np.int32(3)


def artifact(k):
    return next(iter(k.overloads.values())).artifact


def notes(e) -> str:
    return "\n".join(getattr(e, "__notes__", []))


# ------------------------------------------------------------ kernels
def stop_at_three(out):
    i = cuda.grid(1)
    if i == 3:
        raise ValueError("bad value")
    out[i] = i + 1


def assert_below(out, n):
    i = cuda.grid(1)
    assert i < n, "i too big"
    out[i] = i + 1


def assert_plain(out, n):
    i = cuda.grid(1)
    assert i < n
    out[i] = 1


def raise_in_loop(out):
    # row i is written up to column i, then thread i stops
    i = cuda.grid(1)
    for j in range(out.shape[1]):
        out[i, j] = j + 1
        if j == i:
            raise IndexError("stop")
    out[i, 0] = -1


def raise_in_while(out):
    i = cuda.grid(1)
    j = 0
    while True:
        out[i] += 1
        j += 1
        if j > i:
            raise RuntimeError
    out[i] = -5


@cuda.jit(device=True)
def checked_double(x):
    if x < 0:
        raise ValueError("negative input")
    return x * 2


@cuda.jit(device=True)
def outer_check(x):
    return checked_double(x) + 1


def call_device(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = outer_check(a[i])
        out[i] += 100  # never reached by a thread whose callee raised


def raise_user_class(out):
    if cuda.grid(1) == 1:
        raise BadInput("user class", 7)
    out[cuda.grid(1)] = 1


def raise_before_barrier(a, out):
    sh = cuda.shared.array(8, np.int64)
    t = cuda.threadIdx.x
    if a[t] < 0:
        raise ValueError("negative")
    sh[t] = a[t]
    cuda.syncthreads()
    out[t] = sh[7 - t]


def raise_after_barrier(a, out):
    sh = cuda.shared.array(8, np.int64)
    t = cuda.threadIdx.x
    assert t < 8, "block too big"
    sh[t] = a[t]
    cuda.syncthreads()
    if a[t] < 0:
        raise ValueError("negative")
    out[t] = sh[7 - t]


def raise_device_after_barrier(a, out):
    sh = cuda.shared.array(8, np.int64)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    out[t] = checked_double(sh[7 - t])
    out[t] += 100


# ------------------------------------------------------------ debug=False: the thread stops
def test_without_debug_the_raising_thread_stops_and_others_run(cpu_uncached):
    out = np.zeros(8, np.int64)
    cuda.jit(stop_at_three)[2, 4](out)
    assert out.tolist() == [1, 2, 3, 0, 5, 6, 7, 8]
    out = np.zeros(8, np.int64)
    cuda.jit(assert_below)[2, 4](out, 5)
    assert out.tolist() == [1, 2, 3, 4, 5, 0, 0, 0]
    out = np.zeros(8, np.int64)
    cuda.jit(assert_plain)[1, 8](out, 3)
    assert out.tolist() == [1, 1, 1, 0, 0, 0, 0, 0]


def test_without_debug_raise_in_loops_stops_mid_loop(cpu_uncached):
    out = np.zeros((4, 6), np.int64)
    cuda.jit(raise_in_loop)[1, 4](out)
    expect = np.zeros((4, 6), np.int64)
    for i in range(4):
        expect[i, :i + 1] = np.arange(1, i + 2)
    np.testing.assert_array_equal(out, expect)
    out = np.zeros(5, np.int64)
    cuda.jit(raise_in_while)[1, 5](out)
    assert out.tolist() == [1, 2, 3, 4, 5]


def test_without_debug_a_raising_device_function_stops_its_caller(cpu_uncached):
    a = np.array([1, -2, 3, -4, 5], np.int64)
    out = np.full(5, 7, np.int64)
    k = cuda.jit(call_device)
    k[1, 8](a, out)
    assert out.tolist() == [103, 7, 107, 7, 111]
    listing = io.StringIO()
    k.inspect_types(file=listing)
    assert "flags: raises" in listing.getvalue() and "raise ValueError('negative input')" in listing.getvalue()


# ------------------------------------------------------------ debug=True: the host raises
def test_debug_raise_gives_the_users_class_with_message_and_place(cpu_uncached):
    k = cuda.jit(debug=True)(stop_at_three)
    out = np.zeros(3, np.int64)
    k[1, 3](out)  # no thread raises: no error
    assert out.tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="bad value") as info:
        k[1, 8](np.zeros(8, np.int64))
    e = info.value
    assert type(e) is ValueError and e.args == ("bad value",)
    line = stop_at_three.__code__.co_firstlineno + 3
    assert f"test_raise_assert.py:{line}" in notes(e) and 'raise ValueError("bad value")' in notes(e)
    assert "thread (3, 0, 0) of block (0, 0, 0)" in notes(e)
    assert artifact(k).exceptions == [("builtins:ValueError", ("bad value",))]
    out = np.zeros(3, np.int64)
    k[1, 3](out)  # the record was cleared
    assert out.tolist() == [1, 2, 3]


def test_debug_assert_with_and_without_message(cpu_uncached):
    with pytest.raises(AssertionError) as info:
        cuda.jit(debug=True)(assert_below)[1, 8](np.zeros(8, np.int64), 5)
    assert info.value.args == ("i too big",) and "assert i < n" in notes(info.value)
    assert "thread (5, 0, 0)" in notes(info.value)  # one block: its threads run in order
    with pytest.raises(AssertionError) as info:
        cuda.jit(debug=True)(assert_plain)[1, 8](np.zeros(8, np.int64), 3)
    assert info.value.args == () and "assert i < n" in notes(info.value)


def test_debug_raise_in_loop_without_message_and_device_functions(cpu_uncached):
    with pytest.raises(IndexError, match="stop"):
        cuda.jit(debug=True)(raise_in_loop)[1, 4](np.zeros((4, 6), np.int64))
    with pytest.raises(RuntimeError) as info:
        cuda.jit(debug=True)(raise_in_while)[1, 2](np.zeros(2, np.int64))
    assert type(info.value) is RuntimeError and info.value.args == ()
    # numba.cuda xfails this (issue 8036); here the device function's raise is reported
    a = np.array([1, 2, -3], np.int64)
    out = np.zeros(3, np.int64)
    with pytest.raises(ValueError, match="negative input") as info:
        cuda.jit(debug=True)(call_device)[1, 3](a, out)
    assert f"test_raise_assert.py:{checked_double.py_func.__code__.co_firstlineno + 3}" in notes(info.value)
    assert "thread (2, 0, 0)" in notes(info.value)
    assert out.tolist() == [103, 105, 0]


def raise_constants(out):
    i = cuda.grid(1)
    if i == 1:
        raise OverflowError(MSG, LIMIT, -1, (2.5, None))
    out[i] = 1


def test_debug_user_exception_class_and_several_arguments(cpu_uncached):
    with pytest.raises(BadInput) as info:
        cuda.jit(debug=True)(raise_user_class)[1, 4](np.zeros(4, np.int64))
    assert type(info.value) is BadInput and info.value.args == ("user class", 7)
    with pytest.raises(OverflowError) as info:
        cuda.jit(debug=True)(raise_constants)[1, 4](np.zeros(4, np.int64))
    assert info.value.args == ("from a module constant", 3, -1, (2.5, None))
    assert type(info.value.args[1]) is int


def test_debug_first_raising_thread_wins(cpu_uncached):
    k = define("""
        def k(out):
            i = cuda.grid(1)
            if i == 2:
                raise KeyError("two")
            if i == 5:
                raise ValueError("five")
            out[i] = 1
    """)
    with pytest.raises(KeyError) as info:
        cuda.jit(debug=True)(k)[1, 8](np.zeros(8, np.int64))
    assert info.value.args == ("two",)
    e = kernel_exception(("builtins:ValueError", ("x",)), "k.py:3: `raise ValueError('x')`", (1, 0, 0), (0, 0, 0))
    assert type(e) is ValueError and e.args == ("x",)
    assert isinstance(kernel_exception(("nowhere_module:Err", ()), "k.py:1", (0,) * 3, (0,) * 3), KernelRuntimeError)


def test_constant_asserts_fold(cpu_uncached):
    k = define("""
        def k(out):
            assert True, "never"
            out[cuda.grid(1)] = 1
            assert False, "always"
            out[cuda.grid(1)] = 2
    """)
    out = np.zeros(4, np.int64)
    cuda.jit(k)[1, 4](out)
    assert out.tolist() == [1, 1, 1, 1]
    with pytest.raises(AssertionError, match="always"):
        cuda.jit(debug=True)(k)[1, 4](out)


# ------------------------------------------------------------ barriers: both cpu paths
@pytest.mark.parametrize("path", ["regions", "coroutine"])
def test_raise_and_barriers_on_both_cpu_paths(cpu_uncached, monkeypatch, path):
    monkeypatch.setenv("PYKERN_CPU_BARRIERS", path)
    a = np.arange(8, dtype=np.int64)
    a[2] = -1
    # after the last barrier: the other threads finish, exactly
    out = np.zeros(8, np.int64)
    k = cuda.jit(raise_after_barrier)
    k[1, 8](a, out)
    assert artifact(k).execution == path
    assert out.tolist() == [7, 6, 0, 4, 3, -1, 1, 0]
    # a raise inside an inlined device function after the barrier
    out = np.zeros(8, np.int64)
    kd = cuda.jit(raise_device_after_barrier)
    kd[1, 8](a, out)
    assert artifact(kd).execution == path
    assert out.tolist() == [114, 112, 110, 108, 106, 0, 102, 100]
    # every thread raises before the barrier: nobody waits there, the launch succeeds
    out = np.zeros(8, np.int64)
    cuda.jit(raise_before_barrier)[1, 8](np.full(8, -1, np.int64), out)
    assert out.tolist() == [0] * 8
    # some raise before a barrier the others reach: a thread that has exited counts as arrived
    # (as on GPUs), so the others pass it; thread 5 reads the raising thread's slot, never written
    kb = cuda.jit(raise_before_barrier)
    out = np.full(8, 99, np.int64)
    kb[1, 8](a, out)
    assert artifact(kb).execution == path
    assert [out[t] for t in (0, 1, 3, 4, 6, 7)] == [a[7 - t] for t in (0, 1, 3, 4, 6, 7)] and out[2] == 99
    # under debug=True the raise is the first error: the user's exception wins
    with pytest.raises(ValueError, match="negative"):
        cuda.jit(debug=True)(raise_before_barrier)[1, 8](a, np.zeros(8, np.int64))


# ------------------------------------------------------------ the disk cache, in new processes
CACHED = """
import pykern as cuda

@cuda.jit(debug=True)
def k(out, n):
    i = cuda.grid(1)
    assert i < n, "past the end"
    out[i] = i
"""

RUN_CACHED = """
import json, sys, warnings
warnings.simplefilter("ignore")
import numpy as np
sys.path.insert(0, sys.argv[1])
import kern_raise
out = np.zeros(4, np.int64)
try:
    kern_raise.k[1, 4](out, 2)
    res = {"raised": None}
except AssertionError as e:
    res = {"raised": type(e).__name__, "args": list(e.args), "notes": getattr(e, "__notes__", [])}
ov = next(iter(kern_raise.k.overloads.values()))
res.update(out=out.tolist(), from_cache=ov.from_cache)
print(json.dumps(res))
"""


def test_a_kernel_from_the_disk_cache_raises_the_same_exception(tmp_path):
    (tmp_path / "kern_raise.py").write_text(textwrap.dedent(CACHED))
    env = dict(os.environ, PYTHONPATH=ROOT, PYTHONDONTWRITEBYTECODE="1", PYKERN_TARGET="cpu",
               PYKERN_CACHE_DIR=str(tmp_path / "cache"), PYKERN_BUILD_ID="test-build")
    env.pop("PYKERN_CACHE", None)
    runs = []
    for _ in range(2):
        p = subprocess.run([sys.executable, "-c", RUN_CACHED, str(tmp_path)], env=env, capture_output=True,
                           text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert not cold["from_cache"] and warm["from_cache"]
    for r in runs:
        assert r["raised"] == "AssertionError" and r["args"] == ["past the end"], r
        assert "kern_raise.py:7" in r["notes"][0] and "thread (2, 0, 0)" in r["notes"][0], r
        assert r["out"][:2] == [0, 1]


# ------------------------------------------------------------ amdgpu code objects
@pytest.mark.parametrize("arch", ARCHS)
def test_amdgpu_raise_builds_and_stores_the_error_record(arch):
    def k(a, n):
        i = cuda.grid(1)
        assert i < n, "too far"
        a[i] = checked_double(a[i])

    ck = cuda.compile(k, "void(int64[::1], int64)", arch=arch, debug=True)
    art = ck.artifacts[0]
    assert ck.code_object[:4] == b"\x7fELF"
    assert art.error_symbol == abi.ERROR_SYMBOL
    assert art.exceptions == [("builtins:AssertionError", ("too far",)), ("builtins:ValueError", ("negative input",))]
    kind = abi.ERROR_KINDS["raise"]
    assert f"@__pykern_error, i32 0, i32 {kind}" in art.llvm_ir
    assert not any(l.startswith("declare") and "checked_double" in l for l in art.llvm_ir.splitlines())
    # what the host makes of the record the second raise writes
    msg = next(i for i, m in enumerate(art.error_messages) if "raise ValueError" in m)
    raw = __import__("struct").pack(abi.ERROR_RECORD, kind, msg, 1, 0, 0, 4, 0, 0, 1, 0, 0)
    e = abi.error_record_exception(raw, art.error_messages, art.exceptions)
    assert type(e) is ValueError and e.args == ("negative input",)
    assert "thread (4, 0, 0) of block (1, 0, 0)" in notes(e)
    assert abi.error_record_exception(bytes(abi.ERROR_RECORD_BYTES), art.error_messages, art.exceptions) is None
    # without debug the thread just ends: no record
    plain = cuda.compile(k, "void(int64[::1], int64)", arch=arch).artifacts[0]
    assert plain.error_symbol is None and not plain.exceptions and "__pykern_error" not in plain.llvm_ir


# ------------------------------------------------------------ what cannot be raised
def test_debug_record_decodes_for_hip_like_the_cpu():
    raw = __import__("struct").pack(abi.ERROR_RECORD, abi.ERROR_KINDS["raise"], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    e = abi.error_record_exception(raw, ["k.py:3: `raise KeyError('x')`"], [("builtins:KeyError", ("x",))])
    assert type(e) is KeyError and "k.py:3" in notes(e)


BAD = [
    # (source, line, col, words)
    ("def k(a):\n    i = 1\n    raise ValueError(f'bad {i}')\n", 3, 22, ["must be a constant"]),
    ("def k(a):\n    m = a[0]\n    raise ValueError(m)\n", 3, 22, ["must be a constant"]),
    ("def k(a):\n    raise ValueError(a[0])\n", 2, 22, ["must be a constant"]),
    ("def k(a):\n    x = 1\n    raise x\n", 3, 11, ["cannot raise the variable 'x'"]),
    ("def k(a):\n    raise 5\n", 2, 11, ["is not an exception class"]),
    ("def k(a):\n    raise math\n", 2, 11, ["'math' is not an exception class"]),
    ("def k(a):\n    raise KeyboardInterrupt\n", 2, 11, ["subclasses of Exception"]),
    ("def k(a):\n    raise\n", 2, 5, ["bare 'raise'"]),
    ("def k(a):\n    raise ValueError('x') from None\n", 2, 32, ["'raise ... from ...'"]),
    ("def k(a):\n    raise ValueError(msg='x')\n", 2, 11, ["keyword arguments"]),
    ("def k(a):\n    raise ERR\n", 2, 11, ["exception object 'ERR'"]),
    ("def k(a):\n    raise ValueError([1])\n", 2, 22, ["cannot be a list"]),
    ("def k(a):\n    assert a[0] > 0, a[0]\n", 2, 22, ["must be a constant"]),
]


@pytest.mark.parametrize("src,line,col,words", BAD, ids=[b[0].splitlines()[-1].strip() for b in BAD])
def test_unsupported_raises_are_compile_errors_at_the_line(src, line, col, words):
    err = compile_error(src, "void(float32[:])", ERR=ValueError("x"))
    assert err.line == line and err.col == col, str(err)
    for w in words:
        assert w in str(err), str(err)


def test_exception_classes_defined_in_functions_are_refused():
    class Local(Exception):
        pass

    err = compile_error("def k(a):\n    raise Local('x')\n", "void(float32[:])", Local=Local)
    assert err.line == 2 and "defined inside a function" in str(err)


def test_a_raising_device_function_cannot_recurse(cpu_uncached):
    @cuda.jit("int64(int64)", device=True)
    def down(n):
        if n < 0:
            raise ValueError("negative")
        if n == 0:
            return 0
        return down(n - 1) + 1

    def k(out):
        out[0] = down(3)

    with pytest.raises(CompileError, match="cannot recurse"):
        cuda.jit(k)[1, 1](np.zeros(1, np.int64))
