"""A launch's first step, ``launch_types``: one pass over the arguments that returns what the
later steps need -- the types, the arguments to pass (foreign arrays viewed as DeviceArrays) and
the fast path's guards -- and the contracts it rests on: ``typeof.type_key`` (equal keys, equal
types), ``typeof.array_type`` (a device array's type, as its interface would give it) and
``memory.foreign_array`` (which arguments are another library's arrays)."""

import numpy as np
import pytest

import pykern as cuda
from pykern.core.errors import LaunchError
from pykern.dispatch.argument_types import device_array_type, launch_types
from pykern.frontend.typeof import array_type, type_key, typeof
from pykern.runtime.backends import BACKENDS
from pykern.runtime.memory.arrays import DeviceArray, foreign_array


class DLPackOnly:
    """Another library's host array that offers only ``__dlpack__`` (as a torch CPU tensor does)."""

    def __init__(self, arr):
        self._arr = arr

    def __dlpack__(self, **kw):
        return self._arr.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


class CAIOnly:
    """Another library's array described by ``__cuda_array_interface__`` (host memory here)."""

    def __init__(self, arr):
        self._arr = arr
        self.__cuda_array_interface__ = {"shape": arr.shape, "typestr": arr.dtype.str, "strides": arr.strides,
                                         "data": (arr.ctypes.data, False), "version": 3}


def _nested():
    """A record dtype with a record field, made anew (numpy renames fields in place)."""
    return np.dtype([("a", np.dtype([("x", "<f4"), ("y", "<i4")]))])


_VALUES = [
    0, 1, -5, 1 << 62, -(1 << 63), 2.5, -0.0, float("nan"), True, False,
    np.float32(1), np.int8(3), np.uint64(7), np.bool_(True), np.complex64(1j),
    np.zeros(3, np.float32), np.zeros((2, 3)), np.zeros((2, 3)).T, np.zeros((2, 3))[:, ::2],
    np.zeros((1, 3), np.int16), np.zeros(0), np.zeros((3, 1)).T, np.zeros(4, _nested()),
]


def test_equal_type_keys_mean_equal_types():
    """The launch memoises types by ``type_key``: two values with one key must have one type
    (a read-only array, a renamed nested record field and every layout count)."""
    ro = np.zeros(3, np.float32)
    ro.flags.writeable = False
    renamed = np.zeros(4, _nested())
    renamed.dtype["a"].names = ("u", "v")  # numpy renames in place: the outer dtype's hash does not change
    values = _VALUES + [ro, renamed]
    seen = {}
    for v in values:
        key = type_key(v)
        if key is None:
            continue
        t = typeof(v)
        assert seen.setdefault(key, t) == t, (v, key)
    assert type_key(ro) != type_key(np.zeros(3, np.float32))
    assert type_key(renamed) != type_key(np.zeros(4, _nested()))
    assert type_key(1 << 63) is None and typeof(1 << 63) != typeof(1)  # uint64: only typeof tells


@pytest.mark.parametrize("host", [np.zeros((3, 4), np.float32), np.zeros((3, 4)).T, np.zeros((4, 6))[::2, 1:],
                                  np.zeros(5, np.int64), np.zeros(4, _nested())])
def test_a_device_arrays_type_is_its_interfaces(host):
    d = cuda.to_device(host)
    assert array_type(d.dtype, d.shape, d.strides, False) == typeof(d)  # typeof reads __cuda_array_interface__
    view = d[1:]
    assert device_array_type(view) == typeof(view) and view._pk_type is device_array_type(view)


def test_foreign_array_tells_another_librarys_array():
    host = np.arange(6.0).reshape(2, 3)
    d = cuda.to_device(host)
    for plain in (host, host.view(np.recarray), np.float32(1), 3, 2.5, True, (host,), "text", None):
        assert foreign_array(plain, "cpu") is None
    assert foreign_array(d, "cpu") is d
    for wrapper in (DLPackOnly(host), CAIOnly(host)):
        v = foreign_array(wrapper, "cpu")
        assert type(v) is DeviceArray and v.shape == host.shape and v.strides == host.strides
        np.testing.assert_array_equal(v.copy_to_host(), host)  # the same memory, not a copy
        assert v.ptr == host.ctypes.data


def test_one_pass_returns_types_arguments_and_guards():
    cuda.set_target("cpu")
    cpu = BACKENDS["cpu"]
    d = cuda.to_device(np.zeros(4, np.float32))
    a = np.zeros((2, 2))
    args = (d, a, 3, 2.5, np.int16(1))
    types, passed, guards = launch_types(args, "k", "cpu", cpu)
    assert types == tuple(typeof(v) for v in args) and passed is args
    assert [g[0] for g in guards] == ["device", "ndarray", "scalar", "scalar", "scalar"]
    assert guards[0][1] is types[0] and guards[1][1] is a.dtype and guards[4][1] is np.int16
    assert launch_types(args, "k", "cpu")[2] is None  # no backend: no guards asked for

    # a foreign array is passed as the DeviceArray viewing it: the arguments are a new tuple, no guards
    host = np.arange(4.0)
    types, passed, guards = launch_types((DLPackOnly(host), 1), "k", "cpu", cpu)
    assert type(passed[0]) is DeviceArray and passed[0].ptr == host.ctypes.data and passed[1] == 1
    assert types[0] == typeof(host) and passed[0]._pk_type is types[0] and guards is None

    # what a fast path cannot check cheaply gives no guards; the types are still all there
    for odd in ((1, 2), 1 << 63, np.datetime64("2020-01-01", "D")):
        types, passed, guards = launch_types((a, odd), "k", "cpu", cpu)
        assert len(types) == 2 and guards is None
    # a target whose launcher copies numpy arrays cannot guard them
    assert launch_types((a, 1), "k", "hip", BACKENDS["hip"])[2] is None


def test_a_bad_argument_is_a_launch_error_naming_it():
    with pytest.raises(LaunchError, match=r"k: argument 2: .*list"):
        launch_types((1, [1, 2]), "k", "cpu")
    with pytest.raises(LaunchError, match=r"k: argument 1 \(DLPackOnly\): "):
        launch_types((DLPackOnly(np.zeros(2, np.float16).view(np.dtype([("h", "<f2")]))),), "k", "cpu")


def test_another_librarys_zero_dim_array_is_an_array_argument():
    """A 0-d torch tensor is an array (viewed through DLPack, as any other tensor), not a scalar
    typed by its dtype (it has no ``__cuda_array_interface__`` on the cpu: that was a LaunchError)."""
    torch = pytest.importorskip("torch", reason="optional: pip install torch==2.13.0 (CPU build)")
    cuda.set_target("cpu")

    @cuda.jit
    def double_it(a, out):
        out[0] = a[()] * 2

    out = np.zeros(1)
    double_it[1, 1](torch.tensor(3.5, dtype=torch.float64), out)
    assert out[0] == 7.0
    types, passed, _ = launch_types((torch.tensor(1, dtype=torch.int32),), "k", "cpu")
    assert str(types[0]) == str(typeof(np.zeros((), np.int32))) and type(passed[0]) is DeviceArray


def test_numpy_scalars_are_typed_once_per_class_and_dtype():
    for v in (np.float32(1), np.int8(-3), np.bool_(False), np.datetime64("2020-01-01", "D"), np.complex128(1j)):
        assert type_key(v) == (type(v), v.dtype) and typeof(v) == typeof(type(v)(0) if v.dtype.kind != "M" else v)
    rec = np.zeros(1, _nested())[0]
    assert type_key(rec)[0] is np.void and launch_types((rec,), "k", "cpu")[0][0] == typeof(rec)
