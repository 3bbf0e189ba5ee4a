"""numba.cuda host-side names around kernels work on the cpu target, as ported programs use them."""

import numpy as np
import pytest

import pykern as cuda


def test_device_context_and_teardown_names():
    cuda.set_target("cpu")
    dev = cuda.get_current_device()
    assert dev.MAX_THREADS_PER_BLOCK == 1024 and dev.WARP_SIZE in (32, 64)
    assert dev.MULTIPROCESSOR_COUNT >= 1 and dev.MAX_SHARED_MEMORY_PER_BLOCK == 65536 and "cpu" in dev.name
    free, total = cuda.current_context().get_memory_info()
    assert 0 < free <= total
    # the cpu target is the one device, so numba's multi-device loops run their work there
    assert len(cuda.gpus) == 1 and cuda.gpus[0].id == 0 and "cpu" in cuda.gpus[0].name
    cuda.close()


def test_pinned_mapped_and_event_timing_around_a_kernel():
    cuda.set_target("cpu")

    @cuda.jit
    def double(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] *= 2

    host = cuda.mapped_array(256, np.float32)
    host[:] = np.arange(256)
    start, end = cuda.event(), cuda.event()
    with cuda.pinned(host):
        start.record()
        double[1, 256](host)
        end.record()
        end.synchronize()
    assert cuda.event_elapsed_time(start, end) >= 0
    np.testing.assert_array_equal(host, 2 * np.arange(256, dtype=np.float32))


def test_numba_multi_device_loop_runs_its_share_on_the_cpu_target():
    # numba programs split work over cuda.gpus; with no GPU the cpu target must take all of it
    cuda.set_target("cpu")

    @cuda.jit
    def fill(out, base):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = base + i

    n = 64
    out = np.zeros(n, np.int64)
    share = n // len(cuda.gpus)
    for k, gpu in enumerate(cuda.gpus):
        with gpu:
            part = out[k * share:(k + 1) * share]
            fill[1, share](part, k * share)
    assert out.tolist() == list(range(n))
    assert cuda.cudadrv.driver.driver.get_device_count() == 1


@pytest.mark.usefixtures("cpu_uncached")
def test_cuda_types_and_from_pykern_import_cuda():
    from pykern import cuda as shim  # a numba program's `from numba import cuda`, with the import changed

    assert shim is cuda and shim.jit is cuda.jit
    assert cuda.types.int32 == cuda.int32  # numba.cuda.types is importable as an attribute
