"""Device functions that return an array parameter (numba's in-place helpers: ``return A``)
and unpacking 1-d arrays into names (``x, y, z = p``; ``for dx, dy, dz in steps``), as found
in numba.cuda programs; cpu target against numpy, and an amdgpu build."""

import numpy as np
import pytest

import pykern as cuda
from pykern import CompileError

pytestmark = pytest.mark.usefixtures("cpu_uncached")


@cuda.jit(device=True)
def add_into(A, reg):
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            A[i, j] = A[i, j] + reg[i, j]
    return A


@cuda.jit(device=True)
def scale_into(v, s):
    for i in range(v.size):
        v[i] *= s
    return v


def test_returned_parameter_is_the_callers_array():
    @cuda.jit
    def k(a, r, out):
        b = add_into(add_into(a, r), r)  # nested: each call hands back its argument
        out[0] = b[1, 1]
        row = scale_into(a[0], 10.0)  # a view argument: the same view comes back
        out[1] = row[1]
        tmp = cuda.local.array(3, np.float64)
        for i in range(3):
            tmp[i] = i
        out[2] = scale_into(tmp, 2.0)[2]

    a = np.ones((2, 2))
    r = np.ones((2, 2))
    out = np.zeros(3)
    k[1, 1](a, r, out)
    assert out.tolist() == [3.0, 30.0, 4.0]
    np.testing.assert_array_equal(a, [[30.0, 30.0], [3.0, 3.0]])


def test_returning_other_arrays():
    @cuda.jit(device=True)
    def fresh(x):
        t = cuda.local.array(2, np.float64)
        t[0] = x
        return t

    @cuda.jit(device=True)
    def either(a, b, c):
        if c > 0:
            return a
        return b

    @cuda.jit(device=True)
    def rebound(a, b):
        a = b
        return a

    @cuda.jit
    def k1(a):
        v = fresh(a[0])
        a[0] = v[0]

    @cuda.jit
    def k2(a):
        v = either(a, a, 1)
        a[0] = v[0]

    @cuda.jit
    def k3(a):
        v = rebound(a, a)
        a[0] = v[0]

    with pytest.raises(CompileError, match="cannot return a local array"):
        k1[1, 1](np.zeros(2))
    for k in (k2, k3):  # one of two parameters, a rebound parameter: the array is the value (numba)
        a = np.full(2, 5.0)
        k[1, 1](a)
        assert a.tolist() == [5.0, 5.0]


def test_unpacking_arrays_and_rows():
    @cuda.jit(device=True)
    def energy(lat, pos, g, steps, dims):
        e = 0.0
        H, W = dims
        x, y = pos
        for dx, dy in steps:
            e += g[int(lat[(x + dx) % H, (y + dy) % W])]
        return e

    @cuda.jit
    def k(lat, g, steps, p, out):
        i, j = cuda.grid(2)
        if i < lat.shape[0] and j < lat.shape[1]:
            out[i, j] = energy(lat, (i, j), g, steps, lat.shape)
        if i == 0 and j == 0:
            a, b = p  # a 1-d array: its first elements, all read before any is assigned
            p[0], p[1] = b, a

    rng = np.random.default_rng(3)
    lat = rng.integers(0, 3, (5, 6)).astype(np.float64)
    g = np.array([0.5, 1.0, 2.0])
    steps = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]], np.int64)
    p = np.array([7.0, 9.0])
    out = np.zeros(lat.shape)
    k[(1, 1), (8, 8)](lat, g, steps, p, out)
    ref = np.array([[sum(g[int(lat[(i + dx) % 5, (j + dy) % 6])] for dx, dy in steps) for j in range(6)]
                    for i in range(5)])
    np.testing.assert_array_equal(out, ref)
    assert p.tolist() == [9.0, 7.0]


def test_unpacking_a_2d_array_is_refused():
    @cuda.jit
    def k(a):
        x, y = a
        x[0] = y[0]

    with pytest.raises(CompileError, match="cannot unpack"):
        k[1, 1](np.zeros((2, 2)))


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_amdgpu_builds(arch):
    def k(a, r, p, out):
        b = add_into(a, r)
        x, y = p
        out[0] = b[0, 0] + x * y

    res = cuda.compile(k, "void(float64[:, ::1], float64[:, ::1], float64[::1], float64[::1])", arch=arch)
    assert res.code_object[:4] == b"\x7fELF"
