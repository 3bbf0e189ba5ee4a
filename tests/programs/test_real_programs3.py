"""Distilled kernels of numba.cuda programs found in the wild (third probe round) that pykern
refused or answered differently: each one is a real program's kernel, checked against numpy."""

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


def test_nvidia_only_host_names_are_refused_naming_the_feature():
    with pytest.raises(cuda.CompileError, match="declare_device.*external CUDA C"):
        cuda.declare_device("mul", "float32(float32, float32)")
    with pytest.raises(cuda.CompileError, match="compile_ptx is not supported.*pykern.compile"):
        cuda.compile_ptx(lambda a: None, "void(float32[:])")
    with pytest.raises(cuda.CompileError, match="compile_ptx_for_current_device is not supported"):
        cuda.compile_ptx_for_current_device(lambda a: None, "void(float32[:])")
    with pytest.raises(cuda.CompileError, match="compile_for_current_device is not supported"):
        cuda.compile_for_current_device(lambda a: None, "void(float32[:])")
    with pytest.raises(cuda.CompileError, match="set_memory_manager is not supported.*External Memory"):
        cuda.set_memory_manager(object)


def test_signature_built_from_annotations_with_a_trailing_comma():
    # a ray tracer's ``cuda_auto_type``: ``signature += type_mapping[annot] + ", "`` per parameter
    @cuda.jit(func_or_sig="float32[:], float32, ", device=True)
    def length(v, s):
        return (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) ** 0.5 * s

    @cuda.jit(func_or_sig="float32[:, :], float32[:], int32, ")
    def kern(vs, out, n):
        i = cuda.grid(1)
        if i < n:
            out[i] = length(vs[i], np.float32(2))

    vs = np.random.RandomState(2).rand(10, 3).astype(np.float32)
    out = np.zeros(10, np.float32)
    kern[1, 16](vs, out, 10)
    np.testing.assert_allclose(out, 2 * np.linalg.norm(vs, axis=1), rtol=1e-5)


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


def test_assignment_expressions_like_numba():
    # ``if (v := x[i]) > 0.5:`` and ``while (s := s // 2) > 0:`` -- numba compiles the bytecode
    # of := as an assignment; in a while test it runs on every test
    @cuda.jit
    def k(x, out):
        sh = cuda.shared.array(32, np.float32)
        t = cuda.threadIdx.x
        sh[t] = x[t]
        cuda.syncthreads()
        s = 32
        while (s := s // 2) > 0:
            if t < s:
                sh[t] += sh[t + s]
            cuda.syncthreads()
        if t == 0:
            out[0] = sh[0]
        if (v := x[t]) > 0.5:
            out[1 + t] = v
        out[33 + t] = (w := v * 2) + w
        if t > 3 and (z := x[t] + 1) > 1.7:
            out[65 + t] = z

    x = np.random.RandomState(3).rand(32).astype(np.float32)
    out = np.zeros(97, np.float32)
    k[1, 32](x, out)
    assert np.isclose(out[0], x.sum(dtype=np.float64), rtol=1e-5)
    assert np.array_equal(out[1:33], np.where(x > 0.5, x, 0))
    assert np.array_equal(out[33:65], 4 * x)
    assert np.array_equal(out[65:], np.where((np.arange(32) > 3) & (x + 1 > 1.7), x + 1, 0))
