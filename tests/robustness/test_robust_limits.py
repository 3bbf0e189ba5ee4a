"""Resource limits give clear errors at compile or launch time, never a dead
process: shared memory beyond the LDS, oversized local arrays, blocks beyond
1024 threads, grids beyond the limits, zero-size grids, recursion.

Crash-prone cases run in a child process (``fuzz.isolate.outcome``)."""

from __future__ import annotations

import numpy as np
import pytest

import cpu_helpers
import pykern as cuda
from fuzz.isolate import outcome
from pykern.core.errors import CompileError, LaunchError

LDS_BYTES = 64 * 1024  # every AMD GPU pykern targets has 64 KiB of LDS per workgroup


pytestmark = pytest.mark.usefixtures("cpu_uncached")


add_one = cuda.jit(cpu_helpers.add_one, cache=False)


# ----------------------------------------------------------------- blocks and grids
@pytest.mark.parametrize("grid,block", [
    (1, 1025), (1, (32, 32, 2)), (1, (1025, 1, 1)), (1, (1, 1, 1025)), (1, 0), (0, 32), ((1, 0), 32),
    ((2, 2, 0), 1), (-1, 32), (1, -32), (2**31, 32), ((1, 2**32), 1), (1.5, 32), ((1, 1, 1, 1), 32),
    (1, (2, 2, 2, 2)), ("4", 32),
])
def test_bad_configuration_is_a_launch_error_before_anything_runs(grid, block):
    a = np.zeros(8)
    with pytest.raises(LaunchError) as ei:
        add_one[grid, block](a)
    assert str(ei.value)
    assert not a.any()  # nothing ran


def test_largest_legal_block_runs():
    a = np.zeros(1024 * 3)
    add_one[3, 1024](a)
    assert (a == 1).all()

    @cuda.jit(cache=False)
    def linear3d(out):
        t = cuda.threadIdx.x + 8 * (cuda.threadIdx.y + 8 * cuda.threadIdx.z)
        out[t] = t

    out = np.full(1024, -1, np.int64)
    linear3d[1, (8, 8, 16)](out)  # 1024 threads in 3-D
    assert (out == np.arange(1024)).all()


def test_forall_of_zero_threads_launches_nothing():
    a = np.zeros(4)
    add_one.forall(0)(a)
    assert not a.any()
    with pytest.raises(LaunchError):
        add_one.forall(-1)


def test_negative_dynamic_shared_is_a_launch_error():
    with pytest.raises(LaunchError):
        add_one[1, 32, 0, -1](np.zeros(4))


def test_dynamic_shared_beyond_lds_is_a_launch_error():
    a = np.zeros(4)
    with pytest.raises(LaunchError, match="shared|LDS"):
        add_one[1, 32, 0, LDS_BYTES + 8](a)
    assert not a.any()


def test_dynamic_shared_overrun_does_not_kill_the_process():
    src = """
def k(a):
    s = cuda.shared.array(0, np.float64)
    s[cuda.threadIdx.x] = 1.0
    cuda.syncthreads()
    a[cuda.threadIdx.x] = s[cuda.threadIdx.x]
"""
    r = outcome("cuda.jit(k, cache=False)[1, 64, 0, 0](np.zeros(64))\nimport gc; gc.collect()", setup=src)
    assert "crashed" not in r, r  # AMD LDS drops out-of-range writes; an error would do too


# ----------------------------------------------------------------- shared memory
def test_shared_array_within_lds_works():
    @cuda.jit(cache=False)
    def k(out):
        s = cuda.shared.array(8192, np.float64)  # exactly 64 KiB
        t = cuda.threadIdx.x
        s[t * 128] = t
        cuda.syncthreads()
        out[t] = s[((t + 1) % 64) * 128]

    out = np.zeros(64)
    k[1, 64](out)
    assert (out == (np.arange(64) + 1) % 64).all()


_SHARED_KERNEL = """
def k(a):
    s = cuda.shared.array({n}, np.float64)
    s[cuda.threadIdx.x] = 1.0
    cuda.syncthreads()
    a[0] = s[0]
"""


@pytest.mark.parametrize("n", [8193, 1 << 30])
def test_static_shared_beyond_lds_cpu(n):
    r = outcome("cuda.jit(k, cache=False)[1, 32](np.zeros(4)); out_never = 1", setup=_SHARED_KERNEL.format(n=n))
    assert r.get("type") == "CompileError", r
    assert r["line"] is not None


def test_static_shared_beyond_lds_amdgpu_is_a_compile_error():
    r = outcome("cuda.compile(k, 'void(float64[:])', arch='gfx942')", setup=_SHARED_KERNEL.format(n=8193))
    assert r.get("type") == "CompileError", r


# ----------------------------------------------------------------- local memory
def test_local_array_moderate_works():
    @cuda.jit(cache=False)
    def k(out):
        t = cuda.grid(1)
        q = cuda.local.array(256, np.int64)
        for j in range(256):
            q[j] = j * t
        s = 0
        for j in range(256):
            s += q[j]
        out[t] = s

    out = np.zeros(64, np.int64)
    k[2, 32](out)
    assert (out == np.arange(64) * (255 * 256 // 2)).all()


_LOCAL_KERNEL = """
def k(a):
    q = cuda.local.array({n}, np.int64)
    q[cuda.threadIdx.x] = 1
    a[0] = q[cuda.threadIdx.x]
"""


@pytest.mark.parametrize("n", [1 << 40, 1 << 20])
def test_local_array_too_large_cpu(n):
    r = outcome("cuda.jit(k, cache=False)[1, 64](np.zeros(4, np.int64))", setup=_LOCAL_KERNEL.format(n=n))
    assert "crashed" not in r, r
    assert r.get("type") in ("CompileError", "LaunchError"), r


def test_local_array_too_large_amdgpu_is_a_compile_error():
    r = outcome("cuda.compile(k, 'void(int64[:])', arch='gfx942')", setup=_LOCAL_KERNEL.format(n=1 << 30))
    assert r.get("type") == "CompileError", r


@pytest.mark.parametrize("shape", ["-4", "0.5", "(2, -1)", "a.size"])
def test_bad_local_array_shapes_are_located_compile_errors(shape):
    src = f"def k(a):\n    q = cuda.local.array({shape}, np.int64)\n    a[0] = 1\n"
    r = outcome("cuda.jit(k, cache=False)[1, 1](np.zeros(4, np.int64))", setup=src)
    assert r.get("type") == "CompileError", r
    assert r["line"] is not None


# ----------------------------------------------------------------- recursion
def test_direct_recursion_through_a_conditional_expression_is_a_located_compile_error():
    # a self-call without a signature is typed from a return that does not call it (numba's base
    # case, tests/lang/test_lang_calls.py, also among a conditional expression's branches); here both
    # branches hold the call, so it cannot be typed
    @cuda.jit(device=True)
    def fact(n):
        return n * fact(n - 1) if n > 1 else fact(n + 1)

    @cuda.jit(cache=False)
    def k(a):
        a[0] = fact(a[0])

    with pytest.raises(CompileError) as ei:
        k[1, 1](np.array([5], np.int64))
    assert ei.value.line is not None and "fact(n - 1)" in ei.value.source_line


def test_mutual_recursion_is_a_located_compile_error():
    @cuda.jit(device=True)
    def even(n):
        return True if n == 0 else odd(n - 1)

    @cuda.jit(device=True)
    def odd(n):
        return False if n == 0 else even(n - 1)

    @cuda.jit(cache=False)
    def k(a):
        a[0] = 1 if even(a[0]) else 0

    with pytest.raises(CompileError) as ei:
        k[1, 1](np.array([5], np.int64))
    assert ei.value.line is not None


# ----------------------------------------------------------------- nesting
def test_deep_expression_error_has_location():
    body = " + ".join(["v"] + [str(k % 7) for k in range(400)])  # 300 compiles, 400 does not
    src = f"def k(a):\n    v = a[0]\n    v = {body}\n    a[0] = v\n"
    r = outcome("cuda.jit(k, cache=False)[1, 1](a); RESULT_OK = a[0]", setup=src + "a = np.zeros(1, np.int64)\n")
    assert "crashed" not in r, r
    # accepted (and right), or rejected at line 3
    assert r["ok"] or (r["type"] == "CompileError" and r["line"] == 3 and r["file"]), r


def test_deeply_nested_ifs_compile_or_fail_cleanly():
    n = 90
    lines = ["def k(a):", "    v = a[0]"]
    lines += ["    " * (d + 1) + f"if v > {-d - 100}:" for d in range(n)]
    lines += ["    " * (n + 1) + "v += 1", "    a[0] = v"]
    src = "\n".join(lines) + "\n"
    r = outcome("cuda.jit(k, cache=False)[1, 1](a)\nprint('VALUE', a[0])",
                setup=src + "a = np.array([5], np.int64)\n")
    assert "crashed" not in r, r
    assert r["ok"] or (r["type"] == "CompileError" and r["line"]), r
