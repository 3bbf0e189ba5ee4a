"""``range`` loops whose variable is provably >= 0 tell LLVM so (lowering/range_loops.py ``plan_range``):
an i32 counter's variable is its zero extension, a wider one gets ``llvm.assume(v < stop)`` (positive
step) or ``v >= 0``; bounds may come from variables assigned exactly once (``ranges.single_definitions``),
array extents and non-constant steps. What it buys: in the GEMM sample's copy loop
``for t in range(tid, 512, nthreads)`` the floor division, modulo and negative-index wraparound of
``t`` fold away. What must hold: the loop variable takes Python's values, negative ones included
when the analysis cannot exclude them."""

from __future__ import annotations

import os
import re
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as cuda
from pykern.codegen.lowering.ranges import single_definitions, value_range
from pykern.codegen.target_interface import launch_register_range
from pykern.frontend import compile_ir
from pykern.frontend import types as T
from pykern.frontend.signature import parse_signature

SPECIAL = lambda name, axis: launch_register_range(name, 256, 64)  # noqa: E731


def _module(fn, sig):
    return compile_ir(fn, parse_signature(sig)[1], is_kernel=True)


def _loops(body):
    from pykern.frontend import ir
    from pykern.frontend.analysis import walk

    return [n for n in walk(body) if isinstance(n, ir.ForRange)]


# ------------------------------------------------ the value ranges
def copy_loop(x, n):
    tid = cuda.threadIdx.x
    nthreads = cuda.blockDim.x
    for t in range(tid, 512, nthreads):
        x[t // 16] = t % 16
    for k0 in range(0, x.shape[0], 16):
        x[k0] = n


def reassigned(x, n):
    tid = cuda.threadIdx.x
    if n > 3:
        tid = n  # two writes: nothing known of tid
    for t in range(tid, 512):
        x[t] = 0


def one_branch(x, n):
    if n > 3:
        s = cuda.threadIdx.x + 5  # one write, in a branch: s is 0 on the other path
    for t in range(s, 512):
        x[t] = 0


def test_single_definitions_bound_the_loop():
    mod = _module(copy_loop, "void(int64[::1], int64)")
    defs = single_definitions(mod.kernel)
    first, second = _loops(mod.kernel.body)
    assert value_range(first.start, SPECIAL, defs) == (0, 255)
    assert value_range(first.step, SPECIAL, defs) == (0, 256)  # 0: what a local holds before its write
    # an extent of an array from the host: at most numpy's 2**63 - 1 bytes of int64
    assert value_range(second.stop, SPECIAL, defs) == (0, (2**63 - 1) // 8)
    assert value_range(second.stop, SPECIAL) == (0, T.int64.max)  # without definitions: any extent
    assert value_range(first.start, SPECIAL) == (T.int32.min, T.int32.max)  # without definitions


def test_only_single_writes_of_locals_count():
    for fn, want in [(reassigned, (T.int32.min, T.int32.max)), (one_branch, (0, 260))]:
        mod = _module(fn, "void(int64[::1], int32)")
        loop = _loops(mod.kernel.body)[-1]
        assert value_range(loop.start, SPECIAL, single_definitions(mod.kernel)) == want, fn.__name__


def test_definitions_that_read_themselves_are_unknown():
    from pykern.frontend import ir
    from pykern.codegen.lowering.ranges import Definitions

    # a = b + 1, b = a + 1 (a cycle no kernel can build: the frontend refuses reads before writes)
    defs = Definitions({"a": ir.BinOp("+", ir.Var("b", T.int64), ir.Const(1, T.int64), T.int64),
                        "b": ir.BinOp("+", ir.Var("a", T.int64), ir.Const(1, T.int64), T.int64)})
    assert value_range(ir.Var("a", T.int64), SPECIAL, defs) == (T.int64.min, T.int64.max)


def test_parameters_are_never_single_definitions():
    def kern(x, n):
        for t in range(n, 10):
            x[t] = 0
    mod = _module(kern, "void(int64[::1], int32)")
    assert "n" not in single_definitions(mod.kernel).exprs


# ------------------------------------------------ the values equal Python's
def _make_walk(step):
    def kern(out, vals, a, b):
        # start and stop single-assigned from int32 parameters: bounded, signs unknown
        s = a + 0
        e = b + 0
        n = 0
        for v in range(s, e, step):
            if n < vals.shape[0]:
                vals[n, 0] = v
                vals[n, 1] = v // 16
                vals[n, 2] = v % 16
                vals[n, 3] = out[v] if -out.shape[0] <= v < 0 else 0  # a negative index counts from the end
            n += 1
        out[0] = n
    return kern


def _make_from_thread(lo, step):
    def kern(out, vals):
        # start from a special register plus a constant: ranges exactly >= 0, or reaching -1..-3
        t = cuda.threadIdx.x + lo
        n = 0
        for v in range(t, -1 if step < 0 else 40, step):
            if n < vals.shape[0]:
                vals[n, 0] = v
                vals[n, 1] = v // 16
                vals[n, 2] = v % 16
                vals[n, 3] = out[v] if v < 0 else 0
            n += 1
        out[0] = n
    return kern


STEPS = [1, 3, 16, -1, -5]
WALK = {s: cuda.jit(_make_walk(s)) for s in STEPS}


def _check(kern, args, want):
    out = np.arange(64, dtype=np.int64) * 10
    expect_out = out.copy()
    vals = np.zeros((64, 4), np.int64)
    kern[1, 1](out, vals, *args)
    want = list(want)
    assert out[0] == len(want)
    k = min(len(want), 64)
    assert [tuple(r) for r in vals[:k]] == [(v, v // 16, v % 16, expect_out[v] if -64 <= v < 0 else 0)
                                           for v in want[:k]]


@pytest.mark.usefixtures("cpu_target")
@settings(max_examples=60, deadline=None)
@given(step=st.sampled_from(STEPS), a=st.integers(-70, 70), b=st.integers(-70, 70))
def test_values_equal_python(step, a, b):
    _check(WALK[step], (np.int32(a), np.int32(b)), range(a, b, step))


@pytest.mark.usefixtures("cpu_target")
@pytest.mark.parametrize("lo, step", [(0, 1), (0, -1), (-1, 1), (-1, -1), (-3, -2), (5, -3)])
def test_register_bounds_near_zero(lo, step):
    # one thread (threadIdx.x = 0): v runs from lo
    _check(cuda.jit(_make_from_thread(lo, step)), (), range(lo, -1 if step < 0 else 40, step))


# ------------------------------------------------ what it buys on amdgpu
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))), "samples"))


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_gemm_sample_copy_loop_has_no_signed_index_arithmetic(arch):
    pytest.importorskip("ml_dtypes")
    import wmma_gemm
    from pykern.dispatch.compiler import compile_amdgpu

    kern, sig = wmma_gemm.SIGNATURES["f16"]
    text = compile_amdgpu(kern, tuple(parse_signature(sig)[1]), arch).llvm_ir
    # Python's floor division/modulo of a possibly negative t, and the wraparound of a
    # possibly negative index, would show as these
    assert not re.search(r"\b(ashr|sdiv|srem)\b", text)
    assert not re.search(r"icmp slt <?\d* ?x? ?i64>? %[\w.]+, (zeroinitializer|0)\b", text)
