"""fingerprint(): the kernel-side key parts, computed from the function object."""

from __future__ import annotations

import itertools
import linecache
import statistics
import sys
import time
import types

import numpy as np
import pytest

from pykern.frontend.fingerprint import fingerprint, value_digest


class Device:
    """Stands in for what @jit(device=True) returns: a marker and .py_func."""

    __pykern_device__ = True

    def __init__(self, f):
        self.py_func = f


_cells = itertools.count()


def make_module(name: str, source: str, filename: str | None = None, **globs) -> types.ModuleType:
    """A module whose source linecache knows, as for an imported file or an
    IPython cell (IPython registers each cell's text the same way)."""
    filename = filename or f"<test-{name}-{next(_cells)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    mod = types.ModuleType(name)
    mod.__dict__.update(globs, Device=Device)
    exec(compile(source, filename, "exec"), mod.__dict__)
    return mod


KERNEL = """
import math
N = 4
SCALE = 1.5

@Device
def helper(x):
    return x * SCALE + math.pi

def unrelated():
    return 1

def k(a):
    for i in range(N):
        a[i] = helper(a[i])
"""


def fp_of(source: str, fn: str = "k", name: str = "cell", **globs) -> dict:
    return fingerprint(getattr(make_module(name, source, **globs), fn))


def without_location(fp: dict) -> dict:
    return {k: v for k, v in fp.items() if k != "location"}


def test_parts_name_source_globals_callees():
    fp = fp_of(KERNEL)
    assert set(fp) == {"name", "source", "globals", "callees", "location"}
    assert fp["name"] == "cell.k"
    assert fp["globals"]["N"] == "int:4"
    assert fp["globals"]["helper"] == "device:cell.helper"
    callee = fp["callees"]["cell.helper"]
    assert callee["globals"]["SCALE"] == "float:1.5"
    assert callee["globals"]["math.pi"] == value_digest(3.141592653589793)
    assert "unrelated" not in fp["globals"]


def test_rerun_of_an_unchanged_cell_hits():
    # A notebook re-run: new function objects, new code objects, new file name.
    a = fp_of(KERNEL)
    b = fp_of(KERNEL)
    assert a["location"]["file"] != b["location"]["file"]
    assert without_location(a) == without_location(b)


def test_unrelated_edit_in_the_same_file_hits_even_when_lines_move():
    edited = KERNEL.replace("def unrelated():\n    return 1", "def unrelated():\n    y = 2\n\n    return y")
    a, b = fp_of(KERNEL), fp_of(edited)
    assert b["location"]["line"] == a["location"]["line"] + 2
    assert without_location(a) == without_location(b)


@pytest.mark.parametrize("old,new,changed", [
    ("a[i] = helper(a[i])", "a[i] = helper(a[i]) + 1", ("source",)),
    ("x * SCALE", "x * SCALE * 2", ("callees",)),
    ("N = 4", "N = 5", ("globals",)),
    ("SCALE = 1.5", "SCALE = 2.5", ("callees",)),
    ("N = 4", "N = 4.0", ("globals",)),
    ("N = 4", "import numpy as np\nN = np.int64(4)", ("globals",)),
])
def test_what_changes_the_fingerprint(old, new, changed):
    a, b = fp_of(KERNEL), fp_of(KERNEL.replace(old, new))
    diff = {k for k in without_location(a) if a[k] != b[k]}
    assert diff == set(changed)


def test_comment_after_the_last_statement_does_not_matter_but_body_does():
    src = "def k(a):\n    a[0] = 1\n    a[1] = 2\n"
    assert fp_of(src)["source"] == fp_of(src + "    # trailing note\n")["source"]
    assert fp_of(src)["source"] != fp_of(src.replace("a[1] = 2", "a[1] = 3"))["source"]
    # a string at column 0 inside the body must not end the function early
    tricky = 'def k(a):\n    s = """\nx"""\n    a[1] = 2\n'
    assert fp_of(tricky)["source"] != fp_of(tricky.replace("a[1] = 2", "a[1] = 3"))["source"]


def test_callees_are_transitive_across_modules_and_through_module_attributes():
    lib = make_module("lib", "K = 3\n@Device\ndef leaf(x):\n    return x + K\n@Device\ndef mid(x):\n    return leaf(x) * 2\n")
    src = "def k(a):\n    a[0] = lib.mid(a[0])\n"
    fp = fp_of(src, lib=lib)
    assert set(fp["callees"]) == {"lib.mid", "lib.leaf"}
    assert fp["callees"]["lib.leaf"]["globals"]["K"] == "int:3"
    lib.K = 4  # a constant of a module two calls away
    assert fp_of(src, lib=lib)["callees"]["lib.leaf"]["globals"]["K"] == "int:4"
    assert fp_of(src, lib=lib)["globals"]["lib"] == "module:lib"


def test_closure_variables_and_closure_device_functions():
    def outer(n, dev):
        def k(a):
            a[0] = dev(n)
        return k

    dev_a = Device(lambda x: x + 1)
    fa = fingerprint(outer(3, dev_a))
    assert fa["globals"]["<closure>n"] == "int:3"
    assert any(name.endswith("<lambda>") for name in fa["callees"])
    assert fingerprint(outer(4, dev_a))["globals"] != fa["globals"]


def test_recursive_device_functions_terminate():
    src = "@Device\ndef even(n):\n    return 1 if n == 0 else odd(n - 1)\n@Device\ndef odd(n):\n    return 0 if n == 0 else even(n - 1)\ndef k(a):\n    a[0] = even(4)\n"
    fp = fp_of(src)
    assert set(fp["callees"]) == {"cell.even", "cell.odd"}


def test_numpy_values():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    d = value_digest(arr)
    assert d.startswith("ndarray:<f4(2, 3):")
    assert value_digest(arr.copy()) == d
    changed = arr.copy()
    changed[1, 2] = -1
    assert value_digest(changed) != d
    assert value_digest(arr.astype(np.float64)) != d
    assert value_digest(arr.reshape(3, 2)) != d
    assert value_digest(np.asfortranarray(arr)) == d  # same values, same meaning
    assert value_digest(np.float32(1)) != value_digest(np.float64(1)) != value_digest(1.0)
    assert value_digest(np.dtype("int32")) == "dtype:<i4"
    assert value_digest(np.float32) == "class:numpy.float32"
    assert value_digest(np.int64(1)) != value_digest(1) != value_digest(True)


def test_values_never_depend_on_addresses():
    class Opaque:
        pass

    text = value_digest(Opaque()) + value_digest(lambda: 0) + value_digest({"a": 1})
    assert "0x" not in text


def test_function_without_source_still_fingerprints():
    import ast

    ns: dict = {}
    exec(compile(ast.parse("\n".join(["def k(a):", "    a[0] = 1", ""])), "<string>", "exec"), ns)  # an AST of a text gone: none
    ns2: dict = {}
    exec(compile(ast.parse("\n".join(["def k(a):", "    a[0] = 2", ""])), "<string>", "exec"), ns2)
    assert fingerprint(ns["k"])["source"].startswith("code:")
    assert fingerprint(ns["k"])["source"] != fingerprint(ns2["k"])["source"]


def test_exec_of_a_text_a_caller_holds_fingerprints_the_text():
    # (pykern/core/sources.py); in its own test: this function's constants hold the texts
    ns3: dict = {}
    exec("def k(a):\n    a[0] = 1\n", ns3)
    ns4: dict = {}
    exec("def k(a):\n    a[0] = 2\n", ns4)
    assert fingerprint(ns3["k"])["source"].startswith("src:")
    assert fingerprint(ns3["k"])["source"] != fingerprint(ns4["k"])["source"]


def test_accepts_objects_with_py_func_and_rejects_others():
    mod = make_module("cell", KERNEL)
    assert fingerprint(Device(mod.k)) == fingerprint(mod.k)
    with pytest.raises(TypeError):
        fingerprint(42)


def test_repeat_calls_are_fast():
    mod = make_module("cell", KERNEL, arr=np.zeros(64, np.float32))
    fingerprint(mod.k)
    times = []
    for _ in range(200):
        t = time.perf_counter()
        fingerprint(mod.k)
        times.append(time.perf_counter() - t)
    assert statistics.median(times) < 0.5e-3, statistics.median(times)


def test_own_module_kernel_source_is_just_the_function():
    # a real file on disk: the source part covers the function, not the file
    fp = fingerprint(test_repeat_calls_are_fast)
    assert fp["location"]["file"] == __file__
    assert fp["name"] == f"{__name__}.test_repeat_calls_are_fast"
    assert sys.modules[__name__]


def test_values_read_through_modules_and_classes():
    cfg = make_module("cfg", "N = 2\nclass Config:\n    TILE = 16\n")
    pkg = types.ModuleType("pkg")
    pkg.cfg = cfg
    src = "def k(a):\n    a[0] = pkg.cfg.N + Config.TILE + cfg.N\n"
    fp = fp_of(src, pkg=pkg, cfg=cfg, Config=cfg.Config)
    assert fp["globals"]["pkg.cfg.N"] == fp["globals"]["cfg.N"] == "int:2"
    assert fp["globals"]["Config.TILE"] == "int:16"
    cfg.Config.TILE = 32
    cfg.N = 3
    fp2 = fp_of(src, pkg=pkg, cfg=cfg, Config=cfg.Config)
    assert fp2["globals"]["Config.TILE"] == "int:32" and fp2["globals"]["pkg.cfg.N"] == "int:3"


def test_a_dtype_read_through_a_module_is_part_of_the_key():
    cfg = make_module("cfg", "import numpy as np\nDTYPE = np.float32\n")
    src = "def k(a):\n    a[0] = cfg.DTYPE(1)\n"
    a = fp_of(src, cfg=cfg)
    cfg.DTYPE = np.float64
    assert fp_of(src, cfg=cfg)["globals"]["cfg.DTYPE"] != a["globals"]["cfg.DTYPE"]


def test_record_dtypes_are_told_apart():
    a = np.zeros(2, dtype=[("x", "<i4"), ("y", "<f4")])
    b = np.zeros(2, dtype=[("x", "<f4"), ("y", "<i4")])
    assert value_digest(a) != value_digest(b)
    assert value_digest(a.dtype) != value_digest(b.dtype)


# Values a kernel freezes that once keyed on their class alone: an edit of the value in
# another process then hit the old entry and ran the old constant.
ENUM_LIB = "from enum import IntEnum, Enum\nclass C(IntEnum):\n    R = {r}\nclass P(Enum):\n    A = {a}\n"


@pytest.mark.parametrize("src", ["def k(a):\n    a[0] = e.C.R\n", "def k(a):\n    a[0] = C.R\n",
                                 "def k(a):\n    a[0] = X\n", "def k(a):\n    a[0] = e.P.A.value\n"])
def test_enum_member_values_are_part_of_the_key(src):
    def fp(r, a):
        e = make_module("e", ENUM_LIB.format(r=r, a=a))
        return fp_of(src, e=e, C=e.C, X=e.C.R)["globals"]

    assert fp(1, 1) == fp(1, 1)
    assert fp(1, 1) != fp(5, 1) if "P" not in src else fp(1, 1) != fp(1, 2)


def test_namedtuple_fields_and_class_are_part_of_the_key():
    from collections import namedtuple

    P, Q = namedtuple("P", "x y"), namedtuple("Q", "x y")
    src = "def k(a):\n    a[0] = p.x\n"
    assert fp_of(src, p=P(1, 2))["globals"] == fp_of(src, p=P(1, 2))["globals"]
    assert fp_of(src, p=P(1, 2))["globals"] != fp_of(src, p=P(3, 2))["globals"]
    assert value_digest(P(1, 2)) != value_digest(Q(1, 2)) != value_digest((1, 2))


def test_device_functions_inside_global_tuples_are_callees():
    def lib(body):
        return make_module("lib", f"@Device\ndef f(x):\n    return {body}\n")

    src = "def k(a):\n    a[0] = OPS[0](a[0])\n"
    one, two = lib("x + 1"), lib("x + 100")
    fp1, fp2 = fp_of(src, OPS=((one.f,),)), fp_of(src, OPS=((two.f,),))
    assert set(fp1["callees"]) == {"lib.f"}
    assert fp1["callees"] != fp2["callees"]


def test_declared_signature_of_a_device_function_is_part_of_the_key():
    # add = cuda.jit("int8(int8, int8)", device=True)(_add) edited to int16 in another module:
    # the function's source is unchanged, its code is not
    import pykern

    def _add(a, b):
        return a + b

    src = "def k(a, x):\n    a[0] = add(x[0], x[0])\n"
    i8 = pykern.jit("int8(int8, int8)", device=True)(_add)
    i16 = pykern.jit("int16(int16, int16)", device=True)(_add)
    assert fp_of(src, add=i8)["globals"] == fp_of(src, add=pykern.jit("int8(int8, int8)", device=True)(_add))["globals"]
    assert fp_of(src, add=i8)["globals"] != fp_of(src, add=i16)["globals"]
    assert fp_of(src, add=i8)["globals"] != fp_of(src, add=pykern.jit(device=True)(_add))["globals"]
