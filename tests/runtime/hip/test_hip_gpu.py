"""End to end on a real AMD GPU (marked ``amdgpu``: skipped here with the reason,
written to pass on a machine with one)."""

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.amdgpu


@pytest.fixture(autouse=True)
def hip_target():
    cuda.set_target("hip")
    yield
    cuda.set_target("cpu")


def test_saxpy_device_and_host_arrays():
    @cuda.jit
    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    n = 100_003
    x = np.random.rand(n).astype(np.float32)
    y = np.random.rand(n).astype(np.float32)
    d_out = cuda.device_array_like(x)
    saxpy[(n + 255) // 256, 256](np.float32(2), cuda.to_device(x), cuda.to_device(y), d_out)
    np.testing.assert_allclose(d_out.copy_to_host(), 2 * x + y, rtol=1e-6)
    out = np.zeros_like(x)
    with pytest.warns(cuda.PerformanceWarning):
        saxpy[(n + 255) // 256, 256](np.float32(2), x, y, out)  # host arrays: copied in and back
    np.testing.assert_allclose(out, 2 * x + y, rtol=1e-6)


def test_block_reduction_with_barriers_and_shuffles():
    @cuda.jit
    def block_sum(x, out):
        s = cuda.shared.array(1024, cuda.float64)
        t = cuda.threadIdx.x
        v = x[cuda.grid(1)]
        off = cuda.warpsize // 2
        while off > 0:
            v += cuda.shfl_down_sync(-1, v, off)
            off //= 2
        if t % cuda.warpsize == 0:
            s[t // cuda.warpsize] = v
        cuda.syncthreads()
        if t == 0:
            acc = 0.0
            for w in range(cuda.blockDim.x // cuda.warpsize):
                acc += s[w]
            out[cuda.blockIdx.x] = acc

    x = np.random.rand(64 * 256)
    out = np.zeros(64)
    block_sum[64, 256](x, out)
    np.testing.assert_allclose(out, x.reshape(64, 256).sum(1))


def test_debug_bounds_error_is_read_back_from_the_device():
    @cuda.jit(debug=True)
    def oob(a):
        a[cuda.grid(1) + 1] = 1.0

    with pytest.raises(cuda.KernelRuntimeError, match="out of bounds"):
        oob[1, 8](cuda.to_device(np.zeros(8)))
