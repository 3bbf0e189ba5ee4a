"""Kernels travel by value: pickled in one process, rebuilt and launched in another
(issue 16 item 1). Real processes, one of which never saw the defining file."""

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cpu_helpers
from frontend_helpers import child_env

DEFINE = '''
import pickle, sys
import numpy as np
import pykern as cuda

SCALE = 3.0

@cuda.jit(device=True)
def scaled(x):
    return x * SCALE

def make(off):
    @cuda.jit("void(float64[::1])")
    def apply(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = scaled(a[i]) + off
    return apply

apply = make(2.0)
data = cuda.to_device(np.arange(6.0))
if "--launch" in sys.argv:
    apply[1, 8](cuda.to_device(np.arange(6.0)))
with open(sys.argv[1], "wb") as f:
    pickle.dump((apply, data), f)
'''

USE = '''
import pickle, sys
import numpy as np
import pykern as cuda
blob = open(sys.argv[1], "rb").read()
k, d = pickle.loads(blob)
k[1, 8](d)
again, _ = pickle.loads(blob)
print(repr(d.copy_to_host().tolist()), again is k, next(iter(k.overloads.values())).from_cache)
'''


def _run(path, *args, env):
    r = subprocess.run([sys.executable, str(path), *map(str, args)], capture_output=True, text=True, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture
def env(tmp_path):
    return child_env(PYKERN_CACHE_DIR=str(tmp_path / "cache"))


def _scripts(tmp_path):
    """``(define.py, use.py, the pickle's path)``: one process pickles the kernel, the other loads it."""
    src, use = tmp_path / "define.py", tmp_path / "use.py"
    src.write_text(DEFINE)
    use.write_text(USE)
    return src, use, tmp_path / "k.pkl"


def test_kernel_from_main_runs_in_a_process_that_never_saw_its_file(tmp_path, env):
    src, use, blob = _scripts(tmp_path)
    _run(src, blob, env=env)
    src.unlink()  # the receiving side has only the pickle
    values, same, _ = _run(use, blob, env=env).rsplit(" ", 2)
    np.testing.assert_array_equal(eval(values), np.arange(6.0) * 3.0 + 2.0)
    assert same == "True"  # unpickled again in one process: the same Dispatcher, compiled once


def test_rebuilt_kernel_has_the_originals_cache_key(tmp_path, env):
    # the client compiled it; a worker (another process, same cache dir) finds that compile
    src, use, blob = _scripts(tmp_path)
    _run(src, blob, "--launch", env=env)
    *_, from_cache = _run(use, blob, env=env).split()
    assert from_cache == "True"


def test_pickle_holds_no_compiled_code(cpu_uncached):
    import pykern as cuda

    inc = cuda.jit(cpu_helpers.add_one)
    before = pickle.dumps(inc)
    inc[1, 4](np.zeros(4))
    after = pickle.dumps(inc)
    assert before == after and b"ELF" not in after
    k2 = pickle.loads(after)
    a = np.zeros(4)
    k2[1, 4](a)
    assert a.tolist() == [1, 1, 1, 1] and k2.options == inc.options


def test_recursive_globals_and_options_survive(cpu_uncached):
    import pykern as cuda

    ns = {}
    src = textwrap.dedent('''
        import pykern as cuda
        LUT = __import__("numpy").array([10.0, 20.0])
        @cuda.jit(debug=True, fastmath=False)
        def lut(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = LUT[i % 2]
    ''')
    import linecache

    name = "<pykern-test-cell-lut>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    exec(compile(src, name, "exec"), ns)
    k2 = pickle.loads(pickle.dumps(ns["lut"]))
    a = np.zeros(4)
    k2[1, 4](a)
    assert a.tolist() == [10, 20, 10, 20] and k2.options["debug"] is True


def test_a_kernel_without_source_refuses_clearly(cpu_uncached):
    import pykern as cuda

    import ast

    ns = {"cuda": cuda}
    exec(compile(ast.parse("\n".join(["def nosrc(a):", "    a[0] = 1", ""])), "<string>", "exec"), ns)  # an AST of a text gone
    k = cuda.jit(ns["nosrc"])
    with pytest.raises(pickle.PicklingError, match="source is not available"):
        pickle.dumps(k)


def test_device_array_pickles_its_data(cpu_uncached):
    import pykern as cuda

    d = cuda.to_device(np.arange(12, dtype=np.int32).reshape(3, 4))
    d2 = pickle.loads(pickle.dumps(d))
    assert d2 is not d and d2.shape == (3, 4) and d2.dtype == np.int32
    np.testing.assert_array_equal(d2.copy_to_host(), np.arange(12).reshape(3, 4))


def test_a_lambda_refuses_at_pickling_time(cpu_uncached):
    import pykern as cuda

    k = cuda.jit(lambda a: None)
    with pytest.raises(pickle.PicklingError, match="defined with 'def'"):
        pickle.dumps(k)
