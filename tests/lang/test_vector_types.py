"""CUDA vector types (``cuda.float4``, ``cuda.int2``...) in kernels: construction, field reads, names
and aliases, passing through device functions, constructor errors -- on the cpu target, and compiled
for the amdgpu archs."""

import numpy as np
import pytest

import pykern as cuda

from types_helpers import ARCHS

pytestmark = pytest.mark.usefixtures("cpu_target")


def _vectors(out, x):
    i = cuda.grid(1)
    f2 = cuda.float2(x[i], 2)               # an int literal converts to the base type
    v = cuda.float32x4(1.5, f2, f2.y)       # scalars and smaller vectors, flattened in order
    s = cuda.short3(cuda.short2(-1, 7), 40000)  # converted as numba converts (int16 wraps)
    out[i, 0] = v.x
    out[i, 1] = v.y
    out[i, 2] = v.z
    out[i, 3] = v.w
    out[i, 4] = s.x + s.y
    out[i, 5] = s.z
    k = 6
    for w in (v, cuda.float4(f2, f2)):      # a tuple of vectors: the body per element
        out[i, k] = w.x + w.w
        k += 1


def test_vector_types_build_and_read():
    x = np.array([0.25, -3.0], np.float32)
    out = np.zeros((2, 8), np.float32)
    cuda.jit(_vectors)[1, 2](out, x)
    for i in range(2):
        want = [1.5, x[i], 2, 2, 6, np.int16(40000 - 65536), 1.5 + 2, x[i] + 2]
        np.testing.assert_array_equal(out[i], np.array(want, np.float32))


def test_vector_type_names_and_aliases():
    assert cuda.float4 is cuda.float32x4 and cuda.double2 is cuda.float64x2
    assert cuda.int3 is cuda.int32x3 and cuda.long2 is cuda.int64x2 and cuda.uchar1 is cuda.uint8x1
    assert (cuda.float4.base, cuda.float4.n) == ("float32", 4)
    with pytest.raises(RuntimeError, match="inside"):
        cuda.float4(1, 2, 3, 4)  # kernel-only, as numba's


@cuda.jit(device=True)
def _dot3(a, b):
    return a.x * b.x + a.y * b.y + a.z * b.z


def test_vector_through_a_device_function():
    @cuda.jit
    def k(out):
        out[0] = _dot3(cuda.double3(1, 2, 3), cuda.double3(4, 5, 6))

    out = np.zeros(1)
    k[1, 1](out)
    assert out[0] == 32.0


@pytest.mark.parametrize("bad, msg", [
    ("cuda.float4(1.0, 2.0)", "needs 4 elements"),
    ("cuda.float2(cuda.int2(1, 2))", "not a int32x2"),
])
def test_vector_constructor_errors(bad, msg, tmp_path):
    src = f"import pykern as cuda\n\ndef k(out):\n    v = {bad}\n    out[0] = v.x\n"
    path = tmp_path / "vk.py"
    path.write_text(src)
    ns = {}
    exec(compile(src, str(path), "exec"), ns)
    with pytest.raises(cuda.CompileError, match=msg):
        cuda.jit(ns["k"])[1, 1](np.zeros(1))


@pytest.mark.parametrize("arch", ARCHS)
def test_vector_types_compile_for_amdgpu(arch):
    ck = cuda.compile(_vectors, "void(float32[:, ::1], float32[::1])", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"
