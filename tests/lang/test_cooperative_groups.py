"""Cooperative groups: cuda.cg.this_grid() / this_thread_block() with .sync(),
.size, .thread_rank. On the cpu target every block of a cooperative launch is
resident, grid syncs are exact, a grid sync some block never reaches is a
KernelRuntimeError naming the line, and too large a grid is a ValueError
before anything runs. On amdgpu the grid barrier follows HIP's
__ockl_grid_sync (GWS on gfx90a, the runtime's multigrid-sync counter on
gfx942/gfx11/gfx12), checked in the code objects; the hip launch goes
through hipModuleLaunchCooperativeKernel with kernelParams."""

import ctypes
import os
import sys

import numpy as np
import pytest

import pykern as cuda
from pykern.core import abi
from pykern.dispatch import compiler
from pykern.runtime.cpu import executor as cpu_executor
from pykern.runtime.hip import api as hip_api
from pykern.runtime.hip import launch as hip_launch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "samples"))
import grid_sync  # noqa: E402  (the sample's kernel and its numpy reference)
from pykern import int32, void


@cuda.jit
def _neighbours(a, out):
    g = cuda.cg.this_grid()
    i = g.thread_rank
    n = g.size
    a[i] = i * 3
    g.sync()
    out[i] = a[(i + 1) % n] - a[(i + n - 1) % n]


def test_grid_sync_makes_every_blocks_writes_visible(cpu_target):
    for grid, block in [(8, 64), (3, 100), ((2, 3), (4, 8)), ((2, 1, 2), (3, 2, 5))]:
        nb = np.prod(grid) if isinstance(grid, tuple) else grid
        nt = np.prod(block) if isinstance(block, tuple) else block
        n = int(nb * nt)
        a = np.zeros(n, np.int64)
        out = np.zeros(n, np.int64)
        _neighbours[grid, block](a, out)
        r = np.arange(n) * 3
        np.testing.assert_array_equal(out, np.roll(r, -1) - np.roll(r, 1))


def test_many_grid_syncs_in_a_loop_match_numpy(cpu_target):
    # samples/grid_sync.py's smoothing: each step reads neighbours written by other blocks
    n = 16 * 32
    x0 = np.random.default_rng(0).random(n)
    x = x0.copy()
    grid_sync.smooth[16, 32](x, np.zeros(n), 25)
    np.testing.assert_allclose(x, grid_sync.reference(x0, 25), rtol=1e-12)


def test_thread_block_group(cpu_target):
    @cuda.jit
    def k(out, ranks):
        blk = cuda.cg.this_thread_block()
        s = cuda.shared.array(64, np.int64)
        r = blk.thread_rank
        s[r] = r
        blk.sync()
        out[cuda.blockIdx.x * blk.size + r] = s[blk.size - 1 - r]
        ranks[cuda.blockIdx.x * blk.size + r] = cuda.cg.this_grid().thread_rank

    out = np.zeros(4 * 64, np.int64)
    ranks = np.zeros_like(out)
    k[4, (8, 8)](out, ranks)
    np.testing.assert_array_equal(out, np.tile(np.arange(63, -1, -1), 4))
    np.testing.assert_array_equal(ranks, np.arange(256))


def test_grid_sync_not_reached_by_every_block_is_reported(cpu_uncached):
    @cuda.jit
    def bad(a):
        g = cuda.cg.this_grid()
        if cuda.blockIdx.x != 2:
            g.sync()
        a[cuda.grid(1)] = 1.0

    with pytest.raises(cuda.KernelRuntimeError) as info:
        bad[4, 32](np.zeros(128))
    msg = str(info.value)
    assert "test_cooperative_groups.py" in msg and "3 of 4 blocks" in msg and "1 block(s) ended" in msg

    @cuda.jit
    def diverge(a):
        g = cuda.cg.this_grid()
        if cuda.threadIdx.x < 16:
            g.sync()
        g.sync()
        a[0] = 1.0

    with pytest.raises(cuda.KernelRuntimeError, match="divergent barrier"):
        diverge[2, 32](np.zeros(1))


def test_grid_sync_after_early_return(cpu_uncached):
    """Threads past the data return, the rest sync the grid every step (numba's heat-equation
    example does this; tests/numba_parity/test_numba_doc_examples.py runs it as written). Threads that have
    exited count as arrived, as on GPUs."""
    @cuda.jit
    def rotate(buf, steps):
        i = cuda.grid(1)
        n = buf.shape[1]
        if i >= n:
            return
        g = cuda.cg.this_grid()
        for s in range(steps):
            src = s % 2
            buf[1 - src, i] = buf[src, (i + 1) % n]
            g.sync()

    n, steps = 101, 37
    x = np.arange(n, dtype=np.float64)
    buf = np.zeros((2, n))
    buf[0] = x
    rotate[4, 32](buf, steps)  # 128 threads, 27 of them return at once
    np.testing.assert_array_equal(buf[steps % 2], np.roll(x, -steps))


def test_cooperative_grid_limit_is_checked_before_launch(cpu_target):
    a = np.zeros(1, np.int64)
    limit = cpu_executor.max_cooperative_blocks(256)
    ov_limit = _neighbours.max_cooperative_grid_blocks(256, signature="void(int64[::1], int64[::1])")
    assert ov_limit == limit >= 1
    n = (limit + 1) * 256
    a, out = np.zeros(n, np.int64), np.zeros(n, np.int64)
    with pytest.raises(ValueError, match="cooperative") as info:
        _neighbours[limit + 1, 256](a, out)
    assert isinstance(info.value, cuda.LaunchError)
    assert (out == 0).all()  # nothing ran
    _neighbours[limit, 256](a[: limit * 256], out[: limit * 256])


def _grid_kernel(a, out):
    g = cuda.cg.this_grid()
    i = g.thread_rank
    a[i] = i
    g.sync()
    out[i] = a[(i + 1) % g.size]


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942", "gfx1100", "gfx1201"])
def test_amdgpu_grid_sync_code_objects(arch):
    ck = cuda.compile(_grid_kernel, "void(int64[::1], int64[::1])", arch=arch)
    assert ck.artifacts[0].cooperative
    kinds = [a[".value_kind"] for a in ck.metadata[".args"]]
    asm = ck.asm
    assert asm.count("s_barrier") >= 2
    if arch == "gfx90a":  # global wave sync hardware, as ockl on gfx90a
        assert "ds_gws_barrier" in asm
    else:  # no GWS: the counter in the runtime's multigrid-sync block (hidden argument)
        assert "ds_gws_barrier" not in asm
        assert "hidden_multigrid_sync_arg" in kinds
        assert "s_sleep" in asm and "global_atomic_add" in asm
        md = next(a for a in ck.metadata[".args"] if a[".value_kind"] == "hidden_multigrid_sync_arg")
        hidden0 = min(a[".offset"] for a in ck.metadata[".args"] if a[".value_kind"].startswith("hidden_"))
        assert md[".offset"] - hidden0 == 88  # COv5 implicit-argument layout (AMDGPUUsage)
    plain = cuda.compile(_no_sync, "void(int64[::1])", arch=arch)
    assert not plain.artifacts[0].cooperative


def _no_sync(a):
    a[cuda.grid(1)] = 1


def test_hip_cooperative_launch_pieces():
    ret, args = hip_api.PROTOTYPES["hipModuleLaunchCooperativeKernel"]
    assert args == ("hipFunction_t", "unsigned int", "unsigned int", "unsigned int", "unsigned int",
                    "unsigned int", "unsigned int", "unsigned int", "hipStream_t", "void**")
    assert "hipModuleLaunchCooperativeKernel" in hip_api.OPTIONAL  # ROCm 5.2's library lacks it
    buf = ctypes.create_string_buffer(64)
    params = [abi.FlatParam("a", None, 0, 8, "data", 0), abi.FlatParam("b", None, 8, 8, "data", 1),
              abi.FlatParam("n", None, 16, 4, "scalar", 2)]
    kp = hip_launch.kernel_params(ctypes.addressof(buf), params)
    assert list(kp) == [ctypes.addressof(buf) + o for o in (0, 8, 16)]
    # occupancy: registers and LDS of the code object, times the CUs
    ck = cuda.compile(_grid_kernel, "void(int64[::1], int64[::1])", arch="gfx942")
    per = compiler.cooperative_blocks_per_cu(ck.metadata, "gfx942", 256)
    assert 1 <= per <= 8  # at most 2048 threads per CU
    # 60000 bytes of dynamic LDS leave room for one block per CU
    assert compiler.cooperative_blocks_per_cu(ck.metadata, "gfx942", 256, dynamic_shared=60000) == 1


# grid sync cooperative
@cuda.jit
def grid_scan(a, tmp):
    g = cuda.cg.this_grid()
    i = cuda.grid(1)
    off = 1
    while off < a.size:
        v = a[i]
        if i >= off:
            v += a[i - off]
        g.sync()
        a[i] = v
        g.sync()
        off *= 2


@pytest.mark.usefixtures("cpu_uncached")
def test_grid_sync_scan():
    a = np.arange(256, dtype=np.int64)
    b = a.copy()
    grid_scan[4, 64](b, np.zeros(1))
    np.testing.assert_array_equal(b, np.cumsum(a))


@pytest.mark.usefixtures("cpu_target")
def test_overload_says_whether_it_is_cooperative():
    @cuda.jit("void(int32[:, ::1])")
    def rows(m):
        col = cuda.grid(1)
        g = cuda.cg.this_grid()
        for row in range(1, m.shape[0]):
            m[row, col] = m[row - 1, m.shape[1] - col - 1] + 1
            g.sync()

    @cuda.jit("void(int32[:, ::1])")
    def plain(m):
        m[0, cuda.grid(1)] = 1

    a = np.zeros((16, 64), np.int32)
    rows[2, 32](a)
    np.testing.assert_array_equal(a, np.tile(np.arange(16), (64, 1)).T)
    assert rows.overloads[rows.signatures[0]].cooperative is True
    assert plain.overloads[plain.signatures[0]].cooperative is False


@pytest.mark.usefixtures("cpu_uncached")
def test_cooperative_groups_doc_example_with_overload_lookup():
    # numba-cuda docs, "Cooperative Groups": rows computed one after another by the whole grid, the
    # overload found by its argument types for max_cooperative_grid_blocks
    @cuda.jit(void(int32[:, ::1]))
    def sequential_rows(M):
        col = cuda.grid(1)
        g = cuda.cg.this_grid()
        rows = M.shape[0]
        cols = M.shape[1]
        for row in range(1, rows):
            opposite = cols - col - 1
            M[row, col] = M[row - 1, opposite] + 1
            g.sync()

    A = np.zeros((128, 256), dtype=np.int32)
    blockdim = 32
    griddim = A.shape[1] // blockdim
    overload = sequential_rows.overloads[(int32[:, ::1],)]
    assert overload.max_cooperative_grid_blocks(blockdim) >= griddim
    sequential_rows[griddim, blockdim](A)
    ref = np.zeros_like(A)
    for row in range(1, A.shape[0]):
        ref[row] = ref[row - 1][::-1] + 1
    assert np.array_equal(A, ref)
