"""External device code on the cpu target: ``declare_device`` and ``@jit(link=[...])`` with HIP
C++ sources (files and ``CUSource``), LLVM IR (.ll) and bitcode (.bc), numba's ABI (status
return, result through a pointer) and the C ABI, scalar, pointer and array-of-struct arguments,
each result compared with the same computation in Python."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import pykern as cuda
from pykern.core.errors import CompileError
from pykern.numba_compat import numba_types as types

pytestmark = [
    pytest.mark.usefixtures("cpu_target"),
    pytest.mark.skipif(shutil.which("clang-22") is None and shutil.which("clang") is None,
                       reason="clang (clang-22, installed by scripts/setup.sh) is not installed"),
]

TIMES2 = cuda.CUSource('extern "C" __device__ int times2(int *out, int a) { *out = a * 2; return 0; }')

SCALARS = """
#include <cstdint>
extern "C" __device__ int mix(double *out, int8_t a, uint16_t b, int64_t c, float d, bool e) {
  *out = (double)a * 1000.0 + (double)b + (double)c * 0.5 + (double)d + (e ? 0.25 : 0.0);
  return 0;
}
extern "C" __device__ bool is_odd(int64_t v) { return (v & 1) != 0; }
extern "C" __device__ uint8_t wrap_add(uint8_t a, uint8_t b) { return (uint8_t)(a + b); }
extern "C" __device__ int8_t neg8(int8_t a) { return (int8_t)-a; }
extern "C" __device__ int const42() { return 42; }
extern "C" __device__ int add2(int a, int b) { return a + b; }
extern "C" __device__ void store_at(int *p, int v) { *p = v; }
extern "C" __device__ int count_pos(int *nothing, const float *x, int n) {
  int c = 0;
  for (int i = 0; i < n; ++i) c += x[i] > 0.0f;
  *nothing = c;
  return 0;
}
"""

POINTS = """
#include <hip/hip_runtime.h>
struct Point { float x, y; int weight; };
extern "C" __device__ float weighted_norm(const Point *p, int i) {
  return (p[i].x * p[i].x + p[i].y * p[i].y) * (float)p[i].weight;
}
extern "C" __device__ int scale_points(int *out, Point *p, int n, float s) {
  for (int i = 0; i < n; ++i) { p[i].x *= s; p[i].y *= s; }
  *out = n;
  return 0;
}
"""

POINT = np.dtype([("x", np.float32), ("y", np.float32), ("weight", np.int32)], align=True)


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    d = tmp_path_factory.mktemp("extsrc")
    (d / "scalars.cpp").write_text(SCALARS)
    (d / "points.hip").write_text(POINTS)
    return d


def test_declaration_api_as_numba():
    f1 = cuda.declare_device("f1", "int32(float32[:])")
    assert f1.name == "f1"
    assert f1.sig.args == (cuda.float32[:],)
    assert f1.sig.return_type == cuda.int32
    f2 = cuda.declare_device("f1", cuda.int32(cuda.float32[:]))
    assert f2.sig.args == f1.sig.args
    with pytest.raises(TypeError, match="Return type"):
        cuda.declare_device("f1", "(float32[:],)")
    with pytest.raises(NotImplementedError, match="Unsupported ABI"):
        cuda.declare_device("f1", "int32(int32)", abi="fortran")
    with pytest.raises(TypeError, match="only be called from a kernel"):
        f1(np.zeros(3, np.float32))


def test_numba_abi_in_memory_source():
    times2 = cuda.declare_device("times2", "int32(int32)", link=TIMES2)

    @cuda.jit
    def kernel(r, x):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = times2(x[i]) + times2(x[i] + i)

    x = np.arange(-5, 27, dtype=np.int32)
    r = np.empty_like(x)
    kernel[1, 32](r, x)
    np.testing.assert_equal(r, x * 2 + (x + np.arange(x.size)) * 2)


def test_scalar_arguments_and_results_against_python(sources):
    src = str(sources / "scalars.cpp")
    mix = cuda.declare_device("mix", "float64(int8, uint16, int64, float32, boolean)", link=src)
    is_odd = cuda.declare_device("is_odd", "boolean(int64)", link=src, abi="c")
    wrap_add = cuda.declare_device("wrap_add", "uint8(uint8, uint8)", link=src, abi="c")
    neg8 = cuda.declare_device("neg8", "int8(int8)", link=src, abi="c")

    @cuda.jit
    def kernel(out, odd, wrapped, negs, a, b, c, d, e):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = mix(a[i], b[i], c[i], d[i], e[i])
            odd[i] = is_odd(c[i])
            wrapped[i] = wrap_add(b[i], a[i])  # arguments converted to uint8 as numba converts them
            negs[i] = neg8(a[i])

    a = np.array([-128, -1, 0, 1, 127, 5], np.int8)
    b = np.array([0, 1, 65535, 300, 255, 7], np.uint16)
    c = np.array([-(2 ** 63), -3, 0, 2 ** 62 + 1, 2 ** 63 - 1, 9], np.int64)
    d = np.array([-0.0, 1.5, -2.25, 1e30, np.inf, 3.0], np.float32)
    e = np.array([True, False, True, False, True, False])
    out = np.zeros(6)
    odd = np.zeros(6, np.bool_)
    wrapped = np.zeros(6, np.uint8)
    negs = np.zeros(6, np.int8)
    kernel[1, 8](out, odd, wrapped, negs, a, b, c, d, e)
    for k in range(6):
        want = float(a[k]) * 1000.0 + float(b[k]) + float(c[k]) * 0.5 + float(d[k]) + (0.25 if e[k] else 0.0)
        assert out[k] == want
        assert odd[k] == bool(int(c[k]) & 1)
        assert wrapped[k] == (int(b[k]) + int(a[k])) % 256
        assert negs[k] == np.int8((-int(a[k]) + 128) % 256 - 128)


def test_c_abi_zero_two_args_and_void(sources):
    src = str(sources / "scalars.cpp")
    const42 = cuda.declare_device("const42", "int32()", link=src, abi="c")
    add2 = cuda.declare_device("add2", "int32(int32, int32)", link=src, abi="c")
    store_at = cuda.declare_device("store_at", types.void(types.CPointer(types.int32), types.int32),
                                   link=src, abi="c")

    @cuda.jit
    def kernel(r, s, x):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = add2(x[i], i) + const42()
            store_at(s[i:], x[i] * 3)  # the address of s[i]

    x = np.arange(10, dtype=np.int32)
    r = np.empty_like(x)
    s = np.zeros_like(x)
    kernel[1, 32](r, s, x)
    np.testing.assert_equal(r, x + np.arange(10) + 42)
    np.testing.assert_equal(s, x * 3)


def test_pointer_to_array_data(sources):
    count_pos = cuda.declare_device("count_pos", "int32(CPointer(float32), int32)", link=str(sources / "scalars.cpp"))

    @cuda.jit
    def kernel(r, x):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = count_pos(x[i], x.shape[1])  # row i of a 2-d array

    x = np.random.default_rng(1).standard_normal((7, 13)).astype(np.float32)
    r = np.zeros(7, np.int32)
    kernel[1, 8](r, x)
    np.testing.assert_equal(r, (x > 0).sum(axis=1))


def test_array_of_struct(sources):
    src = str(sources / "points.hip")
    point = cuda.from_dtype(POINT)
    norm = cuda.declare_device("weighted_norm", types.float32(types.CPointer(point), types.int32), link=src,
                               abi="c")
    scale = cuda.declare_device("scale_points", types.int32(types.CPointer(point), types.int32, types.float32),
                                link=src)

    @cuda.jit
    def norms(r, pts):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = norm(pts, i)

    @cuda.jit
    def scale_all(n, pts):
        n[0] = scale(pts, pts.size, 2.0)

    pts = np.zeros(5, POINT)
    pts["x"] = [1, -2, 0.5, 3, 0]
    pts["y"] = [2, 1, -0.5, 4, 0]
    pts["weight"] = [1, 2, 3, -1, 7]
    before = pts.copy()
    r = np.zeros(5, np.float32)
    n = np.zeros(1, np.int32)
    norms[1, 8](r, pts)
    scale_all[1, 1](n, pts)
    want = (before["x"] * before["x"] + before["y"] * before["y"]) * before["weight"].astype(np.float32)
    np.testing.assert_array_equal(r, want)
    assert n[0] == 5
    np.testing.assert_array_equal(pts["x"], before["x"] * 2)
    np.testing.assert_array_equal(pts["y"], before["y"] * 2)
    np.testing.assert_array_equal(pts["weight"], before["weight"])


def test_jit_link_option_provides_the_code(sources):
    add2 = cuda.declare_device("add2", "int32(int32, int32)", abi="c")

    @cuda.jit(link=[str(sources / "scalars.cpp")])
    def kernel(r, x):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = add2(x[i], 100)

    x = np.arange(4, dtype=np.int32)
    r = np.empty_like(x)
    kernel[1, 4](r, x)
    np.testing.assert_equal(r, x + 100)


LL = """
define i32 @ll_sub(ptr %out, i32 %a, i32 %b) {
  %d = sub i32 %a, %b
  store i32 %d, ptr %out
  ret i32 0
}
define double @ll_half(double %x) {
  %h = fmul double %x, 5.000000e-01
  ret double %h
}
"""


def test_llvm_ir_and_bitcode_sources(tmp_path):
    import llvmlite.binding as llvm

    sub, half = LL.strip().split("\n}\n")
    (tmp_path / "f.ll").write_text(sub + "\n}\n")
    (tmp_path / "f.bc").write_bytes(llvm.parse_assembly(half).as_bitcode())
    sub_ll = cuda.declare_device("ll_sub", "int32(int32, int32)", link=str(tmp_path / "f.ll"))
    half_bc = cuda.declare_device("ll_half", "float64(float64)", link=str(tmp_path / "f.bc"), abi="c")

    @cuda.jit
    def kernel(r, h, x):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = sub_ll(x[i], 3)
            h[i] = half_bc(x[i])

    x = np.arange(-4, 4, dtype=np.int32)
    r = np.empty_like(x)
    h = np.empty(8)
    kernel[1, 8](r, h, x)
    np.testing.assert_equal(r, x - 3)
    np.testing.assert_equal(h, x * 0.5)


def test_compile_error_shows_clangs_message_with_file_and_line(tmp_path):
    bad = tmp_path / "bad.hip"
    bad.write_text('extern "C" __device__ int broken(int *out, int a) {\n  *out = a +;\n  return 0;\n}\n')
    broken = cuda.declare_device("broken", "int32(int32)", link=str(bad))

    @cuda.jit
    def kernel(r):
        r[0] = broken(1)

    with pytest.raises(CompileError) as err:
        kernel[1, 1](np.zeros(1, np.int32))
    msg = str(err.value)
    assert f"{bad}:2:" in msg and "expected expression" in msg


def test_in_memory_source_errors_name_the_source():
    src = cuda.CUSource('extern "C" __device__ int nope(int *o) { return undefined_name; }', name="mine.cu")
    nope = cuda.declare_device("nope", "int32()", link=src)

    @cuda.jit
    def kernel(r):
        r[0] = nope()

    with pytest.raises(CompileError, match=r"mine\.cu:1:.*undefined_name"):
        kernel[1, 1](np.zeros(1, np.int32))


def test_gpu_only_source_is_refused_on_the_cpu_target_with_the_reason():
    src = cuda.CUSource('extern "C" __device__ int lane(int *o) { *o = threadIdx.x; return 0; }', name="lane.hip")
    lane = cuda.declare_device("lane", "int32()", link=src)

    @cuda.jit
    def kernel(r):
        r[0] = lane()

    with pytest.raises(CompileError, match=r"(?s)lane\.hip:1:.*threadIdx.*thread indices"):
        kernel[1, 1](np.zeros(1, np.int32))


def test_undefined_and_mismatched_functions_are_errors():
    missing = cuda.declare_device("not_there", "int32(int32)", link=TIMES2)

    @cuda.jit
    def k1(r):
        r[0] = missing(1)

    with pytest.raises(CompileError, match="not defined.*not_there"):
        k1[1, 1](np.zeros(1, np.int32))

    wrong = cuda.declare_device("times2", "int32(int32)", link=TIMES2, abi="c")  # it is numba's ABI

    @cuda.jit
    def k2(r):
        r[0] = wrong(1)

    with pytest.raises(CompileError, match="times2.*defined as .*i32 \\(ptr, i32\\)"):
        k2[1, 1](np.zeros(1, np.int32))

    nocode = cuda.declare_device("times2", "int32(int32)")

    @cuda.jit
    def k3(r):
        r[0] = nocode(1)

    with pytest.raises(CompileError, match="no code to link"):
        k3[1, 1](np.zeros(1, np.int32))


def test_bad_link_entries_fail_when_declared(tmp_path):
    with pytest.raises(CompileError, match="NVIDIA"):
        cuda.declare_device("f", "int32(int32)", link=str(tmp_path / "f.ptx"))
    with pytest.raises(CompileError, match="does not exist"):
        cuda.declare_device("f", "int32(int32)", link=str(tmp_path / "missing.cu"))
    with pytest.raises(CompileError, match="does not exist"):
        cuda.jit(link=[str(tmp_path / "missing.hip")])(lambda r: None)


def test_wrong_argument_kinds_are_located_errors():
    takes_ptr = cuda.declare_device("times2", "int32(CPointer(int32))", link=TIMES2)

    @cuda.jit
    def kernel(r, x):
        r[0] = takes_ptr(x)

    with pytest.raises(CompileError, match="pointer to int32.*float32"):
        kernel[1, 1](np.zeros(1, np.int32), np.zeros(3, np.float32))


def test_device_function_link_option_reaches_its_callers():
    times2 = cuda.declare_device("times2", "int32(int32)")

    @cuda.jit(device=True, link=[TIMES2])
    def twice(v):
        return times2(v)

    @cuda.jit
    def kernel(r, x):
        i = cuda.grid(1)
        if i < len(r):
            r[i] = twice(x[i]) + 1

    x = np.arange(6, dtype=np.int32)
    r = np.empty_like(x)
    kernel[1, 8](r, x)
    np.testing.assert_equal(r, x * 2 + 1)


def test_float16_and_array_typed_parameters():
    src = cuda.CUSource("""
extern "C" __device__ _Float16 half_mul(_Float16 a, _Float16 b) { return a * b; }
extern "C" __device__ int dot3(double *out, const double *a, const double *b) {
  *out = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  return 0;
}
""", name="mixed.hip")
    half_mul = cuda.declare_device("half_mul", "float16(float16, float16)", link=src, abi="c")
    dot3 = cuda.declare_device("dot3", "float64(float64[:], float64[:])", link=src)  # numba: the array struct

    @cuda.jit
    def kernel(h, d, a, b, u, v):
        i = cuda.grid(1)
        if i < h.size:
            h[i] = half_mul(a[i], b[i])
            d[i] = dot3(u[i], v[i])  # rows of 2-d arrays: the address of each row's first element

    rng = np.random.default_rng(3)
    a = rng.standard_normal(9).astype(np.float16)
    b = rng.standard_normal(9).astype(np.float16)
    u = rng.standard_normal((9, 3))
    v = rng.standard_normal((9, 3))
    h = np.zeros(9, np.float16)
    d = np.zeros(9)
    kernel[1, 16](h, d, a, b, u, v)
    for k in range(9):
        assert h[k] == a[k] * b[k]  # one correctly rounded product, as numpy's
        # clang contracts a*b+c into fmas where the machine has them (as hipcc does): not bit-exact
        assert d[k] == pytest.approx(u[k, 0] * v[k, 0] + u[k, 1] * v[k, 1] + u[k, 2] * v[k, 2], rel=1e-14, abs=1e-14)


def test_from_buffer_of_a_strided_view_is_refused():
    cffi = pytest.importorskip("cffi")
    ffi = cffi.FFI()
    times2 = cuda.declare_device("times2", "int32(CPointer(int32))", link=TIMES2)

    @cuda.jit
    def kernel(r, x):
        r[0] = times2(ffi.from_buffer(x[::2]))

    with pytest.raises(CompileError, match="contiguous array"):
        kernel[1, 1](np.zeros(1, np.int32), np.zeros(4, np.int32))


def test_cuda_source_including_the_cuda_runtime_header():
    src = cuda.CUSource('#include <cuda_runtime.h>\nextern "C" __device__ float sq(float x) { return x * x; }',
                        name="sq.cu")
    sq = cuda.declare_device("sq", "float32(float32)", link=src, abi="c")

    @cuda.jit
    def kernel(r):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = sq(r[i])

    r = np.array([-1.5, 0.0, 3.0, 1e20], np.float32)
    with np.errstate(over="ignore"):
        want = r * r  # inf for 1e20, as in the kernel
    kernel[1, 4](r)
    np.testing.assert_array_equal(r, want)


WRAPPING = cuda.CUSource("""
#include <cstdint>
extern "C" __device__ int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
extern "C" __device__ int ratio(double *out, double a, double b) { *out = (a + b) / b; return 0; }
""", name="wrapping.cpp")


def test_values_cross_unchanged_against_numpy():
    from hypothesis import given, settings, strategies as st
    from hypothesis.extra.numpy import arrays

    wrap_mul = cuda.declare_device("wrap_mul", "int64(int64, int64)", link=WRAPPING, abi="c")
    ratio = cuda.declare_device("ratio", "float64(float64, float64)", link=WRAPPING)

    @cuda.jit
    def kernel(p, q, a, b, x, y):
        i = cuda.grid(1)
        if i < p.size:
            p[i] = wrap_mul(a[i], b[i])
            q[i] = ratio(x[i], y[i])

    ints = arrays(np.int64, 16, elements=st.integers(-(2 ** 63), 2 ** 63 - 1))
    floats = arrays(np.float64, 16, elements=st.floats(allow_nan=True, allow_infinity=True))

    @settings(deadline=None, max_examples=60)  # the first example compiles the kernel
    @given(ints, ints, floats, floats)
    def check(a, b, x, y):
        p = np.zeros(16, np.int64)
        q = np.zeros(16)
        kernel[1, 16](p, q, a, b, x, y)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(p, a * b)  # numpy's int64 product wraps
            np.testing.assert_array_equal(q, (x + y) / y)  # NaN where numpy's is, -0.0 and inf too
            assert np.array_equal(np.signbit(q), np.signbit((x + y) / y))

    check()
