"""The RDNA4 (gfx1200/gfx1201) WMMA f16 -> f16 and int8 -> int32 fragments and the CDNA4 (gfx950)
16x16x32 f16/bf16 MFMA fragments, checked by instruction selection (no GPU here): each compiles
for its arch, and LLVM's own disassembler (llvm-objdump-22) finds the instruction, with the
operand widths and modifiers AMD's encoding has, inside the k loop; the fragments stay in
registers. The layouts' coverage (each D entry once, each A entry at least once) is
test_matrix_cores.py's ``test_every_entry_held_once``; the cpu target's values for these
configurations are tests/lang/test_matrix_fragments.py's."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("ml_dtypes")

import pykern as cuda  # noqa: E402
from pykern.codegen.amdgpu import matrix_cores as amx  # noqa: E402
from pykern.core import matrix_shapes  # noqa: E402
from pykern.core.errors import CompileError  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from test_matrix_cores import loop_kernel  # noqa: E402
from types_helpers import needs_llvm_tools  # noqa: E402

#: (arch, configuration) -> the disassembled instruction: mnemonic, D, A, B, C register ranges, modifiers
CASES = {
    ("gfx1200", (16, 16, 16, "float16", "float16")): r"v_wmma_f16_16x16x16_f16 v\[\d+:\d+\], v\[\d+:\d+\], "
                                                     r"v\[\d+:\d+\], v\[\d+:\d+\]$",
    ("gfx1201", (16, 16, 16, "float16", "float16")): r"v_wmma_f16_16x16x16_f16 v\[\d+:\d+\], v\[\d+:\d+\], "
                                                     r"v\[\d+:\d+\], v\[\d+:\d+\]$",
    # both operands signed: AMD's encoding of it is neg_lo:[1,1,0]
    ("gfx1200", (16, 16, 16, "int8", "int32")): r"v_wmma_i32_16x16x16_iu8 v\[\d+:\d+\], v\[\d+:\d+\], "
                                                r"v\[\d+:\d+\], v\[\d+:\d+\] neg_lo:\[1,1,0\]$",
    ("gfx1201", (16, 16, 16, "int8", "int32")): r"v_wmma_i32_16x16x16_iu8 v\[\d+:\d+\], v\[\d+:\d+\], "
                                                r"v\[\d+:\d+\], v\[\d+:\d+\] neg_lo:\[1,1,0\]$",
    ("gfx950", (16, 16, 32, "float16", "float32")): r"v_mfma_f32_16x16x32_f16 v\[\d+:\d+\], v\[\d+:\d+\], "
                                                    r"v\[\d+:\d+\], v\[\d+:\d+\]$",
    ("gfx950", (16, 16, 32, "bfloat16", "float32")): r"v_mfma_f32_16x16x32_bf16 v\[\d+:\d+\], v\[\d+:\d+\], "
                                                     r"v\[\d+:\d+\], v\[\d+:\d+\]$",
}

#: registers per operand (A, B, D): 8 halves = 4 VGPRs; 8 bytes = 2; 8 x i32 = 8; 4 x f32 = 4
WIDTHS = {
    (16, 16, 16, "float16", "float16"): (4, 4, 4),
    (16, 16, 16, "int8", "int32"): (2, 2, 8),
    (16, 16, 32, "float16", "float32"): (4, 4, 4),
    (16, 16, 32, "bfloat16", "float32"): (4, 4, 4),
}


def _disassembly(ck, tmp_path, arch):
    path = os.path.join(str(tmp_path), f"{arch}.hsaco")
    with open(path, "wb") as f:
        f.write(ck.code_object)
    out = subprocess.run(["llvm-objdump-22", "-d", "--symbolize-operands", path], capture_output=True, text=True,
                         check=True).stdout
    return [ln.split("//")[0].strip() for ln in out.splitlines()]


def _loop_bodies(lines):
    """Instructions between each backward branch's label and the branch."""
    labels = {m.group(1): i for i, ln in enumerate(lines) if (m := re.match(r"^[0-9a-f]+ <(L\d+)>:$", ln))}
    out = []
    for i, ln in enumerate(lines):
        m = re.match(r"^s_(?:cbranch_\w+|branch)\s+(L\d+)\b", ln)
        if m and labels.get(m.group(1), i) < i:
            out += lines[labels[m.group(1)] + 1:i]
    return out


def _width(reg):
    lo, hi = map(int, re.match(r"v\[(\d+):(\d+)\]", reg).groups())
    return hi - lo + 1


@needs_llvm_tools
@pytest.mark.parametrize("arch, cfg", list(CASES), ids=lambda x: x if isinstance(x, str) else "x".join(map(str, x)))
def test_instruction_in_the_k_loop(arch, cfg, tmp_path):
    kern, sig = loop_kernel(cfg)
    ck = cuda.compile(kern, sig, arch=arch)
    hits = [ln for ln in _loop_bodies(_disassembly(ck, tmp_path, arch)) if re.search(CASES[arch, cfg], ln)]
    assert hits, (arch, cfg)
    regs = re.findall(r"v\[\d+:\d+\]", hits[0])
    d, a, b, c = (_width(r) for r in regs)
    assert (a, b, d) == WIDTHS[cfg] and c == d, hits[0]
    md = ck.metadata if isinstance(ck.metadata, dict) else {}
    assert md.get(".private_segment_fixed_size", 0) == 0  # fragments in registers


@pytest.mark.parametrize("arch, cfg", [("gfx942", (16, 16, 32, "float16", "float32")),
                                       ("gfx90a", (16, 16, 32, "bfloat16", "float32")),
                                       ("gfx1201", (16, 16, 32, "float16", "float32"))])
def test_16x16x32_elsewhere_is_a_compile_error_naming_the_offer(arch, cfg):
    kern, sig = loop_kernel(cfg)
    with pytest.raises(CompileError, match=f"{arch} has no matrix instruction for a 16x16x32") as ei:
        cuda.compile(kern, sig, arch=arch)
    assert "test_matrix_cores.py:" in str(ei.value)  # at the line
    assert "offers" in str(ei.value) and "16x16x32" not in str(ei.value).split("offers", 1)[1]


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1200", "gfx1201", "gfx1030"])
def test_amdgpu_instructions_are_the_shared_table(arch):
    """The amdgpu target has an instruction for exactly the configurations the frontend's table
    (``matrix_shapes.configs``) gives the arch."""
    assert set(amx._configs(arch)) == set(matrix_shapes.configs(arch))


def test_rdna4_int8_and_cdna4_layouts():
    # AMD's calculator has no RDNA4/CDNA4 tables: these are the layouts the module states
    # (RDNA4 int8: k = 8 * (lane // 16) + e; CDNA4 16x16x32: k = 8 * (lane // 16) + e, rows = lane % 16)
    def place(layout, lane, e):
        r, g = lane % 16, lane // 16
        return tuple(cr * r + cg * g + c0 for cr, cg, c0 in layout(e))
    assert [place(amx._a_rdna4_i8, 17, e) for e in range(8)] == [(1, 8 + e) for e in range(8)]
    assert [place(amx._a_cdna4, 63, e) for e in range(8)] == [(15, 24 + e) for e in range(8)]
