"""DLPack both ways on the cpu target, with numpy as the other side."""

import ctypes
import gc

import numpy as np
import pytest

from pykern.runtime.memory import dlpack
from pykern.runtime.memory.arrays import from_dlpack
from pykern.runtime.memory.arrays import DeviceArray, to_device

CPU = {"target": "cpu"}
_valid = ctypes.pythonapi.PyCapsule_IsValid
_valid.restype = ctypes.c_int
_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _live_exports():
    gc.collect()
    return len(dlpack._exports)


def test_device_reports_kdlcpu():
    d = to_device(np.zeros(3), **CPU)
    assert d.__dlpack_device__() == (dlpack.kDLCPU, 0) == (1, 0)
    assert dlpack.kDLROCM == 10


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.uint64, np.float16, np.float32, np.float64, np.bool_])
def test_numpy_consumes_our_arrays_zero_copy(dtype):
    a = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    d = to_device(a, **CPU)
    n = np.from_dlpack(d)
    assert n.dtype == a.dtype and n.shape == a.shape
    np.testing.assert_array_equal(n, a)
    n[0, 0] = 1  # same memory
    assert d.copy_to_host()[0, 0] == 1


def test_strided_views_export_their_strides():
    a = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    d = to_device(a, **CPU)
    v = d[::-1, 1:, ::2]
    n = np.from_dlpack(v)
    np.testing.assert_array_equal(n, a[::-1, 1:, ::2])
    assert n.strides == v.strides


def test_export_lifetime_consumed_and_unconsumed():
    base = _live_exports()
    d = to_device(np.arange(5.0), **CPU)
    n = np.from_dlpack(d)
    assert _live_exports() == base + 1  # numpy holds it
    del n
    assert _live_exports() == base  # numpy called our deleter
    cap = d.__dlpack__()
    assert _live_exports() == base + 1
    del cap  # never consumed: the capsule destructor frees it
    assert _live_exports() == base
    # the exported tensor keeps the array alive even when the user drops it
    n = np.from_dlpack(to_device(np.arange(4.0), **CPU))
    gc.collect()
    np.testing.assert_array_equal(n, np.arange(4.0))


def test_versioned_and_legacy_capsules():
    d = to_device(np.arange(3, dtype=np.int32), **CPU)
    assert _valid(d.__dlpack__(), b"dltensor")
    assert _valid(d.__dlpack__(max_version=(1, 0)), b"dltensor_versioned")
    assert _valid(d.__dlpack__(max_version=(0, 8)), b"dltensor")


def test_import_from_numpy_zero_copy():
    a = np.arange(10, dtype=np.float32)
    d = from_dlpack(a)
    assert isinstance(d, DeviceArray) and d.target == "cpu" and d.ptr == a.ctypes.data
    d[3] = 100
    assert a[3] == 100
    s = from_dlpack(a[::-3])
    np.testing.assert_array_equal(s.copy_to_host(), a[::-3])
    assert s.strides == (-12,)
    m = from_dlpack(np.arange(24, dtype=np.int16).reshape(2, 3, 4).transpose(2, 0, 1))
    np.testing.assert_array_equal(m.copy_to_host(), np.arange(24, dtype=np.int16).reshape(2, 3, 4).transpose(2, 0, 1))
    b = from_dlpack(np.array([True, False]))
    assert b.dtype == np.bool_ and b.copy_to_host().tolist() == [True, False]


def test_import_marks_readonly_and_renames_capsule():
    ro = np.arange(4.0)
    ro.flags.writeable = False
    d = from_dlpack(ro)
    assert d.storage.readonly
    assert d.__cuda_array_interface__["data"][1] is True

    class Legacy:  # a pre-1.0 producer: only the old keyword-less call
        def __init__(self, a):
            self.a = a
            self.capsule = None

        def __dlpack__(self, stream=None):
            self.capsule = self.a.__dlpack__()
            return self.capsule

        def __dlpack_device__(self):
            return (1, 0)

    a = np.arange(6.0)
    p = Legacy(a)
    d = from_dlpack(p)
    assert _valid(p.capsule, b"used_dltensor")
    np.testing.assert_array_equal(d.copy_to_host(), a)


def test_our_deleter_runs_when_an_import_of_our_export_dies():
    base = _live_exports()
    d = to_device(np.arange(8.0), **CPU)

    class Wrapper:  # forces the capsule path instead of the DeviceArray shortcut
        __dlpack__ = d.__dlpack__
        __dlpack_device__ = d.__dlpack_device__

    e = from_dlpack(Wrapper())
    assert e is not d and e.ptr == d.ptr
    assert _live_exports() == base + 1
    del e
    assert _live_exports() == base


def test_as_device_array_and_round_trip():
    from pykern.runtime.memory.arrays import as_device_array

    a = np.arange(6.0).reshape(2, 3)
    d = as_device_array(a)  # numpy goes through __dlpack__
    assert d.target == "cpu" and d.ptr == a.ctypes.data
    back = np.from_dlpack(d)
    assert back.ctypes.data == a.ctypes.data
    np.testing.assert_array_equal(back, a)
    assert from_dlpack(d) is d


def test_refusals():
    d = to_device(np.zeros(3), **CPU)
    with pytest.raises(BufferError, match="device"):
        d.__dlpack__(dl_device=(dlpack.kDLROCM, 0))
    c = d.__dlpack__(copy=True, max_version=(1, 0))
    n = np.from_dlpack(_Capsule(c))
    n[0] = 5
    assert d[0] == 0.0  # copy=True gave independent memory
    # a tensor on a CUDA device is refused with the reason
    m = dlpack.DLManagedTensor()
    m.dl_tensor.device = dlpack.DLDevice(dlpack.kDLCUDA, 0)
    m.dl_tensor.dtype = dlpack.DLDataType(dlpack.kDLFloat, 32, 1)
    cap = ctypes.pythonapi.PyCapsule_New
    cap.restype = ctypes.py_object
    cap.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    capsule = cap(ctypes.addressof(m), b"dltensor", None)

    class CudaProducer:
        def __dlpack__(self, **kw):
            return capsule

    with pytest.raises(BufferError, match="kDLROCM"):
        from_dlpack(CudaProducer())
    with pytest.raises(TypeError):
        from_dlpack(object())


class _Capsule:
    """Hands a ready capsule to np.from_dlpack."""

    def __init__(self, c):
        self.c = c

    def __dlpack__(self, **kw):
        return self.c

    def __dlpack_device__(self):
        return (1, 0)


def test_torch_round_trip():
    torch = pytest.importorskip("torch", reason="torch is not installed (optional interop test)")
    t = torch.arange(6, dtype=torch.float32)
    d = from_dlpack(t)
    d[0] = 9
    assert float(t[0]) == 9.0
    back = torch.from_dlpack(d)
    assert back.data_ptr() == t.data_ptr()
