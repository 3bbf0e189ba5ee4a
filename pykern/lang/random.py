"""Per-thread random numbers: numba.cuda.random's xoroshiro128+ API, name for name, number for number.

``from numba.cuda.random import ...`` ports as ``from pykern.lang.random import ...``. As in numba, the
states are a 1-d array of ``xoroshiro128p_dtype`` records (fields ``s0``, ``s1``), one per thread;
state ``i`` is the seeded state advanced by ``subsequence_start + i`` jumps of 2**64 steps, so for
a given seed every state, and every number drawn from it, equals numba's.

numba makes the n states with n sequential jumps on the host. A jump is a linear map over GF(2)
of the 128 state bits, so here state ``i + m`` is ``J**m`` applied to state ``i``: the states double
per step, each step one 128x128 bit matrix (``J**m``, kept between calls) applied to the states so
far with numpy (16 byte-indexed table look-ups per state).

Example::

    from pykern.lang.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

    @pykern.jit
    def fill(states, out):
        i = pykern.grid(1)
        if i < out.size:
            out[i] = xoroshiro128p_uniform_float32(states, i)

    states = create_xoroshiro128p_states(1024, seed=42)
"""

from __future__ import annotations

import math
import threading

import numpy as np

from pykern.dispatch.dispatcher import jit

xoroshiro128p_dtype = np.dtype([("s0", np.uint64), ("s1", np.uint64)], align=True)

_M64 = (1 << 64) - 1
_JUMP = (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922)


# --------------------------------------------------------------------------- host: seeding
def _splitmix64(seed: int) -> int:
    z = (seed + 0x9E3779B97F4A7C15) & _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _next_state(s0: int, s1: int) -> tuple:
    s1 ^= s0
    return (((s0 << 55) | (s0 >> 9)) & _M64) ^ s1 ^ ((s1 << 14) & _M64), ((s1 << 36) | (s1 >> 28)) & _M64


def _jump_state(s0: int, s1: int) -> tuple:
    """numba's ``xoroshiro128p_jump``: the state 2**64 steps on."""
    t0 = t1 = 0
    for word in _JUMP:
        for b in range(64):
            if (word >> b) & 1:
                t0 ^= s0
                t1 ^= s1
            s0, s1 = _next_state(s0, s1)
    return t0, t1


# A 128x128 bit matrix is the list of its 128 columns, each a 128-bit int (bits 0-63: s0, 64-127: s1).
def _apply(cols: list, v: int) -> int:
    out, k = 0, 0
    while v:
        if v & 1:
            out ^= cols[k]
        v >>= 1
        k += 1
    return out


def _jump_matrix() -> list:
    cols = []
    for k in range(128):
        e = 1 << k
        t0, t1 = _jump_state(e & _M64, e >> 64)
        cols.append(t0 | (t1 << 64))
    return cols


_powers: list = []  # _powers[k] = (columns of J**(2**k), its byte tables); made as needed, kept
_powers_lock = threading.Lock()


def _tables(cols: list) -> tuple:
    """(lo, hi): uint64 arrays of shape (16, 256); byte j of a state selects row j's entry, and the
    image is the XOR of the 16 entries (lo: its s0, hi: its s1)."""
    t = [[0] * 256 for _ in range(16)]
    for j in range(16):
        row = t[j]
        for b in range(1, 256):
            low = (b & -b).bit_length() - 1
            row[b] = row[b & (b - 1)] ^ cols[8 * j + low]
    flat = [x for row in t for x in row]
    lo = np.array([x & _M64 for x in flat], np.uint64).reshape(16, 256)
    hi = np.array([x >> 64 for x in flat], np.uint64).reshape(16, 256)
    return lo, hi


def _power(k: int) -> tuple:
    with _powers_lock:
        while len(_powers) <= k:
            if not _powers:
                cols = _jump_matrix()
            else:
                prev = _powers[-1][0]
                cols = [_apply(prev, c) for c in prev]
            _powers.append((cols, _tables(cols)))
        return _powers[k]


def _apply_tables(tables: tuple, s0: np.ndarray, s1: np.ndarray) -> tuple:
    lo, hi = tables
    out0 = np.zeros_like(s0)
    out1 = np.zeros_like(s1)
    for j in range(16):
        word = s0 if j < 8 else s1
        byte = ((word >> np.uint64(8 * (j % 8))) & np.uint64(0xFF)).astype(np.intp)
        out0 ^= lo[j][byte]
        out1 ^= hi[j][byte]
    return out0, out1


def _seeded_states(n: int, seed: int, subsequence_start: int) -> np.ndarray:
    """numba's ``init_xoroshiro128p_states_cpu`` result for ``n`` states, as a record array."""
    out = np.empty(n, xoroshiro128p_dtype)
    if n == 0:
        return out
    z = _splitmix64(int(seed) & _M64)
    v = z | (z << 64)
    sub, k = int(subsequence_start) & _M64, 0
    while sub:  # J**subsequence_start by its binary digits
        if sub & 1:
            v = _apply(_power(k)[0], v)
        sub >>= 1
        k += 1
    s0 = np.empty(n, np.uint64)
    s1 = np.empty(n, np.uint64)
    s0[0], s1[0] = v & _M64, v >> 64
    have, k = 1, 0
    while have < n:  # states [have, 2*have) are J**have applied to [0, have)
        count = min(have, n - have)
        s0[have:have + count], s1[have:have + count] = _apply_tables(_power(k)[1], s0[:count], s1[:count])
        have += count
        k += 1
    out["s0"], out["s1"] = s0, s1
    return out


def init_xoroshiro128p_states(states, seed, subsequence_start=0, stream=0):
    """Seed every state of ``states`` (a 1-d ``xoroshiro128p_dtype`` device or host array), as numba."""
    host = _seeded_states(states.shape[0], seed, subsequence_start)
    if isinstance(states, np.ndarray):
        states[...] = host
    else:
        states.copy_to_device(host, stream=stream)


def create_xoroshiro128p_states(n, seed, subsequence_start=0, stream=0):
    """A device array of ``n`` seeded generator states (one per thread), numba's."""
    from pykern.runtime.memory.arrays import device_array

    states = device_array(int(n), dtype=xoroshiro128p_dtype, stream=stream)
    init_xoroshiro128p_states(states, seed, subsequence_start, stream)
    return states


# --------------------------------------------------------------------------- device functions
@jit(device=True)
def _rotl(x, k):
    return (x << k) | (x >> (64 - k))


@jit(device=True)
def xoroshiro128p_next(states, index):
    """The next 64-bit output of ``states[index]``'s generator (advances it)."""
    s0 = states[index]["s0"]
    s1 = states[index]["s1"]
    result = s0 + s1
    s1 ^= s0
    states[index]["s0"] = _rotl(s0, 55) ^ s1 ^ (s1 << 14)
    states[index]["s1"] = _rotl(s1, 36)
    return result


@jit(device=True)
def xoroshiro128p_uniform_float64(states, index):
    """A float64 uniform on [0, 1)."""
    return np.float64(xoroshiro128p_next(states, index) >> 11) * (1.0 / 9007199254740992.0)


@jit(device=True)
def xoroshiro128p_uniform_float32(states, index):
    """A float32 uniform: numba's float64 uniform rounded to float32 (so 1.0 can occur, as there)."""
    return np.float32(xoroshiro128p_uniform_float64(states, index))


_TWO_PI = 2.0 * math.pi


@jit(device=True)
def xoroshiro128p_normal_float64(states, index):
    """A float64 standard normal (Box-Muller). As numba's, it draws float32 uniforms."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return math.sqrt(np.float64(-2.0) * math.log(u1)) * math.cos(np.float64(_TWO_PI) * u2)


@jit(device=True)
def xoroshiro128p_normal_float32(states, index):
    """A float32 standard normal (Box-Muller, as numba)."""
    u1 = xoroshiro128p_uniform_float32(states, index)
    u2 = xoroshiro128p_uniform_float32(states, index)
    return np.float32(math.sqrt(np.float32(-2.0) * math.log(u1)) * math.cos(np.float32(_TWO_PI) * u2))


def __getattr__(name):
    # numba's kernel type of a state, for signatures: jit((xoroshiro128p_type[:], float32[:]))
    if name == "xoroshiro128p_type":
        from pykern.frontend.types import from_dtype

        return from_dtype(xoroshiro128p_dtype)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "xoroshiro128p_dtype", "xoroshiro128p_type", "create_xoroshiro128p_states", "init_xoroshiro128p_states", "xoroshiro128p_next",
    "xoroshiro128p_uniform_float32", "xoroshiro128p_uniform_float64", "xoroshiro128p_normal_float32",
    "xoroshiro128p_normal_float64",
]
