"""The call domains of ``calls.ON_DEMAND`` load the first time a kernel calls one of their
objects, found through ``calls/index.py``: the index is what the registry says with every
domain loaded, and a fresh process compiles a kernel without loading the domains it does not
call, then lowers a call of each such domain as before."""

import os
import subprocess
import sys
import textwrap

from pykern.frontend import calls
from pykern.frontend.calls import index, registry

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_index_is_the_registry_with_every_domain_loaded():
    built = calls.domain_index()
    assert built == index.DOMAIN_OF, "run: from pykern.frontend import calls; calls.write_index()"
    assert set(built.values()) == set(calls.ON_DEMAND)  # every such domain is reachable


def test_every_indexed_path_reaches_an_object_its_domain_lowers():
    calls.load_all()
    for (module, path), domain in index.DOMAIN_OF.items():
        __import__(module)
        obj = registry._resolve(module, path)
        assert obj is not None and registry.ORIGIN.get(obj) == domain, (module, path, domain)


def test_a_domain_loads_at_the_first_call_of_one_of_its_objects():
    # a fresh interpreter: this one has loaded every domain
    code = textwrap.dedent('''
        import math, sys
        import numpy as np
        import pykern as cuda
        from pykern.frontend import calls

        @cuda.jit
        def k(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = a[i] * 2
        a = np.arange(8, dtype=np.float32)
        k[1, 8](a)
        assert (a == np.arange(8) * 2).all()
        print(sorted(m for m in calls.ON_DEMAND if m in sys.modules))

        @cuda.jit
        def s(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = math.sqrt(a[i]) + cuda.atomic.add(a, 0, 0.0) * 0
        b = np.arange(8, dtype=np.float32)
        s[1, 8](b)
        assert np.allclose(b, np.sqrt(np.arange(8)))
        print(sorted(m for m in calls.ON_DEMAND if m in sys.modules))
    ''')
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""), PYKERN_TARGET="cpu",
               PYKERN_CACHE="off")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()[-2:]
    assert first == "[]", first
    assert "pykern.frontend.calls.math_module" in second and "pykern.frontend.calls.atomics" in second, second
    assert "pykern.frontend.calls.warps" not in second


def test_a_fragment_made_by_a_device_function_in_a_fresh_process():
    # wmma_calls loads with the first wmma call, and then marks the fragment's maker force_inline
    code = textwrap.dedent('''
        import sys
        import numpy as np
        import pykern as cuda
        from pykern import wmma
        from pykern.frontend import compile_ir, typeof

        @cuda.jit(device=True)
        def make():
            c = wmma.fragment(wmma.accumulator, 16, 16, 16, cuda.float32)
            wmma.fill_fragment(c, 3.0)
            return c

        @cuda.jit
        def k(D):
            c = make()
            wmma.store_matrix_sync(D, 0, c, 16, wmma.mem_row_major)

        assert "pykern.frontend.wmma_calls" not in sys.modules
        D = np.zeros((16, 16), np.float32)
        module = compile_ir(k.py_func, [typeof(D)])
        assert [f.force_inline for f in module.functions.values() if not f.is_kernel] == [True]
        k[1, 64](D)
        assert (D == 3.0).all(), D
        print("ok")
    ''')
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""), PYKERN_TARGET="cpu",
               PYKERN_CACHE="off")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0 and out.stdout.split()[-1:] == ["ok"], out.stderr
