"""AMDGPU code objects from hand-written LLVM IR, checked with independent tools.

Each kernel is compiled by pykern's pipeline (devicelibs -> O3 -> emit -> ld.lld)
and then inspected with llvm-readelf-22 / llvm-objdump-22 (not with pykern's
own parser), plus pykern's metadata reader cross-checked against readelf.
"""

from __future__ import annotations

import os
import re
import struct
import subprocess

import pytest

from pykern.codegen.amdgpu import target as amdgpu
from pykern.codegen.amdgpu import archs
from pykern.codegen.amdgpu import codeobject
from pykern.codegen.amdgpu import devicelibs
from pykern.codegen.amdgpu import toolchain
from pykern.core.errors import CompileError

ARCHS = ["gfx90a", "gfx942", "gfx1100", "gfx1201"]
READELF = "llvm-readelf-22"
OBJDUMP = "llvm-objdump-22"


def kernel_ir(wave: int) -> str:
    """LDS + barrier + ds_bpermute + ballot + int and float global atomics."""
    ballot, bty = ("llvm.amdgcn.ballot.i64", "i64") if wave == 64 else ("llvm.amdgcn.ballot.i32", "i32")
    to32 = "trunc i64 %balc to i32" if wave == 64 else "add i32 %balc, 0"
    return f'''
@lds = internal addrspace(3) global [256 x float] poison, align 4
define amdgpu_kernel void @k(ptr addrspace(1) %out, i64 %n, float %a, ptr addrspace(1) %cnt) {{
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %bid = call i32 @llvm.amdgcn.workgroup.id.x()
  %ip = call ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
  %gsp = getelementptr i8, ptr addrspace(4) %ip, i64 12
  %gs = load i16, ptr addrspace(4) %gsp, align 4
  %gs32 = zext i16 %gs to i32
  %t1 = mul i32 %bid, %gs32
  %gid = add i32 %t1, %tid
  %g64 = zext i32 %gid to i64
  %lp = getelementptr [256 x float], ptr addrspace(3) @lds, i32 0, i32 %tid
  store float %a, ptr addrspace(3) %lp
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %x = xor i32 %tid, 1
  %lp2 = getelementptr [256 x float], ptr addrspace(3) @lds, i32 0, i32 %x
  %v = load float, ptr addrspace(3) %lp2
  %vi = bitcast float %v to i32
  %addr = shl i32 %x, 2
  %sh = call i32 @llvm.amdgcn.ds.bpermute(i32 %addr, i32 %vi)
  %shf = bitcast i32 %sh to float
  %c = icmp ult i64 %g64, %n
  %bal = call {bty} @{ballot}(i1 %c)
  %balc = call {bty} @llvm.ctpop.{bty}({bty} %bal)
  %bal32 = {to32}
  %old = atomicrmw add ptr addrspace(1) %cnt, i32 %bal32 syncscope("agent") monotonic
  br i1 %c, label %body, label %exit
body:
  %p = getelementptr float, ptr addrspace(1) %out, i64 %g64
  %r = atomicrmw fadd ptr addrspace(1) %p, float %shf syncscope("agent") monotonic, align 4
  br label %exit
exit:
  ret void
}}
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
declare ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
declare void @llvm.amdgcn.s.barrier()
declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)
declare {bty} @{ballot}(i1)
declare {bty} @llvm.ctpop.{bty}({bty})
'''


SIN_F64 = '''
define amdgpu_kernel void @sin64(ptr addrspace(1) %out, double %x) {
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %t = zext i32 %tid to i64
  %xf = uitofp i64 %t to double
  %y = fadd double %xf, %x
  %s = call double @__ocml_sin_f64(double %y)
  %p = getelementptr double, ptr addrspace(1) %out, i64 %t
  store double %s, ptr addrspace(1) %p
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
declare double @__ocml_sin_f64(double)
'''


def _tool(*args, data: bytes | None = None, tmp_path=None) -> str:
    if data is not None:
        path = os.path.join(tmp_path, "co.bin")
        with open(path, "wb") as f:
            f.write(data)
        args = [*args, path]
    p = subprocess.run(list(args), capture_output=True, text=True, check=True)
    return p.stdout


def prep(ir_text: str, name: str, arch) -> str:
    return amdgpu.prepare_ir(ir_text, name, arch=archs.parse_target_id(arch) if isinstance(arch, str) else arch)


@pytest.fixture(scope="module")
def built():
    out = {}
    for a in ARCHS:
        arch = archs.parse_target_id(a)
        out[a] = amdgpu.compile_llvm_ir(prep(kernel_ir(arch.wave_size), "k", arch), a)
    return out


@pytest.mark.parametrize("arch", ARCHS)
def test_elf_header_is_linked_hsa_code_object(built, arch, tmp_path):
    text = _tool(READELF, "-h", data=built[arch].binary, tmp_path=tmp_path)
    assert re.search(r"Type:\s+DYN", text)
    assert re.search(r"OS/ABI:\s+AMDGPU - HSA", text)
    assert re.search(r"Machine:\s+EM_AMDGPU", text)
    flags = re.search(r"Flags:\s+(.*)", text).group(1)
    assert arch in flags
    # COv5 = ELF ABI version 3
    assert re.search(r"ABI Version:\s+3", text)
    h = codeobject.elf_header(built[arch].binary)
    assert h["e_type"] == 3 and h["osabi"] == 64


@pytest.mark.parametrize("arch", ARCHS)
def test_metadata_note_matches_readelf(built, arch, tmp_path):
    text = _tool(READELF, "--notes", data=built[arch].binary, tmp_path=tmp_path)
    assert "NT_AMDGPU_METADATA" in text
    assert ".symbol:         k.kd" in text
    assert f"amdhsa.target:   amdgcn-amd-amdhsa--{arch}" in text
    md = codeobject.read_metadata(built[arch].binary)
    k = codeobject.kernel_metadata(md, "k")
    explicit = [(a[".name"], a[".offset"], a[".size"], a[".value_kind"]) for a in k[".args"][:4]]
    assert explicit == [("out", 0, 8, "global_buffer"), ("n", 8, 8, "by_value"), ("a", 16, 4, "by_value"),
                        ("cnt", 24, 8, "global_buffer")]
    # hidden args start at the next 8-byte boundary: block_count_x at +0, group_size_x at +12
    kinds = {a[".value_kind"]: a[".offset"] for a in k[".args"]}
    assert kinds["hidden_block_count_x"] == 32
    assert kinds["hidden_group_size_x"] == 32 + 12
    assert kinds["hidden_remainder_x"] == 32 + 18
    # same numbers as readelf printed
    for a in k[".args"]:
        assert f".offset:         {a['.offset']}" in text
    assert k[".wavefront_size"] == archs.parse_target_id(arch).wave_size
    assert k[".group_segment_fixed_size"] == 1024
    assert k[".kernarg_segment_align"] == 8


@pytest.mark.parametrize("arch", ARCHS)
def test_kernel_descriptor_symbol_and_no_undefined(built, arch, tmp_path):
    text = _tool(READELF, "--dyn-syms", "--syms", data=built[arch].binary, tmp_path=tmp_path)
    assert re.search(r"OBJECT\s+GLOBAL\s+\S+\s+\d+\s+k\.kd$", text, re.M)
    und = [ln for ln in text.splitlines() if re.search(r"\sUND\s+\S", ln)]
    assert und == []
    assert all(s["defined"] for s in codeobject.symbols(built[arch].binary))


@pytest.mark.parametrize("arch", ARCHS)
def test_isa_has_expected_instructions(built, arch, tmp_path):
    dis = _tool(OBJDUMP, "-d", data=built[arch].binary, tmp_path=tmp_path)
    ops = [ln.split()[0] for ln in dis.splitlines() if ln.startswith("\t")]
    assert "s_barrier" in ops or "s_barrier_signal" in ops  # gfx12 splits the barrier
    assert "ds_bpermute_b32" in ops
    assert any(o.startswith(("ds_write", "ds_store")) for o in ops)
    assert any(o.startswith(("ds_read", "ds_load")) for o in ops)
    assert any(o.startswith("global_atomic_add") for o in ops)
    # float add: native on every one of these archs once fine-grained memory is ruled out
    assert "global_atomic_add_f32" in ops
    assert built[arch].asm and "s_endpgm" in built[arch].asm


@pytest.mark.parametrize("arch", ARCHS)
def test_no_scratch_and_resources(built, arch):
    b = built[arch]
    r = b.resources("k", block_size=256)
    assert r["scratch_bytes"] == 0 and r["vgpr_spills"] == 0 and r["sgpr_spills"] == 0
    assert r["lds_bytes"] == 1024
    assert 0 < r["vgprs"] <= 32 and r["sgprs"] > 0
    a = archs.parse_target_id(arch)
    assert r["waves_per_simd"] == a.max_waves_per_simd  # tiny kernel: hardware-limited
    assert r["wave_size"] == a.wave_size


def test_float_atomic_without_native_support_uses_cas_loop(tmp_path):
    # gfx1030 has no global float add: LLVM must expand a cmpxchg loop
    arch = archs.parse_target_id("gfx1030")
    b = amdgpu.compile_llvm_ir(prep(kernel_ir(32), "k", arch), "gfx1030")
    dis = _tool(OBJDUMP, "-d", data=b.binary, tmp_path=tmp_path)
    assert "global_atomic_cmpswap" in dis and "global_atomic_add_f32" not in dis


def test_safe_fp_atomics_keep_cas_loop(tmp_path):
    # gfx90a's float atomics are not safe on fine-grained memory: without the
    # no-fine-grained promise LLVM keeps a cmpxchg loop (gfx942 is safe either way)
    arch = archs.parse_target_id("gfx90a")
    text = amdgpu.prepare_ir(kernel_ir(64), "k", arch=arch, fp_atomics_native=False)
    dis = _tool(OBJDUMP, "-d", data=amdgpu.compile_llvm_ir(text, "gfx90a").binary, tmp_path=tmp_path)
    assert "global_atomic_cmpswap" in dis and "global_atomic_add_f32" not in dis


def test_f64_sin_links_ocml_without_undefined_symbols(tmp_path):
    b = amdgpu.compile_llvm_ir(SIN_F64, "gfx942")
    assert b.device_libs == ["ocml"]
    syms = _tool(READELF, "--dyn-syms", "--syms", data=b.binary, tmp_path=tmp_path)
    assert "__ocml" not in syms and not re.search(r"\sUND[ \t]+\S", syms)
    # O3 after internalising leaves the kernel only (everything else inlined away)
    assert "define amdgpu_kernel void @sin64" in b.llvm_ir
    assert "__oclc_" not in b.llvm_ir.split("define", 1)[1] or "internal" in b.llvm_ir
    dis = _tool(OBJDUMP, "-d", data=b.binary, tmp_path=tmp_path)
    assert "v_fma_f64" in dis  # the polynomial is really there


def test_control_constants_follow_arch():
    a = archs.parse_target_id("gfx1100")
    text = devicelibs.control_constants(a, fastmath=True)
    assert "@__oclc_ISA_version = linkonce_odr hidden local_unnamed_addr addrspace(4) constant i32 11000" in text
    assert "@__oclc_wavefrontsize64 = linkonce_odr hidden local_unnamed_addr addrspace(4) constant i8 0" in text
    assert "@__oclc_unsafe_math_opt = linkonce_odr hidden local_unnamed_addr addrspace(4) constant i8 1" in text
    assert "i32 9402" in devicelibs.control_constants(archs.parse_target_id("gfx942"))
    assert "@__oclc_wavefrontsize64 = linkonce_odr hidden local_unnamed_addr addrspace(4) constant i8 1" in \
        devicelibs.control_constants(archs.parse_target_id("gfx90a"))


def test_no_math_needs_no_device_libs(monkeypatch, tmp_path):
    monkeypatch.setenv("PYKERN_DEVICE_LIBS", str(tmp_path))  # empty: would fail if searched
    arch = archs.parse_target_id("gfx942")
    b = amdgpu.compile_llvm_ir(prep(kernel_ir(64), "k", arch), "gfx942")
    assert b.device_libs == [] and b.binary[:4] == b"\x7fELF"


def test_missing_device_libs_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PYKERN_DEVICE_LIBS", str(tmp_path))
    with pytest.raises(CompileError) as ei:
        amdgpu.compile_llvm_ir(SIN_F64, "gfx942")
    msg = str(ei.value)
    assert str(tmp_path) in msg and "apt-get install rocm-device-libs" in msg


def test_device_libs_search_lists_every_place(monkeypatch, tmp_path):
    env = {"ROCM_PATH": str(tmp_path / "rocm"), "PATH": ""}
    places = [p for _, p in devicelibs.search_dirs(env)]
    assert places[0] == str(tmp_path / "rocm" / "amdgcn" / "bitcode")
    assert "/opt/rocm/amdgcn/bitcode" in places
    assert any("/lib/llvm/lib/clang/" in p for p in places)
    assert any(re.fullmatch(r"/usr/lib/[^/]+/amdgcn/bitcode", p) for p in places)
    # with nothing complete anywhere, the error names all of them
    monkeypatch.setattr(devicelibs, "_complete", lambda p: False)
    with pytest.raises(CompileError) as ei:
        devicelibs.find_dir(env)
    msg = str(ei.value)
    assert "/opt/rocm/amdgcn/bitcode" in msg and str(tmp_path / "rocm") in msg
    assert "apt-get install rocm-device-libs" in msg
    monkeypatch.undo()
    assert devicelibs.find_dir({"PATH": ""}).endswith("amdgcn/bitcode")
    assert len(devicelibs.content_hash()) == 64


def test_missing_lld_error_lists_places(tmp_path):
    env = {"PATH": str(tmp_path), "ROCM_PATH": str(tmp_path / "rocm")}
    with pytest.raises(CompileError) as ei:
        toolchain.find_lld(env)
    msg = str(ei.value)
    assert "ROCM_PATH" in msg and "/opt/rocm/llvm/bin/ld.lld" in msg and "ld.lld-NN on PATH" in msg
    assert "ziglang" in msg and "apt-get install lld-22" in msg
    with pytest.raises(CompileError, match="PYKERN_LLD"):
        toolchain.find_lld({"PYKERN_LLD": str(tmp_path / "nope"), "PATH": "/usr/bin"})


def test_lld_found_versioned_and_explicit(tmp_path):
    cmd = toolchain.find_lld({"PATH": "/usr/bin"})
    assert os.path.basename(cmd[0]).startswith("ld.lld")
    fake = tmp_path / "ld.lld-99"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    assert toolchain.find_lld({"PATH": f"{tmp_path}:/usr/bin"}) == [str(fake)]  # newest first
    assert toolchain.find_lld({"PYKERN_LLD": "/usr/bin/ld.lld-22", "PATH": ""}) == ["/usr/bin/ld.lld-22"]


def test_lld_failure_surfaces_stderr():
    with pytest.raises(CompileError) as ei:
        toolchain.link_shared(b"this is not an object file")
    assert "ld.lld failed" in str(ei.value) and "kernel.o" in str(ei.value)


@pytest.mark.parametrize("cov,abiversion,mdver", [(4, 2, [1, 1]), (5, 3, [1, 2]), (6, 4, [1, 2])])
def test_code_object_versions(cov, abiversion, mdver, tmp_path):
    arch = archs.parse_target_id("gfx942")
    b = amdgpu.compile_llvm_ir(prep(kernel_ir(64), "k", arch), "gfx942", code_object_version=cov)
    text = _tool(READELF, "-h", data=b.binary, tmp_path=tmp_path)
    assert re.search(rf"ABI Version:\s+{abiversion}", text)
    assert b.metadata["amdhsa.version"] == mdver


def test_target_id_features_reach_elf_flags(tmp_path):
    arch = archs.parse_target_id("gfx90a:xnack-:sramecc+")
    assert arch.target_id == "gfx90a:sramecc+:xnack-"
    b = amdgpu.compile_llvm_ir(prep(kernel_ir(64), "k", arch), "gfx90a:xnack-:sramecc+")
    assert b.metadata["amdhsa.target"] == "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"
    flags = re.search(r"Flags:\s+(.*)", _tool(READELF, "-h", data=b.binary, tmp_path=tmp_path)).group(1)
    assert "gfx90a" in flags and "xnack-" in flags and "sramecc+" in flags


def test_bundle_layout_and_roundtrip(built):
    cos = [("gfx90a", built["gfx90a"].binary), ("gfx942:xnack-", built["gfx942"].binary)]
    blob = codeobject.bundle(cos)
    assert blob[:24] == b"__CLANG_OFFLOAD_BUNDLE__"
    # parse the header independently of codeobject.unbundle
    (n,) = struct.unpack_from("<Q", blob, 24)
    pos, entries = 32, []
    for _ in range(n):
        off, size, idlen = struct.unpack_from("<QQQ", blob, pos)
        pos += 24
        entries.append((blob[pos:pos + idlen].decode(), off, size))
        pos += idlen
    assert [e[0] for e in entries] == ["host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx90a",
                                       "hipv4-amdgcn-amd-amdhsa--gfx942:xnack-"]
    assert entries[0][2] == 0
    for (eid, off, size), (_, co) in zip(entries[1:], cos):
        assert off % 4096 == 0 and blob[off:off + size] == co
    assert codeobject.unbundle(blob)["hipv4-amdgcn-amd-amdhsa--gfx942:xnack-"] == built["gfx942"].binary
    with pytest.raises(CompileError):
        codeobject.bundle([("gfx942", b"x"), ("gfx942", b"y")])


def test_read_metadata_rejects_non_elf():
    with pytest.raises(CompileError):
        codeobject.read_metadata(b"not an elf at all")
