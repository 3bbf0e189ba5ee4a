"""DeviceArray on the cpu target: allocation, copies, views, lifetime, interop."""

import gc
import weakref

import numpy as np
import pytest

from pykern.runtime.memory import arrays as memory
from pykern.runtime.memory.arrays import DeviceArray, as_device_array, device_array, device_array_like, to_device

CPU = {"target": "cpu"}
DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64, np.bool_]


def test_device_array_shapes_strides_and_attributes():
    d = device_array((2, 3, 4), np.float32, **CPU)
    assert isinstance(d, DeviceArray) and d.target == "cpu"
    assert d.shape == (2, 3, 4) and d.strides == (48, 16, 4) and d.dtype == np.float32
    assert (d.size, d.ndim, d.nbytes, d.itemsize, len(d)) == (24, 3, 96, 4, 2)
    assert d.is_c_contiguous() and not d.is_f_contiguous()
    f = device_array((2, 3, 4), np.int16, order="F", **CPU)
    assert f.strides == (2, 4, 12) and f.is_f_contiguous() and not f.is_c_contiguous()
    assert device_array(5, **CPU).shape == (5,) and device_array(5, **CPU).dtype == np.float64
    assert d.ptr % 256 == 0  # aligned like hipMalloc
    z = device_array((0, 4), np.float32, **CPU)
    assert z.size == 0 and z.copy_to_host().shape == (0, 4)
    with pytest.raises(ValueError, match="negative"):
        device_array((-1, 2), **CPU)
    with pytest.raises(TypeError, match="objects"):
        device_array(3, object, **CPU)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda t: np.dtype(t).name)
def test_round_trip_every_dtype(dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 5)) * 50).astype(dtype)
    d = to_device(a, **CPU)
    assert d.dtype == a.dtype and d.shape == a.shape
    b = d.copy_to_host()
    np.testing.assert_array_equal(a, b)
    a[0, 0] = 1  # a copy, not a view of the source
    assert d.copy_to_host()[0, 0] == b[0, 0]


def test_layouts_preserved_or_made_contiguous():
    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    d = to_device(a, **CPU)
    assert d.is_f_contiguous() and d.strides == a.strides
    h = d.copy_to_host()
    assert h.flags.f_contiguous and np.array_equal(h, a)
    s = np.arange(40.0).reshape(5, 8)[::2, ::-3]
    ds = to_device(s, **CPU)
    assert ds.is_c_contiguous() and np.array_equal(ds.copy_to_host(), s)
    assert to_device([[1, 2], [3, 4]], **CPU).copy_to_host().tolist() == [[1, 2], [3, 4]]
    assert to_device(np.float32(2.5), **CPU).copy_to_host()[()] == 2.5
    assert to_device(d, **CPU) is d


def test_copy_to_host_into_given_array_and_errors():
    d = to_device(np.arange(6, dtype=np.int32).reshape(2, 3), **CPU)
    out = np.zeros((2, 3), np.int32)
    assert d.copy_to_host(out) is out and out.tolist() == [[0, 1, 2], [3, 4, 5]]
    out_f = np.zeros((2, 3), np.int32, order="F")
    d.copy_to_host(out_f)
    assert out_f.tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="destination"):
        d.copy_to_host(np.zeros((3, 2), np.int32))
    with pytest.raises(TypeError, match="destination"):  # a dtype mismatch is a TypeError, as numba's
        d.copy_to_host(np.zeros((2, 3), np.int64))


def test_copy_to_device_from_host_and_device():
    d = device_array((2, 3), np.float64, **CPU)
    d.copy_to_device(np.ones((2, 3)))
    e = device_array_like(d, **CPU)
    e.copy_to_device(d)
    assert np.array_equal(e.copy_to_host(), np.ones((2, 3)))
    with pytest.raises(ValueError, match="shape"):
        d.copy_to_device(np.ones(6))
    with pytest.raises(TypeError, match="dtype"):
        d.copy_to_device(np.ones((2, 3), np.float32))
    t = to_device(np.zeros((2, 3)), to=d, **CPU)
    assert t is d and not d.copy_to_host().any()


def test_device_array_like_keeps_order():
    f = np.zeros((3, 4), np.int8, order="F")
    assert device_array_like(f, **CPU).is_f_contiguous()
    assert device_array_like(np.zeros((3, 4)), **CPU).is_c_contiguous()


def test_slices_are_views_sharing_memory():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    d = to_device(a, **CPU)
    for key in [(1,), (slice(1, None), slice(None, None, 2)), (Ellipsis, 3), (slice(None, None, -1), 2, slice(4, 0, -2)),
                (None, 0), (0, None, slice(1, 3)), (-1, -2), (slice(5, 9),)]:
        v = d[key]
        assert isinstance(v, DeviceArray), key
        assert v.shape == a[key].shape and v.strides == a[key].strides, key
        np.testing.assert_array_equal(v.copy_to_host(), a[key])
    v = d[1, ::2, 1:4]
    v.copy_to_device(np.full(v.shape, -1, np.float32))
    a[1, ::2, 1:4] = -1
    np.testing.assert_array_equal(d.copy_to_host(), a)
    assert v.storage is d.storage


def test_integer_indexing_and_errors():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    d = to_device(a, **CPU)
    assert d[2, 3] == 11 and d[-1, -4] == 8 and isinstance(d[0, 0], np.int64)
    assert d[1].shape == (4,) and d[1].copy_to_host().tolist() == [4, 5, 6, 7]
    with pytest.raises(IndexError, match="out of bounds"):
        d[3]
    with pytest.raises(IndexError, match="too many"):
        d[0, 0, 0]
    with pytest.raises(IndexError, match="ellipsis"):
        d[..., ...]
    with pytest.raises(TypeError, match="fancy"):
        d[[0, 1]]
    with pytest.raises(TypeError, match="fancy"):
        d[1.5]


def test_setitem_broadcasts():
    a = np.zeros((3, 4), np.int32)
    d = to_device(a, **CPU)
    d[1] = 7
    d[:, 0] = np.array([1, 2, 3])
    d[2, 3] = 9
    a[1] = 7
    a[:, 0] = [1, 2, 3]
    a[2, 3] = 9
    np.testing.assert_array_equal(d.copy_to_host(), a)


def test_transpose_reshape_ravel():
    a = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    d = to_device(a, **CPU)
    with pytest.raises(NotImplementedError):  # numba: "transposing a non-2D DeviceNDArray isn't supported"
        d.T
    assert d.transpose((0, 1, 2)) is d  # the identity permutation: the array itself, as numba's
    np.testing.assert_array_equal(d.reshape(4, 6).copy_to_host(), a.reshape(4, 6))
    np.testing.assert_array_equal(d.reshape((-1, 8)).copy_to_host(), a.reshape(-1, 8))
    np.testing.assert_array_equal(d.ravel().copy_to_host(), a.ravel())
    m = d.reshape(6, 4)
    assert m.T.is_c_contiguous()  # numba: a transposed copy, C-contiguous
    np.testing.assert_array_equal(m.T.reshape(24).copy_to_host(), a.reshape(6, 4).T.reshape(24))
    with pytest.raises(NotImplementedError):
        d[:, ::2].reshape(d[:, ::2].size)
    with pytest.raises(ValueError):
        d.reshape(5, 5)


def test_storage_lives_while_any_view_lives():
    d = device_array(100, np.uint8, **CPU)
    ref = weakref.ref(d.storage)
    v = d[10:20]
    del d
    gc.collect()
    assert ref() is not None
    v.copy_to_device(np.arange(10, dtype=np.uint8))  # still valid memory
    del v
    gc.collect()
    assert ref() is None


def test_cuda_array_interface_export_and_import():
    d = to_device(np.arange(12, dtype=np.float32).reshape(3, 4), **CPU)
    cai = d.__cuda_array_interface__
    assert cai == {"shape": (3, 4), "strides": None, "typestr": "<f4", "data": (d.ptr, False), "version": 3, "stream": None}
    v = d[:, 1::2]
    assert v.__cuda_array_interface__["strides"] == (16, 8)
    assert v.__cuda_array_interface__["data"][0] == d.ptr + 4
    # a consumer (here: ourselves) sees the same memory
    w = as_device_array(v, **CPU)
    assert w is v
    host = np.zeros((2, 3), np.int16)

    class Producer:
        __cuda_array_interface__ = {"shape": (2, 3), "strides": None, "typestr": "<i2",
                                    "data": (host.ctypes.data, False), "version": 3, "stream": None}

    p = as_device_array(Producer(), **CPU)
    p[1, 2] = 5
    assert host[1, 2] == 5 and p.shape == (2, 3) and p.dtype == np.int16
    with pytest.raises(TypeError):
        as_device_array(object())


def test_array_protocol_copies():
    d = to_device(np.arange(4.0), **CPU)
    h = np.asarray(d)
    h[0] = 42
    assert d[0] == 0.0
    assert np.asarray(d, dtype=np.int32).dtype == np.int32


def test_pinned_array_on_cpu_is_plain_numpy():
    p = memory.pinned_array((4, 2), np.float32, **CPU)
    assert isinstance(p, np.ndarray) and p.shape == (4, 2) and p.dtype == np.float32


def test_top_level_names_reach_this_module():
    import pykern

    assert pykern.to_device is to_device
    assert pykern.device_array is device_array
    assert pykern.DeviceArray is DeviceArray
    assert callable(pykern.from_dlpack) and callable(pykern.as_cuda_array)
    assert pykern.is_cuda_array(to_device(np.zeros(2), **CPU))


def test_current_target_decides_default(monkeypatch):
    import pykern

    pykern.set_target("cpu")
    assert device_array(3).target == "cpu"
    assert to_device(np.zeros(3)).target == "cpu"
