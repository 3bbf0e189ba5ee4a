"""``cuda.atomic.*`` in kernels: add/sub, and/or/xor, inc/dec wrap-around, exch, cas, max/min with
numba's NaN rules, nanmax/nanmin, on global, shared and local arrays, views and tuple indices,
returning the old value in the array's dtype -- on the cpu target against numpy/Python.

The AMD GPU side: tests/codegen/amdgpu/test_amdgpu_target.py (``test_atomics*``: the instructions
per arch and address space) and test_amdgpu_codeobject.py (CAS loops for float atomics without
native support); numba-cuda's own atomics tests: tests/numba_parity/cudapy/test_cudapy_atomics.py."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

import pykern as cuda
from pykern import float64
from pykern.core.errors import CompileError, LaunchError

from cpu_helpers import run_py
from frontend_helpers import jit

pytestmark = pytest.mark.usefixtures("cpu_uncached")


rng = np.random.default_rng(1234)


def histogram(x, bins):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, x[i] % bins.size, 1)


def test_atomic_histogram_parallel_blocks():
    x = rng.integers(0, 1000, size=1 << 18).astype(np.int64)
    bins = np.zeros(16, np.int32)
    run_py(histogram, (x.size // 256,), (256,), x, bins)
    assert bins.tolist() == np.bincount(x % 16, minlength=16).tolist()


def atomic_misc(x, fmax, fmin, inc, dec, cas_out, old):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.max(fmax, 0, x[i])
        cuda.atomic.min(fmin, 0, x[i])
        old[i] = cuda.atomic.inc(inc, 0, np.uint32(9))
        cuda.atomic.dec(dec, 0, np.uint32(5))
        cuda.atomic.cas(cas_out, 0, 0, i + 1)


def test_atomic_max_min_inc_dec_cas():
    x = rng.random(1000)
    fmax, fmin = np.array([-np.inf]), np.array([np.inf])
    inc, dec = np.zeros(1, np.uint32), np.zeros(1, np.uint32)
    cas_out = np.zeros(1, np.int64)
    old = np.zeros(1000, np.uint32)
    run_py(atomic_misc, (4,), (256,), x, fmax, fmin, inc, dec, cas_out, old)
    assert fmax[0] == x.max() and fmin[0] == x.min()
    assert inc[0] == 1000 % 10  # wraps to 0 after 9
    assert sorted(old.tolist()) == sorted([k % 10 for k in range(1000)])
    d = 0
    for _ in range(1000):
        d = 5 if d == 0 or d > 5 else d - 1
    assert dec[0] == d
    assert 1 <= cas_out[0] <= 1000


def test_atomics_variants():
    @jit
    def k(ai, af, old, c):
        t = cuda.threadIdx.x
        cuda.atomic.add(ai, 0, 1)
        cuda.atomic.max(ai, 1, t)
        cuda.atomic.min(af, 0, -t)
        cuda.atomic.sub(ai, (2,), 2)
        if t == 0:
            old[0] = cuda.atomic.cas(ai, 3, 7, 9)
            old[1] = cuda.atomic.compare_and_swap(c, 5, 6)
            old[2] = cuda.atomic.exch(ai, 4, 42)

    ai = np.array([0, 0, 100, 7, 1], np.int32)
    af = np.zeros(1, np.float32)
    old = np.zeros(3, np.int32)
    c = np.array([5, 0], np.int32)
    k[1, 16](ai, af, old, c)
    assert list(old) == [7, 5, 1]
    assert list(c) == [6, 0]
    assert ai[0] == 16 and ai[1] == 15 and ai[2] == 100 - 32 and ai[3] == 9 and ai[4] == 42
    assert af[0] == -15


@cuda.jit
def atomic_add_old(a, out):
    old = cuda.atomic.add(a, 0, 1)
    out[0] = old - 2  # old is the array's uint32: old - 2 is uint64 (numba), stored as int64


def test_atomic_return_keeps_the_array_dtype():
    a = np.array([1], np.uint32)
    out = np.zeros(1, np.int64)
    atomic_add_old[1, 1](a, out)
    assert a[0] == 2 and out[0] == -1


def test_atomics_on_views():
    @jit
    def k(a, hist):
        i = cuda.grid(1)
        if i < 64:
            row = a[i % 4]
            cuda.atomic.add(row, i % 3, 1)
            col = hist[:, 1]
            cuda.atomic.add(col, i % 2, 2)
            cuda.atomic.max(hist[0, ::-1], 0, i)

    a = np.zeros((4, 3), np.int32)
    hist = np.zeros((2, 3), np.int32)
    k[2, 32](a, hist)
    want = np.zeros((4, 3), np.int32)
    for i in range(64):
        want[i % 4, i % 3] += 1
    np.testing.assert_array_equal(a, want)
    assert hist[0, 1] == 64 and hist[1, 1] == 64 and hist[0, 2] == 63


@cuda.jit
def nan_rule_atomics(arr, vals):
    i = cuda.grid(1)
    if i < vals.size:
        cuda.atomic.max(arr, 0, vals[i])
        cuda.atomic.nanmax(arr, 1, vals[i])
        cuda.atomic.min(arr, 2, vals[i])
        cuda.atomic.nanmin(arr, 3, vals[i])
        cuda.atomic.max(arr, 4, vals[i])
        cuda.atomic.nanmax(arr, 5, vals[i])


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_atomic_nanmax_nanmin_and_numba_nan_rules(dt):
    vals = np.array([1.0, np.nan, 5.0, -3.0, np.nan, 2.0], dt)
    arr = np.array([np.nan, np.nan, 0.0, np.nan, 0.0, 0.0], dt)
    nan_rule_atomics[1, 64](arr, vals)
    # numba.cuda: max/min leave a NaN element alone and ignore NaN values; nanmax/nanmin treat NaN as missing
    assert np.isnan(arr[0]) and arr[1] == 5 and arr[2] == -3 and arr[3] == -3 and arr[4] == 5 and arr[5] == 5


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=64))
def test_atomic_max_min_nanmax_nanmin_of_integers(vals):
    v = np.array(vals, np.int64)
    lo, hi = -(2**63), 2**63 - 1
    arr = np.array([lo, lo, hi, hi, lo, lo], np.int64)
    nan_rule_atomics[1, 64](arr, v)
    assert arr.tolist() == [v.max(), v.max(), v.min(), v.min(), v.max(), v.max()]


# histogram with atomic add
@cuda.jit
def hist(x, xmin, xmax, out):
    nbins = out.shape[0]
    bin_width = (xmax - xmin) / nbins
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):
        bin_number = np.int32((x[i] - xmin) / bin_width)
        if bin_number >= 0 and bin_number < out.shape[0]:
            cuda.atomic.add(out, bin_number, 1)


def test_histogram():
    rng = np.random.default_rng(1)
    x = rng.normal(size=10000).astype(np.float32)
    out = np.zeros(20, np.int32)
    hist[8, 64](x, np.float32(-3), np.float32(3), out)
    bw = np.float32(6) / np.float32(20)
    idx = ((x - np.float32(-3)) / bw).astype(np.int32)
    exp = np.bincount(idx[(idx >= 0) & (idx < 20)], minlength=20)
    np.testing.assert_array_equal(out, exp)


# atomics max/min/cas
@cuda.jit
def minmax_cas_atomics(a, res, cas_arr, old_out):
    i = cuda.grid(1)
    if i < a.size:
        cuda.atomic.max(res, 0, a[i])
        cuda.atomic.min(res, 1, a[i])
        cuda.atomic.add(res, 2, 1)
        cuda.atomic.sub(res, 3, 1)
        cuda.atomic.exch(res, 4, 5)
    if i == 0:
        old_out[0] = cuda.atomic.compare_and_swap(cas_arr, 0, 42)
        old_out[1] = cuda.atomic.cas(cas_arr, 1, 7, 99)


def test_atomics_minmax_cas():
    a = np.random.default_rng(3).integers(-1000, 1000, 300).astype(np.int32)
    res = np.array([-10**6, 10**6, 0, 0, 0], np.int32)
    cas_arr = np.array([0, 7], np.int32)
    old = np.zeros(2, np.int32)
    minmax_cas_atomics[5, 64](a, res, cas_arr, old)
    assert res.tolist() == [a.max(), a.min(), 300, -300, 5]
    assert cas_arr.tolist() == [42, 99]
    assert old.tolist() == [0, 7]


# atomics on float and 2-d index with tuple
@cuda.jit
def atom2d(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        cuda.atomic.add(out, (i % 2, j % 3), a[i, j])


def test_atomic_2d_tuple_index():
    a = np.arange(12 * 12, dtype=np.float64).reshape(12, 12)
    out = np.zeros((2, 3))
    atom2d[(2, 2), (8, 8)](a, out)
    exp = np.zeros((2, 3))
    for i in range(12):
        for j in range(12):
            exp[i % 2, j % 3] += a[i, j]
    np.testing.assert_array_equal(out, exp)


# atomic inc/dec wrap semantics
@cuda.jit
def incdec(arr):
    i = cuda.grid(1)
    if i < 10:
        cuda.atomic.inc(arr, 0, 3)
        cuda.atomic.dec(arr, 1, 3)


def test_atomic_inc_dec():
    arr = np.array([0, 0], np.uint32)
    incdec[1, 32](arr)
    # inc: old >= val ? 0 : old+1 ; 10 increments mod 4 -> 10 % 4 = 2
    # dec: (old == 0 or old > val) ? val : old-1 ; from 0: 3,2,1,0,3,2,1,0,3,2 -> 2
    assert arr.tolist() == [2, 2]


@cuda.jit
def atom_float(a, out, sh_out):
    sh = cuda.shared.array(2, float64)
    t = cuda.threadIdx.x
    if t == 0:
        sh[0] = -np.inf
        sh[1] = np.inf
    cuda.syncthreads()
    i = cuda.grid(1)
    cuda.atomic.max(out, 0, a[i])
    cuda.atomic.min(out, 1, a[i])
    cuda.atomic.add(out, 2, a[i])
    cuda.atomic.max(sh, 0, a[i])
    cuda.atomic.min(sh, 1, a[i])
    cuda.syncthreads()
    if t == 0:
        sh_out[cuda.blockIdx.x, 0] = sh[0]
        sh_out[cuda.blockIdx.x, 1] = sh[1]


def test_float_atomics_global_and_shared():
    a = -np.arange(1, 257, dtype=np.float64) * 0.5
    out = np.array([-np.inf, np.inf, 0.0])
    sh_out = np.zeros((4, 2))
    atom_float[4, 64](a, out, sh_out)
    assert out.tolist() == [a.max(), a.min(), a.sum()]
    b = a.reshape(4, 64)
    np.testing.assert_array_equal(sh_out, np.stack([b.max(1), b.min(1)], 1))


@cuda.jit
def atom_bits(out, f32out):
    i = cuda.grid(1)
    cuda.atomic.or_(out, 0, 1 << (i % 40))
    cuda.atomic.and_(out, 1, ~(1 << (i % 16)))
    cuda.atomic.xor(out, 2, i)
    cuda.atomic.add(f32out, 0, 0.1)     # float64 literal into float32 array
    cuda.atomic.max(out, 3, i)


def test_bitwise_atomics_int64():
    out = np.array([0, -1, 0, 0], np.int64)
    f = np.zeros(1, np.float32)
    atom_bits[2, 64](out, f)
    x = 0
    for i in range(128):
        x ^= i
    assert out.tolist() == [(1 << 40) - 1, -1 & ~0xffff, x, 127]
    assert abs(f[0] - 12.8) < 1e-4


def test_atomics_doc_examples_max_and_3d_index():
    # numba-cuda docs, "Supported Atomic Operations": atomic max, and min/max at a tuple index
    @cuda.jit
    def max_example(result, values):
        tid = cuda.threadIdx.x
        bid = cuda.blockIdx.x
        bdim = cuda.blockDim.x
        i = (bid * bdim) + tid
        cuda.atomic.max(result, 0, values[i])

    arr = np.random.RandomState(0).rand(16384)
    result = np.zeros(1, dtype=np.float64)
    max_example[256, 64](result, arr)
    assert result[0] == max(arr)

    @cuda.jit
    def minmax_3d(result, values):
        i, j, k = cuda.grid(3)
        I, J, K = values.shape
        if i < I and j < J and k < K:
            cuda.atomic.max(result, (0, 1, 2), values[i, j, k])
            cuda.atomic.min(result, (1, 0, 0), values[i, j, k])

    v = np.random.RandomState(1).rand(5, 6, 7)
    res = np.zeros((2, 2, 3))
    res[1, 0, 0] = 10
    minmax_3d[(1, 1, 1), (8, 8, 8)](res, v)
    assert res[0, 1, 2] == v.max() and res[1, 0, 0] == v.min()


def test_atomics_on_a_read_only_array_are_refused():
    @cuda.jit(cache=False)
    def k(a):
        cuda.atomic.add(a, 0, 1.0)

    ro = np.zeros(4)
    ro.flags.writeable = False
    with pytest.raises((CompileError, LaunchError), match="read-only"):
        k[1, 1](ro)
