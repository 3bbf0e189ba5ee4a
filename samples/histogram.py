"""Histogram with atomics: global atomics per element, and a shared-memory privatised version."""

import numpy as np

import pykern as cuda
from _util import report, timed

NBINS = 64


@cuda.jit
def histogram(data, lo, hi, bins):
    local = cuda.shared.array(NBINS, cuda.int32)
    tid = cuda.threadIdx.x
    for b in range(tid, NBINS, cuda.blockDim.x):
        local[b] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < data.size:
        v = data[i]
        if lo <= v < hi:
            b = int((v - lo) / (hi - lo) * NBINS)
            cuda.atomic.add(local, min(b, NBINS - 1), 1)
        i += stride
    cuda.syncthreads()
    for b in range(tid, NBINS, cuda.blockDim.x):
        cuda.atomic.add(bins, b, local[b])


def main(n=1 << 20):
    data = np.random.default_rng(3).normal(size=n).astype(np.float32)
    bins = cuda.to_device(np.zeros(NBINS, np.int32))

    def run():
        bins.copy_to_device(np.zeros(NBINS, np.int32))
        histogram[32, 256](data, np.float32(-3), np.float32(3), bins)

    t = timed(run)
    got = bins.copy_to_host()
    inside = data[(data >= -3) & (data < 3)]
    idx = np.minimum(((inside - np.float32(-3)) / np.float32(6) * NBINS).astype(np.int64), NBINS - 1)
    want = np.bincount(idx, minlength=NBINS)
    report("histogram", np.array_equal(got, want), t, f"n={n}, {NBINS} bins")


if __name__ == "__main__":
    main()
