"""Idioms of numba.cuda programs found on GitHub: lambdas as device functions (minitorch-style
``tensor_map(fn)`` factories built with ``cuda.jit()(_map)``), ``nopython=True`` on
``vectorize``/``guvectorize``, a tuple target inside a chained assignment."""

import math as mth

import numpy as np
import pytest

import pykern as cuda
from pykern import CompileError

pytestmark = pytest.mark.usefixtures("cpu_uncached")


def tensor_map(fn):
    def _map(out, inp, n):
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if i < n:
            out[i] = fn(inp[i])
    return cuda.jit()(_map)


def test_lambda_device_functions():
    neg, sq = cuda.jit(device=True)(lambda x: -x * 2.0), cuda.jit(device=True)(lambda y: y * y)
    a = np.arange(5.0)
    for fn, ref in ((neg, -2.0 * a), (sq, a * a)):
        out = np.zeros(5)
        tensor_map(fn)[1, 8](out, a, 5)
        np.testing.assert_array_equal(out, ref)


def test_lambdas_that_cannot_be_told_apart():
    f, g = cuda.jit(device=True)(lambda x: x + 1.0), cuda.jit(device=True)(lambda x: x + 2.0)
    out = np.zeros(1)
    with pytest.raises(CompileError, match="told apart"):
        tensor_map(g)[1, 1](out, np.zeros(1), 1)
    assert f is not g


def test_vectorize_and_guvectorize_accept_nopython():
    # accepted with numba's warning that it is redundant
    with pytest.warns(RuntimeWarning, match="redundant"):
        @cuda.vectorize(["float64(float64)"], target="cuda", nopython=True)
        def twice(x):
            return 2.0 * x

    with pytest.warns(RuntimeWarning, match="redundant"):
        @cuda.guvectorize(["void(float64[:], float64[:])"], "(n)->(n)", target="cuda", nopython=True)
        def cumsum(x, out):
            acc = 0.0
            for i in range(x.shape[0]):
                acc += x[i] + mth.floor(0.5)
                out[i] = acc

    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(twice(x[0]), 2.0 * x[0])
    np.testing.assert_array_equal(cumsum(x), np.cumsum(x, 1))


def test_tuple_target_in_a_chained_assignment():
    @cuda.jit
    def k(out, width):
        u = cuda.grid(1)
        index = x_idx, y_idx = u % width, u // width
        s = 0
        for i in range(2):
            s += index[i] * (10 ** i)
        out[u] = s + 100 * (x_idx == index[0]) * (y_idx == index[1])

    out = np.zeros(12, np.int64)
    k[1, 12](out, 4)
    assert out.tolist() == [100 + (u % 4) + 10 * (u // 4) for u in range(12)]


def test_minitorch_style_block_sum(monkeypatch):
    """A course's block reduction as students write it: a list literal of strides, and barriers
    only some threads reach while the others run to the end (fine on GPUs: threads that have
    exited count as arrived)."""
    block_dim = 32

    @cuda.jit
    def _sum_practice(out, a, size):
        cache = cuda.shared.array(block_dim, cuda.float64)
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        pos = cuda.threadIdx.x
        if i < size:
            val = float(a[i])
            cache[pos] = val
            cuda.syncthreads()
        else:
            cache[pos] = 0.0
        if i < size:
            for j in [1, 2, 4, 8, 16]:
                if pos % (j * 2) == 0:
                    cache[pos] += cache[pos + j]
                    cuda.syncthreads()
            if pos == 0:
                out[cuda.blockIdx.x] = cache[0]

    a = np.arange(70, dtype=np.float64)
    for path in ("regions", "coroutine"):
        monkeypatch.setenv("PYKERN_CPU_BARRIERS", path)
        out = np.zeros(3)
        cuda.jit(_sum_practice.py_func)[3, 32](out, a, 70)
        assert out.tolist() == [a[:32].sum(), a[32:64].sum(), a[64:].sum()]


def test_declared_any_layout_arrays_take_contiguous_and_shared_ones():
    """``@cuda.jit(void(float64[:], ...), device=True)`` called with C-contiguous, strided and
    shared arrays (numba passes each as is); unpacking the limits and a slice, as a neutron-optics
    code on GitHub does."""
    from pykern import float64, int64, void

    @cuda.jit(void(float64[:], float64[:], int64, float64[:, :, :]), device=True)
    def propagate(neutron, limits, n, out):
        xmin, xmax, maxdiv = limits
        vx, vy, vz = neutron[3:6]
        if vx <= xmin or vx >= xmax:
            return
        cuda.atomic.add(out, (0, 0, 0), n)
        cuda.atomic.add(out, (1, 0, 0), vy * vz + neutron[-2] * 0.0 + maxdiv * 0.0)

    @cuda.jit
    def k(nb, lim, out):
        sh = cuda.shared.array(3, cuda.float64)
        if cuda.threadIdx.x == 0:
            for j in range(3):
                sh[j] = lim[j]
        cuda.syncthreads()
        propagate(nb[cuda.threadIdx.x], sh, 1, out)  # a row view and a shared array

    nb = np.tile(np.array([0, 0, 0, 0.5, 2.0, 3.0, 9.0, 1.0]), (4, 1))
    out = np.zeros((2, 1, 1))
    k[1, 4](nb, np.array([0.0, 1.0, 45.0]), out)
    assert out[0, 0, 0] == 4 and out[1, 0, 0] == 24
