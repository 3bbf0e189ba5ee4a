"""How ``range`` loops count (lowering/range_loops.py): a loop steps its own variable (``v +=
step`` while ``v < stop``, as clang's C loops do) when the step's sign is known and ``v + step``
provably stays in the counting type, else it keeps a trip counter; ``x // c`` and ``x % c`` of
a loop variable that fits in int32 are computed in i32. Whatever the shape, every loop must give
Python's values: the values taken, how many, the variable after the loop (its last value; unchanged
when the loop did not run), ``break``/``continue``, a zero step (no iteration here), assignments
to the variable in the body, chunked loops (the cpu target polls every ``POLL_INTERVAL``
iterations) and bounds near the int32 limits."""

from __future__ import annotations

import linecache
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pykern as cuda
from pykern.codegen import get_target
from pykern.codegen.lowering.module import lower_module
from pykern.codegen.lowering.range_loops import plan_range
from pykern.frontend import compile_ir
from pykern.frontend.signature import parse_signature

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
NVALS = 8
SENTINEL = -12345


def unoptimised_ir(fn, sig, target="cpu"):
    tgt = get_target(target)
    mod = compile_ir(fn, parse_signature(sig)[1], is_kernel=True)
    return str(lower_module(mod, tgt, tgt.resolve_options(None)).llmodule)


def loop_slots(fn, sig, target="cpu"):
    """``[(kind, bits)]`` of the loops' counting slots in the unoptimised IR: ``v`` (the loop
    steps its variable) or ``k`` (a trip counter)."""
    text = unoptimised_ir(fn, sig, target)
    return [(k, int(w)) for k, w in re.findall(r'%"?range\.([kv])[\w.]*"? = alloca i(\d+)', text)]


# ------------------------------------------------ the plan (pure)
def test_plan_counts_by_variable_exactly_when_the_next_value_fits():
    # up: the last value is at most stop - 1, the next at most stop - 1 + step
    assert plan_range((0, 0), (0, I32_MAX), (1, 1), 64).by_variable
    assert plan_range((0, 0), (0, I32_MAX), (1, 1), 64).narrow
    p = plan_range((0, 0), (0, I32_MAX), (2, 2), 64)
    assert p.narrow and not p.by_variable
    assert plan_range((0, 0), (0, I32_MAX - 1), (2, 2), 64).by_variable
    assert plan_range((0, 0), (0, I64_MAX), (1, 1), 64).by_variable
    assert not plan_range((0, 0), (0, I64_MAX), (2, 2), 64).by_variable
    # down: the last value is at least stop + 1, the next at least stop + 1 + step
    assert plan_range((0, 0), (I32_MIN, 0), (-1, -1), 64).by_variable
    assert not plan_range((0, 0), (I32_MIN, 0), (-2, -2), 64).by_variable
    assert not plan_range((0, 0), (I64_MIN, 0), (-2, -2), 64).by_variable
    assert plan_range((0, 0), (I64_MIN + 1, 0), (-2, -2), 64).by_variable
    # the step's sign unknown: a trip counter
    assert not plan_range((0, 0), (0, 10), (-1, 1), 64).by_variable
    assert not plan_range((0, 0), (0, 10), None, 64).by_variable


def test_plan_zero_step_and_values():
    p = plan_range((0, 1023), (512, 512), (0, 1024), 64)  # a step read from a local: 0 possible
    assert p.by_variable and p.zero_step and p.up and p.nonneg and p.values == (0, 511)
    p = plan_range((5, 9), (-20, -3), (-4, -1), 64)
    assert p.by_variable and not p.zero_step and p.down and p.values == (-19, 9)
    assert plan_range((5, 9), (-20, 30), (-4, 4), 64).values == (-20, 30)


# ------------------------------------------------ the loop shapes in the IR
def copy_loop(x):
    tid = cuda.threadIdx.x
    nthreads = cuda.blockDim.x
    for t in range(tid, 512, nthreads):
        x[t // 16, t % 16] = t


def int64_stop(out, n):
    for v in range(n):
        out[0] = v


def unknown_step(out, k):
    for v in range(0, 10, k):
        out[0] = v


def wide_step(out, n):
    for v in range(0, n, 16):
        out[0] = v


@pytest.mark.parametrize("target", ["cpu", "amdgpu"])
def test_copy_loop_steps_its_i32_variable(target):
    sig = "void(int64[:, ::1])"
    assert loop_slots(copy_loop, sig, target) == [("v", 32)]
    text = unoptimised_ir(copy_loop, sig, target)
    # t // 16 and t % 16 of the 32-bit variable, >= 0: unsigned i32 division
    assert re.search(r"udiv i32 %[\w.\"]+, 16", text) and re.search(r"urem i32 %[\w.\"]+, 16", text)


def test_shapes_of_other_loops():
    assert loop_slots(int64_stop, "void(int64[::1], int64)") == [("v", 64)]  # step 1: v + 1 <= stop
    assert loop_slots(unknown_step, "void(int64[::1], int64)") == [("k", 64)]
    # v + 16 may pass int64's end when n may be 2**63 - 1: a trip counter
    assert loop_slots(wide_step, "void(int64[::1], int64)") == [("k", 64)]


def tile_loop(x, out):
    for k0 in range(0, x.shape[0], 16):
        out[0] = k0


def test_extent_of_an_array_from_the_host_is_bounded():
    # x.shape[0] <= (2**63 - 1) // 8: k0 + 16 cannot wrap, the loop steps k0
    assert loop_slots(tile_loop, "void(int64[::1], int64[::1])") == [("v", 64)]


# ------------------------------------------------ Python's values
def _source(start, stop, step):
    """A kernel recording what ``for v in range(...)`` does, with break/continue and the
    variable's floor division and modulo (i32 when narrowed) read in the body."""
    src = f"""
def kern(out, vals, a, b, s, lim, skip, div):
    v = {SENTINEL}
    n = 0
    acc = 0
    for v in range({start}, {stop}, {step}):
        if n == lim:
            break
        n += 1
        if n < {NVALS + 1}:
            vals[n - 1] = v
        if skip != 0 and v % 3 == skip:
            continue
        acc += v // 16 + v % 16 + v // div - v % div
    out[0] = n
    out[1] = v
    out[2] = acc
"""
    return src


_EXPR = {
    "up": ("a + 0", "b // 2", "s % 7 + 1"),
    "down": ("a + 0", "b // 2", "-(s % 7) - 1"),
    "maybe_zero": ("a + 0", "b // 2", "s % 5"),
    "to_limit": ("a + 0", "b + 0", "1"),
    "down_to_limit": ("a + 0", "b + 0", "-1"),
    "wide_up": ("a * 4", "b * 4", "s % 1000 + 1"),
    "wide_down": ("a * 4", "b * 4", "-(s % 1000) - 1"),
    "any_step": ("a + 0", "b + 0", "s + 0"),
    "wide_any_step": ("a * 4", "b * 4", "s * 4"),
}
SIG = "void(int64[::1], int64[::1], int32, int32, int32, int64, int64, int64)"


def _build(name, kname="kern"):
    ns, src, fname = {}, _source(*_EXPR[name]).replace("def kern(", f"def {kname}("), f"<range-form-{kname}-{name}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)  # pykern compiles from source
    exec(compile(src, fname, "exec"), ns)  # noqa: S102
    return ns[kname]


PY = {name: _build(name) for name in _EXPR}
KERNELS = {name: cuda.jit(fn) for name, fn in PY.items()}


@pytest.mark.parametrize("name,shape", [("up", "v32"), ("down", "v32"), ("maybe_zero", "v32"),
                                        ("to_limit", "v32"), ("down_to_limit", "v32"), ("wide_up", "v64"),
                                        ("wide_down", "v64"), ("any_step", "k32"), ("wide_any_step", "k64")])
def test_forms_have_the_shapes_they_test(name, shape):
    assert loop_slots(PY[name], SIG) == [(shape[0], int(shape[1:]))]


def _python_range(name, a, b, s):
    start, stop, step = (eval(x, {}, {"a": a, "b": b, "s": s}) for x in _EXPR[name])  # noqa: S307
    return range(start, stop, step) if step != 0 else range(0)


def _check(name, a, b, s, lim, skip, div, kernels=KERNELS):
    want_out, want_vals = np.zeros(3, np.int64), np.zeros(NVALS, np.int64)
    try:
        PY[name](want_out, want_vals, a, b, s, lim, skip, div)  # plain Python: Python's answers
    except ValueError:  # range() arg 3 must not be zero: pykern makes no iteration
        want_out[:] = [0, SENTINEL, 0]
    out, vals = np.zeros(3, np.int64), np.zeros(NVALS, np.int64)
    kernels[name][1, 1](out, vals, np.int32(a), np.int32(b), np.int32(s), lim, skip, div)
    assert list(out) == list(want_out), (name, a, b, s, lim, skip, div, _python_range(name, a, b, s))
    assert list(vals) == list(want_vals), (name, a, b, s, lim, skip, div)


edge = st.sampled_from([I32_MIN, I32_MIN + 1, I32_MIN + 2, -17, -1, 0, 1, 16, I32_MAX - 2, I32_MAX - 1, I32_MAX])
i32 = edge | st.integers(I32_MIN, I32_MAX)


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(sorted(_EXPR)), a=i32, span=st.integers(-3000, 3000), b_edge=st.none() | edge,
       s=i32, lim=st.sampled_from([-1, 0, 1, 5, 1500]), skip=st.sampled_from([0, 1, 2]),
       div=st.sampled_from([1, 3, 16, 1000, I32_MAX, 2**40]))
def test_random_loops_equal_python(cpu_target, name, a, span, b_edge, s, lim, skip, div):
    if b_edge is not None:
        b = b_edge
    elif name in ("up", "down", "maybe_zero"):  # stop = b // 2: b near 2 * (a + span)
        b = min(max(2 * (a + span), I32_MIN), I32_MAX)
    else:
        b = min(max(a + span, I32_MIN), I32_MAX)
    if len(_python_range(name, a, b, s)) > 6000:
        return
    _check(name, a, b, s, lim, skip, div)


@pytest.mark.parametrize("name,a,b,s", [
    ("to_limit", I32_MAX - 5, I32_MAX, 0),  # the last value is int32's largest
    ("down_to_limit", I32_MIN + 5, I32_MIN, 0),  # ... its smallest
    ("up", I32_MAX - 3000, I32_MAX, 6),  # stop (2**30 - 1) below start: no iteration
    ("up", -4000, 3000, 6),  # 1000 iterations of step 7: across the cpu target's poll chunks
    ("down", 4000, -3000, 6),
    ("maybe_zero", 5, 100, 0),  # a zero step: no iteration, v unchanged
    ("maybe_zero", 5, 100, 10),
    ("wide_up", I32_MIN, I32_MIN + 2500, 0),  # 10000 iterations of step 1
    ("wide_down", I32_MAX, I32_MAX - 2500, 999),
    ("any_step", 0, 10, 0),
    ("any_step", I32_MIN, I32_MAX, I32_MIN),
    ("any_step", I32_MAX, I32_MIN, I32_MIN),
    ("wide_any_step", I32_MIN, I32_MAX, 2**29),
])
@pytest.mark.parametrize("lim", [-1, 3])
def test_edge_loops_equal_python(cpu_target, name, a, b, s, lim):
    _check(name, a, b, s, lim, 0, 16)
    _check(name, a, b, s, lim, 1, 3)


@pytest.fixture
def unpolled(cpu_uncached, monkeypatch):
    """The cpu target without its Ctrl-C polls, so that loops have the shape amdgpu gives them
    (no strip-mining); uncached, kernels named apart: these builds stay in this test."""
    from pykern.codegen.cpu.target import CpuTarget

    monkeypatch.setattr(CpuTarget, "loop_poll_interval", lambda self: 0)
    return {name: cuda.jit(_build(name, "kern_unpolled")) for name in _EXPR}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(_EXPR)), a=i32, span=st.integers(-3000, 3000), s=i32,
       lim=st.sampled_from([-1, 2]), skip=st.sampled_from([0, 2]))
def test_loops_without_polls_equal_python(unpolled, name, a, span, s, lim, skip):
    b = min(max((2 if name in ("up", "down", "maybe_zero") else 1) * (a + span), I32_MIN), I32_MAX)
    if len(_python_range(name, a, b, s)) > 6000:
        return
    _check(name, a, b, s, lim, skip, 16, unpolled)


def test_polled_loops_are_chunked():
    assert "for.poll" in unoptimised_ir(PY["up"], SIG)


def test_unpolled_loops_have_no_chunks(unpolled):
    assert "for.poll" not in unoptimised_ir(_build("up", "kern_unpolled"), SIG)


def reassigned_in_body(out, a, b):
    n = 0
    for v in range(a + 0, b // 2, 3):
        v = v * 1000  # the next value is still range's: and v // 16 is no longer the loop's
        out[n] = v // 16 + v % 16
        n += 1
    out[n] = v


def test_assigning_the_variable_in_the_body(cpu_target):
    for a, b in [(0, 30), (-7, 9), (I32_MAX - 8, I32_MAX), (5, 5)]:
        out = np.zeros(16, np.int64)
        want = np.zeros(16, np.int64)
        if len(range(a, b // 2, 3)) == 0:
            continue
        reassigned_in_body(want, a, b)
        cuda.jit(reassigned_in_body)[1, 1](out, np.int32(a), np.int32(b))
        assert list(out) == list(want), (a, b)


@cuda.jit(device=True, forceinline=True)
def _sixteenths(t):
    return t // 16 + t % 16


def loop_calls_device(out, big):
    for t in range(0, 4):
        out[t] = _sixteenths(big + t)  # the callee's own t: not the loop's, any int64


def test_callee_variable_of_the_same_name_is_not_bounded(cpu_target):
    out = np.zeros(4, np.int64)
    big = 2**40 + 5
    cuda.jit(loop_calls_device)[1, 1](out, big)
    assert list(out) == [(big + t) // 16 + (big + t) % 16 for t in range(4)]
