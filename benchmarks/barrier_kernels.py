"""Barrier kernels for ``bench_barriers.py``: a one-element-per-thread shared-memory tree
reduction and a barrier microbenchmark (the tiled matmul is ``samples/matmul.py``'s)."""

import pykern as cuda

RED_TPB = 256


@cuda.jit
def tree_reduce(x, out):
    sh = cuda.shared.array(RED_TPB, cuda.float32)
    t = cuda.threadIdx.x
    sh[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            sh[t] += sh[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sh[0]


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
