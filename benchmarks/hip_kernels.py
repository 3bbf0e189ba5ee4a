"""HIP C++ twins of benchmarks/kernels.py and how clang-22 compiles them.

The kernels use clang builtins (``__builtin_amdgcn_*``) and attributes
(``__attribute__((global))``, ``__attribute__((shared))``) rather than
``<hip/hip_runtime.h>``: Debian's HIP headers are ROCm 5.2's and do not compile
with clang 22 (``__AMDGCN_WAVEFRONT_SIZE`` is gone), and with ``-nogpulib`` the
ockl/ocml functions those headers call (``__ockl_get_num_groups``...) would be
unresolved. What each builtin expands to is exactly what the HIP headers'
``blockIdx``/``__syncthreads``/``__shfl_down``/``atomicAdd`` expand to on
ROCm 6 for code-object v5: same instructions.

Arguments mirror pykern's ABI for the same kernel (shapes as 64-bit ints, row
strides of 2-D arrays), so the comparison is kernel against kernel.

Example::

    obj, seconds = compile_hip(SAXPY, "gfx942", os.path.join(tmpdir, "saxpy.hsaco"))
"""

from __future__ import annotations

import os
import subprocess
import time

from _common import clang

PRELUDE = r"""
#define KERNEL extern "C" __attribute__((global)) __attribute__((visibility("default")))
#define SHARED __attribute__((shared))
#define DEV static __attribute__((device)) inline
DEV unsigned tid_x() { return __builtin_amdgcn_workitem_id_x(); }
DEV unsigned tid_y() { return __builtin_amdgcn_workitem_id_y(); }
DEV unsigned bid_x() { return __builtin_amdgcn_workgroup_id_x(); }
DEV unsigned bid_y() { return __builtin_amdgcn_workgroup_id_y(); }
DEV unsigned bdim_x() { return __builtin_amdgcn_workgroup_size_x(); }
DEV unsigned bdim_y() { return __builtin_amdgcn_workgroup_size_y(); }
/* COv5 hidden argument block_count_x, as ROCm 6's __ockl_get_num_groups reads it */
DEV unsigned gdim_x() { return ((const unsigned*)__builtin_amdgcn_implicitarg_ptr())[0]; }
DEV void syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
DEV int lane_id() { return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)); }
/* HIP's __shfl_down(double, delta, warpSize) */
DEV double shfl_down(double v, unsigned delta) {
  int w = __builtin_amdgcn_wavefrontsize();
  int lane = lane_id();
  int src = ((lane & (w - 1)) + (int)delta < w) ? lane + (int)delta : lane;
  union { double d; int i[2]; } u; u.d = v;
  u.i[0] = __builtin_amdgcn_ds_bpermute(src << 2, u.i[0]);
  u.i[1] = __builtin_amdgcn_ds_bpermute(src << 2, u.i[1]);
  return u.d;
}
"""

SAXPY = PRELUDE + r"""
KERNEL void saxpy(float a, const float* x, long nx, const float* y, long ny, float* out, long n) {
  long i = (long)bid_x() * bdim_x() + tid_x();
  if (i < n) out[i] = a * x[i] + y[i];
}
"""

MATMUL = PRELUDE + r"""
#define TPB 16
KERNEL void matmul(const float* A, long a0, long a1, long as0, const float* B, long b0, long b1, long bs0,
                   float* C, long c0, long c1, long cs0) {
  SHARED float sA[TPB][TPB];
  SHARED float sB[TPB][TPB];
  long x = (long)bid_x() * bdim_x() + tid_x();
  long y = (long)bid_y() * bdim_y() + tid_y();
  int tx = tid_x(), ty = tid_y();
  long bpg = gdim_x();
  float acc = 0.0f;
  for (long i = 0; i < bpg; ++i) {
    sA[ty][tx] = 0;
    sB[ty][tx] = 0;
    if (y < a0 && tx + i * TPB < a1) sA[ty][tx] = A[y * as0 + tx + i * TPB];
    if (x < b1 && ty + i * TPB < b0) sB[ty][tx] = B[(ty + i * TPB) * bs0 + x];
    syncthreads();
    for (int j = 0; j < TPB; ++j) acc += sA[ty][j] * sB[j][tx];
    syncthreads();
  }
  if (y < c0 && x < c1) C[y * cs0 + x] = acc;
}
"""

#: ``matmul`` with pykern's integer semantics instead of C's ``long``: in the sample,
#: ``tx + i * TPB`` is int32 arithmetic that wraps (``i`` is int32 as ``range(gridDim.x)``,
#: the literal adopts its type), and an index that comes out negative counts from the end.
#: Not a row of its own: the benchmark shows what clang makes of the same semantics.
MATMUL_I32 = PRELUDE + r"""
#define TPB 16
KERNEL void matmul(const float* A, long a0, long a1, long as0, const float* B, long b0, long b1, long bs0,
                   float* C, long c0, long c1, long cs0) {
  SHARED float sA[TPB][TPB];
  SHARED float sB[TPB][TPB];
  long x = (long)bid_x() * bdim_x() + tid_x();
  long y = (long)bid_y() * bdim_y() + tid_y();
  int tx = tid_x(), ty = tid_y();
  int bpg = (int)gdim_x();
  float acc = 0.0f;
  for (int i = 0; i < bpg; ++i) {
    sA[ty][tx] = 0;
    sB[ty][tx] = 0;
    int ta = (int)((unsigned)tx + (unsigned)i * TPB); /* wraps, as pykern's int32 */
    int tb = (int)((unsigned)ty + (unsigned)i * TPB);
    if (y < a0 && ta < a1) sA[ty][tx] = A[y * as0 + (ta < 0 ? ta + a1 : (long)ta)];
    if (x < b1 && tb < b0) sB[ty][tx] = B[(tb < 0 ? tb + b0 : (long)tb) * bs0 + x];
    syncthreads();
    for (int j = 0; j < TPB; ++j) acc += sA[ty][j] * sB[j][tx];
    syncthreads();
  }
  if (y < c0 && x < c1) C[y * cs0 + x] = acc;
}
"""

BLOCK_SUM = PRELUDE + r"""
#define RED_TPB 256
KERNEL void block_sum(const double* x, long n, double* total, long nt) {
  SHARED double partial[RED_TPB / 32 + 1];
  int tid = tid_x();
  long i = (long)bid_x() * bdim_x() + tid;
  long stride = (long)gdim_x() * bdim_x();
  double acc = 0.0;
  for (; i < n; i += stride) acc += x[i];
  int w = __builtin_amdgcn_wavefrontsize();
  for (int offset = w / 2; offset > 0; offset /= 2) acc += shfl_down(acc, offset);
  int lane = tid % w, wave = tid / w;
  if (lane == 0) partial[wave] = acc;
  syncthreads();
  if (tid == 0) {
    double s = 0.0;
    for (int k = 0; k < ((int)bdim_x() + w - 1) / w; ++k) s += partial[k];
    __hip_atomic_fetch_add(total, s, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  }
}
"""

SORT_ROWS = PRELUDE + r"""
#define SORT_N 8
KERNEL void sort_rows(const float* x, long x0, long x1, long xs0, float* out, long o0, long o1, long os0) {
  long i = (long)bid_x() * bdim_x() + tid_x();
  if (i < x0) {
    float a[SORT_N];
    for (long k = 0; k < SORT_N; ++k) a[k] = x[i * xs0 + k];
    for (long k = 1; k < SORT_N; ++k) {
      float v = a[k];
      long j = k - 1;
      while (j >= 0 && a[j] > v) { a[j + 1] = a[j]; --j; }
      a[j + 1] = v;
    }
    for (long k = 0; k < SORT_N; ++k) out[i * os0 + k] = a[k];
  }
}
"""

SOURCES = {"saxpy": SAXPY, "matmul": MATMUL, "block_sum": BLOCK_SUM, "sort_rows": SORT_ROWS,
           "sort_rows16": SORT_ROWS.replace("#define SORT_N 8", "#define SORT_N 16")}


def clang_command(src_path: str, arch: str, out_path: str, no_gpu_includes: bool = False) -> list:
    """The clang-22 command line that compiles ``src_path`` to a linked code
    object (``--no-gpu-bundle-output``: a plain ELF rather than an offload bundle,
    like ``pykern.compile`` returns for one arch)."""
    cmd = [clang(), "-x", "hip", "--cuda-device-only", f"--offload-arch={arch}", "-O3", "-nogpulib",
           "--no-gpu-bundle-output", src_path, "-o", out_path]
    if no_gpu_includes:
        cmd.insert(-3, "-nogpuinc")
    return cmd


def compile_hip(source: str, arch: str, out_path: str, no_gpu_includes: bool = False) -> tuple:
    """Compile ``source`` for ``arch`` into ``out_path``; returns (code object
    bytes, wall seconds of the clang process). Raises RuntimeError with clang's
    stderr on failure, or when clang is not installed."""
    if clang() is None:
        raise RuntimeError("clang-22 not installed (apt-get install -y clang-22)")
    src = out_path + ".hip"
    with open(src, "w") as f:
        f.write(source)
    cmd = clang_command(src, arch, out_path, no_gpu_includes)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    with open(out_path, "rb") as f:
        return f.read(), dt


def code_object_metadata(path: str) -> dict:
    """The first kernel's amdhsa metadata of a code object, via llvm-readelf-22
    --notes (an independent reader, not pykern's)."""
    from _common import find_tool

    readelf = find_tool("llvm-readelf-22", "llvm-readelf")
    out = subprocess.run([readelf, "--notes", path], capture_output=True, text=True, timeout=60).stdout
    meta = {}
    for line in out.splitlines():
        s = line.strip().lstrip("- ")
        for key in (".vgpr_count", ".sgpr_count", ".group_segment_fixed_size", ".private_segment_fixed_size",
                    ".vgpr_spill_count", ".name"):
            if s.startswith(key + ":") and key not in meta:
                v = s.split(":", 1)[1].strip()
                meta[key] = int(v) if v.isdigit() else v
    return meta


def instruction_count(path: str) -> int:
    """Instruction lines in the .text of ``llvm-objdump-22 -d``: lines that carry
    an encoding comment (``// 000000001700: ...``), i.e. real instructions, not
    labels or blank lines; the alignment padding the assembler appends after
    the last ``s_endpgm`` (``s_nop``/``s_code_end`` runs) is not counted."""
    from _common import objdump

    out = subprocess.run([objdump(), "-d", "--section=.text", path], capture_output=True, text=True,
                         timeout=60).stdout
    insns = []
    for line in out.splitlines():
        s = line.strip()
        if not s or s.endswith(":") or s.startswith("Disassembly") or "file format" in s:
            continue
        if "//" in s and not s.startswith("//"):
            insns.append(s.split()[0])
    while insns and insns[-1] in ("s_nop", "s_code_end"):
        insns.pop()
    return len(insns)


def alignment_padding(path: str) -> int:
    """How many of :func:`instruction_count`'s instructions are loop-alignment
    padding: runs of ``s_nop`` that end at a 64-byte boundary which a backward
    branch targets (LLVM aligns small loops so for the instruction prefetcher on
    RDNA). They run once, before the loop, and their number depends only on the
    code size before it."""
    from _common import objdump

    out = subprocess.run([objdump(), "-d", "--section=.text", path], capture_output=True, text=True,
                         timeout=60).stdout
    insns = []  # (mnemonic, address, first operand)
    for line in out.splitlines():
        s = line.strip()
        if "//" in s and not s.startswith("//") and not s.endswith(":"):
            code, comment = s.split("//", 1)
            parts = code.split()
            insns.append((parts[0], int(comment.strip().split(":", 1)[0], 16), parts[1] if len(parts) > 1 else ""))
    loop_heads = set()
    for op, addr, arg in insns:  # SOPP branches: signed 16-bit word offset from the next instruction
        if (op == "s_branch" or op.startswith("s_cbranch_")) and arg.isdigit() and int(arg) >= 0x8000:
            loop_heads.add(addr + 4 + 4 * (int(arg) - 0x10000))
    pad = run = 0
    for op, addr, _ in insns:
        if op == "s_nop":
            run += 1
            continue
        if run and addr % 64 == 0 and addr in loop_heads:
            pad += run
        run = 0
    return pad


def write_bytes(path: str, data: bytes) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path
