"""A cached cpu kernel starts in a new process without LLVM: its linked shared
library is dlopen'ed (MCJIT is only the fallback when no ld.lld exists)."""

import os
import subprocess
import sys
import textwrap

from frontend_helpers import IMPORTS, SAXPY_SRC

SCRIPT = "import sys, time\n" + IMPORTS + SAXPY_SRC + textwrap.dedent('''
    x = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(x)
    t0 = time.perf_counter()
    saxpy[4, 256](np.float32(2), x, x, out)
    ms = (time.perf_counter() - t0) * 1e3
    ov = next(iter(saxpy.overloads.values()))
    assert np.array_equal(out, 3 * x), out[:4]
    print(ov.from_cache, "llvmlite" in sys.modules, bool(ov.artifact.shared_object), f"{ms:.2f}")
''')


def run(tmp_path, **env):
    script = tmp_path / "k.py"
    script.write_text(SCRIPT)
    e = dict(os.environ, PYKERN_TARGET="cpu", PYKERN_CACHE_DIR=str(tmp_path / "cache"), **env)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=e, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_warm_start_loads_the_shared_library_without_llvm(tmp_path):
    cold = run(tmp_path)
    # compiled: LLVM loaded; the process runs its own build through MCJIT (first tier, then O3),
    # the library is linked for the disk cache's entry -- which the warm run loads
    assert cold[:2] == ["False", "True"]
    warm = run(tmp_path)
    assert warm[:3] == ["True", "False", "True"]  # from the cache: no LLVM in the process


def test_without_a_linker_the_object_runs_through_mcjit(tmp_path):
    env = {"PYKERN_HOST_LD": "none"}
    assert run(tmp_path, **env)[:3] == ["False", "True", "False"]
    assert run(tmp_path, **env)[:3] == ["True", "True", "False"]


def test_a_shared_library_with_a_missing_symbol_is_refused_cleanly():
    """dlopen binds every symbol at load (RTLD_NOW): a missing helper is an error, never a jump to 0."""
    import dataclasses

    import llvmlite.binding as llvm
    import pytest

    from pykern import LaunchError
    from pykern.codegen import get_target
    from pykern.codegen.amdgpu import toolchain
    from pykern.codegen.cpu.target import host_target_machine
    from pykern.frontend import compile_ir, parse_signature
    from pykern.runtime.cpu import executor as cpu_executor

    def k(a):
        a[0] = 1.0

    art = get_target("cpu").compile(compile_ir(k, parse_signature("void(float64[::1])")[1]))
    name = art.name + "_broken"
    mod = llvm.parse_assembly(
        f"declare void @pykern_no_such_helper()\n"
        f"define void @{name}(ptr %a, ptr %c, i64 %f, i64 %l) {{\n  call void @pykern_no_such_helper()\n  ret void\n}}\n")
    mod.triple = llvm.get_process_triple()
    so = toolchain.link_host_shared(host_target_machine().emit_object(mod))
    broken = dataclasses.replace(art, name=name, shared_object=so)
    with pytest.raises(LaunchError, match="pykern_no_such_helper"):
        cpu_executor.load(broken)
