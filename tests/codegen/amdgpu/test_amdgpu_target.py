"""AmdgpuTarget end to end: typed IR -> lower.py -> AMDGPU code object.

Kernels are built directly as typed IR (frontend-independent), compiled for
several archs, and the code objects are checked with llvm-readelf-22 /
llvm-objdump-22 and against ``codegen.abi.flatten_params``.
"""

from __future__ import annotations

import os
import pickle
import re
import subprocess
import time

import numpy as np
import pytest

from pykern.codegen import abi_map as abi
from pykern.codegen.amdgpu import codeobject
from pykern.codegen.amdgpu.target import AmdgpuTarget
from pykern.codegen.target_interface import CompileOptions
from pykern.core.errors import CompileError
from pykern.frontend import ir
from pykern.frontend import types as T

ARCHS = ["gfx90a", "gfx942", "gfx1100", "gfx1201"]
I64, I32, F32, F64 = T.int64, T.int32, T.float32, T.float64
A1 = T.Array(F32, 1, "C")


# ---------------------------------------------------------------- IR helpers
def sreg(name, axis=0):
    return ir.Intrinsic(name, [], I32, {"axis": axis})


def c(v, t=I64):
    return ir.Const(v, t)


def var(n, t):
    return ir.Var(n, t)


def global_id():
    return ir.BinOp("+", ir.Cast(ir.BinOp("*", sreg("block_idx"), sreg("block_dim"), I32), I64),
                    ir.Cast(sreg("thread_idx"), I64), I64)


def kernel(name, params, body, extra_locals=None):
    locals_ = {p: t for p, t in params}
    locals_.update(extra_locals or {})
    fn = ir.Function(name, [ir.Param(p, t) for p, t in params], T.void, body, locals_, True, pyname=name)
    return ir.Module(fn)


def saxpy():
    i = var("i", I64)
    body = [
        ir.Assign("i", global_id()),
        ir.If(ir.Compare("<", i, ir.ArrayAttr(var("x", A1), "shape", 0)), [
            ir.Store(var("out", A1), [i], ir.BinOp(
                "+", ir.BinOp("*", var("a", F32), ir.Load(var("x", A1), [i], F32), F32),
                ir.Load(var("y", A1), [i], F32), F32)),
        ], []),
    ]
    return kernel("saxpy", [("a", F32), ("x", A1), ("y", A1), ("out", A1)], body, {"i": I64})


MIXED_PARAMS = [("flag", T.boolean), ("h", T.float16), ("k", T.int8), ("m", T.Array(F64, 2, "A")),
                ("t", T.Tuple((I32, T.uint16, F64))), ("s", T.uint16), ("z", T.Array(T.int32, 3, "C"))]


def mixed():
    """Every kind of parameter: bool, half, int8, 2-D strided, tuple, 3-D."""
    m = var("m", T.Array(F64, 2, "A"))
    t = var("t", T.Tuple((I32, T.uint16, F64)))
    body = [
        ir.If(var("flag", T.boolean), [
            ir.Store(m, [c(0), c(1)], ir.BinOp(
                "+", ir.Cast(var("h", T.float16), F64), ir.TupleGet(t, 2, F64), F64)),
            ir.Store(var("z", T.Array(T.int32, 3, "C")), [c(0), c(1), c(2)],
                     ir.Cast(ir.BinOp("+", ir.Cast(var("k", T.int8), I32), ir.TupleGet(t, 0, I32), I32), T.int32)),
        ], []),
    ]
    return kernel("mixed", MIXED_PARAMS, body)


def shared_kernel():
    """Static + dynamic shared memory, barriers incl. syncthreads_count, fences, local and const arrays."""
    SH = T.Array(F32, 1, "C", space="shared")
    LO = T.Array(F32, 1, "C", space="local")
    CO = T.Array(F32, 1, "C", space="const", readonly=True)
    tid = ir.Cast(sreg("thread_idx"), I64)
    data = np.arange(8, dtype=np.float32)
    body = [
        ir.Assign("sm", ir.AllocArray("tile", "shared", (256,), SH)),
        ir.Assign("dyn", ir.AllocArray("dyn", "shared", (0,), SH)),
        ir.Assign("loc", ir.AllocArray("scratch", "local", (4,), LO)),
        ir.Assign("tab", ir.ConstArray("tab", data.tobytes(), (8,), CO)),
        ir.Store(var("sm", SH), [tid], ir.Load(var("x", A1), [tid], F32)),
        ir.Store(var("dyn", SH), [tid], ir.Load(var("tab", CO), [ir.BinOp("&", tid, c(7), I64)], F32)),
        ir.Store(var("loc", LO), [c(0)], c(1.0, F32)),
        ir.ExprStmt(ir.Intrinsic("syncthreads", [], T.void)),
        ir.ExprStmt(ir.Intrinsic("threadfence_block", [], T.void)),
        ir.ExprStmt(ir.Intrinsic("threadfence", [], T.void)),
        ir.ExprStmt(ir.Intrinsic("threadfence_system", [], T.void)),
        ir.Assign("n", ir.Intrinsic("syncthreads_count", [ir.Compare(">", var("a", F32), c(0.0, F32))], I32)),
        ir.Store(var("x", A1), [tid], ir.BinOp(
            "+", ir.BinOp("+", ir.Load(var("sm", SH), [ir.BinOp("^", tid, c(1), I64)], F32),
                          ir.Load(var("dyn", SH), [tid], F32), F32),
            ir.BinOp("+", ir.Cast(var("n", I32), F32), ir.Load(var("loc", LO), [c(0)], F32), F32), F32)),
    ]
    return kernel("shared_k", [("a", F32), ("x", A1)], body, {"sm": SH, "dyn": SH, "loc": LO, "tab": CO, "n": I32})


def wave_kernel():
    """Shuffles of 32- and 64-bit values, ballot/all/any/eq, activemask, lane id, warpsize."""
    A64 = T.Array(F64, 1, "C")
    AU = T.Array(T.uint64, 1, "C")
    tid = ir.Cast(sreg("thread_idx"), I64)
    full = c(0xFFFFFFFFFFFFFFFF, T.uint64)
    pred = ir.Compare(">", ir.Load(var("x", A1), [tid], F32), c(0.0, F32))
    lane = sreg("laneid")
    xv = ir.Load(var("x", A1), [tid], F32)
    dv = ir.Load(var("d", A64), [tid], F64)
    body = [
        ir.Store(var("x", A1), [tid], ir.Intrinsic("shfl_xor_sync", [full, xv, c(1, I32)], F32)),
        ir.Store(var("d", A64), [tid], ir.Intrinsic("shfl_down_sync", [full, dv, c(2, I32)], F64)),
        ir.Store(var("d", A64), [tid], ir.Intrinsic("shfl_up_sync", [full, dv, c(1, I32)], F64)),
        ir.Store(var("d", A64), [tid], ir.Intrinsic("shfl_sync", [full, dv, lane], F64)),
        ir.Store(var("u", AU), [tid], ir.Intrinsic("ballot_sync", [full, pred], T.uint64)),
        ir.Store(var("u", AU), [c(1)], ir.Cast(ir.Intrinsic("all_sync", [full, pred], T.boolean), T.uint64)),
        ir.Store(var("u", AU), [c(2)], ir.Cast(ir.Intrinsic("any_sync", [full, pred], T.boolean), T.uint64)),
        ir.Store(var("u", AU), [c(3)], ir.Cast(ir.Intrinsic("eq_sync", [full, pred], T.boolean), T.uint64)),
        ir.Store(var("u", AU), [c(4)], ir.Intrinsic("activemask", [], T.uint64)),
        ir.Store(var("u", AU), [c(5)], ir.Intrinsic("lanemask_lt", [], T.uint64)),
        ir.Store(var("u", AU), [c(6)], ir.Cast(ir.BinOp("+", lane, sreg("warpsize"), I32), T.uint64)),
        ir.ExprStmt(ir.Intrinsic("syncwarp", [full], T.void)),
    ]
    return kernel("wave_k", [("x", A1), ("d", A64), ("u", AU)], body)


def atomic_kernel():
    AI = T.Array(T.int32, 1, "C")
    A64 = T.Array(F64, 1, "C")
    body = [
        ir.ExprStmt(ir.Atomic("add", var("x", A1), [c(0)], [c(1.5, F32)], F32)),
        ir.ExprStmt(ir.Atomic("add", var("d", A64), [c(0)], [c(2.5, F64)], F64)),
        ir.ExprStmt(ir.Atomic("max", var("n", AI), [c(0)], [c(7, I32)], I32)),
        ir.ExprStmt(ir.Atomic("cas", var("n", AI), [c(1)], [c(0, I32), c(3, I32)], I32)),
        ir.ExprStmt(ir.Atomic("inc", var("n", AI), [c(2)], [c(9, I32)], I32)),
    ]
    return kernel("atomic_k", [("x", A1), ("d", A64), ("n", AI)], body)


def math_kernel():
    A64 = T.Array(F64, 1, "C")
    A16 = T.Array(T.float16, 1, "C")
    tid = ir.Cast(sreg("thread_idx"), I64)
    x = ir.Load(var("x", A1), [tid], F32)
    d = ir.Load(var("d", A64), [tid], F64)
    h = ir.Load(var("h", A16), [tid], T.float16)
    body = [
        ir.Store(var("d", A64), [tid], ir.Intrinsic("sin", [d], F64)),
        ir.Store(var("d", A64), [c(1)], ir.Intrinsic("pow", [d, c(0.5, F64)], F64)),
        ir.Store(var("d", A64), [c(2)], ir.Intrinsic("gamma", [d], F64)),
        ir.Store(var("x", A1), [tid], ir.Intrinsic("exp", [x], F32)),
        ir.Store(var("x", A1), [c(1)], ir.Intrinsic("sqrt", [x], F32)),
        ir.Store(var("x", A1), [c(2)], ir.Intrinsic("fma", [x, x, x], F32)),
        ir.Store(var("h", A16), [tid], ir.Intrinsic("cos", [h], T.float16)),
    ]
    return kernel("math_k", [("x", A1), ("d", A64), ("h", A16)], body)


KERNELS = {"saxpy": saxpy, "mixed": mixed, "shared_k": shared_kernel, "wave_k": wave_kernel,
           "atomic_k": atomic_kernel, "math_k": math_kernel}


@pytest.fixture(scope="module")
def arts():
    out = {}
    for a in ARCHS:
        t = AmdgpuTarget(arch=a)
        for name, make in KERNELS.items():
            out[a, name] = t.compile(make(), CompileOptions())
    return out


def _tool(tmp_path, *args, data):
    path = os.path.join(tmp_path, "co.hsaco")
    with open(path, "wb") as f:
        f.write(data)
    return subprocess.run([*args, path], capture_output=True, text=True, check=True).stdout


def _ops(tmp_path, art):
    dis = _tool(tmp_path, "llvm-objdump-22", "-d", data=art.binary)
    return [ln.split()[0] for ln in dis.splitlines() if ln.startswith("\t")]


def _argtypes(mod):
    return [p.type for p in mod.kernel.params]


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("kname", list(KERNELS))
def test_metadata_args_equal_flat_params(arts, arch, kname, tmp_path):
    art = arts[arch, kname]
    flat = abi.flatten_params(_argtypes(KERNELS[kname]()))
    explicit = [a for a in art.metadata[".args"] if not a[".value_kind"].startswith("hidden_")]
    assert [(a[".offset"], a[".size"]) for a in explicit] == [(p.offset, p.size) for p in flat]
    assert [(p.offset, p.size, p.role) for p in art.params] == [(p.offset, p.size, p.role) for p in flat]
    assert art.kernarg_size == abi.kernarg_size(flat)
    data_args = [a for a, p in zip(explicit, flat) if p.role == "data"]
    assert all(a[".value_kind"] == "global_buffer" and a[".address_space"] == "global" for a in data_args)
    # independent check of the same numbers with llvm-readelf
    notes = _tool(tmp_path, "llvm-readelf-22", "--notes", data=art.binary)
    assert f".symbol:         {kname}.kd" in notes
    syms = _tool(tmp_path, "llvm-readelf-22", "--dyn-syms", "--syms", data=art.binary)
    assert not re.search(r"\sUND[ \t]+\S", syms), syms
    assert art.target == "amdgpu" and art.arch == arch and art.name == kname
    assert art.wave_size == (64 if arch.startswith("gfx9") else 32)
    assert art.binary[:4] == b"\x7fELF" and codeobject.elf_header(art.binary)["e_type"] == 3


def test_artifact_pickles(arts):
    art = arts["gfx942", "saxpy"]
    back = pickle.loads(pickle.dumps(art))
    assert back.binary == art.binary and back.params == art.params and back.metadata == art.metadata
    assert back.resources == art.resources


@pytest.mark.parametrize("arch", ARCHS)
def test_saxpy_code(arts, arch, tmp_path):
    art = arts[arch, "saxpy"]
    ops = _ops(tmp_path, art)
    assert any(o.startswith("global_load") for o in ops) and any(o.startswith("global_store") for o in ops)
    r = art.resources
    assert r["scratch_bytes"] == 0 and r["lds_bytes"] == 0 and r["vgpr_spills"] == 0
    assert r["waves_per_simd"] >= 8
    # blockDim comes from hidden_group_size_x (implicit area +12)
    kinds = {a[".value_kind"]: a[".offset"] for a in art.metadata[".args"]}
    assert kinds["hidden_group_size_x"] == 80 + 12
    assert "llvm.amdgcn.implicitarg.ptr" in art.llvm_ir
    assert '"uniform-work-group-size"="true"' in art.llvm_ir


@pytest.mark.parametrize("arch", ARCHS)
def test_shared_barrier_fences(arts, arch, tmp_path):
    art = arts[arch, "shared_k"]
    ops = _ops(tmp_path, art)
    assert "s_barrier" in ops or "s_barrier_signal" in ops
    assert any(o.startswith(("ds_write", "ds_store")) for o in ops)
    assert any(o.startswith(("ds_read", "ds_load")) for o in ops)
    # syncthreads_count: ockl's workgroup reduction, linked in and fully resolved
    assert art.device_libs == ["ockl"]
    # static LDS: 256 floats of ours (+ ockl's reduction scratch)
    assert art.static_shared_bytes >= 1024 and art.metadata[".group_segment_fixed_size"] == art.static_shared_bytes
    assert art.dynamic_shared
    kinds = {a[".value_kind"] for a in art.metadata[".args"]}
    assert "hidden_dynamic_lds_size" in kinds
    assert art.uses_barrier
    ir_text = art.llvm_ir
    assert 'fence syncscope("agent") seq_cst' in ir_text and "fence seq_cst" in ir_text
    assert "addrspace(4) constant" in ir_text  # const array lives in constant memory


@pytest.mark.parametrize("arch", ARCHS)
def test_wave_ops(arts, arch, tmp_path):
    art = arts[arch, "wave_k"]
    ops = _ops(tmp_path, art)
    assert "ds_bpermute_b32" in ops
    assert art.uses_wave_ops
    assert ops.count("ds_bpermute_b32") >= 7  # 1 for f32 + 2 per f64 shuffle x 3
    if art.wave_size == 32:
        assert "v_mbcnt_hi_u32_b32" not in ops  # one mbcnt is the whole lane id on wave32
    else:
        assert "v_mbcnt_hi_u32_b32" in ops


@pytest.mark.parametrize("arch", ARCHS)
def test_atomics(arts, arch, tmp_path):
    art = arts[arch, "atomic_k"]
    ops = _ops(tmp_path, art)
    assert "global_atomic_add_f32" in ops
    assert any(o.startswith(("global_atomic_smax", "global_atomic_max_i32")) for o in ops)
    assert any(o.startswith("global_atomic_cmpswap") for o in ops)
    assert any(o.startswith("global_atomic_inc") for o in ops)
    if arch in ("gfx90a", "gfx942"):
        assert "global_atomic_add_f64" in ops
    assert 'syncscope("agent")' in art.llvm_ir


@pytest.mark.parametrize("arch", ARCHS)
def test_math_via_ocml_and_intrinsics(arts, arch, tmp_path):
    art = arts[arch, "math_k"]
    assert art.device_libs == ["ocml"]
    assert "declare" not in "\n".join(l for l in art.llvm_ir.splitlines() if "__ocml" in l)
    assert "__ocml" not in _tool(tmp_path, "llvm-readelf-22", "--syms", data=art.binary)
    ops = _ops(tmp_path, art)
    assert "v_fma_f64" in ops  # sin/pow/gamma polynomials
    assert any(o.startswith("v_sqrt_f32") for o in ops) or any(o.startswith("v_rsq") for o in ops)


def test_cov4_uses_dispatch_packet(tmp_path):
    t = AmdgpuTarget(arch="gfx90a", code_object_version=4)
    art = t.compile(saxpy(), CompileOptions())
    assert "llvm.amdgcn.dispatch.ptr" in art.llvm_ir
    assert codeobject.elf_header(art.binary)["abiversion"] == 2
    assert not any(a[".value_kind"] == "hidden_block_count_x" for a in art.metadata[".args"])
    assert art.code_object_version == 4


def test_options_override_and_launch_bounds():
    t = AmdgpuTarget(arch="gfx942")
    art = t.compile(saxpy(), CompileOptions(arch="gfx1100", max_block_size=256))
    assert art.arch == "gfx1100" and art.wave_size == 32 and art.max_block_size == 256
    art64 = t.compile(saxpy(), CompileOptions(arch="gfx1100", wave_size=64))
    assert art64.wave_size == 64
    with pytest.raises(CompileError, match="wave_size=32"):
        t.compile(saxpy(), CompileOptions(wave_size=32))
    with pytest.raises(CompileError, match="code_object_version"):
        AmdgpuTarget(arch="gfx942", code_object_version=3)
    with pytest.raises(CompileError, match="max_block_size"):
        t.compile(saxpy(), CompileOptions(max_block_size=2048))
    # a register cap that forces spills: resources must show them (RDNA: no AGPRs to hide in)
    capped = t.compile(math_kernel(), CompileOptions(arch="gfx1100", max_registers=24))
    assert '"amdgpu-num-vgpr"="24"' in capped.llvm_ir and capped.metadata[".vgpr_count"] <= 24
    assert capped.resources["vgpr_spills"] > 0 and capped.resources["scratch_bytes"] > 0


def test_compile_with_resolved_options():
    # what pykern.dispatch.compiler does: resolve first, then compile with the result
    for arch, cov in [("gfx942", 5), ("gfx90a:xnack-:sramecc+", 4), ("gfx1100", 6)]:
        t = AmdgpuTarget(arch=arch, code_object_version=cov)
        opts = t.resolve_options(CompileOptions())
        assert opts.arch == t.arch and opts.code_object_version == cov
        art = t.compile(saxpy(), opts)
        assert art.arch == t.arch and art.code_object_version == cov
        assert art.wave_size == opts.wave_size


def test_saxpy_compile_time():
    t0 = time.perf_counter()
    AmdgpuTarget(arch="gfx942").compile(saxpy(), CompileOptions())
    assert time.perf_counter() - t0 < 5.0


MATH_UNARY = ("sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp exp2 expm1 log log2 log10 "
              "log1p sqrt cbrt erf erfc gamma lgamma floor ceil trunc rint fabs round abs").split()
MATH_BINARY = "atan2 pow hypot copysign fmod".split()


def all_math_kernel(ft):
    Ar = T.Array(ft, 1, "C")
    body = []
    for k, n in enumerate(MATH_UNARY + MATH_BINARY + ["fma", "isnan", "isinf", "isfinite"]):
        x = ir.Load(var("x", Ar), [c(k)], ft)
        args = [x] if n in MATH_UNARY or n.startswith("is") else [x, x] if n in MATH_BINARY else [x, x, x]
        val = ir.Intrinsic(n, args, T.boolean if n.startswith("is") else ft)
        if n.startswith("is"):
            val = ir.Cast(val, ft)
        body.append(ir.Store(var("x", Ar), [c(k)], val))
    return kernel("all_math", [("x", Ar)], body)


@pytest.mark.parametrize("arch", ["gfx942", "gfx1201"])
@pytest.mark.parametrize("ft", [T.float16, T.float32, T.float64])
def test_every_math_function_links(arch, ft, tmp_path):
    art = AmdgpuTarget(arch=arch).compile(all_math_kernel(ft), CompileOptions())
    assert art.device_libs == ["ocml"]
    syms = _tool(tmp_path, "llvm-readelf-22", "--syms", "--dyn-syms", data=art.binary)
    assert not re.search(r"\sUND[ \t]+\S", syms) and "__ocml" not in syms
    assert art.resources["scratch_bytes"] == 0
    # bit-exact operations stay LLVM intrinsics, never library calls
    assert "__ocml_floor" not in art.llvm_ir and "__ocml_sqrt" not in art.llvm_ir


@pytest.mark.parametrize("arch", ["gfx90a", "gfx1100"])
def test_atomics_every_dtype_and_space(arch):
    t = AmdgpuTarget(arch=arch)
    for dt in (T.int32, T.uint32, T.int64, T.uint64, T.float16, T.float32, T.float64):
        G = T.Array(dt, 1, "C")
        S = T.Array(dt, 1, "C", space="shared")
        v = var("v", dt)
        ops = ["add", "sub", "max", "min", "exch"] + ([] if isinstance(dt, T.Float) else
                                                      ["and", "or", "xor", "inc", "dec"])
        body = [ir.Assign("sm", ir.AllocArray("sm", "shared", (16,), S))]
        for k, op in enumerate(ops):
            body.append(ir.ExprStmt(ir.Atomic(op, var("a", G), [c(k)], [v], dt)))
            body.append(ir.ExprStmt(ir.Atomic(op, var("sm", S), [c(k)], [v], dt)))
        if not isinstance(dt, T.Float):
            body.append(ir.ExprStmt(ir.Atomic("cas", var("a", G), [c(15)], [v, v], dt)))
        art = t.compile(kernel("atomics", [("a", G), ("v", dt)], body, {"sm": S}), CompileOptions())
        assert 'syncscope("agent")' in art.llvm_ir and 'syncscope("workgroup")' in art.llvm_ir, dt


@pytest.mark.parametrize("arch", ["gfx942", "gfx1201"])
def test_shuffles_every_dtype(arch, tmp_path):
    t = AmdgpuTarget(arch=arch)
    full = c(0xFFFFFFFFFFFFFFFF, T.uint64)
    for vt in (T.boolean, T.int8, T.int16, T.int32, T.int64, T.uint64, T.float16, T.float32, T.float64):
        Ar = T.Array(vt, 1, "C")
        tid = ir.Cast(sreg("thread_idx"), I64)
        # per-lane values (a uniform value would let LLVM fold the shuffle away)
        body = [ir.Store(var("x", Ar), [c(k)], ir.Intrinsic(n, [full, ir.Load(var("x", Ar), [tid], vt), c(3, I32)], vt))
                for k, n in enumerate(["shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"])]
        art = t.compile(kernel("shfl", [("x", Ar)], body), CompileOptions())
        ops = _ops(tmp_path, art)
        n64 = 2 if vt.bits == 64 else 1
        # a shuffle from a uniform lane may become v_readlane (LLVM's own rewrite)
        assert ops.count("ds_bpermute_b32") + ops.count("v_readlane_b32") >= 4 * n64, vt


def test_generic_target_cov6():
    art = AmdgpuTarget(arch="gfx11-generic", code_object_version=6).compile(saxpy(), CompileOptions())
    assert art.arch == "gfx11-generic" and art.wave_size == 32
    assert codeobject.read_metadata(art.binary)["amdhsa.target"] == "amdgcn-amd-amdhsa--gfx11-generic"
    assert codeobject.elf_header(art.binary)["abiversion"] == 4


def test_debug_bounds_errors_go_to_exported_record(tmp_path):
    import struct

    from pykern.codegen.amdgpu import target as amd

    i = var("i", I64)
    body = [ir.Assign("i", global_id()),
            ir.Store(var("y", A1), [i], ir.Load(var("x", A1), [ir.BinOp("+", i, c(1), I64)], F32))]
    mod = kernel("oob", [("x", A1), ("y", A1)], body, {"i": I64})
    art = AmdgpuTarget(arch="gfx942").compile(mod, CompileOptions(debug=True))
    assert art.error_symbol == "__pykern_error" and len(art.error_messages) == 2
    assert any("'x'" in m for m in art.error_messages) and any("'y'" in m for m in art.error_messages)
    assert struct.calcsize(amd.ERROR_RECORD) == amd.ERROR_RECORD_BYTES == 80
    syms = _tool(tmp_path, "llvm-readelf-22", "--dyn-syms", data=art.binary)
    assert re.search(r"\s80 OBJECT\s+GLOBAL\s+PROTECTED\s+\d+ __pykern_error$", syms, re.M), syms
    assert 'cmpxchg ptr addrspace(1) @__pykern_error, i32 0, i32 1 syncscope("agent")' in art.llvm_ir
    raw = struct.pack(amd.ERROR_RECORD, 1, 1, 11, 10, 0, 3, 0, 0, 2, 0, 0)
    text = amd.format_error_record(raw, art.error_messages)
    assert text.startswith(art.error_messages[1]) and "index 11" in text and "extent 10" in text
    assert "thread (3, 0, 0) of block (2, 0, 0)" in text
    assert amd.format_error_record(bytes(80), art.error_messages) is None
    plain = AmdgpuTarget(arch="gfx942").compile(mod, CompileOptions())
    assert plain.error_symbol is None and "__pykern_error" not in plain.llvm_ir


def test_concurrent_compiles_from_threads():
    from concurrent.futures import ThreadPoolExecutor

    def one(arch):
        return AmdgpuTarget(arch=arch).compile(atomic_kernel(), CompileOptions()).binary

    with ThreadPoolExecutor(4) as ex:
        outs = list(ex.map(one, ["gfx942", "gfx1100", "gfx942", "gfx1100"]))
    assert outs[0] == outs[2] and outs[1] == outs[3] and outs[0] != outs[1]


@pytest.mark.parametrize("arch", ["gfx1100", "gfx1201"])
def test_rdna_in_wave64_mode(arch, tmp_path):
    art = AmdgpuTarget(arch=arch, wave64=True).compile(wave_kernel(), CompileOptions())
    assert art.wave_size == 64 and art.metadata[".wavefront_size"] == 64
    ops = _ops(tmp_path, art)
    assert "v_mbcnt_hi_u32_b32" in ops and "ds_bpermute_b32" in ops
    sh = AmdgpuTarget(arch=arch).compile(shared_kernel(), CompileOptions(wave_size=64))
    assert sh.wave_size == 64 and sh.device_libs == ["ockl"]
