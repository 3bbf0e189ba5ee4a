"""numba's DeviceNDArray API on the cpu target, checked against numpy:
layouts of *_like and to_device (np.empty_like's strides), view, split,
reshape/ravel, slicing and __setitem__, copy_to_host(stream=), mapped and
pinned arrays (zero-copy interface of mapped memory; hip bindings against
the real header in test_hip_api)."""

import ctypes

import numpy as np
import pytest

import cpu_helpers
import pykern as cuda
from pykern.runtime.hip import api as hip_api
from pykern.runtime.memory import arrays as memory


def _views():
    f = np.asfortranarray(np.arange(120.0).reshape(10, 12))
    c = np.arange(120.0).reshape(10, 12)
    t = np.arange(60.0).reshape(3, 4, 5).transpose(2, 0, 1)
    return [f, f[::2, ::2], c[::2, 1::3], c.T, c[:, ::-1], t, t[::2], np.arange(10.0)[::3]]


@pytest.mark.parametrize("k", range(8))
def test_like_and_to_device_keep_numpys_strides(cpu_target, k):
    a = _views()[k]
    want = np.empty_like(a).strides
    d = cuda.device_array_like(a)
    assert d.shape == a.shape and d.strides == want
    d2 = cuda.to_device(a)
    assert d2.strides == (a.strides if (a.flags.c_contiguous or a.flags.f_contiguous) else want)
    np.testing.assert_array_equal(d2.copy_to_host(), a)
    assert cuda.device_array_like(d2).strides == d2.strides  # already dense: kept


def test_issue_example_f_order_view_like(cpu_target):
    d = cuda.device_array((10, 12), order="F")[::2, ::2]
    assert cuda.device_array_like(d).strides == (8, 40) == np.empty_like(np.empty((10, 12), order="F")[::2, ::2]).strides
    assert cuda.device_array_like(d).is_f_contiguous()


def test_contiguity_reshape_ravel_view_split(cpu_target):
    h = np.arange(24, dtype=np.float32)
    d = cuda.to_device(h)
    m = d.reshape(4, 6)
    assert m.is_c_contiguous() and not m.is_f_contiguous()
    assert m.T.is_c_contiguous() and m.T.shape == (6, 4)  # numba: .T is a transposed copy
    np.testing.assert_array_equal(m.copy_to_host(), h.reshape(4, 6))
    np.testing.assert_array_equal(m.reshape(2, -1, order="C").copy_to_host(), h.reshape(2, -1))
    np.testing.assert_array_equal(m.T.ravel().copy_to_host(), h.reshape(4, 6).T.ravel())
    with pytest.raises(NotImplementedError):
        m[:, ::2].ravel()
    iv = d.view(np.int32)
    np.testing.assert_array_equal(iv.copy_to_host(), h.view(np.int32))
    np.testing.assert_array_equal(d.view(np.float64).copy_to_host(), h.view(np.float64))
    np.testing.assert_array_equal(d.view(np.uint8).copy_to_host(), h.view(np.uint8))
    with pytest.raises(ValueError):
        d[:5].view(np.float64)  # 20 bytes do not divide into 8-byte items
    with pytest.raises(ValueError):
        m[:, ::2].view(np.float64)
    parts = d.split(10)
    assert [p.shape for p in parts] == [(10,), (10,), (4,)]
    np.testing.assert_array_equal(np.concatenate([p.copy_to_host() for p in parts]), h)
    with pytest.raises(ValueError):
        m.split(2)


def test_setitem_from_host_values_and_slices(cpu_target):
    h = np.zeros((6, 8), np.int64)
    d = cuda.to_device(h)
    d[1] = 5
    h[1] = 5
    d[2:4, ::3] = np.arange(6).reshape(2, 3)
    h[2:4, ::3] = np.arange(6).reshape(2, 3)
    d[:, -1] = np.arange(6)
    h[:, -1] = np.arange(6)
    d[5, 2] = 7
    h[5, 2] = 7
    np.testing.assert_array_equal(d.copy_to_host(), h)
    assert d[5, 2] == 7 and d[-1, -1] == 5
    s = cuda.stream()
    out = np.empty_like(h)
    d.copy_to_host(out, stream=s)
    s.synchronize()
    np.testing.assert_array_equal(out, h)
    r = d.copy_to_host(stream=s)
    s.synchronize()
    np.testing.assert_array_equal(r, h)


def test_mapped_and_pinned_arrays_on_cpu(cpu_target):
    inc = cuda.jit(cpu_helpers.add_one)
    m = cuda.mapped_array(100, np.float32)
    m[:] = np.arange(100)
    inc[1, 128](m)
    np.testing.assert_array_equal(m, np.arange(100, dtype=np.float32) + 1)
    f = np.asfortranarray(np.zeros((3, 4)))
    for like in (cuda.mapped_array_like(f), cuda.pinned_array_like(f)):
        assert like.shape == (3, 4) and like.flags.f_contiguous and like.dtype == f.dtype
    p = cuda.pinned_array((2, 3), np.int16)
    assert p.shape == (2, 3) and p.dtype == np.int16


def test_mapped_array_interface_gives_the_device_pointer():
    # the hip path without a GPU: a MappedArray over ordinary memory with a
    # pretend device base -- views must translate host offsets to device ones
    host = np.zeros(64, np.float64)
    arr = host.view(memory.MappedArray)
    arr._pk_host_base, arr._pk_dev_base = host.ctypes.data, 0x7F0000000000
    sub = arr[8:40:2]
    cai = sub.__cuda_array_interface__
    assert cai["data"][0] == 0x7F0000000000 + 8 * 8
    assert cai["strides"] == (16,) and cai["shape"] == (16,) and cai["stream"] is None
    assert hip_api.hipHostMallocMapped == 2


def test_hip_bindings_for_mapped_and_cooperative():
    assert hip_api.PROTOTYPES["hipHostGetDevicePointer"] == ("hipError_t", ("void**", "void*", "unsigned int"))
    # ROCm 6's prototype (not in the ROCm 5.2 header installed here): kernelParams, no extra
    ret, args = hip_api.PROTOTYPES["hipModuleLaunchCooperativeKernel"]
    assert ret == "hipError_t" and args[0] == "hipFunction_t" and args[-2:] == ("hipStream_t", "void**")
    assert len(args) == 10
    restype, argtypes = hip_api.ctypes_signature("hipHostGetDevicePointer")
    assert argtypes[1] is ctypes.c_void_p
