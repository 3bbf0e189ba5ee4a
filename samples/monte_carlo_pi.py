"""Monte Carlo estimate of pi with a per-thread xorshift64* generator, then block sums in shared
memory (``tree_sum.py``'s kernel)."""

import math

import numpy as np

import pykern as cuda
from _util import report, timed
from tree_sum import make_tree_sum

TPB = 128


@cuda.jit(device=True)
def xorshift(state):
    state ^= state >> 12
    state ^= state << 25
    state ^= state >> 27
    return state, (state * np.uint64(2685821657736338717)) >> np.uint64(11)


@cuda.jit
def count_inside(seed, samples_per_thread, hits):
    i = cuda.grid(1)
    state = np.uint64(seed) + np.uint64(i) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(1)
    inside = 0
    for _ in range(samples_per_thread):
        state, r1 = xorshift(state)
        state, r2 = xorshift(state)
        x = r1 * (1.0 / 9007199254740992.0)
        y = r2 * (1.0 / 9007199254740992.0)
        if x * x + y * y <= 1.0:
            inside += 1
    hits[i] = inside


block_hits = cuda.jit(make_tree_sum(TPB, cuda.int64))


def main(blocks=64, per_thread=256):
    hits = cuda.device_array(blocks * TPB, np.int64)
    counts = cuda.device_array(blocks, np.int64)

    def run():
        count_inside[blocks, TPB](np.uint64(12345), per_thread, hits)
        block_hits[blocks, TPB](hits, counts)
    t = timed(run)
    total = blocks * TPB * per_thread
    pi = 4.0 * counts.copy_to_host().sum() / total
    report("monte_carlo_pi", abs(pi - math.pi) < 0.01, t, f"pi~{pi:.5f} from {total} samples")


if __name__ == "__main__":
    main()
