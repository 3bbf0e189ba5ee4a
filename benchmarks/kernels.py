"""The pykern kernels the benchmarks measure -- the samples' own kernels, so that
what is benchmarked is what users run -- and their signatures for ``pykern.compile``.

Example::

    from kernels import saxpy
    saxpy[blocks, 256](np.float32(2), d_x, d_y, d_out)
"""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples"))
from matmul import TPB, matmul  # noqa: E402  (samples/matmul.py)
from reduction import block_sum  # noqa: E402  (samples/reduction.py)
from saxpy import saxpy  # noqa: E402  (samples/saxpy.py)
from tree_sum import TPB as RED_TPB, tree_sum as tree_reduce  # noqa: E402  (samples/tree_sum.py)

import pykern as cuda  # noqa: E402

#: row length of :func:`sort_rows` (a compile-time constant: the local array's extent)
SORT_N = 8
#: row length of :func:`sort_rows16`: the largest insertion sort clang-22 unrolls completely
SORT16_N = 16


def insertion_sort_kernel(n: int):
    """A kernel that sorts each row of ``x`` (``n`` wide) by insertion in a local
    array, one row per thread: small constant-trip loops over a local array, which
    clang unrolls into register moves (for ``n`` up to 16)."""

    @cuda.jit
    def sort_rows(x, out):
        i = cuda.grid(1)
        if i < x.shape[0]:
            a = cuda.local.array(n, np.float32)
            for k in range(n):
                a[k] = x[i, k]
            for k in range(1, n):
                v = a[k]
                j = k - 1
                while j >= 0 and a[j] > v:
                    a[j + 1] = a[j]
                    j -= 1
                a[j + 1] = v
            for k in range(n):
                out[i, k] = a[k]

    return sort_rows


sort_rows = insertion_sort_kernel(SORT_N)
sort_rows16 = insertion_sort_kernel(SORT16_N)


@cuda.jit
def matmul_i64(A, B, C):
    """``samples/matmul.py``'s kernel with ``i * np.int64(TPB)``: int64 index arithmetic,
    as numba computes it and as the HIP twin's ``long i`` does (the sample's ``i * TPB``
    is int32 that wraps). Not a row: the note on matmul's rows."""
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=cuda.float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=cuda.float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = cuda.float32(0.0)
    for i in range(cuda.gridDim.x):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and tx + i * np.int64(TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * np.int64(TPB)]
        if x < B.shape[1] and ty + i * np.int64(TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * np.int64(TPB), x]
        cuda.syncthreads()
        for j in range(TPB):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = acc


#: kernel name -> (pykern kernel, signature for pykern.compile)
AOT_KERNELS = {
    "saxpy": (saxpy, "void(float32, float32[::1], float32[::1], float32[::1])"),
    "matmul": (matmul, "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"),
    "block_sum": (block_sum, "void(float64[::1], float64[::1])"),
    "sort_rows": (sort_rows, "void(float32[:, ::1], float32[:, ::1])"),
    "sort_rows16": (sort_rows16, "void(float32[:, ::1], float32[:, ::1])"),
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
        from _common import scratch_dir

        _TRIVIAL_DIR = scratch_dir("pykern-bench-")
    path = os.path.join(_TRIVIAL_DIR, f"noop_{nargs}.py")
    with open(path, "w") as f:
        f.write(trivial_kernel_source(nargs))
    spec = importlib.util.spec_from_file_location(f"_bench_noop_{nargs}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, f"noop_{nargs}")
