"""Wave operations, cooperative grid sync and matrix fragments on the sim target: the same
bits as the compiled cpu target (whose scheduler the sim's follows: per wave, the lanes that wait
at one wave op complete it together; a partial last wave; lanes that diverged around a vote)."""

import numpy as np
import pytest

import pykern as cuda
from pykern import runtime as targets
from pykern import wmma
from pykern.core.errors import LaunchError
from pykern.frontend.types import bfloat16_dtype

from test_sim_matches_cpu import on, same


def wave_kernel():
    """A fresh kernel (one compile per wave size)."""

    @cuda.jit
    def waves(x, out, bal):
        i = cuda.grid(1)
        v = x[i] if i < x.size else np.int32(0)
        out[i, 0] = cuda.shfl_down_sync(0xFFFFFFFF, v, 1)
        out[i, 1] = cuda.shfl_up_sync(0xFFFFFFFF, v, 3)
        out[i, 2] = cuda.shfl_xor_sync(0xFFFFFFFF, v, 5)
        out[i, 3] = cuda.shfl_sync(0xFFFFFFFF, v, 7 + i)
        if v % 3 != 0:  # a third of the lanes sit this vote out
            bal[i, 0] = cuda.ballot_sync(0xFFFFFFFF, v > 10)
            bal[i, 1] = cuda.activemask()
            bal[i, 2] = cuda.any_sync(0xFFFFFFFF, v > 50)
            bal[i, 3] = cuda.all_sync(0xFFFFFFFF, v > 0)
            bal[i, 4] = cuda.eq_sync(0xFFFFFFFF, v > 1000)
        cuda.syncwarp()
        bal[i, 5] = cuda.lanemask_lt()
        out[i, 4] = cuda.laneid + cuda.warpsize * 1000
        f = np.float32(v) * np.float32(0.5)
        out[i, 5] = np.int32(cuda.shfl_down_sync(0xFFFFFFFF, f, 2) * 4)
        out[i, 6] = cuda.shfl_xor_sync(0xFFFFFFFF, v > 40, 1)

    return waves


@pytest.mark.parametrize("wave", [32, 64])
def test_wave_operations_match_with_the_arch_wave_size(wave, monkeypatch):
    monkeypatch.setenv("PYKERN_CPU_WAVESIZE", str(wave))
    x = np.arange(150, dtype=np.int32) * 7 % 101
    out = same(wave_kernel(), (2, 80), x, np.zeros((160, 7), np.int32), np.zeros((160, 6), np.uint64),
               outputs={1, 2})[1]
    assert out[0, 4] == wave * 1000 and out[wave, 4] == wave * 1000  # lane 0 of the second wave
    assert out[5, 0] == x[6]


@cuda.jit(device=True)
def wave_sum(v):
    off = cuda.warpsize // 2
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    return v


@cuda.jit
def block_wave_sums(x, out):
    i = cuda.grid(1)
    s = wave_sum(x[i])  # a device function that reaches wave ops
    if cuda.laneid == 0:
        out[i // cuda.warpsize] = s


def test_wave_ops_in_a_device_function_match():
    x = np.random.default_rng(3).standard_normal(256).astype(np.float32)
    sim = same(block_wave_sums, (2, 128), x, np.zeros(4, np.float32), outputs={1})[1]
    np.testing.assert_allclose(sim, x.reshape(4, 64).sum(1), rtol=1e-5)


@cuda.jit
def two_phase(x, tmp, steps):
    g = cuda.cg.this_grid()
    i = g.thread_rank
    n = x.size
    for _ in range(steps):
        if i < n:
            tmp[i] = x[(i + 1) % n] + x[i]
        g.sync()
        if i < n:
            x[i] = tmp[i] * np.float32(0.5)
        g.sync()


def test_grid_sync_waits_for_every_block():
    x = np.random.default_rng(4).standard_normal(200).astype(np.float32)
    sim = same(two_phase, (4, 64), x, np.zeros(200, np.float32), 5, outputs={0})[0]
    ref = x.copy()
    for _ in range(5):
        ref = (np.roll(ref, -1) + ref) * np.float32(0.5)
    assert sim.tobytes() == ref.tobytes()  # the blocks read each other's writes after each sync


@cuda.jit
def early_exit(x):
    if cuda.blockIdx.x == 1:
        return
    cuda.cg.this_grid().sync()
    x[cuda.grid(1)] = 1


def test_a_block_that_never_reaches_the_grid_sync_is_reported():
    with pytest.raises(LaunchError, match=r"test_sim_waves_grid_matrix.py:\d+ \(cg.this_grid\(\).sync\(\)\): "
                                          r"2 of 3 blocks wait there but 1 block\(s\) ended"):
        on("sim", early_exit, (3, 4), np.zeros(12, np.int32))


@cuda.jit
def votes_around_a_barrier(x, out):
    t = cuda.threadIdx.x
    n_and = cuda.syncthreads_and(x[t] > 0)
    out[t, 0] = n_and
    out[t, 1] = cuda.syncthreads_or(x[t] > 5)
    if t >= 60:
        return
    out[t, 2] = cuda.syncthreads_and(x[t] > -100)  # the ended threads did not say so


def test_barrier_votes_count_threads_that_ended_as_on_the_cpu_target():
    same(votes_around_a_barrier, (1, 64), np.arange(64, dtype=np.int32) - 3, np.zeros((64, 3), np.int32),
         outputs={1})


def gemm_kernel(ity, aty, m, n, k):
    @cuda.jit
    def gemm(A, B, C, Cout):
        a = wmma.fragment(wmma.matrix_a, m, n, k, ity, wmma.row_major)
        b = wmma.fragment(wmma.matrix_b, m, n, k, ity, wmma.col_major)
        c = wmma.fragment(wmma.accumulator, m, n, k, aty)
        wmma.load_matrix_sync(a, A, 0, k)
        wmma.load_matrix_sync(b, B, 0, k)  # B stored column-major: (k, j) at j*k + k
        wmma.load_matrix_sync(c, C, 0, n, wmma.mem_row_major)
        wmma.mma_sync(c, a, b, c)
        wmma.store_matrix_sync(Cout, 0, c, n, wmma.mem_col_major)
        d = wmma.fragment(wmma.accumulator, m, n, k, aty)
        wmma.fill_fragment(d, 2)
        wmma.mma_sync(d, a, b, d)
        wmma.store_matrix_sync(Cout, m * n, d, n, wmma.mem_row_major)
    return gemm


CONFIGS = [(np.float16, np.float32, 16, 16, 16), (cuda.bfloat16, np.float32, 16, 16, 16),
           (np.float16, np.float16, 16, 16, 16), (np.float32, np.float32, 16, 16, 4),
           (np.float64, np.float64, 16, 16, 4), (np.int8, np.int32, 16, 16, 16)]


@pytest.mark.parametrize("ity, aty, m, n, k", CONFIGS, ids=lambda v: getattr(v, "__name__", str(v)))
def test_matrix_fragments_match_the_cpu_reference(ity, aty, m, n, k):
    rng = np.random.default_rng(5)
    idt = np.dtype(ity) if ity is not cuda.bfloat16 else bfloat16_dtype()
    if idt.kind == "i":
        A, B = (rng.integers(-128, 128, s).astype(idt) for s in ((m, k), (n, k)))
        C = rng.integers(-2**31, 2**31, (m, n)).astype(aty)  # sums wrap
    else:
        A, B = (rng.standard_normal(s).astype(np.float32).astype(idt) for s in ((m, k), (n, k)))
        C = (rng.standard_normal((m, n)) * 3).astype(aty)
    sim = same(gemm_kernel(ity, aty, m, n, k), (1, 8), A, B, C, np.zeros(2 * m * n, aty), outputs={3})[3]
    want = A.astype(np.float64) @ B.astype(np.float64).T
    got = sim[:m * n].reshape(n, m).T  # stored column-major
    if idt.kind == "i":
        assert got.tolist() == (want.astype(np.int64) + C).astype(np.int32).tolist()
    else:
        np.testing.assert_allclose(got, want + C, rtol=1e-2, atol=1e-2)


@cuda.jit
def load_at(A, C, off):
    a = wmma.fragment(wmma.matrix_a, 16, 16, 16, cuda.float16, wmma.row_major)
    b = wmma.fragment(wmma.matrix_b, 16, 16, 16, cuda.float16, wmma.col_major)
    wmma.load_matrix_sync(a, A, off, 16)
    wmma.load_matrix_sync(b, A, 0, 16)
    c = wmma.fragment(wmma.accumulator, 16, 16, 16, cuda.float32)
    wmma.fill_fragment(c, 0.0)
    wmma.mma_sync(c, a, b, c)
    wmma.store_matrix_sync(C, off, c, 16, wmma.mem_row_major)


@pytest.mark.parametrize("off", [-1, 1, -256])
def test_a_fragment_outside_its_array_is_an_index_error_on_the_sim_as_on_cpu_with_debug(off):
    # numpy would take a negative flat index from the array's end and run a kernel the cpu
    # target (debug=True) stops; every element outside [0, size) is an error on the sim
    A, C = np.ones(256, np.float16), np.zeros(256, np.float32)
    with pytest.raises(IndexError, match=r"out of bounds .*load_matrix_sync.*flat index") as got:
        on("sim", load_at, (1, 8), A, C, off)
    assert "test_sim_waves_grid_matrix.py:" in str(got.value) and "thread" in str(got.value)
    cpu_debug = cuda.jit(debug=True)(load_at.py_func)
    with pytest.raises(IndexError, match="load_matrix_sync"):
        on("cpu", cpu_debug, (1, 8), A, C, off)
    assert on("sim", load_at, (1, 8), A, C, 0)[1].tolist() == [16.0] * 256


def test_what_is_asked_of_a_compiled_kernel_on_the_sim_is_the_cpu_builds_answer():
    sig = "void(float32[::1], float32[::1], int64)"
    saved = list(targets._chosen)
    try:
        cuda.set_target("cpu")
        cpu = two_phase.max_cooperative_grid_blocks(64, signature=sig)
        cuda.set_target("sim")
        assert two_phase.max_cooperative_grid_blocks(64, signature=sig) == cpu > 0
    finally:
        targets._chosen[:] = saved
