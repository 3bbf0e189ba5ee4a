"""numba.cuda's streams, devices and contexts from the host, as numba-cuda implements them
(numba_cuda/numba/cuda/cudadrv/driver.py, api.py): external streams, ``add_callback``/``async_done``
(``hipStreamAddCallback`` against the real libamdhip64), compute capability and device names,
``memory_info``, ``defer_cleanup``, runtime version, profiling, the ``cudadrv`` names -- on the cpu
target."""

import asyncio

import numpy as np
import pytest

import pykern as cuda
from pykern.core.errors import HipError
from pykern.runtime import driver, streams
from pykern.runtime.device_registry import compute_capability_of
from pykern.runtime.hip import driver as hip_driver
from pykern.runtime.hip import library as hip
from pykern.runtime.memory import arrays as memory

from hip_helpers import HostAsHip

pytestmark = pytest.mark.usefixtures("cpu_target")


# --------------------------------------------------------------------------- streams, devices, contexts
def test_external_stream_wraps_without_owning():
    s = cuda.external_stream(0x5000)
    assert isinstance(s, cuda.Stream) and int(s) == 0x5000 and s._finalizer is None
    s.synchronize()
    h = streams.external_stream(0x5000, target="hip")  # no HIP call until it is used
    assert h.handle == 0x5000 and h.target == "hip" and h._finalizer is None
    with pytest.raises(HipError):
        h.synchronize()  # the real library: no device here


def test_stream_add_callback_and_async_done():
    seen = []
    s = cuda.stream()
    s.add_callback(lambda stream, status, arg: seen.append((stream, status, arg)), "x")
    s.add_callback(lambda stream, status, arg: seen.append(arg))  # arg defaults to None
    assert seen == [(s, 0, "x"), None]
    with pytest.warns(UserWarning, match="Exception in stream callback"):
        s.add_callback(lambda *a: 1 / 0)

    async def main():
        return await s.async_done()

    assert asyncio.run(main()) is s


def test_add_callback_on_hip_uses_hipStreamAddCallback():
    try:
        hip.load_library()
    except HipError:
        pytest.skip("no HIP runtime library here")
    if hip.available()[0]:
        pytest.skip("a GPU is present: the amdgpu tests cover it")
    assert hasattr(hip.lib(), "hipStreamAddCallback")
    s = streams.Stream(0, "hip")
    with pytest.raises(HipError):
        s.add_callback(lambda *a: None)
    assert not hip_driver.pending_callbacks  # a refused callback leaves nothing behind


def test_compute_capability_and_device_names():
    dev = cuda.get_current_device()
    assert dev.compute_capability == (8, 0)  # documented in README
    assert "%d.%d" % dev.compute_capability == "8.0"
    assert dev.uuid and dev.id == 0
    dev.reset()
    with dev:
        pass
    assert cuda.select_device(0) == dev
    with pytest.raises(ValueError):
        cuda.select_device(1)
    assert compute_capability_of("gfx90a") == (9, 0)
    assert compute_capability_of("gfx942:sramecc+:xnack-") == (9, 4)
    assert compute_capability_of("gfx1100") == (11, 0) and compute_capability_of("gfx1030") == (10, 3)
    assert compute_capability_of("gfx803") == (8, 0)
    with pytest.raises(ValueError):
        compute_capability_of("sm_80")


def test_memory_info_is_numbas_named_tuple():
    info = cuda.current_context().get_memory_info()
    free, total = info
    assert (info.free, info.total) == (free, total) and 0 < free <= total
    ctx = cuda.current_context()
    with ctx.defer_cleanup():
        assert isinstance(ctx.create_stream(), cuda.Stream) and ctx.get_default_stream().is_default


def test_defer_cleanup_queues_frees_until_the_outermost_block_ends(monkeypatch):
    fake = HostAsHip()
    monkeypatch.setattr(hip_driver, "_hip", lambda: fake)
    drv = driver("hip")
    with cuda.defer_cleanup():
        memory._release(drv.free, 0x10)
        with cuda.defer_cleanup():
            memory._release(drv.free_host, 0x20)
        assert fake.calls == []
    assert fake.calls == [("hipFree", 0x10), ("hipHostFree", 0x20)]
    memory._release(drv.free, 0x30)
    assert fake.calls[-1] == ("hipFree", 0x30)


def test_runtime_version_profiling_and_bfloat16():
    v = cuda.runtime.get_version()
    assert isinstance(v, tuple) and len(v) == 2 and cuda.runtime.is_supported_version()
    try:
        rv = hip.load_library().runtime_version()
        assert v == (rv // 10_000_000, rv // 100_000 % 100)
    except HipError:
        assert v == (0, 0)
    cuda.profile_start()
    cuda.profile_stop()
    with cuda.profiling():
        pass
    assert cuda.is_bfloat16_supported() is True  # pykern.bfloat16 and pykern.bf16 work on every target


def test_cudadrv_names():
    from pykern.numba_compat.cudadrv import devicearray
    from pykern.numba_compat.cudadrv import driver
    from pykern.numba_compat.cudadrv import devices

    d = cuda.to_device(np.arange(3.0))
    assert cuda.cudadrv.devicearray.DeviceNDArray is cuda.DeviceNDArray and isinstance(d, devicearray.DeviceNDArray)
    assert devicearray.is_cuda_ndarray(d) and not devicearray.is_cuda_ndarray(np.zeros(2))
    assert devicearray.auto_device(d) == (d, False)
    dev, new = devicearray.auto_device(np.ones(2))
    assert new and dev.copy_to_host().tolist() == [1, 1]
    assert driver.is_device_memory(d) and driver.device_pointer(d) == d.ptr
    assert driver.CudaAPIError is HipError
    with pytest.raises(driver.CudaAPIError):  # what a failing HIP call raises
        raise HipError(101, "hipErrorInvalidDevice")
    assert driver.driver.get_device_count() == len(cuda.gpus)
    assert driver.driver.get_version() == cuda.runtime.get_version()
    assert devices.get_context().get_memory_info().total > 0 and list(devices.gpus) == list(cuda.gpus)
