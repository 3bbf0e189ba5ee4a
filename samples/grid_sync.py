"""Cooperative groups: one kernel launch runs every step of an iteration, with
cg.this_grid().sync() between the steps (a cooperative launch: all blocks are
resident, the grid fits the device; max_cooperative_grid_blocks tells how many)."""

import numpy as np

import pykern as cuda
from _util import report, timed

TPB = 64


@cuda.jit
def smooth(x, tmp, steps):
    g = cuda.cg.this_grid()
    i = g.thread_rank
    n = x.size
    for _ in range(steps):
        if i < n:
            left = x[i - 1] if i > 0 else x[i]
            right = x[i + 1] if i < n - 1 else x[i]
            tmp[i] = 0.25 * left + 0.5 * x[i] + 0.25 * right
        g.sync()  # every block has written tmp
        if i < n:
            x[i] = tmp[i]
        g.sync()  # every block has written x


def reference(x, steps):
    for _ in range(steps):
        p = np.concatenate([[x[0]], x, [x[-1]]])
        x = 0.25 * p[:-2] + 0.5 * p[1:-1] + 0.25 * p[2:]
    return x


def main(steps=50):
    blocks = smooth.max_cooperative_grid_blocks(TPB, signature="void(float64[::1], float64[::1], int64)")
    blocks = min(blocks, 16)
    n = blocks * TPB
    x0 = np.random.default_rng(5).random(n)
    x = x0.copy()
    smooth[blocks, TPB](x, np.zeros(n), steps)
    ok = np.allclose(x, reference(x0, steps), rtol=1e-12)
    t = timed(lambda: smooth[blocks, TPB](x0.copy(), np.zeros(n), steps))
    report("grid_sync", bool(ok), t, f"n={n} steps={steps} blocks={blocks}")


if __name__ == "__main__":
    main()
