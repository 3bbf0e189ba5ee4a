"""numba-cuda's ``tests/cudapy/test_sm.py`` (see conftest.py): shared memory: sizes, dtypes, dynamic
shared slices, bool and record elements, invalid types."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda
from pykern import float64

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_sm_issue_953_linkage_conflict():
    # test_sm.py TestSharedMemoryIssue.test_issue_953_sm_linkage_conflict (numba only launches;
    # the two shared arrays are also checked to be distinct here)
    @cuda.jit(device=True)
    def inner(out):
        inner_arr = cuda.shared.array(1, dtype=cuda.int32)
        inner_arr[0] = 2
        out[1] = inner_arr[0]

    @cuda.jit
    def outer(out):
        outer_arr = cuda.shared.array(1, dtype=cuda.int32)
        outer_arr[0] = 1
        inner(out)
        out[0] = outer_arr[0]

    out = np.zeros(2, np.int32)
    outer[1, 1](out)
    assert out.tolist() == [1, 2]


@pytest.mark.parametrize("shape,expected", [(2, 2), ((2, 3), 6), ((2, 3, 4), 24)])
def test_sm_issue_1051_shared_size(shape, expected):
    # test_sm.py test_issue_1051_shared_size_broken_1d/2d/3d
    @cuda.jit
    def s(a):
        arr = cuda.shared.array(shape, dtype=cuda.int32)
        a[0] = arr.size

    result = np.zeros(1, dtype=np.int32)
    s[1, 1](result)
    assert result[0] == expected


@pytest.mark.parametrize("ty", [cuda.float16, np.float16])
def test_sm_fp16_size(ty):
    # test_sm.py TestSharedMemoryIssue.test_issue_fp16_support
    @cuda.jit
    def s(a):
        arr = cuda.shared.array(2, dtype=ty)
        a[0] = arr.size

    result = np.zeros(1, dtype=np.float16)
    s[1, 1](result)
    assert result[0] == 2


def test_sm_issue_2393():
    # test_sm.py TestSharedMemoryIssue.test_issue_2393 (a misaligned-address crash in numba; it
    # reads uninitialised shared memory, so, as in numba's test, only completion is checked)
    num_weights = 2
    examples_per_block = 4

    @cuda.jit
    def costs_func(d_block_costs):
        s_features = cuda.shared.array((examples_per_block, num_weights), float64)
        s_initialcost = cuda.shared.array(7, float64)
        threadIdx = cuda.threadIdx.x
        prediction = 0
        for j in range(num_weights):
            prediction += s_features[threadIdx, j]
        d_block_costs[0] = s_initialcost[0] + prediction

    block_costs = np.zeros(48, dtype=np.float64)
    costs_func[48, 1](block_costs)
    cuda.synchronize()


def _shared_copy(arr):
    nelem = len(arr)
    nthreads = 16
    nblocks = int(nelem / nthreads)
    dt = cuda.from_dtype(arr.dtype)

    @cuda.jit
    def use_sm_chunk_copy(x, y):
        sm = cuda.shared.array(nthreads, dtype=dt)
        tx = cuda.threadIdx.x
        bx = cuda.blockIdx.x
        bd = cuda.blockDim.x
        i = bx * bd + tx
        if i < len(x):
            sm[tx] = x[i]
        cuda.syncthreads()
        if tx == 0:
            for j in range(nthreads):
                y[bd * bx + j] = sm[j]

    d_result = cuda.to_device(np.zeros_like(arr))
    use_sm_chunk_copy[nblocks, nthreads](arr, d_result)
    return d_result.copy_to_host()


def test_sm_shared_bool():
    # test_sm.py TestSharedMemory.test_shared_bool (the output starts zeroed so the copy is
    # what is checked; numba copies arr into it first)
    arr = np.random.RandomState(0).randint(2, size=(1024,)).astype(np.bool_)
    np.testing.assert_array_equal(arr, _shared_copy(arr))


def test_sm_shared_recarray():
    # test_sm.py TestSharedMemory.test_shared_recarray
    arr = np.recarray(128, dtype=np.dtype([("i", np.int32), ("j", np.float32, (3, 2))]))
    for x in range(len(arr)):
        arr[x].i = x
        arr[x].j = np.arange(6, dtype=np.float32).reshape(3, 2) * x
    res = _shared_copy(arr)
    np.testing.assert_array_equal(arr.i, res["i"])
    np.testing.assert_array_equal(arr.j, res["j"])


def _dynshared(func, arr):
    func[1, 1, 0, arr.size * arr.dtype.itemsize](arr)
    return arr.tolist()


def test_sm_dynshared_slices():
    # test_sm.py test_dynshared_slice_write / _read / _diff_sizes / _overlap / _gaps /
    # _write_backwards / _nonunit_stride / _nonunit_reverse_stride
    int32 = cuda.int32

    @cuda.jit
    def slice_write(x):
        dynsmem = cuda.shared.array(0, dtype=int32)
        sm1 = dynsmem[0:1]
        sm2 = dynsmem[1:2]
        sm1[0] = 1
        sm2[0] = 2
        x[0] = dynsmem[0]
        x[1] = dynsmem[1]

    @cuda.jit
    def slice_read(x):
        dynsmem = cuda.shared.array(0, dtype=int32)
        sm1 = dynsmem[0:1]
        sm2 = dynsmem[1:2]
        dynsmem[0] = 1
        dynsmem[1] = 2
        x[0] = sm1[0]
        x[1] = sm2[0]

    @cuda.jit
    def slice_diff_sizes(x):
        dynsmem = cuda.shared.array(0, dtype=int32)
        sm1 = dynsmem[0:1]
        sm2 = dynsmem[1:3]
        dynsmem[0] = 1
        dynsmem[1] = 2
        dynsmem[2] = 3
        x[0] = sm1[0]
        x[1] = sm2[0]
        x[2] = sm2[1]

    @cuda.jit
    def slice_overlap(x):
        dynsmem = cuda.shared.array(0, dtype=int32)
        sm1 = dynsmem[0:2]
        sm2 = dynsmem[1:4]
        dynsmem[0] = 1
        dynsmem[1] = 2
        dynsmem[2] = 3
        dynsmem[3] = 4
        x[0] = sm1[0]
        x[1] = sm1[1]
        x[2] = sm2[0]
        x[3] = sm2[1]
        x[4] = sm2[2]

    @cuda.jit
    def slice_gaps(x):
        dynsmem = cuda.shared.array(0, dtype=int32)
        sm1 = dynsmem[1:3]
        sm2 = dynsmem[4:6]
        for k in range(7):
            dynsmem[k] = 99
        sm1[0] = 1
        sm1[1] = 2
        sm2[0] = 3
        sm2[1] = 4
        for k in range(7):
            x[k] = dynsmem[k]

    @cuda.jit
    def slice_write_backwards(x):
        dynsmem = cuda.shared.array(0, dtype=int32)
        sm1 = dynsmem[1::-1]
        sm2 = dynsmem[3:1:-1]
        sm1[0] = 1
        sm1[1] = 2
        sm2[0] = 3
        sm2[1] = 4
        x[0] = dynsmem[0]
        x[1] = dynsmem[1]
        x[2] = dynsmem[2]
        x[3] = dynsmem[3]

    @cuda.jit
    def slice_nonunit_stride(x):
        dynsmem = cuda.shared.array(0, dtype=int32)
        sm1 = dynsmem[::2]
        for k in range(6):
            dynsmem[k] = 99
        sm1[0] = 1
        sm1[1] = 2
        sm1[2] = 3
        for k in range(6):
            x[k] = dynsmem[k]

    @cuda.jit
    def slice_nonunit_reverse_stride(x):
        dynsmem = cuda.shared.array(0, dtype=int32)
        sm1 = dynsmem[-1::-2]
        for k in range(6):
            dynsmem[k] = 99
        sm1[0] = 1
        sm1[1] = 2
        sm1[2] = 3
        for k in range(6):
            x[k] = dynsmem[k]

    z = lambda n: np.zeros(n, dtype=np.int32)  # noqa: E731
    assert _dynshared(slice_write, z(2)) == [1, 2]
    assert _dynshared(slice_read, z(2)) == [1, 2]
    assert _dynshared(slice_diff_sizes, z(3)) == [1, 2, 3]
    assert _dynshared(slice_overlap, z(5)) == [1, 2, 2, 3, 4]
    assert _dynshared(slice_gaps, z(7)) == [99, 1, 2, 99, 3, 4, 99]
    assert _dynshared(slice_write_backwards, z(4)) == [2, 1, 4, 3]
    assert _dynshared(slice_nonunit_stride, z(6)) == [1, 99, 2, 99, 3, 99]
    assert _dynshared(slice_nonunit_reverse_stride, z(6)) == [99, 3, 99, 2, 99, 1]


def test_sm_issue_5073():
    # test_sm.py TestSharedMemory.test_issue_5073 (the result array starts zeroed here)
    arr = np.arange(1024)
    nthreads = 16
    nblocks = int(len(arr) / nthreads)
    dt = cuda.from_dtype(arr.dtype)
    nshared = nthreads * arr.dtype.itemsize
    chunksize = int(nthreads / 2)

    @cuda.jit
    def sm_slice_copy(x, y, chunksize):
        dynsmem = cuda.shared.array(0, dtype=dt)
        sm1 = dynsmem[0:chunksize]
        sm2 = dynsmem[chunksize: chunksize * 2]
        tx = cuda.threadIdx.x
        bx = cuda.blockIdx.x
        bd = cuda.blockDim.x
        i = bx * bd + tx
        if i < len(x):
            if tx < chunksize:
                sm1[tx] = x[i]
            else:
                sm2[tx - chunksize] = x[i]
        cuda.syncthreads()
        if tx == 0:
            for j in range(chunksize):
                y[bd * bx + j] = sm1[j]
                y[bd * bx + j + chunksize] = sm2[j]

    result = np.zeros_like(arr)
    sm_slice_copy[nblocks, nthreads, 0, nshared](arr, result, chunksize)
    np.testing.assert_array_equal(arr, result)


def test_sm_invalid_array_types():
    # test_sm.py TestSharedMemory.test_invalid_array_type
    from pykern.core.errors import CompileError

    def unsupported_type():
        arr = cuda.shared.array(10, dtype=np.dtype("O"))  # noqa: F841

    def invalid_string_type():
        arr = cuda.shared.array(10, dtype="int33")  # noqa: F841

    for f in (unsupported_type, invalid_string_type):
        with pytest.raises(CompileError):
            cuda.jit(cuda.void())(f)[1, 1]()
