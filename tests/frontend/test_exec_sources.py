"""Kernels and device functions defined by ``exec()`` of a string (numba compiles them from
bytecode; pykern takes the text a caller still holds, or with ``PYKERN_EXEC_SOURCES=1`` the
text its audit hook saw compiled -- each only once compiling it again gives the function's
own code, ``pykern/core/sources.py``)."""

import ast
import linecache
import os
import pickle
import subprocess
import sys
from textwrap import dedent

import numpy as np
import pytest

import pykern as cuda
from pykern import float64

pytestmark = pytest.mark.usefixtures("cpu_uncached")

_TEMPLATE = dedent("""
def reduce_shared(res, ary):
    tid = cuda.threadIdx.x
    sm = cuda.shared.array(32, float64)
    sm[tid] = ary[tid]
    cuda.syncthreads()
    {op}(res, 0, sm[tid])

def helper(x):
    return x * 2.0
""")


def test_exec_then_jit_in_one_scope_finds_the_text_in_the_frame():
    a = np.random.default_rng(1).random(32)
    for op, start, expect in (("cuda.atomic.max", -1.0, a.max()), ("cuda.atomic.min", 2.0, a.min())):
        text = _TEMPLATE.format(op=op)  # the same file name and lines each time, another text
        ns = {}
        exec(text, {"cuda": cuda, "float64": float64}, ns)
        k = cuda.jit(ns["reduce_shared"])
        dev = cuda.jit(device=True)(ns["helper"])
        r = np.array([start])
        k[1, 32](r, a)
        assert r[0] == expect
        del text  # gone now: the function's later compilations use the text found the first time
        r = np.array([start], np.float64)
        k[1, 32](r, a.astype(np.float32))
        assert r[0] == np.float64(expect.astype(np.float32))

    @cuda.jit
    def call(out):
        out[0] = dev(1.25)

    out = np.zeros(1)
    call[1, 1](out)
    assert out[0] == 2.5


def test_decorated_inside_exec_errors_point_into_the_text_and_pickling_works():
    ns = {}
    exec("import pykern as cuda\n@cuda.jit\ndef k(x):\n    i = cuda.grid(1)\n    if i < x.size:\n"
         "        x[i] = i * 3\n\n@cuda.jit\ndef bad(x):\n    x[0] = undefined_name\n", ns)
    x = np.zeros(5)
    pickle.loads(pickle.dumps(ns["k"]))[1, 8](x)
    assert x.tolist() == [0.0, 3.0, 6.0, 9.0, 12.0]
    with pytest.raises(cuda.CompileError, match="undefined_name") as e:
        ns["bad"][1, 1](np.zeros(1))
    assert e.value.line == 10 and "x[0] = undefined_name" in str(e.value)


def test_a_look_alike_text_is_not_used():
    look_alike = "def f(x):\n    x[0] = 2.0\n"  # noqa: F841  (held here, but gives other code)
    src = "\n".join(["def f(x):", "    x[0] = 1.0", ""])
    tree = ast.parse(src)
    del src  # the text is gone; the AST's code has none
    ns = {}
    exec(compile(tree, "<string>", "exec"), ns)
    with pytest.raises(cuda.CompileError, match="source"):
        cuda.jit(ns["f"])[1, 1](np.zeros(1))


def _exec_registered(value, filename, register):
    text = f"def k(a):\n    a[0] = {value}\n"
    if register:
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    ns = {}
    exec(compile(text, filename, "exec"), ns)
    return ns["k"]  # its text is gone; only linecache may hold one


def test_a_pseudo_file_registered_again_for_another_text_is_not_compiled(monkeypatch):
    # a code generator registers its first text as "<gen>", then exec's another under that name
    # without registering it: compiling linecache's lines would build the first function
    name = "<pykern-test-gen>"
    monkeypatch.setitem(linecache.cache, name, (0, None, [], name))
    first = _exec_registered(1.0, name, register=True)
    second = _exec_registered(2.0, name, register=False)
    a = np.zeros(1)
    cuda.jit(first)[1, 1](a)
    assert a[0] == 1.0
    with pytest.raises(cuda.CompileError, match="compiles to this function's code"):
        cuda.jit(second)[1, 1](a)  # the first's kernel (same lines, same name) is not reused either
    assert a[0] == 1.0


_FACTORY = r'''
import numpy as np, pykern as cuda
cuda.set_target("cpu")

def make(op):
    ns = {}
    exec("def k(res, a):\n    %s(res, 0, a[cuda.threadIdx.x])\n" % op, {"cuda": cuda}, ns)
    return ns["k"]  # the text is gone when the function is jitted

kmax, kmin = make("cuda.atomic.max"), make("cuda.atomic.min")
a = np.arange(8.0)
r = np.zeros(1)
try:
    cuda.jit(kmax)[1, 8](r, a)
    s = np.array([5.0])
    cuda.jit(kmin)[1, 8](s, a)
    print(r[0], s[0])
except cuda.CompileError:
    print("no source")
'''


@pytest.mark.parametrize("hook, expect", [("1", "7.0 0.0"), ("0", "no source")])
def test_the_audit_hook_finds_texts_gone_before_the_jit(hook, expect):
    env = dict(os.environ, PYKERN_EXEC_SOURCES=hook, PYKERN_CACHE="off", PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", _FACTORY], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == expect, out.stderr


def test_the_audit_hook_never_trusts_a_wrong_pairing():
    from pykern.core import sources

    early = compile("def f(x):\n    x[0] = 1.0\n", "<string>", "exec")
    sources._remember(early, "def f(x):\n    x[0] = 2.0\n")  # as if paired with a later text
    ns = {}
    exec(early, ns)
    assert sources.lookup(ns["f"].__code__) is None
    sources._remember(early, "def f(x):\n    x[0] = 1.0\n")
    assert sources.lookup(ns["f"].__code__) == "def f(x):\n    x[0] = 1.0\n"


def test_a_found_text_is_checked_once_not_at_every_lookup(monkeypatch):
    # the compile-again check runs when a text is found; later compilations (the cache key's
    # source lines, the frontend's parse, a redefinition) reuse the verdict
    from pykern.core import sources

    src = "def twice(a):\n    a[0] = 2.0\n"
    ns = {}
    exec(compile(src, "<checked-once>", "exec"), ns)
    calls = []
    real = sources._gives
    monkeypatch.setattr(sources, "_gives", lambda text, code: calls.append(text) or real(text, code))
    assert sources.text_of(ns["twice"].__code__) == src  # found among this frame's strings
    # checked once (a runner started as ``python -c`` has its command text tried first: not it)
    assert calls.count(src) == 1
    found = len(calls)
    assert sources.text_of(ns["twice"].__code__) == src
    assert sources.lookup(ns["twice"].__code__) == src
    assert len(calls) == found  # later lookups check nothing


def test_a_kernel_in_python_dash_c_text_compiles():
    code = dedent("""
        import numpy as np
        import pykern as cuda
        cuda.set_target("cpu")
        @cuda.jit
        def k(a):
            a[cuda.grid(1)] += 2
        a = np.zeros(4)
        k[1, 4](a)
        print(a.sum())
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "8.0"
