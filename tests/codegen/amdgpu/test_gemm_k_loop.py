"""The matrix-core GEMM sample's k loop as clang-22 makes the same kernel in HIP C++
(benchmarks/bench_matrix.py): its copy loop steps one 32-bit variable (no trip counter beside
it, its ``t // 16`` and ``t % 16`` in 32 bits), and the fragment loads of one array share one
lane address (constant offsets fold into the instructions). Where clang-22 and llvm-objdump-22
are installed, the loop is no longer than clang's and uses no more VGPRs on gfx1100."""

from __future__ import annotations

import os
import re
import sys

import pytest

pytest.importorskip("ml_dtypes")

import pykern as cuda  # noqa: E402
from pykern.frontend.signature import parse_signature  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "samples"))

import wmma_gemm  # noqa: E402

CASES = [(arch, kind) for arch in ("gfx942", "gfx1100") for kind in ("bf16", "f16")]


def optimised_ir(arch, kind):
    from pykern.dispatch.compiler import compile_amdgpu

    kern, sig = wmma_gemm.SIGNATURES[kind]
    return compile_amdgpu(kern, tuple(parse_signature(sig)[1]), arch).llvm_ir


@pytest.mark.parametrize("arch,kind", CASES)
def test_loops_step_their_variables(arch, kind):
    text = optimised_ir(arch, kind)
    assert not re.search(r"%range\.k\S* = phi", text)  # no trip counter left
    m = re.search(r"\n(\S+):[^\n]*\n  (%range\.v\.1\S*)(?<!\.ph) = phi i32 .*?\n\n", text, re.S)
    assert m, "the copy loop's t, 32-bit"
    body, t = m.group(0), m.group(2)
    # t // 16, t // 32 and the masks on the 32-bit t, not on its 64-bit extension
    assert re.search(rf"= lshr i32 {re.escape(t)}, 4\b", body) and re.search(rf"= and i32 {re.escape(t)}, 15\b", body)
    assert not re.search(r"= (lshr|and) i64 ", body), body


def lds_read_addresses(asm):
    """The address registers of the kernel's LDS reads (only the fragment loads read LDS)."""
    regs = set()
    for line in asm.splitlines():
        m = re.match(r"\s*ds_(?:read|load)\w*\s+(v\[?[\d:]+\]?),\s*(v\d+)", line)
        if m:
            regs.add(m.group(2))
    return regs


@pytest.mark.parametrize("arch,kind", CASES)
def test_fragment_loads_share_one_address_per_array(arch, kind):
    kern, sig = wmma_gemm.SIGNATURES[kind]
    ck = cuda.compile(kern, sig, arch=arch)
    regs = lds_read_addresses(ck.asm)
    assert 1 <= len(regs) <= 2, regs  # sA's and sB's (a0/a1, b0/b1 at constant offsets)


@pytest.mark.parametrize("arch,kind", CASES)
def test_k_loop_no_longer_than_clangs(arch, kind, tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import bench_matrix
    from _common import clang, objdump
    from hip_kernels import compile_hip, write_bytes

    if clang() is None or objdump() is None:
        pytest.skip("clang-22 or llvm-objdump-22 not installed")
    kern, sig = wmma_gemm.SIGNATURES[kind]
    ours = bench_matrix._facts(write_bytes(str(tmp_path / "pykern.hsaco"), cuda.compile(kern, sig, arch=arch).code_object))
    c_path = str(tmp_path / "clang.hsaco")
    compile_hip(bench_matrix.hip_source(arch, kind), arch, c_path, no_gpu_includes=True)
    theirs = bench_matrix._facts(c_path)
    assert ours["matrix"] == theirs["matrix"] == 4
    assert ours["loop"] <= theirs["loop"], (ours, theirs)
    assert ours["scratch"] == 0
    if arch == "gfx1100":
        assert ours["vgpr"] <= theirs["vgpr"], (ours, theirs)
