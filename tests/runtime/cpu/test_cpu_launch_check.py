"""The one check of a cpu launch configuration (``executor.launch_check``): the dispatcher's launches
and ``CpuKernel.launch`` refuse the same configurations, in the same words, before any block runs."""

import re

import numpy as np
import pytest

import pykern as cuda
from pykern.core.cpu_context import LDS_BYTES
from pykern.core.errors import LaunchValueError

pytestmark = pytest.mark.usefixtures("cpu_uncached")


def _kernel(**options):
    @cuda.jit(**options)
    def k(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    return k


def _overload(k, a):
    k[1, 1](a)
    (ov,) = k._overloads.values()
    return ov


class _Blocks:
    """Stands in for a kernel's compiled entry: records the block ranges it is asked to run."""

    def __init__(self):
        self.calls = []

    def __call__(self, args, ctx, first, last):
        self.calls.append((first, last))


@pytest.mark.parametrize("config, words", [
    (((2**31 - 1, 2**31 - 1, 2), 1), "has too many blocks"),
    ((1, 128), "block (128, 1, 1) of 128 threads exceeds the maximum of 64 threads"),
    ((1, 32, 0, LDS_BYTES + 1), f"{LDS_BYTES + 1} bytes of dynamic shared memory plus 0 bytes of static"),
])
def test_a_refused_configuration_runs_no_block(config, words):
    a = np.zeros(8, np.float32)
    k = _kernel(max_block_size=64)
    ov = _overload(k, a)
    blocks = ov.kernel._fn = _Blocks()
    with pytest.raises(LaunchValueError, match=re.escape(words)) as refused:
        k[config](a)
    assert str(refused.value).startswith("k: ") and blocks.calls == []


def test_the_dispatcher_and_the_kernel_say_the_same():
    a = np.zeros(8, np.float32)
    ov = _overload(_kernel(max_block_size=64), a)
    buf = bytearray(max(8, ov.artifact.kernarg_size))
    for grid, block, shared in [((1, 1, 1), (128, 1, 1), 0), ((1, 1, 1), (32, 1, 1), LDS_BYTES + 8),
                                ((2**31 - 1, 2**31 - 1, 4), (1, 1, 1), 0)]:
        with pytest.raises(LaunchValueError) as direct:
            ov.kernel.launch(grid, block, shared, buf)
        with pytest.raises(LaunchValueError) as dispatched:
            ov.dispatcher[grid, block, 0, shared](a)
        assert str(direct.value).split(": ", 1)[1] == str(dispatched.value).split(": ", 1)[1]
    with pytest.raises(LaunchValueError, match=">= 0 bytes"):
        ov.kernel.launch((1, 1, 1), (1, 1, 1), -1, buf)


def test_all_the_shared_memory_of_a_block_is_allowed():
    @cuda.jit
    def fill(a):
        s = cuda.shared.array(0, np.uint8)
        i = cuda.threadIdx.x
        s[i] = i
        cuda.syncthreads()
        a[i] = s[i]

    a = np.zeros(32, np.uint8)
    fill[1, 32, 0, LDS_BYTES](a)
    assert a.tolist() == list(range(32))


def test_a_cooperative_grid_beyond_residency_is_refused_by_the_kernel_too():
    from pykern.runtime.cpu.executor import max_cooperative_blocks

    @cuda.jit
    def coop(a):
        g = cuda.cg.this_grid()
        a[cuda.grid(1)] = 1
        g.sync()

    a = np.zeros(64, np.float32)
    coop[1, 64](a)
    (ov,) = coop._overloads.values()
    too_many = max_cooperative_blocks(64) + 1
    with pytest.raises(LaunchValueError, match="cooperative launch"):
        ov.kernel.launch((too_many, 1, 1), (64, 1, 1), 0, bytearray(max(8, ov.artifact.kernarg_size)))
    assert ov.max_cooperative_grid_blocks(64) == too_many - 1
