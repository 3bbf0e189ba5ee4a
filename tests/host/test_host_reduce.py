"""cuda.reduce / cuda.Reduce on the cpu target against numpy: sums, max/min,
integer types, init, size=, res=, stream=, device and host arrays, empty
arrays, and that it is a device-side tree reduction (a generated kernel with
shared memory and barriers, two launches for more than one block)."""

import numpy as np
import pytest

import pykern as cuda
from pykern.host import reduce as reduction


@cuda.reduce
def _sum(a, b):
    return a + b


def _max(a, b):
    return max(a, b)


@cuda.jit(device=True)
def _min(a, b):
    return min(a, b)


@pytest.mark.parametrize("n", [1, 2, 255, 256, 257, 1000, 65536 + 3, 300_001])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64, np.uint8])
def test_sum_against_numpy(cpu_target, n, dtype):
    rng = np.random.default_rng(n)
    a = (rng.random(n) * 100).astype(dtype)
    got = _sum(a)
    want = a.sum(dtype=dtype)
    assert type(got) is np.dtype(dtype).type
    if np.dtype(dtype).kind == "f":
        assert np.isclose(got, a.sum(dtype=np.float64), rtol=1e-5)
    else:
        assert got == want  # integer wrap-around included (uint8)


def test_any_binary_device_function_and_init(cpu_target):
    a = np.random.default_rng(3).standard_normal(10_000)
    assert cuda.Reduce(_max)(a) == a.max()
    assert cuda.Reduce(_min)(a) == a.min()
    assert cuda.Reduce(_max)(a, init=100.0) == 100.0
    assert np.isclose(_sum(a, init=5), a.sum() + 5)
    assert _sum(np.zeros(0), init=7) == 7.0
    assert _sum(a, size=100) == pytest.approx(a[:100].sum())


def test_res_stream_and_device_arrays(cpu_target):
    a = np.arange(5000, dtype=np.float64)
    d = cuda.to_device(a)
    assert _sum(d) == a.sum()
    res = cuda.device_array(1, np.float64)
    s = cuda.stream()
    assert _sum(d, res=res, stream=s) is None
    s.synchronize()
    assert res.copy_to_host()[0] == a.sum()
    res2 = cuda.device_array(3, np.float64)
    res2[:] = -1
    _sum(a, res=res2)
    np.testing.assert_array_equal(res2.copy_to_host(), [a.sum(), -1, -1])
    with pytest.raises(TypeError):
        _sum(a.reshape(50, 100))


def test_it_is_a_device_tree_reduction(cpu_target):
    k = _sum._kernel(np.dtype(np.float64), "cpu")
    calls = []
    orig = k.launch

    def spy(args, griddim, blockdim, stream=0, sharedmem=0, **kw):
        calls.append((griddim[0], blockdim[0], args[1]))
        return orig(args, griddim, blockdim, stream, sharedmem, **kw)

    k.launch = spy
    try:
        a = np.ones(100_000)
        assert _sum(a) == 100_000
    finally:
        del k.launch
    nblocks = reduction.blocks_for(100_000, "cpu")
    assert nblocks > 1
    # on the cpu target one thread per block folds a chunk (no barriers), then one thread the partials
    assert calls == [(nblocks, 1, 100_000), (1, 1, nblocks)]
    assert reduction.blocks_for(100_000, "hip") == min(reduction.MAX_BLOCKS, -(-100_000 // reduction.BLOCK))
    ov = next(iter(k.overloads.values()))
    assert not ov.artifact.uses_barrier


def test_reduce_kernel_compiles_for_amdgpu():
    k = _sum._kernel(np.dtype(np.float32), "hip")  # the GPU variant (coalesced block-strided reads)
    for arch in ("gfx90a", "gfx942", "gfx1100", "gfx1201"):
        asm = k.inspect_asm("void(float32[::1], int64, float32[::1], float32, boolean)", arch=arch)
        assert "s_barrier" in asm and ("ds_write" in asm or "ds_store" in asm)


def test_lambda_functors_as_in_numbas_docs(cpu_target):
    sum_reduce = cuda.reduce(lambda a, b: a + b)  # numba's documented example
    a = np.arange(1234, dtype=np.float64) + 1
    assert sum_reduce(a) == a.sum()
    k = 3
    scaled_max = cuda.Reduce(lambda p, q: max(p, q) * 1 + k - k)  # closure value frozen, as numba does
    assert scaled_max(a) == a.max()
    double = cuda.vectorize(["float64(float64)"])(lambda v: v * 2)
    np.testing.assert_array_equal(double(a), a * 2)
