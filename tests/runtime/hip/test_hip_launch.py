"""Launch-side checks, with a real AMDGPU code object built here from LLVM IR.

The kernel is hand-written IR following the pykern ABI (so this file does not
need the code generator's lowering): llvmlite emits it, ld.lld links it, and its
amdhsa metadata must show exactly the offsets ``codegen.abi.flatten_params`` lays out.
The ``amdgpu`` tests launch it on a real GPU and compare with numpy.
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field

import numpy as np
import pytest

import pykern

from pykern.core.errors import LaunchError
from pykern.frontend import types as T
from pykern.runtime.hip import launch as hip_launch
from pykern.runtime import kernargs
from pykern.codegen.abi_map import flatten_params
from pykern.runtime.hip.launch import LaunchLimits, check_launch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
LLD = next((p for p in (shutil.which("ld.lld"), shutil.which("ld.lld-22"), "/usr/bin/ld.lld-22") if p and os.path.exists(p)), None)

AXPY_ARGTYPES = (T.Array(T.float32, 1, "A"), T.Array(T.float32, 1, "A"), T.float32, T.int32)
AXPY_IR = r"""
target triple = "amdgcn-amd-amdhsa"
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.x()
define amdgpu_kernel void @axpy(ptr addrspace(1) %out, i64 %out_n, i64 %out_s,
                                ptr addrspace(1) %x, i64 %x_n, i64 %x_s, float %a, i32 %bdim) #0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %bid = call i32 @llvm.amdgcn.workgroup.id.x()
  %b = mul i32 %bid, %bdim
  %i32 = add i32 %b, %tid
  %i = zext i32 %i32 to i64
  %in = icmp slt i64 %i, %out_n
  br i1 %in, label %body, label %done
body:
  %xo = mul i64 %i, %x_s
  %xp = getelementptr i8, ptr addrspace(1) %x, i64 %xo
  %xv = load float, ptr addrspace(1) %xp, align 4
  %r = fmul float %xv, %a
  %oo = mul i64 %i, %out_s
  %op = getelementptr i8, ptr addrspace(1) %out, i64 %oo
  store float %r, ptr addrspace(1) %op, align 4
  br label %done
done:
  ret void
}
attributes #0 = { "amdgpu-flat-work-group-size"="1,256" }
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 COV00}
"""


@dataclass
class Artifact:
    """The fields of codegen's KernelArtifact that the HIP launcher reads."""

    name: str
    binary: bytes
    metadata: dict
    params: list
    kernarg_size: int
    arch: str
    target: str = "amdgpu"
    max_block_size: int = 1024
    static_shared_bytes: int = 0
    error_symbol: str = None
    error_messages: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)


def build_code_object(tmp_path, arch="gfx90a", cov=5) -> bytes:
    llvm = pytest.importorskip("llvmlite.binding")
    if LLD is None:
        pytest.skip("ld.lld not installed")
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    tm = llvm.Target.from_triple("amdgcn-amd-amdhsa").create_target_machine(cpu=arch.split(":")[0], opt=2, reloc="pic")
    mod = llvm.parse_assembly(AXPY_IR.replace("COV", str(cov)))
    mod.verify()
    mod.data_layout = str(tm.target_data)
    obj = tmp_path / "k.o"
    obj.write_bytes(tm.emit_object(mod))
    out = tmp_path / "k.hsaco"
    subprocess.run([LLD, "-shared", str(obj), "-o", str(out)], check=True, capture_output=True)
    return out.read_bytes()


def kernel_metadata(code_object: bytes, name: str) -> dict:
    """The msgpack NT_AMDGPU_METADATA entry of kernel ``name``."""
    import io

    import msgpack
    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(code_object))
    assert elf["e_type"] == "ET_DYN"
    for seg in elf.iter_segments():
        if seg["p_type"] != "PT_NOTE":
            continue
        data, off = seg.data(), 0
        while off + 12 <= len(data):
            namesz, descsz, ntype = struct.unpack_from("<III", data, off)
            off += 12
            nm = data[off : off + namesz].rstrip(b"\0")
            off += (namesz + 3) // 4 * 4
            desc = data[off : off + descsz]
            off += (descsz + 3) // 4 * 4
            if nm == b"AMDGPU" and ntype == 32:
                md = msgpack.unpackb(desc, raw=False)
                for k in md["amdhsa.kernels"]:
                    if k[".name"] == name:
                        return k
    raise AssertionError(f"no metadata for {name}")


def make_artifact(tmp_path, arch="gfx90a", cov=5):
    co = build_code_object(tmp_path, arch, cov)
    params = flatten_params(AXPY_ARGTYPES)
    return Artifact("axpy", co, kernel_metadata(co, "axpy"), params, kernargs.kernarg_size(params), arch)


# ------------------------------------------------------------------- no GPU needed
def test_code_object_metadata_matches_our_packing(tmp_path):
    art = make_artifact(tmp_path)
    explicit = [a for a in art.metadata[".args"] if not a[".value_kind"].startswith("hidden_")]
    params = flatten_params(AXPY_ARGTYPES)
    assert [(a[".offset"], a[".size"]) for a in explicit] == [(p.offset, p.size) for p in params]
    assert [a[".value_kind"] for a in explicit][:1] == ["global_buffer"]
    assert art.metadata[".max_flat_workgroup_size"] == 256
    # explicit_params takes offsets from the metadata and checks sizes
    got = hip_launch.explicit_params(art)
    assert [(p.offset, p.size, p.role) for p in got] == [(p.offset, p.size, p.role) for p in params]
    buf = kernargs.pack(got, [0x1000, 10, 4, 0x2000, 10, 4, 2.0, 64], art.kernarg_size)
    assert struct.unpack_from("<QqqQqqfi", buf) == (0x1000, 10, 4, 0x2000, 10, 4, 2.0, 64)


def test_metadata_disagreement_is_a_launch_error(tmp_path):
    art = make_artifact(tmp_path)
    art.params = art.params[:-1]
    with pytest.raises(LaunchError, match="explicit arguments"):
        hip_launch.explicit_params(art)
    art = make_artifact(tmp_path)
    art.params[6] = flatten_params([T.float64])[0]
    with pytest.raises(LaunchError, match="bytes"):
        hip_launch.explicit_params(art)


def test_launch_configuration_checks():
    lim = LaunchLimits(max_block_size=256, max_block_dim=(1024, 1024, 64), max_grid_dim=(2**31 - 1, 65535, 65535),
                       max_shared=65536, static_shared=1024)
    assert check_launch((4, 2), 128, 0, lim) == ((4, 2, 1), (128, 1, 1))
    assert check_launch(1, (16, 16), 64512, lim) == ((1, 1, 1), (16, 16, 1))
    bad = [
        (((1,), (512,), 0), "at most 256"),  # over .max_flat_workgroup_size
        (((1,), (1, 1, 128), 0), "blockdim.z"),
        (((1, 70000), (1,), 0), "griddim.y"),
        (((0,), (64,), 0), ">= 1"),
        (((1,), (0, 1), 0), ">= 1"),
        (((1,), (64,), 64513), "LDS"),
        (((1,), (64,), -1), ">= 0"),
        (((1, 2, 3, 4), (64,), 0), "1-3"),
        ((("x",), (64,), 0), "int"),
        (((2**31 - 1,), (256,), 0), "2\\*\\*32"),
    ]
    for (g, b, sh), msg in bad:
        with pytest.raises(LaunchError, match=msg):
            check_launch(g, b, sh, lim)


def test_hip_launch_param_markers():
    from pykern.runtime.hip import api as hip_api

    assert (hip_api.HIP_LAUNCH_PARAM_BUFFER_POINTER, hip_api.HIP_LAUNCH_PARAM_BUFFER_SIZE, hip_api.HIP_LAUNCH_PARAM_END) == (1, 2, 3)


def test_module_cache_keys_by_content_and_device():
    k1 = hip_launch.HipModuleCache.key(b"abc", 0)
    assert k1 == hip_launch.HipModuleCache.key(bytes(b"abc"), 0)
    assert k1 != hip_launch.HipModuleCache.key(b"abd", 0)
    assert k1 != hip_launch.HipModuleCache.key(b"abc", 1)


def test_loading_without_a_gpu_is_a_hip_error(tmp_path):
    co = build_code_object(tmp_path)
    path = tmp_path / "k.hsaco"
    code = textwrap.dedent(
        f"""
        import json
        from pykern.core.errors import HipError
        from pykern.runtime.hip import launch as hip_launch
        try:
            hip_launch.module_cache.module(open({str(path)!r}, "rb").read(), 0)
            print(json.dumps(None))
        except HipError as e:
            print(json.dumps([e.code, e.name]))
        """
    )
    env = dict(os.environ, PYTHONPATH=ROOT)
    env.pop("PYKERN_HIP_LIBRARY", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    from pykern.runtime.hip import library as hip

    if hip.available()[0]:
        assert out is None
    else:
        assert out is not None and out[0] > 0 and out[1].startswith("hipError")
    assert len(co) > 0


# ------------------------------------------------------------------- real GPU
@pytest.fixture
def gpu_kernel(tmp_path):
    from pykern.runtime import device_registry as devices

    dev = devices.get_device()
    art = make_artifact(tmp_path, dev.gcn_arch_name, dev.code_object_version)
    return hip_launch.load(art), art


@pytest.mark.amdgpu
def test_axpy_runs_on_the_gpu(gpu_kernel):
    from pykern.runtime.memory.arrays import device_array, to_device

    kernel, art = gpu_kernel
    n, block = 1000, 128
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    dx = to_device(x, target="hip")
    dout = device_array(n, np.float32, target="hip")
    hip_launch.launch(kernel, art, (dout, dx, np.float32(3.0), block), ((n + block - 1) // block,), (block,))
    np.testing.assert_allclose(dout.copy_to_host(), 3.0 * x, rtol=1e-6)
    # strided views: every other element, reversed
    dout2 = device_array(n // 2, np.float32, target="hip")
    hip_launch.launch(kernel, art, (dout2, dx[::-2], np.float32(-1.0), block), (4,), (block,))
    np.testing.assert_allclose(dout2.copy_to_host(), -x[::-2], rtol=1e-6)
    assert len(hip_launch.module_cache) >= 1


@pytest.mark.amdgpu
def test_host_arrays_are_copied_in_and_back_with_a_warning(gpu_kernel):
    from pykern.runtime import PerformanceWarning

    kernel, art = gpu_kernel
    x = np.arange(300, dtype=np.float32)
    out = np.zeros_like(x)
    with pytest.warns(PerformanceWarning):
        hip_launch.launch(kernel, art, (out, x, np.float32(2.0), 256), (2,), (256,))
    np.testing.assert_array_equal(out, 2 * x)


@pytest.mark.amdgpu
def test_oversized_block_refused_before_hip(gpu_kernel):
    from pykern.runtime.memory.arrays import device_array

    kernel, art = gpu_kernel
    d = device_array(10, np.float32, target="hip")
    with pytest.raises(LaunchError, match="at most 256"):
        hip_launch.launch(kernel, art, (d, d, np.float32(1.0), 512), (1,), (512,))


@pytest.mark.amdgpu
def test_stream_launch_and_event_timing(gpu_kernel):
    from pykern.runtime.memory.arrays import device_array, to_device
    from pykern.runtime.streams import event, stream

    kernel, art = gpu_kernel
    s = stream(target="hip")
    x = np.ones(4096, np.float32)
    dx = to_device(x, stream=s, target="hip")
    dout = device_array(4096, np.float32, target="hip")
    e0, e1 = event(target="hip"), event(target="hip")
    e0.record(s)
    hip_launch.launch(kernel, art, (dout, dx, np.float32(5.0), 256), (16,), (256,), stream=s)
    e1.record(s)
    e1.synchronize()
    assert e0.elapsed_time(e1) >= 0.0
    host = dout.copy_to_host(stream=s)
    s.synchronize()
    np.testing.assert_array_equal(host, 5 * x)


def test_extra_array_points_at_the_arguments_and_their_size():
    import ctypes

    from pykern.runtime.hip.launch import _LaunchBuffers

    args = kernargs.pack(flatten_params(AXPY_ARGTYPES), [0x1000, 10, 4, 0x2000, 10, 4, 2.0, 64], 56)
    lb = _LaunchBuffers(len(args), args)
    e = lb.extra
    assert (e[0], e[2], e[4]) == (1, 2, 3)  # BUFFER_POINTER, BUFFER_SIZE, END
    assert ctypes.string_at(e[1], len(args)) == bytes(args)
    assert ctypes.c_size_t.from_address(e[3]).value == len(args) == 56
    lb.view[: len(args)] = bytes(56)  # reuse: the same addresses, new contents
    assert ctypes.string_at(e[1], 56) == bytes(56)


def _pk_kernel(out, x, a, t):
    i = pykern.grid(1)
    if i < out.size:
        out[i] = a * x[i] + t[0]


def test_pykern_compiled_code_object_packs_at_metadata_offsets():
    # integration with the code generator: its metadata, its FlatParams and our packer agree
    if LLD is None:
        pytest.skip("ld.lld not installed")
    ck = pykern.compile(_pk_kernel, "void(float32[:], float64[::1], float32, UniTuple(int8, 3))", arch="gfx90a")
    art = ck.artifacts[0]
    md = kernel_metadata(ck.code_object, ck.name)
    explicit = [a for a in md[".args"] if not a[".value_kind"].startswith("hidden_")]
    ours = flatten_params(
        (T.Array(T.float32, 1, "A"), T.Array(T.float64, 1, "C"), T.float32, T.Tuple((T.int8, T.int8, T.int8)))
    )
    assert [(a[".offset"], a[".size"]) for a in explicit] == [(p.offset, p.size) for p in ours]
    params = hip_launch.explicit_params(art)
    assert [(p.offset, p.size, p.role) for p in params] == [(p.offset, p.size, p.role) for p in ours]
    buf = kernargs.pack(params, [0x10, 5, 4, 0x20, 5, 8, 1.5, 1, -2, 3], art.kernarg_size)
    assert struct.unpack_from("<QqqQqqfbbb", buf) == (0x10, 5, 4, 0x20, 5, 8, 1.5, 1, -2, 3)
