"""``a.T`` / ``a.transpose()`` / ``np.transpose(a)`` inside kernels on the cpu
target, compared with numpy: a view with the shape and strides reversed that
shares the array's memory; plus an amdgpu build of a transposing kernel.
"""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda
from frontend_helpers import compile_error, jit
from pykern.frontend import ir
from pykern.frontend import types as T

pytestmark = pytest.mark.usefixtures("cpu_target")


def _inputs():
    base = np.arange(7 * 11, dtype=np.float64).reshape(7, 11) * 1.5 - 20
    return {
        "C": base.copy(),
        "F": np.asfortranarray(base),
        "strided": base[::2, 1::3],
    }


@pytest.mark.parametrize("kind", ["C", "F", "strided"])
def test_read_2d(kind):
    @jit
    def k(a, out):
        i, j = cuda.grid(2)
        if i < a.T.shape[0] and j < a.T.shape[1]:
            out[i, j] = a.T[i, j] + a.T[-1 - i, -1 - j] * 0.5

    a = _inputs()[kind]
    out = np.zeros(a.T.shape)
    k[(2, 2), (8, 8)](a, out)
    np.testing.assert_array_equal(out, a.T + a.T[::-1, ::-1] * 0.5)


@pytest.mark.parametrize("order", ["C", "F"])
def test_3d_axes_reversed(order):
    @jit
    def k(a, out, meta):
        t = a.T
        for i in range(t.shape[0]):
            for j in range(t.shape[1]):
                for m in range(t.shape[2]):
                    out[i, j, m] = t[i, j, m]
        for d in range(3):
            meta[d] = t.shape[d]
            meta[3 + d] = t.strides[d]

    a = np.arange(2 * 3 * 4, dtype=np.int32).reshape(2, 3, 4)
    a = np.asarray(a, order=order)
    out = np.zeros((4, 3, 2), np.int32)
    meta = np.zeros(6, np.int64)
    k[1, 1](a, out, meta)
    np.testing.assert_array_equal(out, a.T)
    assert meta.tolist() == list(a.T.shape) + list(a.T.strides)


@pytest.mark.parametrize("order", ["C", "F"])
def test_write_through_transpose(order):
    @jit
    def k(a, out, out2):
        i, j = cuda.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            out.T[i, j] = a[i, j] * 2
            out2.T[j, i] = a[i, j] + 1

    a = np.arange(5 * 6, dtype=np.float32).reshape(5, 6)
    out = np.zeros((6, 5), np.float32, order=order)
    out2 = np.zeros((5, 6), np.float32, order=order)
    k[(1, 1), (8, 8)](a, out, out2)
    np.testing.assert_array_equal(out, (a * 2).T)
    np.testing.assert_array_equal(out2, a + 1)


def test_shape_strides_len_and_double_transpose():
    @jit
    def k(a, out, meta):
        i, j = cuda.grid(2)
        tt = a.T.T
        if i < tt.shape[0] and j < tt.shape[1]:
            out[i, j] = tt[i, j]
        if i == 0 and j == 0:
            meta[0] = a.T.shape[0]
            meta[1] = a.T.shape[1]
            meta[2] = a.T.strides[0]
            meta[3] = a.T.strides[1]
            meta[4] = len(a.T)
            meta[5] = a.T.size
            meta[6] = a.T.ndim
            meta[7] = tt.strides[0]

    for a in _inputs().values():
        out = np.zeros(a.shape)
        meta = np.zeros(8, np.int64)
        k[(2, 2), (8, 8)](a, out, meta)
        np.testing.assert_array_equal(out, a)
        assert meta.tolist() == [*a.T.shape, *a.T.strides, len(a.T), a.size, 2, a.strides[0]]


@pytest.mark.parametrize("kind", ["C", "F", "strided"])
def test_iterate_rows_of_transpose(kind):
    @jit
    def k(a, out, sums):
        r = 0
        for row in a.T:
            s = 0.0
            for c in range(row.shape[0]):
                out[r, c] = row[c]
            for v in row:
                s += v
            sums[r] = s
            r += 1

    a = _inputs()[kind]
    out = np.zeros(a.T.shape)
    sums = np.zeros(a.shape[1])
    k[1, 1](a, out, sums)
    np.testing.assert_array_equal(out, a.T)
    np.testing.assert_allclose(sums, a.T.sum(axis=1))


@pytest.mark.parametrize("kind", ["C", "F", "strided"])
def test_slice_of_transpose(kind):
    @jit
    def k(a, out, meta):
        v = a.T[1:, ::2]
        w = a[2:, ::-1].T  # a transpose of a view
        meta[0] = v.shape[0]
        meta[1] = v.shape[1]
        meta[2] = w.shape[0]
        meta[3] = w.shape[1]
        for i in range(v.shape[0]):
            for j in range(v.shape[1]):
                out[0, i, j] = v[i, j]
        for i in range(w.shape[0]):
            for j in range(w.shape[1]):
                out[1, i, j] = w[i, j]
        out[2, 0, 0] = a.T[1][2]  # a row of the transpose: a column of a

    a = _inputs()[kind]
    out = np.zeros((3, 16, 16))
    meta = np.zeros(4, np.int64)
    k[1, 1](a, out, meta)
    v, w = a.T[1:, ::2], a[2:, ::-1].T
    assert meta.tolist() == [*v.shape, *w.shape]
    np.testing.assert_array_equal(out[0, : v.shape[0], : v.shape[1]], v)
    np.testing.assert_array_equal(out[1, : w.shape[0], : w.shape[1]], w)
    assert out[2, 0, 0] == a[2, 1]


def test_transpose_of_shared_array():
    @jit
    def k(a, out):
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        tile = cuda.shared.array((16, 16), cuda.float32)
        tile[tx, ty] = a[tx, ty]
        cuda.syncthreads()
        t = tile.T
        out[tx, ty] = t[tx, ty]
        cuda.syncthreads()
        t[ty, tx] = 0  # writes through the view land in the shared array
        cuda.syncthreads()
        out[16 + tx, ty] = tile[tx, ty]

    a = np.arange(256, dtype=np.float32).reshape(16, 16)
    out = np.full((32, 16), -1, np.float32)
    k[1, (16, 16)](a, out)
    np.testing.assert_array_equal(out[:16], a.T)
    np.testing.assert_array_equal(out[16:], 0)


def test_1d_transpose_is_the_array():
    @jit
    def k(a, out):
        i = cuda.grid(1)
        if i < a.T.shape[0]:
            out.T[i] = a.T[i] * 3 + a.transpose()[i] + np.transpose(a)[i]
        if i == 0:
            out[a.shape[0]] = len(a.T) + a.T.T.strides[0]

    a = np.arange(10, dtype=np.float64)
    out = np.zeros(11)
    k[1, 16](a, out)
    np.testing.assert_array_equal(out[:10], a * 5)
    assert out[10] == 18


def test_transpose_method_and_np_transpose():
    @jit
    def k(a, out):
        i, j = cuda.grid(2)
        t1 = a.transpose()
        t2 = np.transpose(a)
        if i < t1.shape[0] and j < t1.shape[1]:
            out[0, i, j] = t1[i, j]
            out[1, i, j] = t2[i, j]

    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    out = np.zeros((2, 4, 3), np.int64)
    k[(1, 1), (8, 8)](a, out)
    np.testing.assert_array_equal(out[0], a.T)
    np.testing.assert_array_equal(out[1], a.T)


def test_transpose_errors():
    e = compile_error("def k(a):\n    b = a.transpose(1, 0)\n", [T.Array(T.float32, 2, "C")])
    assert "transpose() takes 0 argument(s), got 2" in str(e)
    e = compile_error("def k(a):\n    b = np.transpose(a, (1, 0))\n", [T.Array(T.float32, 2, "C")])
    assert "takes 1 argument(s), got 2" in str(e)
    e = compile_error("def k(a):\n    b = np.transpose(a[0, 0])\n", [T.Array(T.float32, 2, "C")])
    assert "not an array" in str(e)


def test_transpose_types_and_verifier():
    from pykern.frontend.verify import problems

    c2, f3, a2 = T.Array(T.float32, 2, "C"), T.Array(T.int8, 3, "F"), T.Array(T.float64, 2, "A", "shared", True)
    assert ir.transpose_type(c2) == T.Array(T.float32, 2, "F")
    assert ir.transpose_type(f3) == T.Array(T.int8, 3, "C")
    assert ir.transpose_type(a2) == a2

    a = ir.Var("a", c2)

    def fn(e):
        return ir.Function("k", [ir.Param("a", c2)], T.void, [ir.ExprStmt(e)], {"a": c2}, True)

    good = ir.Transpose(a, ir.transpose_type(c2))
    assert str(good) == "a.T"
    assert problems(fn(good)) == []
    assert "expected float32[::1, :]" in problems(fn(ir.Transpose(a, c2)))[0][0]
    v1 = ir.ArrayView(a, [ir.Const(0, T.int64)], ir.view_type(c2, [ir.Const(0, T.int64)]))
    assert "1-d" in problems(fn(ir.Transpose(v1, v1.type)))[0][0]


def test_transpose_kernel_builds_for_amdgpu():
    def k(a, out):
        i, j = cuda.grid(2)
        tile = cuda.shared.array((16, 16), np.float32)
        t = a.T
        if i < t.shape[0] and j < t.shape[1]:
            tile[cuda.threadIdx.x, cuda.threadIdx.y] = t[i, j]
        cuda.syncthreads()
        if i < out.shape[1] and j < out.shape[0]:
            out.T[i, j] = tile.T[cuda.threadIdx.y, cuda.threadIdx.x] + a.T[1:, ::2][0, 0]

    ck = cuda.compile(k, "void(float32[:, ::1], float32[:, ::1])", arch="gfx942")
    assert ck.code_object[:4] == b"\x7fELF"


TABLE = np.arange(6.0).reshape(2, 3)


def test_transpose_of_constant_arrays():
    @jit
    def k(out):
        c = cuda.const.array_like(TABLE)
        for i in range(3):
            for j in range(2):
                out[0, i, j] = c.T[i, j]
                out[1, i, j] = TABLE.T[i, j]  # a global numpy array: a frozen constant
                out[2, i, j] = np.transpose(TABLE)[i, j] + TABLE.transpose()[i, j]

    out = np.zeros((3, 3, 2))
    k[1, 1](out)
    np.testing.assert_array_equal(out[0], TABLE.T)
    np.testing.assert_array_equal(out[1], TABLE.T)
    np.testing.assert_array_equal(out[2], TABLE.T * 2)


def test_transpose_keeps_readonly():
    e = compile_error("def k(out):\n    c = cuda.const.array_like(TABLE)\n    c.T[0, 0] = 1.0\n",
                      [T.Array(T.float64, 2, "C")], TABLE=TABLE)
    assert "read-only" in str(e)
