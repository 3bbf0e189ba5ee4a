"""numba.cuda's device arrays from the host, as numba-cuda implements them
(numba_cuda/numba/cuda/cudadrv/devicearray.py, api.py): ``copy_to_host`` keeping strides (also on
the HIP path, against a stand-in library that copies host memory), ``.T``, records of record arrays
(``DeviceRecord``), ``as_cuda_array``, constructors with numba's positional strides,
``to_device(copy=False)``, mapped and managed arrays -- on the cpu target."""

import warnings

import numpy as np
import pytest

import pykern as cuda
from pykern.runtime import streams
from pykern.runtime.hip import driver as hip_driver
from pykern.runtime.memory import arrays as memory

from hip_helpers import HostAsHip, hip_array

pytestmark = pytest.mark.usefixtures("cpu_target")


@cuda.jit
def _inc(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1


def test_to_host_copies_back_into_the_array_given_to_to_device():
    h = np.arange(10, dtype=np.int64)
    d = cuda.to_device(h)
    _inc[1, 16](d)
    assert h[0] == 0
    with pytest.warns(DeprecationWarning):
        d.to_host()
    assert (h == np.arange(10) + 1).all()


def test_to_host_without_a_source_array_raises():
    d = cuda.device_array(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(ValueError, match="no associated writeback"):
            d.to_host()
        with pytest.raises(ValueError):
            cuda.to_device(np.zeros(4))[1:].to_host()  # a view has none either


# --------------------------------------------------------------------------- copy_to_host keeps strides
def test_copy_to_host_of_a_view_keeps_its_strides():
    # numba: np.ndarray(shape, dtype, strides=self.strides, buffer=<alloc_size bytes>)
    h = np.arange(10.0)
    d = cuda.to_device(h)
    c = d[::2].copy_to_host()
    assert c.strides == (16,) and not c.flags.c_contiguous
    np.testing.assert_array_equal(c, h[::2])
    m = cuda.to_device(np.arange(24.0).reshape(4, 6))
    v = m[1:, ::3]
    c2 = v.copy_to_host()
    assert c2.strides == v.strides == (48, 24)
    np.testing.assert_array_equal(c2, np.arange(24.0).reshape(4, 6)[1:, ::3])
    r = d[::-1].copy_to_host()  # numba refuses negative strides; pykern keeps them too
    assert r.strides == (-8,)
    np.testing.assert_array_equal(r, h[::-1])
    p = cuda.to_device(np.arange(24.0).reshape(2, 3, 4).transpose(2, 0, 1))  # dense, permuted axes
    assert p.copy_to_host().strides == p.strides == np.arange(24.0).reshape(2, 3, 4).transpose(2, 0, 1).strides
    assert cuda.to_device(np.zeros((0, 3)))[:, ::2].copy_to_host().shape == (0, 2)


def test_copy_to_host_into_a_strided_host_array():
    d = cuda.to_device(np.arange(5.0))
    base = np.full(10, -1.0)
    out = d.copy_to_host(base[::2])
    assert out.base is base
    np.testing.assert_array_equal(base, [0, -1, 1, -1, 2, -1, 3, -1, 4, -1])
    f = np.zeros((6, 4), order="F")[::2]
    cuda.to_device(np.arange(12.0).reshape(3, 4)).copy_to_host(f)
    np.testing.assert_array_equal(f, np.arange(12.0).reshape(3, 4))


def test_copy_to_host_strides_on_the_hip_path(monkeypatch):
    fake = HostAsHip()
    monkeypatch.setattr(hip_driver, "_hip", lambda: fake)
    h = np.arange(10.0)
    d = hip_array(h)
    c = d[1::3].copy_to_host()
    assert c.strides == (24,) and fake.calls == [("hipMemcpy", 56)]  # one copy of the span, as numba
    np.testing.assert_array_equal(c, h[1::3])
    out = np.zeros(8)[::2]
    d[::3].copy_to_host(out)
    np.testing.assert_array_equal(out, h[::3])
    fake.calls.clear()
    s = streams.Stream(0x1234, "hip")
    a = d[::2].copy_to_host(stream=s)  # asynchronous: no synchronize, the staging buffer kept alive
    assert ("hipStreamSynchronize", 0x1234) not in fake.calls and len(s._keepalive) == 1
    np.testing.assert_array_equal(a, h[::2])
    assert d.bind(s)[3] == 3.0  # an element read waits for its stream even when the array is bound
    assert ("hipStreamSynchronize", 0x1234) in fake.calls


# --------------------------------------------------------------------------- .T / transpose
def test_T_is_a_transposed_copy_2d_only():
    h = np.arange(6.0).reshape(2, 3)
    d = cuda.to_device(h)
    t = d.T
    assert t.shape == (3, 2) and t.is_c_contiguous() and t.strides == (16, 8)
    np.testing.assert_array_equal(t.copy_to_host(), h.T)
    t[0, 0] = 99.0  # a copy: the original is untouched (numba runs a transpose kernel into a new array)
    assert d[0, 0] == 0.0
    np.testing.assert_array_equal(d.transpose().copy_to_host(), h.T)
    np.testing.assert_array_equal(d.transpose((1, 0)).copy_to_host(), h.T)
    assert d.transpose((0, 1)) is d
    np.testing.assert_array_equal(d[:, ::2].T.copy_to_host(), h[:, ::2].T)
    with pytest.raises(ValueError, match="invalid axes"):
        d.transpose((0, 2))
    with pytest.raises(NotImplementedError, match="non-2D"):
        cuda.to_device(np.zeros(3)).T
    with pytest.raises(NotImplementedError, match="non-2D"):
        cuda.to_device(np.zeros((2, 2, 2))).transpose((2, 1, 0))


# --------------------------------------------------------------------------- records
_REC = np.dtype([("x", np.int32), ("y", np.float64), ("v", np.float32, (3,)),
                 ("p", [("a", np.int16), ("b", np.int16)])], align=True)


def _records():
    s = np.zeros(3, _REC)
    s["x"] = [1, 2, 3]
    s["y"] = [0.5, 1.5, 2.5]
    s["v"] = np.arange(9, dtype=np.float32).reshape(3, 3)
    s["p"]["a"] = [10, 20, 30]
    return s


def test_getitem_of_a_record_array_is_a_device_record():
    s = _records()
    d = cuda.to_device(s)
    r = d[1]
    assert isinstance(r, cuda.DeviceRecord) and isinstance(r, cuda.DeviceNDArray)
    assert r.shape == () and r.dtype == _REC
    assert r["x"] == 2 and isinstance(r["x"], np.int32) and r["y"] == 1.5
    assert isinstance(r["v"], cuda.DeviceNDArray) and r["v"].shape == (3,)
    np.testing.assert_array_equal(r["v"].copy_to_host(), [3, 4, 5])
    assert isinstance(r["p"], cuda.DeviceRecord) and r["p"]["a"] == 20
    host = r.copy_to_host()
    assert isinstance(host, np.ndarray) and host.shape == () and host[()] == s[1]
    r["x"] = 42
    r["v"] = [7, 8, 9]
    r["p"]["b"] = -5
    got = d.copy_to_host()
    assert got[1]["x"] == 42 and got[1]["v"].tolist() == [7, 8, 9] and got[1]["p"]["b"] == -5
    assert got[0]["x"] == 1 and got[2]["x"] == 3  # only record 1 changed
    with pytest.raises(KeyError):
        r["nope"]
    s = cuda.stream()
    b = r.bind(s)
    assert isinstance(b, cuda.DeviceRecord) and b.stream is s and b["x"] == 42


def test_device_record_passed_to_a_kernel_by_reference():
    @cuda.jit
    def bump(r, out):
        out[0] = r.x
        r.y = r.y * 2.0

    d = cuda.to_device(_records())
    out = np.zeros(1, np.int32)
    bump[1, 1](d[2], out)
    assert out[0] == 3 and d[2]["y"] == 5.0
    rec = cuda.to_device(_records()[0])  # numba: to_device of a numpy record is a DeviceRecord
    assert isinstance(rec, cuda.DeviceRecord)
    bump[1, 1](rec, out)
    assert out[0] == 1 and rec["y"] == 1.0


# --------------------------------------------------------------------------- as_cuda_array
def test_as_cuda_array_needs_the_cuda_array_interface():
    with pytest.raises(TypeError, match="cuda array interface"):
        cuda.as_cuda_array(np.arange(4.0))  # numba: TypeError; numpy arrays have no interface
    with pytest.raises(TypeError):
        cuda.as_cuda_array([1, 2, 3])
    assert not cuda.is_cuda_array(np.arange(4.0))
    d = cuda.to_device(np.arange(4.0))
    assert cuda.as_cuda_array(d) is d
    m = cuda.mapped_array(4, np.float32)  # a mapped array exports the interface (numba's MappedNDArray)
    m[:] = [1, 2, 3, 4]
    assert cuda.is_cuda_array(m)
    v = cuda.as_cuda_array(m, sync=False)
    v[0] = 9.0
    assert m[0] == 9.0  # zero-copy


# --------------------------------------------------------------------------- allocation signatures
def test_constructors_take_numbas_positional_strides():
    # numba: device_array(shape, dtype, strides=None, order='C', stream=0); pinned_array(shape, dtype,
    # strides, order); mapped_array(shape, dtype, strides, order, stream, portable, wc)
    assert cuda.device_array((2, 3), np.float64, None, "F").strides == (8, 16)
    assert cuda.device_array((2, 3), np.float64, (8, 16)).is_f_contiguous()
    assert cuda.pinned_array((2, 3), np.float64, None, "F").flags.f_contiguous
    assert cuda.pinned_array((2, 3), np.float32, (4, 8)).strides == (4, 8)
    m = cuda.mapped_array((2, 3), np.float64, None, "F")
    assert m.flags.f_contiguous and m.__cuda_array_interface__["strides"] == (8, 16)
    assert cuda.device_array((2, 3), np.float32, "F").is_f_contiguous()  # pykern's older order-third spelling
    with pytest.raises(ValueError):
        cuda.device_array((2, 3), np.float64, (8, 8))
    assert cuda.pinned_array(0).shape == (0,) and cuda.mapped_array((0, 2)).shape == (0, 2)
    like = cuda.pinned_array_like(np.zeros((4, 6), order="F")[::2])
    assert like.strides == (8, 16)


def test_to_device_copy_false_only_allocates():
    d = cuda.to_device(np.arange(4.0), copy=False)
    assert d.shape == (4,) and d.dtype == np.float64
    t = cuda.device_array(4)
    t[:] = 0
    assert cuda.to_device(np.ones(4), to=t, copy=False) is t and t.copy_to_host().sum() == 0


def test_mapped_context_manager():
    a, b = np.zeros(4), np.arange(4.0)

    @cuda.jit
    def add(x, y):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += y[i]

    with cuda.mapped(a, b) as (da, db):
        assert isinstance(da, cuda.DeviceNDArray)
        add[1, 4](da, db)
    np.testing.assert_array_equal(a, b)
    with cuda.mapped(a) as one:  # one array: the array itself, as numba yields
        assert isinstance(one, cuda.DeviceNDArray) and one.shape == (4,)


def test_managed_array():
    # numba: managed_array(shape, dtype, strides=None, order='C', stream=0, attach_global=True) -> ManagedNDArray
    a = cuda.managed_array((4, 2), np.int32, None, "F")
    assert isinstance(a, np.ndarray) and a.flags.f_contiguous and cuda.is_cuda_array(a)
    a[:] = 1

    @cuda.jit
    def double(x):
        i = cuda.grid(1)
        if i < x.shape[0]:
            x[i, 0] *= 2

    double[1, 4](a)
    assert a[:, 0].tolist() == [2, 2, 2, 2] and a[:, 1].tolist() == [1, 1, 1, 1]
    assert cuda.as_cuda_array(a).__cuda_array_interface__["data"][0] == a.ctypes.data
    assert hip_driver.hip_api.PROTOTYPES["hipMallocManaged"] == ("hipError_t", ("void**", "size_t", "unsigned int"))


def test_small_device_array_and_dispatcher_names():
    d = cuda.to_device(np.arange(6.0).reshape(2, 3))
    s = cuda.stream()
    assert d.ravel(stream=s).stream is s and d.ravel().shape == (6,)
    with pytest.raises(ValueError, match="copy=False"):
        d.__array__(copy=False)  # numba: a copy is always made
    assert d.__cuda_memory__ and d.__cuda_ndarray__

    @cuda.jit
    def inc(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    h = np.zeros(4)
    inc.configure(1, 4)(h)  # numba's k.configure(griddim, blockdim, stream=0, sharedmem=0)
    inc.configure(1, 4, s, 0)(h)
    assert h.tolist() == [2, 2, 2, 2]
