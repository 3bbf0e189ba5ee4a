"""Tuples in kernels as numba.cuda programs use them: comparisons (lexicographic, as Python),
concatenation building shapes, ``in`` of a tuple, tuple targets of chained assignments, tuple
arguments (nested, of arrays, indexed at run time), global tuples of tuples -- on the cpu target
against Python/numpy."""

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_uncached")


def _life_ref(g):
    c = sum(np.roll(np.roll(g.astype(int), dx, 0), dy, 1)
            for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (dx, dy) != (0, 0))
    return (c == 3) | ((g == 1) & (c == 2))


def test_game_of_life_skips_the_centre_with_a_tuple_comparison():
    # a game of life kernel: ``if (dx, dy) != (0, 0)`` -- numba compares tuples element-wise
    @cuda.jit
    def life(grid, out):
        x, y = cuda.grid(2)
        n, m = grid.shape
        if x < n and y < m:
            c = 0
            for dx in range(-1, 2):
                for dy in range(-1, 2):
                    if (dx, dy) != (0, 0) and grid[(x + dx) % n, (y + dy) % m]:
                        c += 1
            out[x, y] = c == 3 or (grid[x, y] and c == 2)

    g = np.random.RandomState(0).rand(20, 24) > 0.6
    out = np.zeros_like(g)
    life[(2, 3), (16, 16)](g, out)
    assert np.array_equal(out, _life_ref(g.astype(np.uint8)))


def test_tuple_comparisons_are_lexicographic_like_python():
    @cuda.jit(device=True)
    def cell(i):
        return (i % 3, i // 3)

    @cuda.jit
    def k(o, f):
        i = cuda.grid(1)
        if i < o.shape[0]:
            a = (i % 3, i // 3)
            b = (1, 1)
            o[i, 0] = a == b
            o[i, 1] = a != b
            o[i, 2] = a < b
            o[i, 3] = a <= b
            o[i, 4] = a > b
            o[i, 5] = a >= b
            o[i, 6] = cell(i) < (2,)  # a call's tuple, evaluated once; a shorter tuple
            o[i, 7] = (f[i], 1.0) < (0.5, f[i])
            o[i, 8] = (f[i],) == (f[i],)  # numba compares values: NaN differs from itself
            o[i, 9] = (1, 2) == (1, 2, 3)

    n = 12
    o = np.zeros((n, 10), np.int64)
    f = np.random.RandomState(1).rand(n)
    f[3], f[4] = np.nan, 0.5
    k[1, 16](o, f)
    for i in range(n):
        a, b = (i % 3, i // 3), (1, 1)
        ref = [a == b, a != b, a < b, a <= b, a > b, a >= b, a < (2,),
               (f[i], 1.0) < (0.5, f[i]), not np.isnan(f[i]), False]
        assert o[i].tolist() == [int(x) for x in ref], i


def test_tuple_concatenation_builds_a_shape():
    # ``a.shape + (1,)``: numba concatenates tuples; a call's tuple is evaluated once
    @cuda.jit(device=True)
    def bump(out):
        out[7] += 1
        return (out[7], 2)

    @cuda.jit
    def k(a, out):
        u = a.shape + (1,)
        out[0] = len(u)
        out[1] = u[-1] + u[0]
        v = (5,) + bump(out) + a.shape[1:]
        out[2] = v[0] * 1000 + v[1] * 100 + v[2] * 10 + v[3]
        tot = 0
        for x in u:
            tot += x
        out[3] = tot

    out = np.zeros(8, np.int64)
    k[1, 1](np.zeros((4, 6)), out)
    assert out.tolist() == [3, 5, 5000 + 100 + 20 + 6, 11, 0, 0, 0, 1]


def test_in_of_a_tuple_like_numba():
    # ``if code in (1, 3, 5):`` -- numba's ``in`` of a homogeneous tuple (a Sequence)
    @cuda.jit(device=True)
    def pick(i, out):
        out[i, 3] += 1  # side effect: the item is evaluated once
        return i

    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i, 0] = x[i] in (1, 3, 5)
            out[i, 1] = x[i] not in (2, x[0])
            out[i, 2] = pick(i, out) in (0, 7) and x[i] in ()

    x = np.arange(8)
    out = np.zeros((8, 4), np.int64)
    k[1, 8](x, out)
    assert out[:, 0].tolist() == [int(v in (1, 3, 5)) for v in range(8)]
    assert out[:, 1].tolist() == [int(v not in (2, 0)) for v in range(8)]
    assert out[:, 2].tolist() == [0] * 8 and out[:, 3].tolist() == [1] * 8


def test_in_of_an_array_is_refused_naming_what_works():
    @cuda.jit
    def k(x, out):
        out[0] = 3 in x

    with pytest.raises(cuda.CompileError, match="'in' is supported in kernels only with a tuple"):
        k[1, 1](np.arange(4), np.zeros(1))


def test_tuple_target_in_a_chained_assignment():
    @cuda.jit
    def k(out, width):
        u = cuda.grid(1)
        index = x_idx, y_idx = u % width, u // width
        s = 0
        for i in range(2):
            s += index[i] * (10 ** i)
        out[u] = s + 100 * (x_idx == index[0]) * (y_idx == index[1])

    out = np.zeros(12, np.int64)
    k[1, 12](out, 4)
    assert out.tolist() == [100 + (u % 4) + 10 * (u // 4) for u in range(12)]


# tuple args
@cuda.jit
def tuple_k(t, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = t[0] * i + t[1]


def test_tuple_argument():
    out = np.zeros(10, np.float64)
    tuple_k[1, 16]((2, 0.5), out)
    np.testing.assert_array_equal(out, 2 * np.arange(10) + 0.5)


@cuda.jit
def tuples_nested(t, out):
    out[0] = t[0][0] + t[0][1]
    out[1] = t[1][1]
    s = 0
    for v in t[0]:
        s += v
    out[2] = s
    out[3] = len(t[0])


def test_nested_tuple_arg():
    out = np.zeros(4)
    tuples_nested[1, 1](((1, 2, 3), (4.5, 5.5)), out)
    assert out.tolist() == [3, 5.5, 6, 3]


@cuda.jit
def tuple_of_arrays(arrs, out):
    i = cuda.grid(1)
    if i < out.size:
        s = 0.0
        for a in arrs:
            s += a[i]
        for j in range(len(arrs)):
            s += arrs[j][i] * 10
            arrs[j][i] += 1
        s += arrs[-1][i] * 1000
        out[i] = s
        for a in arrs:
            if a[i] > 3:
                break
            a[i] = -a[i]
        else:
            out[i] += 0.5


def test_tuple_of_arrays_iterated_and_indexed_at_run_time():
    """numba indexes a UniTuple of arrays by a run-time index and loops over it; was
    "can only be indexed by a constant" / "can loop over tuples of one scalar type"."""
    a1, a2, a3 = np.arange(5.0), np.full(5, 2.0), np.full(5, 3.0)
    b = [a1.copy(), a2.copy(), a3.copy()]
    out = np.zeros(5)
    tuple_of_arrays[1, 8]((a1, a2, a3), out)
    np.testing.assert_array_equal(out, (b[0] + b[1] + b[2]) * 11 + (b[2] + 1) * 1000)
    # after the += 1: a1 = 1..5, a2 = 3, a3 = 4; the last loop negates until an element > 3
    np.testing.assert_array_equal(a1, [-1, -2, -3, 4, 5])
    np.testing.assert_array_equal(a2, [-3, -3, -3, 3, 3])
    np.testing.assert_array_equal(a3, [4, 4, 4, 4, 4])


def _mixed_layout_tuple(arrs, out):
    k = cuda.grid(1)
    out[0] = arrs[k][0, 0]


def test_tuple_of_arrays_of_different_layouts_needs_constant_index():
    k = cuda.jit(_mixed_layout_tuple)
    x = np.ones((2, 2))
    with pytest.raises(cuda.CompileError, match="can only be indexed by a constant"):
        k[1, 1]((x, np.asfortranarray(x)), np.zeros(1))


# a stencil's weights as a global tuple of tuples, read with run-time indices (numba indexes any
# UniTuple at run time; pykern refused tuples of tuples before)
GAUSS = ((1, 2, 1), (2, 4, 2), (1, 2, 1))


def test_stencil_weights_in_a_nested_global_tuple_indexed_at_run_time():
    from collections import namedtuple

    Offset = namedtuple("Offset", "dy dx")
    NEIGHBOURS = (Offset(-1, 0), Offset(1, 0), Offset(0, -1), Offset(0, 1))

    @cuda.jit
    def gauss_blur(img, out):
        y, x = cuda.grid(2)
        if 0 < y < img.shape[0] - 1 and 0 < x < img.shape[1] - 1:
            acc = 0.0
            for dy in range(3):
                for dx in range(3):
                    acc += GAUSS[dy][dx] * img[y + dy - 1, x + dx - 1]
            out[y, x] = acc / 16

    @cuda.jit
    def local_max(img, out, taps):
        y, x = cuda.grid(2)
        if 0 < y < img.shape[0] - 1 and 0 < x < img.shape[1] - 1:
            is_max = True
            for k in range(len(NEIGHBOURS)):
                o = NEIGHBOURS[k]  # a namedtuple picked at run time
                if img[y + o.dy, x + o.dx] >= img[y, x]:
                    is_max = False
            w = 0.0
            for j in range(len(taps)):
                w += taps[j][j % 2]  # a tuple argument of pairs, indexed twice at run time
            out[y, x] = w if is_max else 0.0

    img = np.random.RandomState(17).rand(20, 24)
    out = np.zeros_like(img)
    gauss_blur[(2, 2), (16, 16)](img, out)
    G = np.array(GAUSS)
    ref = sum(G[dy, dx] * img[dy:dy + 18, dx:dx + 22] for dy in range(3) for dx in range(3)) / 16
    assert np.allclose(out[1:-1, 1:-1], ref, rtol=0, atol=1e-15)

    taps = ((1.0, 2.0), (3.0, 4.0), (5.0, 6.0))
    out2 = np.zeros_like(img)
    local_max[(2, 2), (16, 16)](img, out2, taps)
    c = img[1:-1, 1:-1]
    peak = (c > img[:-2, 1:-1]) & (c > img[2:, 1:-1]) & (c > img[1:-1, :-2]) & (c > img[1:-1, 2:])
    assert np.array_equal(out2[1:-1, 1:-1], np.where(peak, 1.0 + 4.0 + 5.0, 0.0))
