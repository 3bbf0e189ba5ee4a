"""``np.empty``/``np.zeros``/``np.ones``/``np.full`` (and their ``*_like`` forms) inside
kernels: numba.cuda allocates them with its NRT; pykern gives each thread a local array,
so the shape must be known at compile time -- on the cpu target against numpy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


@cuda.jit
def fills(out, x):
    i = cuda.grid(1)
    t = np.zeros(4, np.float32)
    t[1] = 2 + i
    o = np.ones((2, 3), dtype=np.int32)
    f = np.full(3, x)
    g = np.full((2,), 7)
    e = np.empty(5)
    e[:] = 1.5
    z = np.zeros_like(o)
    z[1, 2] = 9
    out[i, 0] = t.sum()
    out[i, 1] = o.sum()
    out[i, 2] = f.sum()
    out[i, 3] = g.sum()
    out[i, 4] = e.sum()
    out[i, 5] = z.sum() + np.full_like(f, 2).sum()
    for j in range(3):
        w = np.zeros(2)  # zeroed again on every iteration
        w[0] += j
        out[i, 6] += w[0] + w[1]


@settings(max_examples=20, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=32) | st.sampled_from([-0.0, 2.5]))
def test_fills_and_per_thread_arrays_equal_numpy(x):
    out = np.zeros((4, 7))
    fills[1, 4](out, x)
    want = [[np.float32(2 + i), 6, np.full(3, x).sum(), np.full(2, 7).sum(), 7.5, 9 + np.full(3, 2.0).sum(), 3.0]
            for i in range(4)]
    assert np.array_equal(out, np.array(want, np.float64))


def test_result_dtypes_follow_numpy():
    @cuda.jit
    def k(out_f, out_i, out_b, out_c):
        out_f[0] = np.zeros(2)[0] + 0.5            # float64 by default
        out_i[0] = np.full(2, 7)[1] // 2           # an int literal fills int64
        out_b[0] = np.full(1, True)[0]
        out_c[0] = np.ones(3, np.complex64)[2]

    f, i, b, c = np.zeros(1), np.zeros(1, np.int64), np.zeros(1, np.bool_), np.zeros(1, np.complex64)
    k[1, 1](f, i, b, c)
    assert f[0] == 0.5 and i[0] == 3 and b[0] and c[0] == 1


def test_alloc_in_a_barrier_kernel_is_private_per_thread():
    @cuda.jit
    def k(out):
        i = cuda.threadIdx.x
        acc = np.zeros(3, np.int64)
        acc[0] = i
        cuda.syncthreads()
        acc[1] = i * 2
        cuda.syncthreads()
        out[i] = acc.sum()

    out = np.zeros(8, np.int64)
    k[1, 8](out)
    assert np.array_equal(out, 3 * np.arange(8))


def test_run_time_shapes_are_compile_errors_with_a_caret():
    @cuda.jit
    def k(n, out):
        t = np.zeros(n)
        out[0] = t[0]

    with pytest.raises(cuda.CompileError, match="shape of np.zeros") as ei:
        k[1, 1](3, np.zeros(1))
    assert "t = np.zeros(n)" in str(ei.value) and "^" in str(ei.value)

    @cuda.jit
    def like(a, out):
        t = np.zeros_like(a)
        out[0] = t[0]

    with pytest.raises(cuda.CompileError, match="known at compile time"):
        like[1, 1](np.ones(3), np.zeros(1))
