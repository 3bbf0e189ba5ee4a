"""The bounds guard of a fast-path kernel as a split of its x thread loop
(``pykern/codegen/cpu/thread_split.py``): every guard form gives the results the plain loop
gives (numpy's, here), kernels whose guard is not a prefix of the threads are left alone, and a
split kernel's vector loop stores without masks."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda
from pykern.codegen.cpu import thread_split
from pykern.frontend import compile_ir
from pykern.frontend import types as T
from pykern.frontend.typeof import typeof

F32 = typeof(np.zeros(1, np.float32))
F32_2D = typeof(np.zeros((2, 2), np.float32))


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("PYKERN_CACHE", "off")


@cuda.jit
def triad(a, b, c, s):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = b[i] + s * c[i]


@cuda.jit
def early_return(a, n):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i >= n:
        return
    a[i] = a[i] * 2 + 1


@cuda.jit
def reversed_inclusive(a, last):
    i = cuda.grid(1)
    if last >= i:
        a[i] = i


@cuda.jit
def with_mask_and_tail(a, mask, out):
    i = cuda.grid(1)
    j = i
    if j < a.size and mask[j] != 0:
        out[j] = a[j] + 1
    else:
        if j < out.size:
            out[j] = -1


@cuda.jit
def two_d(a):
    x, y = cuda.grid(2)
    if x < a.shape[0] and y < a.shape[1]:
        a[x, y] = x * 1000 + y


@cuda.jit
def offset_may_wrap(out, off, n):
    i = cuda.grid(1) + off  # off is a parameter: i may wrap, so the guard is no prefix
    if i < n:
        out[i - off] = 1


@cuda.jit
def store_before_guard(a, b):
    i = cuda.grid(1)
    b[0] = 7
    if i < a.size:
        a[i] = 3


@pytest.mark.parametrize("n,tpb", [(1, 32), (255, 256), (256, 256), (1000, 64), (4099, 128), (70_001, 256)])
def test_triad_matches_numpy(n, tpb):
    rng = np.random.default_rng(n)
    b, c = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    a = np.zeros(n, np.float32)
    s = np.float32(2.5)
    triad[(n + tpb - 1) // tpb + 1, tpb](a, b, c, s)  # one block entirely past the end
    np.testing.assert_array_equal(a, b + s * c)
    da = cuda.device_array(n, np.float32)
    triad[(n + tpb - 1) // tpb, tpb](da, cuda.to_device(b), cuda.to_device(c), s)
    np.testing.assert_array_equal(da.copy_to_host(), b + s * c)


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 1000])
def test_early_return_and_reversed_inclusive(n):
    size = 1000
    a = np.arange(size, dtype=np.int64)
    early_return[16, 64](a, n)
    want = np.arange(size, dtype=np.int64)
    want[:n] = want[:n] * 2 + 1
    np.testing.assert_array_equal(a, want)
    b = np.full(size, -5, np.int64)
    reversed_inclusive[16, 64](b, n - 1)  # threads 0..n-1 write
    want = np.full(size, -5, np.int64)
    want[:n] = np.arange(n)
    np.testing.assert_array_equal(b, want)
    c = np.full(size, -5, np.int64)
    reversed_inclusive[16, 64](c, -(2 ** 63))  # no thread in range
    assert (c == -5).all()


def test_rest_of_the_condition_and_else_branch_still_run():
    n = 777
    a = np.arange(n, dtype=np.float64)
    mask = (np.arange(n) % 3 == 0).astype(np.int8)
    out = np.zeros(n + 50, np.float64)
    with_mask_and_tail[(n + 50 + 127) // 128, 128](a, mask, out)
    want = np.full(n + 50, -1.0)
    want[:n][mask != 0] = a[mask != 0] + 1
    np.testing.assert_array_equal(out, want)


def test_two_d_guard():
    a = np.full((37, 23), -1.0, np.float32)
    two_d[(5, 4), (8, 8)](a)
    x, y = np.meshgrid(np.arange(37), np.arange(23), indexing="ij")
    np.testing.assert_array_equal(a, (x * 1000 + y).astype(np.float32))


def test_wrapping_index_is_not_split():
    out = np.zeros(512, np.int64)
    off = np.int64(2 ** 63 - 100)  # threads 100.. wrap to negative indices, which are < n
    offset_may_wrap[2, 256](out, off, np.int64(2 ** 63 - 1))
    with np.errstate(over="ignore"):
        i = np.arange(512, dtype=np.int64) + off  # int64 arithmetic wraps as the kernel's does
    np.testing.assert_array_equal(out, (i < 2 ** 63 - 1).astype(np.int64))
    assert out[99] == 0 and out[100] == 1  # in range again after the wrap: no prefix
    out[:] = 0
    offset_may_wrap[2, 256](out, np.int64(0), np.int64(300))
    np.testing.assert_array_equal(out, (np.arange(512) < 300).astype(np.int64))


def test_store_before_the_guard_runs_once_per_thread_and_is_not_split():
    a = np.zeros(100, np.int64)
    b = np.zeros(1, np.int64)
    store_before_guard[1, 128](a, b)
    assert b[0] == 7 and (a == 3).all()


def _plan(fn, argtypes):
    return thread_split.plan(compile_ir(fn.py_func, argtypes).kernel)


def test_plan_recognises_the_guard_forms():
    p = _plan(triad, [F32, F32, F32, T.float32])
    assert p is not None and p.true_in_range and not p.inclusive
    p = _plan(early_return, [typeof(np.zeros(1, np.int64)), T.int64])
    assert p is not None and not p.true_in_range and not p.inclusive
    p = _plan(reversed_inclusive, [typeof(np.zeros(1, np.int64)), T.int64])
    assert p is not None and p.true_in_range and p.inclusive
    assert _plan(two_d, [F32_2D]) is not None
    assert _plan(with_mask_and_tail, [F32, typeof(np.zeros(1, np.int8)), F32]) is not None


def test_plan_refuses_what_is_no_prefix_of_the_threads():
    assert _plan(offset_may_wrap, [typeof(np.zeros(1, np.int64)), T.int64, T.int64]) is None
    assert _plan(store_before_guard, [typeof(np.zeros(1, np.int64))] * 2) is None

    def doubled(a):
        i = cuda.grid(1) * 2
        if i < a.size:
            a[i] = 1

    def bound_from_memory(a, n):
        i = cuda.grid(1)
        if i < n[0]:
            a[i] = 1

    assert thread_split.plan(compile_ir(doubled, [F32]).kernel) is None
    assert thread_split.plan(compile_ir(bound_from_memory, [F32, typeof(np.zeros(1, np.int64))]).kernel) is None


def test_split_kernel_stores_without_masks():
    a = np.zeros(1024, np.float32)
    triad[4, 256](a, a, a, np.float32(1))
    text = triad.inspect_llvm()
    text = text if isinstance(text, str) else "\n".join(text.values())
    assert "store <" in text  # vectorised
    assert "llvm.masked.store" not in text and "llvm.masked.scatter" not in text
