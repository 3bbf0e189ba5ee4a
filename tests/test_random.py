"""pykern.random: numba.cuda.random's xoroshiro128+ API, bit-exact streams and sane distributions."""

import numpy as np

import pykern
from pykern.random import (
    create_xoroshiro128p_states,
    init_xoroshiro128p_states,
    xoroshiro128p_next,
    xoroshiro128p_normal_float32,
    xoroshiro128p_normal_float64,
    xoroshiro128p_uniform_float32,
    xoroshiro128p_uniform_float64,
)

M64 = (1 << 64) - 1


def reference_next(s0, s1):
    rotl = lambda x, k: ((x << k) | (x >> (64 - k))) & M64
    result = (s0 + s1) & M64
    s1 ^= s0
    return result, rotl(s0, 55) ^ s1 ^ ((s1 << 14) & M64), rotl(s1, 36)


@pykern.jit
def draw_raw(states, out):
    i = pykern.grid(1)
    if i < states.shape[0]:
        for k in range(out.shape[1]):
            out[i, k] = xoroshiro128p_next(states, i)


def test_stream_is_xoroshiro128plus_bit_for_bit():
    pykern.set_target("cpu")
    states = create_xoroshiro128p_states(37, seed=7)
    start = states.copy_to_host()
    out = np.zeros((37, 5), np.uint64)
    draw_raw[2, 32](states, out)
    for i in range(37):
        s0, s1 = int(start[i, 0]), int(start[i, 1])
        for k in range(5):
            r, s0, s1 = reference_next(s0, s1)
            assert int(out[i, k]) == r
        assert (int(states.copy_to_host()[i, 0]), int(states.copy_to_host()[i, 1])) == (s0, s1)


@pykern.jit
def draw(states, u32, u64, n32, n64):
    i = pykern.grid(1)
    if i < u32.shape[0]:
        for k in range(u32.shape[1]):
            u32[i, k] = xoroshiro128p_uniform_float32(states, i)
            u64[i, k] = xoroshiro128p_uniform_float64(states, i)
            n32[i, k] = xoroshiro128p_normal_float32(states, i)
            n64[i, k] = xoroshiro128p_normal_float64(states, i)


def test_distributions_and_independent_rows():
    pykern.set_target("cpu")
    n, m = 256, 64
    states = create_xoroshiro128p_states(n, seed=1234)
    u32, u64 = np.zeros((n, m), np.float32), np.zeros((n, m))
    n32, n64 = np.zeros((n, m), np.float32), np.zeros((n, m))
    draw[4, 64](states, u32, u64, n32, n64)
    for u in (u32, u64):
        assert u.min() >= 0 and u.max() < 1
        assert abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.005
    for z in (n32, n64):
        assert np.isfinite(z).all()
        assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    assert len({tuple(r) for r in u64[:, :4]}) == n  # rows are different streams


def test_seeding_is_deterministic_and_subsequences_differ():
    a = np.zeros((8, 2), np.uint64)
    b = np.zeros((8, 2), np.uint64)
    init_xoroshiro128p_states(a, 99)
    init_xoroshiro128p_states(b, 99)
    assert np.array_equal(a, b) and (a != 0).any(axis=1).all()
    init_xoroshiro128p_states(b, 99, subsequence_start=8)
    assert not np.array_equal(a, b)
