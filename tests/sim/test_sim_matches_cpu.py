"""The sim target computes what the compiled cpu target computes, bit for bit.

Each kernel program runs on both targets over the same inputs (integer extremes,
NaN, inf, -0.0); the outputs are compared as bytes.
"""

import math

import numpy as np
import pytest

import pykern as cuda
from pykern import runtime as targets

I32 = np.array([0, 1, -1, 7, -7, 2**31 - 1, -2**31, 123456789, -98765, 3], np.int32)
U32 = I32.view(np.uint32)
I64 = np.array([0, 1, -1, 2**63 - 1, -2**63, 10**12, -3, 5, 64, 63], np.int64)
F32 = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 3e38, 1e-45, 7.0], np.float32)
F64 = F32.astype(np.float64) * 1.1


def on(target, kernel, config, *arrays):
    saved = list(targets._chosen)
    cuda.set_target(target)
    try:
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in arrays]
        kernel[config](*copies)
        return copies
    finally:
        targets._chosen[:] = saved


def same(kernel, config, *arrays, outputs=None):
    """Run on cpu and sim; every array (or those at ``outputs``) equal as bytes."""
    cpu = on("cpu", kernel, config, *arrays)
    sim = on("sim", kernel, config, *arrays)
    for k, (c, s) in enumerate(zip(cpu, sim)):
        if outputs is None or k in outputs:
            assert c.tobytes() == s.tobytes(), (k, c, s)
    return sim


@cuda.jit
def int32_ops(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        x, y = a[i], b[i]
        out[i, 0] = x + y
        out[i, 1] = x - y
        out[i, 2] = x * y
        out[i, 3] = x // y
        out[i, 4] = x % y
        out[i, 5] = x << (y & 40)
        out[i, 6] = x >> (y & 40)
        out[i, 7] = -x
        out[i, 8] = ~x
        out[i, 9] = x ^ y | (x & y)
        out[i, 10] = abs(x)
        out[i, 11] = min(x, y) + max(x, y)


@pytest.mark.parametrize("shift", [0, 3, 7])
def test_int32_arithmetic_wraps_like_the_cpu_target(shift):
    b = np.roll(I32, shift)
    same(int32_ops, (1, 16), I32, b, np.zeros((I32.size, 12), np.int32), outputs={2})


@cuda.jit
def uint_and_int64_ops(a, b, u, v, out, uout):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = a[i] * b[i] + a[i]
        out[i, 1] = a[i] // b[i]
        out[i, 2] = a[i] % b[i]
        out[i, 3] = a[i] ** 3
        out[i, 4] = a[i] >> 70
        uout[i, 0] = u[i] - v[i]
        uout[i, 1] = u[i] >> 3
        uout[i, 2] = u[i] // v[i]
        uout[i, 3] = u[i] * v[i]


def test_uint32_and_int64_match():
    same(uint_and_int64_ops, (2, 8), I64, np.roll(I64, 3), U32, np.roll(U32, 4),
         np.zeros((10, 5), np.int64), np.zeros((10, 4), np.uint32), outputs={4, 5})


@cuda.jit
def float_ops(x, y, out, ints):
    i = cuda.grid(1)
    if i < x.size:
        a, b = x[i], y[i]
        out[i, 0] = a + b
        out[i, 1] = a * b - a
        out[i, 2] = a / b
        out[i, 3] = a // b
        out[i, 4] = a % b
        out[i, 5] = math.sqrt(abs(a))
        out[i, 6] = math.floor(a) + math.ceil(b)
        out[i, 7] = min(a, b)
        out[i, 8] = max(a, b)
        ints[i, 0] = int(a)
        ints[i, 1] = np.int32(b * np.float32(1e10))
        ints[i, 2] = a < b
        ints[i, 3] = a != b


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_arithmetic_and_casts_match(dtype):
    x = F32.astype(dtype)
    same(float_ops, (1, 10), x, np.roll(x, 3), np.zeros((10, 9), dtype), np.zeros((10, 4), np.int32),
         outputs={2, 3})


@cuda.jit
def half_ops(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = x[i] + y[i]
        out[i, 1] = x[i] * y[i]
        out[i, 2] = x[i] / y[i]


def test_float16_matches():
    x = np.array([0.1, 65504, -3.5, 1e-7, np.nan, 2.0, -0.0, 7.25], np.float16)
    same(half_ops, (1, 8), x, np.roll(x, 2), np.zeros((8, 3), np.float16), outputs={2})


@cuda.jit
def complex_ops(x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = x[i] * y[i]
        out[i, 1] = x[i] + y[i].conjugate()
        out[i, 2] = x[i].real - y[i].imag


def test_complex64_matches():
    with np.errstate(invalid="ignore"):  # inf * 1j on the host
        x = (F32[:8] + 1j * np.roll(F32[:8], 1)).astype(np.complex64)
    x[np.isnan(x)] = 1 + 2j
    same(complex_ops, (1, 8), x, np.roll(x, 3), np.zeros((8, 3), np.complex64), outputs={2})


@cuda.jit
def block_sum(x, out, counts):
    buf = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    buf[t] = x[i] if i < x.size else np.float32(0)
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    n = cuda.syncthreads_count(x[i] > 0 if i < x.size else False)
    if t == 0:
        out[cuda.blockIdx.x] = buf[0]
        counts[cuda.blockIdx.x] = n


def test_shared_memory_tree_reduction_with_barriers_matches():
    x = np.random.default_rng(1).standard_normal(200).astype(np.float32)
    sim = same(block_sum, (4, 64), x, np.zeros(4, np.float32), np.zeros(4, np.int32), outputs={1, 2})
    assert sim[2].tolist() == [int((x[k * 64:(k + 1) * 64] > 0).sum()) for k in range(4)]


@cuda.jit
def atomics(x, acc, hist, olds):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(acc, 0, x[i])
        cuda.atomic.max(acc, 1, x[i])
        cuda.atomic.min(acc, 2, x[i])
        cuda.atomic.add(hist, i % 4, 1)
        olds[i] = cuda.atomic.inc(hist, 4, 5)
        cuda.atomic.cas(hist, 5, 0, i)


def test_atomics_match():
    x = np.arange(-20, 30, dtype=np.int32) * 7 % 13
    same(atomics, (2, 32), x, np.zeros(3, np.int32), np.zeros(6, np.int32), np.zeros(50, np.int32),
         outputs={1, 2, 3})


@cuda.jit(device=True)
def poly(v, k):
    acc = v
    for _ in range(k):
        acc = acc * v + np.float32(0.5)
    return acc


COEFFS = np.array([1.5, -2.0, 0.25, 8.0], np.float32)


@cuda.jit
def local_and_const(x, out):
    tmp = cuda.local.array(4, np.float32)
    c = cuda.const.array_like(COEFFS)
    i = cuda.grid(1)
    if i < x.size:
        for k in range(4):
            tmp[k] = poly(x[i], k) * c[k]
        out[i] = tmp[0] + tmp[1] + tmp[2] + tmp[3]


def test_local_const_memory_and_device_functions_match():
    x = np.linspace(-2, 2, 37).astype(np.float32)
    same(local_and_const, (2, 32), x, np.zeros(37, np.float32), outputs={1})


REC = np.dtype([("a", np.int32), ("b", np.float32)])


@cuda.jit
def records(r, out):
    i = cuda.grid(1)
    if i < r.size:
        out[i] = r[i].a * r[i].b
        r[i].a = r[i].a + 1


def test_records_match():
    r = np.zeros(5, REC)
    r["a"] = [1, -2, 3, 2**31 - 1, 0]
    r["b"] = [0.5, 1.25, -3, 2, np.nan]
    same(records, (1, 8), r, np.zeros(5, np.float32))


@cuda.jit
def tiled_matmul(A, B, C):
    TILE = 8
    sA = cuda.shared.array((8, 8), np.float32)
    sB = cuda.shared.array((8, 8), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = np.float32(0)
    for t in range((A.shape[1] + TILE - 1) // TILE):
        sA[ty, tx] = A[row, t * TILE + tx] if row < A.shape[0] and t * TILE + tx < A.shape[1] else np.float32(0)
        sB[ty, tx] = B[t * TILE + ty, col] if col < B.shape[1] and t * TILE + ty < B.shape[0] else np.float32(0)
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


def test_tiled_matmul_matches():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((12, 10)).astype(np.float32)
    B = rng.standard_normal((10, 9)).astype(np.float32)
    same(tiled_matmul, ((2, 2), (8, 8)), A, B, np.zeros((12, 9), np.float32), outputs={2})
