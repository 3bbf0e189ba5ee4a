"""saxpy: out = a*x + y, the hello-world of GPU kernels (runs on an AMD GPU if present, else the cpu target)."""

import numpy as np

import pykern as cuda
from _util import report, timed


@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def main(n=1 << 22):
    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = np.empty_like(x)
    d_x, d_y, d_out = cuda.to_device(x), cuda.to_device(y), cuda.device_array_like(out)
    tpb = 256
    run = lambda: saxpy[(n + tpb - 1) // tpb, tpb](np.float32(2.5), d_x, d_y, d_out)
    t = timed(run)
    got = d_out.copy_to_host()
    report("saxpy", np.allclose(got, np.float32(2.5) * x + y, rtol=1e-6), t, f"n={n}")


if __name__ == "__main__":
    main()
