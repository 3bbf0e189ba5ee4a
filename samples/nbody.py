"""All-pairs n-body accelerations with shared-memory tiles of bodies."""

import numpy as np

import pykern as cuda
from _util import report, timed

TILE = 64
EPS2 = 1e-3


@cuda.jit
def accelerations(pos, mass, acc):
    sx = cuda.shared.array(TILE, cuda.float32)
    sy = cuda.shared.array(TILE, cuda.float32)
    sz = cuda.shared.array(TILE, cuda.float32)
    sm = cuda.shared.array(TILE, cuda.float32)
    i = cuda.grid(1)
    n = pos.shape[0]
    tid = cuda.threadIdx.x
    px = pos[i, 0] if i < n else 0.0
    py = pos[i, 1] if i < n else 0.0
    pz = pos[i, 2] if i < n else 0.0
    ax = np.float32(0)
    ay = np.float32(0)
    az = np.float32(0)
    for start in range(0, n, TILE):
        j = start + tid
        sx[tid] = pos[j, 0] if j < n else 0.0
        sy[tid] = pos[j, 1] if j < n else 0.0
        sz[tid] = pos[j, 2] if j < n else 0.0
        sm[tid] = mass[j] if j < n else 0.0
        cuda.syncthreads()
        for k in range(TILE):
            dx = sx[k] - px
            dy = sy[k] - py
            dz = sz[k] - pz
            r2 = dx * dx + dy * dy + dz * dz + np.float32(EPS2)
            inv = np.float32(1.0) / (r2 * cuda.float32(r2 ** 0.5))
            ax += sm[k] * dx * inv
            ay += sm[k] * dy * inv
            az += sm[k] * dz * inv
        cuda.syncthreads()
    if i < n:
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az


def reference(pos, mass):
    d = pos[None, :, :] - pos[:, None, :]
    r2 = (d ** 2).sum(-1) + EPS2
    return (mass[None, :, None] * d / (r2 ** 1.5)[:, :, None]).sum(1)


def main(n=1024):
    rng = np.random.default_rng(5)
    pos = rng.random((n, 3), dtype=np.float32)
    mass = rng.random(n, dtype=np.float32)
    acc = cuda.device_array((n, 3), np.float32)
    dpos, dmass = cuda.to_device(pos), cuda.to_device(mass)
    t = timed(lambda: accelerations[(n + TILE - 1) // TILE, TILE](dpos, dmass, acc), repeat=1)
    want = reference(pos.astype(np.float64), mass.astype(np.float64))
    got = acc.copy_to_host()
    report("nbody", np.allclose(got, want, rtol=1e-3, atol=1e-2 * np.abs(want).max()), t,
           f"n={n}, {n * n * 20 / t / 1e9:.2f} GFLOP/s")


if __name__ == "__main__":
    main()
