"""DeviceArray on the hip target. Without a GPU only the refusal is checked."""

import ctypes
import gc

import numpy as np
import pytest

from pykern.core.errors import HipError
from pykern.runtime.hip import library as hip
from pykern.runtime.memory.arrays import device_array, from_dlpack, pinned_array, to_device

HIP = {"target": "hip"}


@pytest.mark.skipif(hip.available()[0], reason="a GPU is present")
def test_hip_allocation_without_gpu_is_a_clear_hip_error():
    try:
        hip.load_library()
    except HipError:
        pytest.skip("no HIP runtime library here")
    with pytest.raises(HipError) as ei:
        device_array(10, np.float32, **HIP)
    assert ei.value.code == 100 and ei.value.name == "hipErrorNoDevice"
    assert "no AMD GPU" in str(ei.value)


def _free_bytes():
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    hip.lib().hipMemGetInfo(ctypes.byref(free), ctypes.byref(total))
    return free.value


@pytest.mark.amdgpu
@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.float16, np.float32, np.float64, np.bool_])
def test_round_trip(dtype):
    a = (np.arange(37 * 3) % 7).astype(dtype).reshape(37, 3)
    d = to_device(a, **HIP)
    assert d.target == "hip" and d.ptr != 0
    np.testing.assert_array_equal(d.copy_to_host(), a)
    f = to_device(np.asfortranarray(a), **HIP)
    assert f.is_f_contiguous()
    np.testing.assert_array_equal(f.copy_to_host(), a)


@pytest.mark.amdgpu
def test_strided_views_read_and_write():
    a = np.arange(120, dtype=np.float32).reshape(4, 5, 6)
    d = to_device(a, **HIP)
    for key in [(slice(None, None, -1), 2), (Ellipsis, slice(1, None, 2)), (1, slice(None), slice(None, None, -3))]:
        np.testing.assert_array_equal(d[key].copy_to_host(), a[key])
    d[1, ::2, ::-2] = -7
    a[1, ::2, ::-2] = -7
    np.testing.assert_array_equal(d.copy_to_host(), a)
    assert d[3, 4, 5] == a[3, 4, 5]
    e = to_device(np.zeros_like(a), **HIP)
    e.copy_to_device(d)  # device to device
    np.testing.assert_array_equal(e.copy_to_host(), a)
    e[::2].copy_to_device(d[1::2])  # strided device to device
    a2 = a.copy()
    a2[::2] = a[1::2]
    np.testing.assert_array_equal(e.copy_to_host(), a2)


@pytest.mark.amdgpu
def test_async_copies_with_pinned_memory():
    from pykern.runtime.streams import stream

    s = stream(**HIP)
    src = pinned_array(1 << 20, np.float32, **HIP)
    src[:] = np.arange(src.size, dtype=np.float32)
    d = to_device(src, stream=s, **HIP)
    dst = pinned_array(1 << 20, np.float32, **HIP)
    d.copy_to_host(dst, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(dst, src)


@pytest.mark.amdgpu
def test_memory_is_freed_with_the_last_view():
    gc.collect()
    before = _free_bytes()
    d = device_array(64 << 20, np.uint8, **HIP)
    v = d[1:]
    del d
    gc.collect()
    assert _free_bytes() <= before - (60 << 20)
    del v
    gc.collect()
    assert _free_bytes() >= before - (4 << 20)


@pytest.mark.amdgpu
def test_interop_descriptors_on_hip():
    from pykern.runtime.memory import dlpack

    d = to_device(np.arange(10, dtype=np.float32), **HIP)
    assert d.__dlpack_device__() == (dlpack.kDLROCM, d.storage.device)
    cai = d.__cuda_array_interface__
    assert cai["data"][0] == d.ptr and cai["version"] == 3 and cai["stream"] == 1

    class Wrapper:
        __dlpack__ = d.__dlpack__
        __dlpack_device__ = d.__dlpack_device__

    e = from_dlpack(Wrapper())
    assert e.target == "hip" and e.ptr == d.ptr
    np.testing.assert_array_equal(e.copy_to_host(), np.arange(10, dtype=np.float32))
