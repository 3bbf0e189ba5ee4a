"""Conditions of ``if``/``while`` lowered to one conditional branch per
``and``/``or``/``not`` operand (``lower._branch_on``, as clang does for ``if (a
&& b)``), instead of a bool phi. Short-circuit order and values must be
Python's: every kernel is run on the cpu target and checked against the same
function run as Python, and the operands that must not run (out-of-bounds
reads, side effects of device functions) are observed."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def _classify(a, b, c):
    """Nested and/or/not, truthiness of ints and floats, an if/elif/else chain."""
    if a > 0 and (b < 0 or not c):
        return 1
    elif not (a or b) or (c and a < b):
        return 2
    elif not a and not b:
        return 3
    elif (a and b) and c:
        return 4 if a < c else 5
    return 6


classify_dev = cuda.jit(device=True)(_classify)


@cuda.jit
def classify_kernel(a, b, c, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = classify_dev(a[i], b[i], c[i])


_ints = st.lists(st.integers(-3, 3), min_size=1, max_size=40)


@settings(max_examples=30, deadline=None)
@given(_ints, st.data())
def test_nested_conditions_match_python(xs, data):
    n = len(xs)
    a = np.array(xs, np.int64)
    b = np.array(data.draw(st.lists(st.integers(-3, 3), min_size=n, max_size=n)), np.int32)
    c = np.array(data.draw(st.lists(st.sampled_from([0.0, -0.0, 1.5, -2.0, float("nan")]), min_size=n,
                                    max_size=n)), np.float64)
    out = np.zeros(n, np.int64)
    classify_kernel[1, 64](a, b, c, out)
    assert out.tolist() == [_classify(int(x), int(y), float(z)) for x, y, z in zip(a, b, c)]


@cuda.jit(device=True)
def bump(counter, k):
    """A condition operand with a side effect: counts its evaluations."""
    counter[k] += 1
    return True


@cuda.jit
def side_effects(flags, counter):
    i = cuda.grid(1)
    if i < flags.shape[0]:
        f = flags[i]
        if f == 1 and bump(counter, 0):       # bump runs only where f == 1
            counter[2] += 1
        if f == 1 or bump(counter, 1):        # bump runs only where f != 1
            counter[3] += 1
        if not (f != 1 and bump(counter, 4)):  # bump runs only where f != 1
            counter[5] += 1


def test_operands_after_the_deciding_one_do_not_run():
    flags = np.array([1, 0, 1, 1, 0, 2], np.int64)
    for k in range(flags.size):
        counter = np.zeros(6, np.int64)
        side_effects[1, 1](flags[k:k + 1], counter)
        one = int(flags[k] == 1)
        assert counter.tolist() == [one, 1 - one, one, 1, 1 - one, one], (k, flags[k], counter)


@cuda.jit
def guarded_reads(x, idx, out):
    i = cuda.grid(1)
    if i < idx.size:
        j = idx[i]
        # the second operand would read far out of bounds: it must not run
        if j >= 0 and j < x.size and x[j] > 0:
            out[i] = 1
        k = j
        while k >= 0 and k < x.size and x[k] > 0:
            k -= 1
        out[i] += 10 * (k + 2)


def test_guarded_out_of_bounds_reads_are_not_evaluated():
    x = np.array([1.0, 2.0, -1.0, 3.0, 4.0], np.float32)
    idx = np.array([0, 1, 2, 4, -(10**12), 10**12, -1, 3], np.int64)
    out = np.zeros(idx.size, np.int64)
    guarded_reads[1, 64](x, idx, out)

    def ref(j):
        r = 1 if 0 <= j < x.size and x[j] > 0 else 0
        k = j
        while 0 <= k < x.size and x[k] > 0:
            k -= 1
        return r + 10 * (k + 2)

    assert out.tolist() == [ref(int(j)) for j in idx]


@cuda.jit
def insertion_sort_rows(x, out):
    i = cuda.grid(1)
    if i < x.shape[0]:
        a = cuda.local.array(6, np.int32)
        for k in range(6):
            a[k] = x[i, k]
        for k in range(1, 6):
            v = a[k]
            j = k - 1
            while j >= 0 and a[j] > v:
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = v
        for k in range(6):
            out[i, k] = a[k]


def test_while_and_condition_sorts():
    x = np.random.default_rng(3).integers(-(2**31), 2**31, (50, 6)).astype(np.int32)
    out = np.zeros_like(x)
    insertion_sort_rows[1, 64](x, out)
    assert np.array_equal(out, np.sort(x, axis=1))


ARCHS = ["gfx90a", "gfx942", "gfx1100", "gfx1201"]


@pytest.mark.parametrize("arch", ARCHS)
def test_compiles_for_amdgpu(arch):
    ck = cuda.compile(classify_kernel, "void(int64[::1], int32[::1], float64[::1], int64[::1])", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"
    ck = cuda.compile(guarded_reads, "void(float32[::1], int64[::1], int64[::1])", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"
