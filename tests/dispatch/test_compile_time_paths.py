"""What makes compiles cheap (issue 15 items 2 and 4), checked by what it
produces, never by a time: the cpu thread loop is vectorised without an
unrolled scalar remainder, LLVM is warmed up on a thread during the first
compile, and ld.lld runs in the background with its temporary files removed
on every path."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pykern as cuda
from pykern.dispatch import compiler
from pykern.codegen.amdgpu import toolchain
from pykern.core.errors import CompileError
from pykern.frontend import parse_signature

SAXPY_SIG = "void(float32, float32[::1], float32[::1], float32[::1])"


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def _cpu_artifact(fn, sig):
    _, argtypes = parse_signature(sig)
    art, _ = compiler.compile_artifact(fn, "cpu", tuple(argtypes), _skip_cache=True)
    job = getattr(art, "tier_two", None)  # a first-tier artifact: what is checked here is its O3 build
    return job.wait() if job is not None else art


def test_cpu_thread_loop_vectorised_without_unrolled_remainder():
    ir = _cpu_artifact(saxpy, SAXPY_SIG).llvm_ir
    assert re.search(r"<\d+ x float>", ir), "the thread loop of saxpy must stay vectorised"
    assert "llvm.loop.unroll.runtime.disable" in ir
    # runtime unrolling would leave a remainder prologue (`.prol` blocks, `xtraiter`)
    assert ".prol" not in ir and "xtraiter" not in ir


def _pre_pipeline_ir(monkeypatch, fn, sig):
    """The cpu module as it enters LLVM's pipeline."""
    from pykern.codegen import llvm_util

    seen, optimize = [], llvm_util.optimize
    monkeypatch.setattr(llvm_util, "optimize", lambda mod, *a, **k: (seen.append(str(mod)), optimize(mod, *a, **k)))
    _cpu_artifact(fn, sig)
    return seen[-1]


def _attributes_of(ir, name):
    group = re.search(rf"define internal void @{re.escape(name)}\([^)]*\)\s*#(\d+)", ir)
    return re.search(rf"^attributes #{group.group(1)} = {{(.*)}}", ir, re.M).group(1) if group else ""


def test_cpu_fast_path_block_is_inlined_before_it_is_simplified(monkeypatch):
    # the always-inliner puts the thread loops into the runner before any simplification: the
    # function simplification pipeline then runs once over them, not once in the block function
    # and again after the inliner has moved it into the runner
    ir = _pre_pipeline_ir(monkeypatch, saxpy, SAXPY_SIG)
    assert "alwaysinline" in _attributes_of(ir, "saxpy.block")
    assert "alwaysinline" in _attributes_of(ir, "saxpy.thread")
    optimised = _cpu_artifact(saxpy, SAXPY_SIG).llvm_ir
    assert len(re.findall(r"^define ", optimised, re.M)) == 1  # only the exported runner is left


def test_cpu_results_with_every_remainder_length():
    # block sizes that leave 0..7 threads after the vector loop (and a 3-d block)
    x = np.linspace(-3, 3, 997).astype(np.float32)
    y = np.float32(0.5) - x
    for block in (1, 3, 7, 8, 9, 31, 64, 100, 255):
        out = np.full_like(x, np.nan)
        saxpy[(x.size + block - 1) // block, block](np.float32(1.5), x, y, out)
        np.testing.assert_array_equal(out, np.float32(1.5) * x + y)


@cuda.jit
def fill3d(out):
    x, y, z = cuda.grid(3)
    if x < out.shape[0] and y < out.shape[1] and z < out.shape[2]:
        out[x, y, z] = x * 10000 + y * 100 + z


def test_cpu_3d_blocks_cover_every_thread():
    out = np.full((13, 6, 5), -1, np.int64)
    fill3d[(2, 2, 2), (7, 3, 3)](out)
    i, j, k = np.indices(out.shape)
    np.testing.assert_array_equal(out, i * 10000 + j * 100 + k)


FIRST_COMPILE = textwrap.dedent('''
    import sys, threading
    import numpy as np
    import pykern as cuda
    assert "llvmlite.binding" not in sys.modules

    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = i * 2

    out = np.zeros(100, np.int64)
    k[1, 128](out)
    assert (out == 2 * np.arange(100)).all()
    from pykern.codegen import llvm_util
    for t in threading.enumerate():
        if t.name == "pykern-llvm-warmup":
            t.join(timeout=120)
            assert not t.is_alive()
    print(llvm_util._warmup_started, "llvmlite.binding" in sys.modules)
''')


AOT_FIRST_COMPILE = FIRST_COMPILE.replace(
    "out = np.zeros(100, np.int64)\nk[1, 128](out)\nassert (out == 2 * np.arange(100)).all()",
    'assert cuda.compile(k, "void(int64[::1])", arch="gfx90a").code_object[:4] == b"\\x7fELF"')
assert AOT_FIRST_COMPILE != FIRST_COMPILE


@pytest.mark.parametrize("source", [FIRST_COMPILE, AOT_FIRST_COMPILE], ids=["cpu", "amdgpu"])
def test_first_compile_warms_llvm_on_a_thread_that_ends(tmp_path, source):
    script = tmp_path / "first.py"
    script.write_text(source)
    env = dict(os.environ, PYKERN_TARGET="cpu", PYKERN_CACHE="off")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "True"]


def test_background_link_result_and_cleanup():
    ck = cuda.compile(saxpy, SAXPY_SIG, arch="gfx942")
    assert ck.code_object[:4] == b"\x7fELF" and "s_endpgm" in ck.asm
    job = toolchain.start_link_shared(b"this is not an object file")
    assert os.path.isdir(job.tmp)
    with pytest.raises(CompileError, match="ld.lld failed"):
        job.result()
    assert not os.path.exists(job.tmp) and job.proc.returncode != 0
    job = toolchain.start_link_shared(b"not an object either")
    job.discard()
    assert not os.path.exists(job.tmp) and job.proc.returncode is not None


def _saxpy_object():
    from pykern.codegen.amdgpu import target as amdgpu

    art = cuda.compile(saxpy, SAXPY_SIG, arch="gfx942").artifacts[0]
    return amdgpu.compile_llvm_ir(art.llvm_ir, "gfx942", want_asm=False).obj


def test_early_link_reads_the_object_from_a_pipe_and_links_the_same_bytes():
    obj = _saxpy_object()
    job = toolchain.start_link_shared_early()
    assert job.waiting and job.proc.poll() is None  # started before the object exists
    job.feed(obj)
    assert job.result() == toolchain.start_link_shared(obj).result()
    assert not os.path.exists(job.tmp)


def test_early_link_whose_linker_is_gone_links_from_a_file_and_an_unfed_one_is_reaped():
    obj = _saxpy_object()
    job = toolchain.start_link_shared_early()
    job.proc.kill()
    job.proc.wait()
    job.feed(obj)  # the pipe has no reader: a new linker reads a regular file
    assert not job.waiting and job.result()[:4] == b"\x7fELF"
    job = toolchain.start_link_shared_early()
    job.discard()  # a compile that failed before its object existed
    assert not os.path.exists(job.tmp) and job.proc.returncode is not None
    job = toolchain.start_link_shared_early()
    job.feed(b"this is not an object file")
    with pytest.raises(CompileError, match="ld.lld failed"):
        job.result()


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_amdgpu_assembly_made_on_first_read_equals_eager_listing(arch):
    from pykern.codegen.amdgpu import target as amdgpu
    from pykern.codegen.amdgpu import build as amdgpu_build
    from pykern.codegen.amdgpu import codeobject

    ck = cuda.compile(saxpy, SAXPY_SIG, arch=arch, fastmath=True)  # options: a key of its own
    art = ck.artifacts[0]
    assert art.asm is None and ck._asm is None  # the compile emitted no listing
    eager = amdgpu.compile_llvm_ir(art.llvm_ir, arch, want_asm=True).asm
    assert ck.asm == amdgpu_build.assembly_of(art) == eager
    assert "s_endpgm" in ck.asm and ".amdhsa_kernel saxpy" in ck.asm
    both = cuda.compile(saxpy, SAXPY_SIG, arch=["gfx90a", arch])
    assert both.asm.count("s_endpgm") >= 2
