"""numba.cuda's host-side API, as ported programs use it (``import pykern as cuda``), on the cpu
target: each check states numba.cuda's documented / implemented result and compares."""

import numpy as np
import pytest

import pykern as cuda


@pytest.fixture(autouse=True)
def _cpu():
    cuda.set_target("cpu")


@cuda.jit
def _add(a, x):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += x


# --------------------------------------------------------------------------- transfers
def test_to_device_layouts_round_trip():
    a = np.arange(12.0).reshape(3, 4)
    f = np.asfortranarray(a)
    df = cuda.to_device(f)
    assert df.strides == (8, 24) and df.copy_to_host().flags.f_contiguous
    np.testing.assert_array_equal(df.copy_to_host(), a)
    ds = cuda.to_device(a[:, ::2])  # strided: arrives dense, same values
    assert ds.shape == (3, 2) and ds.is_c_contiguous()
    np.testing.assert_array_equal(ds.copy_to_host(), a[:, ::2])
    z = cuda.to_device(np.array(3.0))
    assert z.shape == () and z.copy_to_host()[()] == 3.0
    dt = np.dtype([("x", np.int32), ("y", np.float64)])
    s = np.zeros(3, dt)
    s["x"], s["y"] = [1, 2, 3], [0.5, 0.25, 0.125]
    np.testing.assert_array_equal(cuda.to_device(s).copy_to_host(), s)
    assert cuda.to_device([1, 2, 3]).dtype == np.int64  # array-likes go through np.asarray


def test_copy_to_host_with_ary_and_stream():
    d = cuda.to_device(np.arange(10.0))
    h = np.empty(10)
    assert d.copy_to_host(h) is h and h[3] == 3.0
    s = cuda.stream()
    out = d.copy_to_host(stream=s)
    s.synchronize()
    np.testing.assert_array_equal(out, np.arange(10.0))
    with s.auto_synchronize():
        e = cuda.to_device(np.ones(4), stream=s)
    np.testing.assert_array_equal(e.copy_to_host(), np.ones(4))


def test_copy_dtype_mismatch_is_type_error_shape_mismatch_value_error():
    # numba's check_array_compatibility: dtype -> TypeError, shape -> ValueError
    d = cuda.to_device(np.arange(10.0))
    with pytest.raises(TypeError):
        d.copy_to_host(np.empty(10, np.float32))
    with pytest.raises(TypeError):
        d.copy_to_device(np.ones(10, np.float32))
    with pytest.raises(ValueError):
        d.copy_to_host(np.empty(9))
    with pytest.raises(ValueError):
        d.copy_to_device(np.ones(9))


def test_copy_shapes_equal_after_squeeze_are_compatible():
    # numba compares squeezed shapes: a (10,) array copies to and from (1, 10) / (10, 1)
    d = cuda.to_device(np.arange(10.0))
    h = np.zeros((1, 10))
    assert d.copy_to_host(h) is h
    np.testing.assert_array_equal(h[0], np.arange(10.0))
    d.copy_to_device(np.full((10, 1), 7.0))
    np.testing.assert_array_equal(d.copy_to_host(), np.full(10, 7.0))
    e = cuda.device_array((1, 10))
    e.copy_to_device(d)
    np.testing.assert_array_equal(e.copy_to_host(), np.full((1, 10), 7.0))


def test_device_array_and_like():
    assert cuda.device_array((3, 4), order="F").strides == (8, 24)
    assert cuda.device_array(3).dtype == np.float64  # numba's default dtype
    assert cuda.device_array(np.int64(5), dtype=np.int32).shape == (5,)
    assert cuda.device_array([2, 3]).shape == (2, 3)
    f = np.asfortranarray(np.zeros((3, 4), np.float32))
    like = cuda.device_array_like(f)
    assert like.strides == (4, 12) and like.dtype == np.float32
    assert cuda.device_array_like(cuda.to_device(np.zeros(5))).shape == (5,)


# --------------------------------------------------------------------------- DeviceNDArray
def test_slicing_views_and_attributes():
    d = cuda.to_device(np.arange(10.0))
    np.testing.assert_array_equal(d[1:5].copy_to_host(), np.arange(1.0, 5.0))
    np.testing.assert_array_equal(d[::2].copy_to_host(), np.arange(0.0, 10.0, 2))
    np.testing.assert_array_equal(d[::-1].copy_to_host(), np.arange(9.0, -1.0, -1))
    assert not d[::2].is_c_contiguous() and d.is_c_contiguous()
    assert (d.shape, d.strides, d.dtype, d.size, d.nbytes, d.ndim, len(d)) == ((10,), (8,), np.float64, 10, 80, 1, 10)
    assert d[::2].nbytes == 40
    np.testing.assert_array_equal(np.asarray(d), np.arange(10.0))
    assert d.reshape(2, 5).shape == (2, 5) and d.reshape((5, 2)).shape == (5, 2) and d.reshape(-1, 5).shape == (2, 5)
    assert cuda.to_device(np.zeros((3, 4))).ravel().shape == (12,)
    assert d.view(np.int64).dtype == np.int64 and d.view(np.uint8).shape == (80,)
    assert [p.copy_to_host().tolist() for p in d.split(4)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_getitem_of_an_element_is_a_host_scalar():
    d = cuda.to_device(np.arange(10.0))
    v = d[3]
    assert isinstance(v, np.float64) and v == 3.0
    assert d[-1] == 9.0 and d[np.int64(2)] == 2.0
    m = cuda.to_device(np.arange(6.0).reshape(2, 3))
    assert m[1, 2] == 5.0
    np.testing.assert_array_equal(m[1].copy_to_host(), [3.0, 4.0, 5.0])
    with pytest.raises(IndexError):
        d[10]


def test_getitem_empty_tuple_of_0d_array_is_a_host_scalar():
    # numba: dummyarray gives an Element for a full index, so d[()] of a 0-d array is a host value
    z = cuda.to_device(np.array(3.5))
    v = z[()]
    assert not isinstance(v, cuda.DeviceNDArray) and v == 3.5
    assert isinstance(z[...], cuda.DeviceNDArray)  # numpy: a[...] stays an array


def test_getitem_setitem_bind_alloc_size_methods():
    # numba's DeviceNDArray.getitem(item, stream=0) / setitem(key, value, stream=0) / bind(stream)
    s = cuda.stream()
    d = cuda.to_device(np.arange(10.0))
    assert d.getitem(3) == 3.0 and d.getitem(4, stream=s) == 4.0
    np.testing.assert_array_equal(d.getitem(slice(0, 2)).copy_to_host(), [0.0, 1.0])
    d.setitem(3, 30.0)
    d.setitem(slice(4, 6), np.array([40.0, 50.0]), stream=s)
    s.synchronize()
    np.testing.assert_array_equal(d.copy_to_host()[3:6], [30.0, 40.0, 50.0])
    b = d.bind(s)
    assert b.stream is s and b.shape == d.shape
    np.testing.assert_array_equal(b.copy_to_host(), d.copy_to_host())
    assert d.alloc_size == 80 and d[::2].alloc_size == 72


def test_setitem_scalar_and_array():
    e = cuda.to_device(np.zeros(5))
    e[1] = 3
    e[2:4] = np.array([7.0, 8.0])
    e[4:] = 9
    np.testing.assert_array_equal(e.copy_to_host(), [0.0, 3.0, 7.0, 8.0, 9.0])


def test_copy_to_device_from_host_and_device():
    e = cuda.device_array(10)
    e.copy_to_device(np.arange(10.0))
    f = cuda.device_array_like(e)
    f.copy_to_device(e)
    np.testing.assert_array_equal(f.copy_to_host(), np.arange(10.0))
    assert cuda.to_device(np.ones(10), to=f) is f
    assert cuda.to_device(f) is f  # a device array is returned as is (numba's auto_device)


def test_pinned_and_mapped_arrays():
    p = cuda.pinned_array((2, 3), dtype=np.float32)
    assert isinstance(p, np.ndarray) and p.shape == (2, 3) and p.dtype == np.float32
    m = cuda.mapped_array((2, 3), order="F")
    assert isinstance(m, np.ndarray) and m.flags.f_contiguous
    with cuda.pinned(p):
        pass


# --------------------------------------------------------------------------- streams, events, devices
def test_streams_events_and_synchronize():
    s = cuda.stream()
    e1, e2 = cuda.event(), cuda.event()
    e1.record(s)
    e2.record(s)
    e2.synchronize()
    assert e1.elapsed_time(e2) >= 0.0 and cuda.event_elapsed_time(e1, e2) == e1.elapsed_time(e2)
    cuda.synchronize()
    assert s.query() is True
    assert cuda.is_available() is True
    free, total = cuda.current_context().get_memory_info()
    assert 0 < free <= total


def test_unrecorded_event_query_synchronize_wait_succeed():
    # CUDA (and HIP): querying/synchronizing/waiting on a never-recorded event succeeds at once
    e = cuda.event()
    assert e.query() is True
    e.synchronize()
    e.wait(cuda.stream())
    with pytest.raises(RuntimeError):  # cuEventElapsedTime fails on an unrecorded event
        e.elapsed_time(cuda.event())


def test_default_stream_spellings():
    for f in (cuda.default_stream, cuda.legacy_default_stream, cuda.per_thread_default_stream):
        s = f()
        s.synchronize()
        a = np.zeros(8, np.float32)
        _add[1, 8, s](a, 1)
        assert a.sum() == 8


# --------------------------------------------------------------------------- launching
@pytest.mark.parametrize("launch", [
    lambda a: _add[1, 8](a, 1),
    lambda a: _add[1, 8, cuda.stream()](a, 1),
    lambda a: _add[1, 8, cuda.stream(), 0](a, 1),
    lambda a: _add[1, 8, 0, 0](a, 1),
    lambda a: _add[(1,), (8,)](a, 1),
    lambda a: _add[(1, 1, 1), (8, 1, 1)](a, 1),
    lambda a: _add[np.int64(1), np.int32(8)](a, 1),
    lambda a: _add.forall(8)(a, 1),
], ids=["gb", "gbs", "gbss", "gb00", "tuples", "3tuples", "npints", "forall"])
def test_launch_configuration_forms(launch):
    a = np.zeros(8, np.float32)
    launch(a)
    cuda.synchronize()
    np.testing.assert_array_equal(a, np.ones(8, np.float32))


def test_launch_argument_errors():
    a = np.zeros(8, np.float32)
    with pytest.raises(Exception, match="argument"):
        _add[1, 8](a)
    with pytest.raises(Exception, match="argument"):
        _add[1, 8](a, 1, 2)
    with pytest.raises(Exception, match="list"):
        _add[1, 8]([1.0, 2.0], 1)
    with pytest.raises(TypeError):
        _add[1, 8](a=a, x=1)

    @cuda.jit
    def tup(a, t):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = t[0] + t[1]

    tup[1, 8](a, (1.0, 2))  # a tuple is fine
    assert (a == 3).all()


def test_eager_signature_and_introspection():
    @cuda.jit("void(float32[:], int32)")
    def ek(a, x):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += x

    assert len(ek.overloads) == 1 and len(ek.definitions) == 1  # compiled at decoration
    a = np.zeros(8, np.float32)
    ek[1, 8](a, 2)
    assert (a == 2).all()
    with pytest.raises(Exception):
        ek[1, 8](np.zeros(8, np.int64), 2)  # no implicit array conversion
    sk = _add.specialize(a, 1)
    sk[1, 8](a, 1)
    assert (a == 3).all()
    with pytest.raises(Exception):
        sk[1, 8](np.zeros(8), 1)


def test_kernel_signature_must_return_void():
    # numba.cuda.jit: "CUDA kernel must have void return type." (TypeError)
    def k(a, x):
        a[0] = x

    with pytest.raises(TypeError, match="void"):
        cuda.jit("int32(float32[:], int32)")(k)
    cuda.jit("(float32[:], int32)")(k)  # no return type: void
    f = cuda.jit("int32(int32)", device=True)(lambda x: x + 1)
    assert f is not None


def test_device_function_called_from_host_raises():
    @cuda.jit(device=True)
    def dev(x):
        return x + 1

    with pytest.raises(Exception, match="kernel"):
        dev(1)


def test_squeeze_view():
    # numba's DeviceNDArray.squeeze(axis=None, stream=0): a view without length-1 axes
    d = cuda.to_device(np.arange(6.0).reshape(1, 6, 1))
    assert d.squeeze().shape == (6,) and d.squeeze(axis=0).shape == (6, 1) and d.squeeze((0, 2)).shape == (6,)
    np.testing.assert_array_equal(d.squeeze().copy_to_host(), np.arange(6.0))
    with pytest.raises(ValueError):
        d.squeeze(axis=1)


def test_from_cuda_array_interface_takes_the_dict():
    # numba: cuda.from_cuda_array_interface(desc, owner=None, sync=True) takes the interface dict
    src = cuda.to_device(np.arange(5.0))
    v = cuda.from_cuda_array_interface(src.__cuda_array_interface__, owner=src)
    assert v.shape == (5,) and v.dtype == np.float64
    v[0] = 42.0  # zero-copy: the write is seen through src
    assert src[0] == 42.0
    assert cuda.from_cuda_array_interface(src.__cuda_array_interface__, sync=False).shape == (5,)


@pytest.mark.usefixtures("cpu_uncached")
def test_nvidia_only_host_names_are_refused_naming_the_feature():
    with pytest.raises(cuda.CompileError, match="compile_ptx is not supported.*pykern.compile"):
        cuda.compile_ptx(lambda a: None, "void(float32[:])")
    with pytest.raises(cuda.CompileError, match="compile_ptx_for_current_device is not supported"):
        cuda.compile_ptx_for_current_device(lambda a: None, "void(float32[:])")
    with pytest.raises(cuda.CompileError, match="compile_for_current_device is not supported"):
        cuda.compile_for_current_device(lambda a: None, "void(float32[:])")
    with pytest.raises(cuda.CompileError, match="set_memory_manager is not supported.*External Memory"):
        cuda.set_memory_manager(object)


@pytest.mark.usefixtures("cpu_uncached")
def test_chunked_pipeline_on_streams_with_pinned_and_mapped_memory():
    @cuda.jit
    def scale_shift(a, v):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = a[i] * 2 + v

    N, nstreams = 1 << 14, 4
    chunk = N // nstreams
    h = cuda.pinned_array(N, dtype=np.float32)
    h[:] = np.arange(N, dtype=np.float32)
    out = cuda.pinned_array_like(h)
    streams = [cuda.stream() for _ in range(nstreams)]
    start, end = cuda.event(), cuda.event()
    start.record()
    for k, s in enumerate(streams):
        sl = slice(k * chunk, (k + 1) * chunk)
        d = cuda.to_device(h[sl], stream=s)
        scale_shift[(chunk + 255) // 256, 256, s](d, np.float32(k))
        d.copy_to_host(out[sl], stream=s)
    end.record()
    end.synchronize()
    assert cuda.event_elapsed_time(start, end) >= 0
    for s in streams:
        s.synchronize()
    assert np.array_equal(out, np.arange(N, dtype=np.float32) * 2 + np.repeat(np.arange(nstreams), chunk))

    m = cuda.mapped_array(16, dtype=np.int64)
    m[:] = 3

    @cuda.jit
    def sq(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = a[i] * a[i] + i

    sq[1, 16](m)
    cuda.synchronize()
    assert np.array_equal(m, 9 + np.arange(16))


@pytest.mark.usefixtures("cpu_uncached")
def test_device_array_methods_from_the_host():
    a = np.arange(24, dtype=np.float64)
    d = cuda.to_device(a)
    assert (d.shape, d.size, d.ndim, len(d), d.nbytes) == ((24,), 24, 1, 24, 192)
    assert [p.copy_to_host().tolist() for p in d.split(8)] == [a[i:i + 8].tolist() for i in (0, 8, 16)]
    d2 = d.reshape(4, 6)
    assert np.array_equal(d2.ravel().copy_to_host(), a)
    assert np.array_equal(d2[1:3, ::2].copy_to_host(), a.reshape(4, 6)[1:3, ::2])
    assert d2[2, 3] == 15
    d[2:5] = np.array([-1.0, -2.0, -3.0])
    d[0] = 100
    d2[3] = 7
    d[6:8] = 9.5
    ref = a.copy()
    ref[2:5] = [-1, -2, -3]
    ref[0] = 100
    ref[18:24] = 7
    ref[6:8] = 9.5
    s = cuda.stream()
    h = d.copy_to_host(stream=s)
    s.synchronize()
    assert np.array_equal(h, ref)
    # numba's DeviceNDArray.T is a transposed copy (its transpose kernel), C-contiguous
    assert d2.T.is_c_contiguous() and np.array_equal(d2.T.copy_to_host(), ref.reshape(4, 6).T)
    e = cuda.device_array((3, 4), dtype=np.int32, order="F")
    e.copy_to_device(np.arange(12, dtype=np.int32).reshape(3, 4))
    assert np.array_equal(e.copy_to_host(), np.arange(12).reshape(3, 4))

    @cuda.jit
    def add1(x):
        i, j = cuda.grid(2)
        if i < x.shape[0] and j < x.shape[1]:
            x[i, j] += 1

    add1[(1, 1), (8, 8)](d2)
    assert np.array_equal(d.copy_to_host(), ref + 1)


@pytest.mark.usefixtures("cpu_uncached")
def test_device_report_and_selection():
    # the "what GPU do I have" preamble programs print before their kernels
    try:
        dev = cuda.select_device(0)
    except cuda.CudaSupportError:  # numba.cuda re-exports it
        raise AssertionError("select_device(0) failed") from None
    assert cuda.get_current_device() == dev and len(cuda.gpus) >= 1
    info = {a: getattr(dev, a) for a in (
        "MULTIPROCESSOR_COUNT", "MAX_THREADS_PER_BLOCK", "WARP_SIZE", "MAX_SHARED_MEMORY_PER_BLOCK",
        "MAX_BLOCK_DIM_X", "MAX_BLOCK_DIM_Y", "MAX_BLOCK_DIM_Z", "MAX_GRID_DIM_X", "MAX_GRID_DIM_Y",
        "MAX_GRID_DIM_Z", "MAX_REGISTERS_PER_BLOCK", "TOTAL_CONSTANT_MEMORY", "CLOCK_RATE", "L2_CACHE_SIZE",
        "MAX_THREADS_PER_MULTI_PROCESSOR", "COMPUTE_CAPABILITY_MAJOR", "COMPUTE_CAPABILITY_MINOR",
        "CONCURRENT_KERNELS", "UNIFIED_ADDRESSING", "COOPERATIVE_LAUNCH")}
    assert all(isinstance(v, int) for v in info.values())
    assert (info["COMPUTE_CAPABILITY_MAJOR"], info["COMPUTE_CAPABILITY_MINOR"]) == dev.compute_capability
    assert info["MAX_BLOCK_DIM_Y"] >= 64 and info["WARP_SIZE"] in (32, 64)
    with pytest.raises(AttributeError):
        dev.NOT_AN_ATTRIBUTE

    @cuda.jit
    def fill_ones(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = 1

    tpb = min(256, info["MAX_THREADS_PER_BLOCK"])
    for gpu in cuda.gpus:
        with gpu:
            arr = cuda.device_array(1000)
            fill_ones[(1000 + tpb - 1) // tpb, tpb](arr)
            assert arr.copy_to_host().sum() == 1000


@pytest.mark.usefixtures("cpu_uncached")
def test_numba_device_attribute_names_read_hip_attributes(monkeypatch):
    # on a GPU, dev.<NAME> is hipDeviceGetAttribute of HIP's attribute of that name (no GPU here:
    # the read is recorded); the cpu device answers every name the GPU one does
    from pykern.numba_compat import host_api as compat
    from pykern.runtime import device_registry as devices
    from pykern.runtime.hip import library as hip
    from pykern.runtime.hip import api as hip_api

    asked = []
    monkeypatch.setattr(hip, "lib", lambda: "L")
    monkeypatch.setattr(devices, "_attr", lambda lib, name, dev: asked.append((lib, name, dev)) or 7)
    d = devices.Device(id=3, name="gpu", gcn_arch_name="gfx90a", arch="gfx90a", features=(), compute_units=104,
                       wave_size=64, max_shared_per_block=65536, max_threads_per_block=1024,
                       max_block_dim=(1024, 1024, 1024), max_grid_dim=(2**31 - 1,) * 3, clock_khz=1700000,
                       memory_clock_khz=1600000, total_memory=1 << 36, pci_bus_id="0000:03:00.0",
                       runtime_version=60_200_000, driver_version=60_200_000)
    assert d.MAX_REGISTERS_PER_BLOCK == 7 and d.L2_CACHE_SIZE == 7
    assert asked == [("L", "hipDeviceAttributeMaxRegistersPerBlock", 3), ("L", "hipDeviceAttributeL2CacheSize", 3)]
    assert d.WARP_SIZE == 64 and len(asked) == 2  # a field the dataclass holds is not asked again
    with pytest.raises(AttributeError):
        d.NOT_AN_ATTRIBUTE
    assert all(n in hip_api.DEVICE_ATTRIBUTES for n in devices.NUMBA_ATTRIBUTES.values())
    cpu = compat.CpuDevice()
    assert all(isinstance(getattr(cpu, n), int) for n in devices.NUMBA_ATTRIBUTES)
