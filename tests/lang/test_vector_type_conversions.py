"""numba.cuda's vector types beyond numba-cuda's own tests (tests/numba_parity/cudapy/
test_cudapy_vector_type.py): element conversion as numba's constructors convert (the base
type's cast of each scalar), vectors passed to and returned from device functions, ``tuple(t)``,
and the same kernels compiled for AMD GPUs."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


@cuda.jit(device=True)
def _add3(a, b):
    return cuda.float32x3(a.x + b.x, a.y + b.y, a.z + b.z)


@cuda.jit(device=True)
def _swap(v):
    return cuda.int2(v.y, v.x)


def _vector_kernel(out, iout, a, i):
    n = cuda.grid(1)
    if n < a.shape[0]:
        u = cuda.float3(a[n, 0], a[n, 1], a[n, 2])
        w = _add3(u, cuda.float3(cuda.float2(a[n, 2], a[n, 1]), a[n, 0]))
        out[n, 0] = w.x
        out[n, 1] = w.y
        out[n, 2] = w.z
        s = _swap(cuda.int32x2(i[n, 0], i[n, 1]))
        iout[n, 0] = s.x
        iout[n, 1] = s.y


VECTOR_KERNEL = cuda.jit(_vector_kernel)
FLOATS = st.floats(width=32, allow_nan=True, allow_infinity=True)
INT64S = st.integers(-2**63, 2**63 - 1)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(FLOATS, FLOATS, FLOATS), min_size=1, max_size=40),
       st.lists(st.tuples(INT64S, INT64S), min_size=40, max_size=40))
def test_vectors_through_device_functions_match_python(rows, irows):
    a = np.array(rows, dtype=np.float64)  # float64 elements convert to float32 in float3(...)
    i = np.array(irows[: len(rows)], dtype=np.int64)  # int64 to int32: numba's wrapping cast
    out = np.zeros(a.shape, np.float32)
    iout = np.zeros((len(rows), 2), np.int32)
    VECTOR_KERNEL[1, 64](out, iout, a, i)
    f = a.astype(np.float32)
    with np.errstate(all="ignore"):
        expect = np.stack([f[:, 0] + f[:, 2], f[:, 1] + f[:, 1], f[:, 2] + f[:, 0]], axis=1)
    np.testing.assert_array_equal(out, expect)
    np.testing.assert_array_equal(iout, i.astype(np.int32)[:, ::-1])


def test_uchar_vector_wraps_like_numba_cast():
    @cuda.jit
    def k(out, x):
        v = cuda.uchar4(x, x + 1, -1, 300)
        out[0] = v.x
        out[1] = v.y
        out[2] = v.z
        out[3] = v.w

    out = np.zeros(4, np.int64)
    k[1, 1](out, 255)
    assert out.tolist() == [255, 0, 255, 44]  # each element cast to uint8 (mod 256)


def test_tuple_of_a_tuple_is_its_elements():
    from collections import namedtuple
    P = namedtuple("P", "x y")

    @cuda.jit
    def k(out, a):
        t = tuple((1.5, 2.5))
        u = tuple(P(3.0, 4.0))  # a plain tuple: indexable, fields gone
        e = tuple()
        out[0] = t[0] + t[1]
        out[1] = u[0] + u[1]
        out[2] = len(e)
        s = 0.0
        for v in tuple((a[0], a[1], a[2])):
            s += v
        out[3] = s

    out = np.zeros(4)
    k[1, 1](out, np.array([1.0, 2.0, 4.0]))
    assert out.tolist() == [4.0, 7.0, 0.0, 7.0]


def test_tuple_of_an_array_is_a_compile_error():
    @cuda.jit
    def k(out):
        t = tuple(out)

    with pytest.raises(cuda.CompileError, match="only a tuple can be converted"):
        k[1, 1](np.zeros(3))


def test_vector_constructor_errors_name_the_argument():
    @cuda.jit
    def k(out):
        v = cuda.float3(1.0, 2.0)
        out[0] = v.x

    with pytest.raises(cuda.CompileError, match="needs 3 elements, got 2"):
        k[1, 1](np.zeros(3))

    @cuda.jit
    def k2(out):
        v = cuda.float2(cuda.int2(1, 2))
        out[0] = v.x

    with pytest.raises(cuda.CompileError, match="takes float32 scalars and vectors, not a int32x2"):
        k2[1, 1](np.zeros(3))


@pytest.mark.parametrize("arch", ["gfx90a", "gfx1100"])
def test_vector_kernel_compiles_for_amdgpu(arch, tmp_path):
    ck = cuda.compile(_vector_kernel, "void(float32[:, :], int32[:, :], float64[:, :], int64[:, :])", arch=arch)
    path = tmp_path / "k.o"
    path.write_bytes(ck.artifacts[0].binary)
    hdr = subprocess.run(["llvm-readelf-22", "-h", "--notes", str(path)], capture_output=True, text=True,
                         check=True).stdout
    assert "AMDGPU" in hdr and arch in hdr
    # the device function's float32 additions of the elements, inlined into the kernel
    assert "add_f32" in ck.asm and "fadd contract float" in ck.llvm_ir  # gfx11 pairs them: v_dual_add_f32
