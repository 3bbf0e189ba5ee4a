"""Matrix cores: the GEMM sample (samples/wmma_gemm.py) against the same kernel in HIP C++ with
clang's matrix builtins (``__builtin_amdgcn_mfma_*`` on gfx942, ``__builtin_amdgcn_wmma_*_w32``
on gfx1100) compiled by clang-22 -O3, and the cpu target's GEMM against numpy's float32 matmul.

Per arch and input type: instructions of the k loop (the loop body between the backward branch
and its label, ``llvm-objdump-22 -d --symbolize-operands``), matrix instructions there, VGPRs and
AGPRs (amdhsa metadata read by ``llvm-readelf-22 --notes`` for both) and scratch bytes. The cpu
row is tracked (the matrix-core emulation computes per lane: no target).

Run alone: ``python benchmarks/bench_matrix.py [--quick]``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

from _common import Row, clang, main_for, objdump, scratch_dir

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples"))

_HIP = r"""
#define KERNEL extern "C" __attribute__((global)) __attribute__((visibility("default")))
#define SHARED __attribute__((shared))
typedef _Float16 h4 __attribute__((ext_vector_type(4)));
typedef _Float16 h16 __attribute__((ext_vector_type(16)));
typedef short s4 __attribute__((ext_vector_type(4)));
typedef short s16 __attribute__((ext_vector_type(16)));
typedef float f4 __attribute__((ext_vector_type(4)));
typedef float f8 __attribute__((ext_vector_type(8)));
static __attribute__((device)) inline int lane_id() {
  return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}
static __attribute__((device)) inline void syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
KERNEL void gemm(const ET* A, long M, long K, const ET* B, long K2, long N, float* C, long M2, long N2) {
  SHARED ET sA[32 * 16];
  SHARED ET sB[16 * 32];
  long row0 = (long)__builtin_amdgcn_workgroup_id_x() * 32, col0 = (long)__builtin_amdgcn_workgroup_id_y() * 32;
  unsigned tid = __builtin_amdgcn_workitem_id_x(), nt = __builtin_amdgcn_workgroup_size_x();
  int lane = lane_id(), r = lane % 16, g = lane / 16;
  ACC c00 = {}, c01 = {}, c10 = {}, c11 = {};
  for (long k0 = 0; k0 < K; k0 += 16) {
    for (unsigned t = tid; t < 512; t += nt) {
      sA[t] = A[(row0 + t / 16) * K + k0 + t % 16];
      sB[t] = B[(k0 + t / 32) * N + col0 + t % 32];
    }
    syncthreads();
    VEC a0, a1, b0, b1;
    for (int e = 0; e < NE; e++) {
      a0[e] = sA[r * 16 + AK];
      a1[e] = sA[(16 + r) * 16 + AK];
      b0[e] = sB[(AK) * 32 + r];
      b1[e] = sB[(AK) * 32 + 16 + r];
    }
    c00 = MMA(a0, b0, c00);
    c01 = MMA(a0, b1, c01);
    c10 = MMA(a1, b0, c10);
    c11 = MMA(a1, b1, c11);
    syncthreads();
  }
  for (int e = 0; e < NC; e++) {
    long i = row0 + CROW, j = col0 + r;
    C[i * N + j] = c00[e];
    C[i * N + j + 16] = c01[e];
    C[(i + 16) * N + j] = c10[e];
    C[(i + 16) * N + j + 16] = c11[e];
  }
}
"""


def hip_source(arch: str, kind: str) -> str:
    """The HIP twin of the sample for ``arch`` (gfx942: MFMA, gfx1100: WMMA) and ``kind`` (bf16/f16)."""
    bf = kind == "bf16"
    if arch == "gfx942":
        d = {"ET": "unsigned short" if bf else "_Float16", "VEC": "s4" if bf else "h4", "ACC": "f4", "NE": "4",
             "NC": "4", "AK": "4 * g + e", "CROW": "4 * g + e",
             "MMA(a, b, c)": ("__builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, c, 0, 0, 0)" if bf
                              else "__builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, 0, 0, 0)")}
    else:
        d = {"ET": "unsigned short" if bf else "_Float16", "VEC": "s16" if bf else "h16", "ACC": "f8", "NE": "16",
             "NC": "8", "AK": "e", "CROW": "2 * e + g",
             "MMA(a, b, c)": ("__builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(a, b, c)" if bf
                              else "__builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a, b, c)")}
    defs = "".join(f"#define {k} {v}\n" for k, v in d.items())
    return defs + _HIP


def loop_body(path: str) -> list:
    """Mnemonics of the largest loop (backward branch to an earlier label) in ``path``'s .text."""
    out = subprocess.run([objdump(), "-d", "--symbolize-operands", "--section=.text", path], capture_output=True,
                         text=True, timeout=60).stdout
    lines = [ln.strip() for ln in out.splitlines()]
    labels = {m.group(1): i for i, ln in enumerate(lines) if (m := re.match(r"^[0-9a-f]+ <(L\d+)>:$", ln))}
    best: list = []
    for i, ln in enumerate(lines):
        m = re.match(r"^(s_cbranch_\w+|s_branch)\s+(L\d+)\b", ln)
        if m and labels.get(m.group(2), i) < i:
            body = [x.split()[0] for x in lines[labels[m.group(2)] + 1:i + 1] if "//" in x and not x.startswith("//")]
            best = max(best, body, key=len)
    return best


def _facts(path: str) -> dict:
    from hip_kernels import code_object_metadata

    md = code_object_metadata(path)
    body = loop_body(path)
    return {"loop": len(body), "matrix": sum(1 for x in body if x.startswith(("v_mfma", "v_wmma"))),
            "vgpr": md.get(".vgpr_count"), "agpr": md.get(".agpr_count", 0),
            "scratch": md.get(".private_segment_fixed_size", 0)}


def run(quick: bool = False) -> list:
    import numpy as np
    import pykern
    import wmma_gemm
    from hip_kernels import compile_hip, write_bytes

    rows = []
    tmp = scratch_dir("pykern-bench-matrix-")
    for arch in ("gfx942", "gfx1100"):
        for kind in ("bf16", "f16"):
            fn, sig = wmma_gemm.SIGNATURES[kind]
            ck = pykern.compile(fn, sig, arch=arch)
            p = _facts(write_bytes(os.path.join(tmp, f"pykern_{arch}_{kind}.hsaco"), ck.code_object))
            case = f"GEMM k loop, {kind} -> f32, {arch}"
            detail = (f"pykern: {p['matrix']} matrix insns in a {p['loop']}-insn loop, VGPR {p['vgpr']}, "
                      f"AGPR {p['agpr']}, scratch {p['scratch']} B")
            if objdump() is None or clang() is None:
                rows.append(Row("10 matrix cores (amdgpu)", case, p["loop"], None, "insns",
                                note=detail + "; clang-22 or llvm-objdump-22 not installed"))
                continue
            c_path = os.path.join(tmp, f"clang_{arch}_{kind}.hsaco")
            compile_hip(hip_source(arch, kind), arch, c_path, no_gpu_includes=True)
            c = _facts(c_path)
            detail += (f"; clang-22: {c['matrix']} in {c['loop']}, VGPR {c['vgpr']}, AGPR {c['agpr']}, "
                       f"scratch {c['scratch']} B")
            rows.append(Row("10 matrix cores (amdgpu)", case, p["loop"], c["loop"], "insns",
                            baseline_name="HIP C++ + builtins, clang-22 -O3", target="<= 1.1x", limit=1.1,
                            note=detail))
    n = 128 if quick else 256
    A, B = wmma_gemm.random_inputs("bf16", n, n, n)
    C = np.zeros((n, n), np.float32)
    kern = wmma_gemm.gemm_bf16
    kern[(n // 32, n // 32), 64](A, B, C)
    t0 = time.perf_counter()
    kern[(n // 32, n // 32), 64](A, B, C)
    t_p = time.perf_counter() - t0
    a32, b32 = A.astype(np.float32), B.astype(np.float32)
    t0 = time.perf_counter()
    a32 @ b32
    t_n = time.perf_counter() - t0
    flops = 2 * n**3
    rows.append(Row("10 matrix cores (cpu)", f"GEMM {n}^3 bf16 -> f32 (wmma emulation)", flops / t_p / 1e9,
                    flops / t_n / 1e9, "GFLOP/s", baseline_name="numpy float32 A@B", target="tracked",
                    higher_is_better=True,
                    note=f"pykern {t_p * 1e3:.1f} ms, numpy float32 matmul {t_n * 1e3:.2f} ms"))
    return rows


if __name__ == "__main__":
    main_for(run)
