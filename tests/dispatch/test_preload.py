"""The interactive preload (``pykern/dispatch/preload.py``): in a notebook or REPL, ``import pykern``
loads LLVM and the compile path on a thread and compiles a throw-away kernel, so that the
user's first kernel waits only for its own compile; scripts and cache-only processes keep
the LLVM-free import."""

import os
import subprocess
import sys
import textwrap

import pytest

from frontend_helpers import IMPORTS, SAXPY_SRC

CHECK_RUN = IMPORTS + SAXPY_SRC + textwrap.dedent('''
    x = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(x)
    saxpy[4, 256](np.float32(2), x, x, out)
    assert np.array_equal(out, 3 * x), out[:4]
''')


def run(tmp_path, code, *flags, timeout=300, **env):
    """Run ``code`` as a script file (pykern compiles kernels from their source)."""
    e = dict(os.environ, PYKERN_TARGET="cpu", **env)
    for k in [k for k, v in e.items() if v is None]:
        del e[k]
    script = tmp_path / "s.py"
    script.write_text(code)
    r = subprocess.run([sys.executable, *flags, str(script)], capture_output=True, text=True, env=e,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_on_loads_the_compile_path_and_stores_nothing(tmp_path):
    cache = tmp_path / "cache"
    out = run(tmp_path, textwrap.dedent("""
        import sys
        import pykern, pykern.dispatch.preload as p
        from pykern.core import llvm_host
        assert p.wait(120) and p.done()
        from pykern.runtime.cache import key as cache_key
        print(llvm_host._initialised, "pykern.codegen.cpu.target" in sys.modules, "pykern.frontend.lower_ast" in sys.modules,
              {"pykern", "llvm"} <= set(cache_key._memo))  # the identities every first key reads
        import os
        print(sum(len(files) for _, _, files in os.walk(CACHE)), "files in the cache")
    """).replace("CACHE", repr(str(cache))) + CHECK_RUN, PYKERN_PRELOAD="on", PYKERN_CACHE="on",
        PYKERN_CACHE_DIR=str(cache))
    loaded, stored = out.splitlines()[:2]
    assert loaded == "True True True True"
    # the warm-up kernel is compiled, never stored: the user's cache holds only what they ran
    assert stored == "0 files in the cache"


def test_a_script_stays_lean_by_default(tmp_path):
    out = run(tmp_path, "import sys, pykern, pykern.dispatch.preload as p\n"
              "print(p._thread is None, 'llvmlite.binding' in sys.modules)", PYKERN_PRELOAD=None)
    assert out.split() == ["True", "False"]


@pytest.mark.parametrize("setting, started", [(None, True), ("auto", True), ("off", False)])
def test_an_interactive_session_preloads_unless_turned_off(tmp_path, setting, started):
    # ``python -i`` runs the command, then reads the REPL's input from stdin (empty here)
    out = run(tmp_path, "import pykern, pykern.dispatch.preload as p\nprint('started', p._thread is not None, p.wait(120))", "-i",
              PYKERN_PRELOAD=setting)
    assert f"started {started} True" in out


def test_ipython_in_the_process_counts_as_interactive(tmp_path):
    pytest.importorskip("IPython")
    out = run(tmp_path, "import IPython, pykern, pykern.dispatch.preload as p\nprint(p._thread is not None)", PYKERN_PRELOAD=None)
    assert out.split() == ["True"]


def test_a_fork_right_after_import_compiles_in_the_child(tmp_path):
    """A fork while the preload thread holds an import or LLVM lock would leave the child's
    copy of that lock held forever; the fork hook lets the thread finish first."""
    out = run(tmp_path, textwrap.dedent('''
        import os, sys
        import pykern
        pid = os.fork()
        if pid == 0:
    ''') + textwrap.indent(CHECK_RUN + "sys.stdout.flush()\nos._exit(0)\n", "    ") + textwrap.dedent('''
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
    '''), PYKERN_PRELOAD="on", timeout=240)
    assert "child 0" in out


def test_the_warm_up_kernel_compiles(monkeypatch):
    """``_load`` swallows errors (the user's compile reports its own): a warm-up kernel that
    stopped compiling would quietly stop helping, so it is compiled here."""
    from pykern.dispatch import preload

    monkeypatch.setattr("pykern.runtime._chosen", ["cpu"])
    monkeypatch.delenv("PYKERN_TARGET", raising=False)
    artifact = preload._exercise_compile()
    assert artifact is not None and artifact.target == "cpu" and artifact.binary
