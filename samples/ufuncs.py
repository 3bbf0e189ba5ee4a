"""numba.cuda's @vectorize and @guvectorize: ufunc-like objects that run as kernels.

A ufunc broadcasts like numpy (host arrays in give host arrays back, device
arrays stay on the device); a gufunc loops a core function over the leading
dimensions, here a batched dot product with layout ``(n),(n)->()``.
"""

import math

import numpy as np

import pykern as cuda
from _util import report, timed


@cuda.vectorize(["float32(float32, float32, float32)", "float64(float64, float64, float64)"])
def discriminant(a, b, c):
    return math.sqrt(b ** 2 - 4 * a * c)


@cuda.guvectorize(["void(float64[:], float64[:], float64[:])"], "(n),(n)->()")
def dot(a, b, res):
    acc = 0.0
    for i in range(a.shape[0]):
        acc += a[i] * b[i]
    res[0] = acc


def main(n=100_000):
    rng = np.random.default_rng(7)
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32) + 10
    c = rng.random(n, dtype=np.float32)
    d = discriminant(a, b, c)
    ok = d.dtype == np.float32 and np.allclose(d, np.sqrt(b ** 2 - 4 * a * c), rtol=1e-5)
    # broadcasting: one row of coefficients against a column
    grid = discriminant(a[:8, None].astype(np.float64), 12.0, c[None, :5].astype(np.float64))
    ok &= np.allclose(grid, np.sqrt(144.0 - 4 * a[:8, None] * c[None, :5]))
    x, y = rng.random((1000, 64)), rng.random((1000, 64))
    ok &= np.allclose(dot(x, y), np.einsum("ij,ij->i", x, y))
    dx = cuda.to_device(x)
    dres = dot(dx, dx)  # device in, device out
    ok &= np.allclose(dres.copy_to_host(), (x * x).sum(1))
    t = timed(discriminant, a, b, c)
    report("ufuncs", bool(ok), t, f"n={n}")


if __name__ == "__main__":
    main()
