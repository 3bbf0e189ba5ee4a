"""What keeps the first call of a process short (issue 15 item 2), checked by what it does,
never by a time: the IR's node classes behave as the dataclasses they replace, a kernel's
source is found without tokenize (inspect.getsource's first use costs ~7-10 ms), and the
first compile imports neither ``socket`` nor the HIP runtime, nor initialises every LLVM target,
when it has no use for them."""

from __future__ import annotations

import importlib.util
import inspect
import os
import subprocess
import sys
import textwrap

import pytest

from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend.resolve import ParsedFunction, _def_lines, source_of

# --------------------------------------------------------------------------- IR nodes


def test_ir_nodes_init_repr_and_identity_as_dataclasses():
    x = ir.Var("x", T.int64)
    c = ir.Const(1, T.int64, loc=None)
    assert repr(c) == "Const(value=1, type=int64, loc=None)"
    assert str(ir.BinOp("+", x, c, T.int64)) == "(x + 1:int64)"
    assert ir.fields(ir.Compare) == ("op", "lhs", "rhs", "type", "loc")
    assert ir.fields(c) == ("value", "type", "loc")
    assert ir.Compare("<", x, x).type is T.boolean  # a default
    a, b = ir.Intrinsic("f", [], T.int64), ir.Intrinsic("f", [], T.int64)
    assert a.attrs == {} and a.attrs is not b.attrs  # a per-node default, as default_factory
    assert "attrs" not in ir.Intrinsic.__dict__
    assert a != b and len({a, b}) == 2  # eq=False: identity
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'type'"):
        ir.Const(1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        ir.Var("x", T.int64, colour=1)
    with pytest.raises(TypeError):
        ir.Break(None, None)
    m = ir.Module(None)
    assert m.functions == {} and ir.Module(None).functions is not m.functions
    f = ir.Function("k", [], T.void, [], {}, True)
    assert (f.pyname, f.raises, f.returns_param) == ("", False, -1)
    assert list(vars(ir.Store(x, [c], c))) == ["array", "indices", "value", "loc"]  # codegen walks __dict__


# --------------------------------------------------------------------------- source without tokenize

TRICKY = '''
def deco(f):
    return f


@deco
def trailing_comments(x):
    y = 1
    # inside

    return y
    # after the return, at the body's indentation

# outside the body
z = 1


def column_zero_string(x):
    s = """
column zero
"""
    return s


def empty_else(x):
    if x:
        return 1
    else:
        pass


def one_liner(x): return x


def trailing_docstring(x):
    x = 1
    """trailing
doc"""


def annotations_only(x):
    x: int
    y: \\
       int


class K:
    @deco
    def method(self,
               x):
        return (x +
1)
    q = 2
'''


@pytest.fixture(scope="module")
def tricky(tmp_path_factory):
    path = tmp_path_factory.mktemp("src") / "tricky_defs.py"
    path.write_text(TRICKY)
    spec = importlib.util.spec_from_file_location("tricky_defs", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["trailing_comments", "column_zero_string", "empty_else", "one_liner",
                                  "trailing_docstring", "annotations_only", "K.method"])
def test_source_found_without_tokenize_is_inspects(tricky, name):
    fn = tricky
    for part in name.split("."):
        fn = getattr(fn, part)
    lines, first = inspect.getsourcelines(fn)
    want = textwrap.dedent("".join(lines))
    assert source_of(fn) == (want, fn.__code__.co_filename, first)
    fast = _def_lines(fn)
    # a method whose body reaches column 0 dedents to nothing: inspect's text, which does not parse
    assert fast == (None if name == "K.method" else want)


def test_common_path_does_not_call_inspect(tricky, monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("inspect.getsourcelines called")

    monkeypatch.setattr(inspect, "getsourcelines", refuse)
    monkeypatch.setattr(inspect, "getblock", refuse)
    pf = ParsedFunction(tricky.trailing_comments)
    assert pf.node.name == "trailing_comments" and pf.first_line == tricky.trailing_comments.__code__.co_firstlineno


def test_notebook_cell_source_and_lambda_fall_back(monkeypatch):
    import linecache

    cell = "import numpy as np\n\ndef cell_fn(a):\n    a[0] = 1\n    # done\n\nx = 1\n"
    name = "<ipython-input-7-fcall>"
    linecache.cache[name] = (len(cell), None, cell.splitlines(True), name)
    ns = {}
    exec(compile(cell, name, "exec"), ns)
    assert source_of(ns["cell_fn"]) == ("def cell_fn(a):\n    a[0] = 1\n    # done\n", name, 3)
    lam = lambda a: a  # noqa: E731  (lambdas share their line: inspect's path)
    assert _def_lines(lam) is None


# --------------------------------------------------------------------------- a fresh process

FIRST_CALL = textwrap.dedent('''
    import sys
    import numpy as np
    import pykern as cuda

    @cuda.jit
    def k(a, b, n):
        i = cuda.grid(1)
        if i < n:
            b[i] = 2.0 * a[i] + 1.0

    a = np.arange(1024, dtype=np.float32); b = np.zeros_like(a)
    k[4, 256](a, b, 1024)
    assert (b == 2 * a + 1).all()
    from pykern.core import llvm_host
    print(llvm_host._all_targets, " ".join(m for m in ("socket", "pykern.runtime.hip.library", "ctypes.util")
                                           if m in sys.modules) or "-")
''')


def test_first_call_imports_no_socket_nor_hip_runtime(tmp_path):
    # the cache's claim markers name the host without socket; the default target is chosen
    # without the HIP runtime when no GPU device node exists (else it must be asked)
    script = tmp_path / "first.py"
    script.write_text(FIRST_CALL)
    env = {k: v for k, v in os.environ.items() if k not in ("PYKERN_TARGET", "PYKERN_HIP_LIBRARY")}
    env.update(PYKERN_CACHE_DIR=str(tmp_path / "cache"), PYKERN_CACHE="on")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    nodes = any(os.path.exists(n) for n in ("/dev/kfd", "/dev/dxg"))
    all_targets, *loaded = r.stdout.split()
    assert all_targets == "False"  # the cpu target initialises LLVM's native target only
    assert "socket" not in loaded
    if not nodes:
        assert loaded == ["-"]


def test_own_context_frees_its_modules_then_itself():
    # freed in this order at the block's end, never by the collector (which may finalise a
    # context before the modules it owns: a crash at exit, seen with the tier-two thread)
    from pykern.codegen import llvm_util

    with llvm_util.LLVM_LOCK, llvm_util.own_context() as ctx:
        a = llvm_util.parse_and_verify("define i32 @f() {\n  ret i32 1\n}\n", "a", ctx)
        b = llvm_util.parse_and_verify("define i32 @g() {\n  ret i32 2\n}\n", "b", ctx)
        a.link_in(b)
        assert a.get_function("g") is not None
    assert a.closed and b.closed and ctx.ctx.closed
    with pytest.raises(Exception):
        with llvm_util.LLVM_LOCK, llvm_util.own_context() as ctx:
            bad = None
            bad = llvm_util.parse_and_verify("this is not IR", "bad", ctx)
    assert bad is None and ctx.ctx.closed
