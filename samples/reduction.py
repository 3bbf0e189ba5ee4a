"""Sum reduction: a wave-level shuffle tree, then shared memory across the waves of a block, then atomics."""

import numpy as np

import pykern as cuda
from _util import report, timed

TPB = 256


@cuda.jit
def block_sum(x, total):
    partial = cuda.shared.array(TPB // 32 + 1, cuda.float64)  # enough slots for 32- or 64-lane waves
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


def main(n=1 << 20):
    x = np.random.default_rng(2).random(n)
    dx = cuda.to_device(x)
    total = cuda.to_device(np.zeros(1))

    def run():
        total.copy_to_device(np.zeros(1))
        block_sum[64, TPB](dx, total)

    t = timed(run)
    got = total.copy_to_host()[0]
    report("reduction", np.isclose(got, x.sum()), t, f"n={n} sum={got:.6f}")


if __name__ == "__main__":
    main()
