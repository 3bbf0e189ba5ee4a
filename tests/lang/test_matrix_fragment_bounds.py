"""pykern.wmma fragment loads and stores on the cpu target under ``debug=True`` check every element's
flat index (``offset + row * ldm + col``, or ``offset + col * ldm + row`` column-major) against the
array's size, the way an array index is checked: a fragment reaching outside its array raises
``KernelIndexError`` (an ``IndexError``) naming the file, line and source, and no memory past the
array is touched. A fragment that fits exactly is not an error; without ``debug`` nothing is
checked, as for array indexing."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("ml_dtypes")

import pykern as cuda  # noqa: E402
from pykern import wmma  # noqa: E402
from pykern.core.errors import KernelIndexError  # noqa: E402

pytestmark = pytest.mark.usefixtures("cpu_target")


def _load_then_store(A, C, a_off, a_ld, c_off, c_ld):
    a = wmma.fragment(wmma.matrix_a, 16, 16, 16, cuda.float16, wmma.row_major)
    b = wmma.fragment(wmma.matrix_b, 16, 16, 16, cuda.float16, wmma.col_major)
    c = wmma.fragment(wmma.accumulator, 16, 16, 16, cuda.float32)
    wmma.fill_fragment(c, 0.0)
    wmma.load_matrix_sync(a, A, a_off, a_ld)
    wmma.load_matrix_sync(b, A, 0, 16)
    wmma.mma_sync(c, a, b, c)
    wmma.store_matrix_sync(C, c_off, c, c_ld, wmma.mem_col_major)


checked = cuda.jit(debug=True)(_load_then_store)
unchecked = cuda.jit(_load_then_store)


@cuda.jit(debug=True)
def array_index(A, i):
    A[i, 0] = 1.0


def _run(kern, a_shape, a_off, a_ld, c_shape, c_off, c_ld):
    A = np.ones(a_shape, np.float16)
    C = np.zeros(c_shape, np.float32)
    kern[1, 64](A, C, a_off, a_ld, c_off, c_ld)
    return C


def test_a_fragment_that_fits_exactly_is_not_an_error():
    # the last element of each fragment is the last element of its array
    C = _run(checked, (32, 16), 256, 16, (32, 16), 256, 16)
    assert (C[16:] == 16.0).all() and (C[:16] == 0).all()
    C = _run(checked, (256 + 15 * 40 + 16,), 256, 40, (256 + 15 * 20 + 16,), 256, 20)
    assert C[256] == 16.0 and C[-1] == 16.0
    # the flat index counts, not the array's own rows: a (4, 64) array holds a 16 x 16 tile
    assert (_run(checked, (4, 64), 0, 16, (16, 16), 0, 16) == 16.0).all()


@pytest.mark.parametrize("a_shape, a_off, a_ld, line_part", [
    ((16, 16), 1, 16, "load_matrix_sync(a, A, a_off, a_ld)"),          # one past the end
    ((16, 16), -1, 16, "load_matrix_sync(a, A, a_off, a_ld)"),         # before the start
    ((16, 16), 0, 17, "load_matrix_sync(a, A, a_off, a_ld)"),          # rows too far apart
    ((4, 63), 0, 16, "load_matrix_sync(a, A, a_off, a_ld)"),           # 252 elements, 256 read
])
def test_load_outside_the_array_raises_index_error(a_shape, a_off, a_ld, line_part):
    n = int(np.prod(a_shape))
    with pytest.raises(KernelIndexError) as ei:
        _run(checked, a_shape, a_off, a_ld, (16, 16), 0, 16)
    assert isinstance(ei.value, IndexError)
    text = str(ei.value)
    assert "test_matrix_fragment_bounds.py:" in text and line_part in text
    assert "index out of bounds for array 'A'" in text and "wmma.load_matrix_sync" in text
    assert f"size {n}" in text


def test_store_outside_the_array_raises_and_writes_nothing_past_it():
    # column-major store: element (row, col) at offset + col * ldm + row; 16 columns of 20 need
    # 15 * 20 + 16 = 316 elements after the offset. The buffer is one bigger array, the kernel
    # gets its first 315 elements: nothing may land in the tail.
    whole = np.full(400, -7.0, np.float32)
    C = whole[:315]
    A = np.ones((16, 16), np.float16)
    with pytest.raises(KernelIndexError) as ei:
        checked[1, 64](A, C, 0, 16, 0, 20)
    assert "wmma.store_matrix_sync" in str(ei.value) and "size 315" in str(ei.value)
    assert (whole[315:] == -7.0).all()


def test_the_error_is_the_array_index_error():
    A = np.zeros((4, 4), np.float16)
    with pytest.raises(KernelIndexError) as arr:
        array_index[1, 1](A, 9)
    with pytest.raises(KernelIndexError) as frag:
        _run(checked, (16, 16), 1, 16, (16, 16), 0, 16)
    assert type(frag.value) is type(arr.value)
    shape = r"^\S+\.py:\d+: index out of bounds for array 'A'.* in `.*`: index -?\d+ is out of bounds for axis 0 " \
            r"with size \d+ \(thread \(\d+, 0, 0\), block \(0, 0, 0\)\)$"
    assert re.match(shape, str(arr.value)) and re.match(shape, str(frag.value)), (str(arr.value), str(frag.value))


def test_without_debug_nothing_is_checked():
    """As for array indexing: the checks exist only under ``debug=True``."""
    sig = "void(float16[:, ::1], float32[:, ::1], int64, int64, int64, int64)"
    unchecked.compile(sig)
    checked.compile(sig)
    blocks = lambda text: re.findall(r"^(oob[\w.]*):", text, re.M)  # noqa: E731
    assert not blocks(next(iter(unchecked.inspect_llvm().values())))
    assert blocks(next(iter(checked.inspect_llvm().values())))
