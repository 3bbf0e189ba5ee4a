"""``pykern.core.strides``: numpy's layout rules on (shape, strides, itemsize), checked against numpy's own
answers for the same views (``as_strided`` over a buffer, ``flags``, ``byte_bounds``), and its users
(device arrays, launch types, numba's ``is_contiguous``) giving those answers."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numpy.lib.stride_tricks import as_strided

from pykern.core import strides as S
from pykern.frontend.typeof import typeof
from pykern.numba_compat.cudadrv.devicearray import is_contiguous as numba_is_contiguous
from pykern.runtime.memory.arrays import to_device

ITEMSIZES = (1, 2, 4, 8, 16)


@st.composite
def views(draw):
    """``(shape, strides, itemsize)`` of a view numpy can make over a small buffer."""
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    itemsize = draw(st.sampled_from(ITEMSIZES))
    kinds = st.one_of(st.sampled_from([0, itemsize, -itemsize]), st.integers(-4, 4).map(lambda k: k * itemsize))
    base = list(S.c_strides(shape, itemsize)) if draw(st.booleans()) else list(S.f_strides(shape, itemsize))
    strides = tuple(draw(kinds) if draw(st.integers(0, 3)) == 0 else s for s in base)
    return shape, strides, itemsize


def _numpy_view(shape, strides, itemsize):
    lo, hi = S.span(shape, strides, itemsize)
    buf = np.zeros(max(hi - lo, itemsize) + 64, np.uint8)
    start = buf[-lo:] if lo else buf
    return as_strided(start.view(f"V{itemsize}")[:1] if itemsize != 1 else start, shape=shape, strides=strides)


@settings(max_examples=400, deadline=None)
@given(views())
def test_contiguity_is_numpys(view):
    shape, strides, itemsize = view
    a = _numpy_view(shape, strides, itemsize)
    assert S.is_contiguous(shape, strides, itemsize, "C") == a.flags.c_contiguous
    assert S.is_contiguous(shape, strides, itemsize, "F") == a.flags.f_contiguous


@settings(max_examples=300, deadline=None)
@given(views())
def test_span_is_numpys_byte_bounds(view):
    shape, strides, itemsize = view
    a = _numpy_view(shape, strides, itemsize)
    lo, hi = S.span(shape, strides, itemsize)
    if a.size:
        bounds = np.lib.array_utils.byte_bounds(a) if hasattr(np.lib, "array_utils") else np.byte_bounds(a)
        first = a.__array_interface__["data"][0]
        assert (first + lo, first + hi) == tuple(bounds)
    else:
        assert (lo, hi) == (0, 0)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (1, 4, 1, 5), (3, 1)])
@pytest.mark.parametrize("itemsize", [1, 4, 8])
def test_dense_strides_are_numpys(shape, itemsize):
    # (numpy's strides of empty arrays vary by version; pykern counts an extent 0 as 1)
    dt = np.dtype(f"V{itemsize}")
    assert S.c_strides(shape, itemsize) == np.empty(shape, dt).strides
    assert S.f_strides(shape, itemsize) == np.empty(shape, dt, order="F").strides


@settings(max_examples=200, deadline=None)
@given(views())
def test_the_users_of_the_rule_agree_with_numpy(view):
    shape, strides, itemsize = view
    if itemsize not in (4, 8):
        return
    a = _numpy_view(shape, strides, itemsize).view(np.float32 if itemsize == 4 else np.float64)
    if not a.flags.writeable:
        a = a.copy()
    # a device array over the same layout (a host view through __cuda_array_interface__)
    cai = {"shape": a.shape, "strides": a.strides, "typestr": a.dtype.str, "data": (a.ctypes.data, False),
           "version": 3}
    d = to_device(np.zeros(1), target="cpu")  # any device array: only its class is needed below
    d = type(d)(a.shape, a.strides, a.dtype, d.storage, a.ctypes.data)
    assert (d.is_c_contiguous(), d.is_f_contiguous()) == (a.flags.c_contiguous, a.flags.f_contiguous)
    layout = "C" if a.flags.c_contiguous else ("F" if a.ndim > 1 and a.flags.f_contiguous else "A")
    assert S.layout(a.shape, a.strides, a.itemsize) == layout
    # a launch types an array through __cuda_array_interface__ as it types the numpy array (flags)
    assert typeof(type("CAI", (), {"__cuda_array_interface__": cai})()) == typeof(a)
    # numba's is_contiguous: C-contiguous once zero-stride and length-1 axes are dropped
    kept = [(n, s) for n, s in zip(a.shape, a.strides) if n > 1 and s != 0]
    core = as_strided(np.zeros(1, a.dtype), [n for n, _ in kept], [s for _, s in kept]) if kept else None
    want = True if core is None else core.flags.c_contiguous
    assert numba_is_contiguous(a) == want


def test_numbas_is_contiguous_keeps_its_broadcast_rule():
    x = np.zeros(5, np.float32)
    assert numba_is_contiguous(np.broadcast_to(x, (3, 5)))  # stride 0 axis ignored
    assert not np.broadcast_to(x, (3, 5)).flags.c_contiguous
    assert not numba_is_contiguous(np.zeros((4, 6), np.float32)[:, ::2])
    assert numba_is_contiguous(np.zeros((3, 0), np.float32)[:, ::1])
