"""2-D heat equation: explicit 5-point stencil, ping-ponging two grids."""

import numpy as np

import pykern as cuda
from _util import report, timed


@cuda.jit
def step(u, out, alpha):
    i, j = cuda.grid(2)
    n, m = u.shape
    if 0 < i < n - 1 and 0 < j < m - 1:
        out[i, j] = u[i, j] + alpha * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
    elif i < n and j < m:
        out[i, j] = u[i, j]


def reference(u, alpha, steps):
    u = u.copy()
    for _ in range(steps):
        v = u.copy()
        v[1:-1, 1:-1] = u[1:-1, 1:-1] + alpha * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1])
        u = v
    return u


def main(n=256, steps=50, alpha=0.2):
    u0 = np.zeros((n, n), np.float64)
    u0[n // 4: n // 2, n // 4: n // 2] = 100.0
    a, b = cuda.to_device(u0), cuda.device_array_like(u0)
    block = (16, 16)
    grid = ((n + 15) // 16, (n + 15) // 16)

    def run():
        a.copy_to_device(u0)
        x, y = a, b
        for _ in range(steps):
            step[grid, block](x, y, alpha)
            x, y = y, x
        return x

    t = timed(run, repeat=1)
    got = run().copy_to_host()
    report("heat2d", np.allclose(got, reference(u0, alpha, steps)), t, f"{n}x{n}, {steps} steps")


if __name__ == "__main__":
    main()
