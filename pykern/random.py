"""Per-thread random numbers: numba.cuda.random's xoroshiro128+ API, name for name.

``from numba.cuda.random import ...`` ports as ``from pykern.random import ...``.
The generator states are a ``(n, 2)`` uint64 array (numba uses a record dtype
with fields ``s0``/``s1``; pykern kernels take plain numeric arrays), one row
per thread. Seeding differs from numba's jump-ahead: row ``i`` is seeded by
splitmix64 from ``seed`` and ``subsequence_start + i``, which gives independent,
well-mixed streams without a sequential O(n) jump on the host. Within a stream
the numbers are exactly xoroshiro128+'s, as in numba.

Example::

    from pykern.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

    @pykern.jit
    def fill(states, out):
        i = pykern.grid(1)
        if i < out.size:
            out[i] = xoroshiro128p_uniform_float32(states, i)

    states = create_xoroshiro128p_states(1024, seed=42)
"""

from __future__ import annotations

import math

import numpy as np

from .dispatcher import jit

#: What a state row holds (for code that inspects numba's record dtype).
xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _splitmix64(z: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        z = z + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Seed every row of ``states`` (a ``(n, 2)`` uint64 device or host array)."""
    n = states.shape[0]
    idx = np.arange(subsequence_start, subsequence_start + n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        base = _splitmix64(np.full(n, np.uint64(int(seed) & 0xFFFFFFFFFFFFFFFF)) ^ _splitmix64(idx))
        s0 = _splitmix64(base)
        s1 = _splitmix64(s0)
    s0[(s0 | s1) == 0] = np.uint64(1)  # the all-zero state never leaves zero
    host = np.stack([s0, s1], axis=1)
    if isinstance(states, np.ndarray):
        states[...] = host
    else:
        states.copy_to_device(host, stream=stream)


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """A device array of ``n`` seeded generator states (one per thread)."""
    from .runtime.memory import device_array

    states = device_array((int(n), 2), dtype=np.uint64, stream=stream)
    init_xoroshiro128p_states(states, seed, subsequence_start, stream)
    return states


@jit(device=True)
def _rotl(x, k):
    return (x << k) | (x >> (64 - k))


@jit(device=True)
def xoroshiro128p_next(states, index):
    """The next 64-bit output of row ``index``'s generator (advances it)."""
    s0 = states[index, 0]
    s1 = states[index, 1]
    result = s0 + s1
    s1 ^= s0
    states[index, 0] = _rotl(s0, 55) ^ s1 ^ (s1 << 14)
    states[index, 1] = _rotl(s1, 36)
    return result


@jit(device=True)
def xoroshiro128p_uniform_float64(states, index):
    """A float64 uniform on [0, 1)."""
    return np.float64(xoroshiro128p_next(states, index) >> 11) * (1.0 / 9007199254740992.0)


@jit(device=True)
def xoroshiro128p_uniform_float32(states, index):
    """A float32 uniform on [0, 1)."""
    return np.float32(np.float32(xoroshiro128p_next(states, index) >> 40) * np.float32(1.0 / 16777216.0))


_TWO_PI = 2.0 * math.pi


@jit(device=True)
def xoroshiro128p_normal_float64(states, index):
    """A float64 standard normal (Box-Muller, as numba)."""
    u1 = xoroshiro128p_uniform_float64(states, index)
    u2 = xoroshiro128p_uniform_float64(states, index)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(_TWO_PI * u2)


@jit(device=True)
def xoroshiro128p_normal_float32(states, index):
    """A float32 standard normal (Box-Muller, as numba)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return np.float32(math.sqrt(np.float32(-2.0) * math.log(u1)) * math.cos(np.float32(_TWO_PI) * u2))


__all__ = [
    "xoroshiro128p_dtype", "create_xoroshiro128p_states", "init_xoroshiro128p_states", "xoroshiro128p_next",
    "xoroshiro128p_uniform_float32", "xoroshiro128p_uniform_float64", "xoroshiro128p_normal_float32",
    "xoroshiro128p_normal_float64",
]
