"""Code quality of the amdgpu target: regression guards for what makes
pykern's code as small as clang's for the same HIP kernels.

* value ranges of the special registers / hidden arguments and of array
  extents, so that LLVM proves ``cuda.grid(1)`` non-negative and drops the
  negative-index wraparound (``v_cndmask``/sign arithmetic per access);
* multiply-add contraction on amdgpu (hipcc's default), none on cpu, where
  results must equal numpy's bit for bit.

The kernels are those of ``benchmarks/bench_codegen.py`` (which compares with
clang-22 -O3); the instruction and VGPR bounds are 1.1x what clang-22 gives the
HIP twins (``benchmarks/hip_kernels.py``), compiled here when clang-22 is
installed (the budget tests skip without it). Counting is the benchmark's:
instruction lines of ``llvm-objdump-22 -d`` of .text, trailing padding excluded.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import pykern as cuda
from cpu_helpers import compile_py, launch
from pykern.codegen import get_target
from pykern.codegen.amdgpu.target import AmdgpuTarget, prepare_ir, shape_ranges
from pykern.codegen.abi_map import flatten_params
from pykern.codegen.target_interface import CompileOptions
from pykern.frontend import compile_ir
from pykern.frontend import types as T
from pykern.frontend.signature import parse_signature

OBJDUMP = shutil.which("llvm-objdump-22")
need_objdump = pytest.mark.skipif(OBJDUMP is None, reason="llvm-objdump-22 not installed")

# the samples' own kernels (what benchmarks/bench_codegen.py measures too)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "samples"))
from matmul import TPB, matmul  # noqa: E402
from reduction import block_sum  # noqa: E402
from saxpy import saxpy  # noqa: E402


sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "benchmarks"))
from kernels import sort_rows, sort_rows16  # noqa: E402  (benchmarks/kernels.py: insertion sorts in a local array)

KERNELS = {
    "saxpy": (saxpy, "void(float32, float32[::1], float32[::1], float32[::1])"),
    "matmul": (matmul, "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"),
    "block_sum": (block_sum, "void(float64[::1], float64[::1])"),
    "sort_rows": (sort_rows, "void(float32[:, ::1], float32[:, ::1])"),
    "sort_rows16": (sort_rows16, "void(float32[:, ::1], float32[:, ::1])"),
}
TARGET = 1.1

_arts: dict = {}


def build(name, arch, **opts):
    """The amdgpu artifact of benchmark kernel ``name`` (memoised per module run)."""
    key = (name, arch, tuple(sorted(opts.items())))
    if key not in _arts:
        fn, sig = KERNELS[name]
        mod = compile_ir(fn, parse_signature(sig)[1], is_kernel=True)
        _arts[key] = AmdgpuTarget(arch=arch).compile(mod, CompileOptions(**opts))
    return _arts[key]


def disassemble(art, tmp_path) -> list:
    """Mnemonics of the .text instructions, trailing padding dropped (as the benchmark counts)."""
    return _disassemble_binary(art.binary, art.name, tmp_path)


def _disassemble_binary(binary: bytes, name: str, tmp_path) -> list:
    path = os.path.join(tmp_path, f"{name}.hsaco")
    with open(path, "wb") as f:
        f.write(binary)
    out = subprocess.run([OBJDUMP, "-d", "--section=.text", path], capture_output=True, text=True,
                         check=True).stdout
    ops = [ln.strip().split()[0] for ln in out.splitlines()
           if "//" in ln and not ln.strip().startswith("//") and not ln.strip().endswith(":")]
    while ops and ops[-1] in ("s_nop", "s_code_end"):
        ops.pop()
    return ops


def kernel_ir(art) -> str:
    """The optimised IR of the kernel function alone (declarations dropped)."""
    m = re.search(r"^define .*?^}", art.llvm_ir, flags=re.M | re.S)
    return m.group(0)


# ------------------------------------------------------- instruction budgets
_clang: dict = {}


def clang_counts(name, arch, tmp_path) -> tuple:
    """(instructions, VGPRs) of clang-22 -O3 for the HIP twin of kernel ``name`` (memoised)."""
    if (name, arch) not in _clang:
        if shutil.which("clang-22") is None:
            pytest.skip("clang-22 not installed: no reference to hold pykern's code to")
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))), "benchmarks"))
        from hip_kernels import SOURCES, compile_hip

        from pykern.codegen.amdgpu import codeobject

        binary, _ = compile_hip(SOURCES[name], arch, os.path.join(str(tmp_path), f"clang_{name}_{arch}.hsaco"))
        md = codeobject.read_metadata(binary)["amdhsa.kernels"][0]
        _clang[name, arch] = (len(_disassemble_binary(binary, f"clang_{name}", tmp_path)), md[".vgpr_count"])
    return _clang[name, arch]


@need_objdump
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
@pytest.mark.parametrize("name", list(KERNELS))
def test_within_ten_percent_of_clang(name, arch, tmp_path):
    c_insns, c_vgprs = clang_counts(name, arch, tmp_path)
    art = build(name, arch)
    n = len(disassemble(art, tmp_path))
    bound = int(c_insns * TARGET)
    assert n <= bound, f"{name} {arch}: {n} instructions, the budget is {bound} (clang-22: {c_insns})"
    vgprs = art.metadata[".vgpr_count"]
    assert vgprs <= int(c_vgprs * TARGET), (name, arch, vgprs, c_vgprs)


#: (kernel, arch) where pykern matches or beats clang-22 (issue 15 item 5): all of them, held at
#: parity, loop-alignment s_nop padding included. block_sum's ``for w in range((blockDim.x +
#: warpsize - 1) // warpsize)`` counts in i32 as the HIP twin's ``int k`` does only because its
#: bounds provably fit (range_loops.plan_range); on gfx1100 it is at parity only with its remainder
#: as a prolog (codeobject.prolog_remainders).
AT_PARITY = [(s, a) for s in ("saxpy", "matmul", "block_sum", "sort_rows", "sort_rows16")
             for a in ("gfx942", "gfx1100", "gfx90a", "gfx1201")]


@need_objdump
@pytest.mark.parametrize("name,arch", AT_PARITY)
def test_matches_clang(name, arch, tmp_path):
    c_insns, c_vgprs = clang_counts(name, arch, tmp_path)
    art = build(name, arch)
    n = len(disassemble(art, tmp_path))
    assert n <= c_insns, f"{name} {arch}: {n} instructions, clang-22: {c_insns}"
    assert art.metadata[".vgpr_count"] <= c_vgprs, (name, arch, art.metadata[".vgpr_count"], c_vgprs)


#: block_sum's instructions (s_nop loop-alignment padding included) with the runtime-unrolled
#: partial-sum loop's remainder as a prolog; with LLVM's epilog they were 149, 184, 156, 197.
#: clang-22 -O3 gives the HIP twin 183 on gfx1100.
BLOCK_SUM_INSNS = {"gfx942": 144, "gfx1100": 181, "gfx90a": 151, "gfx1201": 188}


@need_objdump
@pytest.mark.parametrize("arch", list(BLOCK_SUM_INSNS))
def test_block_sum_instruction_count(arch, tmp_path):
    """A fixed bound (no clang needed): the prolog remainder's structured CFG saves the
    StructurizeCFG flow blocks (lane-mask predicates, ``s_cselect``, ``s_and vcc, exec``,
    a second branch) that the epilog's needs."""
    art = build("block_sum", arch)
    ops = disassemble(art, tmp_path)
    assert len(ops) <= BLOCK_SUM_INSNS[arch], (arch, len(ops))
    assert "s_cselect_b32" not in ops and "s_cselect_b64" not in ops, ops


def test_runtime_unrolled_remainder_is_a_prolog():
    """The optimised IR of block_sum: the partial-sum loop is unrolled with a prolog
    remainder (LLVM names its blocks ``*.prol*``), not an epilog (``*.epil*``)."""
    body = kernel_ir(build("block_sum", "gfx1100"))
    assert ".prol" in body, body
    assert ".epil" not in body, body


def test_prolog_remainders_switch_is_scoped():
    """The LLVM option holds only inside ``prolog_remainders``: the same O3 pipeline on
    the same IR gives the prolog inside it and LLVM's epilog outside it (what the cpu
    target's pipelines, run under the same lock, see)."""
    from pykern.codegen.amdgpu import codeobject
    from pykern.codegen import llvm_util
    from pykern.codegen.lowering import module as lower

    fn, sig = KERNELS["block_sum"]
    t = AmdgpuTarget(arch="gfx942")
    lw = lower.lower_module(compile_ir(fn, parse_signature(sig)[1], is_kernel=True), t,
                            t.resolve_options(CompileOptions()))
    text = prepare_ir(str(lw.llmodule), lw.info.kernel_name, arch=t.arch_info)
    tm = codeobject.target_machine("gfx942")

    def optimised(scoped):
        mod = codeobject.llvm().parse_assembly(text)
        with llvm_util.LLVM_LOCK:
            if scoped:
                with codeobject.prolog_remainders():
                    llvm_util.optimize(mod, tm, 3)
            else:
                llvm_util.optimize(mod, tm, 3)
        return str(mod)

    inside, outside = optimised(True), optimised(False)
    assert ".prol" in inside and ".epil" not in inside
    assert ".epil" in outside and ".prol" not in outside


@need_objdump
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100", "gfx90a", "gfx1201"])
def test_matmul_with_int64_indices_beats_clang(arch, tmp_path):
    """With ``i * np.int64(TPB)`` (int64 index arithmetic: numba's, and the HIP
    twin's ``long i``) the wraparound folds and pykern beats clang on every arch."""
    from kernels import matmul_i64

    c_insns, c_vgprs = clang_counts("matmul", arch, tmp_path)
    mod = compile_ir(matmul_i64, parse_signature(KERNELS["matmul"][1])[1], is_kernel=True)
    art = AmdgpuTarget(arch=arch).compile(mod, CompileOptions())
    n = len(disassemble(art, tmp_path))
    assert n < c_insns, f"matmul_i64 {arch}: {n} instructions, clang-22: {c_insns}"
    assert art.metadata[".vgpr_count"] <= c_vgprs
    assert not re.search(r"select i1 [^,]+, i64 ", kernel_ir(art))  # no negative-index wraparound


def test_matmul_with_int64_indices_computes_a_at_b(cpu_target):
    from kernels import matmul_i64

    rng = np.random.default_rng(5)
    A, B = rng.random((40, 24), np.float32), rng.random((24, 36), np.float32)
    C = np.zeros((40, 36), np.float32)
    matmul_i64[(3, 3), (TPB, TPB)](A, B, C)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5)


# ------------------------------------------------------------- value ranges
@need_objdump
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_saxpy_has_no_negative_index_wraparound(arch, tmp_path):
    """With the ranges LLVM knows ``cuda.grid(1) >= 0``: no selects of the
    wraparound, no sign-extension of the 64-bit index."""
    art = build("saxpy", arch)
    body = kernel_ir(art)
    assert "select" not in body, body
    assert "sext" not in body, body
    ops = disassemble(art, tmp_path)
    assert not [o for o in ops if o.startswith("v_cndmask")], ops
    assert not [o for o in ops if o.startswith(("v_ashrrev", "v_mad_i64"))], ops  # sign arithmetic
    if arch == "gfx1100":
        assert art.metadata[".vgpr_count"] <= 6


def test_special_registers_carry_ranges():
    """Pre-optimisation IR: every id/dim has a !range; extents a range() argument attribute."""
    fn, sig = KERNELS["block_sum"]
    mod = compile_ir(fn, parse_signature(sig)[1], is_kernel=True)
    from pykern.codegen.lowering import module as lower

    t = AmdgpuTarget(arch="gfx942")
    opts = t.resolve_options(CompileOptions(max_block_size=256))
    lw = lower.lower_module(mod, t, opts)
    text = str(lw.llmodule)
    md = dict(re.findall(r"^(!\d+) = !\{\s*(.*?)\s*\}$", text, flags=re.M))

    def range_of(pattern):
        m = re.search(pattern + r".*!range (!\d+)", text)
        assert m, pattern
        lo, hi = [int(v.split()[1]) for v in md[m.group(1)].split(",")]
        return lo, hi

    assert range_of(r"call i32 @\"?llvm\.amdgcn\.workgroup\.id\.x") == (0, 2**31 - 1)
    assert range_of(r"call i32 @\"?llvm\.amdgcn\.workitem\.id\.x") == (0, 256)  # max_block_size
    assert range_of(r"load i16, .*") == (1, 257)  # hidden_group_size_x
    assert range_of(r"load i32, .*") == (1, -(2**31))  # hidden_block_count_x: [1, 2**31)
    assert range_of(r"call i32 @\"?llvm\.amdgcn\.mbcnt\.hi") == (0, 64)
    assert "!noundef" in text
    # the argument attributes LLVM sees after prepare_ir
    ll = prepare_ir(text, lw.info.kernel_name, arch=t.arch_info, param_ranges=shape_ranges(lw.params))
    define = next(ln for ln in ll.splitlines() if ln.startswith("define"))
    assert re.search(r'i64 noundef range\(i64 0, 1152921504606846976\) %"?x\.shape0"?[,)]', define), define


def test_shape_ranges_follow_numpys_size_limit():
    params = flatten_params([T.Array(T.float64, 2), T.boolean, T.Array(T.int8, 1), T.Array(T.float32, 1)],
                            ["a", "f", "b", "c"])
    assert shape_ranges(params) == {"a.shape0": (0, 2**60), "a.shape1": (0, 2**60), "b.shape0": (0, 2**63),
                                    "c.shape0": (0, 2**61)}
    # what the bound rests on: numpy refuses arrays whose nbytes overflows an int64
    with pytest.raises(ValueError):
        np.broadcast_to(np.zeros(1, np.float64), (2**60,))
    assert np.broadcast_to(np.zeros(1, np.float64), (2**60 - 1,)).shape == (2**60 - 1,)


def test_grid_stride_loop_keeps_no_wraparound():
    """block_sum's ``while i < x.size: ... i += stride`` on float64: the
    extent's range bounds i + stride below 2**63, so the loop has no select."""
    body = kernel_ir(build("block_sum", "gfx942"))
    loop = re.search(r"^while\.body.*?^\n", body + "\n\n", flags=re.M | re.S).group(0)
    assert "load double" in loop and "select" not in loop, loop
    assert re.search(r"add nuw nsw i64 %\S+, %\S+", loop), loop


def test_cov4_grid_dim_from_dispatch_packet_compiles():
    """COv4 computes gridDim as ceil(packet work-items / workgroup size); with
    ranges on both packet loads the kernel verifies, reads no hidden argument,
    and the loads keep their ranges through O3."""
    art = build("matmul", "gfx942", code_object_version=4)
    body = kernel_ir(art)
    assert "llvm.amdgcn.dispatch.ptr" in body and "implicitarg" not in body
    assert re.search(r"udiv i32 ", body), body
    assert re.search(r"load i32, .*!range", body) and re.search(r"load i16, .*!range", body)
    assert not [a for a in art.metadata[".args"] if a[".value_kind"].startswith("hidden_")]


def test_and_conditions_stay_branches():
    """``if y < A.shape[0] and tx + i * TPB < A.shape[1]:`` is one branch per
    operand (``lower._branch_on``), as clang emits ``&&``: the second compare
    (a sign extension and a 64-bit compare) stays in its own block instead of
    being speculated into an ``and i1`` on every path, and the guarded load's
    wraparound reuses its sign extension (matmul: one instruction fewer on
    every arch)."""
    body = kernel_ir(build("matmul", "gfx1100"))
    loop = re.search(r"^for\.body:.*?^for\.end", body, flags=re.M | re.S).group(0)
    assert not re.search(r"= and i1 ", loop), loop
    assert re.search(r"^bool\.next(\.\d+)?:", body, flags=re.M), body


# ------------------------------------------------------- kernel arguments
@need_objdump
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100", "gfx1201"])
def test_kernel_arguments_are_loaded_together(arch, tmp_path):
    """The strides of contiguous arrays are passed but not read: kept alive with
    ``llvm.fake.use``, they no longer split the kernarg segment, so matmul's 13
    explicit argument reads take one 64-byte and one 32-byte load (plus one for
    the extents' tail and two hidden arguments), not 3 + 3 + 2 separate ones; the
    code object's argument list is unchanged."""
    art = build("matmul", arch)
    ops = disassemble(art, tmp_path)
    loads = [o for o in ops if o.startswith("s_load")]
    assert len(loads) <= 5, loads
    # the group-size load joins the explicit ones before the first wait: no register
    # of theirs is reused while in flight (which needs a wait and a second clause)
    first_wait = next(k for k, o in enumerate(ops) if o.startswith(("s_waitcnt", "s_wait_kmcnt")))
    head = ops[:first_wait]
    assert len([o for o in head if o.startswith("s_load")]) >= 4, ops[:first_wait + 8]
    assert head.count("s_clause") <= 1, head
    assert "@llvm.fake.use(" in art.llvm_ir
    assert [(a[".offset"], a[".size"]) for a in art.metadata[".args"] if not a[".value_kind"].startswith("hidden")] \
        == [(8 * k, 8) for k in range(15)]


def test_fake_uses_go_after_the_hidden_loads_the_entry_block_uses():
    from pykern.codegen.amdgpu.build import _fake_use_offsets

    body = ("entry:\n  %p = call ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()\n"
            "  %g = load i16, ptr addrspace(4) %p, align 4\n"
            "  %n = load i32, ptr addrspace(4) %p, align 4\n"
            "  %z = zext i16 %g to i64\n  br label %next\nnext:\n  %u = load i32, ptr addrspace(4) %p\n")
    top, after = _fake_use_offsets(body)
    assert body[:top] == "entry:\n"
    # after %g (used in the entry block), not after %n (used later only) nor in the next block
    assert body[:after].endswith("%g = load i16, ptr addrspace(4) %p, align 4\n"), body[:after]
    assert _fake_use_offsets("  %z = add i64 %a, 1\n  ret void\n") == (0, 0)


def _amdgpu_attributes(ll: str, kernel: str) -> set:
    """The ``amdgpu-*`` / ``uniform-work-group-size`` attributes (with values) of ``kernel`` in IR text."""
    define = next(ln for ln in ll.splitlines() if ln.startswith("define") and f"@{kernel}(" in ln)
    group = re.search(r"#(\d+)\s*\{?\s*$", define).group(1)
    body = re.search(r"^attributes #" + group + r" = \{(.*)\}$", ll, flags=re.M).group(1)
    return {a for a in re.findall(r'"[^"]+"(?:="[^"]*")?', body)
            if a.startswith(('"amdgpu-', '"uniform-work-group-size'))}


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_kernel_attributes_match_clangs(arch, tmp_path):
    """After O3 the kernel carries every attribute clang's HIP kernel gets (flat work-group
    size, uniform work-groups, the ``amdgpu-no-*`` facts that drop unused hidden arguments)."""
    if shutil.which("clang-22") is None:
        pytest.skip("clang-22 not installed")
    from hip_kernels import SOURCES

    src = os.path.join(str(tmp_path), "matmul.hip")
    with open(src, "w") as f:
        f.write(SOURCES["matmul"])
    ll = os.path.join(str(tmp_path), "matmul.ll")
    subprocess.run(["clang-22", "-x", "hip", "--cuda-device-only", f"--offload-arch={arch}", "-O3", "-nogpulib",
                    "-S", "-emit-llvm", src, "-o", ll], check=True, capture_output=True)
    with open(ll) as f:
        theirs = _amdgpu_attributes(f.read(), "matmul")
    ours = _amdgpu_attributes(build("matmul", arch).llvm_ir, "matmul")
    assert '"amdgpu-flat-work-group-size"="1,1024"' in theirs and '"amdgpu-no-queue-ptr"' in theirs, theirs
    assert theirs <= ours, sorted(theirs - ours)


READELF = shutil.which("llvm-readelf-22")


@pytest.mark.skipif(READELF is None, reason="llvm-readelf-22 not installed")
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100", "gfx90a", "gfx1201"])
@pytest.mark.parametrize("name", list(KERNELS))
def test_no_scratch_in_the_code_object(name, arch, tmp_path):
    """Read back by llvm-readelf-22 (not pykern's own reader): no private segment, no
    dynamic stack, no spills -- the local array of sort_rows lives in registers."""
    path = os.path.join(str(tmp_path), f"{name}_{arch}.hsaco")
    with open(path, "wb") as f:
        f.write(build(name, arch).binary)
    notes = subprocess.run([READELF, "--notes", path], capture_output=True, text=True, check=True).stdout
    fields = dict(re.findall(r"^\s*-?\s*(\.[a-z_]+):\s*(\S+)\s*$", notes, flags=re.M))
    assert fields[".private_segment_fixed_size"] == "0", fields
    assert fields[".uses_dynamic_stack"] == "false", fields
    assert fields.get(".vgpr_spill_count", "0") == "0" and fields.get(".sgpr_spill_count", "0") == "0", fields


# ------------------------------------------------------- local-array loops
def _backward_branches(tmp_path, art) -> list:
    """Branches of the .text that jump backwards (a loop): SOPP branch offsets are
    signed 16-bit words, printed unsigned by llvm-objdump (65500 = -36)."""
    path = os.path.join(tmp_path, f"{art.name}.hsaco")
    with open(path, "wb") as f:
        f.write(art.binary)
    out = subprocess.run([OBJDUMP, "-d", "--section=.text", path], capture_output=True, text=True,
                         check=True).stdout
    return [ln.strip() for ln in out.splitlines()
            if re.match(r"\s*s_(cbranch_\w+|branch) (\d+)", ln) and int(ln.split()[1]) >= 0x8000]


@need_objdump
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100", "gfx90a", "gfx1201"])
@pytest.mark.parametrize("name", ["sort_rows", "sort_rows16"])
def test_local_array_insertion_sort_is_unrolled(name, arch, tmp_path):
    """The while loop of an insertion sort over an 8- or 16-element local array has
    no constant trip count, but its ``j >= 0`` exit has one once the outer loop is
    unrolled: clang unrolls it completely, and so must pykern -- no loop left,
    the array in registers (no scratch, no indexed register moves). The index
    wraparound of ``a[j]`` under ``j >= 0`` must be folded before SimplifyCFG
    merges the two exits (``amdgpu_build._fold_guarded_indices``); at 16 elements
    the outer loop is unrolled on the frontend's hint (``llvm.loop.unroll.full``:
    ``AmdgpuTarget.local_unroll_budget``), LLVM's estimate being just over its limit."""
    art = build(name, arch)
    assert not _backward_branches(tmp_path, art), _backward_branches(tmp_path, art)
    assert art.metadata.get(".private_segment_fixed_size", 0) == 0
    ops = disassemble(art, tmp_path)
    assert not [o for o in ops if o.startswith(("v_movrel", "s_set_gpr_idx", "scratch_", "buffer_store"))], ops


def _local_loops(n: int, trips: int):
    """A kernel whose constant-trip loops write and sum a local array of ``n`` floats."""

    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.shape[0]:
            a = cuda.local.array(n, np.float32)
            for t in range(trips):
                a[t % n] = x[i] * t
            s = np.float32(0)
            for t in range(trips):
                s += a[(t * 7) % n]
            out[i] = s

    return k


def _lowered_ir(fn, sig: str, target) -> str:
    from pykern.codegen.lowering.module import lower_module

    mod = compile_ir(fn, parse_signature(sig)[1], is_kernel=True)
    return str(lower_module(mod, target, CompileOptions()).llmodule)


def test_the_unroll_hint_is_bounded():
    """``llvm.loop.unroll.full`` goes on constant-trip loops over a local array while
    trip count x body nodes stays within the budget (600): the 16-element sort's
    outer loop (15 x 36) gets it, the 32-element one (31 x 36) and a loop of 1000
    trips do not, and neither does a loop that indexes no local array, nor any
    loop on the cpu target (budget 0)."""
    from kernels import insertion_sort_kernel

    sig = "void(float32[:, ::1], float32[:, ::1])"
    amd = AmdgpuTarget(arch="gfx942")

    def hinted(fn, sig=sig, target=amd) -> int:  # back edges that carry the hint
        return _lowered_ir(fn, sig, target).count(", !llvm.loop !")

    assert hinted(sort_rows16) == 3  # copy in (16 x 7 nodes), sort (15 x 36), copy out
    assert hinted(insertion_sort_kernel(32)) == 2  # only the copies (32 x 7); the sort: 31 x 36
    assert hinted(_local_loops(1000, 1000), "void(float32[::1], float32[::1])") == 0
    assert hinted(_local_loops(64, 30), "void(float32[::1], float32[::1])") == 2
    assert hinted(sort_rows16, target=get_target("cpu")) == 0

    @cuda.jit
    def no_local(x, out):
        i = cuda.grid(1)
        if i < x.shape[0]:
            s = np.float32(0)
            for t in range(4):
                s += x[i, t]
            out[i, 0] = s

    assert hinted(no_local) == 0
    one = "void(float32[::1], float32[::1])"
    # 16 x 16 into a 256-float array: the inner loop (16 x 10 nodes), not the outer one, whose
    # size counts the inner loop unrolled (16 x (16 x 10)), nor the 256-trip read
    assert hinted(_nested_local_loops, one) == 1
    # a call counts its callee's body: 8 calls of a 40-trip loop are over the budget
    assert hinted(_calls_a_loop, one) == 1


@cuda.jit(device=True)
def _forty_steps(v):
    s = v
    for t in range(40):
        s = s * np.float32(0.5) + np.float32(t)
    return s


@cuda.jit
def _calls_a_loop(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        a = cuda.local.array(8, np.float32)
        for k in range(8):
            a[k] = _forty_steps(x[i] + k)
        s = np.float32(0)
        for k in range(8):
            s += a[(k * 3) % 8]
        out[i] = s


@cuda.jit
def _nested_local_loops(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        a = cuda.local.array(256, np.float32)
        for r in range(16):
            for c in range(16):
                a[r * 16 + c] = x[i] * r + c
        s = np.float32(0)
        for k in range(256):
            s += a[(k * 7) % 256]
        out[i] = s


@need_objdump
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_a_long_loop_over_a_local_array_stays_a_loop(arch, tmp_path):
    """range(1000) over a local array of 1000 floats: no hint, a loop in the code
    object (not 1000 copies), compiled in well under a second."""
    mod = compile_ir(_local_loops(1000, 1000), parse_signature("void(float32[::1], float32[::1])")[1],
                     is_kernel=True)
    art = AmdgpuTarget(arch=arch).compile(mod, CompileOptions())
    assert _backward_branches(tmp_path, art)
    assert len(disassemble(art, tmp_path)) < 400


def _insertion_sorted(row) -> list:
    """Python's run of the kernel's algorithm (``>`` on floats: NaN never moves past)."""
    a = list(row)
    for k in range(1, len(a)):
        v, j = a[k], k - 1
        while j >= 0 and a[j] > v:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = v
    return a


def test_sort_rows16_sorts_nan_signed_zeros_and_equal_keys(cpu_target):
    """The 16-element benchmark sort on the cpu target against the same algorithm in
    Python, bit for bit: NaN (compares false, so it stays where the scan stops),
    -0.0 and 0.0 (equal: stable, their order kept), repeated keys."""
    rng = np.random.default_rng(11)
    x = rng.integers(-4, 5, (70, 16)).astype(np.float32)
    x[::3, 5] = np.nan
    x[1::4, 2] = -0.0
    x[1::4, 9] = 0.0
    x[2::5, :] = 1.5
    x[7, ::2] = np.nan
    out = np.zeros_like(x)
    sort_rows16[3, 32](x, out)
    want = np.array([_insertion_sorted(r) for r in x], np.float32)
    assert np.array_equal(out.view(np.uint32), want.view(np.uint32))
    plain = ~np.isnan(x).any(axis=1)
    assert np.array_equal(out[plain], np.sort(x[plain], axis=1))


# ------------------------------------------------------------- contraction
def test_fp_contract_is_a_target_decision():
    assert get_target("cpu").fp_contract() is False
    assert AmdgpuTarget(arch="gfx942").fp_contract() is True
    assert AmdgpuTarget(arch="gfx1100").fp_contract() is True


@need_objdump
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_amdgpu_contracts_multiply_adds(arch, tmp_path):
    ops = disassemble(build("matmul", arch), tmp_path)
    fmas = [o for o in ops if o.startswith(("v_fma_f32", "v_fmac_f32", "v_dual_fmac_f32"))]
    assert len(fmas) >= TPB, ops  # the unrolled j loop: one FMA per step
    assert not [o for o in ops if o.startswith(("v_mul_f32", "v_add_f32"))], ops
    sax = disassemble(build("saxpy", arch), tmp_path)
    assert [o for o in sax if o.startswith(("v_fma_f32", "v_fmac_f32"))], sax
    assert "fmul contract float" in kernel_ir(build("saxpy", arch))


def test_amdgpu_division_is_not_contracted():
    def div(a, x, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = x[i] / a + x[i] * a

    mod = compile_ir(div, parse_signature("void(float32, float32[::1], float32[::1])")[1], is_kernel=True)
    ir_text = kernel_ir(AmdgpuTarget(arch="gfx942").compile(mod, CompileOptions()))
    assert "fmul contract" in ir_text
    assert not re.search(r"fdiv (contract|fast)", ir_text), ir_text


def test_fastmath_keeps_its_meaning_on_amdgpu():
    body = kernel_ir(build("saxpy", "gfx942", fastmath=True))
    assert re.search(r"fmul fast float", body) or "llvm.fma" in body or "fmuladd" in body, body


def _fma_differs(a, x, y):
    """float32 elements where a fused a*x+y would round differently from numpy's."""
    exact = np.float64(a) * x.astype(np.float64) + y.astype(np.float64)  # a*x is exact in float64
    return exact.astype(np.float32) != (a * x + y)


def test_cpu_saxpy_is_numpy_exact_not_fused():
    rng = np.random.default_rng(7)
    n = 4096
    a = np.float32(1.1)
    x = rng.standard_normal(n).astype(np.float32)
    y = (-a * x * np.float32(0.999)).astype(np.float32)  # cancellation: fused and unfused differ
    assert _fma_differs(a, x, y).sum() > 100  # the data can tell the two apart
    out = np.zeros_like(x)
    k = compile_py(saxpy, a, x, y, out)
    launch(k, (n // 128,), (128,), a, x, y, out)
    np.testing.assert_array_equal(out, a * x + y)
    assert " contract " not in k.artifact.llvm_ir and "fmuladd" not in k.artifact.llvm_ir


def test_cpu_fastmath_still_sets_fast_flags():
    a = np.float32(2)
    x = np.ones(64, np.float32)
    out = np.zeros_like(x)
    k = compile_py(saxpy, a, x, x, out, fastmath=True)
    launch(k, (1,), (64,), a, x, x, out)
    np.testing.assert_array_equal(out, np.full(64, 3, np.float32))
    assert re.search(r"\bfast\b", k.artifact.llvm_ir)
