"""The AMDGPU arch table, target-id parsing and occupancy arithmetic."""

from __future__ import annotations

import pytest

from pykern.codegen.amdgpu import archs
from pykern.codegen.amdgpu import codeobject
from pykern.core.errors import CompileError


@pytest.mark.parametrize("name,wave,isa,lds", [
    ("gfx90a", 64, 9010, 65536), ("gfx942", 64, 9402, 65536), ("gfx950", 64, 9500, 163840),
    ("gfx1030", 32, 10300, 65536), ("gfx1100", 32, 11000, 65536), ("gfx1101", 32, 11001, 65536),
    ("gfx1200", 32, 12000, 65536), ("gfx1201", 32, 12001, 65536),
])
def test_table(name, wave, isa, lds):
    a = archs.parse_target_id(name)
    assert (a.wave_size, a.isa_version, a.lds_per_workgroup) == (wave, isa, lds)
    assert a.known and a.bundle_id == f"hipv4-amdgcn-amd-amdhsa--{name}"


def test_isa_versions_match_rocm_oclc_files():
    # the Debian rocm-device-libs oclc_isa_version_*.bc files hold the reference values
    llvm = codeobject.llvm()
    import os

    from pykern.codegen.amdgpu import devicelibs

    d = devicelibs.find_dir()
    for proc, fname in [("gfx90a", "90a"), ("gfx1030", "1030"), ("gfx908", "908")]:
        path = os.path.join(d, f"oclc_isa_version_{fname}.bc")
        m = llvm.parse_bitcode(open(path, "rb").read())
        (g,) = list(m.global_variables)
        assert str(g).rstrip().endswith(f"i32 {archs.parse_target_id(proc).isa_version}, align 4")


def test_target_id_features():
    a = archs.parse_target_id("gfx942:xnack+:sramecc-")
    assert a.target_id == "gfx942:sramecc-:xnack+"
    assert a.llvm_features == "-sramecc,+xnack"
    assert archs.parse_target_id("GFX90A").name == "gfx90a"
    with pytest.raises(CompileError, match="does not support target-id feature 'xnack'"):
        archs.parse_target_id("gfx1100:xnack+")
    with pytest.raises(CompileError, match="bad target-id feature"):
        archs.parse_target_id("gfx942:fast")
    with pytest.raises(CompileError, match="given twice"):
        archs.parse_target_id("gfx942:xnack+:xnack-")


def test_unknown_arch_lists_known_ones():
    with pytest.raises(CompileError) as ei:
        archs.parse_target_id("gfx9999")
    msg = str(ei.value)
    for n in ("gfx90a", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1200", "gfx1201"):
        assert n in msg
    with pytest.raises(CompileError, match="unknown AMD GPU architecture"):
        archs.parse_target_id("sm_90")


def test_any_llvm_processor_is_accepted():
    a = archs.parse_target_id("gfx1151")
    assert not a.known and a.wave_size == 32 and a.isa_version == 11501
    b = archs.parse_target_id("gfx906:xnack-")
    assert b.wave_size == 64 and b.target_id == "gfx906:xnack-"
    assert archs.llvm_knows("gfx1151") and not archs.llvm_knows("gfx1999")


def test_pre_gfx8_rejected_before_llvm_can_abort():
    # gfx700 is known to LLVM but aborts the process on ds_bpermute
    with pytest.raises(CompileError, match="gfx8"):
        archs.parse_target_id("gfx700")
    assert archs.parse_target_id("gfx803").wave_size == 64


def test_generic_targets_need_cov6():
    with pytest.raises(CompileError, match="code_object_version=6"):
        archs.parse_target_id("gfx11-generic", code_object_version=5)
    a = archs.parse_target_id("gfx11-generic", code_object_version=6)
    assert a.generic and a.wave_size == 32


def test_rdna_wave64_option():
    a = archs.parse_target_id("gfx1100", wave64=True)
    assert a.effective_wave_size == 64 and "+wavefrontsize64" in a.llvm_features
    assert a.vgpr_file(64) == 768 and a.vgpr_file(32) == 1536


def test_occupancy_limits():
    g942 = archs.ARCHS["gfx942"]
    # unified 512-entry file, granule 8: 128 VGPRs -> 4 waves, 64 -> 8 (hardware cap)
    assert archs.occupancy(g942, vgprs=128)["waves_per_simd"] == 4
    assert archs.occupancy(g942, vgprs=64)["waves_per_simd"] == 8
    # AGPRs count after the VGPRs (rounded to 4) on gfx90a+
    assert archs.occupancy(g942, vgprs=126, agprs=128)["waves_per_simd"] == 2
    # LDS: 32 KiB per 256-thread block on 64 KiB/CU -> 2 blocks x 4 waves / 4 SIMDs = 2
    r = archs.occupancy(g942, vgprs=8, lds_bytes=32768, block_size=256)
    assert r["waves_per_simd"] == 2 and r["limited_by"] == "lds"
    # gfx9 (non-90a) 256-entry file: 65 VGPRs round to 68 -> 3 waves; SGPR file 800
    g906 = archs.ARCHS["gfx906"]
    assert archs.occupancy(g906, vgprs=65)["waves_per_simd"] == 3
    assert archs.occupancy(g906, vgprs=8, sgprs=102)["waves_per_simd"] == 7
    # RDNA3 1.5x file, granule 24 in wave32: 1536 / 96 = 16
    assert archs.occupancy(archs.ARCHS["gfx1100"], vgprs=96)["waves_per_simd"] == 16
    assert archs.occupancy(archs.ARCHS["gfx1100"], vgprs=256)["waves_per_simd"] == 5  # 264 allocated
    assert archs.occupancy(archs.ARCHS["gfx1030"], vgprs=256)["waves_per_simd"] == 4
