"""numba.cuda programs of the kind in numba's CUDA documentation and tutorials, run unchanged
(``import pykern as cuda``) on the cpu target and compared with numpy / plain Python.

Each test is one small program; where numba.cuda and pykern differ on purpose (README,
"Differences from numba.cuda, on purpose") the expectation is pykern's and says so.
"""

import math

import numpy as np
import pytest

import pykern as cuda
from pykern import float32, int8, int32, int64, uint64
from pykern.lang.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

pytestmark = pytest.mark.usefixtures("cpu_uncached")


# local array bubble sort
@cuda.jit
def sort_rows(a):
    i = cuda.grid(1)
    if i < a.shape[0]:
        loc = cuda.local.array(8, dtype=np.float64)
        for j in range(8):
            loc[j] = a[i, j]
        for p in range(8):
            for q in range(7 - p):
                if loc[q] > loc[q + 1]:
                    loc[q], loc[q + 1] = loc[q + 1], loc[q]
        for j in range(8):
            a[i, j] = loc[j]

def test_local_sort():
    a = np.random.default_rng(2).random((50, 8))
    b = a.copy()
    sort_rows[2, 32](b)
    np.testing.assert_array_equal(b, np.sort(a, axis=1))

# const array
CONSTS = np.array([1.5, -2.25, 3.0, 0.125], dtype=np.float32)
@cuda.jit
def use_const(out):
    c = cuda.const.array_like(CONSTS)
    i = cuda.grid(1)
    if i < out.size:
        out[i] = c[i % 4] * i

def test_const_array():
    out = np.zeros(37, np.float32)
    use_const[1, 64](out)
    i = np.arange(37)
    np.testing.assert_array_equal(out, CONSTS[i % 4] * i.astype(np.float32))

# device function
@cuda.jit(device=True)
def clamp(x, lo, hi):
    return min(max(x, lo), hi)

@cuda.jit
def clamp_k(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = clamp(a[i], -1.0, 1.0)

def test_device_function():
    a = np.linspace(-3, 3, 101)
    out = np.zeros_like(a)
    clamp_k[4, 32](a, out)
    np.testing.assert_array_equal(out, np.clip(a, -1, 1))

# 2d grid with strided loop
@cuda.jit
def add2d(a, b, out):
    x0, y0 = cuda.grid(2)
    sx, sy = cuda.gridsize(2)
    for x in range(x0, a.shape[0], sx):
        for y in range(y0, a.shape[1], sy):
            out[x, y] = a[x, y] + b[x, y]

def test_grid2d_strided():
    a = np.arange(37 * 53, dtype=np.int64).reshape(37, 53)
    b = a[::-1].copy()
    out = np.zeros_like(a)
    add2d[(2, 3), (4, 8)](a, b, out)
    np.testing.assert_array_equal(out, a + b)

# int division/modulo negative
@cuda.jit
def divmod_k(a, b, q, r, q2, r2):
    i = cuda.grid(1)
    if i < a.size:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        x, y = divmod(a[i], b[i])
        q2[i] = x
        r2[i] = y

def test_int_divmod_negative():
    a = np.array([7, -7, 7, -7, 0, 13, -13, -1, 1, -2**31], np.int32)
    b = np.array([2, 2, -2, -2, 3, -5, 5, 3, -3, -1], np.int32)
    q = np.zeros_like(a); r = np.zeros_like(a); q2 = np.zeros_like(a); r2 = np.zeros_like(a)
    divmod_k[1, 32](a, b, q, r, q2, r2)
    with np.errstate(all="ignore"):  # -2**31 // -1 wraps, as in numpy
        np.testing.assert_array_equal(q, a // b)
        np.testing.assert_array_equal(r, a % b)
        np.testing.assert_array_equal(q2, a // b)
        np.testing.assert_array_equal(r2, a % b)

# float floor div / mod
@cuda.jit
def fdivmod(a, b, q, r):
    i = cuda.grid(1)
    if i < a.size:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]

def test_float_divmod():
    a = np.array([7.5, -7.5, 7.5, -7.5, 0.0, -0.0, 1e300, 5.0], np.float64)
    b = np.array([2.0, 2.0, -2.0, -2.0, -3.0, 3.0, 1e-300, 0.1], np.float64)
    q = np.zeros_like(a); r = np.zeros_like(a)
    fdivmod[1, 32](a, b, q, r)
    with np.errstate(all="ignore"):  # 1e300 // 1e-300 is inf
        np.testing.assert_array_equal(q, a // b)
        np.testing.assert_array_equal(r, a % b)
        np.testing.assert_array_equal(np.signbit(r), np.signbit(a % b))


# uint8 overflow
@cuda.jit
def u8(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] + a[i]

@cuda.jit
def i8neg(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = -a[i]

def test_uint8_wraps():
    a = np.arange(0, 256, 7, dtype=np.uint8)
    out = np.zeros_like(a)
    u8[1, 64](a, out)
    np.testing.assert_array_equal(out, a + a)
    b = np.array([-128, -1, 0, 127], np.int8)
    o = np.zeros_like(b)
    i8neg[1, 8](b, o)
    np.testing.assert_array_equal(o, -b)


# selp / fma
@cuda.jit
def selp_fma(a, b, c, out, out2):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = cuda.selp(a[i] > b[i], a[i], b[i])
        out2[i] = cuda.fma(a[i], b[i], c[i])

def test_selp_fma():
    rng = np.random.default_rng(4)
    a, b, c = (rng.random(100).astype(np.float32) for _ in range(3))
    out = np.zeros_like(a); out2 = np.zeros_like(a)
    selp_fma[1, 128](a, b, c, out, out2)
    np.testing.assert_array_equal(out, np.maximum(a, b))
    exp = (a.astype(np.float64) * b + c).astype(np.float32)
    np.testing.assert_array_equal(out2, exp)


# boolean arrays
@cuda.jit
def boolk(a, mask, out):
    i = cuda.grid(1)
    if i < a.size:
        mask[i] = a[i] > 0 and a[i] % 2 == 0
        out[i] = not mask[i]

def test_bool_arrays():
    a = np.arange(-5, 15, dtype=np.int64)
    mask = np.zeros(a.size, np.bool_)
    out = np.zeros(a.size, np.bool_)
    boolk[1, 32](a, mask, out)
    exp = (a > 0) & (a % 2 == 0)
    np.testing.assert_array_equal(mask, exp)
    np.testing.assert_array_equal(out, ~exp)

# views/slices inside kernels
@cuda.jit
def views(a, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        row = a[i]
        ev = row[::2]
        s = 0
        for j in range(ev.shape[0]):
            s += ev[j]
        out[i] = s + row[1:].shape[0] + a[i, -1]

def test_views_in_kernel():
    a = np.arange(60, dtype=np.int64).reshape(6, 10)
    out = np.zeros(6, np.int64)
    views[1, 8](a, out)
    np.testing.assert_array_equal(out, a[:, ::2].sum(1) + 9 + a[:, -1])


# xoroshiro random: monte-carlo pi

@cuda.jit
def compute_pi(rng_states, iterations, out):
    thread_id = cuda.grid(1)
    inside = 0
    for i in range(iterations):
        x = xoroshiro128p_uniform_float32(rng_states, thread_id)
        y = xoroshiro128p_uniform_float32(rng_states, thread_id)
        if x ** 2 + y ** 2 <= 1.0:
            inside += 1
    out[thread_id] = 4.0 * inside / iterations

def test_random_pi():
    n = 256
    states = create_xoroshiro128p_states(n, seed=1)
    out = np.zeros(n, dtype=np.float32)
    compute_pi[2, 128](states, 200, out)
    assert abs(out.mean() - math.pi) < 0.05
    assert out.dtype == np.float32 and len(set(out.tolist())) > 10


# bit ops: clz, ffs, brev, popc on uint32/uint64
@cuda.jit
def bits(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = cuda.clz(a[i])
        out[i, 1] = cuda.ffs(a[i])
        out[i, 2] = cuda.popc(a[i])
        out[i, 3] = cuda.brev(a[i])

def test_bit_intrinsics():
    a = np.array([0, 1, 2, 0x80000000, 0xffffffff, 12345678], np.uint32)
    out = np.zeros((a.size, 4), np.int64)
    bits[1, 8](a, out)
    for k, v in enumerate(a.tolist()):
        clz = 32 - v.bit_length()
        ffs = (v & -v).bit_length()
        popc = bin(v).count("1")
        brev = int(f"{v:032b}"[::-1], 2)
        assert out[k].tolist() == [clz, ffs, popc, brev], (v, out[k])

# int32 overflow wrap and mixing with int64
@cuda.jit
def i32wrap(a, out):
    i = cuda.grid(1)
    if i < a.size:
        x = a[i]
        out[i] = x * x + int32(2147483647)

def test_int32_wrap():
    a = np.array([0, 1, 46341, -46341, 65536, 100000], np.int32)
    out = np.zeros_like(a)
    i32wrap[1, 8](a, out)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, a * a + np.int32(2147483647))

# float32 accumulation stays float32
@cuda.jit
def f32acc(a, out):
    i = cuda.grid(1)
    if i == 0:
        s = float32(0.0)
        for j in range(a.size):
            s += a[j] * 0.1
        out[0] = s

def test_float32_accumulate():
    a = np.random.default_rng(7).random(1000).astype(np.float32)
    out = np.zeros(1, np.float32)
    f32acc[1, 1](a, out)
    s = np.float32(0)
    for v in a:
        s = np.float32(s + v * np.float32(0.1))
    assert out[0] == s

# device function returning tuple + recursion-free helpers
@cuda.jit(device=True)
def minmax(a, lo, hi):
    mn = a[lo]
    mx = a[lo]
    for k in range(lo, hi):
        mn = min(mn, a[k])
        mx = max(mx, a[k])
    return mn, mx

@cuda.jit
def mm(a, out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        lo, hi = minmax(a, i * 10, i * 10 + 10)
        out[i, 0] = lo
        out[i, 1] = hi

def test_device_tuple_return():
    a = np.random.default_rng(8).normal(size=100)
    out = np.zeros((10, 2))
    mm[1, 16](a, out)
    np.testing.assert_array_equal(out[:, 0], a.reshape(10, 10).min(1))
    np.testing.assert_array_equal(out[:, 1], a.reshape(10, 10).max(1))


# stencil with 2d shared array and halos, conditional expressions
@cuda.jit
def blur(src, dst):
    i, j = cuda.grid(2)
    n, m = src.shape
    if 0 < i < n - 1 and 0 < j < m - 1:
        dst[i, j] = (src[i - 1, j] + src[i + 1, j] + src[i, j - 1] + src[i, j + 1]) / 4
    elif i < n and j < m:
        dst[i, j] = src[i, j]

def test_chained_compare_stencil():
    src = np.random.default_rng(9).random((20, 30)).astype(np.float32)
    dst = np.zeros_like(src)
    blur[(3, 4), (8, 8)](src, dst)
    exp = src.copy()
    exp[1:-1, 1:-1] = (src[:-2, 1:-1] + src[2:, 1:-1] + src[1:-1, :-2] + src[1:-1, 2:]) / np.float32(4)
    np.testing.assert_array_equal(dst, exp)

# integer power & negative exponent
@cuda.jit
def powk(a, e, out, fout):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i] ** e[i]
        fout[i] = a[i] ** -1.0

def test_int_power():
    a = np.array([2, 3, -2, 7, 1, -1], np.int64)
    e = np.array([10, 0, 3, 5, 100, 7], np.int64)
    out = np.zeros_like(a); fout = np.zeros(a.size)
    powk[1, 8](a, e, out, fout)
    np.testing.assert_array_equal(out, a ** e)
    np.testing.assert_array_equal(fout, [x ** -1 for x in a.tolist()])


# while loop with break/continue and math.isnan
@cuda.jit
def collatz(a, out):
    i = cuda.grid(1)
    if i < a.size:
        n = a[i]
        steps = 0
        while True:
            if n == 1:
                break
            steps += 1
            if n % 2 == 0:
                n //= 2
                continue
            n = 3 * n + 1
        out[i] = steps

def test_collatz_loops():
    a = np.arange(1, 100, dtype=np.int64)
    out = np.zeros_like(a)
    collatz[1, 128](a, out)
    def c(n):
        s = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            s += 1
        return s
    assert out.tolist() == [c(n) for n in a.tolist()]

# mixed int/float: int // float, uint64 with int64
@cuda.jit
def mixed(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = a[i] // 2.5
        out[i, 1] = a[i] / b[i]
        out[i, 2] = a[i] % 3.5
        out[i, 3] = (a[i] + b[i]) * 1.0

def test_mixed_int_float():
    a = np.array([-7, 7, 0, 100, -1], np.int32)
    b = np.array([2, 3, 5, 7, 9], np.uint64)
    out = np.zeros((5, 4))
    mixed[1, 8](a, b, out)
    exp = np.stack([a // 2.5, a / b, a % 3.5, (a + b) * 1.0], 1)
    np.testing.assert_array_equal(out, exp)

# int accumulator unified with float32 -> numba types acc as float64
@cuda.jit
def dot_rows(a, b, out):
    i = cuda.grid(1)
    if i < a.shape[0]:
        acc = 0
        for j in range(a.shape[1]):
            acc += a[i, j] * b[i, j]
        out[i] = acc

def test_acc_unify():
    rng = np.random.default_rng(0)
    a = rng.random((16, 333)).astype(np.float32)
    b = rng.random((16, 333)).astype(np.float32)
    out = np.zeros(16, np.float64)
    dot_rows[1, 16](a, b, out)
    exp = []
    for i in range(16):
        acc = 0.0
        for j in range(333):
            acc += float(a[i, j] * b[i, j])
        exp.append(acc)
    np.testing.assert_array_equal(out, exp)

@cuda.jit
def idx_neg(out):
    t = cuda.threadIdx.x
    v = t - 40
    out[t, 0] = v // 3
    out[t, 1] = v % 7
    out[t, 2] = cuda.blockDim.x - t - 100

def test_thread_index_signed():
    out = np.zeros((64, 3), np.int64)
    idx_neg[1, 64](out)
    v = np.arange(64) - 40
    np.testing.assert_array_equal(out[:, 0], v // 3)
    np.testing.assert_array_equal(out[:, 1], v % 7)
    np.testing.assert_array_equal(out[:, 2], 64 - np.arange(64) - 100)

@cuda.jit
def casts(x, iout, fout):
    i = cuda.grid(1)
    if i < x.size:
        iout[i, 0] = int(x[i])
        iout[i, 1] = round(x[i])
        iout[i, 2] = math.floor(x[i])
        iout[i, 3] = math.ceil(x[i])
        iout[i, 4] = x[i]          # implicit float->int store truncates
        fout[i] = math.trunc(x[i])

def test_float_to_int_conversions():
    x = np.array([2.5, 3.5, -2.5, -3.7, 3.7, 0.49999, -0.5, 1e10], np.float64)
    iout = np.zeros((x.size, 5), np.int64)
    fout = np.zeros(x.size)
    casts[1, 8](x, iout, fout)
    for k, v in enumerate(x.tolist()):
        assert iout[k].tolist() == [int(v), round(v), math.floor(v), math.ceil(v), int(v)], v
    np.testing.assert_array_equal(fout, np.trunc(x))

@cuda.jit
def small_ints(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = abs(a[i])
        out[i, 1] = a[i] * int8(2)
        out[i, 2] = a[i] >> 1
        out[i, 3] = ~a[i]
        out[i, 4] = a[i] // int8(-1)

def test_int8_ops():
    a = np.array([-128, -1, 0, 1, 127, -77], np.int8)
    out = np.zeros((a.size, 5), np.int8)
    small_ints[1, 8](a, out)
    with np.errstate(all="ignore"):
        exp = np.stack([np.abs(a), a * np.int8(2), a >> 1, ~a, a // np.int8(-1)], 1)
    np.testing.assert_array_equal(out, exp)

@cuda.jit
def compact(a, out, count):
    i = cuda.grid(1)
    if i < a.size and a[i] % 3 == 0:
        k = cuda.atomic.add(count, 0, 1)
        out[k] = a[i]

def test_stream_compaction():
    a = np.arange(1000, dtype=np.int32)
    out = np.full(1000, -1, np.int32)
    count = np.zeros(1, np.int32)
    compact[4, 256](a, out, count)
    n = count[0]
    assert n == 334
    np.testing.assert_array_equal(np.sort(out[:n]), a[a % 3 == 0])

@cuda.jit
def rev_ranges(out):
    i = cuda.grid(1)
    if i == 0:
        k = 0
        for j in range(10, 0, -3):
            out[k] = j
            k += 1
        for j in range(5, -1, -1):
            out[k] = j
            k += 1
        for j in range(3, 3):
            out[k] = 99
        for j in range(0, 10, 4):
            out[k] = j
            k += 1

def test_range_steps():
    out = np.zeros(20, np.int64)
    rev_ranges[1, 1](out)
    exp = list(range(10, 0, -3)) + list(range(5, -1, -1)) + list(range(0, 10, 4))
    assert out[:len(exp)].tolist() == exp

@cuda.jit(device=True)
def fill_eye(m, n):
    for r in range(n):
        for c in range(n):
            m[r, c] = 1 if r == c else 0

@cuda.jit
def local2d(out):
    i = cuda.grid(1)
    if i < out.shape[0]:
        m = cuda.local.array((3, 3), int32)
        fill_eye(m, 3)
        m[1, 2] = i
        s = 0
        for r in range(3):
            for c in range(3):
                s += m[r, c] * (r * 3 + c)
        out[i] = s

def test_local_2d_to_device():
    out = np.zeros(10, np.int64)
    local2d[1, 16](out)
    np.testing.assert_array_equal(out, 0 + 4 + 8 + np.arange(10) * 5)


@cuda.jit(device=True)
def lerp(a, b, t=0.5):
    return a + (b - a) * t

@cuda.jit
def kw(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = lerp(a[i], b[i])
        out[i, 1] = lerp(a[i], b[i], t=0.25)
        out[i, 2] = lerp(b=a[i], a=b[i])

def test_device_kwargs():
    a = np.arange(5.0); b = a * 10
    out = np.zeros((5, 3))
    kw[1, 8](a, b, out)
    np.testing.assert_array_equal(out[:, 0], a + (b - a) * 0.5)
    np.testing.assert_array_equal(out[:, 1], a + (b - a) * 0.25)
    np.testing.assert_array_equal(out[:, 2], b + (a - b) * 0.5)

COEF = (1.0, -0.5, 0.25)
N = 3
@cuda.jit
def poly(x, out):
    i = cuda.grid(1)
    if i < x.size:
        acc = 0.0
        for k in range(N):
            acc = acc * x[i] + COEF[k]
        out[i] = acc

def test_global_tuple_constant():
    x = np.linspace(-1, 1, 9)
    out = np.zeros_like(x)
    poly[1, 16](x, out)
    np.testing.assert_array_equal(out, ((1.0 * x) - 0.5) * x + 0.25)


@cuda.jit
def kernel3d(a):
    x, y, z = cuda.grid(3)
    if x < a.shape[0] and y < a.shape[1] and z < a.shape[2]:
        a[x, y, z] = x * 100 + y * 10 + z

def test_grid3d():
    a = np.zeros((5, 6, 7), np.int32)
    kernel3d[(2, 2, 2), (4, 4, 4)](a)
    x, y, z = np.indices(a.shape)
    np.testing.assert_array_equal(a, x * 100 + y * 10 + z)

@cuda.jit
def fortran(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = a[i, j] * 2 + a.ndim + len(a)

def test_fortran_and_transposed():
    a = np.asfortranarray(np.arange(30.0).reshape(5, 6))
    out = np.zeros((5, 6))
    fortran[(1, 1), (8, 8)](a, out)
    np.testing.assert_array_equal(out, a * 2 + 2 + 5)
    at = np.arange(30.0).reshape(6, 5).T
    out2 = np.zeros((5, 6))
    fortran[(1, 1), (8, 8)](at, out2)
    np.testing.assert_array_equal(out2, at * 2 + 2 + 5)

@cuda.jit
def to_bool(a, f, out, out2):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i]
        out2[i] = f[i]

def test_store_into_bool_array():
    a = np.array([0, 1, 2, -1, 256, 0], np.int64)
    f = np.array([0.0, 0.5, -0.0, np.nan, 1e-300, 2.0])
    out = np.zeros(6, np.bool_); out2 = np.zeros(6, np.bool_)
    to_bool[1, 8](a, f, out, out2)
    np.testing.assert_array_equal(out, a.astype(bool))
    np.testing.assert_array_equal(out2, f.astype(bool))

@cuda.jit
def narrowing(a, f, i8, f32, f16, u64):
    i = cuda.grid(1)
    if i < a.size:
        i8[i] = a[i]
        f32[i] = f[i]
        f16[i] = f[i]
        u64[i] = abs(f[i]) * 1e10

def test_narrowing_stores():
    a = np.array([300, -129, 2**40 + 5, -1, 127, 128], np.int64)
    f = np.array([1 + 2**-24 + 2**-50, 0.1, 65519.9, 1e-8, -3.3e38, 2.000000000001])
    i8 = np.zeros(6, np.int8); f32 = np.zeros(6, np.float32); f16 = np.zeros(6, np.float16)
    u64 = np.zeros(6, np.uint64)
    narrowing[1, 8](a, f, i8, f32, f16, u64)
    np.testing.assert_array_equal(i8, a.astype(np.int8))
    np.testing.assert_array_equal(f32, f.astype(np.float32))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(f16, f.astype(np.float16))
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(u64[[0, 1, 3, 5]], (np.abs(f) * 1e10).astype(np.uint64)[[0, 1, 3, 5]])

@cuda.jit
def big_uint(a, out, fo):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i]
        fo[i] = a[i]

def test_uint64_float_roundtrip():
    a = np.array([0, 2**63, 2**64 - 1, 2**63 + 2**11, 12345], np.uint64)
    f = a.astype(np.float64)
    out = np.zeros_like(a); fo = np.zeros_like(f)
    big_uint[1, 8](f, out, fo)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(out[[0, 1, 3, 4]], f.astype(np.uint64)[[0, 1, 3, 4]])
    fo2 = np.zeros_like(f)
    big_uint[1, 8](a, np.zeros_like(a), fo2)
    np.testing.assert_array_equal(fo2, a.astype(np.float64))

@cuda.jit
def neg_index(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[i - 1] + a[-1] * 1000
        out[i] += a[i - a.size]

def test_runtime_negative_index():
    a = np.arange(10, dtype=np.int64)
    out = np.zeros(10, np.int64)
    neg_index[1, 16](a, out)
    np.testing.assert_array_equal(out, np.roll(a, 1) + 9000 + a)

@cuda.jit
def slices(a, out):
    i = cuda.grid(1)
    if i == 0:
        r = a[::-1]
        t = a[-3:]
        u = a[1:8:3]
        for k in range(r.size):
            out[k] = r[k]
        for k in range(t.size):
            out[10 + k] = t[k]
        for k in range(u.size):
            out[13 + k] = u[k]
        out[16] = r.shape[0] + t.shape[-1] * 100 + u.size * 10000

def test_slices_negative_step():
    a = np.arange(10, dtype=np.int64) * 3
    out = np.zeros(17, np.int64)
    slices[1, 1](a, out)
    exp = list(a[::-1]) + list(a[-3:]) + list(a[1:8:3]) + [10 + 300 + 30000]
    assert out.tolist() == exp

@cuda.jit
def transpose_view(a, out):
    i, j = cuda.grid(2)
    at = a.T
    if i < at.shape[0] and j < at.shape[1]:
        out[i, j] = at[i, j]

def test_transpose_in_kernel():
    a = np.arange(12.0).reshape(3, 4)
    out = np.zeros((4, 3))
    transpose_view[(1, 1), (8, 8)](a, out)
    np.testing.assert_array_equal(out, a.T)

@cuda.jit(device=True)
def pick(x):
    if x > 0:
        return 1
    return 2.5

@cuda.jit
def unify(a, out):
    i = cuda.grid(1)
    if i < a.size:
        y = 1
        if a[i] > 2:
            y = 0.5
        out[i, 0] = y
        out[i, 1] = pick(a[i] - 3)
        out[i, 2] = a[i] if a[i] > 3 else 0.25

def test_type_unification():
    a = np.arange(6, dtype=np.int64)
    out = np.zeros((6, 3))
    unify[1, 8](a, out)
    for k in range(6):
        assert out[k].tolist() == [0.5 if k > 2 else 1, 1 if k - 3 > 0 else 2.5, k if k > 3 else 0.25]

@cuda.jit
def augassign(a, b, u):
    i = cuda.grid(1)
    if i < a.size:
        a[i] //= 3
        b[i] %= -4
        b[i] **= 2
        a[i] <<= 2
        u[i] += 200
        u[i] -= 1

def test_augmented_array_ops():
    a0 = np.array([-7, 8, 9, -1], np.int64); b0 = np.array([-7, 8, 9, -1], np.int64)
    u0 = np.array([0, 55, 56, 255], np.uint8)
    a, b, u = a0.copy(), b0.copy(), u0.copy()
    augassign[1, 4](a, b, u)
    np.testing.assert_array_equal(a, (a0 // 3) << 2)
    np.testing.assert_array_equal(b, (b0 % -4) ** 2)
    np.testing.assert_array_equal(u, (u0 + np.uint8(200)) - np.uint8(1))


@cuda.jit
def scalars(x, y, z, b, out):
    out[0] = x
    out[1] = y
    out[2] = z
    out[3] = b
    out[4] = x // 7

def test_scalar_argument_types():
    out = np.zeros(5, np.float64)
    scalars[1, 1](2**40 + 3, -2.5, np.float32(0.1), True, out)
    assert out.tolist() == [2**40 + 3, -2.5, float(np.float32(0.1)), 1.0, (2**40 + 3) // 7]
    out2 = np.zeros(5, np.int64)
    scalars[1, 1](-9, 3.9, np.float32(-3.9), False, out2)
    assert out2.tolist() == [-9, 3, -3, 0, -2]

@cuda.jit
def device_arr(a, n):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += n

def test_device_array_slices():
    h = np.arange(100, dtype=np.float32)
    d = cuda.to_device(h)
    device_arr[1, 64](d[10:20], 1.5)
    device_arr.forall(5)(d[::20], 100)
    r = d.copy_to_host()
    exp = h.copy(); exp[10:20] += 1.5; exp[::20] += 100
    np.testing.assert_array_equal(r, exp)

@cuda.jit
def bools_ops(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i, 0] = a[i] & b[i]
        out[i, 1] = a[i] ^ b[i]
        out[i, 2] = a[i] + b[i]
        out[i, 3] = not a[i]
        out[i, 4] = -a[i]
        out[i, 5] = ~a[i]

def test_bool_arith():
    a = np.array([True, True, False, False]); b = np.array([True, False, True, False])
    out = np.zeros((4, 6), np.int64)
    bools_ops[1, 4](a, b, out)
    for k in range(4):
        x, y = bool(a[k]), bool(b[k])
        assert out[k].tolist() == [x & y, x ^ y, x + y, not x, -x, not x], (x, y, out[k])  # ~ of a bool is numpy's (numba's) logical not

@cuda.jit
def uint_mix(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        d = a[i] - b[i]
        out[i, 0] = d
        out[i, 1] = d > 0
        out[i, 2] = a[i] + np.int32(-1)
        out[i, 3] = a[i] // b[i]

def test_uint32_wrap_and_promotion():
    a = np.array([1, 5, 0, 4000000000], np.uint32); b = np.array([2, 3, 1, 7], np.uint32)
    out = np.zeros((4, 4), np.int64)
    uint_mix[1, 4](a, b, out)
    # numba's integer rule: uint32 - uint32 is uint64 (1 - 2 wraps to 2**64 - 1, stored as int64 -1)
    a64, b64 = a.astype(np.uint64), b.astype(np.uint64)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out[:, 0], (a64 - b64).astype(np.int64))
        np.testing.assert_array_equal(out[:, 1], (a64 - b64) > 0)
        np.testing.assert_array_equal(out[:, 2], a.astype(np.int64) - 1)
        np.testing.assert_array_equal(out[:, 3], a // b)


@cuda.jit
def xorshift(seeds, out):
    i = cuda.grid(1)
    if i < seeds.size:
        x = seeds[i]
        for _ in range(5):
            x ^= x << uint64(13)
            x ^= x >> uint64(7)
            x ^= x << uint64(17)
        out[i] = x

def test_xorshift64_uint64():
    seeds = np.array([1, 88172645463325252, 2**64 - 1, 12345], np.uint64)
    out = np.zeros_like(seeds)
    xorshift[1, 4](seeds, out)
    exp = []
    M = 2**64 - 1
    for s in seeds.tolist():
        x = s
        for _ in range(5):
            x ^= (x << 13) & M
            x ^= x >> 7
            x ^= (x << 17) & M
        exp.append(x)
    assert out.tolist() == exp


@cuda.jit(device=True)
def mandel(x, y, max_iters):
    c = complex(x, y)
    z = 0.0j
    for i in range(max_iters):
        z = z * z + c
        if (z.real * z.real + z.imag * z.imag) >= 4:
            return i
    return max_iters

@cuda.jit
def mandel_kernel(min_x, max_x, min_y, max_y, image, iters):
    height = image.shape[0]
    width = image.shape[1]
    pixel_size_x = (max_x - min_x) / width
    pixel_size_y = (max_y - min_y) / height
    startX, startY = cuda.grid(2)
    gridX = cuda.gridDim.x * cuda.blockDim.x
    gridY = cuda.gridDim.y * cuda.blockDim.y
    for x in range(startX, width, gridX):
        real = min_x + x * pixel_size_x
        for y in range(startY, height, gridY):
            imag = min_y + y * pixel_size_y
            image[y, x] = mandel(real, imag, iters)

def test_mandelbrot():
    image = np.zeros((24, 36), dtype=np.uint8)
    mandel_kernel[(2, 2), (8, 8)](-2.0, 1.0, -1.0, 1.0, image, 20)
    exp = np.zeros_like(image)
    psx = 3.0 / 36; psy = 2.0 / 24
    for x in range(36):
        for y in range(24):
            c = complex(-2.0 + x * psx, -1.0 + y * psy)
            z = 0j
            n = 20
            for i in range(20):
                z = z * z + c
                if z.real * z.real + z.imag * z.imag >= 4:
                    n = i
                    break
            exp[y, x] = n
    np.testing.assert_array_equal(image, exp)

RSQRT2 = 1 / math.sqrt(2.0)

@cuda.jit(device=True)
def cnd(d):
    A1 = 0.31938153; A2 = -0.356563782; A3 = 1.781477937; A4 = -1.821255978; A5 = 1.330274429
    K = 1.0 / (1.0 + 0.2316419 * math.fabs(d))
    ret_val = (RSQRT2 / math.sqrt(math.pi) * math.exp(-0.5 * d * d) *
               (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    if d > 0:
        ret_val = 1.0 - ret_val
    return ret_val

@cuda.jit
def black_scholes(callResult, putResult, S, X, T, R, V):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i >= S.shape[0]:
        return
    sqrtT = math.sqrt(T[i])
    d1 = (math.log(S[i] / X[i]) + (R + 0.5 * V * V) * T[i]) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    cndd1 = cnd(d1)
    cndd2 = cnd(d2)
    expRT = math.exp((-1. * R) * T[i])
    callResult[i] = (S[i] * cndd1 - X[i] * expRT * cndd2)
    putResult[i] = (X[i] * expRT * (1.0 - cndd2) - S[i] * (1.0 - cndd1))

def test_black_scholes():
    rng = np.random.default_rng(0)
    n = 300
    S = rng.uniform(5, 30, n); X = rng.uniform(1, 100, n); T = rng.uniform(0.25, 10, n)
    R, V = 0.02, 0.30
    call = np.zeros(n); put = np.zeros(n)
    black_scholes[(n + 127) // 128, 128](call, put, S, X, T, R, V)
    def cnd_np(d):
        A1 = 0.31938153; A2 = -0.356563782; A3 = 1.781477937; A4 = -1.821255978; A5 = 1.330274429
        K = 1.0 / (1.0 + 0.2316419 * np.abs(d))
        r = (RSQRT2 / math.sqrt(math.pi) * np.exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
        return np.where(d > 0, 1.0 - r, r)
    sqrtT = np.sqrt(T)
    d1 = (np.log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    c1, c2 = cnd_np(d1), cnd_np(d2)
    expRT = np.exp(-R * T)
    np.testing.assert_allclose(call, S * c1 - X * expRT * c2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(put, X * expRT * (1 - c2) - S * (1 - c1), rtol=1e-12, atol=1e-12)

@cuda.jit
def life_step(grid, out):
    i, j = cuda.grid(2)
    n, m = grid.shape
    if i < n and j < m:
        s = 0
        for di in range(-1, 2):
            for dj in range(-1, 2):
                if di != 0 or dj != 0:
                    s += grid[(i + di) % n, (j + dj) % m]
        alive = grid[i, j] == 1
        out[i, j] = 1 if (s == 3 or (alive and s == 2)) else 0

def test_game_of_life_wraparound():
    g = (np.random.default_rng(1).random((13, 17)) < 0.4).astype(np.uint8)
    out = np.zeros_like(g)
    life_step[(2, 3), (8, 8)](g, out)
    s = sum(np.roll(np.roll(g.astype(int), di, 0), dj, 1) for di in (-1, 0, 1) for dj in (-1, 0, 1) if di or dj)
    exp = ((s == 3) | ((g == 1) & (s == 2))).astype(np.uint8)
    np.testing.assert_array_equal(out, exp)

@cuda.jit
def bitonic(a):
    sh = cuda.shared.array(128, float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncthreads()
    k = 2
    while k <= 128:
        j = k // 2
        while j > 0:
            ixj = t ^ j
            if ixj > t:
                up = (t & k) == 0
                if (sh[t] > sh[ixj]) == up:
                    sh[t], sh[ixj] = sh[ixj], sh[t]
            cuda.syncthreads()
            j //= 2
        k *= 2
    a[t] = sh[t]

def test_bitonic_sort_shared():
    a = np.random.default_rng(2).random(128).astype(np.float32)
    b = a.copy()
    bitonic[1, 128](b)
    np.testing.assert_array_equal(b, np.sort(a))

@cuda.jit
def nbody_acc(pos, acc, eps2):
    i = cuda.grid(1)
    if i < pos.shape[0]:
        ax = float32(0.0); ay = float32(0.0); az = float32(0.0)
        for j in range(pos.shape[0]):
            dx = pos[j, 0] - pos[i, 0]
            dy = pos[j, 1] - pos[i, 1]
            dz = pos[j, 2] - pos[i, 2]
            r2 = dx * dx + dy * dy + dz * dz + eps2
            inv = float32(1.0) / math.sqrt(r2 * r2 * r2)
            ax += dx * inv; ay += dy * inv; az += dz * inv
        acc[i, 0] = ax; acc[i, 1] = ay; acc[i, 2] = az

def test_nbody_float32():
    pos = np.random.default_rng(3).random((64, 3)).astype(np.float32)
    acc = np.zeros_like(pos)
    nbody_acc[1, 64](pos, acc, np.float32(0.01))
    exp = np.zeros_like(pos)
    for i in range(64):
        ax = np.float32(0); ay = np.float32(0); az = np.float32(0)
        for j in range(64):
            d = pos[j] - pos[i]
            r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + np.float32(0.01)
            inv = np.float32(1.0) / np.sqrt(r2 * r2 * r2)
            ax += d[0] * inv; ay += d[1] * inv; az += d[2] * inv
        exp[i] = (ax, ay, az)
    np.testing.assert_array_equal(acc, exp)

@cuda.vectorize(["float32(float32, float32)", "float64(float64, float64)"])
def rel_diff(x, y):
    return 2 * (x - y) / (x + y)

def test_vectorize_and_reduce():
    x = np.arange(1, 100, dtype=np.float32); y = x[::-1].copy()
    r = rel_diff(x, y)
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r, np.float32(2) * (x - y) / (x + y))

    @cuda.reduce
    def max_reduce(a, b):
        return max(a, b)
    v = np.random.default_rng(4).random(1001)
    assert max_reduce(v) == v.max()
    assert max_reduce(v, init=5.0) == 5.0

@cuda.guvectorize(["void(float64[:,:], float64[:,:], float64[:,:])"], "(m,n),(n,p)->(m,p)")
def gmatmul(A, B, C):
    m, n = A.shape
    n, p = B.shape
    for i in range(m):
        for j in range(p):
            C[i, j] = 0
            for k in range(n):
                C[i, j] += A[i, k] * B[k, j]

def test_guvectorize_matmul():
    A = np.random.default_rng(5).random((4, 3, 5)); B = np.random.default_rng(6).random((4, 5, 2))
    C = gmatmul(A, B)
    np.testing.assert_allclose(C, A @ B, rtol=1e-14)


# ---------------------------------------------------------------- fixed here

@cuda.jit
def divmod_kernel(a, b, q, r, fq, fr, c):
    i = cuda.grid(1)
    if i < a.size:
        x, y = divmod(a[i], b[i])
        q[i] = x
        r[i] = y
        t = divmod(a[i] * 1.5, b[i])
        fq[i] = t[0]
        fr[i] = t[1]
        m, n = divmod(7, -2)
        u, v = divmod(a[i], 3)
        c[i] = m * 100 + n + int64(u) * 10000 + int64(v) * 1000000  # u, v: int32 like a[i]


def test_divmod_builtin():
    """numba's builtin divmod (Python's signs); was "cannot call Python function 'divmod'"."""
    a = np.array([7, -7, 7, -7, 0, 13, -13, -1, 1, -2**31], np.int32)
    b = np.array([2, 2, -2, -2, 3, -5, 5, 3, -3, -1], np.int32)
    q, r = np.zeros_like(a), np.zeros_like(a)
    fq, fr = np.zeros(a.size), np.zeros(a.size)
    c = np.zeros(a.size, np.int64)
    divmod_kernel[1, 16](a, b, q, r, fq, fr, c)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(q, a // b)
        np.testing.assert_array_equal(r, a % b)
    np.testing.assert_array_equal(fq, (a * 1.5) // b)
    np.testing.assert_array_equal(fr, (a * 1.5) % b)
    assert c.tolist() == [-400 - 1 + (x // 3) * 10000 + (x % 3) * 1000000 for x in a.tolist()]


def _round_of_inf(out):
    out[0] = round(math.inf)


def _round_of_nan(out):
    out[0] = round(-math.nan)


@pytest.mark.parametrize("fn, text", [(_round_of_inf, "round(inf)"), (_round_of_nan, "round(nan)")])
def test_round_of_nonfinite_constant_is_a_clean_compile_error(fn, text):
    """round(math.inf) folded at compile time: a CompileError at the call (as math.floor(inf)),
    not an "internal error ... OverflowError"."""
    k = cuda.jit(fn)
    with pytest.raises(cuda.CompileError) as e:
        k[1, 1](np.zeros(1, np.int64))
    msg = str(e.value)
    assert "internal error" not in msg
    assert text in msg and "^" in msg


# ---------------------------------------------------------------- barriers everywhere


@cuda.jit(device=True)
def _sum_all(*args):
    s = 0
    for v in args:
        s += v
    return s


def _calls_star_args(out):
    out[0] = _sum_all(1, 2, 3)


def test_star_args_device_function_packs_a_tuple_as_numba():
    """numba packs *args into a tuple; so does pykern (it said "takes 0 argument(s) but 3 were
    given", then named the *args as unsupported)."""
    k = cuda.jit(_calls_star_args)
    out = np.zeros(1)
    k[1, 1](out)
    assert out[0] == 6.0
