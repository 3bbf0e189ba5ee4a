"""pykern.wmma on AMD GPUs, checked by instruction selection (no GPU here): each configuration an
arch offers compiles to its v_mfma_*/v_wmma_* in a loop with the fragments in registers (no
scratch); configurations it lacks are CompileErrors at the line, naming what it offers; the
register layouts agree with AMD's matrix instruction calculator (entries transcribed below);
the GEMM sample's inner loop holds the matrix instructions on gfx942 and gfx1100."""

from __future__ import annotations

import os
import re
import sys

import pytest

pytest.importorskip("ml_dtypes")

import pykern as cuda  # noqa: E402
from pykern import wmma  # noqa: E402
from pykern.codegen.amdgpu import matrix_cores as amx  # noqa: E402
from pykern.core import matrix_shapes  # noqa: E402
from pykern.core.errors import CompileError  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))), "samples"))

#: (arch, configuration) -> the instruction's mnemonic
EXPECTED = {
    **{(a, (16, 16, 16, "float16", "float32")): m for a, m in
       (("gfx90a", "v_mfma_f32_16x16x16f16"), ("gfx942", "v_mfma_f32_16x16x16_f16"),
        ("gfx950", "v_mfma_f32_16x16x16_f16"), ("gfx1100", "v_wmma_f32_16x16x16_f16"),
        ("gfx1201", "v_wmma_f32_16x16x16_f16"))},
    **{(a, (16, 16, 16, "bfloat16", "float32")): m for a, m in
       (("gfx90a", "v_mfma_f32_16x16x16bf16_1k"), ("gfx942", "v_mfma_f32_16x16x16_bf16"),
        ("gfx950", "v_mfma_f32_16x16x16_bf16"), ("gfx1100", "v_wmma_f32_16x16x16_bf16"),
        ("gfx1201", "v_wmma_f32_16x16x16_bf16"))},
    **{(a, (32, 32, 8, "float16", "float32")): m for a, m in
       (("gfx90a", "v_mfma_f32_32x32x8f16"), ("gfx942", "v_mfma_f32_32x32x8_f16"),
        ("gfx950", "v_mfma_f32_32x32x8_f16"))},
    **{(a, (32, 32, 8, "bfloat16", "float32")): m for a, m in
       (("gfx90a", "v_mfma_f32_32x32x8bf16_1k"), ("gfx942", "v_mfma_f32_32x32x8_bf16"),
        ("gfx950", "v_mfma_f32_32x32x8_bf16"))},
    **{(a, (16, 16, 4, "float32", "float32")): m for a, m in
       (("gfx90a", "v_mfma_f32_16x16x4f32"), ("gfx942", "v_mfma_f32_16x16x4_f32"),
        ("gfx950", "v_mfma_f32_16x16x4_f32"))},
    **{(a, (16, 16, 4, "float64", "float64")): m for a, m in
       (("gfx90a", "v_mfma_f64_16x16x4f64"), ("gfx942", "v_mfma_f64_16x16x4_f64"),
        ("gfx950", "v_mfma_f64_16x16x4_f64"))},
    **{(a, (16, 16, 16, "int8", "int32")): m for a, m in
       (("gfx90a", "v_mfma_i32_16x16x16i8"), ("gfx942", "v_mfma_i32_16x16x32_i8"),
        ("gfx950", "v_mfma_i32_16x16x32_i8"), ("gfx1100", "v_wmma_i32_16x16x16_iu8"))},
    ("gfx1100", (16, 16, 16, "float16", "float16")): "v_wmma_f16_16x16x16_f16",
    ("gfx1201", (16, 16, 16, "float16", "float16")): "v_wmma_f16_16x16x16_f16",
    ("gfx1201", (16, 16, 16, "int8", "int32")): "v_wmma_i32_16x16x16_iu8",
    ("gfx950", (16, 16, 32, "float16", "float32")): "v_mfma_f32_16x16x32_f16",
    ("gfx950", (16, 16, 32, "bfloat16", "float32")): "v_mfma_f32_16x16x32_bf16",
}
ARCHS = ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"]


def loop_kernel(cfg):
    m, n, k, it, ct = cfg
    ti, tc = getattr(cuda, it), getattr(cuda, ct)

    def kern(A, B, C, steps):
        a = wmma.fragment(wmma.matrix_a, m, n, k, ti, wmma.row_major)
        b = wmma.fragment(wmma.matrix_b, m, n, k, ti, wmma.col_major)
        c = wmma.fragment(wmma.accumulator, m, n, k, tc)
        wmma.fill_fragment(c, 0)
        for t in range(steps):
            wmma.load_matrix_sync(a, A, t * k, steps * k)
            wmma.load_matrix_sync(b, B, t * k, steps * k)
            wmma.mma_sync(c, a, b, c)
        wmma.store_matrix_sync(C, 0, c, n, wmma.mem_row_major)
    return kern, f"void({it}[:, ::1], {it}[:, ::1], {ct}[:, ::1], int64)"


def instructions_in_loops(asm: str) -> list:
    """Mnemonics between each backward branch's label and the branch (the loop bodies)."""
    lines = [ln.strip() for ln in asm.splitlines()]
    labels = {ln[:-1]: i for i, ln in enumerate(lines) if re.match(r"^\.LBB\w+:$", ln)}
    out = []
    for i, ln in enumerate(lines):
        m = re.match(r"^s_(?:cbranch_\w+|branch)\s+(\.LBB\w+)", ln)
        if m and labels.get(m.group(1), i) < i:
            out += [x.split()[0] for x in lines[labels[m.group(1)]:i] if x and not x.startswith((".", ";"))]
    return out


def no_scratch(ck):
    md = ck.metadata if isinstance(ck.metadata, dict) else {}
    assert md.get(".private_segment_fixed_size", 0) == 0
    assert not re.search(r"\bscratch_(load|store)|buffer_(load|store)\w*\s.*off(set)?.*s\[0:3\]", ck.asm)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("cfg", sorted(matrix_shapes.ALL), ids=lambda c: f"{c[0]}x{c[1]}x{c[2]}-{c[3]}-{c[4]}")
def test_each_configuration_per_arch(arch, cfg):
    kern, sig = loop_kernel(cfg)
    want = EXPECTED.get((arch, cfg))
    if want is None:
        with pytest.raises(CompileError, match=f"{arch} has no matrix instruction") as ei:
            cuda.compile(kern, sig, arch=arch)
        assert "offers" in str(ei.value) and "test_matrix_cores.py:" in str(ei.value)
        return
    ck = cuda.compile(kern, sig, arch=arch)
    assert want in instructions_in_loops(ck.asm)
    no_scratch(ck)


def test_archs_without_matrix_cores_and_wrong_wave_size():
    kern, sig = loop_kernel((16, 16, 16, "float16", "float32"))
    with pytest.raises(CompileError, match="gfx1030 has no matrix-core instructions"):
        cuda.compile(kern, sig, arch="gfx1030")
    from pykern.codegen.amdgpu.target import AmdgpuTarget
    from pykern.codegen.target_interface import CompileOptions
    from pykern.frontend import compile_ir
    from pykern.frontend.signature import parse_signature

    mod = compile_ir(kern, parse_signature(sig)[1])
    with pytest.raises(CompileError, match="need 32-lane waves"):
        AmdgpuTarget(arch="gfx1100").compile(mod, CompileOptions(wave_size=64))


# Entries of AMD's amd_matrix_instruction_calculator (lane, element) -> (row, col), as the shared
# notes' tables list them (matrix-cores-tables.md), for each layout pykern uses.
CALCULATOR = {
    "cdna16_a": [((0, 0), (0, 0)), ((17, 2), (1, 6)), ((63, 3), (15, 15)), ((32, 1), (0, 9))],
    "cdna16_c": [((0, 3), (3, 0)), ((48, 3), (15, 0)), ((17, 1), (5, 1))],
    "cdna32_a": [((33, 1), (1, 5)), ((31, 3), (31, 3))],
    "cdna32_c": [((32, 5), (13, 0)), ((0, 15), (27, 0)), ((63, 8), (20, 31)), ((1, 4), (8, 1))],
    "f64_c": [((17, 2), (9, 1)), ((48, 3), (15, 0))],
    "k4_a": [((17, 0), (1, 1)), ((63, 0), (15, 3))],
    "rdna3_a": [((16, 5), (0, 5)), ((15, 15), (15, 15))],
    "rdna3_c": [((16, 3), (7, 0)), ((1, 7), (14, 1))],
    "rdna3_c16": [((16, 4), (5, 0)), ((0, 14), (14, 0))],
    "rdna4_a": [((16, 4), (0, 12)), ((1, 3), (1, 3)), ((31, 7), (15, 15))],
    "rdna4_c": [((16, 2), (10, 0)), ((15, 7), (7, 15))],
}
LAYOUTS = {"cdna16_a": (amx._a_cdna16, 16), "cdna16_c": (amx._c_cdna16, 16), "cdna32_a": (amx._a_cdna32, 32),
           "cdna32_c": (amx._c_cdna32, 32), "f64_c": (amx._c_f64, 16), "k4_a": (amx._a_k4, 16),
           "rdna3_a": (amx._a_rdna3, 16), "rdna3_c": (amx._c_rdna3, 16), "rdna3_c16": (amx._c_rdna3_f16, 16),
           "rdna4_a": (amx._a_rdna4, 16), "rdna4_c": (amx._c_rdna4, 16)}


def place(layout, radix, lane, e):
    rc = layout(e)
    r, g = lane % radix, lane // radix
    return tuple(cr * r + cg * g + c0 for cr, cg, c0 in rc)


@pytest.mark.parametrize("name", list(CALCULATOR))
def test_layouts_match_the_calculator(name):
    layout, radix = LAYOUTS[name]
    for (lane, e), want in CALCULATOR[name]:
        assert place(layout, radix, lane, e) == want, (name, lane, e)


@pytest.mark.parametrize("arch", ARCHS)
def test_every_entry_held_once(arch):
    # each C/D entry in exactly one (lane, element); each A entry in at least one (RDNA3's lanes
    # 16-31 repeat 0-15)
    wave = 64 if matrix_shapes.family(arch) == "cdna" else 32
    for (m, n, k, it, ct), cf in amx._configs(arch).items():
        c = [place(cf.c_layout, cf.radix, L, e) for L in range(wave) for e in range(cf.c_n) if cf.c_layout(e)]
        assert sorted(c) == [(i, j) for i in range(m) for j in range(n)], (arch, m, n, k, it, ct)
        a = {place(cf.a_layout, cf.radix, L, e) for L in range(wave) for e in range(cf.a_n) if cf.a_layout(e)}
        assert a == {(i, kk) for i in range(m) for kk in range(k)}, (arch, m, n, k, it, ct)


@pytest.mark.parametrize("arch, kind, mnemonic", [
    ("gfx942", "bf16", "v_mfma_f32_16x16x16_bf16"), ("gfx942", "f16", "v_mfma_f32_16x16x16_f16"),
    ("gfx1100", "bf16", "v_wmma_f32_16x16x16_bf16"), ("gfx1100", "f16", "v_wmma_f32_16x16x16_f16")])
def test_gemm_sample_inner_loop(arch, kind, mnemonic):
    import wmma_gemm

    kern, sig = wmma_gemm.SIGNATURES[kind]
    ck = cuda.compile(kern, sig, arch=arch)
    assert instructions_in_loops(ck.asm).count(mnemonic) >= 4  # the four mma_sync of a k step
    no_scratch(ck)


def test_fragments_through_device_functions_stay_in_registers():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                    "lang"))
    from test_matrix_fragments import fragments_through_device_functions

    for arch in ("gfx942", "gfx1100"):
        ck = cuda.compile(fragments_through_device_functions, "void(float32[:, ::1])", arch=arch)
        no_scratch(ck)
