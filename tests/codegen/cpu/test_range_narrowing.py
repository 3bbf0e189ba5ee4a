"""``for v in range(...)`` loops whose bounds provably fit in int32 count in i32 (lower.py,
codegen/ranges.py; issue 15 item 5): the IR has an i32 counter exactly then, and the loop
variable (int64 under numba's integer rule) takes Python's values, near the int32 limits too."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as cuda
from pykern.codegen import get_target
from pykern.codegen.lowering.module import lower_module
from pykern.codegen.lowering.ranges import value_range
from pykern.codegen.target_interface import launch_register_range
from pykern.frontend import compile_ir
from pykern.frontend import types as T
from pykern.frontend.signature import parse_signature

I32_MIN, I32_MAX = -(2**31), 2**31 - 1


def counter_widths(fn, sig, target="cpu"):
    """Bit widths of the ``range`` loop counters in ``fn``'s unoptimised IR, in order."""
    tgt = get_target(target)
    mod = compile_ir(fn, parse_signature(sig)[1], is_kernel=True)
    text = str(lower_module(mod, tgt, tgt.resolve_options(None)).llmodule)
    return [int(w) for w in re.findall(r'%"?range\.[kv][\w.]*"? = alloca i(\d+)', text)]


def warps_loop(out):
    s = 0
    for w in range((cuda.blockDim.x + cuda.warpsize - 1) // cuda.warpsize):  # block_sum's loop
        s += out[w + 1]
    out[0] = s


def dims_loop(out):
    s = 0
    for v in range(cuda.threadIdx.x - cuda.blockDim.x, cuda.gridDim.x // 2 - 1, 3):
        s += v
    for v in range(max(cuda.blockIdx.x, 7) % 100, min(cuda.laneid, -5) // 2):
        s += v
    out[0] = s


def int64_stop(out, n):
    for v in range(n):
        out[0] = v


def int32_sum_stop(out, a, b):
    # a + b of two int32 values is int64 and may exceed int32: not narrowed
    for v in range(a + b):
        out[0] = v


def product_stop(out):
    # gridDim.x * blockDim.x may reach (2**31 - 1) * 1024: not narrowed
    for v in range(cuda.gridDim.x * cuda.blockDim.x):
        out[0] = v


def variable_step(out, k):
    for v in range(0, 10, k):
        out[0] = v


@pytest.mark.parametrize("fn,sig", [(warps_loop, "void(int64[::1])"), (dims_loop, "void(int64[::1])")])
@pytest.mark.parametrize("target", ["cpu", "amdgpu"])
def test_bounds_from_dimensions_count_in_i32(fn, sig, target):
    widths = counter_widths(fn, sig, target)
    assert widths and all(w == 32 for w in widths), widths


@pytest.mark.parametrize("fn,sig", [(int64_stop, "void(int64[::1], int64)"),
                                    (int32_sum_stop, "void(int64[::1], int32, int32)"),
                                    (product_stop, "void(int64[::1])"),
                                    (variable_step, "void(int64[::1], int64)")])
def test_bounds_not_provably_int32_keep_i64(fn, sig):
    assert counter_widths(fn, sig) == [64]


def test_block_sum_loop_phi_is_i32_after_optimisation():
    """What the amdgpu code needs: the optimised loop still counts in i32 (clang's ``int k``)."""
    from pykern.codegen.amdgpu.target import AmdgpuTarget
    from pykern.codegen.target_interface import CompileOptions

    mod = compile_ir(warps_loop, parse_signature("void(int64[::1])")[1], is_kernel=True)
    art = AmdgpuTarget(arch="gfx942").compile(mod, CompileOptions())
    phis = re.findall(r"%range\.[kv]\S* = phi (i\d+)", art.llvm_ir)
    assert phis and set(phis) == {"i32"}, phis


def test_value_ranges_of_special_registers_and_arithmetic():
    special = lambda name, axis: launch_register_range(name, 256, 64)  # noqa: E731
    mod = compile_ir(warps_loop, parse_signature("void(int64[::1])")[1], is_kernel=True)
    loop = next(s for s in mod.kernel.body if type(s).__name__ == "ForRange")
    assert value_range(loop.stop, special) == ((1 + 63) // 64, (256 + 63) // 64)
    mod = compile_ir(int64_stop, parse_signature("void(int64[::1], int64)")[1], is_kernel=True)
    loop = next(s for s in mod.kernel.body if type(s).__name__ == "ForRange")
    assert value_range(loop.stop, special) == (T.int64.min, T.int64.max)


# ------------------------------------------------ values equal Python's near the limits
def _make(step):
    def kern(out, vals, a, b):
        # int32 + 0 is int64 (numba's rule) with an int32 range: the counter is narrowed
        n = 0
        last = 0
        for v in range(a + 0, b + 0, step):
            if n < vals.size:
                vals[n] = v
            n += 1
            last = v
        out[0] = n
        out[1] = last
    return kern


STEPS = [1, 3, -1, -7, 2**20 + 1, I32_MAX, -(2**31)]
PYFUNCS = {s: _make(s) for s in STEPS}
KERNELS = {s: cuda.jit(f) for s, f in PYFUNCS.items()}
SIG = "void(int64[::1], int64[::1], int32, int32)"


@pytest.mark.parametrize("step", STEPS)
def test_limit_kernels_are_narrowed(step):
    assert counter_widths(PYFUNCS[step], SIG) == [32]


def _check(step, a, b):
    out = np.zeros(2, np.int64)
    vals = np.zeros(8, np.int64)
    KERNELS[step][1, 1](out, vals, np.int32(a), np.int32(b))
    want = range(a, b, step)
    assert out[0] == len(want), (a, b, step)
    if len(want):
        assert out[1] == want[-1]
        k = min(len(want), 8)
        assert list(vals[:k]) == list(want[:k])


edge = st.sampled_from([I32_MIN, I32_MIN + 1, I32_MIN + 2, -1, 0, 1, I32_MAX - 2, I32_MAX - 1, I32_MAX])


@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize("a,b", [(I32_MIN, I32_MAX), (I32_MAX, I32_MIN), (I32_MAX - 5, I32_MAX),
                                 (I32_MIN, I32_MIN + 5), (I32_MIN + 5, I32_MIN), (I32_MAX, I32_MAX - 5), (0, 0)])
def test_limits_equal_python(cpu_target, step, a, b):
    if len(range(a, b, step)) > 10_000:
        pytest.skip("too many iterations for a unit test")
    _check(step, a, b)


@settings(max_examples=80, deadline=None)
@given(step=st.sampled_from(STEPS), a=edge | st.integers(I32_MIN, I32_MAX), span=st.integers(-40, 40),
       b_edge=st.none() | edge)
def test_random_bounds_equal_python(cpu_target, step, a, span, b_edge):
    b = b_edge if b_edge is not None else min(max(a + span * abs(step) // 2 + span, I32_MIN), I32_MAX)
    if len(range(a, b, step)) > 10_000:
        return
    _check(step, a, b)


# ------------------------------------------------ the interval rules are sound
def _interval(lo, hi):
    """An int64 expression whose value range is exactly [lo, hi]."""
    from pykern.frontend import ir

    return ir.IfExp(ir.Var("c", T.boolean), ir.Const(lo, T.int64), ir.Const(hi, T.int64), T.int64)


small = st.integers(-9, 9)


@settings(max_examples=300, deadline=None)
@given(a=st.tuples(small, small).map(sorted), b=st.tuples(small, small).map(sorted),
       op=st.sampled_from(["+", "-", "*", "//", "%", "min", "max", "neg"]))
def test_rules_contain_every_value(a, b, op):
    from pykern.frontend import ir

    x, y = _interval(*a), _interval(*b)
    if op in ("min", "max"):
        e = ir.Intrinsic(op, [x, y], T.int64, {})
    elif op == "neg":
        e = ir.UnaryOp("-", x, T.int64)
    else:
        e = ir.BinOp(op, x, y, T.int64)
    lo, hi = value_range(e, lambda name, axis: None)
    py = {"+": lambda p, q: p + q, "-": lambda p, q: p - q, "*": lambda p, q: p * q,
          "//": lambda p, q: p // q if q else 0, "%": lambda p, q: p % q if q else 0,
          "min": min, "max": max, "neg": lambda p, q: -p}[op]
    for p in range(a[0], a[1] + 1):
        for q in range(b[0], b[1] + 1):
            assert lo <= py(p, q) <= hi, (op, a, b, p, q, (lo, hi))
