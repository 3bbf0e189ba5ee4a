"""numba-cuda's ``tests/cudapy/test_atomics.py`` (see conftest.py): cuda.atomic.*:
add/sub/bitwise/inc/dec/exch/max/min/cas/nanmax/nanmin, old values."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


# numba's helpers pass cuda.atomic.* functions, dtypes, shapes and device functions as
# arguments to device functions; they are kept as numba's test wrote them.
@cuda.jit(device=True)
def _atomic_cast_to_uint64(num):
    return cuda.uint64(num)


@cuda.jit(device=True)
def _atomic_cast_to_int(num):
    return int(num)


@cuda.jit(device=True)
def _atomic_cast_none(num):
    return num


@cuda.jit(device=True)
def _atomic_binary_1dim_shared(ary, idx, op2, ary_dtype, ary_nelements, binop_func, cast_func,
                               initializer, neg_idx):
    tid = cuda.threadIdx.x
    sm = cuda.shared.array(ary_nelements, ary_dtype)
    sm[tid] = initializer
    cuda.syncthreads()
    bin = cast_func(idx[tid] % ary_nelements)
    if neg_idx:
        bin = bin % ary_nelements
    binop_func(sm, bin, op2)
    cuda.syncthreads()
    ary[tid] = sm[tid]


@cuda.jit(device=True)
def _atomic_binary_2dim_shared(ary, op2, ary_dtype, ary_shape, binop_func, y_cast_func, neg_idx):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    sm = cuda.shared.array(ary_shape, ary_dtype)
    sm[tx, ty] = ary[tx, ty]
    cuda.syncthreads()
    bin = (tx, y_cast_func(ty))
    if neg_idx:
        bin = (bin[0] % ary_shape[0], bin[1] % ary_shape[1])
    binop_func(sm, bin, op2)
    cuda.syncthreads()
    ary[tx, ty] = sm[tx, ty]


@cuda.jit(device=True)
def _atomic_binary_2dim_global(ary, op2, binop_func, y_cast_func, neg_idx):
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bin = (tx, y_cast_func(ty))
    if neg_idx:
        bin = (bin[0] % ary.shape[0], bin[1] % ary.shape[1])
    binop_func(ary, bin, op2)


@cuda.jit(device=True)
def _atomic_binary_1dim_global(ary, idx, ary_nelements, op2, binop_func, neg_idx):
    tid = cuda.threadIdx.x
    bin = int(idx[tid] % ary_nelements)
    if neg_idx:
        bin = bin % ary_nelements
    binop_func(ary, bin, op2)


def _at_add(ary):
    _atomic_binary_1dim_shared(ary, ary, 1, cuda.uint32, 32, cuda.atomic.add, _atomic_cast_none, 0, False)


def _at_add_wrap(ary):
    _atomic_binary_1dim_shared(ary, ary, 1, cuda.uint32, 32, cuda.atomic.add, _atomic_cast_none, 0, True)


def _at_add2(ary):
    _atomic_binary_2dim_shared(ary, 1, cuda.uint32, (4, 8), cuda.atomic.add, _atomic_cast_none, False)


def _at_add2_wrap(ary):
    _atomic_binary_2dim_shared(ary, 1, cuda.uint32, (4, 8), cuda.atomic.add, _atomic_cast_none, True)


def _at_add3(ary):
    _atomic_binary_2dim_shared(ary, 1, cuda.uint32, (4, 8), cuda.atomic.add, _atomic_cast_to_uint64, False)


def _at_add_float(ary):
    _atomic_binary_1dim_shared(ary, ary, 1.0, cuda.float32, 32, cuda.atomic.add, _atomic_cast_to_int, 0.0,
                               False)


def _at_add_float_wrap(ary):
    _atomic_binary_1dim_shared(ary, ary, 1.0, cuda.float32, 32, cuda.atomic.add, _atomic_cast_to_int, 0.0,
                               True)


def _at_add_float_2(ary):
    _atomic_binary_2dim_shared(ary, 1.0, cuda.float32, (4, 8), cuda.atomic.add, _atomic_cast_none, False)


def _at_add_float_3(ary):
    _atomic_binary_2dim_shared(ary, 1.0, cuda.float32, (4, 8), cuda.atomic.add, _atomic_cast_to_uint64,
                               False)


def _at_add_double(idx, ary):
    _atomic_binary_1dim_shared(ary, idx, 1.0, cuda.float64, 32, cuda.atomic.add, _atomic_cast_none, 0.0,
                               False)


def _at_add_double_wrap(idx, ary):
    _atomic_binary_1dim_shared(ary, idx, 1.0, cuda.float64, 32, cuda.atomic.add, _atomic_cast_none, 0.0,
                               True)


def _at_add_double_2(ary):
    _atomic_binary_2dim_shared(ary, 1.0, cuda.float64, (4, 8), cuda.atomic.add, _atomic_cast_none, False)


def _at_add_double_global(idx, ary):
    _atomic_binary_1dim_global(ary, idx, 32, 1.0, cuda.atomic.add, False)


def _at_add_double_global_wrap(idx, ary):
    _atomic_binary_1dim_global(ary, idx, 32, 1.0, cuda.atomic.add, True)


def _at_add_double_global_2(ary):
    _atomic_binary_2dim_global(ary, 1, cuda.atomic.add, _atomic_cast_none, False)


def _at_add_double_global_2_wrap(ary):
    _atomic_binary_2dim_global(ary, 1, cuda.atomic.add, _atomic_cast_none, True)


def _at_add_double_global_3(ary):
    _atomic_binary_2dim_global(ary, 1, cuda.atomic.add, _atomic_cast_to_uint64, False)


def _at_sub(ary):
    _atomic_binary_1dim_shared(ary, ary, 1, cuda.uint32, 32, cuda.atomic.sub, _atomic_cast_none, 0, False)


def _at_sub2(ary):
    _atomic_binary_2dim_shared(ary, 1, cuda.uint32, (4, 8), cuda.atomic.sub, _atomic_cast_none, False)


def _at_sub_float(ary):
    _atomic_binary_1dim_shared(ary, ary, 1.0, cuda.float32, 32, cuda.atomic.sub, _atomic_cast_to_int, 0.0,
                               False)


def _at_sub_double_global(idx, ary):
    _atomic_binary_1dim_global(ary, idx, 32, 1.0, cuda.atomic.sub, False)


def _at_and(ary, op2):
    _atomic_binary_1dim_shared(ary, ary, op2, cuda.uint32, 32, cuda.atomic.and_, _atomic_cast_none, 1, False)


def _at_and2(ary, op2):
    _atomic_binary_2dim_shared(ary, op2, cuda.uint32, (4, 8), cuda.atomic.and_, _atomic_cast_none, False)


def _at_and_global(idx, ary, op2):
    _atomic_binary_1dim_global(ary, idx, 32, op2, cuda.atomic.and_, False)


def _at_or(ary, op2):
    _atomic_binary_1dim_shared(ary, ary, op2, cuda.uint32, 32, cuda.atomic.or_, _atomic_cast_none, 0, False)


def _at_or3(ary, op2):
    _atomic_binary_2dim_shared(ary, op2, cuda.uint32, (4, 8), cuda.atomic.or_, _atomic_cast_to_uint64, False)


def _at_or_global(idx, ary, op2):
    _atomic_binary_1dim_global(ary, idx, 32, op2, cuda.atomic.or_, False)


def _at_xor(ary, op2):
    _atomic_binary_1dim_shared(ary, ary, op2, cuda.uint32, 32, cuda.atomic.xor, _atomic_cast_none, 0, False)


def _at_xor_global_2(ary, op2):
    _atomic_binary_2dim_global(ary, op2, cuda.atomic.xor, _atomic_cast_none, False)


def test_atomics_add_1dim():
    # test_atomics.py test_atomic_add / test_atomic_add_float / test_atomic_add_double /
    # test_atomic_add_double_global (and their _wrap variants)
    rng = np.random.RandomState(0)
    ary = rng.randint(0, 32, size=32).astype(np.uint32)
    ary_wrap = ary.copy()
    orig = ary.copy()
    cuda.jit("void(uint32[:])")(_at_add)[1, 32](ary)
    cuda.jit("void(uint32[:])")(_at_add_wrap)[1, 32](ary_wrap)
    gold = np.bincount(orig, minlength=32).astype(np.uint32)
    assert np.all(ary == gold) and np.all(ary_wrap == gold)

    ary = rng.randint(0, 32, size=32).astype(np.float32)
    ary_wrap = ary.copy()
    gold = np.bincount(ary.astype(np.intp), minlength=32)
    cuda.jit("void(float32[:])")(_at_add_float)[1, 32](ary)
    cuda.jit("void(float32[:])")(_at_add_float_wrap)[1, 32](ary_wrap)
    assert np.all(ary == gold) and np.all(ary_wrap == gold)

    for fns in ((_at_add_double, _at_add_double_wrap), (_at_add_double_global, _at_add_double_global_wrap)):
        idx = rng.randint(0, 32, size=32).astype(np.int64)
        gold = np.bincount(idx, minlength=32).astype(np.float64)
        for fn in fns:
            ary = np.zeros(32, np.float64)
            cuda.jit("void(int64[:], float64[:])")(fn)[1, 32](idx, ary)
            np.testing.assert_equal(ary, gold)


def test_atomics_add_2dim():
    # test_atomics.py test_atomic_add2 / _add3 / _add_float_2 / _add_float_3 / _add_double_2 /
    # _add_double_global_2 / _add_double_global_3 (and _wrap variants)
    rng = np.random.RandomState(1)
    for sig, dtype, fns in (("void(uint32[:,:])", np.uint32, (_at_add2, _at_add2_wrap, _at_add3)),
                            ("void(float32[:,:])", np.float32, (_at_add_float_2, _at_add_float_3)),
                            ("void(float64[:,:])", np.float64,
                             (_at_add_double_2, _at_add_double_global_2, _at_add_double_global_2_wrap,
                              _at_add_double_global_3))):
        for fn in fns:
            ary = rng.randint(0, 32, size=32).astype(dtype).reshape(4, 8)
            orig = ary.copy()
            cuda.jit(sig)(fn)[1, (4, 8)](ary)
            np.testing.assert_equal(ary, orig + 1, err_msg=fn.__name__)


def test_atomics_sub():
    # test_atomics.py test_atomic_sub / _sub2 / _sub_float / _sub_double_global
    rng = np.random.RandomState(2)
    ary = rng.randint(0, 32, size=32).astype(np.uint32)
    orig = ary.copy()
    cuda.jit("void(uint32[:])")(_at_sub)[1, 32](ary)
    gold = (-np.bincount(orig, minlength=32)).astype(np.uint32)  # wraps as uint32 does
    assert np.all(ary == gold)

    ary = rng.randint(0, 32, size=32).astype(np.uint32).reshape(4, 8)
    orig = ary.copy()
    cuda.jit("void(uint32[:,:])")(_at_sub2)[1, (4, 8)](ary)
    assert np.all(ary == orig - 1)

    ary = rng.randint(0, 32, size=32).astype(np.float32)
    orig = ary.copy().astype(np.intp)
    cuda.jit("void(float32[:])")(_at_sub_float)[1, 32](ary)
    gold = np.zeros(32, dtype=np.float32)
    for i in range(orig.size):
        gold[orig[i]] -= 1.0
    assert np.all(ary == gold)

    idx = rng.randint(0, 32, size=32).astype(np.int64)
    ary = np.zeros(32, np.float64)
    cuda.jit("void(int64[:], float64[:])")(_at_sub_double_global)[1, 32](idx, ary)
    np.testing.assert_equal(ary, -np.bincount(idx, minlength=32).astype(np.float64))


def test_atomics_bitwise():
    # test_atomics.py test_atomic_and / _and2 / _and_global / test_atomic_or / _or3 /
    # _or_global / test_atomic_xor / _xor_global_2
    rng = np.random.RandomState(3)
    rand_const = rng.randint(500)
    ary = rng.randint(0, 32, size=32).astype(np.uint32)
    orig = ary.copy()
    cuda.jit("void(uint32[:], uint32)")(_at_and)[1, 32](ary, rand_const)
    gold = np.zeros(32, np.uint32)  # shared memory starts at 1 (the initializer), & once per hit
    gold[:] = 1
    for i in range(orig.size):
        gold[orig[i]] &= rand_const
    assert np.all(ary == gold)

    ary = rng.randint(0, 32, size=32).astype(np.uint32).reshape(4, 8)
    orig = ary.copy()
    cuda.jit("void(uint32[:,:], uint32)")(_at_and2)[1, (4, 8)](ary, rand_const)
    assert np.all(ary == orig & rand_const)

    for fn, op in ((_at_and_global, np.bitwise_and), (_at_or_global, np.bitwise_or)):
        idx = rng.randint(0, 32, size=32).astype(np.int32)
        ary = rng.randint(0, 32, size=32).astype(np.int32)
        gold = ary.copy()
        cuda.jit("void(int32[:], int32[:], int32)")(fn)[1, 32](idx, ary, rand_const)
        for i in range(idx.size):
            gold[idx[i]] = op(gold[idx[i]], rand_const)
        np.testing.assert_equal(ary, gold)

    for fn, op in ((_at_or, np.bitwise_or), (_at_xor, np.bitwise_xor)):
        ary = rng.randint(0, 32, size=32).astype(np.uint32)
        orig = ary.copy()
        cuda.jit("void(uint32[:], uint32)")(fn)[1, 32](ary, rand_const)
        gold = np.zeros(32, dtype=np.uint32)
        for i in range(orig.size):
            gold[orig[i]] = op(gold[orig[i]], rand_const)
        assert np.all(ary == gold), fn.__name__

    ary = rng.randint(0, 32, size=32).astype(np.uint32).reshape(4, 8)
    orig = ary.copy()
    cuda.jit("void(uint32[:,:], uint32)")(_at_or3)[1, (4, 8)](ary, rand_const)
    assert np.all(ary == orig | rand_const)
    ary = rng.randint(0, 32, size=32).astype(np.uint32).reshape(4, 8)
    orig = ary.copy()
    cuda.jit("void(uint32[:,:], uint32)")(_at_xor_global_2)[1, (4, 8)](ary, rand_const)
    np.testing.assert_equal(ary, orig ^ rand_const)


@cuda.jit(device=True)
def _atomic_binary_1dim_shared2(ary, idx, op2, ary_dtype, ary_nelements, binop_func, cast_func):
    tid = cuda.threadIdx.x
    sm = cuda.shared.array(ary_nelements, ary_dtype)
    sm[tid] = ary[tid]
    cuda.syncthreads()
    bin = cast_func(idx[tid] % ary_nelements)
    binop_func(sm, bin, op2)
    cuda.syncthreads()
    ary[tid] = sm[tid]


def _at_inc32(ary, idx, op2):
    _atomic_binary_1dim_shared2(ary, idx, op2, cuda.uint32, 32, cuda.atomic.inc, _atomic_cast_none)


def _at_inc64(ary, idx, op2):
    _atomic_binary_1dim_shared2(ary, idx, op2, cuda.uint64, 32, cuda.atomic.inc, _atomic_cast_to_int)


def _at_inc2_32(ary, op2):
    _atomic_binary_2dim_shared(ary, op2, cuda.uint32, (4, 8), cuda.atomic.inc, _atomic_cast_none, False)


def _at_inc2_64(ary, op2):
    _atomic_binary_2dim_shared(ary, op2, cuda.uint64, (4, 8), cuda.atomic.inc, _atomic_cast_none, False)


def _at_inc3(ary, op2):
    _atomic_binary_2dim_shared(ary, op2, cuda.uint32, (4, 8), cuda.atomic.inc, _atomic_cast_to_uint64, False)


def _at_inc_global(idx, ary, op2):
    _atomic_binary_1dim_global(ary, idx, 32, op2, cuda.atomic.inc, False)


def _at_inc_global_2(ary, op2):
    _atomic_binary_2dim_global(ary, op2, cuda.atomic.inc, _atomic_cast_none, False)


def _at_dec32(ary, idx, op2):
    _atomic_binary_1dim_shared2(ary, idx, op2, cuda.uint32, 32, cuda.atomic.dec, _atomic_cast_none)


def _at_dec64(ary, idx, op2):
    _atomic_binary_1dim_shared2(ary, idx, op2, cuda.uint64, 32, cuda.atomic.dec, _atomic_cast_to_int)


def _at_dec2_32(ary, op2):
    _atomic_binary_2dim_shared(ary, op2, cuda.uint32, (4, 8), cuda.atomic.dec, _atomic_cast_none, False)


def _at_dec2_64(ary, op2):
    _atomic_binary_2dim_shared(ary, op2, cuda.uint64, (4, 8), cuda.atomic.dec, _atomic_cast_none, False)


def _at_dec3(ary, op2):
    _atomic_binary_2dim_shared(ary, op2, cuda.uint32, (4, 8), cuda.atomic.dec, _atomic_cast_to_uint64, False)


def _at_dec_global(idx, ary, op2):
    _atomic_binary_1dim_global(ary, idx, 32, op2, cuda.atomic.dec, False)


def _at_dec_global_2(ary, op2):
    _atomic_binary_2dim_global(ary, op2, cuda.atomic.dec, _atomic_cast_none, False)


def _at_exch(ary, idx, op2):
    _atomic_binary_1dim_shared2(ary, idx, op2, cuda.uint32, 32, cuda.atomic.exch, _atomic_cast_none)


def _at_exch2(ary, op2):
    _atomic_binary_2dim_shared(ary, op2, cuda.uint32, (4, 8), cuda.atomic.exch, _atomic_cast_none, False)


def _at_exch3(ary, op2):
    _atomic_binary_2dim_shared(ary, op2, cuda.uint64, (4, 8), cuda.atomic.exch, _atomic_cast_none, False)


def _at_exch_global(idx, ary, op2):
    _atomic_binary_1dim_global(ary, idx, 32, op2, cuda.atomic.exch, False)


@pytest.mark.parametrize("dtype", [np.uint32, np.uint64])
def test_atomics_inc_dec(dtype):
    # test_atomics.py test_atomic_inc_32/_64, _inc2_*, _inc3, _inc_global_*, and the dec ones
    rng = np.random.RandomState(4)
    t = "uint32" if dtype == np.uint32 else "uint64"

    def inc(orig, c):
        return np.where(orig >= c, 0, orig + 1)

    def dec(orig, c):
        return np.where(orig == 0, c, np.where(orig > c, c, orig - 1))

    one = {np.uint32: (_at_inc32, _at_dec32), np.uint64: (_at_inc64, _at_dec64)}[dtype]
    two = {np.uint32: (_at_inc2_32, _at_dec2_32), np.uint64: (_at_inc2_64, _at_dec2_64)}[dtype]
    for k, ref in ((0, inc), (1, dec)):
        rconst = dtype(rng.randint(32))
        ary = rng.randint(0, 32, size=32).astype(dtype)
        idx = np.arange(32, dtype=dtype)
        orig = ary.copy()
        cuda.jit(f"void({t}[:], {t}[:], {t})")(one[k])[1, 32](ary, idx, rconst)
        np.testing.assert_equal(ary, ref(orig, rconst))

        ary = rng.randint(0, 32, size=32).astype(dtype)
        orig = ary.copy()
        fn = (_at_inc_global, _at_dec_global)[k]
        cuda.jit(f"void({t}[:], {t}[:], {t})")(fn)[1, 32](idx, ary, rconst)
        np.testing.assert_equal(ary, ref(orig, rconst))

        fns = [two[k], (_at_inc_global_2, _at_dec_global_2)[k]]
        if dtype == np.uint32:
            fns.append((_at_inc3, _at_dec3)[k])
        for fn in fns:
            ary = rng.randint(0, 32, size=32).astype(dtype).reshape(4, 8)
            orig = ary.copy()
            cuda.jit(f"void({t}[:,:], {t})")(fn)[1, (4, 8)](ary, rconst)
            np.testing.assert_equal(ary, ref(orig, rconst), err_msg=fn.__name__)


def test_atomics_exch():
    # test_atomics.py test_atomic_exch / _exch2 / _exch3 / _exch_global
    rng = np.random.RandomState(5)
    rand_const = np.uint32(rng.randint(50, 100))
    ary = rng.randint(0, 32, size=32).astype(np.uint32)
    idx = np.arange(32, dtype=np.uint32)
    cuda.jit("void(uint32[:], uint32[:], uint32)")(_at_exch)[1, 32](ary, idx, rand_const)
    np.testing.assert_equal(ary, rand_const)
    ary = rng.randint(0, 32, size=32).astype(np.uint32).reshape(4, 8)
    cuda.jit("void(uint32[:,:], uint32)")(_at_exch2)[1, (4, 8)](ary, rand_const)
    np.testing.assert_equal(ary, rand_const)
    ary = rng.randint(0, 32, size=32).astype(np.uint64).reshape(4, 8)
    cuda.jit("void(uint64[:,:], uint64)")(_at_exch3)[1, (4, 8)](ary, np.uint64(rand_const))
    np.testing.assert_equal(ary, rand_const)
    ary = rng.randint(0, 32, size=32).astype(np.uint32)
    cuda.jit("void(uint32[:], uint32[:], uint32)")(_at_exch_global)[1, 32](idx, ary, rand_const)
    np.testing.assert_equal(ary, rand_const)


def _gen_atomic_extreme_funcs(func):
    # numba's gen_atomic_extreme_funcs, written to a module file so the kernels have source
    import importlib.util
    import tempfile
    from textwrap import dedent

    src = dedent("""
    import pykern as cuda
    from pykern import float64, uint64

    def atomic(res, ary):
        tx = cuda.threadIdx.x
        bx = cuda.blockIdx.x
        {func}(res, 0, ary[tx, bx])

    def atomic_double_normalizedindex(res, ary):
        tx = cuda.threadIdx.x
        bx = cuda.blockIdx.x
        {func}(res, 0, ary[tx, uint64(bx)])

    def atomic_double_oneindex(res, ary):
        tx = cuda.threadIdx.x
        {func}(res, 0, ary[tx])

    def atomic_double_shared(res, ary):
        tid = cuda.threadIdx.x
        smary = cuda.shared.array(32, float64)
        smary[tid] = ary[tid]
        smres = cuda.shared.array(1, float64)
        if tid == 0:
            smres[0] = res[0]
        cuda.syncthreads()
        {func}(smres, 0, smary[tid])
        cuda.syncthreads()
        if tid == 0:
            res[0] = smres[0]
    """).format(func=func)
    d = tempfile.mkdtemp(prefix="nb_atomic_")
    name = "nb_atomic_" + func.rsplit(".", 1)[1]
    path = f"{d}/{name}.py"
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("which", ["max", "min"])
def test_atomics_max_min(which):
    # test_atomics.py test_atomic_max_* / test_atomic_min_* (int32, uint32, int64, uint64,
    # float32, double; _normalizedindex, _oneindex, _nan_location, _nan_val, _double_shared)
    rng = np.random.RandomState(6)
    mod = _gen_atomic_extreme_funcs("cuda.atomic." + which)
    ref = np.max if which == "max" else np.min
    for dtype, lo, hi in ((np.int32, -65535, 65535), (np.uint32, 0, 65535), (np.int64, -65535, 65535),
                          (np.uint64, 0, 65535), (np.float32, -65535, 65535), (np.float64, -65535, 65535)):
        vals = rng.randint(lo, hi, size=(32, 32)).astype(dtype)
        res = np.zeros(1, dtype=vals.dtype) if which == "max" else np.array([65535], dtype=vals.dtype)
        cuda.jit(mod.atomic)[32, 32](res, vals)
        np.testing.assert_equal(res, ref(vals), err_msg=str(dtype))

    start = 0.0 if which == "max" else 65535.0
    vals = rng.randint(0, 65535, size=(32, 32)).astype(np.float64)
    res = np.array([start])
    cuda.jit("void(float64[:], float64[:,:])")(mod.atomic_double_normalizedindex)[32, 32](res, vals)
    np.testing.assert_equal(res, ref(vals))

    vals = rng.randint(0, 128, size=32).astype(np.float64)
    res = np.array([0.0 if which == "max" else 128.0])
    cuda.jit("void(float64[:], float64[:])")(mod.atomic_double_oneindex)[1, 32](res, vals)
    np.testing.assert_equal(res, ref(vals))

    vals = rng.randint(0, 32, size=32).astype(np.float64)
    res = np.array([0.0 if which == "max" else 32.0])
    cuda.jit("void(float64[:], float64[:])")(mod.atomic_double_shared)[1, 32](res, vals)
    np.testing.assert_equal(res, ref(vals))

    f = cuda.jit("void(float64[:], float64[:,:])")(mod.atomic)
    vals = rng.randint(0, 128, size=(1, 1)).astype(np.float64)
    res = np.zeros(1, np.float64) + np.nan
    f[1, 1](res, vals)
    np.testing.assert_equal(res, [np.nan])
    res = rng.randint(0, 128, size=1).astype(np.float64)
    gold = res.copy()
    f[1, 1](res, np.zeros((1, 1), np.float64) + np.nan)
    np.testing.assert_equal(res, gold)


def _atomic_compare_and_swap(res, old, ary, fill_val):
    gid = cuda.grid(1)
    if gid < res.size:
        old[gid] = cuda.atomic.compare_and_swap(res[gid:], fill_val, ary[gid])


def _atomic_cas_1dim(res, old, ary, fill_val):
    gid = cuda.grid(1)
    if gid < res.size:
        old[gid] = cuda.atomic.cas(res, gid, fill_val, ary[gid])


def _atomic_cas_2dim(res, old, ary, fill_val):
    gid = cuda.grid(2)
    if gid[0] < res.shape[0] and gid[1] < res.shape[1]:
        old[gid] = cuda.atomic.cas(res, gid, fill_val, ary[gid])


@pytest.mark.parametrize("fill,unfill,dtype,cas_func,ndim", [
    (-99, -1, np.int32, _atomic_compare_and_swap, 1),
    (-45, -1, np.int64, _atomic_compare_and_swap, 1),
    (np.uint32(300), np.uint32(7), np.uint32, _atomic_compare_and_swap, 1),
    (np.uint64(300), np.uint64(7), np.uint64, _atomic_compare_and_swap, 1),
    (-99, -1, np.int32, _atomic_cas_1dim, 1),
    (-99, -1, np.int32, _atomic_cas_2dim, 2),
])
def test_atomics_cas(fill, unfill, dtype, cas_func, ndim):
    # test_atomics.py check_cas: test_atomic_compare_and_swap .. _swap4, test_atomic_cas_1dim,
    # test_atomic_cas_2dim
    rng = np.random.RandomState(7)
    n = 100
    res = [fill] * (n // 2) + [unfill] * (n // 2)
    rng.shuffle(res)
    res = np.asarray(res, dtype=dtype)
    if ndim == 2:
        res.shape = (10, -1)
    out = np.zeros_like(res)
    ary = rng.randint(1, 10, size=res.shape).astype(res.dtype)
    fill_mask = res == fill
    unfill_mask = res == unfill
    expect_res = np.zeros_like(res)
    expect_res[fill_mask] = ary[fill_mask]
    expect_res[unfill_mask] = unfill
    expect_out = res.copy()
    cuda_func = cuda.jit(cas_func)
    if ndim == 1:
        cuda_func[10, 10](res, out, ary, fill)
    else:
        cuda_func[(10, 10), (10, 10)](res, out, ary, fill)
    np.testing.assert_array_equal(expect_res, res)
    np.testing.assert_array_equal(expect_out, out)


def _returns_old(kernel, initial):
    x = np.zeros(2, dtype=np.float32)
    x[0] = initial
    kernel[1, 1](x)
    return x


def test_atomics_return_old_values():
    # test_atomics.py test_atomic_add_returns_old, test_atomic_max_returns_* and
    # test_atomic_min_returns_* (NaN in the array or as the value)
    @cuda.jit
    def k_add(x):
        x[1] = cuda.atomic.add(x, 0, 1)

    @cuda.jit
    def k_max1(x):
        x[1] = cuda.atomic.max(x, 0, 1)

    @cuda.jit
    def k_max10(x):
        x[1] = cuda.atomic.max(x, 0, 10)

    @cuda.jit
    def k_maxnan(x):
        x[1] = cuda.atomic.max(x, 0, np.nan)

    @cuda.jit
    def k_min11(x):
        x[1] = cuda.atomic.min(x, 0, 11)

    @cuda.jit
    def k_min10(x):
        x[1] = cuda.atomic.min(x, 0, 10)

    @cuda.jit
    def k_minnan(x):
        x[1] = cuda.atomic.min(x, 0, np.nan)

    for kernel, initial in ((k_add, 10), (k_max1, 10), (k_max10, 1), (k_max1, np.nan), (k_maxnan, 10),
                            (k_min11, 10), (k_min10, 11), (k_min11, np.nan), (k_minnan, 11)):
        x = _returns_old(kernel, initial)
        if np.isnan(initial):
            assert np.isnan(x[1])
        else:
            assert x[1] == initial, (kernel.__name__, initial)


@pytest.mark.parametrize("which", ["nanmax", "nanmin"])
def test_atomics_nanmax_nanmin(which):
    # test_atomics.py check_atomic_nanmax / check_atomic_nanmin for each dtype,
    # test_atomic_nan*_double_shared / _double_oneindex, and test_atomic_nan*_returns_old_*
    rng = np.random.RandomState(8)
    mod = _gen_atomic_extreme_funcs("cuda.atomic." + which)
    plain = _gen_atomic_extreme_funcs("cuda.atomic." + which[3:])
    ref = np.nanmax if which == "nanmax" else np.nanmin
    for dtype, lo, hi, init_val in ((np.int32, -65535, 65535, 0), (np.uint32, 0, 65535, 0),
                                    (np.int64, -65535, 65535, 0), (np.uint64, 0, 65535, 0),
                                    (np.float32, -65535, 65535, np.nan), (np.float64, -65535, 65535, np.nan)):
        vals = rng.randint(lo, hi, size=(32, 32)).astype(dtype)
        vals[1::2] = init_val
        res = np.zeros(1, dtype=vals.dtype) if which == "nanmax" else np.array([65535], dtype=vals.dtype)
        cuda.jit(mod.atomic)[32, 32](res, vals)
        np.testing.assert_equal(res, ref(vals), err_msg=str(dtype))

    vals = rng.randint(0, 32, size=32).astype(np.float64)
    vals[1::2] = np.nan
    res = np.array([0.0 if which == "nanmax" else 32.0])
    cuda.jit("void(float64[:], float64[:])")(mod.atomic_double_shared)[1, 32](res, vals)
    np.testing.assert_equal(res, ref(vals))

    # numba's _double_oneindex tests run the plain max/min kernel over NaN values
    vals = rng.randint(0, 128, size=32).astype(np.float64)
    vals[1::2] = np.nan
    res = np.array([0.0 if which == "nanmax" else 128.0])
    cuda.jit("void(float64[:], float64[:])")(plain.atomic_double_oneindex)[1, 32](res, vals)
    np.testing.assert_equal(res, ref(vals))

    fn = getattr(cuda.atomic, which)
    cases = ((1, 10), (10, 1), (1, np.nan), (np.nan, 10)) if which == "nanmax" else \
        ((11, 10), (10, 11), (11, np.nan), (np.nan, 11))
    for val, initial in cases:
        @cuda.jit
        def kernel(x):
            x[1] = fn(x, 0, val)

        x = np.zeros(2, dtype=np.float32)
        x[0] = initial
        x[1] = np.nan
        kernel[1, 1](x)
        if np.isnan(initial):
            assert not np.isnan(x[0])
            assert np.isnan(x[1])
        else:
            assert x[1] == initial, (val, initial)
