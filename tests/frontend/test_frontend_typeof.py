"""typeof: the kernel type of launch arguments."""

import numpy as np
import pytest

from pykern.frontend import typeof
from pykern.frontend import types as T


@pytest.mark.parametrize(
    "value, expected",
    [
        (True, T.boolean),
        (np.True_, T.boolean),
        (0, T.int64),
        (-(1 << 63), T.int64),
        ((1 << 63) - 1, T.int64),
        (1 << 63, T.uint64),
        ((1 << 64) - 1, T.uint64),
        (2.5, T.float64),
        (np.float16(1), T.float16),
        (np.float32(1), T.float32),
        (np.float64(1), T.float64),
        (np.int8(1), T.int8),
        (np.uint8(1), T.uint8),
        (np.int16(1), T.int16),
        (np.uint16(1), T.uint16),
        (np.int32(1), T.int32),
        (np.uint32(1), T.uint32),
        (np.int64(1), T.int64),
        (np.uint64(1), T.uint64),
        ((1, 2.0), T.Tuple((T.int64, T.float64))),
        ((), T.Tuple(())),
        ((np.float32(1), (True, 3)), T.Tuple((T.float32, T.Tuple((T.boolean, T.int64))))),
    ],
)
def test_scalars_and_tuples(value, expected):
    assert typeof(value) == expected


def test_arrays_layouts():
    a = np.zeros((3, 4), np.float32)
    assert typeof(a) == T.Array(T.float32, 2, "C")
    assert typeof(np.asfortranarray(a)) == T.Array(T.float32, 2, "F")
    assert typeof(a[:, ::2]) == T.Array(T.float32, 2, "A")
    assert typeof(a.T) == T.Array(T.float32, 2, "F")
    assert typeof(np.zeros(5, np.int32)) == T.Array(T.int32, 1, "C")
    assert typeof(np.zeros(10, np.int32)[::2]) == T.Array(T.int32, 1, "A")
    assert typeof(np.zeros((1, 5))) == T.Array(T.float64, 2, "C")
    assert typeof(np.zeros((2, 3, 4, 5), np.uint8)) == T.Array(T.uint8, 4, "C")
    assert typeof(np.array(3.0)) == T.Array(T.float64, 0, "C")
    assert typeof(np.zeros(3, np.bool_)) == T.Array(T.boolean, 1, "C")
    assert typeof(np.zeros(3, np.float16)) == T.Array(T.float16, 1, "C")


def test_readonly_array():
    a = np.zeros(4)
    a.flags.writeable = False
    assert typeof(a) == T.Array(T.float64, 1, "C", readonly=True)
    assert str(typeof(a)) == "readonly float64[::1]"


class FakeDeviceArray:
    def __init__(self, shape, typestr, strides=None, readonly=False):
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "strides": strides,
            "data": (0x1000, readonly),
            "version": 3,
        }


def test_cuda_array_interface():
    # class attribute lookups go through the type, so expose it as a property there too
    class CAI:
        def __init__(self, **kw):
            self._d = FakeDeviceArray(**kw).__cuda_array_interface__

        @property
        def __cuda_array_interface__(self):
            return self._d

    assert typeof(CAI(shape=(3, 4), typestr="<f4")) == T.Array(T.float32, 2, "C")
    assert typeof(CAI(shape=(3, 4), typestr="<f4", strides=(4, 12))) == T.Array(T.float32, 2, "F")
    assert typeof(CAI(shape=(3, 4), typestr="<i8", strides=(64, 16))) == T.Array(T.int64, 2, "A")
    assert typeof(CAI(shape=(5,), typestr="|u1", readonly=True)) == T.Array(T.uint8, 1, "C", readonly=True)
    assert typeof(CAI(shape=(), typestr="<f8")) == T.Array(T.float64, 0, "C")


@pytest.mark.parametrize(
    "value, words",
    [
        ([1, 2], "list"),
        ({"a": 1}, "dict"),
        (1 << 64, "does not fit in 64 bits"),
        (-(1 << 63) - 1, "does not fit in 64 bits"),
        (np.clongdouble(1j), "complex"),
        (np.zeros(3, np.clongdouble), "complex"),
        (np.zeros(3, object), "dtype object"),
        (np.zeros(3, dtype=[("a", ">f4")]), "structured"),  # byte-swapped fields
        (np.zeros(3, ">f4"), "byte-swapped"),
        (np.zeros((1,) * 9), "0 to 8 dimensions"),
        (np.array(["x"]), "not supported"),
        ("text", "cannot pass a builtins.str"),
        (object(), "cannot pass"),
    ],
)
def test_unsupported(value, words):
    with pytest.raises(TypeError) as ei:
        typeof(value)
    assert words in str(ei.value)


def test_numpy_flags_layout_agrees_with_stride_rule():
    """typeof(ndarray) uses numpy's flags; __cuda_array_interface__ uses the strides:
    both must give the same layout for every view."""
    from pykern.core.strides import layout as _layout

    base = np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5)
    views = [
        base, base.T, base[:, :1], base[:1], base[..., ::2], base[:, ::-1], base[:0],
        base.transpose(1, 0, 2, 3), np.asfortranarray(base), base[0], base[0, 0], base[0, :, 0],
        base[:, :, :, :1], base[:1, :1, :1, :1], np.zeros((1, 5))[:, ::2], np.zeros((5, 1)).T,
    ]
    for v in views:
        t = typeof(v)
        assert t.layout == _layout(v.shape, v.strides, v.itemsize), (v.shape, v.strides)
        assert typeof(v) is t  # cached
