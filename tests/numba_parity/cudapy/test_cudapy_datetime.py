"""numba-cuda's ``tests/cudapy/test_datetime.py`` (see conftest.py): datetime64/timedelta64 in kernels
and ufuncs."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_datetime_kernels():
    # test_datetime.py test_basic_datetime_kernel / test_scalar_datetime_kernel
    @cuda.jit
    def foo(start, end, delta):
        for i in range(cuda.grid(1), delta.size, cuda.gridsize(1)):
            delta[i] = end[i] - start[i]

    rng = np.random.RandomState(0)
    arr1 = np.arange("2005-02", "2006-02", dtype="datetime64[D]")
    arr2 = arr1 + rng.randint(0, 10000, arr1.size)
    delta = np.zeros_like(arr1, dtype="timedelta64[D]")
    foo[1, 32](arr1, arr2, delta)
    np.testing.assert_array_equal(delta, arr2 - arr1)
    assert delta.dtype == np.dtype("timedelta64[D]")

    @cuda.jit
    def bar(dates, target, delta, matches, outdelta):
        for i in range(cuda.grid(1), matches.size, cuda.gridsize(1)):
            matches[i] = dates[i] == target
            outdelta[i] = dates[i] - delta

    target = arr1[5]
    d = arr1[6] - arr1[5]
    matches = np.zeros_like(arr1, dtype=np.bool_)
    outdelta = np.zeros_like(arr1, dtype="datetime64[D]")
    bar[1, 32](arr1, target, d, matches, outdelta)
    assert list(matches.nonzero()[0]) == [5]
    np.testing.assert_array_equal(outdelta, arr1 - d)


def test_datetime_ufuncs_and_views():
    # test_datetime.py test_ufunc / test_gufunc / test_datetime_view_as_int64 /
    # test_timedelta_view_as_int64
    datetime_t = cuda.from_dtype(np.dtype("datetime64[D]"))
    timedelta_t = cuda.from_dtype(np.dtype("timedelta64[D]"))

    @cuda.vectorize([(datetime_t, datetime_t)], target="cuda")
    def timediff(start, end):
        return end - start

    @cuda.guvectorize([(datetime_t, datetime_t, timedelta_t[:])], "(),()->()", target="cuda")
    def gtimediff(start, end, out):
        out[0] = end - start

    rng = np.random.RandomState(1)
    arr1 = np.arange("2005-02", "2006-02", dtype="datetime64[D]")
    arr2 = arr1 + rng.randint(0, 10000, arr1.size)
    for f in (timediff, gtimediff):
        got = f(arr1, arr2)
        np.testing.assert_array_equal(got, arr2 - arr1)
        assert got.dtype == np.dtype("timedelta64[D]")

    for arr in (arr1, arr1 - (arr1 - 1)):
        darr = cuda.to_device(arr)
        viewed = darr.view(np.int64)
        np.testing.assert_array_equal(arr.view(np.int64), viewed.copy_to_host())
        assert viewed.gpu_data == darr.gpu_data


def test_device_array_gpu_data():
    # numba's DeviceNDArray.gpu_data (test_datetime.py's views, test_array.py's
    # a.gpu_data.device_pointer): the memory's first byte, shared by views from that byte
    d = cuda.to_device(np.arange(10, dtype=np.int64))
    assert d.view(np.float64).gpu_data == d.gpu_data
    assert int(d.gpu_data.device_pointer) == d.device_ctypes_pointer.value
    s = d[3:]
    assert int(s.gpu_data.device_pointer) - int(d.gpu_data.device_pointer) == 24
    assert s.gpu_data.size == 56
    g = d.gpu_data
    del d, s
    import gc

    gc.collect()
    assert g.size == 80
