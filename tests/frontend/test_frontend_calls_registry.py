"""``frontend.calls`` dispatches every call through one registry keyed by the called object
(plus kinds of callables and (kind of value, method) pairs): every kernel-language function
has an entry, an object has one home, and what a kernel computes is what the entry says."""

import collections
import math

import numpy as np
import pytest

from frontend_helpers import compile_error, lower
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.frontend import calls
from pykern.frontend.calls import registry
from pykern.frontend.values import BoundMethod
from pykern.lang import stubs



@pytest.fixture(autouse=True)
def _whole_table():
    # the domains of calls.ON_DEMAND load at a kernel's first call of theirs: these tests look at
    # the whole table (loaded when they run, not when pytest collects this file: other tests in
    # the same process lower calls with only what they call loaded)
    calls.load_all()


def _callable_stubs():
    """Every function a kernel can call from the kernel-language namespace (namespace members
    included); not the values (threadIdx & co.) nor the namespaces themselves."""
    out = []
    for name in stubs.__all__:
        obj = getattr(stubs, name)
        members = [getattr(obj, a) for a in vars(obj) if not a.startswith("_")] if isinstance(obj, stubs.Namespace) else [obj]
        for m in members:
            if isinstance(m, (stubs.Namespace, stubs.Dim3Stub, stubs.GroupStub)):
                continue
            if isinstance(m, stubs.Stub) or callable(m):
                out.append((name, m))
    return out


def test_every_kernel_language_function_has_a_registry_entry():
    found = _callable_stubs()
    assert len(found) > 100  # namespaces' members and the vector types are in
    missing = [name for name, f in found if f not in registry.CALLS]
    assert not missing, missing


def test_registering_an_object_twice_is_an_error():
    with pytest.raises(ValueError, match="already have a handler"):
        registry.lowers(len)(lambda lw, node, name: None)
    with pytest.raises(ValueError, match="already have a handler"):
        registry.lowers_each({stubs.grid: 1})(lambda lw, node, name, v: None)
    with pytest.raises(ValueError, match="already has a handler"):
        registry.lowers_method("array", "sum")(lambda lw, node, name, a: None)
    _, handler = registry.KINDS[0]
    with pytest.raises(ValueError, match="already lowers a kind"):
        registry.lowers_kind(lambda f: False)(handler)


def test_aliases_of_one_object_are_one_entry():
    assert np.abs is np.absolute and registry.CALLS[np.abs] is registry.CALLS[np.absolute]
    assert stubs.float4 is stubs.float32x4 and stubs.float4 in registry.CALLS


def test_lower_call_dispatches_through_the_registry(monkeypatch):
    def forty_two(lw, node, name):
        return lw.const(42.0, T.float64, node)

    monkeypatch.setitem(registry.CALLS, math.sin, forty_two)
    m = lower("def k(a):\n    a[0] = math.sin(a[1])\n", "void(float64[:])", math=math)
    text = str(m)
    assert "42.0" in text and "sin" not in text.replace("def k", ""), text


def test_methods_dispatch_through_the_registry(monkeypatch):
    def first(lw, node, name, a):
        return ir.Load(a, [ir.Const(0, T.int64, lw.loc(node))], a.type.dtype, lw.loc(node))

    monkeypatch.setitem(registry.METHODS, ("array", "sum"), first)
    m = lower("def k(a, out):\n    out[0] = a.sum()\n", "void(float64[:], float64[:])")
    assert "sum" not in str(m).replace("def k", ""), str(m)


def test_a_stub_without_an_entry_cannot_be_called():
    err = compile_error("def k(a):\n    a[0] = cuda.threadIdx()\n", "void(int32[:])", cuda=stubs)
    assert "'cuda.threadIdx' cannot be called" in str(err)
    assert (err.loc.line, err.loc.col) == (2, 11)


def test_kinds_of_callables_exclude_each_other():
    Point = collections.namedtuple("Point", "x y")
    dev = type("Dev", (), {"py_func": staticmethod(lambda x: x), "__pykern_device__": True})()
    samples = [T.float32, np.float32, Point, dict, stubs.threadIdx, dev, BoundMethod(None, "sum"), math.sin, 3]
    for s in samples:
        hits = [h.__name__ for test, h in registry.KINDS if test(s)]
        assert len(hits) <= 1, (s, hits)


def test_methods_lower_exprs_offers_are_registered():
    assert registry.has_method("array", "reshape") and registry.has_method("integer", "bit_count")
    assert not registry.has_method("array", "bit_count") and not registry.has_method(None, "sum")


def test_literal_unroll_outside_a_loop_says_where_it_belongs():
    err = compile_error("def k(a):\n    t = literal_unroll((1, 2.5))\n", "void(float64[:])",
                        literal_unroll=stubs.literal_unroll)
    assert "literal_unroll() can only be used as the iterable of a for loop" in str(err)
    assert err.loc.line == 2
