"""amdgpu side of issue 10's numeric fixes, checked on code objects with llvm-objdump-22 /
llvm-readelf-22 (no GPU): shifts by any count are selects, never branches; under code
object v4 the dynamic shared array's size comes from the dispatch packet (its
``group_segment_size`` minus the kernel's static LDS), not 2**31-1.

The value semantics themselves are tested on the cpu target (tests/lang/test_numerics_semantics.py,
whose kernels tests/codegen/amdgpu/test_amdgpu_core_suite.py also compiles for every arch).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import numpy as np
import pytest

import pykern
import pykern as cuda
from test_amdgpu_core_suite import parse_readelf_gnu

OBJDUMP = shutil.which("llvm-objdump-22")
READELF = shutil.which("llvm-readelf-22")
need_tools = pytest.mark.skipif(not (OBJDUMP and READELF), reason="llvm-objdump-22/llvm-readelf-22 not installed (llvm-22)")
ARCHS = ["gfx90a", "gfx942", "gfx1100", "gfx1201"]


def _write(ck, tmp_path, name):
    path = os.path.join(tmp_path, f"{name}.hsaco")
    with open(path, "wb") as f:
        f.write(ck.code_object)
    return path


def disassemble(ck, tmp_path, name="k") -> list:
    """Instruction lines of the kernel's .text (without the address/encoding comments)."""
    out = subprocess.run([OBJDUMP, "-d", "--section=.text", _write(ck, tmp_path, name)], capture_output=True,
                         text=True, check=True).stdout
    assert "<unknown>" not in out
    ins = [ln.split("//")[0].strip() for ln in out.splitlines() if "//" in ln and not ln.strip().startswith("//")
           and not ln.strip().endswith(":")]
    ends = [k for k, ln in enumerate(ins) if ln.startswith("s_endpgm")]
    return ins[: ends[-1] + 1] if ends else ins  # alignment padding after the end dropped


# ------------------------------------------------------------------------- shifts
def _shift_kernel(a, c, out):
    i = cuda.threadIdx.x  # no bounds check: the only control flow would be the shift's
    out[0, i] = a[i] << c[i]
    out[1, i] = a[i] >> c[i]


@need_tools
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
@pytest.mark.parametrize("dt", ["int8", "uint16", "int32", "uint32", "int64", "uint64"])
def test_shift_by_any_count_is_a_select_not_a_branch(arch, dt, tmp_path):
    ck = pykern.compile(_shift_kernel, f"void({dt}[::1], {dt}[::1], {dt}[:, ::1])", arch=arch)
    ins = disassemble(ck, tmp_path)
    ops = [ln.split()[0] for ln in ins]
    assert not [o for o in ops if o.startswith(("s_cbranch", "s_branch"))], ins
    assert any("cndmask" in o for o in ops), ins  # the count >= width select
    assert any(re.match(r"v_(cmp|cmpx)_\w*(gt|ge|lt|le)_u(16|32|64)", o) for o in ops), ins  # unsigned count test
    # cost: a shift pair costs a handful of VALU ops over the plain (masked) shifts; every
    # integer shift is a 64-bit shift (numba's integer rule widens int8..uint32 first)
    assert len(ins) <= 40, (len(ins), ins)


@need_tools
@pytest.mark.parametrize("arch", ARCHS)
def test_numeric_kernels_compile_for_every_arch(arch, tmp_path):
    """np.minimum/fmin, integer fmod, shifts, round(x, n) and floor of ints: valid code objects."""

    def k(a, b, i, j, out, iout):
        t = cuda.grid(1)
        if t < a.size:
            out[0, t] = np.minimum(a[t], b[t]) + np.fmax(a[t], b[t])
            out[1, t] = round(a[t], 2)
            iout[0, t] = np.fmod(i[t], j[t]) + (i[t] << j[t]) + (i[t] >> j[t]) + np.floor(i[t])

    sig = "void(float32[::1], float32[::1], int64[::1], int64[::1], float32[:, ::1], int64[:, ::1])"
    ck = pykern.compile(k, sig, arch=arch)
    path = _write(ck, tmp_path, "num")
    facts = parse_readelf_gnu(subprocess.run([READELF, "--file-headers", "--notes", "--dyn-syms", "--symbols", path],
                                             capture_output=True, text=True, check=True).stdout)
    assert facts["type"].startswith("DYN") and arch in facts["flags"]
    md = facts["metadata"]["amdhsa.kernels"][0]
    assert md[".private_segment_fixed_size"] == 0
    assert not [s for s in facts["symbols"][".dynsym"] if s["ndx"] == "UND" and s["name"]]
    ins = disassemble(ck, tmp_path, "num")
    assert any(ln.startswith("s_endpgm") for ln in ins)
    assert any(ln.startswith(("v_fma_f64", "v_fmac_f64")) for ln in ins), "round(x, n) splits x*100 exactly with an FMA"


# ------------------------------------------------- COv4 dynamic shared memory size
def _dyn_shared(x, out):
    s = cuda.shared.array(0, np.float32)
    t = cuda.shared.array(10, np.float32)  # static LDS before the dynamic buffer
    i = cuda.threadIdx.x
    t[i % 10] = x[i]
    cuda.syncthreads()
    s[i] = t[(i + 1) % 10]
    cuda.syncthreads()
    out[i] = s.size


def _kernel_ir(ck) -> str:
    return re.search(r"^define .*?^}", ck.llvm_ir, flags=re.M | re.S).group(0)


@need_tools
@pytest.mark.parametrize("arch", ARCHS)
def test_cov4_dynamic_shared_size_from_dispatch_packet(arch, tmp_path):
    ck = pykern.compile(_dyn_shared, "void(float32[::1], int64[::1])", arch=arch, code_object_version=4)
    body = _kernel_ir(ck)
    # group_segment_size: u32 at byte 28 of hsa_kernel_dispatch_packet_t (hsa.h)
    assert "llvm.amdgcn.dispatch.ptr" in body and re.search(r"getelementptr inbounds\b.*, i64 28\b", body), body
    assert "2147483647" not in body, "the COv4 size must not fall back to 2**31-1"
    assert re.search(r"ptrtoint \(ptr addrspace\(3\) @__pykern_dynamic_shared to i32\)", body), body
    path = _write(ck, tmp_path, "dyn")
    notes = subprocess.run([READELF, "--file-headers", "--notes", "--dyn-syms", "--symbols", path], capture_output=True,
                           text=True, check=True).stdout
    facts = parse_readelf_gnu(notes)
    assert facts["metadata"]["amdhsa.version"] == [1, 1]  # code object v4
    md = facts["metadata"]["amdhsa.kernels"][0]
    static = md[".group_segment_fixed_size"]
    assert static >= 40
    assert not [a for a in md[".args"] if a[".value_kind"].startswith("hidden_")]  # v4: no hidden_dynamic_lds_size
    assert facts["type"].startswith("DYN") and arch in facts["flags"]
    ins = disassemble(ck, tmp_path, "dyn")
    # the ISA reads the packet's dword at 0x1c and subtracts exactly the static LDS the
    # runtime adds the launch's dynamic bytes to (clamped at 0)
    assert any(re.match(r"s_load_(dword|b32)\s+s\d+, s\[\d+:\d+\], 0x1c$", ln) for ln in ins), ins
    assert any(re.match(rf"v_sub(_nc)?_u32_e64 v\d+, s\d+, {static} clamp", ln) for ln in ins), (static, ins)


@need_tools
def test_cov5_dynamic_shared_size_still_from_hidden_argument():
    ck = pykern.compile(_dyn_shared, "void(float32[::1], int64[::1])", arch="gfx942")
    body = _kernel_ir(ck)
    assert "llvm.amdgcn.implicitarg.ptr" in body and "dispatch.ptr" not in body
    md = ck.metadata
    assert [a for a in md[".args"] if a[".value_kind"] == "hidden_dynamic_lds_size"]
