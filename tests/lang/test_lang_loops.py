"""Loops and constants as numba.cuda code writes them: ``enumerate``, ``zip``, ``for/else``,
``while/else``, ``literal_unroll`` over mixed tuples, ``Enum`` members, namedtuples,
``np.ndindex``/``np.ndenumerate``, ``np.nditer`` (writable 0-d views, C order), ``int.bit_count()``,
module-level constants folded into shapes. Each is checked against Python on the cpu target and
compiled for every amdgpu arch."""

from collections import namedtuple
import enum
import math
from typing import NamedTuple

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

import pykern as cuda
from pykern import literal_unroll

ARCHS = ["gfx90a", "gfx942", "gfx1100", "gfx1201"]

pytestmark = pytest.mark.usefixtures("cpu_target")


class Color(enum.IntEnum):
    RED = 1
    GREEN = 2
    BLUE = 3


class Mode(enum.Enum):
    FAST = 10
    SLOW = 20


Point = namedtuple("Point", ["x", "y"])


class Span(NamedTuple):
    lo: int
    hi: int = 100


ORIGIN = Point(1.5, -2.0)
N = 16
M = 4
SHAPE = (N, M)
HALF = N // 2


# ---------------------------------------------------------------- enumerate / zip


@cuda.jit
def _enum_zip(out, a, b):
    s = 0.0
    for i, x in enumerate(a):
        s += i * x
    out[0] = s
    t = 0.0
    for x, y in zip(a, b):
        t += x * y
    out[1] = t
    u = 0.0
    for i, (x, r) in enumerate(zip(range(3, 40, 4), a), 1):
        u += i * x + r
    out[2] = u
    v = 0.0
    for k, x in enumerate((2.0, 3.0, 5.0), start=-1):
        v += k * x
    out[3] = v
    w = 0
    for x, y in zip(range(10, 0, -3), range(a.size)):
        w += x * 100 + y
    out[4] = w


@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=0, max_size=12),
       st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=0, max_size=12))
@settings(max_examples=25, deadline=None)
def test_enumerate_and_zip_match_python(xs, ys):
    a, b = np.array(xs, dtype=np.float64), np.array(ys, dtype=np.float64)
    out = np.zeros(5)
    _enum_zip[1, 1](out, a, b)
    s = sum(i * x for i, x in enumerate(a))
    t = sum(x * y for x, y in zip(a, b))
    u = sum(i * x + r for i, (x, r) in enumerate(zip(range(3, 40, 4), a), 1))
    v = sum(k * x for k, x in enumerate((2.0, 3.0, 5.0), start=-1))
    w = sum(x * 100 + y for x, y in zip(range(10, 0, -3), range(a.size)))
    assert out.tolist() == pytest.approx([s, t, u, v, w], rel=1e-12, abs=1e-9)


def test_zip_over_a_run_time_range_step():
    @cuda.jit
    def k(out, lo, hi, step):
        n = 0
        for i, x in enumerate(range(lo, hi, step)):
            out[i] = x
            n += 1
        out[out.size - 1] = n

    for lo, hi, step in [(0, 10, 3), (10, 0, -3), (5, 5, 1), (5, 0, 2), (-7, 7, 5), (3, -9, -4)]:
        out = np.full(12, -1, np.int64)
        k[1, 1](out, lo, hi, step)
        expect = list(range(lo, hi, step))
        assert out[-1] == len(expect) and out[: len(expect)].tolist() == expect


# ---------------------------------------------------------------- for/else, while/else


@cuda.jit
def _loop_else(out, x, stop):
    for i in range(x.size):
        if x[i] == stop:
            out[0] = i
            break
    else:
        out[0] = -1
    j = 0
    while j < x.size:
        if x[j] == stop:
            break
        j += 1
    else:
        j = -2
    out[1] = j
    found = 0
    for a in x:
        for b in x:
            if a + b == stop:
                break  # only the inner loop: the outer else still runs
        else:
            found += 1
    else:
        out[2] = found


@given(st.lists(st.integers(-5, 5), max_size=10), st.integers(-5, 5))
@settings(max_examples=40, deadline=None)
def test_for_else_and_while_else_match_python(xs, stop):
    x = np.array(xs, dtype=np.int64)
    out = np.zeros(3, np.int64)
    _loop_else[1, 1](out, x, stop)
    for i in range(len(xs)):
        if xs[i] == stop:
            e0 = i
            break
    else:
        e0 = -1
    j = 0
    while j < len(xs):
        if xs[j] == stop:
            break
        j += 1
    else:
        j = -2
    found = sum(1 for a in xs if not any(a + b == stop for b in xs))
    assert out.tolist() == [e0, j, found]


# ---------------------------------------------------------------- literal_unroll


@cuda.jit
def _unrolled(out, arr, i32, ints):
    tup = (1, 2.5, True, i32, arr)
    n = 0.0
    k = 0
    for v in literal_unroll(tup[:4]):
        n += v
        k += 1
    out[0] = n
    out[1] = k
    z = 0.0
    for f in literal_unroll((math.sin, math.cos, math.exp)):
        z += f(0.5)
    out[2] = z
    cnt = 0
    for v in literal_unroll((i32, 3, 4.5, 9)):
        if cnt == 2:
            break
        cnt += 1
        if cnt == 1:
            continue
        out[3] = v
    else:
        out[3] = -1.0
    out[4] = cnt
    for a in literal_unroll((arr, ints)):  # arrays of different dtypes
        a[0] = a.size


def test_literal_unroll_over_mixed_tuples():
    out = np.zeros(5)
    arr, ints = np.zeros(3), np.zeros(5, np.int16)
    _unrolled[1, 1](out, arr, np.int32(7), ints)
    assert out.tolist() == [1 + 2.5 + 1 + 7, 4, math.sin(0.5) + math.cos(0.5) + math.exp(0.5), 3.0, 2.0]
    assert arr[0] == 3 and ints[0] == 5


def test_literal_unroll_is_reachable_as_pykern_literal_unroll_and_identity_on_host():
    assert cuda.literal_unroll is literal_unroll
    t = (1, 2.0)
    assert literal_unroll(t) is t


def test_plain_loop_over_a_mixed_tuple_points_to_literal_unroll():
    @cuda.jit
    def k(out):
        for v in (1, 2.5):
            out[0] += v

    with pytest.raises(cuda.CompileError, match="literal_unroll") as e:
        k[1, 1](np.zeros(1))
    assert e.value.line is not None


# ---------------------------------------------------------------- Enum, namedtuple, bit_count


@cuda.jit
def _enums_tuples(out, p, s):
    out[0] = Color.GREEN * 10 + Color.BLUE
    out[1] = Mode.SLOW.value + Mode.FAST
    c = Color.RED
    if c == Color.RED:
        out[2] = 1
    q = Point(3.0, y=4.0)
    out[3] = q.x * q.y + p.x - p.y + ORIGIN.y
    sp = Span(2)
    out[4] = sp.hi - sp.lo + s.lo * 1000 + s.hi
    a, b = q
    out[5] = a - b


def test_enum_members_and_namedtuples():
    out = np.zeros(6)
    _enums_tuples[1, 1](out, Point(10.0, 20.0), Span(7, 9))
    assert out.tolist() == [23.0, 30.0, 1.0, 12.0 + 10.0 - 20.0 - 2.0, 98.0 + 7009.0, -1.0]


def test_namedtuple_argument_type_keeps_field_names():
    from pykern.frontend.typeof import typeof

    t = typeof(Point(1.0, 2))
    assert t.names == ("x", "y") and str(t) == "Point(x=float64, y=int64)"


def test_unknown_namedtuple_field_is_a_located_error():
    @cuda.jit
    def k(out, p):
        out[0] = p.z

    with pytest.raises(cuda.CompileError, match="no attribute 'z'") as e:
        k[1, 1](np.zeros(1), Point(1.0, 2.0))
    assert e.value.line is not None


@given(st.integers(-(2**63), 2**63 - 1), st.integers(0, 2**32 - 1))
@settings(max_examples=60, deadline=None)
def test_int_bit_count_matches_python(x, u):
    @cuda.jit
    def k(out, x, u, b):
        out[0] = x.bit_count()
        out[1] = u.bit_count()
        out[2] = (255).bit_count()
        out[3] = b.bit_count()

    out = np.zeros(4, np.int64)
    k[1, 1](out, x, np.uint32(u), True)
    assert out.tolist() == [x.bit_count(), u.bit_count(), 8, 1]


# ---------------------------------------------------------------- module constants


@cuda.jit
def _const_shapes(out):
    a = cuda.shared.array(N, np.float32)
    b = cuda.shared.array((N, M), dtype=np.int32)
    c = cuda.local.array(SHAPE, cuda.float64)
    d = cuda.shared.array(HALF * 2 + 1, cuda.int64)
    e = cuda.local.array((N // 4, M + 1), np.float32)
    g = cuda.shared.array(SHAPE[0] * 2, np.float32)
    h = cuda.local.array(len(SHAPE), np.float32)
    i = cuda.threadIdx.x
    a[i] = i
    b[i, 0] = i
    cuda.syncthreads()
    if i == 0:
        s = 0.0
        for j in range(N):
            s += a[j] + b[j, 0]
        out[0] = s
        out[1] = a.size + b.size + c.size + d.size + e.size + g.size + h.size
        out[2] = c.shape[1] + e.shape[0] * 10


def test_module_constants_fold_into_array_shapes():
    out = np.zeros(3)
    _const_shapes[1, N](out)
    assert out.tolist() == [2 * sum(range(N)), 16 + 64 + 64 + 17 + 20 + 32 + 2, 4 + 40]


def _numba_round(x, nd):
    """numba's round(x, ndigits) (numba/cpython/numbers.py): scale in float64,
    round half to even, scale back. pykern rounds as Python does (the exact decimal
    value, README): the two differ only when the scaled product rounds onto a tie
    (round(0.005, 2): 0.005 * 100 == 0.5 in float64, numba 0.0, Python 0.01)."""
    if nd >= 0:
        y = x * 10.0**nd
    else:
        y = x / 10.0**-nd
    z = round(y)
    return z / 10.0**nd if nd >= 0 else z * 10.0**-nd


@given(st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False))
@settings(max_examples=80, deadline=None)
def test_round_with_ndigits_matches_python_and_numba_off_ties(x):
    @cuda.jit
    def k(out, x):
        out[0] = round(x, -3)
        out[1] = round(x, -1)
        out[2] = round(x, 0)
        out[3] = round(x, 1)
        out[4] = round(x, 2)
        out[5] = round(x, 4)

    out = np.zeros(6)
    k[1, 1](out, x)
    for got, n in zip(out.tolist(), (-3, -1, 0, 1, 2, 4)):
        assert got == round(x, n)
        scaled = x * 10.0**n if n >= 0 else x / 10.0**-n
        if scaled != math.floor(scaled) + 0.5:
            assert got == _numba_round(x, n)  # numba too, unless the scaled product is a tie


def test_round_with_ndigits_at_a_scaled_tie_is_pythons():
    @cuda.jit
    def k(out, x):
        out[0] = round(x, 2)

    out = np.zeros(1)
    k[1, 1](out, 0.005)
    assert out[0] == round(0.005, 2) == 0.01 and _numba_round(0.005, 2) == 0.0


# ---------------------------------------------------------------- amdgpu


@pytest.mark.parametrize("arch", ARCHS)
def test_amdgpu_compiles_loops_and_constants(arch):
    cases = [
        (_enum_zip, "void(float64[::1], float64[::1], float64[::1])"),
        (_loop_else, "void(int64[::1], int64[::1], int64)"),
        (_unrolled, "void(float64[::1], float64[::1], int32, int16[::1])"),
        (_const_shapes, "void(float64[::1])"),
    ]
    for fn, sig in cases:
        ck = cuda.compile(fn, sig, arch=arch)
        assert ck.code_object[:4] == b"\x7fELF"
    ck = cuda.compile(_const_shapes, "void(float64[::1])", arch=arch)
    assert ck.resources["lds_bytes"] >= (N + N * M) * 4  # a and b (the unused arrays are dropped)


def test_round_ndigits_of_float32_scales_in_float64_like_python():
    @cuda.jit
    def k(out, x):
        for i in range(x.size):
            out[i] = round(x[i], 2)

    x = (np.random.default_rng(1).integers(0, 100000, 5000) / 1000).astype(np.float32)
    x = np.concatenate([x, np.float32([14.415, 96.165, -8.155, 0.125, 1e-3])])
    out = np.zeros_like(x)
    k[1, 1](out, x)
    # Python rounds the float32's exact value: round(float(np.float32(14.415)), 2) == 14.41
    np.testing.assert_array_equal(out, np.array([round(float(v), 2) for v in x], dtype=np.float32))


@cuda.jit(device=True)
def _midpoint(a, b):
    return Point((a.x + b.x) / 2, (a.y + b.y) / 2)


def test_namedtuples_through_device_functions_and_literal_unroll_of_an_array():
    @cuda.jit
    def k(out, a, arr):
        m = _midpoint(a, Point(1.0, 3.0))
        out[0] = m.x
        out[1] = m.y
        s = 0.0
        for v in literal_unroll(arr):  # not a tuple: an ordinary loop, as in numba
            s += v
        out[2] = s

    out = np.zeros(3)
    k[1, 1](out, Point(3.0, 5.0), np.arange(4.0))
    assert out.tolist() == [2.0, 4.0, 6.0]


def test_intenum_member_as_a_kernel_argument():
    @cuda.jit
    def k(out, c):
        if c == Color.BLUE:
            out[0] = c * 2

    out = np.zeros(1, np.int64)
    k[1, 1](out, Color.BLUE)
    assert out[0] == 6


@cuda.jit
def nd_loops(a, out, res):
    for idx in np.ndindex(a.shape):
        out[idx] = a[idx] * 2 + idx[1]
    t = 0.0
    for idx, v in np.ndenumerate(a):
        t += v * (idx[0] + 1) * (idx[1] + 2)
    for i in np.ndindex(3, 2):
        t += i[0] * 10 + i[1]
    for i in np.ndindex(4):
        t += i[0]
    for i in np.ndindex(*a.shape):
        t += i[0] - i[1]
    res[0] = t


@cuda.jit
def nd_enumerate3(a, res):
    t = 0
    for k, (idx, v) in enumerate(np.ndenumerate(a)):
        t += k * v + idx[2] * 100
    res[0] = t


def test_ndindex_and_ndenumerate_loops():
    a = np.arange(12.0).reshape(3, 4)
    out, res = np.zeros((3, 4)), np.zeros(1)
    nd_loops[1, 1](a, out, res)
    assert res[0] == 673.0 - 6  # the starred loop adds sum(i - j) over the 3x4 grid: -6
    assert out.tolist() == [[0.0, 3.0, 6.0, 9.0], [8.0, 11.0, 14.0, 17.0], [16.0, 19.0, 22.0, 25.0]]
    r = np.zeros(1, np.int64)
    nd_enumerate3[1, 1](np.arange(24, dtype=np.int32).reshape(2, 3, 4), r)
    assert r[0] == 7924


@cuda.jit
def nditer_kernel(a, out):
    j = 0
    for v in np.nditer(a):
        out[j] = v.item() + v[()]
        v[()] = v.item() * 10
        j += 1


@pytest.mark.parametrize("case", ["c", "f", "strided", "transposed", "0d", "int"])
def test_nditer_single_array(case):
    base = np.arange(12.0).reshape(3, 4)
    a = {"c": np.arange(6.0).reshape(2, 3), "f": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
         "strided": base[::2, 1:3], "transposed": base.T[::2], "0d": np.full((), 5.0), "int": np.arange(4)}[case]
    # numba 0.68.1's order: C (logical) order, except memory order for an F-contiguous array
    # (numpy's own nditer takes K order: it would give 0, 2, 4... for "transposed")
    want = {"c": [0, 1, 2, 3, 4, 5], "f": [0, 3, 1, 4, 2, 5], "strided": [1, 2, 9, 10],
            "transposed": [0, 4, 8, 2, 6, 10], "0d": [5], "int": [0, 1, 2, 3]}[case]
    out = np.zeros(a.size)
    before = a.copy()
    nditer_kernel[1, 1](a, out)
    assert out.tolist() == [2.0 * w for w in want]
    assert (a == before * 10).all()


def test_nditer_and_item_errors():
    def two(a, b):
        for v in np.nditer((a, b)):
            a[0] = v.item()

    def item_1d(a):
        a[0] = a.item()

    with pytest.raises(cuda.CompileError, match="np.nditer\\(\\) takes one array"):
        cuda.jit("void(float64[:], float64[:])")(two)
    with pytest.raises(cuda.CompileError, match="item\\(\\) of a float64\\[::1\\] array is not supported"):
        cuda.jit("void(float64[::1])")(item_1d)
