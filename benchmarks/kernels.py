"""The pykern kernels the benchmarks measure (the same ones as samples/, written
here so that the benchmarks do not depend on the samples' helper module), and
their HIP C++ twins' signatures for ``pykern.compile``.

Example::

    from kernels import saxpy
    saxpy[blocks, 256](np.float32(2), d_x, d_y, d_out)
"""

from __future__ import annotations

import importlib.util
import os
import tempfile

import numpy as np

import pykern as cuda

TPB = 16  # matmul tile edge
RED_TPB = 256  # reduction block size


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@cuda.jit
def matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=cuda.float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=cuda.float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    acc = np.float32(0.0)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and tx + i * TPB < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and ty + i * TPB < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = acc


@cuda.jit
def block_sum(x, total):
    partial = cuda.shared.array(RED_TPB // 32 + 1, cuda.float64)  # enough for 32- or 64-lane waves
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    acc = 0.0
    while i < x.size:
        acc += x[i]
        i += stride
    offset = cuda.warpsize // 2
    while offset > 0:
        acc += cuda.shfl_down_sync(0xFFFFFFFF, acc, offset)
        offset //= 2
    lane = tid % cuda.warpsize
    wave = tid // cuda.warpsize
    if lane == 0:
        partial[wave] = acc
    cuda.syncthreads()
    if tid == 0:
        s = 0.0
        for w in range((cuda.blockDim.x + cuda.warpsize - 1) // cuda.warpsize):
            s += partial[w]
        cuda.atomic.add(total, 0, s)


#: kernel name -> (pykern kernel, signature for pykern.compile)
AOT_KERNELS = {
    "saxpy": (saxpy, "void(float32, float32[::1], float32[::1], float32[::1])"),
    "matmul": (matmul, "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"),
    "block_sum": (block_sum, "void(float64[::1], float64[::1])"),
}


def _arg_names(n):
    return [f"a{i}" for i in range(n)]


def trivial_kernel_source(nargs: int) -> str:
    """Source of a kernel that takes ``nargs`` arrays and does nothing."""
    return f"import pykern as cuda\n\n\n@cuda.jit\ndef noop_{nargs}({', '.join(_arg_names(nargs))}):\n    pass\n"


_TRIVIAL_DIR = None


def trivial_kernel(nargs: int):
    """A do-nothing kernel of ``nargs`` array arguments, loaded from a real file
    (the frontend and the cache read a kernel's source, so ``exec`` of a
    string would not be representative)."""
    global _TRIVIAL_DIR
    if _TRIVIAL_DIR is None:
        _TRIVIAL_DIR = tempfile.mkdtemp(prefix="pykern-bench-")
    path = os.path.join(_TRIVIAL_DIR, f"noop_{nargs}.py")
    with open(path, "w") as f:
        f.write(trivial_kernel_source(nargs))
    spec = importlib.util.spec_from_file_location(f"_bench_noop_{nargs}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, f"noop_{nargs}")
