"""Block sums in shared memory: one element per thread, then a tree of halving steps with a
barrier after each -- the classic shared-memory reduction. ``make_tree_sum`` makes the kernel
for a tile size and dtype; ``monte_carlo_pi.py``, the tests and the benchmarks use it too."""

import numpy as np

import pykern as cuda
from _util import report, timed

TPB = 256


def make_tree_sum(tpb, dtype):
    """The kernel ``tree_sum(x, out)``: ``out[b]`` is the sum of block ``b``'s elements of ``x``,
    one per thread. Launch it with blocks of a power of two threads, at most ``tpb``, that
    cover ``x`` exactly."""

    def tree_sum(x, out):
        sh = cuda.shared.array(tpb, dtype)
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

    return tree_sum


tree_sum = cuda.jit(make_tree_sum(TPB, cuda.float32))


def main(n=1 << 20):
    x = np.random.default_rng(3).random(n, dtype=np.float32)
    dx = cuda.to_device(x)
    out = cuda.device_array(n // TPB, np.float32)
    t = timed(lambda: tree_sum[n // TPB, TPB](dx, out))
    got = out.copy_to_host()
    report("tree_sum", np.allclose(got, x.reshape(-1, TPB).sum(1, dtype=np.float64), rtol=1e-4), t,
           f"{n} float32 in blocks of {TPB}")


if __name__ == "__main__":
    main()
