"""External device code in AMD GPU code objects: HIP C++ compiled by clang for each arch the
kernel is built for, linked before optimisation (so its calls inline), checked with
llvm-objdump-22 / llvm-readelf-22: the instructions of the external code are in the kernel,
nothing is called and no symbol is left undefined."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import pykern as cuda
from pykern.core.errors import CompileError
from pykern.numba_compat import numba_types as types

ARCHS = ["gfx90a", "gfx942", "gfx1100", "gfx1201"]
OBJDUMP = "llvm-objdump-22"
READELF = "llvm-readelf-22"

pytestmark = pytest.mark.skipif(shutil.which("clang-22") is None and shutil.which("clang") is None,
                                reason="clang (clang-22, installed by scripts/setup.sh) is not installed")

SOURCE = """
#include <hip/hip_runtime.h>
struct Point { float x, y; int weight; };
extern "C" __device__ int mul_add(float *out, float a, float b) { *out = a * b + 3.0f; return 0; }
extern "C" __device__ float weighted(const Point *p, int i) {
  return (p[i].x + p[i].y) * (float)p[i].weight;
}
extern "C" __device__ void put(int *p, int v) { p[0] = v ^ 0x5a5a; }
"""
# GPU-only, written as CUDA code is (its runtime header included): thread indices and a
# device-library function (ocml)
GPU_ONLY = cuda.CUSource("""
#include <cuda_runtime.h>
extern "C" __device__ float lane_sqrt(float x) { return sqrtf(x) + (float)threadIdx.x; }
""", name="gpu_only.hip")
POINT = np.dtype([("x", np.float32), ("y", np.float32), ("weight", np.int32)], align=True)


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    src = tmp_path_factory.mktemp("ext") / "funcs.hip"
    src.write_text(SOURCE)
    point = cuda.from_dtype(POINT)
    mul_add = cuda.declare_device("mul_add", "float32(float32, float32)", link=str(src))
    weighted = cuda.declare_device("weighted", types.float32(types.CPointer(point), types.int32), link=str(src),
                                   abi="c")
    put = cuda.declare_device("put", types.void(types.CPointer(types.int32), types.int32), link=str(src), abi="c")

    @cuda.jit
    def k(r, s, pts, x):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = mul_add(x[i], 2.5) + weighted(pts, i)
            put(s[i:], i)

    return k


def _signature():
    point = cuda.from_dtype(POINT)
    return (cuda.float32[::1], cuda.int32[::1], point[::1], cuda.float32[::1])


def _tools(path):
    dis = subprocess.run([OBJDUMP, "-d", str(path)], capture_output=True, text=True, check=True).stdout
    syms = subprocess.run([READELF, "-sW", str(path)], capture_output=True, text=True, check=True).stdout
    return dis, syms


@pytest.mark.parametrize("arch", ARCHS)
def test_external_code_is_inlined_in_every_arch(kernel, arch, tmp_path):
    ck = cuda.compile(kernel, cuda.void(*_signature()), arch=arch)
    path = tmp_path / f"k_{arch}.hsaco"
    path.write_bytes(ck.code_object)
    dis, syms = _tools(path)
    assert "s_swappc" not in dis and "s_setpc" not in dis  # no call: the external functions are inlined
    undefined = [line for line in syms.splitlines() if " UND " in line and line.split()[-1] not in ("UND", "0:")]
    assert not undefined, undefined
    for name in ("mul_add", "weighted", "put"):
        assert name not in syms  # internal, inlined and gone
    assert "0x5a5a" in dis or "23130" in dis  # put's constant, from the external source
    assert "v_cvt_f32_i32" in dis  # weighted's (float)p[i].weight
    # the IR the code was made from has no call of them either
    assert not any(f"call {t} @{n}" in ck.llvm_ir for n in ("mul_add", "weighted", "put") for t in ("i32", "float", "void"))


@pytest.mark.parametrize("arch", ARCHS)
def test_hip_only_code_links_device_libraries(arch, tmp_path):
    lane_sqrt = cuda.declare_device("lane_sqrt", "float32(float32)", link=GPU_ONLY, abi="c")

    @cuda.jit
    def k(r):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = lane_sqrt(r[i])

    ck = cuda.compile(k, "void(float32[::1])", arch=arch)
    path = tmp_path / "k.hsaco"
    path.write_bytes(ck.code_object)
    dis, syms = _tools(path)
    assert "v_sqrt_f32" in dis or "v_rsq_f32" in dis
    assert "s_swappc" not in dis
    assert not [line for line in syms.splitlines() if " UND " in line and line.split()[-1] not in ("UND", "0:")]


def test_wave64_on_rdna_compiles_the_external_code_for_wave64():
    from pykern.codegen import get_target
    from pykern.codegen.amdgpu.archs import parse_target_id
    from pykern.codegen.external import hip_flags
    from pykern.frontend import compile_ir

    assert "-mwavefrontsize64" in hip_flags(parse_target_id("gfx1100", wave64=True), 5)
    assert "-mwavefrontsize64" not in hip_flags(parse_target_id("gfx1100"), 5)
    lane_sqrt = cuda.declare_device("lane_sqrt", "float32(float32)", link=GPU_ONLY, abi="c")

    def k(r):
        r[0] = lane_sqrt(r[0])

    module = compile_ir(k, [cuda.float32[::1]])
    art = get_target("amdgpu", arch="gfx1100", wave64=True).compile(module)
    assert art.wave_size == 64
    assert "lane_sqrt" not in art.llvm_ir  # inlined: a wave32 callee could not be


def test_compile_error_names_the_arch_and_the_line(tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text('extern "C" __device__ int f(int *o) {\n  return no_such_thing;\n}\n')
    f = cuda.declare_device("f", "int32()", link=str(bad))

    @cuda.jit
    def k(r):
        r[0] = f()

    with pytest.raises(CompileError) as err:
        cuda.compile(k, "void(int32[::1])", arch="gfx942")
    assert "gfx942" in str(err.value) and f"{bad}:2:" in str(err.value)
