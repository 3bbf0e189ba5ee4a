"""pykern.lang.random: numba.cuda.random's xoroshiro128+ API -- numba's states for a seed (checked
against numba's sequential algorithm, written out below), bit-exact streams, sane distributions."""

import math
import time

import numpy as np
import pytest

import pykern
import pykern as cuda
from pykern.lang.random import (
    create_xoroshiro128p_states,
    init_xoroshiro128p_states,
    xoroshiro128p_dtype,
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


def reference_states(n, seed, subsequence_start=0):
    """numba.cuda.random.init_xoroshiro128p_states_cpu, step by step."""
    z = (seed + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    z ^= z >> 31

    def jump(s0, s1):
        t0 = t1 = 0
        for word in (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922):
            for b in range(64):
                if word & (1 << b):
                    t0 ^= s0
                    t1 ^= s1
                _, s0, s1 = reference_next(s0, s1)
        return t0, t1

    s = (z, z)
    for _ in range(subsequence_start):
        s = jump(*s)
    out = [s]
    for _ in range(1, n):
        out.append(jump(*out[-1]))
    return out


@pytest.mark.parametrize("n, seed, sub", [(1, 0, 0), (13, 42, 0), (9, 2**64 - 1, 5), (3, 7, 1)])
def test_states_equal_numbas(n, seed, sub):
    host = np.empty(n, xoroshiro128p_dtype)
    init_xoroshiro128p_states(host, seed, subsequence_start=sub)
    assert [(int(a), int(b)) for a, b in host.tolist()] == reference_states(n, seed, sub)


def test_create_gives_numbas_record_states():
    pykern.set_target("cpu")
    d = create_xoroshiro128p_states(5, seed=3)
    assert d.shape == (5,) and d.dtype == xoroshiro128p_dtype
    assert [(int(a), int(b)) for a, b in d.copy_to_host().tolist()] == reference_states(5, 3)
    assert create_xoroshiro128p_states(0, seed=1).shape == (0,)


def test_many_states_are_quick_and_consistent():
    t = time.perf_counter()
    big = np.empty(200_000, xoroshiro128p_dtype)
    init_xoroshiro128p_states(big, 11)
    assert time.perf_counter() - t < 5
    part = np.empty(4, xoroshiro128p_dtype)
    init_xoroshiro128p_states(part, 11, subsequence_start=150_000)  # state i is 150000 + i jumps on
    assert part.tolist() == big[150_000:150_004].tolist()


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
    end = states.copy_to_host()
    for i in range(37):
        s0, s1 = int(start[i]["s0"]), int(start[i]["s1"])
        for k in range(5):
            r, s0, s1 = reference_next(s0, s1)
            assert int(out[i, k]) == r
        assert (int(end[i]["s0"]), int(end[i]["s1"])) == (s0, s1)


@pykern.jit
def draw(states, u32, u64, n32, n64):
    i = pykern.grid(1)
    if i < u32.shape[0]:
        for k in range(u32.shape[1]):
            u32[i, k] = xoroshiro128p_uniform_float32(states, i)
            u64[i, k] = xoroshiro128p_uniform_float64(states, i)
            n32[i, k] = xoroshiro128p_normal_float32(states, i)
            n64[i, k] = xoroshiro128p_normal_float64(states, i)


def test_uniforms_are_numbas_conversions():
    # numba: float64 = (x >> 11) * 2**-53; float32 = float32(that float64)
    pykern.set_target("cpu")
    states = create_xoroshiro128p_states(4, seed=5)
    start = states.copy_to_host()
    u32, u64 = np.zeros((4, 3), np.float32), np.zeros((4, 3))
    draw[1, 4](states, u32, u64, np.zeros((4, 3), np.float32), np.zeros((4, 3)))
    for i in range(4):
        s0, s1 = int(start[i]["s0"]), int(start[i]["s1"])
        for k in range(3):
            r, s0, s1 = reference_next(s0, s1)
            assert u32[i, k] == np.float32((r >> 11) * (1.0 / 2**53))
            r, s0, s1 = reference_next(s0, s1)
            assert u64[i, k] == (r >> 11) * (1.0 / 2**53)
            for _ in range(4):  # the two normals draw two uniforms each
                _, s0, s1 = reference_next(s0, s1)


def test_distributions_and_independent_rows():
    pykern.set_target("cpu")
    n, m = 256, 64
    states = create_xoroshiro128p_states(n, seed=1234)
    u32, u64 = np.zeros((n, m), np.float32), np.zeros((n, m))
    n32, n64 = np.zeros((n, m), np.float32), np.zeros((n, m))
    draw[4, 64](states, u32, u64, n32, n64)
    for u in (u32, u64):
        assert u.min() >= 0 and u.max() <= 1
        assert abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.005
    for z in (n32, n64):
        assert np.isfinite(z).all()
        assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    assert n64.dtype == np.float64 and len({tuple(r) for r in u64[:, :4]}) == n  # rows are different streams


def test_seeding_is_deterministic_and_subsequences_differ():
    a = np.zeros(8, xoroshiro128p_dtype)
    b = np.zeros(8, xoroshiro128p_dtype)
    init_xoroshiro128p_states(a, 99)
    init_xoroshiro128p_states(b, 99)
    assert a.tolist() == b.tolist() and all(s0 or s1 for s0, s1 in a.tolist())
    init_xoroshiro128p_states(b, 99, subsequence_start=8)
    assert a.tolist() != b.tolist()


# ---- numba's documentation examples, their draws checked against the reference above
def _states(n, seed):
    """The states numba creates for ``n`` threads, as lists that ``_uniform32`` advances."""
    return [list(s) for s in reference_states(n, seed)]


def _uniform32(s):
    """numba's xoroshiro128p_uniform_float32 of state ``s``, advancing it."""
    r, s[0], s[1] = reference_next(s[0], s[1])
    return np.float32((r >> 11) * (1.0 / (1 << 53)))


@pytest.mark.usefixtures("cpu_uncached")
def test_random_3d_grid_doc_example():
    # numba-cuda docs, "Random Number Generation": one generator per thread of a 3-d grid
    @cuda.jit
    def random_3d(arr, rng_states):
        startx, starty, startz = cuda.grid(3)
        stridex, stridey, stridez = cuda.gridsize(3)
        tid = startz * stridey * stridex + starty * stridex + startx
        for i in range(startz, arr.shape[0], stridez):
            for j in range(starty, arr.shape[1], stridey):
                for k in range(startx, arr.shape[2], stridex):
                    arr[i, j, k] = xoroshiro128p_uniform_float32(rng_states, tid)

    BLOCKS, THREADS = 2, 2
    S = BLOCKS * THREADS
    rng_states = create_xoroshiro128p_states(S ** 3, seed=1)
    arr = cuda.device_array((6, 5, 7), dtype=np.float32)
    random_3d[(BLOCKS, BLOCKS, BLOCKS), (THREADS, THREADS, THREADS)](arr, rng_states)
    st = _states(S ** 3, 1)
    ref = np.zeros((6, 5, 7), np.float32)
    for z in range(S):
        for y in range(S):
            for x in range(S):
                for i in range(z, 6, S):
                    for j in range(y, 5, S):
                        for k in range(x, 7, S):
                            ref[i, j, k] = _uniform32(st[z * S * S + y * S + x])
    assert np.array_equal(arr.copy_to_host(), ref)


@pytest.mark.usefixtures("cpu_uncached")
def test_monte_carlo_integration_doc_example():
    # numba-cuda docs, "Monte Carlo Integration": forall + a device function + cuda.reduce
    @cuda.reduce
    def sum_reduce(a, b):
        return a + b

    @cuda.jit(device=True)
    def func(x):
        return x ** 2

    @cuda.jit
    def mc_integrator_kernel(out, rng_states, lower_lim, upper_lim):
        size = len(out)
        gid = cuda.grid(1)
        if gid < size:
            samp = xoroshiro128p_uniform_float32(rng_states, gid)
            samp = samp * (upper_lim - lower_lim) + lower_lim
            y = func(samp)
            out[gid] = y

    def mc_integrate(lower_lim, upper_lim, nsamps):
        out = cuda.to_device(np.zeros(nsamps, dtype="float32"))
        rng_states = create_xoroshiro128p_states(nsamps, seed=42)
        mc_integrator_kernel.forall(nsamps)(out, rng_states, lower_lim, upper_lim)
        factor = (upper_lim - lower_lim) / (nsamps - 1)
        return sum_reduce(out) * factor, out.copy_to_host()

    r, out = mc_integrate(1, 2, 20000)
    assert abs(r - 7 / 3) < 0.02
    st = _states(3, 42)
    for g in range(3):  # float32 sample * int64 limits: numba computes float64, as numpy does
        s = np.float64(_uniform32(st[g])) * 1 + 1
        assert out[g] == np.float32(s * s)


@pytest.mark.usefixtures("cpu_uncached")
def test_option_pricing_paths_with_normal_draws():
    @cuda.jit
    def paths(states, S0, mu, sigma, dt, nsteps, out):
        i = cuda.grid(1)
        if i < out.size:
            s = S0
            for _ in range(nsteps):
                z = xoroshiro128p_normal_float32(states, i)
                s *= math.exp((mu - 0.5 * sigma * sigma) * dt + sigma * math.sqrt(dt) * z)
            out[i] = s

    n = 2048
    states = create_xoroshiro128p_states(n, seed=123)
    out = np.zeros(n, np.float32)
    f = np.float32
    paths[n // 128, 128](states, f(100), f(0.05), f(0.2), f(1 / 50), 50, out)
    assert abs(np.exp(-0.05) * np.maximum(out - 100, 0).mean() - 10.45) < 1.5
    # the first path from numba's Box-Muller formula in float32
    st = _states(1, 123)[0]
    s = f(100)
    for _ in range(50):
        u1, u2 = _uniform32(st), _uniform32(st)
        z = np.sqrt(f(-2) * np.log(u1)) * np.cos(f(2) * f(np.pi) * u2)
        s = s * np.exp((f(0.05) - f(0.5) * f(0.2) * f(0.2)) * f(1 / 50) + f(0.2) * np.sqrt(f(1 / 50)) * z)
    assert abs(out[0] - s) / s < 1e-4


@pytest.mark.usefixtures("cpu_uncached")
def test_xoroshiro128p_type_and_typeof_spell_signatures():
    from pykern.lang.random import create_xoroshiro128p_states, xoroshiro128p_type, xoroshiro128p_uniform_float64

    a = np.zeros(8)

    @cuda.jit((cuda.typeof(a), xoroshiro128p_type[:]))
    def k(out, states):
        i = cuda.grid(1)
        out[i] = xoroshiro128p_uniform_float64(states, i)

    k[1, 8](a, create_xoroshiro128p_states(8, seed=3))
    assert ((a > 0) & (a < 1)).all() and len(set(a.tolist())) == 8
    assert str(cuda.typeof(np.zeros((2, 3), np.float32))) == str(cuda.float32[:, ::1])
    assert cuda.typeof(2.5) == cuda.float64
    with pytest.raises(ValueError):
        cuda.typeof(object())
