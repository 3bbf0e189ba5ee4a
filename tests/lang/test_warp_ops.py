"""Warp (wave) operations in kernels: ``shfl*_sync``, ``ballot_sync``,
``all_sync``/``any_sync``/``eq_sync``, ``match_any_sync``/``match_all_sync``, ``activemask``,
``lanemask_lt``, ``laneid``/``warpsize``, with 64-lane waves (the cpu target's default) and 32-lane
ones (``PYKERN_CPU_WAVESIZE=32``) -- on the cpu target against Python models of a wave.

The AMD GPU side: tests/codegen/amdgpu/test_amdgpu_target.py (``test_wave_ops``,
``test_shuffles_every_dtype``); numba-cuda's own warp tests:
tests/numba_parity/cudapy/test_cudapy_warp_ops.py."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

import pykern as cuda
from pykern import float32

from cpu_helpers import run_py
from frontend_helpers import jit

pytestmark = pytest.mark.usefixtures("cpu_uncached")


rng = np.random.default_rng(1234)


def wave_ops(x, red, bal, lane, up, xor_, allv, anyv):
    i = cuda.grid(1)
    v = x[i]
    o = cuda.warpsize // 2
    while o > 0:
        v += cuda.shfl_down_sync(-1, v, o)
        o //= 2
    red[i] = v
    bal[i] = cuda.ballot_sync(-1, x[i] > 0.5)
    lane[i] = cuda.laneid
    up[i] = cuda.shfl_up_sync(-1, x[i], 1)
    xor_[i] = cuda.shfl_xor_sync(-1, x[i], 3)
    allv[i] = cuda.all_sync(-1, x[i] >= 0.0)
    anyv[i] = cuda.any_sync(-1, x[i] > 0.99)


@pytest.mark.parametrize("ws", [64, 32])
def test_wave_ops(ws):
    n = 256
    x = rng.random(n)
    x[:ws] = np.arange(ws) / ws  # wave 0: deterministic
    red, up, xor_ = (np.zeros(n) for _ in range(3))
    bal = np.zeros(n, np.uint64)
    lane = np.zeros(n, np.int32)
    allv, anyv = np.zeros(n, np.bool_), np.zeros(n, np.bool_)
    run_py(wave_ops, (2,), (128,), x, red, bal, lane, up, xor_, allv, anyv, wave_size=ws)
    xs = x.reshape(-1, ws)
    # shfl_down reduction: lane 0 of each wave holds the wave sum
    np.testing.assert_allclose(red.reshape(-1, ws)[:, 0], xs.sum(1))
    bits = np.array([sum(1 << k for k in range(ws) if r[k] > 0.5) for r in xs], dtype=np.uint64)
    assert (bal.reshape(-1, ws) == bits[:, None]).all()
    assert lane.tolist() == [k % ws for k in range(n)]
    exp_up = np.concatenate([np.concatenate([[r[0]], r[:-1]]) for r in xs])
    np.testing.assert_array_equal(up, exp_up)
    np.testing.assert_array_equal(xor_, np.concatenate([r[np.arange(ws) ^ 3] for r in xs]))
    assert allv.all()
    assert anyv.tolist() == np.repeat((xs > 0.99).any(1), ws).tolist()


def warpsize_k(out):
    out[0] = cuda.warpsize


def test_wave_size_from_environment(monkeypatch):
    out = np.zeros(1, np.int32)
    monkeypatch.setenv("PYKERN_CPU_WAVESIZE", "32")
    run_py(warpsize_k, (1,), (1,), out)
    assert out[0] == 32
    monkeypatch.setenv("PYKERN_CPU_WAVESIZE", "64")
    run_py(warpsize_k, (1,), (1,), out)
    assert out[0] == 64


def wave_misc(x, act, eq, lt, out):
    i = cuda.grid(1)
    if cuda.laneid < 40:
        act[i] = cuda.activemask()
        eq[i] = cuda.eq_sync(-1, x[i] > 0)
    cuda.syncwarp(-1)
    lt[i] = cuda.lanemask_lt()
    out[i] = cuda.shfl_sync(-1, x[i], cuda.laneid + 64)  # source lane taken mod warpsize


@pytest.mark.parametrize("ws", [64, 32])
def test_activemask_eq_lanemask_shfl_mod(ws):
    n = 128
    x = np.ones(n)
    x[5] = -1.0
    act, lt = np.zeros(n, np.uint64), np.zeros(n, np.uint64)
    eq = np.zeros(n, np.bool_)
    out = np.zeros(n)
    x2 = rng.random(n)
    x2[5] = -1.0
    run_py(wave_misc, (1,), (n,), x2, act, eq, lt, out, wave_size=ws)
    lanes = np.arange(n) % ws
    active_lanes = min(40, ws)
    exp_mask = (1 << active_lanes) - 1
    assert act[lanes < 40].tolist() == [exp_mask] * int((lanes < 40).sum())
    # wave 0 has the one negative value: eq is False there, True elsewhere
    assert eq[:ws][lanes[:ws] < 40].tolist() == [False] * active_lanes
    assert eq[ws:][lanes[ws:] < 40].all()
    assert lt.tolist() == [(1 << int(l)) - 1 for l in lanes]
    np.testing.assert_array_equal(out, x2)


def test_wave_ops_and_bits():
    @jit
    def k(out, bits):
        t = cuda.threadIdx.x
        v = cuda.shfl_down_sync(-1, t, 1)
        m = cuda.ballot_sync(-1, t % 2 == 0)
        out[t, 0] = v
        out[t, 1] = cuda.popc(m)
        out[t, 2] = cuda.laneid
        out[t, 3] = cuda.warpsize
        if t == 0:
            bits[0] = cuda.popc(np.uint32(0xF0F0))
            bits[1] = cuda.clz(np.int32(1))
            bits[2] = cuda.ffs(np.int32(8))
            bits[3] = cuda.brev(np.uint32(1)) == np.uint32(0x80000000)

    out = np.zeros((64, 4), np.int64)
    bits = np.zeros(4, np.int64)
    k[1, 64](out, bits)
    ws = int(out[0, 3])
    assert ws in (32, 64)
    for t in range(64):
        lane = t % ws
        assert out[t, 2] == lane
        assert out[t, 0] == (t + 1 if lane + 1 < ws else t)
        assert out[t, 1] == ws // 2
    assert list(bits) == [8, 31, 4, 1]


@cuda.jit
def lanes_below(pred, out, lanes):
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % cuda.warpsize
    mask = cuda.ballot_sync(0xFFFFFFFF, pred[i] != 0)
    below = mask & ((1 << lane) - 1)  # uint & int64 -> int64 (numba)
    out[i] = cuda.popc(below)
    lanes[i] = lane


def test_ballot_mask_and_int64_counts_the_lanes_below():
    pred = (np.arange(32) % 3 == 0).astype(np.int32)
    out, lanes = np.zeros(32, np.int64), np.zeros(32, np.int64)
    lanes_below[1, 32](pred, out, lanes)
    ref = [int(pred[i - lanes[i]:i].sum()) for i in range(32)]
    assert out.tolist() == ref


@cuda.jit
def match_kernel(v, any_, all_m, all_p):
    i = cuda.grid(1)
    if i < v.size:
        any_[i] = cuda.match_any_sync(0xFFFFFFFF, v[i])
        m, p = cuda.match_all_sync(-1, v[i])
        all_m[i] = m
        all_p[i] = p


def expected_match(v, wave):
    any_, all_m, all_p = [], [], []
    for i in range(v.size):
        w0 = i // wave * wave
        lanes = range(w0, min(w0 + wave, v.size))
        eq = lambda a, b: a == b or (a != a and b != b)  # noqa: E731
        any_.append(sum(1 << (j - w0) for j in lanes if eq(v[j], v[i])))
        allsame = all(eq(v[j], v[w0]) for j in lanes)
        active = sum(1 << (j - w0) for j in lanes)
        all_m.append(active if allsame else 0)
        all_p.append(allsame)
    return any_, all_m, all_p


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=150), st.sampled_from([np.int32, np.int64, np.uint32, np.float64]))
def test_match_sync_hypothesis(vals, dt):
    v = np.array(vals).astype(dt)
    if dt == np.float64 and v.size > 3:
        v[2] = np.nan
        v[3] = np.nan
    any_, all_m = np.zeros(v.size, np.uint64), np.zeros(v.size, np.uint64)
    all_p = np.zeros(v.size, np.bool_)
    match_kernel[1, v.size](v, any_, all_m, all_p)  # one block: the last wave may be partial
    ea, em, ep = expected_match(v, 64)
    assert [int(a) for a in any_] == ea
    assert [int(a) for a in all_m] == em and list(all_p) == ep


def match32(v, any_, all_m, all_p):
    i = cuda.grid(1)
    if i < v.size:
        any_[i] = cuda.match_any_sync(0xFFFFFFFF, v[i])
        m, p = cuda.match_all_sync(0xFFFFFFFF, v[i])
        all_m[i] = m
        all_p[i] = p


def test_match_sync_with_32_lane_waves(monkeypatch):
    from cpu_helpers import run_py

    monkeypatch.setenv("PYKERN_CPU_WAVESIZE", "32")
    v = np.array([5] * 32 + [1, 2] * 16 + [9] * 10, np.int64)
    any_, all_m = np.zeros(v.size, np.uint64), np.zeros(v.size, np.uint64)
    all_p = np.zeros(v.size, np.bool_)
    run_py(match32, (1,), (v.size,), v, any_, all_m, all_p)
    ea, em, ep = expected_match(v, 32)
    assert [int(a) for a in any_] == ea and [int(a) for a in all_m] == em and list(all_p) == ep
    assert int(any_[0]) == 0xFFFFFFFF and int(any_[32]) == 0x55555555 and int(any_[64]) == 0x3FF


def _all_sync_kernel(sig):
    def vote(mask, pred, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = cuda.all_sync(mask[i], pred[i])

    return cuda.jit(sig)(vote) if sig else cuda.jit(vote)


@pytest.mark.parametrize("sig, msg", [
    ("void(float32[:], int32[:], int32[:])", "Mask type must be an integer"),
    ("void(boolean[:], int32[:], int32[:])", "Mask type must be an integer"),
    ("void(int32[:], float64[:], int32[:])", "Predicate must be an integer or boolean"),
])
def test_vote_refuses_a_bool_or_float_mask_and_a_float_predicate(sig, msg):
    """numba-cuda's vote typing: a bool mask would name lane 0 alone, a float predicate is
    usually the two arguments swapped."""
    with pytest.raises(cuda.CompileError, match=msg):
        _all_sync_kernel(sig)


def test_vote_takes_integer_masks_and_integer_or_bool_predicates():
    n = 64  # one wave of the cpu target; a mask of -1 names every lane
    mask = np.full(n, -1, np.int64)
    out = np.zeros(n, np.int32)
    for pred in (np.ones(n, np.uint32), np.ones(n, np.bool_), np.arange(n, dtype=np.int64)):
        _all_sync_kernel(None)[1, n](mask, pred, out)
        assert out.tolist() == [int(pred.astype(bool).all())] * n


# laneid/warpsize/shfl reduction
@cuda.jit
def warp_sum(a, out):
    i = cuda.grid(1)
    v = a[i]
    off = cuda.warpsize // 2
    while off > 0:
        v += cuda.shfl_down_sync(0xffffffff, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[i // cuda.warpsize] = v


def test_warp_shuffle_sum():
    a = np.arange(256, dtype=np.int32)
    ws = 64
    out = np.zeros(256 // 32, np.int32)
    warp_sum[2, 128](a, out)
    nw = 256 // ws  # cpu warpsize is 64
    np.testing.assert_array_equal(out[:nw], a.reshape(nw, ws).sum(1))


# ballot / all_sync / any_sync / popc
@cuda.jit
def ballots(a, out):
    i = cuda.grid(1)
    b = cuda.ballot_sync(0xffffffff, a[i] > 0)
    al = cuda.all_sync(0xffffffff, a[i] > -100)
    an = cuda.any_sync(0xffffffff, a[i] > 1000)
    if cuda.laneid == 0:
        out[0] = cuda.popc(b)
        out[1] = al
        out[2] = an


def test_ballot_popc():
    a = np.arange(-10, 54, dtype=np.int32)
    out = np.zeros(3, np.int64)
    ballots[1, 64](a, out)
    assert out.tolist() == [53, 1, 0]


@cuda.jit
def butterfly(a, out):
    i = cuda.grid(1)
    v = a[i]
    m = 1
    while m < cuda.warpsize:
        v = max(v, cuda.shfl_xor_sync(0xffffffff, v, m))
        m *= 2
    out[i] = v
    w = cuda.shfl_sync(0xffffffff, a[i], 3)
    out[i] += w


def test_shfl_xor_max():
    a = np.random.default_rng(1).random(128)
    out = np.zeros(128)
    butterfly[1, 128](a, out)
    ws = 64
    exp = np.repeat(a.reshape(-1, ws).max(1), ws) + np.repeat(a.reshape(-1, ws)[:, 3], ws)
    np.testing.assert_array_equal(out, exp)


@cuda.jit
def scan_up(a, out):
    i = cuda.grid(1)
    v = a[i]
    d = 1
    while d < cuda.warpsize:
        n = cuda.shfl_up_sync(0xffffffff, v, d)
        if cuda.laneid >= d:
            v += n
        d *= 2
    out[i] = v


def test_shfl_up_scan():
    a = np.arange(64, dtype=np.int64)
    out = np.zeros(64, np.int64)
    scan_up[1, 64](a, out)
    np.testing.assert_array_equal(out, np.cumsum(a))


@cuda.jit
def shfl_and_barrier(a, out):
    sh = cuda.shared.array(32, float32)
    i = cuda.grid(1)
    lane = cuda.threadIdx.x % cuda.warpsize
    w = cuda.threadIdx.x // cuda.warpsize
    v = a[i]
    off = cuda.warpsize // 2
    while off:
        v += cuda.shfl_down_sync(0xffffffff, v, off)
        off //= 2
    if lane == 0:
        sh[w] = v
    cuda.syncthreads()
    nw = cuda.blockDim.x // cuda.warpsize
    if cuda.threadIdx.x == 0:
        s = float32(0)
        for k in range(nw):
            s += sh[k]
        out[cuda.blockIdx.x] = s


def test_warp_then_block_reduction():
    a = np.ones(1024, np.float32) * np.float32(0.5)
    out = np.zeros(4, np.float32)
    shfl_and_barrier[4, 256](a, out)
    np.testing.assert_array_equal(out, [128.0] * 4)
