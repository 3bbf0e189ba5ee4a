"""Barrier kernels for ``bench_barriers.py``: the one-element-per-thread shared-memory tree
reduction (``samples/tree_sum.py``) and a barrier microbenchmark (the tiled matmul is
``samples/matmul.py``'s)."""

import pykern as cuda
from kernels import RED_TPB, tree_reduce  # noqa: F401  (samples/tree_sum.py, on the path kernels.py sets)


@cuda.jit
def barrier_pingpong(out, rounds):
    # 2 barriers per round; each thread reads its neighbour's value, so a missing barrier shows
    sh = cuda.shared.array(RED_TPB, cuda.float32)
    t = cuda.threadIdx.x
    acc = cuda.float32(t)
    for r in range(rounds):
        sh[t] = acc
        cuda.syncthreads()
        acc = sh[(t + 1) % cuda.blockDim.x] + cuda.float32(1)
        cuda.syncthreads()
    out[cuda.grid(1)] = acc
