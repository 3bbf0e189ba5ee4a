"""External device code (``declare_device``, ``@jit(link=...)``) on the sim target: the cpu
target's build of the code, called through ctypes, gives the bytes the cpu target gives -- numba's
and the C calling convention, every scalar width, pointers into arrays (slices, rows), arrays of
records written by the external code."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import pykern as cuda
from pykern.core.errors import CompileError
from pykern.numba_compat import numba_types as types

from test_sim_matches_cpu import on, same

pytestmark = pytest.mark.skipif(shutil.which("clang-22") is None and shutil.which("clang") is None,
                                reason="clang (clang-22, installed by scripts/setup.sh) is not installed")

SOURCE = cuda.CUSource("""
#include <cstdint>
extern "C" __device__ int mix(double *out, int8_t a, uint16_t b, int64_t c, float d, bool e) {
  *out = (double)a * 1000.0 + (double)b + (double)c * 0.5 + (double)d + (e ? 0.25 : 0.0);
  return 0;
}
extern "C" __device__ bool is_odd(int64_t v) { return (v & 1) != 0; }
extern "C" __device__ uint8_t wrap_add(uint8_t a, uint8_t b) { return (uint8_t)(a + b); }
extern "C" __device__ int const42() { return 42; }
extern "C" __device__ void store_at(int *p, int v) { *p = v; }
extern "C" __device__ int count_pos(int *n, const float *x, int len) {
  int c = 0;
  for (int i = 0; i < len; ++i) c += x[i] > 0.0f;
  *n = c;
  return 0;
}
struct Point { float x, y; int weight; };
extern "C" __device__ int scale_points(int *out, Point *p, int n, float s) {
  for (int i = 0; i < n; ++i) { p[i].x *= s; p[i].y *= s; }
  *out = n;
  return 0;
}
""")

mix = cuda.declare_device("mix", "float64(int8, uint16, int64, float32, boolean)", link=SOURCE)
is_odd = cuda.declare_device("is_odd", "boolean(int64)", link=SOURCE, abi="c")
wrap_add = cuda.declare_device("wrap_add", "uint8(uint8, uint8)", link=SOURCE, abi="c")
const42 = cuda.declare_device("const42", "int32()", link=SOURCE, abi="c")
store_at = cuda.declare_device("store_at", types.void(types.CPointer(types.int32), types.int32), link=SOURCE, abi="c")
count_pos = cuda.declare_device("count_pos", "int32(CPointer(float32), int32)", link=SOURCE)
POINT = np.dtype([("x", np.float32), ("y", np.float32), ("weight", np.int32)], align=True)
scale_points = cuda.declare_device("scale_points", types.int32(types.CPointer(cuda.from_dtype(POINT)), types.int32,
                                                                 types.float32), link=SOURCE)


@cuda.jit
def scalars(out, odd, wrapped, r, s, a, b, c, d, e):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = mix(a[i], b[i], c[i], d[i], e[i])
        odd[i] = is_odd(c[i])
        wrapped[i] = wrap_add(b[i], a[i])
        r[i] = const42() + i
        store_at(s[i:], c[i])  # the address of s[i]; the int64 converted to int32 as numba converts


def test_scalars_both_conventions_and_pointers_are_the_cpu_targets_bytes():
    a = np.array([-128, -1, 0, 1, 127, 5], np.int8)
    b = np.array([0, 1, 65535, 300, 255, 7], np.uint16)
    c = np.array([-(2 ** 63), -3, 0, 2 ** 62 + 1, 2 ** 63 - 1, 9], np.int64)
    d = np.array([-0.0, 1.5, -2.25, 1e30, np.inf, np.nan], np.float32)
    e = np.array([True, False, True, False, True, False])
    outs = (np.zeros(6), np.zeros(6, np.bool_), np.zeros(6, np.uint8), np.zeros(6, np.int32), np.zeros(6, np.int32))
    sim = same(scalars, (1, 8), *outs, a, b, c, d, e, outputs={0, 1, 2, 3, 4})
    assert sim[3].tolist() == [42 + i for i in range(6)]
    assert sim[2].tolist() == [(int(x) + int(y)) % 256 for x, y in zip(b, a)]


@cuda.jit
def rows_and_records(r, x, n, pts):
    i = cuda.grid(1)
    if i < r.size:
        r[i] = count_pos(x[i], x.shape[1])  # row i of a 2-d array
    if i == 0:
        n[0] = scale_points(pts, pts.size, 2.0)


def test_rows_and_arrays_of_records_written_by_external_code():
    x = np.random.default_rng(1).standard_normal((7, 13)).astype(np.float32)
    pts = np.zeros(5, POINT)
    pts["x"], pts["y"], pts["weight"] = [1, -2, 0.5, 3, 0], [2, 1, -0.5, 4, 0], [1, 2, 3, -1, 7]
    sim = same(rows_and_records, (1, 8), np.zeros(7, np.int32), x, np.zeros(1, np.int32), pts)
    np.testing.assert_equal(sim[0], (x > 0).sum(axis=1))
    np.testing.assert_array_equal(sim[3]["x"], pts["x"] * 2)
    assert sim[2][0] == 5


def test_a_symbol_the_code_does_not_define_is_a_compile_error():
    missing = cuda.declare_device("not_there", "int32(int32)", link=SOURCE)

    @cuda.jit
    def k(r):
        r[0] = missing(1)

    with pytest.raises(CompileError, match="not_there"):
        on("sim", k, (1, 1), np.zeros(1, np.int32))
