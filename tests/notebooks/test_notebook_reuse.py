"""Notebook iteration: re-running an unchanged cell reuses the compiled kernel in
memory (even with the disk cache off); editing it recompiles only that kernel."""

import linecache
import os
import subprocess
import sys
import textwrap

import numpy as np

CELL = '''
import pykern as cuda

@cuda.jit(cache=False)
def scale(a, factor):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= factor

@cuda.jit(cache=False)
def shift(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += {delta}
'''


def run_cell(n, delta):
    """Execute a cell the way IPython does: source registered in linecache under a cell name."""
    src = CELL.format(delta=delta)
    name = f"<ipython-input-{n}-pykern>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {}
    exec(compile(src, name, "exec"), ns)
    return ns["scale"], ns["shift"]


def launch(k, *args):
    k[1, 64](*args)
    return next(iter(k.overloads.values()))


def test_unchanged_cell_reuses_and_edited_kernel_recompiles():
    import pykern

    pykern.set_target("cpu")
    a = np.ones(8)
    scale1, shift1 = run_cell(1, 1)
    assert not launch(scale1, a, 2.0).from_cache and not launch(shift1, a).from_cache
    scale2, shift2 = run_cell(2, 1)  # the same cell again
    assert launch(scale2, a, 2.0).from_cache and launch(shift2, a).from_cache
    scale3, shift3 = run_cell(3, 5)  # shift edited, scale untouched
    assert launch(scale3, a, 2.0).from_cache
    assert not launch(shift3, a).from_cache
    np.testing.assert_array_equal(a, np.full(8, ((1 * 2 + 1) * 2 + 1) * 2 + 5.0))


def test_reuse_in_a_fresh_process_with_the_disk_cache_off(tmp_path):
    script = tmp_path / "nb.py"
    script.write_text(textwrap.dedent(f'''
        import sys
        sys.path[:0] = [{os.path.dirname(os.path.abspath(__file__))!r}, {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))!r}]
        import numpy as np, time
        from test_notebook_reuse import run_cell, launch
        import pykern
        a = np.ones(8)
        k1, _ = run_cell(1, 1)
        launch(k1, a, 2.0)
        k2, _ = run_cell(2, 1)
        t = time.perf_counter()
        ov = launch(k2, a, 2.0)
        print(ov.from_cache, (time.perf_counter() - t) * 1e3)
    '''))
    env = dict(os.environ, PYKERN_TARGET="cpu", PYKERN_CACHE="off")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    reused, ms = r.stdout.split()
    assert reused == "True"
