"""numba-cuda's ``tests/cudapy/test_warp_ops.py`` (see conftest.py): warp operations: syncwarp,
shfl*_sync, vote (all/any/eq/ballot), match_*_sync, lane masks."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def _useful_syncwarp(ary):
    i = cuda.grid(1)
    if i == 0:
        ary[0] = 42
    cuda.syncwarp(0xFFFFFFFF)
    ary[i] = ary[0]


def _use_shfl_sync_idx(ary, idx):
    i = cuda.grid(1)
    val = cuda.shfl_sync(0xFFFFFFFF, i, idx)
    ary[i] = val


def _use_shfl_sync_up(ary, delta):
    i = cuda.grid(1)
    val = cuda.shfl_up_sync(0xFFFFFFFF, i, delta)
    ary[i] = val


def _use_shfl_sync_down(ary, delta):
    i = cuda.grid(1)
    val = cuda.shfl_down_sync(0xFFFFFFFF, i, delta)
    ary[i] = val


def _use_shfl_sync_xor(ary, xor):
    i = cuda.grid(1)
    val = cuda.shfl_xor_sync(0xFFFFFFFF, i, xor)
    ary[i] = val


def _use_shfl_sync_with_val(ary, into):
    i = cuda.grid(1)
    val = cuda.shfl_sync(0xFFFFFFFF, into, 0)
    ary[i] = val


def _use_vote_sync_all(ary_in, ary_out):
    i = cuda.grid(1)
    pred = cuda.all_sync(0xFFFFFFFF, ary_in[i])
    ary_out[i] = pred


def _use_vote_sync_any(ary_in, ary_out):
    i = cuda.grid(1)
    pred = cuda.any_sync(0xFFFFFFFF, ary_in[i])
    ary_out[i] = pred


def _use_vote_sync_eq(ary_in, ary_out):
    i = cuda.grid(1)
    pred = cuda.eq_sync(0xFFFFFFFF, ary_in[i])
    ary_out[i] = pred


def _use_vote_sync_ballot(ary):
    i = cuda.threadIdx.x
    ballot = cuda.ballot_sync(0xFFFFFFFF, True)
    ary[i] = ballot


def _use_match_any_sync(ary_in, ary_out):
    i = cuda.grid(1)
    ballot = cuda.match_any_sync(0xFFFFFFFF, ary_in[i])
    ary_out[i] = ballot


def _use_match_all_sync(ary_in, ary_out):
    i = cuda.grid(1)
    ballot, pred = cuda.match_all_sync(0xFFFFFFFF, ary_in[i])
    ary_out[i] = ballot if pred else 0


def _use_independent_scheduling(arr):
    i = cuda.threadIdx.x
    if i % 4 == 0:
        ballot = cuda.ballot_sync(0x11111111, True)
    elif i % 4 == 1:
        ballot = cuda.ballot_sync(0x22222222, True)
    elif i % 4 == 2:
        ballot = cuda.ballot_sync(0x44444444, True)
    elif i % 4 == 3:
        ballot = cuda.ballot_sync(0x88888888, True)
    arr[i] = ballot


def test_warp_useful_syncwarp(wave32):
    # test_warp_ops.py test_useful_syncwarp
    compiled = cuda.jit("void(int32[:])")(_useful_syncwarp)
    ary = np.empty(32, dtype=np.int32)
    compiled[1, 32](ary)
    assert np.all(ary == 42)


def test_warp_shfl_sync(wave32):
    # test_warp_ops.py test_shfl_sync_idx / _up / _down / _xor
    nelem = 32
    ary = np.empty(nelem, dtype=np.int32)
    cuda.jit("void(int32[:], int32)")(_use_shfl_sync_idx)[1, nelem](ary, 4)
    assert np.all(ary == 4)

    exp = np.arange(nelem, dtype=np.int32)
    exp[4:] -= 4
    cuda.jit("void(int32[:], int32)")(_use_shfl_sync_up)[1, nelem](ary, 4)
    assert np.all(ary == exp)

    exp = np.arange(nelem, dtype=np.int32)
    exp[:-4] += 4
    cuda.jit("void(int32[:], int32)")(_use_shfl_sync_down)[1, nelem](ary, 4)
    assert np.all(ary == exp)

    cuda.jit("void(int32[:], int32)")(_use_shfl_sync_xor)[1, nelem](ary, 16)
    assert np.all(ary == np.arange(nelem, dtype=np.int32) ^ 16)


def test_warp_shfl_sync_types(wave32):
    # test_warp_ops.py test_shfl_sync_types
    types = cuda.int32, cuda.int64, cuda.float32, cuda.float64
    values = (np.int32(-1), np.int64(1 << 42), np.float32(np.pi), np.float64(np.pi))
    for typ, val in zip(types, values):
        compiled = cuda.jit((typ[:], typ))(_use_shfl_sync_with_val)
        ary = np.empty(32, dtype=val.dtype)
        compiled[1, 32](ary, val)
        assert np.all(ary == val)


def test_warp_vote_sync(wave32):
    # test_warp_ops.py test_vote_sync_all / _any / _eq / _ballot
    nelem = 32
    f_all = cuda.jit("void(int32[:], int32[:])")(_use_vote_sync_all)
    ary_in = np.ones(nelem, dtype=np.int32)
    ary_out = np.empty(nelem, dtype=np.int32)
    f_all[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 1)
    ary_in[-1] = 0
    f_all[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 0)

    f_any = cuda.jit("void(int32[:], int32[:])")(_use_vote_sync_any)
    ary_in = np.zeros(nelem, dtype=np.int32)
    f_any[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 0)
    ary_in[2] = 1
    ary_in[5] = 1
    f_any[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 1)

    f_eq = cuda.jit("void(int32[:], int32[:])")(_use_vote_sync_eq)
    ary_in = np.zeros(nelem, dtype=np.int32)
    f_eq[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 1)
    ary_in[1] = 1
    f_eq[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 0)
    ary_in[:] = 1
    f_eq[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 1)

    ary = np.empty(nelem, dtype=np.uint32)
    cuda.jit("void(uint32[:])")(_use_vote_sync_ballot)[1, nelem](ary)
    assert np.all(ary == np.uint32(0xFFFFFFFF))


def test_warp_match_sync(wave32):
    # test_warp_ops.py test_match_any_sync / test_match_all_sync
    nelem = 10
    ary_in = np.arange(nelem, dtype=np.int32) % 2
    ary_out = np.empty(nelem, dtype=np.int32)
    cuda.jit("void(int32[:], int32[:])")(_use_match_any_sync)[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == np.tile((0b0101010101, 0b1010101010), 5))

    f = cuda.jit("void(int32[:], int32[:])")(_use_match_all_sync)
    ary_in = np.zeros(nelem, dtype=np.int32)
    f[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 0b1111111111)
    ary_in[1] = 4
    f[1, nelem](ary_in, ary_out)
    assert np.all(ary_out == 0)


def test_warp_independent_scheduling(wave32):
    # test_warp_ops.py test_independent_scheduling
    arr = np.empty(32, dtype=np.uint32)
    cuda.jit("void(uint32[:])")(_use_independent_scheduling)[1, 32](arr)
    assert np.all(arr == np.tile((0x11111111, 0x22222222, 0x44444444, 0x88888888), 8))


def test_warp_activemask_and_lanemask_lt(wave32):
    # test_warp_ops.py test_activemask / test_lanemask_lt
    @cuda.jit
    def use_activemask(x):
        i = cuda.grid(1)
        if (i % 2) == 0:
            x[i] = cuda.activemask()
        else:
            x[i] = cuda.activemask()

    out = np.zeros(32, dtype=np.uint32)
    use_activemask[1, 32](out)
    np.testing.assert_equal(np.tile((0x55555555, 0xAAAAAAAA), 16), out)

    @cuda.jit
    def use_lanemask_lt(x):
        i = cuda.grid(1)
        x[i] = cuda.lanemask_lt()

    use_lanemask_lt[1, 32](out)
    np.testing.assert_equal(np.asarray([(2**i) - 1 for i in range(32)], dtype=np.uint32), out)
