"""Python kernels -> pykern.frontend.compile_ir -> AmdgpuTarget, for several archs.

Checks the code object against ``abi.flatten_params`` (the ABI contract the
runtime packs arguments by), that math resolves through ocml without
undefined symbols, and the instructions each feature must produce.
"""

from __future__ import annotations

import math
import os
import re
import subprocess

import numpy as np
import pytest

import pykern as cuda
from pykern.codegen import abi_map as abi
from pykern.codegen.amdgpu import archs
from pykern.codegen.amdgpu import codeobject
from pykern.codegen.amdgpu.target import AmdgpuTarget
from pykern.codegen.target_interface import CompileOptions
from pykern.frontend import compile_ir
from pykern.frontend import types as T

ARCHS = ["gfx90a", "gfx942", "gfx1100", "gfx1201"]


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def block_sum(x, out):
    sm = cuda.shared.array(256, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    sm[t] = x[i] if i < x.size else np.float32(0)
    cuda.syncthreads()
    s = 128
    while s > 0:
        if t < s:
            sm[t] += sm[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.add(out, 0, sm[0])


def wave_sum(x, out, mask):
    i = cuda.grid(1)
    v = x[i]
    off = cuda.warpsize // 2
    while off > 0:
        v += cuda.shfl_xor_sync(0xFFFFFFFF, v, off)
        off //= 2
    b = cuda.ballot_sync(0xFFFFFFFF, v > 0)
    if cuda.laneid == 0:
        out[i // cuda.warpsize] = v
        mask[i // cuda.warpsize] = b


def trig64(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = math.sin(x[i]) + math.exp(x[i]) * math.atan2(x[i], 2.0) + math.lgamma(x[i])


def mixed(flag, h, k, m, t, s, z):
    if flag:
        m[0, 1] = h + t[2]
        z[0, 1, 2] = k + t[0] + s


def dyn_shared(x):
    buf = cuda.shared.array(0, np.float32)
    t = cuda.threadIdx.x
    buf[t] = x[t]
    cuda.syncthreads()
    x[t] = buf[cuda.blockDim.x - 1 - t] + cuda.gridDim.x


@cuda.jit(device=True)
def _shared_helper(x, t):
    sm = cuda.shared.array(64, np.float32)
    sm[t] = x[t]
    cuda.syncthreads()
    return sm[63 - t] + cuda.shfl_xor_sync(0xFFFFFFFF, sm[t], 1)


@cuda.jit(device=True)
def _local_helper(x, t):
    loc = cuda.local.array(8, np.float64)
    for k in range(8):
        loc[k] = x[(t + k) % x.size]
    s = 0.0
    for k in range(8):
        s += loc[(t * k) % 8]
    return s


def with_device_functions(x, y):
    t = cuda.threadIdx.x
    y[t] = _shared_helper(x, t) + _local_helper(y, t)


def A(dt, ndim=1, layout="C"):
    return T.Array(dt, ndim, layout)


CASES = {
    "saxpy": (saxpy, [T.float32, A(T.float32), A(T.float32), A(T.float32)]),
    "block_sum": (block_sum, [A(T.float32), A(T.float32)]),
    "wave_sum": (wave_sum, [A(T.float32), A(T.float32), A(T.uint64)]),
    "trig64": (trig64, [A(T.float64), A(T.float64)]),
    "mixed": (mixed, [T.boolean, T.float16, T.int8, A(T.float64, 2, "A"), T.Tuple((T.int32, T.uint16, T.float64)),
                      T.uint16, A(T.int32, 3)]),
    "dyn_shared": (dyn_shared, [A(T.float32)]),
}


@pytest.fixture(scope="module")
def arts():
    out = {}
    for name, (fn, argtypes) in CASES.items():
        mod = compile_ir(fn, argtypes)
        for arch in ARCHS:
            out[name, arch] = AmdgpuTarget(arch=arch).compile(mod, CompileOptions())
    return out


def _dis(art, tmp_path):
    p = os.path.join(tmp_path, "k.hsaco")
    with open(p, "wb") as f:
        f.write(art.binary)
    dis = subprocess.run(["llvm-objdump-22", "-d", p], capture_output=True, text=True, check=True).stdout
    syms = subprocess.run(["llvm-readelf-22", "--syms", "--dyn-syms", p], capture_output=True, text=True,
                          check=True).stdout
    return [ln.split()[0] for ln in dis.splitlines() if ln.startswith("\t")], syms


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", list(CASES))
def test_args_match_flatten_params(arts, name, arch, tmp_path):
    art = arts[name, arch]
    flat = abi.flatten_params(CASES[name][1])
    explicit = [a for a in art.metadata[".args"] if not a[".value_kind"].startswith("hidden_")]
    assert [(a[".offset"], a[".size"]) for a in explicit] == [(p.offset, p.size) for p in flat]
    assert [p.offset for p in art.params] == [p.offset for p in flat]
    # the hidden area starts right after the explicit arguments, 8-byte aligned
    hidden = [a for a in art.metadata[".args"] if a[".value_kind"].startswith("hidden_")]
    if hidden:
        end = max(p.offset + p.size for p in flat)
        assert min(a[".offset"] for a in hidden) == (end + 7) // 8 * 8
    _, syms = _dis(art, tmp_path)
    assert not re.search(r"\sUND[ \t]+\S", syms)
    assert art.resources["scratch_bytes"] == 0


@pytest.mark.parametrize("arch", ARCHS)
def test_block_sum_isa(arts, arch, tmp_path):
    art = arts["block_sum", arch]
    ops, _ = _dis(art, tmp_path)
    assert ops.count("s_barrier") + ops.count("s_barrier_signal") >= 2
    assert any(o.startswith(("ds_read", "ds_load")) for o in ops)
    assert "global_atomic_add_f32" in ops
    assert art.static_shared_bytes == 1024 and art.resources["lds_bytes"] == 1024


@pytest.mark.parametrize("arch", ARCHS)
def test_wave_sum_isa(arts, arch, tmp_path):
    art = arts["wave_sum", arch]
    ops, _ = _dis(art, tmp_path)
    assert "ds_bpermute_b32" in ops or any(o.startswith("v_permlane") or "dpp" in o for o in ops)
    # 0xFFFFFFFF means the whole wave, also on wave64: no masking of the ballot left
    assert "4294967295" not in art.llvm_ir


@pytest.mark.parametrize("arch", ARCHS)
def test_f64_transcendentals_resolve_via_ocml(arts, arch, tmp_path):
    art = arts["trig64", arch]
    assert art.device_libs == ["ocml"]
    ops, syms = _dis(art, tmp_path)
    assert "__ocml" not in syms and "v_fma_f64" in ops
    assert not re.search(r"^declare .*@(sin|exp|atan2|lgamma)\b", art.llvm_ir, re.M)


@pytest.mark.parametrize("arch", ARCHS)
def test_dynamic_shared_and_grid_dims(arts, arch):
    art = arts["dyn_shared", arch]
    kinds = {a[".value_kind"]: a[".offset"] for a in art.metadata[".args"]}
    # explicit args end at 24; block_count_x (gridDim.x) at +0, group_size_x (blockDim.x) at +12
    assert kinds["hidden_block_count_x"] == 24 and kinds["hidden_group_size_x"] == 36
    assert art.dynamic_shared and art.static_shared_bytes == 0


def test_resources_and_read_metadata_agree(arts):
    art = arts["trig64", "gfx942"]
    md = codeobject.kernel_metadata(codeobject.read_metadata(art.binary), "trig64")
    r = archs.resources(md, "gfx942", 256)
    assert r["vgprs"] == md[".vgpr_count"] == art.resources["vgprs"]
    assert r["waves_per_simd"] == 8  # 30-ish VGPRs of 512: hardware cap


@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_device_functions_with_shared_and_local_memory(arch, opt, tmp_path):
    # at O0 the helpers stay real calls: LDS used outside the kernel, a call stack
    mod = compile_ir(with_device_functions, [A(T.float32), A(T.float32)])
    art = AmdgpuTarget(arch=arch).compile(mod, CompileOptions(opt=opt))
    _, syms = _dis(art, tmp_path)
    assert not re.search(r"\sUND[ \t]+\S", syms)
    assert art.static_shared_bytes == 256 and art.uses_barrier
    if opt == 3:
        assert art.resources["scratch_bytes"] == 0 and not art.resources["dynamic_stack"]
