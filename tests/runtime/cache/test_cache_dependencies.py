"""The disk cache never returns a stale kernel: everything a compiled kernel depends on is in its key.

Most tests "edit then re-run": one process compiles and stores a kernel, the files are edited,
a second process sharing the cache directory runs it again and must compute the new answer
(a stale hit would give the old one). Each process checks its result against Python.
"""

from __future__ import annotations

import json
import linecache
import os
import subprocess
import sys
import textwrap
import time
from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest

from pykern.frontend.fingerprint import fingerprint

ROOT = Path(__file__).resolve().parents[3]

PRELUDE = """
import json, os, sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, os.getcwd())
import numpy as np
import pykern as cuda

def done(**out):
    tiers = sys.modules.get("pykern.codegen.cpu.tiers")
    if tiers is not None:  # a first call's O3 build stores the entry after the call returned
        tiers.wait_all(300)
    print("RESULT " + json.dumps(out))

def hits(k):
    return [ov.from_cache for ov in k.overloads.values()]
"""


def run(tmp_path: Path, script: str, env_extra=None, **files) -> dict:
    """Write ``files`` (name -> text; ``None`` deletes) into tmp_path/mods, run ``script`` there in a
    fresh interpreter sharing tmp_path/cache; returns what it passed to ``done``."""
    mods = tmp_path / "mods"
    mods.mkdir(exist_ok=True)
    for name, text in files.items():
        path = mods / name
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # an edited module must never come from a stale .pyc
    env["PYKERN_BUILD_ID"] = "test-build"
    env["PYKERN_CACHE_DIR"] = str(tmp_path / "cache")
    for k in ("PYKERN_CACHE", "PYKERN_CACHE_EXPLAIN", "PYKERN_CPU_BARRIERS"):
        env.pop(k, None)
    env.update(env_extra or {})
    p = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(script)], cwd=mods, env=env,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
    assert lines, p.stdout + p.stderr
    return json.loads(lines[-1][len("RESULT "):])


# ------------------------------------------------------------------ 1. @overload

def test_edited_overload_implementation_is_used_by_the_next_process(tmp_path):
    ext = """
        from pykern.numba_compat.extending import overload
        def scale(x):
            raise NotImplementedError
        @overload(scale)
        def ol_scale(x):
            def impl(x):
                return x * {}
            return impl
    """
    kern = """
        import pykern as cuda
        from ext import scale
        @cuda.jit
        def k(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = scale(a[i])
    """
    script = "import kern\na = np.arange(4.0)\nkern.k[1, 4](a)\ndone(out=a.tolist())"
    assert run(tmp_path, script, **{"ext.py": ext.format(2.0), "kern.py": kern})["out"] == [0, 2, 4, 6]
    assert run(tmp_path, script, **{"ext.py": ext.format(3.0)})["out"] == [0, 3, 6, 9]


def test_an_overload_of_a_builtin_registered_elsewhere_is_not_hidden_by_a_stored_kernel(tmp_path):
    # the kernel's module never names the overload: only the process that registered it knows
    ext = """
        import math
        from pykern.numba_compat.extending import overload
        @overload(math.hypot)
        def ol_hypot(x, y):
            return lambda x, y: x + y
    """
    kern = """
        import math
        import pykern as cuda
        @cuda.jit
        def k(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = math.hypot(a[i], 4.0)
    """
    script = """
        if os.environ.get("WITH_EXT"):
            import ext
        import kern
        a = np.array([3.0, 0.0])
        kern.k[1, 2](a)
        done(out=a.tolist())
    """
    assert run(tmp_path, script, **{"ext.py": ext, "kern.py": kern})["out"] == [5.0, 4.0]
    assert run(tmp_path, script, {"WITH_EXT": "1"})["out"] == [7.0, 4.0]
    assert run(tmp_path, script)["out"] == [5.0, 4.0]


def test_an_overload_of_a_builtin_function_read_by_name(tmp_path):
    ext = """
        from pykern.numba_compat.extending import overload
        @overload(abs)
        def ol_abs(x):
            return lambda x: x * 10.0
    """
    kern = """
        import pykern as cuda
        @cuda.jit
        def k(a):
            a[0] = abs(a[0])
    """
    script = """
        if os.environ.get("WITH_EXT"):
            import ext
        import kern
        a = np.array([-2.0])
        kern.k[1, 1](a)
        done(out=a.tolist(), hits=hits(kern.k))
    """
    assert run(tmp_path, script, **{"ext.py": ext, "kern.py": kern})["out"] == [2.0]
    assert run(tmp_path, script, {"WITH_EXT": "1"})["out"] == [-20.0]
    assert run(tmp_path, script) == {"out": [2.0], "hits": [True]}  # the plain kernel still hits


# ------------------------------------------------------------------ 2, 5. source text of live processes

LIB = """
    import pykern as cuda
    @cuda.jit(device=True)
    def f(x):
        return x * {}
"""

KERN = """
    import pykern as cuda
    import lib
    @cuda.jit
    def k(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = lib.f(a[i])
"""


def test_a_file_edited_under_a_live_process_is_keyed_by_the_text_compiled(tmp_path):
    # the process compiles float64 from the edited text (pykern compiles source): that artifact
    # must not be stored under the old text's key, where the next process would find it
    script = """
        import time, pathlib
        import kern
        a = np.arange(4.0, dtype=np.float32)
        kern.k[1, 4](a)
        if os.environ.get("EDIT"):
            p = pathlib.Path("lib.py")
            time.sleep(0.01)
            p.write_text(p.read_text().replace("* 2.0", "* 3.0"))
        b = np.arange(4.0)
        kern.k[1, 4](b)
        done(out=b.tolist())
    """
    first = run(tmp_path, script, {"EDIT": "1"}, **{"lib.py": LIB.format(2.0), "kern.py": KERN})
    assert first["out"] in ([0, 2, 4, 6], [0, 3, 6, 9])
    assert run(tmp_path, script, **{"lib.py": LIB.format(2.0)})["out"] == [0, 2, 4, 6]


def test_the_source_digest_follows_linecache(tmp_path):
    path = tmp_path / "livemod.py"
    path.write_text("def f(x):\n    return x * 2\n")
    ns = {"__name__": "livemod"}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    before = fingerprint(ns["f"])["source"]
    assert fingerprint(ns["f"])["source"] == before
    time.sleep(0.01)
    path.write_text("def f(x):\n    return x * 3\n")
    linecache.checkcache(str(path))
    assert fingerprint(ns["f"])["source"] != before


def test_a_deleted_source_file_keeps_its_digest_and_text(tmp_path):
    script = """
        import kern
        a = np.arange(4.0, dtype=np.float32)
        kern.k[1, 4](a)
        from pykern.frontend.fingerprint import fingerprint
        fp = fingerprint(kern.k)
        os.unlink("lib.py")
        assert fingerprint(kern.k) == fp
        b = np.arange(4.0)
        kern.k[1, 4](b)   # compiles from the text it had
        done(out=b.tolist())
    """
    assert run(tmp_path, script, **{"lib.py": LIB.format(2.0), "kern.py": KERN})["out"] == [0, 2, 4, 6]


# ------------------------------------------------------------------ 3. file stamps

def test_file_digest_notices_an_edit_that_restores_mtime(tmp_path):
    from pykern.runtime.cache.store import KernelCache

    cache = KernelCache(tmp_path / "cache")
    lib = tmp_path / "lib.bc"
    lib.write_bytes(b"A" * 64)
    st = os.stat(lib)
    first = cache.file_digest(str(lib))
    time.sleep(0.01)
    with open(lib, "r+b") as f:  # same inode, same size
        f.write(b"B" * 64)
    os.utime(lib, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(lib).st_mtime_ns == st.st_mtime_ns
    assert cache.file_digest(str(lib)) != first
    assert KernelCache(tmp_path / "cache").file_digest(str(lib)) != first  # nor from the stored memo


def test_tree_stamp_notices_an_edit_that_restores_mtime(tmp_path):
    from pykern.runtime.cache.key import _tree_stamp

    src = tmp_path / "m.py"
    src.write_text("A = 1\n")
    st = os.stat(src)
    first = _tree_stamp(str(tmp_path))
    time.sleep(0.01)
    src.write_text("A = 2\n")
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _tree_stamp(str(tmp_path)) != first


def test_device_library_bytes_follow_an_edit_that_restores_mtime(tmp_path):
    # the key's file_digest sees the edit: the bytes linked must be the edited ones too
    from pykern.codegen.amdgpu import devicelibs

    env = {"PYKERN_DEVICE_LIBS": str(tmp_path)}
    for lib in devicelibs.LIBS:
        (tmp_path / f"{lib}.bc").write_bytes(b"BC\xc0\xde" + b"1" * 60)
    path = tmp_path / "ocml.bc"
    st = os.stat(path)
    first = devicelibs.library_bytes("ocml", env)
    hashed = devicelibs.content_hash(env)
    time.sleep(0.01)
    with open(path, "r+b") as f:
        f.write(b"BC\xc0\xde" + b"2" * 60)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert devicelibs.library_bytes("ocml", env) != first
    assert devicelibs.content_hash(env) != hashed


# ------------------------------------------------------------------ 4. exec'd functions

def _exec_k(value, filename):
    ns = {"__name__": "gen"}
    exec(compile(f"def k(a):\n    a[0] = {value}\n", filename, "exec"), ns)  # the text is gone after this
    return ns["k"]


@pytest.mark.parametrize("filename", ["<string>", "<ipython-input-7>"])
def test_exec_functions_under_one_pseudo_file_name_never_share_a_key(filename, cpu_target):
    import pykern

    text = "def k(a):\n    a[0] = 1\n"
    old = linecache.cache.get(filename)
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    try:
        one = _exec_k(1, filename)
        two = _exec_k(2, filename)
        assert fingerprint(one)["source"] != fingerprint(two)["source"]
        a = np.zeros(1)
        pykern.jit(one)[1, 1](a)
        assert a[0] == 1
        try:
            pykern.jit(two)[1, 1](a)
        except pykern.CompileError:  # no text of its own: fine, but never the other one's
            pass
        else:
            assert a[0] == 2
    finally:
        if old is None:
            linecache.cache.pop(filename, None)
        else:
            linecache.cache[filename] = old


# ------------------------------------------------------------------ 6. values


class MyInt(int):
    pass


class MyFloat(float):
    pass


P = namedtuple("P", ["x", "y"])
Q = namedtuple("P", ["y", "x"])
R5 = namedtuple("R", ["a", "b"], defaults=(5,))
R7 = namedtuple("R", ["a", "b"], defaults=(7,))


def _reads(value):
    ns = {"__name__": "cellmod", "V": value}
    exec("def k(a):\n    a[0] = V\n", ns)
    return fingerprint(ns["k"])["globals"]


def test_int_and_float_subclass_globals_are_keyed_by_value():
    assert _reads(MyInt(3)) != _reads(MyInt(5))
    assert _reads(MyFloat(1.5)) != _reads(MyFloat(2.5))
    assert _reads(MyInt(3)) != _reads(3)  # its class, too


def test_namedtuple_field_names_and_defaults_are_keyed():
    assert _reads(P(1, 2)) != _reads(Q(1, 2))  # same class name and values, fields in another order
    assert _reads(R5) != _reads(R7)  # the class itself: `R(1).b` reads its defaults


def test_device_function_defaults_are_keyed(tmp_path):
    lib = """
        import pykern as cuda
        class MyFloat(float):
            pass
        S = MyFloat({})  # the def's text stays; only its default's value changes
        @cuda.jit(device=True)
        def f(x, s=S):
            return x * s
    """
    kern = """
        import pykern as cuda
        import lib
        @cuda.jit
        def k(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = lib.f(a[i])
    """
    script = "import kern\na = np.arange(4.0)\nkern.k[1, 4](a)\ndone(out=a.tolist())"
    assert run(tmp_path, script, **{"lib.py": lib.format(2.0), "kern.py": kern})["out"] == [0, 2, 4, 6]
    assert run(tmp_path, script, **{"lib.py": lib.format(3.0)})["out"] == [0, 3, 6, 9]


def test_a_device_function_given_as_a_default_argument_is_a_callee(tmp_path):
    lib = """
        import pykern as cuda
        @cuda.jit(device=True)
        def helper(x):
            return x * {}
    """
    kern = """
        import pykern as cuda
        import lib
        @cuda.jit(device=True)
        def f(x, g=lib.helper):
            return g(x)
        @cuda.jit
        def k(a):
            a[0] = f(a[0])
    """
    script = "import kern\na = np.ones(1)\nkern.k[1, 1](a)\ndone(out=a.tolist())"
    assert run(tmp_path, script, **{"lib.py": lib.format(2.0), "kern.py": kern})["out"] == [2.0]
    assert run(tmp_path, script, **{"lib.py": lib.format(3.0)})["out"] == [3.0]


def test_namedtuple_global_with_fields_reordered(tmp_path):
    kern = """
        from collections import namedtuple
        import pykern as cuda
        P = namedtuple("P", {!r})
        CFG = P(1.0, 2.0)
        @cuda.jit
        def k(a):
            a[0] = CFG.y
    """
    script = "import kern\na = np.zeros(1)\nkern.k[1, 1](a)\ndone(out=a.tolist())"
    assert run(tmp_path, script, **{"kern.py": kern.format(["x", "y"])})["out"] == [2.0]
    assert run(tmp_path, script, **{"kern.py": kern.format(["y", "x"])})["out"] == [1.0]


# ------------------------------------------------------------------ 7. closures


def test_closure_kernels_and_device_functions_of_different_values(tmp_path):
    kern = """
        import pykern as cuda
        def make(c):
            @cuda.jit(device=True)
            def add(x):
                return x + c
            @cuda.jit
            def k(a):
                a[0] = add(a[0]) + c
            return k
    """
    script = """
        import kern
        out = []
        for c in (10.0, 20.0):
            a = np.array([1.0])
            kern.make(c)[1, 1](a)
            out.append(a[0])
        done(out=out)
    """
    assert run(tmp_path, script, **{"kern.py": kern})["out"] == [21.0, 41.0]
    assert run(tmp_path, script)["out"] == [21.0, 41.0]


def test_two_closure_device_functions_of_one_name_in_one_kernel(cpu_target):
    import pykern as cuda

    def make_add(c):
        @cuda.jit(device=True)
        def add(x):
            return x + c
        return add

    f10, f100 = make_add(10.0), make_add(100.0)

    def make(first, second):
        @cuda.jit
        def k(a):
            a[0] = first(a[0]) + second(1.0)
        return k

    a = np.array([1.0])
    make(f10, f100)[1, 1](a)
    assert a[0] == 112.0
    b = np.array([1.0])
    make(f100, f10)[1, 1](b)
    assert b[0] == 112.0
    c = np.array([1.0])
    make(f10, f10)[1, 1](c)
    assert c[0] == 22.0
    assert fingerprint(make(f10, f100)) != fingerprint(make(f10, f10))


# ------------------------------------------------------------------ 8, 9. module attributes, builtins


def test_constant_of_a_lazily_imported_submodule(tmp_path):
    init = """
        import importlib
        def __getattr__(name):
            if name == "sub":
                return importlib.import_module(".sub", __name__)
            raise AttributeError(name)
    """
    kern = """
        import pykern as cuda
        import pkg
        @cuda.jit
        def k(a):
            a[0] = pkg.sub.CONST
    """
    script = "import kern\na = np.zeros(1)\nkern.k[1, 1](a)\ndone(out=a.tolist())"
    files = {"pkg/__init__.py": init, "pkg/sub.py": "CONST = 3.0\n", "kern.py": kern}
    assert run(tmp_path, script, **files)["out"] == [3.0]
    assert run(tmp_path, script, **{"pkg/sub.py": "CONST = 4.0\n"})["out"] == [4.0]


def test_patched_builtin(tmp_path):
    kern = """
        import pykern as cuda
        @cuda.jit(device=True)
        def my_abs(x):
            return x * 10.0
        @cuda.jit
        def k(a):
            a[0] = abs(a[0])
    """
    script = """
        import builtins
        import kern
        if os.environ.get("PATCH"):
            builtins.abs = kern.my_abs
        a = np.array([-2.0])
        kern.k[1, 1](a)
        done(out=a.tolist())
    """
    assert run(tmp_path, script, **{"kern.py": kern})["out"] == [2.0]
    assert run(tmp_path, script, {"PATCH": "1"})["out"] == [-20.0]


def test_module_level_shadowing_of_a_builtin(tmp_path):
    kern = """
        import pykern as cuda
        @cuda.jit(device=True)
        def my_abs(x):
            return x * {}
        abs = my_abs
        @cuda.jit
        def k(a):
            a[0] = abs(a[0])
    """
    script = "import kern\na = np.array([-2.0])\nkern.k[1, 1](a)\ndone(out=a.tolist())"
    assert run(tmp_path, script, **{"kern.py": kern.format(10.0)})["out"] == [-20.0]
    assert run(tmp_path, script, **{"kern.py": kern.format(100.0)})["out"] == [-200.0]


# ------------------------------------------------------------------ 10, 11. locations in messages

DEBUG_LIB = """
    import pykern as cuda
{}
    @cuda.jit(device=True)
    def f(a, i):
        return a[i]
"""

DEBUG_KERN = """
    import pykern as cuda
    import lib
    @cuda.jit(debug=True)
    def k(a):
        a[0] = lib.f(a, 100)
"""

CATCH = """
    import kern
    try:
        kern.k[1, 4](np.zeros(4))
        msg = ""
    except Exception as e:
        msg = str(e)
    done(msg=msg, hits=hits(kern.k))
"""


def test_debug_messages_of_a_callee_that_moved(tmp_path):
    first = run(tmp_path, CATCH, **{"lib.py": DEBUG_LIB.format(""), "kern.py": DEBUG_KERN})
    assert "lib.py:6:" in first["msg"], first
    second = run(tmp_path, CATCH, **{"lib.py": DEBUG_LIB.format("\n\n")})
    assert "lib.py:8:" in second["msg"], second
    assert run(tmp_path, CATCH)["hits"] == [True]  # unmoved: still a hit


BARRIER_KERN = """
    import pykern as cuda
{}
    @cuda.jit
    def k(a):
        if cuda.threadIdx.x < 2:
            cuda.syncthreads()
        else:
            cuda.syncthreads()
        a[0] = 1
"""


@pytest.mark.parametrize("mode", ["regions", "coroutine"])
def test_divergent_barrier_of_a_kernel_that_moved(tmp_path, mode):
    env = {"PYKERN_CPU_BARRIERS": mode} if mode == "coroutine" else {}
    first = run(tmp_path, CATCH, env, **{"kern.py": BARRIER_KERN.format("")})
    assert "kern.py:7 " in first["msg"] and "kern.py:9 " in first["msg"], first
    second = run(tmp_path, CATCH, env, **{"kern.py": BARRIER_KERN.format("\n\n\n")})
    assert "kern.py:10 " in second["msg"] and "kern.py:12 " in second["msg"], second
    assert run(tmp_path, CATCH, env)["hits"] == [True]


def test_barrier_kernels_of_one_text_at_two_places_in_one_process(tmp_path):
    # one name and one text: the same IR, only the barrier sites' lines differ
    one = """
        @cuda.jit
        def k(a):
            if cuda.threadIdx.x < 2:
                cuda.syncthreads()
            else:
                cuda.syncthreads()
            a[0] = 1
    """
    text = "import pykern as cuda\n" + textwrap.dedent(one) + "first = k\n" + textwrap.dedent(one)
    script = """
        import kern
        msgs = []
        for k in (kern.first, kern.k):
            try:
                k[1, 4](np.zeros(4))
            except Exception as e:
                msgs.append(str(e))
        done(msgs=msgs)
    """
    for _ in range(2):  # compiled, then from the disk cache
        msgs = run(tmp_path, script, **{"kern.py": text})["msgs"]
        assert len(msgs) == 2
        assert "kern.py:6 " in msgs[0] and "kern.py:15 " in msgs[1], msgs


def test_sync_names_cover_every_barrier_and_wave_op():
    from pykern.frontend import ir
    from pykern.frontend.fingerprint import SYNC_NAMES

    assert set(ir.intrinsic_names("barrier")) | set(ir.intrinsic_names("wave")) <= SYNC_NAMES


def test_a_barrier_read_under_another_name_keys_the_location(tmp_path):
    kern = BARRIER_KERN.replace("import pykern as cuda", "import pykern as cuda\n    bar = cuda.syncthreads")
    kern = kern.replace("cuda.syncthreads()", "bar()")
    first = run(tmp_path, CATCH, **{"kern.py": kern.format("")})
    assert "kern.py:8 " in first["msg"] and "kern.py:10 " in first["msg"], first
    second = run(tmp_path, CATCH, **{"kern.py": kern.format("\n")})
    assert "kern.py:9 " in second["msg"] and "kern.py:11 " in second["msg"], second


def test_which_closure_each_name_binds_is_keyed(cpu_target):
    # two closures of one def: only their cells tell them apart, and a kernel reading
    # (f1, f10, f10) finds the same two callees as one reading (f1, f1, f10)
    import pykern as cuda

    def make_add(c):
        @cuda.jit(device=True)
        def add(x):
            return x + c
        return add

    f1, f10 = make_add(1.0), make_add(10.0)

    def make(first, second, third):
        @cuda.jit
        def k(a):
            a[0] = first(0.0) + second(0.0) * 10.0 + third(0.0) * 100.0
        return k

    for fs in ((f1, f10, f10), (f1, f1, f10), (f10, f1, f1), (f10, f10, f1)):
        a = np.zeros(1)
        make(*fs)[1, 1](a)
        want = sum(f.py_func(0.0) * w for f, w in zip(fs, (1.0, 10.0, 100.0)))
        assert a[0] == want, (a[0], want)
