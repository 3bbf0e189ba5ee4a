"""numba.cuda's host API, second pass (see test_parity_host.py): each check states numba-cuda's
implemented result (numba_cuda/numba/cuda/cudadrv/devicearray.py, api.py, driver.py) and compares,
on the cpu target; the HIP host paths run against the real libamdhip64 (no device here) or, for
the copy logic, against a stand-in library that copies host memory."""

import asyncio
import ctypes
import glob
import doctest
import importlib
import os
import warnings

import numpy as np
import pytest

import pykern
import pykern as cuda
from pykern.core.errors import HipError
from pykern.runtime.hip import library as hip
from pykern.runtime.memory import arrays as memory
from pykern.runtime import driver, streams
from pykern.runtime.hip import driver as hip_driver
from pykern.runtime.device_registry import compute_capability_of


@pytest.fixture(autouse=True)
def _cpu():
    cuda.set_target("cpu")


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


class _HostAsHip:
    """Stands in for libamdhip64: "device" memory is host memory, copies are memmoves."""

    def __init__(self):
        self.calls = []

    def hipMemcpy(self, dst, src, n, kind):
        self.calls.append(("hipMemcpy", n))
        ctypes.memmove(dst, src, n)

    def hipMemcpyAsync(self, dst, src, n, kind, stream):
        self.calls.append(("hipMemcpyAsync", n))
        ctypes.memmove(dst, src, n)

    def hipStreamSynchronize(self, handle):
        self.calls.append(("hipStreamSynchronize", handle))

    def hipFree(self, ptr):
        self.calls.append(("hipFree", ptr))

    def hipHostFree(self, ptr):
        self.calls.append(("hipHostFree", ptr))


def _hip_array(host: np.ndarray):
    st = memory.Storage(host.ctypes.data, host.nbytes, "hip", 0, owner=host)
    return memory.DeviceArray(host.shape, host.strides, host.dtype, st)


def test_copy_to_host_strides_on_the_hip_path(monkeypatch):
    fake = _HostAsHip()
    monkeypatch.setattr(hip_driver, "_hip", lambda: fake)
    h = np.arange(10.0)
    d = _hip_array(h)
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
    fake = _HostAsHip()
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
    assert cuda.is_bfloat16_supported() is False


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


# --------------------------------------------------------------------------- docstring examples
def _pykern_modules():
    """Every module of the package: a docstring example anywhere is a promise to users."""
    root = os.path.dirname(pykern.__file__)
    for path in sorted(glob.glob(os.path.join(root, "**", "*.py"), recursive=True)):
        rel = os.path.relpath(path, os.path.dirname(root))[:-3].replace(os.sep, ".")
        yield rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def _doctests():
    for name in _pykern_modules():
        if name == "pykern.__main__":
            continue  # running it is the CLI
        for t in doctest.DocTestFinder().find(importlib.import_module(name)):
            if t.examples:
                yield pytest.param(t, id=t.name)


@pytest.mark.parametrize("test", list(_doctests()))
def test_docstring_examples_hold(test):
    if any('"hip"' in e.source for e in test.examples) and not hip.available()[0]:
        pytest.skip("the example needs an AMD GPU")
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runner.run(test, out=lambda s: pytest.fail(s, pytrace=False))
    assert runner.failures == 0
