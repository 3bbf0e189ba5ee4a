"""Inclusive prefix sum: Hillis-Steele scan per block in shared memory, then block offsets added."""

import numpy as np

import pykern as cuda
from _util import report, timed

TPB = 256


@cuda.jit
def block_scan(x, out, block_sums):
    tmp = cuda.shared.array(TPB, cuda.int64)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    tmp[tid] = x[i] if i < x.size else 0
    cuda.syncthreads()
    offset = 1
    while offset < TPB:
        v = tmp[tid - offset] if tid >= offset else 0
        cuda.syncthreads()
        tmp[tid] += v
        cuda.syncthreads()
        offset *= 2
    if i < x.size:
        out[i] = tmp[tid]
    if tid == TPB - 1:
        block_sums[cuda.blockIdx.x] = tmp[tid]


@cuda.jit
def add_offsets(out, scanned_sums):
    i = cuda.grid(1)
    b = cuda.blockIdx.x
    if i < out.size and b > 0:
        out[i] += scanned_sums[b - 1]


def scan(d_x, n):
    blocks = (n + TPB - 1) // TPB
    out = cuda.device_array(n, np.int64)
    sums = cuda.device_array(blocks, np.int64)
    block_scan[blocks, TPB](d_x, out, sums)
    if blocks > 1:
        scanned = scan(sums, blocks)
        add_offsets[blocks, TPB](out, scanned)
    return out


def main(n=1 << 18):
    x = np.random.default_rng(4).integers(-100, 100, n).astype(np.int64)
    dx = cuda.to_device(x)
    t = timed(lambda: scan(dx, n))
    got = scan(dx, n).copy_to_host()
    report("scan", np.array_equal(got, np.cumsum(x)), t, f"n={n}")


if __name__ == "__main__":
    main()
