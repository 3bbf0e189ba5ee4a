"""numba.cuda host-side names around kernels work on the cpu target, as ported programs use them."""

import numpy as np

import pykern as cuda


def test_device_context_and_teardown_names():
    cuda.set_target("cpu")
    dev = cuda.get_current_device()
    assert dev.MAX_THREADS_PER_BLOCK == 1024 and dev.WARP_SIZE in (32, 64)
    assert dev.MULTIPROCESSOR_COUNT >= 1 and dev.MAX_SHARED_MEMORY_PER_BLOCK == 65536 and "cpu" in dev.name
    free, total = cuda.current_context().get_memory_info()
    assert 0 < free <= total
    assert len(cuda.gpus) == 0  # no AMD GPU here: numba's cuda.gpus is empty too without one
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
