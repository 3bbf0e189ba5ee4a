"""numba-cuda's ``tests/cudapy/test_intrinsics.py`` (see conftest.py): thread/grid indices, selp, popc,
fma, fp16 arithmetic, cbrt/brev/clz/ffs, laneid, round."""

from __future__ import annotations

import itertools
import operator

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def _fill3d_threadidx(ary):
    i = cuda.threadIdx.x
    j = cuda.threadIdx.y
    k = cuda.threadIdx.z
    ary[i, j, k] = (i + 1) * (j + 1) * (k + 1)


def _simple_grid2d(ary):
    i, j = cuda.grid(2)
    ary[i, j] = i + j


def _simple_gridsize2d(ary):
    i, j = cuda.grid(2)
    x, y = cuda.gridsize(2)
    if i == 0 and j == 0:
        ary[0] = x
        ary[1] = y


def _intrinsic_forloop_step(c):
    startX, startY = cuda.grid(2)
    gridX = cuda.gridDim.x * cuda.blockDim.x
    gridY = cuda.gridDim.y * cuda.blockDim.y
    height, width = c.shape
    for x in range(startX, width, gridX):
        for y in range(startY, height, gridY):
            c[y, x] = x + y


def _simple_popc(ary, c):
    ary[0] = cuda.popc(c)


def _simple_bit_count(ary, c):
    ary[0] = c.bit_count()


def _simple_fma(ary, a, b, c):
    ary[0] = cuda.fma(a, b, c)


def _simple_cbrt(ary, a):
    ary[0] = cuda.cbrt(a)


def _simple_brev(ary, c):
    ary[0] = cuda.brev(c)


def _simple_clz(ary, c):
    ary[0] = cuda.clz(c)


def _simple_ffs(ary, c):
    ary[0] = cuda.ffs(c)


def _simple_round(ary, c):
    ary[0] = round(c)


def _simple_round_to(ary, c, ndigits):
    ary[0] = round(c, ndigits)


def _branching_with_ifs(a, b, c):
    i = cuda.grid(1)
    if a[i] > 4:
        if b % 2 == 0:
            a[i] = c[i]
        else:
            a[i] = 13
    else:
        a[i] = 3


def _branching_with_selps(a, b, c):
    i = cuda.grid(1)
    inner = cuda.selp(b % 2 == 0, c[i], 13)
    a[i] = cuda.selp(a[i] > 4, inner, 3)


def _nonliteral_grid(x):
    cuda.grid(x)


def _nonliteral_gridsize(x):
    cuda.gridsize(x)


def test_intrinsics_thread_and_grid_indices():
    # test_intrinsics.py test_simple_threadidx / test_fill_threadidx / test_simple_grid1d /
    # test_simple_gridsize1d
    @cuda.jit("void(int32[:])")
    def simple_threadidx(ary):
        ary[0] = cuda.threadIdx.x

    @cuda.jit("void(int32[:])")
    def fill_threadidx(ary):
        i = cuda.threadIdx.x
        ary[i] = i

    @cuda.jit("void(int32[::1])")
    def simple_grid1d(ary):
        i = cuda.grid(1)
        ary[i] = i

    @cuda.jit("void(int32[::1])")
    def simple_gridsize1d(ary):
        i = cuda.grid(1)
        x = cuda.gridsize(1)
        if i == 0:
            ary[0] = x

    ary = np.ones(1, dtype=np.int32)
    simple_threadidx[1, 1](ary)
    assert ary[0] == 0
    ary = np.ones(10, dtype=np.int32)
    fill_threadidx[1, 10](ary)
    assert np.all(ary == np.arange(10))
    ary = np.empty(21, dtype=np.int32)
    simple_grid1d[7, 3](ary)
    assert np.all(ary == np.arange(21))
    ary = np.zeros(1, dtype=np.int32)
    simple_gridsize1d[7, 3](ary)
    assert ary[0] == 21


def test_intrinsics_fill3d_threadidx():
    # test_intrinsics.py test_fill3d_threadidx (numba compares C and F orders; the values are
    # also checked here)
    X, Y, Z = 4, 5, 6
    c = np.zeros((X, Y, Z), dtype=np.int32)
    cuda.jit("void(int32[:,:,::1])")(_fill3d_threadidx)[1, (X, Y, Z)](c)
    f = np.asfortranarray(np.zeros((X, Y, Z), dtype=np.int32))
    cuda.jit("void(int32[::1,:,:])")(_fill3d_threadidx)[1, (X, Y, Z)](f)
    assert np.all(c == f)
    i, j, k = np.indices((X, Y, Z))
    assert np.all(c == (i + 1) * (j + 1) * (k + 1))


def test_intrinsics_nonliteral_grid_errors():
    # test_intrinsics.py test_nonliteral_grid_error / test_nonliteral_gridsize_error (numba:
    # TypingError "RequireLiteralValue"; pykern's compile-time error is a CompileError)
    from pykern.core.errors import CompileError

    for f in (_nonliteral_grid, _nonliteral_gridsize):
        with pytest.raises(CompileError):
            cuda.jit("void(int32)")(f)[1, 1](1)


def test_intrinsics_grid2d_and_gridsize2d():
    # test_intrinsics.py test_simple_grid2d / test_simple_gridsize2d / test_intrinsic_forloop_step
    ntid, nctaid = (4, 3), (5, 6)
    shape = (ntid[0] * nctaid[0], ntid[1] * nctaid[1])
    ary = np.empty(shape, dtype=np.int32)
    cuda.jit("void(int32[:,::1])")(_simple_grid2d)[nctaid, ntid](ary)
    i, j = np.indices(shape)
    assert np.all(ary == i + j)

    ary = np.zeros(2, dtype=np.int32)
    cuda.jit("void(int32[::1])")(_simple_gridsize2d)[nctaid, ntid](ary)
    assert ary.tolist() == [20, 18]

    # numba's own check of the strided loop looks at no element (its ranges start past the
    # array), so every element is checked here against the same loops run in Python
    ary = np.full(shape, -1, dtype=np.int32)
    cuda.jit("void(int32[:,::1])")(_intrinsic_forloop_step)[nctaid, ntid](ary)
    exp = np.full(shape, -1, dtype=np.int32)
    for sx in range(shape[0]):
        for sy in range(shape[1]):
            for x in range(sx, shape[1], shape[0]):
                for y in range(sy, shape[0], shape[1]):
                    exp[y, x] = x + y
    assert np.all(ary == exp)


def test_intrinsics_3dgrid():
    # test_intrinsics.py test_3dgrid / test_3dgrid_2
    @cuda.jit
    def foo(out):
        x, y, z = cuda.grid(3)
        a, b, c = cuda.gridsize(3)
        out[x, y, z] = a * b * c

    arr = np.zeros(9**3, dtype=np.int32).reshape(9, 9, 9)
    foo[(3, 3, 3), (3, 3, 3)](arr)
    np.testing.assert_equal(arr, 9**3)

    @cuda.jit
    def foo2(out):
        x, y, z = cuda.grid(3)
        a, b, c = cuda.gridsize(3)
        grid_is_right = (
            x == cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
            and y == cuda.threadIdx.y + cuda.blockIdx.y * cuda.blockDim.y
            and z == cuda.threadIdx.z + cuda.blockIdx.z * cuda.blockDim.z
        )
        gridsize_is_right = (
            a == cuda.blockDim.x * cuda.gridDim.x
            and b == cuda.blockDim.y * cuda.gridDim.y
            and c == cuda.blockDim.z * cuda.gridDim.z
        )
        out[x, y, z] = grid_is_right and gridsize_is_right

    arr = np.zeros((12 * 6 * 8), dtype=np.bool_).reshape(12, 6, 8)
    foo2[(4, 3, 2), (3, 2, 4)](arr)
    assert np.all(arr)


def test_intrinsics_selp():
    # test_intrinsics.py test_selp (the PTX branch count is NVIDIA-only)
    sig = (cuda.int64[:], cuda.int64, cuda.int64[:])
    c = np.full(shape=32, fill_value=17, dtype=np.int64)
    expected = c.copy()
    expected[:5] = 3
    for fn in (_branching_with_ifs, _branching_with_selps):
        a = np.arange(32, dtype=np.int64)
        cuda.jit(sig)(fn)[32, 1](a, 6, c)
        np.testing.assert_array_equal(a, expected)


@pytest.mark.parametrize("fn", [_simple_popc, _simple_bit_count])
def test_intrinsics_popc_and_bit_count(fn):
    # test_intrinsics.py test_popc_u1/u2/u4/u8 and test_bit_count_u1/u2/u4/u8. numba's u1/u2
    # tests pass int8/int16 arrays to the int32[:] signature: numba launches a kernel of one
    # signature without checking the arguments, so it stores 4 bytes into a 1- or 2-byte
    # buffer; pykern refuses that launch (LaunchError), so int32 arrays are used here.
    for sig, dtype, val, exp in (("void(int32[:], uint8)", np.int32, np.uint8(0xFF), 8),
                                 ("void(int32[:], uint16)", np.int32, np.uint16(0xFFFF), 16),
                                 ("void(int32[:], uint32)", np.int32, np.uint32(0xFFFFFFFF), 32),
                                 ("void(int32[:], uint64)", np.int32,
                                  np.uint64(0xFFFFFFFFFFFFFFFF), 64)):
        compiled = cuda.jit(sig)(fn)
        ary = np.zeros(1, dtype=dtype)
        compiled[1, 1](ary, val)
        assert ary[0] == exp, sig


def test_intrinsics_fma():
    # test_intrinsics.py test_fma_f4 / test_fma_f8
    for sig, dt in (("void(f4[:], f4, f4, f4)", np.float32), ("void(f8[:], f8, f8, f8)", np.float64)):
        ary = np.zeros(1, dtype=dt)
        cuda.jit(sig)(_simple_fma)[1, 1](ary, 2.0, 3.0, 4.0)
        np.testing.assert_allclose(ary[0], 2 * 3 + 4)


def test_intrinsics_fp16_arithmetic():
    # test_intrinsics.py test_hadd / _scalar, test_hfma / _scalar, test_hsub / _scalar,
    # test_hmul / _scalar, test_hdiv_scalar, test_hneg / _scalar, test_habs / _scalar
    f16 = np.float16

    def run(body, sig, *args):
        k = cuda.jit(sig)(body) if sig else cuda.jit()(body)
        ary = np.zeros(1, dtype=f16)
        k[1, 1](ary, *args)
        return ary[0]

    a3, a4 = np.array([3.0], f16), np.array([4.0], f16)

    def hadd(ary, a, b):
        ary[0] = cuda.fp16.hadd(a[0], b[0])

    def hadd_s(ary, a, b):
        ary[0] = cuda.fp16.hadd(a, b)

    def hfma(ary, a, b, c):
        ary[0] = cuda.fp16.hfma(a[0], b[0], c[0])

    def hfma_s(ary, a, b, c):
        ary[0] = cuda.fp16.hfma(a, b, c)

    def hsub(ary, a, b):
        ary[0] = cuda.fp16.hsub(a[0], b[0])

    def hsub_s(ary, a, b):
        ary[0] = cuda.fp16.hsub(a, b)

    def hmul(ary, a, b):
        ary[0] = cuda.fp16.hmul(a[0], b[0])

    def hmul_s(ary, a, b):
        ary[0] = cuda.fp16.hmul(a, b)

    def hdiv_s(ary, a, b):
        ary[0] = cuda.fp16.hdiv(a, b)

    def hneg(ary, a):
        ary[0] = cuda.fp16.hneg(a[0])

    def hneg_s(ary, a):
        ary[0] = cuda.fp16.hneg(a)

    def habs(ary, a):
        ary[0] = cuda.fp16.habs(a[0])

    def habs_s(ary, a):
        ary[0] = cuda.fp16.habs(a)

    pi, h157 = f16(3.1415926), f16(1.57)
    np.testing.assert_allclose(run(hadd, "void(f2[:], f2[:], f2[:])", a3, a4), a3 + a4)
    np.testing.assert_allclose(run(hadd_s, "void(f2[:], f2, f2)", pi, f16(3.0)), pi + f16(3.0))
    np.testing.assert_allclose(run(hfma, "void(f2[:], f2[:], f2[:], f2[:])", np.array([2.0], f16),
                                   np.array([3.0], f16), a4), 10.0)
    np.testing.assert_allclose(run(hfma_s, "void(f2[:], f2, f2, f2)", f16(2), f16(3), f16(4)),
                               f16(2) * f16(3) + f16(4))
    np.testing.assert_allclose(run(hsub, "void(f2[:], f2[:], f2[:])", a3, a4), a3 - a4)
    np.testing.assert_allclose(run(hsub_s, "void(f2[:], f2, f2)", pi, h157), pi - h157)
    np.testing.assert_allclose(run(hmul, None, a3, a4), a3 * a4)
    np.testing.assert_allclose(run(hmul_s, "void(f2[:], f2, f2)", pi, h157), pi * h157)
    np.testing.assert_allclose(run(hdiv_s, "void(f2[:], f2, f2)", pi, h157), pi / h157)
    np.testing.assert_allclose(run(hneg, "void(f2[:], f2[:])", a3), -a3)
    np.testing.assert_allclose(run(hneg_s, "void(f2[:], f2)", pi), -pi)
    np.testing.assert_allclose(run(habs, None, np.array([-3.0], f16)), 3.0)
    np.testing.assert_allclose(run(habs_s, "void(f2[:], f2)", f16(-3.1415926)), abs(f16(-3.1415926)))


def test_intrinsics_hdiv_forall():
    # test_intrinsics.py test_hdiv
    @cuda.jit("void(f2[:], f2[:], f2[:])")
    def simple_hdiv_kernel(ary, array_a, array_b):
        i = cuda.grid(1)
        if i < ary.size:
            a = array_a[i]
            b = array_b[i]
            ary[i] = cuda.fp16.hdiv(a, b)

    rng = np.random.RandomState(0)
    arry1 = rng.randint(-65504, 65505, size=500).astype(np.float16)
    arry2 = rng.randint(-65504, 65505, size=500).astype(np.float16)
    ary = np.zeros_like(arry1, dtype=np.float16)
    simple_hdiv_kernel.forall(ary.size)(ary, arry1, arry2)
    np.testing.assert_allclose(ary, arry1 / arry2)


def test_intrinsics_fp16_intrinsics_common():
    # test_intrinsics.py test_fp16_intrinsics_common / test_hexp10
    names = ("hsin", "hcos", "hlog", "hlog2", "hlog10", "hsqrt", "hceil", "hfloor", "hrcp",
             "htrunc", "hrint", "hrsqrt")
    refs = (np.sin, np.cos, np.log, np.log2, np.log10, np.sqrt, np.ceil, np.floor, np.reciprocal,
            np.trunc, np.rint, lambda x, dtype: x**-0.5)

    def make(name):
        fn = getattr(cuda.fp16, name)

        def k(r, x):
            i = cuda.grid(1)
            if i < len(r):
                r[i] = fn(x[i])

        return cuda.jit("void(f2[:], f2[:])")(k)

    N = 32
    rng = np.random.RandomState(1)
    x = rng.randint(1, 65505, size=N).astype(np.float16)
    r = np.zeros_like(x)
    for name, fn in zip(names, refs):
        make(name)[1, N](r, x)
        np.testing.assert_allclose(r, fn(x, dtype=np.float16), err_msg=name)
    x2 = rng.randint(1, 10, size=N).astype(np.float16)
    for name, fn in (("hexp", np.exp), ("hexp2", np.exp2)):
        make(name)[1, N](r, x2)
        np.testing.assert_allclose(r, fn(x2, dtype=np.float16), err_msg=name)
    x3 = rng.rand(N).astype(np.float16)
    make("hexp10")[1, N](r, x3)
    np.testing.assert_allclose(r, 10**x3)


def test_intrinsics_fp16_comparison_and_minmax():
    # test_intrinsics.py test_fp16_comparison / test_multiple_float16_comparisons / test_hmax /
    # test_hmin
    for name, op in (("heq", operator.eq), ("hne", operator.ne), ("hge", operator.ge),
                     ("hgt", operator.gt), ("hle", operator.le), ("hlt", operator.lt)):
        fn = getattr(cuda.fp16, name)

        def k(ary, a, b):
            ary[0] = fn(a, b)

        kernel = cuda.jit("void(b1[:], f2, f2)")(k)
        got = np.zeros(1, dtype=np.bool_)
        for lhs, rhs in ((3, 3), (3, 4), (3, 2)):
            kernel[1, 1](got, np.float16(lhs), np.float16(rhs))
            assert got[0] == op(np.float16(lhs), np.float16(rhs)), (name, lhs, rhs)

    @cuda.jit(device=True)
    def hlt_func_1(x, y):
        return cuda.fp16.hlt(x, y)

    @cuda.jit(device=True)
    def hlt_func_2(x, y):
        return cuda.fp16.hlt(x, y)

    def m1(r, a, b, c):
        r[0] = hlt_func_1(a, b) and hlt_func_2(b, c)

    def m2(r, a, b, c):
        r[0] = hlt_func_1(a, b) and cuda.fp16.hlt(b, c)

    def m3(r, a, b, c):
        r[0] = hlt_func_1(a, b) and cuda.fp16.hge(c, b)

    def m4(r, a, b, c):
        r[0] = cuda.fp16.hlt(a, b) and cuda.fp16.hlt(b, c)

    def m5(r, a, b, c):
        r[0] = cuda.fp16.hlt(a, b) and cuda.fp16.hge(c, b)

    for fn in (m1, m2, m3, m4, m5):
        ary = np.zeros(1, dtype=np.bool_)
        cuda.jit("void(b1[:], f2, f2, f2)")(fn)[1, 1](ary, np.float16(2), np.float16(3), np.float16(4))
        assert ary[0]

    def hmax(ary, a, b):
        ary[0] = cuda.fp16.hmax(a, b)

    def hmin(ary, a, b):
        ary[0] = cuda.fp16.hmin(a, b)

    ary = np.zeros(1, dtype=np.float16)
    kmax = cuda.jit("void(f2[:], f2, f2)")(hmax)
    kmin = cuda.jit("void(f2[:], f2, f2)")(hmin)
    kmax[1, 1](ary, np.float16(3), np.float16(4))
    assert ary[0] == 4
    kmax[1, 1](ary, np.float16(5), np.float16(4))
    assert ary[0] == 5
    kmin[1, 1](ary, np.float16(3), np.float16(4))
    assert ary[0] == 3
    kmin[1, 1](ary, np.float16(5), np.float16(4))
    assert ary[0] == 4


def test_intrinsics_cbrt_brev_clz_ffs():
    # test_intrinsics.py test_cbrt_f32/_f64, test_brev_u4/_u8, test_clz_*, test_ffs_*
    ary = np.zeros(1, dtype=np.float32)
    cuda.jit("void(float32[:], float32)")(_simple_cbrt)[1, 1](ary, 2.0)
    np.testing.assert_allclose(ary[0], 2.0 ** (1 / 3))
    ary = np.zeros(1, dtype=np.float64)
    cuda.jit("void(float64[:], float64)")(_simple_cbrt)[1, 1](ary, 6.0)
    np.testing.assert_allclose(ary[0], 6.0 ** (1 / 3))

    ary = np.zeros(1, dtype=np.uint32)
    cuda.jit("void(uint32[:], uint32)")(_simple_brev)[1, 1](ary, 0x000030F0)
    assert ary[0] == 0x0F0C0000
    ary = np.zeros(1, dtype=np.uint64)
    cuda.jit("void(uint64[:], uint64)")(_simple_brev)[1, 1](ary, 0x000030F0000030F0)
    assert ary[0] == 0x0F0C00000F0C0000

    ary = np.zeros(1, dtype=np.int32)
    clz_i4 = cuda.jit("void(int32[:], int32)")(_simple_clz)
    for val, exp in ((0x00100000, 11), (0xFFFFFFFF, 0), (0x0, 32)):
        clz_i4[1, 1](ary, val)
        assert ary[0] == exp, hex(val)
    cuda.jit("void(int32[:], uint32)")(_simple_clz)[1, 1](ary, 0x00100000)
    assert ary[0] == 11
    cuda.jit("void(int32[:], int64)")(_simple_clz)[1, 1](ary, 0x000000000010000)
    assert ary[0] == 47

    for sig in ("void(int32[:], int32)", "void(int32[:], uint32)"):
        ffs = cuda.jit(sig)(_simple_ffs)
        for val, exp in ((0x00100000, 21), (0x80000000, 32)):
            ffs[1, 1](ary, val)
            assert ary[0] == exp, (sig, hex(val))
    ffs = cuda.jit("void(int32[:], int32)")(_simple_ffs)
    ffs[1, 1](ary, 0xFFFFFFFF)
    assert ary[0] == 1
    ffs[1, 1](ary, 0)
    assert ary[0] == 0
    ffs8 = cuda.jit("void(int32[:], int64)")(_simple_ffs)
    ffs8[1, 1](ary, 0x000000000010000)
    assert ary[0] == 17
    ffs8[1, 1](ary, 0x100000000)
    assert ary[0] == 33


def test_intrinsics_laneid(wave32):
    # test_intrinsics.py test_simple_laneid / test_simple_warpsize (32-lane waves, see above)
    @cuda.jit("void(int32[:])")
    def simple_laneid(ary):
        i = cuda.grid(1)
        ary[i] = cuda.laneid

    @cuda.jit("void(int32[:])")
    def simple_warpsize(ary):
        ary[0] = cuda.warpsize

    ary = np.zeros(64, dtype=np.int32)
    simple_laneid[1, 64](ary)
    assert np.all(ary == np.tile(np.arange(32, dtype=np.int32), 2))
    ary = np.zeros(1, dtype=np.int32)
    simple_warpsize[1, 1](ary)
    assert ary[0] == 32


def test_intrinsics_round():
    # test_intrinsics.py test_round_f4 / test_round_f8
    for sig in ("void(int64[:], float32)", "void(int64[:], float64)"):
        compiled = cuda.jit(sig)(_simple_round)
        ary = np.zeros(1, dtype=np.int64)
        for i in [-3.0, -2.5, -2.25, -1.5, 1.5, 2.25, 2.5, 2.75]:
            compiled[1, 1](ary, i)
            assert ary[0] == round(i), (sig, i)


def test_intrinsics_round_to_f4():
    # test_intrinsics.py test_round_to_f4 / _overflow / _halfway (assertPreciseEqual
    # prec="single": equal to float32 precision)
    compiled = cuda.jit("void(float32[:], float32, int32)")(_simple_round_to)
    ary = np.zeros(1, dtype=np.float32)
    vals = np.random.RandomState(123).random_sample(32).astype(np.float32)
    for val, ndigits in itertools.product(vals, (-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 13)):
        compiled[1, 1](ary, val, ndigits)
        np.testing.assert_allclose(ary[0], round(val, ndigits), rtol=2.0**-23, atol=0,
                                   err_msg=f"{val!r} {ndigits}")
    val = np.finfo(np.float32).max
    compiled[1, 1](ary, val, 300)
    assert ary[0] == val
    compiled[1, 1](ary, 0.3425, 3)
    np.testing.assert_allclose(ary[0], round(0.3425, 3), rtol=2.0**-23)


def test_intrinsics_round_to_f8():
    # test_intrinsics.py test_round_to_f8 / _overflow / _halfway
    compiled = cuda.jit("void(float64[:], float64, int32)")(_simple_round_to)
    ary = np.zeros(1, dtype=np.float64)
    vals = np.random.RandomState(123).random_sample(32)
    for val, ndigits in itertools.product(vals, (-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5)):
        compiled[1, 1](ary, val, ndigits)
        assert ary[0] == round(val, ndigits), (val, ndigits)
    val = 0.12345678987654321 * 10e-15
    compiled[1, 1](ary, val, 23)
    np.testing.assert_allclose(ary[0], round(val, 23), rtol=2.0**-52)
    val = np.finfo(np.float64).max
    compiled[1, 1](ary, val, 12)
    assert ary[0] == val
    compiled[1, 1](ary, 0.5425, 3)
    np.testing.assert_allclose(ary[0], round(0.5425, 3), rtol=2.0**-52)
