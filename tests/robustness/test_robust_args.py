"""Odd kernel arguments: each either works exactly (checked against numpy) or
is refused before anything runs (LaunchError, or CompileError for a write to
a read-only array). Covers read-only arrays, negative strides, zero-size and
0-d arrays, object/structured/complex/byte-swapped dtypes, unaligned views
and scalars out of range."""

from __future__ import annotations

import numpy as np
import pytest

import cpu_helpers
import pykern as cuda
from pykern.core.errors import CompileError, LaunchError


pytestmark = pytest.mark.usefixtures("cpu_uncached")


add_one = cuda.jit(cpu_helpers.add_one, cache=False)


@cuda.jit(cache=False)
def double_into(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] * 2


@cuda.jit(cache=False)
def affine2d(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = a[i, j] * 10 + 1


@cuda.jit(cache=False)
def fill(a, s):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = s


# ----------------------------------------------------------------- read-only
def test_writing_a_read_only_array_is_refused_before_running():
    ro = np.arange(6.0)
    ro.flags.writeable = False
    with pytest.raises((CompileError, LaunchError)) as ei:
        add_one[1, 32](ro)
    assert "read-only" in str(ei.value)
    assert (ro == np.arange(6.0)).all()
    if isinstance(ei.value, CompileError):
        assert ei.value.line is not None and "a[i] += 1" in ei.value.source_line


def test_reading_read_only_and_broadcast_arrays_works():
    ro = np.arange(10.0)
    ro.flags.writeable = False
    out = np.zeros(10)
    double_into[1, 32](ro, out)
    assert (out == 2 * np.arange(10.0)).all()
    b = np.broadcast_to(np.float64(3.0), (10,))  # stride 0, read-only
    double_into[1, 32](b, out)
    assert (out == 6.0).all()


# ----------------------------------------------------------------- layouts
def test_negative_strides_read_and_write():
    base = np.arange(10.0)
    v = base[::-1]
    add_one[1, 32](v)
    assert (base == np.arange(10.0) + 1).all()
    out = np.zeros(10)
    double_into[1, 32](np.arange(10.0)[::-1], out)
    assert (out == 2 * np.arange(10.0)[::-1]).all()


@pytest.mark.parametrize("view", ["neg2d", "fortran", "transpose", "step", "neg_out"])
def test_2d_views(view):
    m = np.arange(12.0).reshape(3, 4)
    src = {"neg2d": m[::-1, ::-2], "fortran": np.asfortranarray(m), "transpose": m.T, "step": m[:, 1::2],
           "neg_out": m[:, :2]}[view]
    if view == "neg_out":
        base = np.zeros((3, 4))
        out = base[::-1, ::-2]
    else:
        out = np.zeros(src.shape)
    affine2d[(2, 2), (4, 4)](src, out)
    assert np.array_equal(out, src * 10 + 1)
    if view == "neg_out":
        assert base[:, ::2].sum() == 0  # untouched columns stay untouched


def test_unaligned_view_works_or_is_refused():
    buf = np.zeros(8 * 10 + 1, np.uint8)
    vals = np.arange(10.0) + 0.5
    buf[1:] = np.frombuffer(vals.tobytes(), np.uint8)
    un = np.frombuffer(buf.data, dtype=np.float64, count=10, offset=1)
    assert not un.flags.aligned
    out = np.zeros(10)
    try:
        double_into[1, 32](un, out)
    except LaunchError as e:
        assert "align" in str(e)
    else:
        assert (out == 2 * vals).all()


# ----------------------------------------------------------------- sizes
def test_zero_size_arrays():
    # empty views into live memory: the launches run and write nothing around them
    base = np.arange(8.0)
    add_one[1, 32](base[3:3])
    add_one.forall(0)(base[3:3])
    assert (base == np.arange(8.0)).all()
    src, out = np.arange(12.0).reshape(4, 3), np.full((4, 3), -1.0)
    affine2d[1, 1](src[:0], out[:0])
    affine2d[1, 1](src[:, :0], out[:, :0])
    assert (out == -1.0).all()
    a = np.zeros(0)
    add_one[1, 32](a)
    assert a.shape == (0,)
    affine2d[1, 1](np.zeros((0, 3)), np.zeros((0, 3)))
    affine2d[1, 1](np.zeros((3, 0)), np.zeros((3, 0)))


def test_zero_d_arrays_work():
    @cuda.jit(cache=False)
    def k(a0, out):
        out[0] = a0[()] + a0.size + a0.ndim

    out = np.zeros(1)
    k[1, 1](np.array(3.5), out)
    assert out[0] == 3.5 + 1 + 0


def test_nine_dimensions_are_refused():
    with pytest.raises(LaunchError, match="dimensions"):
        double_into[1, 1](np.zeros((1,) * 8 + (2,)), np.zeros(2))


# ----------------------------------------------------------------- dtypes
@pytest.mark.parametrize("arr,word", [
    (np.zeros(3, object), "object"),
    (np.zeros(3, [("a", ">i4"), ("b", "f8")]), "structured"),
    (np.zeros(3, np.clongdouble), "complex"),
    (np.zeros(3, "U3"), "dtype"),
    (np.zeros(3, "M8"), "need a unit"),  # datetime64[s] works; a generic datetime64 has no unit
])
def test_unsupported_dtypes_are_launch_errors(arr, word):
    with pytest.raises(LaunchError, match=word):
        add_one[1, 32](arr)


def test_byte_swapped_arrays_are_refused_with_the_conversion_named():
    # documented choice: refuse (not convert silently), and say how to convert
    bs = np.arange(10, dtype=">f8")
    with pytest.raises(LaunchError, match=r"byte-swapped.*astype"):
        add_one[1, 32](bs)
    assert (bs == np.arange(10)).all()
    good = bs.astype("float64")
    add_one[1, 32](good)
    assert (good == np.arange(10) + 1).all()


@pytest.mark.parametrize("obj", [b"abc", memoryview(np.zeros(3)), [1.0, 2.0], "x", {1: 2}])
def test_non_array_objects_are_launch_errors(obj):
    with pytest.raises(LaunchError):
        add_one[1, 32](obj)


def test_none_where_an_array_is_used_is_a_compile_error():
    # None is a kernel argument (numba's `none`); indexing it is the kernel's error, at its line
    with pytest.raises(CompileError) as e:
        add_one[1, 32](None)
    assert e.value.line is not None


# ----------------------------------------------------------------- scalars
@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 10**30, np.clongdouble(1j)])
def test_scalars_out_of_every_type_are_launch_errors(value):
    a = np.zeros(3, np.int64)
    with pytest.raises(LaunchError):
        fill[1, 32](a, value)
    assert not a.any()


def test_scalar_range_follows_the_inferred_type():
    a = np.zeros(3, np.int64)
    fill[1, 32](a, 2**63 - 1)
    assert (a == 2**63 - 1).all()
    f = np.zeros(2)
    fill[1, 32](f, np.uint64(2**64 - 1))  # typed uint64, stored into float64
    assert (f == float(2**64 - 1)).all()
    fill[1, 32](f, float("nan"))
    assert np.isnan(f).all()


@pytest.mark.parametrize("value", [2**70, -(2**64), 1.5, "3"])
def test_eager_int32_signature_refuses_values_it_cannot_hold(value):
    # (ints up to 64 bits keep their low bits, as numba's ctypes.c_int32(v): see below)
    @cuda.jit("void(int32[:], int32)", cache=False)
    def fill32(a, s):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = s

    a = np.zeros(3, np.int32)
    with pytest.raises(LaunchError):
        fill32[1, 32](a, value)
    assert not a.any()


def test_eager_signature_refuses_the_wrong_array_dtype():
    @cuda.jit("void(float32[:], float32[:])", cache=False)
    def k(a, out):
        i = cuda.grid(1)
        if i < a.size:
            out[i] = a[i]

    with pytest.raises(LaunchError, match="signature"):
        k[1, 32](np.zeros(3), np.zeros(3, np.float32))


def test_wrong_argument_count_is_a_launch_error():
    with pytest.raises(LaunchError, match="argument"):
        add_one[1, 32]()
    with pytest.raises(LaunchError, match="argument"):
        add_one[1, 32](np.zeros(2), np.zeros(2))


def test_python_ints_beyond_a_declared_integer_parameter_keep_its_low_bits_as_numba():
    """numba types 0xFFFFFFFF as int64, converts it to the declared int32 and passes it with
    ctypes.c_int32(v): the low bits, -1. Integers past uint64 have no numba type: an error."""
    import ctypes

    @cuda.jit("void(int64[::1], int32, uint32, int8, uint16)")
    def k(r, a, b, c, d):
        r[0], r[1], r[2], r[3] = a, b, c, d

    for vals in [(0xFFFFFFFF, -1, 200, 70000), (2**63, 2**64 - 1, -129, -1), (np.int64(0xFFFFFFFF), np.uint64(5), 3, 4)]:
        want = [ctypes.c_int32(int(vals[0])).value, ctypes.c_uint32(int(vals[1])).value,
                ctypes.c_int8(int(vals[2])).value, ctypes.c_uint16(int(vals[3])).value]
        for _ in range(3):  # the first launch and the fast path after it
            r = np.zeros(4, np.int64)
            k[1, 1](r, *vals)
            assert r.tolist() == want, vals
    with pytest.raises(cuda.LaunchError, match="does not fit in 64 bits"):
        k[1, 1](np.zeros(4, np.int64), 2**64, 0, 0, 0)
