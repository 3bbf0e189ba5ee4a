"""Matrix fragments on AMD matrix cores: ``v_mfma_*`` (CDNA: gfx90a, gfx942, gfx950; wave64) and
``v_wmma_*`` (RDNA3 gfx11, RDNA4 gfx12; wave32).

A fragment is a vector of the lane's elements in the instruction's register layout, in a private
alloca that SROA turns into registers (no scratch: the tests check it). Lane ``L`` holds, for
element ``e``, the matrix entry at ``(row, col)`` given by the layouts below (from AMD's matrix
instruction calculator; see the shared notes ``matrix-cores.md`` section 3), with
``r = L % R`` and ``g = L / R``. Loads and stores address memory per (lane, element); ``mma``
bit-casts the vectors to the intrinsic's operand types and calls it (MFMA immediates 0, 0, 0).

RDNA4 (gfx12) adds f16 -> f16 (eight packed halves in the f32 result's layout, no op_sel) and
int8 -> int32 (eight bytes a lane, k contiguous); CDNA4 (gfx950) adds 16x16x32 f16/bf16 (eight
elements a lane, k = 8 * (L / 16) + e; bf16 operands as LLVM ``bfloat``). AMD's calculator has no
tables for these: they rest on LLVM's intrinsics (instruction selection checked) and third-party
kernels' layouts, not on execution. Any permutation of k that A and B share gives the same ``d``,
so only the rows of A, the columns of B and the C/D layout must be exact.

gfx942/gfx950 lost the 16x16x16 int8 MFMA: the 16x16x32 one runs there with A and B's elements
4..7 zero, the k the user's 16 do not reach.

Example::

    AmdgpuMatrix(arch)(fx, e, args)   # e: an ``frag_*`` Intrinsic
"""

from __future__ import annotations

from llvmlite import ir as L

from pykern.core import matrix_shapes
from pykern.core.errors import CompileError
from pykern.frontend import types as T
from pykern.codegen.lowering.bf16 import _BFloatType
from pykern.codegen.lowering.llvm_types import I1, I32, I64
from pykern.codegen.lowering.matrix_reference import element_ptr, memory_index, untyped

I16 = L.IntType(16)
I8 = L.IntType(8)

# A layout maps element e to ((row coefficients), (col coefficients)) of (r, g, 1), or None
# (a padding element, zero). B is A's mirror.


def _a_cdna16(e):
    return (1, 0, 0), (0, 4, e)


def _c_cdna16(e):
    return (0, 4, e), (1, 0, 0)


def _a_cdna32(e):
    return (1, 0, 0), (0, 4, e)


def _c_cdna32(e):
    return (0, 4, 8 * (e // 4) + e % 4), (1, 0, 0)


def _a_k4(e):
    return (1, 0, 0), (0, 1, 0)


def _c_f64(e):
    return (0, 1, 4 * e), (1, 0, 0)


def _a_i8_padded(e):
    return _a_cdna16(e) if e < 4 else None


def _a_rdna3(e):
    return (1, 0, 0), (0, 0, e)


def _c_rdna3(e):
    return (0, 1, 2 * e), (1, 0, 0)


def _c_rdna3_f16(e):  # op_sel 0: the low halves (even elements) hold rows e + g
    return ((0, 1, e), (1, 0, 0)) if e % 2 == 0 else None


def _a_rdna4(e):
    return (1, 0, 0), (0, 4, 8 * (e // 4) + e % 4)


def _a_rdna4_i8(e):  # 8 bytes a lane, k contiguous: lanes 16-31 hold k 8..15
    return (1, 0, 0), (0, 8, e)


def _a_cdna4(e):  # 16x16x32: as 16x16x16 with k per lane doubled
    return (1, 0, 0), (0, 8, e)


def _c_rdna4(e):
    return (0, 8, e), (1, 0, 0)


def _mirror(layout):
    def b(e):
        rc = layout(e)
        return None if rc is None else (rc[1], rc[0])
    return b


_ELEM = {"float16": L.HalfType(), "bfloat16": I16, "float32": L.FloatType(), "float64": L.DoubleType(),
         "int8": I8, "int32": I32}


def _v(n, t):
    return L.VectorType(t, n)


class _Config:
    """One instruction: operand layouts and counts, the intrinsic and its operand types."""

    def __init__(self, name, a_layout, a_n, c_layout, c_n, ab_type, c_type, radix, kind="mfma"):
        self.name, self.a_layout, self.a_n, self.c_layout, self.c_n = name, a_layout, a_n, c_layout, c_n
        self.ab_type, self.c_type, self.radix, self.kind = ab_type, c_type, radix, kind


def _configs(arch: str) -> dict:
    """(m, n, k, input, accumulator) -> _Config for ``arch``."""
    fam = matrix_shapes.family(arch)
    h, bf, f, d = L.HalfType(), I16, L.FloatType(), L.DoubleType()
    if fam == "cdna":
        gfx90a = arch == "gfx90a"
        out = {
            (16, 16, 16, "float16", "float32"): _Config("llvm.amdgcn.mfma.f32.16x16x16f16", _a_cdna16, 4, _c_cdna16, 4,
                                                        _v(4, h), _v(4, f), 16),
            (16, 16, 16, "bfloat16", "float32"): _Config("llvm.amdgcn.mfma.f32.16x16x16bf16.1k", _a_cdna16, 4, _c_cdna16,
                                                         4, _v(4, bf), _v(4, f), 16),
            (32, 32, 8, "float16", "float32"): _Config("llvm.amdgcn.mfma.f32.32x32x8f16", _a_cdna32, 4, _c_cdna32, 16,
                                                       _v(4, h), _v(16, f), 32),
            (32, 32, 8, "bfloat16", "float32"): _Config("llvm.amdgcn.mfma.f32.32x32x8bf16.1k", _a_cdna32, 4, _c_cdna32,
                                                        16, _v(4, bf), _v(16, f), 32),
            (16, 16, 4, "float32", "float32"): _Config("llvm.amdgcn.mfma.f32.16x16x4f32", _a_k4, 1, _c_cdna16, 4, f,
                                                       _v(4, f), 16),
            (16, 16, 4, "float64", "float64"): _Config("llvm.amdgcn.mfma.f64.16x16x4f64", _a_k4, 1, _c_f64, 4, d,
                                                       _v(4, d), 16),
        }
        if arch == "gfx950":
            out[16, 16, 32, "float16", "float32"] = _Config("llvm.amdgcn.mfma.f32.16x16x32.f16", _a_cdna4, 8,
                                                             _c_cdna16, 4, _v(8, h), _v(4, f), 16)
            # the one MFMA whose bf16 operands are LLVM bfloat, not i16 bits
            out[16, 16, 32, "bfloat16", "float32"] = _Config("llvm.amdgcn.mfma.f32.16x16x32.bf16", _a_cdna4, 8,
                                                              _c_cdna16, 4, _v(8, _BFloatType()), _v(4, f), 16)
        if gfx90a:
            out[16, 16, 16, "int8", "int32"] = _Config("llvm.amdgcn.mfma.i32.16x16x16i8", _a_cdna16, 4, _c_cdna16, 4,
                                                        I32, _v(4, I32), 16)
        else:
            out[16, 16, 16, "int8", "int32"] = _Config("llvm.amdgcn.mfma.i32.16x16x32.i8", _a_i8_padded, 8, _c_cdna16,
                                                        4, I64, _v(4, I32), 16)
        return out
    if fam == "rdna3":
        return {
            (16, 16, 16, "float16", "float32"): _Config("llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16", _a_rdna3, 16,
                                                        _c_rdna3, 8, _v(16, h), _v(8, f), 16, "wmma"),
            (16, 16, 16, "bfloat16", "float32"): _Config("llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v16i16", _a_rdna3, 16,
                                                         _c_rdna3, 8, _v(16, bf), _v(8, f), 16, "wmma"),
            (16, 16, 16, "float16", "float16"): _Config("llvm.amdgcn.wmma.f16.16x16x16.f16.v16f16.v16f16", _a_rdna3, 16,
                                                        _c_rdna3_f16, 16, _v(16, h), _v(16, h), 16, "wmma_opsel"),
            (16, 16, 16, "int8", "int32"): _Config("llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32.v4i32", _a_rdna3, 16,
                                                   _c_rdna3, 8, _v(4, I32), _v(8, I32), 16, "wmma_iu8"),
        }
    if fam == "rdna4":
        return {
            (16, 16, 16, "float16", "float32"): _Config("llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v8f16", _a_rdna4, 8,
                                                        _c_rdna4, 8, _v(8, h), _v(8, f), 16, "wmma"),
            (16, 16, 16, "bfloat16", "float32"): _Config("llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v8i16", _a_rdna4, 8,
                                                         _c_rdna4, 8, _v(8, bf), _v(8, f), 16, "wmma"),
            # RDNA4 packs a 16-bit result: eight halves a lane in the f32 result's layout (no op_sel)
            (16, 16, 16, "float16", "float16"): _Config("llvm.amdgcn.wmma.f16.16x16x16.f16.v8f16.v8f16", _a_rdna4, 8,
                                                        _c_rdna4, 8, _v(8, h), _v(8, h), 16, "wmma_opsel"),
            (16, 16, 16, "int8", "int32"): _Config("llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32.v2i32", _a_rdna4_i8, 8,
                                                   _c_rdna4, 8, _v(2, I32), _v(8, I32), 16, "wmma_iu8"),
        }
    return {}


class AmdgpuMatrix:
    """``Target.matrix_op`` of the amdgpu target for one arch (see the module docstring)."""

    def __init__(self, arch: str, wave_size: int):
        self.arch, self.wave_size = arch, wave_size
        self.configs = _configs(arch)
        fam = matrix_shapes.family(arch)
        self.wave_needed = 64 if fam == "cdna" else 32

    def __call__(self, fx, e, args):
        return getattr(self, e.name)(fx, e, args)

    # -- which instruction, which operand layout
    def _offer(self) -> str:
        if not self.configs:
            return f"{self.arch} has no matrix-core instructions (MFMA: gfx90a, gfx942, gfx950; WMMA: gfx11, gfx12)"
        return f"{self.arch} offers {matrix_shapes.describe(self.configs)}"

    def _check_wave(self, e):
        if self.configs and self.wave_size != self.wave_needed:
            raise CompileError(f"matrix fragments on {self.arch} need {self.wave_needed}-lane waves, "
                               f"the kernel is compiled for {self.wave_size}", e.loc)

    def config_of(self, e, cfg):
        self._check_wave(e)
        c = self.configs.get(cfg)
        if c is None:
            raise CompileError(f"{self.arch} has no matrix instruction for {matrix_shapes.describe([cfg])}", e.loc,
                               self._offer())
        return c

    def operand(self, e, ft: T.Fragment):
        """``(layout, element count, element LLVM type)`` of fragment type ``ft``."""
        self._check_wave(e)
        key = str(ft.dtype)
        for (m, n, k, a, c), cf in self.configs.items():
            if (m, n, k) != (ft.m, ft.n, ft.k):
                continue
            if ft.use == "accumulator" and c == key:
                return cf.c_layout, cf.c_n, _ELEM[key], cf.radix
            if ft.use != "accumulator" and a == key:
                lay = cf.a_layout if ft.use == "matrix_a" else _mirror(cf.a_layout)
                return lay, cf.a_n, _ELEM[key], cf.radix
        raise CompileError(f"{self.arch} has no matrix instruction for a {ft.m}x{ft.n}x{ft.k} {ft.use} of {ft.dtype}",
                           e.loc, self._offer())

    # -- storage
    def _vec(self, e, ft):
        _, n, et, _ = self.operand(e, ft)
        return L.VectorType(et, n)

    def _load_vec(self, fx, e, ft, ptr):
        return fx.builder.load(ptr, typ=self._vec(e, ft))

    def frag_new(self, fx, e, args):
        vt = self._vec(e, e.type)
        ptr = fx.target.local_array(fx, "frag", vt, 1)
        fx.builder.store(L.Constant(vt, None), ptr)
        return untyped(fx, ptr, fx.types.value(e.type))

    def frag_fill(self, fx, e, args):
        frag, v = args[0], fx.cast(args[1], e.args[1].type, e.args[0].type.dtype)
        layout, n, et, _ = self.operand(e, e.args[0].type)
        b = fx.builder
        out = L.Constant(L.VectorType(et, n), None)
        for i in range(n):
            if layout(i) is not None:  # padding stays zero
                out = b.insert_element(out, v, L.Constant(I32, i))
        b.store(out, frag)

    def _addresses(self, fx, e, ft, at, arr, offset, ldm):
        """``[(element, pointer)]`` of this lane's fragment elements (padding left out). Every
        layout puts element ``e`` at (row, col) = (lane part) + (constant of ``e``), so the
        address is one lane-dependent base plus a constant per element: LLVM then sees
        neighbouring elements as neighbours and loads them as one vector (``ds_read_b64``)."""
        layout, n, _, radix = self.operand(e, ft)
        b = fx.builder
        lane = b.zext(fx.target.special_register(fx, "laneid", 0), I64)
        r = b.urem(lane, L.Constant(I64, radix))
        g = b.udiv(lane, L.Constant(I64, radix))

        def lane_part(cr, cg, _c0):
            return b.add(b.mul(r, L.Constant(I64, cr)), b.mul(g, L.Constant(I64, cg)))
        mem = e.attrs["layout"]
        out = []
        base = None
        for i in range(n):
            rc = layout(i)
            if rc is None:
                continue
            if base is None:  # the lane part is the same for every element
                # the offset in a GEP of its own: fragments of one array at constant offsets
                # (a0 at 0, a1 at 16 rows) share one lane address and the constants fold into
                # the instructions' offsets (an integer sum of the two folds into an ``or``
                # per fragment: one more register each)
                lane_at = memory_index(fx, lane_part(*rc[0]), lane_part(*rc[1]), L.Constant(I64, 0), ldm, mem)
                base = b.gep(element_ptr(fx, arr, at, lane_at), [offset], source_etype=fx.types.memory(at.dtype))
            delta = memory_index(fx, L.Constant(I64, rc[0][2]), L.Constant(I64, rc[1][2]), L.Constant(I64, 0), ldm, mem)
            out.append((i, b.gep(base, [delta], source_etype=fx.types.memory(at.dtype))))
        return out

    def frag_load(self, fx, e, args):
        frag, arr, offset, ldm = args
        ft, at = e.args[0].type, e.args[1].type
        _, n, et, _ = self.operand(e, ft)
        b = fx.builder
        vec = L.Constant(L.VectorType(et, n), None)
        for i, ptr in self._addresses(fx, e, ft, at, arr, offset, ldm):
            vec = b.insert_element(vec, b.load(ptr, typ=et), L.Constant(I32, i))
        b.store(vec, frag)

    def frag_store(self, fx, e, args):
        arr, frag, offset, ldm = args
        at, ft = e.args[0].type, e.args[1].type
        _, n, et, _ = self.operand(e, ft)
        b = fx.builder
        vec = b.load(frag, typ=L.VectorType(et, n))
        for i, ptr in self._addresses(fx, e, ft, at, arr, offset, ldm):
            b.store(b.extract_element(vec, L.Constant(I32, i)), ptr)

    def frag_mma(self, fx, e, args):
        d, a, x, c = args
        dt, at, bt, ct = (v.type for v in e.args)
        cf = self.config_of(e, (at.m, at.n, at.k, str(at.dtype), str(ct.dtype)))
        b = fx.builder

        def operand(ptr, ft):
            v = self._load_vec(fx, e, ft, ptr)
            if v.type == cf.ab_type:
                return v
            if not isinstance(cf.ab_type, L.VectorType) and v.type.count == 1:
                return b.extract_element(v, L.Constant(I32, 0))
            # packed bytes (<4 x i8> -> i32, <8 x i8> -> i64 or <2 x i32>, <16 x i8> -> <4 x i32>),
            # bf16 bits -> bfloat
            return b.bitcast(v, cf.ab_type)
        av, bv = operand(a, at), operand(x, bt)
        cv = self._load_vec(fx, e, ct, c)
        if cf.kind == "mfma":
            zero = L.Constant(I32, 0)
            f = fx.intrinsic(cf.name, cf.c_type, [cf.ab_type, cf.ab_type, cf.c_type, I32, I32, I32])
            r = b.call(f, [av, bv, cv, zero, zero, zero])
        elif cf.kind == "wmma":
            f = fx.intrinsic(cf.name, cf.c_type, [cf.ab_type, cf.ab_type, cf.c_type])
            r = b.call(f, [av, bv, cv])
        elif cf.kind == "wmma_opsel":
            f = fx.intrinsic(cf.name, cf.c_type, [cf.ab_type, cf.ab_type, cf.c_type, I1])
            r = b.call(f, [av, bv, cv, L.Constant(I1, 0)])
        else:  # iu8: signed A and B, no clamp
            f = fx.intrinsic(cf.name, cf.c_type, [I1, cf.ab_type, I1, cf.ab_type, cf.c_type, I1])
            r = b.call(f, [L.Constant(I1, 1), av, L.Constant(I1, 1), bv, cv, L.Constant(I1, 0)])
        b.store(r, d)
