"""numba.cuda host idioms found by running numba-cuda's own tests against pykern: the
argument hints ``cuda.In``/``cuda.Out``/``cuda.InOut`` (and ``wrap_arg`` in launch
extensions), ``cuda.devicearray``, and arrays of more than 4 dimensions (numba's
reshape tests use 6) -- on the cpu target, against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda
from pykern.dispatch.arg_hints import wrap_arg

pytestmark = pytest.mark.usefixtures("cpu_target")


@cuda.jit
def set_first(a):
    a[0] = 3


@cuda.jit
def copy_plus_one(src, dst):
    for i in range(dst.size):
        dst[i] = src[i] + 1


def test_in_keeps_the_host_array_unchanged():
    a = np.zeros(4, np.int64)
    set_first[1, 1](cuda.In(a))
    assert a[0] == 0


def test_inout_and_bare_arrays_are_written_back():
    a, b = np.zeros(4, np.int64), np.zeros(4, np.int64)
    set_first[1, 1](cuda.InOut(a))
    set_first[1, 1](b)
    assert a[0] == 3 and b[0] == 3


def test_out_is_written_back_and_in_is_read():
    src = np.arange(5, dtype=np.float32)
    dst = np.full(5, -7, np.float32)
    copy_plus_one[1, 1](cuda.In(src), cuda.Out(dst))
    assert np.array_equal(dst, src + 1)


def test_hints_of_records_and_device_arrays():
    rec = np.dtype([("b", np.int32)], align=True)

    @cuda.jit
    def set_b(r):
        r[0]["b"] = 3

    h_in, h_inout = np.zeros(1, rec), np.zeros(1, rec)
    set_b[1, 1](cuda.In(h_in))
    set_b[1, 1](cuda.InOut(h_inout))
    assert h_in[0]["b"] == 0 and h_inout[0]["b"] == 3
    d = cuda.to_device(np.zeros(2, np.int64))
    set_first[1, 1](cuda.In(d))  # device memory is used as it is, whatever the hint
    assert d.copy_to_host()[0] == 3


def test_wrap_arg_in_a_launch_extension():
    class DefaultIn:
        def prepare_args(self, ty, val, **kwargs):
            return ty, wrap_arg(val, default=cuda.In)

    k = cuda.jit(set_first.py_func)
    k.extensions.append(DefaultIn())
    a, b = np.zeros(2, np.int64), np.zeros(2, np.int64)
    k[1, 1](a)
    k[1, 1](cuda.InOut(b))  # an explicit hint wins over the default
    assert a[0] == 0 and b[0] == 3
    assert isinstance(wrap_arg(a), cuda.InOut) and wrap_arg(cuda.Out(a)).value is a


def test_unknown_arguments_still_name_the_argument():
    with pytest.raises(cuda.LaunchError, match="argument 1: cannot pass"):
        set_first[1, 1](object())


def test_devicearray_module_is_numbas():
    d, new = cuda.devicearray.auto_device(2)
    assert new and d.shape == () and d.copy_to_host() == 2
    assert cuda.devicearray.DeviceNDArray is cuda.DeviceNDArray


def test_six_dimensional_array_reshape_views_and_reductions():
    @cuda.jit
    def k(a, out):
        y = a.reshape(24)
        for i in range(y.shape[0]):
            out[i] = y[i] * a.ndim
        out[24] = a[0, :, 0, 0, ::-1, 0][2, 1]
        out[25] = a.sum()
        a[0, 7, 0, 0, 2, 0] = -1

    a = np.arange(24).reshape((1, 8, 1, 1, 3, 1))
    want = a.copy()
    out = np.zeros(26, np.int64)
    k[1, 1](a, out)
    assert np.array_equal(out[:24], want.ravel() * 6)
    assert out[24] == want[0, :, 0, 0, ::-1, 0][2, 1] and out[25] == want.sum()
    assert a[0, 7, 0, 0, 2, 0] == -1


def test_eight_dimensions_in_signatures_and_local_arrays_nine_refused():
    @cuda.jit("void(float32[:,:,:,:,:,:,:,:])")
    def k(a):
        lm = cuda.local.array((2, 1, 2, 1, 2), np.float32)
        lm[1, 0, 1, 0, 1] = 3
        a[1, 1, 1, 1, 1, 1, 1, 1] = lm[1, 0, 1, 0, 1]

    a = np.zeros((2,) * 8, np.float32)
    k[1, 1](a)
    assert a[(1,) * 8] == 3 and a.sum() == 3
    with pytest.raises(cuda.LaunchError, match="0 to 8 dimensions"):
        set_first[1, 1](np.zeros((1,) * 9))
