"""``@vectorize`` and ``@guvectorize`` ufuncs called with an ``out=`` whose memory overlaps an
input give numpy's answer: numpy reads such an input from a copy (its ufuncs test the byte
bounds), unless the input is the output itself element for element. Hostile ``out=`` dtypes
are refused as numpy refuses them (``casting='same_kind'``)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


@cuda.vectorize(["int64(int64, int64)", "float64(float64, float64)"])
def vadd(a, b):
    return a + b


@cuda.vectorize
def vsub_lazy(a, b):
    return a - b


def test_shifted_out_overlapping_both_inputs_equals_numpy():
    a = np.arange(6, dtype=np.int64)
    vadd(a[:-1], a[:-1], out=a[1:])
    b = np.arange(6, dtype=np.int64)
    np.add(b[:-1], b[:-1], out=b[1:])
    assert a.tolist() == b.tolist() == [0, 0, 2, 4, 6, 8]


def test_reversed_and_in_place_and_broadcast_inputs():
    a = np.arange(8.0)
    vadd(a[::-1], 1.0, out=a)  # every element read from the copy
    assert a.tolist() == (np.arange(8.0)[::-1] + 1).tolist()
    a = np.arange(8.0)
    vadd(a, a, out=a)  # the output itself, element for element: no copy needed
    assert a.tolist() == (2 * np.arange(8.0)).tolist()
    a = np.arange(8.0)
    vsub_lazy(a, a[:1], out=a)  # a broadcast element that the first thread overwrites
    assert a.tolist() == np.arange(8.0).tolist()


def test_two_dimensional_transposed_input():
    m = np.arange(16.0).reshape(4, 4)
    want = m + m.T
    vadd(m, m.T, out=m)
    assert (m == want).all()


def test_device_arrays_overlapping_on_the_device():
    d = cuda.to_device(np.arange(6, dtype=np.int64))
    vadd(d[:-1], d[:-1], out=d[1:])
    assert d.copy_to_host().tolist() == [0, 0, 2, 4, 6, 8]
    # the second call like it replays the first one's plan, which must see the overlap too
    vadd(d[:-1], d[:-1], out=d[1:])
    assert d.copy_to_host().tolist() == [0, 0, 0, 4, 8, 12]
    # separate allocations never overlap: the plan runs the kernel directly
    a, o = cuda.to_device(np.arange(5, dtype=np.int64)), cuda.device_array(5, np.int64)
    for _ in range(2):
        assert vadd(a, a, out=o) is o and o.copy_to_host().tolist() == [0, 2, 4, 6, 8]


def test_more_dimensions_than_a_kernel_array_copies_once_for_all_rows():
    a = np.arange(2 * 2 * 2 * 2 * 3, dtype=np.float64).reshape(2, 2, 2, 2, 3)
    want = a.copy()
    np.add(want[::-1], 1.0, out=want)
    vadd(a[::-1], 1.0, out=a)  # row 0 of the output is row 1 of the input
    assert (a == want).all()


@cuda.guvectorize(["void(float64[:], float64[:])"], "(n)->(n)")
def reverse_cumsum(x, out):
    acc = 0.0
    for i in range(x.shape[0] - 1, -1, -1):
        acc += x[i]
        out[x.shape[0] - 1 - i] = acc


def test_guvectorize_in_place_reads_the_input_first():
    """A core dimension is no longer element for element: even the very output is copied, as numpy
    does for generalized ufuncs."""
    x = np.arange(1.0, 6.0)
    reverse_cumsum(x, x)
    assert x.tolist() == [5.0, 9.0, 12.0, 14.0, 15.0]
    rows = np.arange(12.0).reshape(3, 4)
    want = np.cumsum(rows[::-1, ::-1], axis=1)
    reverse_cumsum(rows[::-1], rows)
    assert (rows == want).all()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 30), st.integers(1, 30), st.integers(-3, 3).filter(bool), st.integers(0, 30),
       st.integers(-3, 3).filter(bool), st.integers(0, 30))
def test_random_overlapping_views_equal_numpy(n, size, step_in, start_in, step_out, start_out):
    """Views of one buffer at random offsets and steps, both directions, as numpy computes."""
    def view(buf, start, step):
        start = min(start, buf.size - 1)
        stop = start + step * size
        v = buf[start:stop if stop >= 0 else None:step]
        return v

    base = np.arange(40 + n, dtype=np.float64)
    x = view(base, start_in, step_in)
    out = view(base, start_out, step_out)
    m = min(x.size, out.size)
    if m == 0:
        return
    want_buf = base.copy()
    want_x, want_out = view(want_buf, start_in, step_in)[:m], view(want_buf, start_out, step_out)[:m]
    np.add(want_x, want_x * 0.5, out=want_out)
    got_x, got_out = x[:m], out[:m]
    vadd(got_x, got_x * 0.5, out=got_out)  # (the second input is a new array; the first overlaps)
    assert base.tolist() == want_buf.tolist()


def test_out_of_another_kind_is_numpys_type_error():
    @cuda.vectorize(["float32(float32, float32)"])
    def fadd(a, b):
        return a + b

    x = np.ones(4, np.float32)
    with pytest.raises(TypeError, match="same_kind"):
        fadd(x, x, out=np.zeros(4, np.int32))
    with pytest.raises(TypeError):
        np.add(x, x, out=np.zeros(4, np.int32))  # numpy refuses it too
    out64 = np.zeros(4)
    fadd(x, x, out=out64)  # float32 into float64: allowed
    assert out64.tolist() == [2.0] * 4

    @cuda.guvectorize(["void(float64[:], float64[:])"], "(n)->()")
    def total(v, res):
        res[0] = v.sum()

    with pytest.raises(TypeError, match="same_kind"):
        total(np.ones((2, 3)), np.zeros(2, np.int64))
