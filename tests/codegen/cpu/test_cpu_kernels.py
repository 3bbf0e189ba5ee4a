"""End-to-end: Python kernels -> frontend -> cpu codegen -> compiled execution,
compared with numpy. Barrier kernels are written so that a skipped barrier
gives a wrong answer (threads read what other threads wrote)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as cuda
from cpu_helpers import run_py
from pykern.core.errors import KernelRuntimeError

SET = settings(max_examples=15, deadline=None)
rng = np.random.default_rng(1234)


# ------------------------------------------------------------------ basics
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.int64])
def test_saxpy(dt):
    n = 5000
    x = (rng.random(n) * 100).astype(dt)
    y = (rng.random(n) * 100).astype(dt)
    out = np.zeros_like(x)
    k = run_py(saxpy, ((n + 127) // 128,), (128,), dt(3), x, y, out)
    assert k.artifact.execution == "fast"
    np.testing.assert_allclose(out, dt(3) * x + y, rtol=1e-6)


def test_saxpy_many_blocks_run_in_parallel_pool():
    n = 1 << 20  # above INLINE_WORK: blocks go to the thread pool
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    out = np.zeros_like(x)
    run_py(saxpy, (n // 256,), (256,), np.float32(2), x, y, out)
    np.testing.assert_array_equal(out, np.float32(2) * x + y)


def add2d(a, out):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        out[i, j] = a[i, j] * 2 + i * 100 + j


@pytest.mark.parametrize("layout", ["C", "F", "strided", "transposed"])
def test_2d_indexing_layouts(layout):
    base = rng.random((37, 41))
    a = {"C": base, "F": np.asfortranarray(base), "strided": base[::2, 1::3], "transposed": base.T}[layout]
    out = np.zeros(a.shape)
    run_py(add2d, ((a.shape[0] + 7) // 8, (a.shape[1] + 7) // 8), (8, 8), a, out)
    ii, jj = np.indices(a.shape)
    np.testing.assert_allclose(out, a * 2 + ii * 100 + jj)


def neg_index(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = a[-1 - i]


def test_negative_index_wraps():
    a = np.arange(10, dtype=np.int64)
    out = np.zeros_like(a)
    run_py(neg_index, (1,), (32,), a, out)
    assert out.tolist() == a[::-1].tolist()


# --------------------------------------------------------- integer semantics
def intops(a, b, q, r, s, m):
    i = cuda.grid(1)
    if i < a.size:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        s[i] = a[i] + b[i]
        m[i] = a[i] * b[i]


def _wrap(v, bits):
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


@SET
@given(st.lists(st.tuples(st.integers(-2**31, 2**31 - 1), st.sampled_from([0, -1, 1, 3, -7, 2**31 - 1, -2**31]) | st.integers(-2**31, 2**31 - 1)), min_size=1, max_size=64))
def test_int32_floordiv_mod_wrap(pairs):
    a = np.array([p[0] for p in pairs], np.int32)
    b = np.array([p[1] for p in pairs], np.int32)
    q, r, s, m = (np.zeros_like(a) for _ in range(4))
    run_py(intops, (1,), (64,), a, b, q, r, s, m)
    for x, y, qq, rr, ss, mm in zip(a.tolist(), b.tolist(), q.tolist(), r.tolist(), s.tolist(), m.tolist()):
        assert qq == (0 if y == 0 else _wrap(x // y, 32)), (x, y)
        assert rr == (0 if y == 0 else _wrap(x % y, 32)), (x, y)
        assert ss == _wrap(x + y, 32) and mm == _wrap(x * y, 32)


def test_int64_extremes():
    a = np.array([-2**63, 2**63 - 1, -2**63, 7, -7, 0], np.int64)
    b = np.array([-1, 1, 0, -2, 2, 0], np.int64)
    q, r, s, m = (np.zeros_like(a) for _ in range(4))
    run_py(intops, (1,), (64,), a, b, q, r, s, m)
    assert q.tolist() == [-2**63, 2**63 - 1, 0, -4, -4, 0]
    assert r.tolist() == [0, 0, 0, -1, 1, 0]
    assert s.tolist() == [_wrap(x + y, 64) for x, y in zip(a.tolist(), b.tolist())]


def floatops(a, b, q, r, mn, mx):
    i = cuda.grid(1)
    if i < a.size:
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        mn[i] = min(a[i], b[i])
        mx[i] = max(a[i], b[i])


def test_float_nan_inf_negative_zero():
    vals = [0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan, 3.0]
    a = np.repeat(np.array(vals), len(vals))
    b = np.tile(np.array(vals), len(vals))
    q, r, mn, mx = (np.zeros_like(a) for _ in range(4))
    run_py(floatops, (1,), (64,), a, b, q, r, mn, mx)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(q, np.floor_divide(a, b))
        np.testing.assert_array_equal(r, np.remainder(a, b))
    ok = ~np.isnan(r)
    with np.errstate(all="ignore"):
        assert (np.signbit(r) == np.signbit(np.remainder(a, b)))[ok].all()
    np.testing.assert_array_equal(mn, [min(x, y) for x, y in zip(a.tolist(), b.tolist())])
    np.testing.assert_array_equal(mx, [max(x, y) for x, y in zip(a.tolist(), b.tolist())])


def float_to_int(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = np.int32(a[i])


def test_float_to_int_saturates():
    a = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, -2.7, 2.7])
    out = np.zeros(a.size, np.int32)
    run_py(float_to_int, (1,), (32,), a, out)
    assert out.tolist() == [0, 2**31 - 1, -2**31, 2**31 - 1, -2**31, -2, 2]


# ------------------------------------------------------------ control flow
def loops(starts, stops, steps, total, count, last):
    i = cuda.grid(1)
    if i >= starts.size:
        return
    s = 0
    c = 0
    v = -999
    for v in range(starts[i], stops[i], steps[i]):
        if v == 13:
            continue
        if c > 50:
            break
        s += v
        c += 1
    total[i] = s
    count[i] = c
    last[i] = v


def _py_loops(a, b, st_):
    s = c = 0
    v = -999
    for v in range(a, b, st_):
        if v == 13:
            continue
        if c > 50:
            break
        s += v
        c += 1
    return s, c, v


@SET
@given(st.lists(st.tuples(st.integers(-40, 40), st.integers(-40, 40), st.integers(-9, 9).filter(bool)), min_size=1, max_size=32))
def test_for_range_any_step_break_continue(triples):
    a, b, c = (np.array(x, np.int64) for x in zip(*triples))
    total, count, last = (np.zeros_like(a) for _ in range(3))
    run_py(loops, (1,), (32,), a, b, c, total, count, last)
    for k, (x, y, z) in enumerate(triples):
        assert (total[k], count[k], last[k]) == _py_loops(x, y, z)


@cuda.jit(device=True)
def divmod_dev(a, b):
    if b == 0:
        return 0, 0
    return a // b, a % b


def use_tuple_device(a, b, q, r):
    i = cuda.grid(1)
    if i < a.size:
        t = divmod_dev(a[i], b[i])
        q[i], r[i] = t


def test_device_function_returning_tuple():
    a = np.array([7, -7, 9, 5], np.int64)
    b = np.array([2, 2, 0, -3], np.int64)
    q, r = np.zeros_like(a), np.zeros_like(a)
    run_py(use_tuple_device, (1,), (8,), a, b, q, r)
    assert q.tolist() == [3, -4, 0, -2] and r.tolist() == [1, 1, 0, -1]


# ------------------------------------------------------------ debug
def oob(x):
    i = cuda.grid(1)
    x[i] = 1.0


def test_debug_bounds_check_message():
    x = np.zeros(40)
    with pytest.raises(KernelRuntimeError) as ei:
        run_py(oob, (2,), (32,), x, debug=True)
    msg = str(ei.value)
    line = oob.__code__.co_firstlineno + 2
    assert f"test_cpu_kernels.py:{line}" in msg and "'x'" in msg
    assert "index 40" in msg and "size 40" in msg and "block (1, 0, 0)" in msg and "thread (8, 0, 0)" in msg


# ------------------------------------------------------------ more types
def bool_in(flags, out):
    i = cuda.grid(1)
    if i < flags.size:
        out[i] = 7 if flags[i] and not flags[(i + 1) % flags.size] else -1


def test_bool_array_input_short_circuit():
    flags = np.array([True, False, True, True, False])
    out = np.zeros(5, np.int64)
    run_py(bool_in, (1,), (8,), flags, out)
    assert out.tolist() == [7 if flags[i] and not flags[(i + 1) % 5] else -1 for i in range(5)]


LUT = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0])


def const_lut(idx, out):
    lut = cuda.const.array_like(LUT)
    i = cuda.grid(1)
    if i < idx.size:
        out[i] = lut[idx[i]]


def test_const_array():
    idx = np.array([5, 0, 2, -1], np.int64)
    out = np.zeros(4)
    run_py(const_lut, (1,), (4,), idx, out)
    assert out.tolist() == LUT[idx].tolist()


def tuple_arg(t, out):
    out[0] = t[0] * t[1]
    out[1] = t[2]


def test_tuple_argument():
    out = np.zeros(2)
    run_py(tuple_arg, (1,), (1,), (2.5, 4, -1.0), out)
    assert out.tolist() == [10.0, -1.0]


def math_k(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[0, i] = math.sin(v) + math.cos(v)
        out[1, i] = math.exp(v) - math.log1p(v)
        out[2, i] = math.atan2(v, 0.5) + math.hypot(v, 2.0)
        out[3, i] = math.sqrt(v) * math.erf(v)
        out[4, i] = round(v * 10.0)
        out[5, i] = v ** 2.5


def test_math_module_end_to_end():
    x = np.array([0.1, 0.5, 1.25, 2.5, 3.0])
    out = np.zeros((6, 5))
    run_py(math_k, (1,), (8,), x, out)
    exp = np.array([
        np.sin(x) + np.cos(x), np.exp(x) - np.log1p(x), np.arctan2(x, 0.5) + np.hypot(x, 2.0),
        np.sqrt(x) * np.array([math.erf(v) for v in x]), np.round(x * 10.0), x ** 2.5,
    ])
    np.testing.assert_allclose(out, exp, rtol=1e-14)


@cuda.jit(device=True)
def get(a, i):
    return a[i]


def oob_in_device(a, out):
    i = cuda.grid(1)
    out[i] = get(a, i + 3)


def test_debug_bounds_check_inside_device_function():
    a = np.zeros(8)
    out = np.zeros(8)
    with pytest.raises(KernelRuntimeError) as ei:
        run_py(oob_in_device, (1,), (8,), a, out, debug=True)
    line = get.py_func.__code__.co_firstlineno + 2 if hasattr(get, "py_func") else None
    assert "'a'" in str(ei.value) and "index 8" in str(ei.value)
    if line:
        assert f":{line}" in str(ei.value)


def grid3d(out):
    x, y, z = cuda.grid(3)
    if x < out.shape[0] and y < out.shape[1] and z < out.shape[2]:
        out[x, y, z] = x * 10000 + y * 100 + z + cuda.blockDim.z * 0


def test_3d_grid_and_blocks():
    out = np.zeros((9, 7, 5), np.int64)
    run_py(grid3d, (3, 2, 2), (4, 4, 3), out)
    xx, yy, zz = np.indices(out.shape)
    assert (out == xx * 10000 + yy * 100 + zz).all()


@SET
@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 2), st.integers(0, 2), st.booleans())
def test_strided_2d_views(s0, s1, o0, o1, transpose):
    base = np.arange(23 * 19, dtype=np.float64).reshape(23, 19)
    a = base[o0::s0, o1::s1]
    if transpose:
        a = a.T
    a = np.asarray(a)
    if a.flags.c_contiguous or a.flags.f_contiguous:
        a = a[:, ::1] if not a.flags.c_contiguous else a
    out = np.zeros(a.shape)
    run_py(add2d, ((a.shape[0] + 7) // 8, (a.shape[1] + 7) // 8), (8, 8), a, out)
    ii, jj = np.indices(a.shape)
    np.testing.assert_array_equal(out, a * 2 + ii * 100 + jj)


def oob_with_barrier(x, out):
    sh = cuda.shared.array(32, np.float64)
    t = cuda.threadIdx.x
    sh[t] = x[t]
    cuda.syncthreads()
    out[t] = sh[t + 1]


def test_debug_bounds_check_in_barrier_kernel_stops_cleanly():
    x = np.ones(32)
    out = np.zeros(32)
    with pytest.raises(KernelRuntimeError) as ei:
        run_py(oob_with_barrier, (3,), (32,), x, out, debug=True)
    msg = str(ei.value)
    assert "'sh'" in msg and "index 32" in msg and "thread (31, 0, 0)" in msg
    # without the bug the same kernel runs (and the compiled code is reusable)
    out2 = np.zeros(31)
    run_py(oob_with_barrier, (1,), (31,), x, out2, debug=True)
    assert (out2[:30] == 1).all()  # sh[31] is never written by a 31-thread block


@cuda.jit(device=True)
def clamp(v, lo, hi):
    return lo if v < lo else (hi if v > hi else v)


@cuda.jit(device=True)
def stats(a, i):
    s = 0.0
    for k in range(i + 1):
        s += a[k]
    return s, s / (i + 1), a.shape[0]


def misc(a, ints, out, iout):
    i = cuda.grid(1)
    if i >= a.size:
        return
    s, m, n = stats(a, i)
    out[0, i] = s
    out[1, i] = m
    out[2, i] = clamp(a[i], 0.25, 0.75)
    out[3, i] = a.strides[0] + a.ndim + n
    v = ints[i]
    iout[0, i] = v ** 3
    iout[1, i] = (v << 3) ^ (v >> 1)
    iout[2, i] = -v if v % 2 == 0 else ~v
    k = 0
    while True:
        k += 1
        if k * k > abs(v):
            break
    iout[3, i] = k
    iout[4, i] = 1 if (0 < v < 10) else 0


def test_misc_language_features():
    a = rng.random(20)
    ints = rng.integers(-50, 50, 20).astype(np.int64)
    out = np.zeros((4, 20))
    iout = np.zeros((5, 20), np.int64)
    run_py(misc, (1,), (32,), a, ints, out, iout)
    cs = np.cumsum(a)
    np.testing.assert_allclose(out[0], cs)
    np.testing.assert_allclose(out[1], cs / np.arange(1, 21))
    np.testing.assert_array_equal(out[2], np.clip(a, 0.25, 0.75))
    assert (out[3] == 8 + 1 + 20).all()
    assert iout[0].tolist() == (ints ** 3).tolist()
    assert iout[1].tolist() == ((ints << 3) ^ (ints >> 1)).tolist()
    assert iout[2].tolist() == [-v if v % 2 == 0 else ~v for v in ints.tolist()]
    assert iout[3].tolist() == [next(k for k in range(1, 100) if k * k > abs(v)) for v in ints.tolist()]
    assert iout[4].tolist() == [1 if 0 < v < 10 else 0 for v in ints.tolist()]


def unsigned_ops(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[0, i] = a[i] // b[i]
        out[1, i] = a[i] % b[i]
        out[2, i] = a[i] - b[i]
        out[3, i] = a[i] >> np.uint32(31)
        out[4, i] = max(a[i], b[i])


def test_uint32_semantics():
    a = np.array([0, 1, 2**32 - 1, 12345, 7], np.uint32)
    b = np.array([1, 0, 2, 2**32 - 1, 3], np.uint32)
    out = np.zeros((5, 5), np.uint32)
    run_py(unsigned_ops, (1,), (8,), a, b, out)
    with np.errstate(all="ignore"):
        assert out[0].tolist() == [int(x) // int(y) if y else 0 for x, y in zip(a, b)]
        assert out[1].tolist() == [int(x) % int(y) if y else 0 for x, y in zip(a, b)]
        assert out[2].tolist() == (a - b).tolist()
    assert out[3].tolist() == (a >> 31).tolist() and out[4].tolist() == np.maximum(a, b).tolist()


def lanes3d(lane, wid, bal):
    t = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    lane[t] = cuda.laneid
    wid[t] = cuda.shfl_sync(-1, t, 0)  # lane 0's linear id names the wave
    bal[t] = cuda.ballot_sync(-1, cuda.threadIdx.y % 2 == 1)


def test_waves_are_consecutive_linear_ids_in_3d_block_of_1024():
    n = 1024
    lane, wid = np.zeros(n, np.int32), np.zeros(n, np.int32)
    bal = np.zeros(n, np.uint64)
    run_py(lanes3d, (1,), (8, 8, 16), lane, wid, bal)
    lin = np.arange(n)
    assert lane.tolist() == (lin % 64).tolist()
    assert wid.tolist() == (lin // 64 * 64).tolist()
    ty = (lin // 8) % 8
    exp = [sum(1 << k for k in range(64) if ty[w * 64 + k] % 2 == 1) for w in range(16)]
    assert bal.tolist() == np.repeat(np.array(exp, dtype=np.uint64), 64).tolist()


def test_launch_context_layout_matches_the_executor():
    """The runner and the scheduler text address LaunchCtx by the offsets codegen/cpu.py names."""
    from pykern.codegen.cpu import target as cpu
    from pykern.runtime.cpu.executor import LaunchCtx

    names = cpu._names()
    for field, name in (("grid", "C_GRID"), ("block", "C_BLOCK"), ("dyn_shared", "C_DYN"), ("error", "C_ERROR"),
                        ("cancel", "C_CANCEL"), ("kind", "C_KIND"), ("msg1", "C_MSG1"), ("msg2", "C_MSG2"),
                        ("vals", "C_VALS"), ("gbar", "C_GBAR_ARRIVED")):
        assert getattr(LaunchCtx, field).offset == names[name], field
    text = cpu._runner_ir("s", "k", 0, True, 64, ["a.py:1"], True, [True])
    assert "$" not in text  # every name was substituted
