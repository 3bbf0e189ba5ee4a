"""The AMD GPU (amdgcn) code generation target.

``AmdgpuTarget(arch="gfx942").compile(ir_module, options)`` lowers a typed-IR
kernel to LLVM IR (through the target-independent ``lower.py``, which calls the
methods below for everything AMD-specific), links the ROCm device libraries
it needs, optimises at O3, emits an object and links it with ld.lld into a
code object loadable by ``hipModuleLoadData``.

AMD specifics, in one place:

* ids from ``llvm.amdgcn.workitem.id.*`` / ``workgroup.id.*``; blockDim and
  gridDim from the hidden kernel arguments (``llvm.amdgcn.implicitarg.ptr``,
  COv5+) or the dispatch packet (``llvm.amdgcn.dispatch.ptr``, COv4);
* address spaces: global 1, shared/LDS 3, const 4, private 5;
* barrier = workgroup release fence, ``s_barrier``, workgroup acquire fence;
  ``syncthreads_count/and/or`` use ockl's workgroup reductions (as HIP does);
* global atomics at ``agent`` scope, shared ones at ``workgroup`` scope; float
  atomics get ``!amdgpu.no.fine.grained.memory`` where the arch has native
  instructions (else LLVM expands a cmpxchg loop);
* wave ops through ``ds_bpermute``, ``ballot``, ``mbcnt``;
* math: bit-exact operations as LLVM intrinsics, the rest from ocml;
* code quality: ``!range`` on ids, dims and lane ids, ``range()`` on array
  extents (:func:`shape_ranges`), ``noundef`` arguments -- what lets LLVM prove
  indices non-negative, as clang knows for HIP -- and multiply-add
  contraction by default (:meth:`AmdgpuTarget.fp_contract`, hipcc's default).

Example::

    >>> from pykern.codegen.amdgpu import AmdgpuTarget
    >>> art = AmdgpuTarget(arch="gfx942").compile(ir_module)     # doctest: +SKIP
    >>> art.metadata[".symbol"]                                  # doctest: +SKIP
    'saxpy.kd'
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Optional

from ..errors import CompileError
from ..frontend import types as T
from . import archs as _archs
from .target import CompileOptions, LoweredKernel, Target

TRIPLE = "amdgcn-amd-amdhsa"
GLOBAL, SHARED, CONST, PRIVATE = 1, 3, 4, 5
_ADDRSPACE = {"global": GLOBAL, "shared": SHARED, "const": CONST, "local": PRIVATE}
_AXES = "xyz"

#: Debug error record (``debug=True`` kernels), an exported device global:
#: ``i32 kind`` (0 = no error, 1 = bounds), ``i32 message`` (index into
#: ``artifact.error_messages``), then nine ``i64``: index, extent, axis,
#: threadIdx.x/y/z, blockIdx.x/y/z of the first failing thread.
ERROR_SYMBOL = "__pykern_error"
ERROR_RECORD_BYTES = 80
ERROR_KINDS = {"bounds": 1}
ERROR_RECORD = "<iiqqqqqqqqq"  # struct format of the record

#: math names computed with LLVM intrinsics (bit-exact and lowered correctly by the backend)
_LLVM_MATH = {
    "fabs": "llvm.fabs", "floor": "llvm.floor", "ceil": "llvm.ceil", "trunc": "llvm.trunc",
    "rint": "llvm.rint", "round": "llvm.roundeven", "copysign": "llvm.copysign", "fma": "llvm.fma",
    "sqrt": "llvm.sqrt",
}
#: math names taken from ocml (``__ocml_<name>_f32/_f64``)
_OCML_MATH = {
    **{n: n for n in (
        "sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp exp2 expm1 log log2 log10 "
        "log1p cbrt erf erfc lgamma atan2 pow hypot fmod"
    ).split()},
    "gamma": "tgamma",
}


def _ir():
    from llvmlite import ir

    return ir


class AmdgpuTarget(Target):
    """Compile kernels for one AMD GPU architecture.

    ``arch``: a processor or target id (``"gfx942"``, ``"gfx90a:xnack-"``);
    ``code_object_version``: 4, 5 (default) or 6. Other options:
    ``wave64=True`` (RDNA in wave64 mode), ``safe_fp_atomics=True`` (always
    cmpxchg loops for float atomics, correct on fine-grained host memory too).
    ``CompileOptions.arch`` / a non-default ``CompileOptions.code_object_version``
    override the constructor's values for one compilation.

    Example::

        >>> t = AmdgpuTarget(arch="gfx90a:xnack-")
        >>> t.arch, t.default_wave_size(None)
        ('gfx90a:xnack-', 64)
    """

    name = "amdgpu"

    def __init__(self, arch: str = "gfx942", code_object_version: int = 5, **opts):
        super().__init__(**opts)
        if code_object_version not in (4, 5, 6):
            raise CompileError(f"code_object_version must be 4, 5 or 6, not {code_object_version!r}",
                               hint="ROCm 5.x loads v4, ROCm 6.x v5 (the default), very recent ROCm v6")
        self.code_object_version = int(code_object_version)
        self.arch_info = _archs.parse_target_id(arch, self.code_object_version, wave64=bool(opts.get("wave64")))
        self.arch = self.arch_info.target_id
        self.safe_fp_atomics = bool(opts.get("safe_fp_atomics", False))

    # ------------------------------------------------------------- options
    def _for_options(self, options: Optional[CompileOptions]) -> "AmdgpuTarget":
        """This target, or a copy for the arch / code object version / wave
        size ``options`` ask for."""
        if options is None:
            return self
        cov = options.code_object_version if options.code_object_version != 5 else self.code_object_version
        arch = options.arch or self.arch
        ws = options.wave_size
        if arch == self.arch and cov == self.code_object_version and ws in (None, self.arch_info.effective_wave_size):
            return self
        opts = dict(self.opts)
        if ws == 64:
            opts["wave64"] = True
        elif ws == 32:
            opts.pop("wave64", None)
        return AmdgpuTarget(arch=arch, code_object_version=cov, **opts)

    def default_wave_size(self, options) -> int:
        return self.arch_info.effective_wave_size

    def resolve_options(self, options: Optional[CompileOptions]) -> CompileOptions:
        options = options or CompileOptions()
        ws = options.wave_size
        if ws is not None and ws not in (32, 64):
            raise CompileError(f"wave_size must be 32 or 64, not {ws}")
        t = self._for_options(options)
        if ws == 32 and t.arch_info.major < 10:
            raise CompileError(f"{t.arch_info.name} runs 64-lane waves only; wave_size=32 needs RDNA (gfx10+)")
        return options.with_(wave_size=t.arch_info.effective_wave_size, arch=t.arch,
                             code_object_version=t.code_object_version)

    def compile(self, module, options: Optional[CompileOptions] = None):
        """Compile a typed-IR module to a :class:`KernelArtifact` (linked code object)."""
        t = self._for_options(options)
        return Target.compile(t, module, options)

    # -------------------------------------------------------------- module
    def target_machine(self):
        from . import codeobject

        return codeobject.target_machine(self.arch_info.name, self.arch_info.llvm_features, 3)

    def triple(self) -> str:
        return TRIPLE

    def data_layout(self) -> str:
        return str(self.target_machine().target_data)

    def begin_module(self, llmodule, options) -> None:
        ir = _ir()
        i32 = ir.IntType(32)
        flag = llmodule.add_metadata([i32(1), ir.MetaDataString(llmodule, "amdhsa_code_object_version"),
                                      i32(self.code_object_version * 100)])
        llmodule.add_named_metadata("llvm.module.flags", flag)

    def address_space(self, space: str) -> int:
        return _ADDRSPACE[space]

    def define_kernel(self, llmodule, info, params, param_types, options):
        ir = _ir()
        fn = ir.Function(llmodule, ir.FunctionType(ir.VoidType(), list(param_types)), name=info.kernel_name)
        fn.calling_convention = "amdgpu_kernel"
        for arg, p in zip(fn.args, params):
            arg.name = _arg_name(p)
            # the launcher writes every explicit argument (kernargs.pack), as
            # clang assumes for HIP kernels
            arg.attributes.add("noundef")
        return fn

    def max_block_size(self, options: CompileOptions) -> int:
        n = options.max_block_size or 1024
        if not 1 <= n <= 1024:
            raise CompileError(f"max_block_size must be in 1..1024 on AMD GPUs, not {n}")
        return int(n)

    # ----------------------------------------------------------- registers
    def _call(self, fx, name, ret, args=(), argtys=None):
        argtys = [a.type for a in args] if argtys is None else argtys
        return fx.builder.call(fx.intrinsic(name, ret, argtys), list(args))

    # Value ranges of the special registers. LLVM cannot know them, and
    # without them it cannot prove ``cuda.grid(1)`` (a sign-extended int32
    # product) non-negative, so every array access would keep the
    # negative-index wraparound select and 64-bit sign arithmetic. Each bound
    # is one pykern guarantees: launches check griddim.* <= 2**31 - 1
    # (``hip_launch.LaunchLimits``) and the block size against the kernel's
    # ``amdgpu-flat-work-group-size`` (= ``max_block_size``).
    #: largest griddim.* a pykern launch allows (so workgroup ids are < it)
    MAX_GRID_DIM = 2**31 - 1

    def _block_dim_bound(self, fx) -> int:
        """Largest blockDim.* a launch of this kernel can have."""
        return min(1024, self.max_block_size(fx.options))

    def _set_range(self, fx, inst, lo: int, hi: int, bits: int = 32) -> None:
        """``!range [lo, hi)`` (plus ``!noundef``) on a load or call of an
        ``i<bits>`` value. ``hi`` is written modulo 2**bits, as LLVM expects
        (``[1, 2**31)`` on i32 is ``!{i32 1, i32 -2147483648}``)."""
        ir = _ir()
        ty = ir.IntType(bits)
        wrap = lambda v: ((v + 2 ** (bits - 1)) % 2**bits) - 2 ** (bits - 1)  # noqa: E731
        inst.set_metadata("range", fx.module.add_metadata([ty(wrap(lo)), ty(wrap(hi))]))
        if getattr(inst, "opname", "") == "load":
            inst.set_metadata("noundef", fx.module.add_metadata([]))

    def _hidden_load(self, fx, offset: int, bits: int, value_range=None):
        """Load an unsigned ``bits`` value at ``offset`` of the implicit-argument
        area (COv5+) and zero-extend it to i32."""
        ir = _ir()
        base = self._call(fx, "llvm.amdgcn.implicitarg.ptr", ir.PointerType(addrspace=CONST))
        return self._const_load(fx, base, offset, bits, value_range)

    def _const_load(self, fx, base, offset, bits, value_range=None):
        ir = _ir()
        b = fx.builder
        p = b.gep(base, [ir.IntType(64)(offset)], source_etype=ir.IntType(8), inbounds=True)
        v = b.load(p, typ=ir.IntType(bits), align=bits // 8)
        v.set_metadata("invariant.load", fx.module.add_metadata([]))
        if value_range is not None:
            self._set_range(fx, v, *value_range, bits=bits)
        return b.zext(v, ir.IntType(32)) if bits < 32 else v

    def _dispatch_load(self, fx, offset, bits, value_range=None):
        ir = _ir()
        base = self._call(fx, "llvm.amdgcn.dispatch.ptr", ir.PointerType(addrspace=CONST))
        return self._const_load(fx, base, offset, bits, value_range)

    def special_register(self, fx, name: str, axis: int):
        ir = _ir()
        i32 = ir.IntType(32)
        bdim = (1, self._block_dim_bound(fx) + 1)
        if name == "thread_idx":
            v = self._call(fx, f"llvm.amdgcn.workitem.id.{_AXES[axis]}", i32)
            self._set_range(fx, v, 0, bdim[1] - 1)
            return v
        if name == "block_idx":
            v = self._call(fx, f"llvm.amdgcn.workgroup.id.{_AXES[axis]}", i32)
            self._set_range(fx, v, 0, self.MAX_GRID_DIM)  # ids 0 .. griddim - 1
            return v
        if name == "block_dim":
            if self.code_object_version >= 5:
                return self._hidden_load(fx, 12 + 2 * axis, 16, bdim)  # hidden_group_size_{x,y,z}
            return self._dispatch_load(fx, 4 + 2 * axis, 16, bdim)  # hsa packet workgroup_size_*
        if name == "grid_dim":
            blocks = (1, self.MAX_GRID_DIM + 1)
            if self.code_object_version >= 5:
                return self._hidden_load(fx, 4 * axis, 32, blocks)  # hidden_block_count_{x,y,z}
            # COv4: the packet holds the grid in work-items (1..2**32-1); blocks =
            # ceil(grid / block), as (grid - 1) / block + 1 so that nothing wraps
            grid = self._dispatch_load(fx, 12 + 4 * axis, 32, (1, 2**32))
            block = self._dispatch_load(fx, 4 + 2 * axis, 16, bdim)
            b = fx.builder
            return b.add(b.udiv(b.sub(grid, i32(1)), block), i32(1))
        if name == "warpsize":
            return i32(fx.options.wave_size or self.arch_info.effective_wave_size)
        if name == "laneid":
            return self._lane_id(fx)
        raise CompileError(f"internal error: unknown special register {name!r}")

    def _wave(self, fx) -> int:
        return int(fx.options.wave_size or self.arch_info.effective_wave_size)

    def _lane_id(self, fx):
        ir = _ir()
        i32 = ir.IntType(32)
        lo = self._call(fx, "llvm.amdgcn.mbcnt.lo", i32, [i32(-1), i32(0)])
        self._set_range(fx, lo, 0, 32)
        if self._wave(fx) == 32:
            return lo
        hi = self._call(fx, "llvm.amdgcn.mbcnt.hi", i32, [i32(-1), lo])
        self._set_range(fx, hi, 0, 64)
        return hi

    # -------------------------------------------------------------- memory
    def shared_array(self, fx, name: str, elem_type, nbytes: int, align: int, offset: int):
        ir = _ir()
        mod = fx.module
        gname = f"__pykern_shared_{name}"
        if gname in mod.globals:
            return mod.globals[gname]
        arrty = ir.ArrayType(ir.IntType(8), max(int(nbytes), 1))
        g = ir.GlobalVariable(mod, arrty, gname, addrspace=SHARED)
        g.linkage = "internal"
        g.initializer = ir.Constant(arrty, ir.Undefined)
        g.align = max(int(align), 4)
        return g

    def dynamic_shared(self, fx, elem_type):
        ir = _ir()
        mod = fx.module
        gname = "__pykern_dynamic_shared"
        if gname in mod.globals:
            return mod.globals[gname]
        g = ir.GlobalVariable(mod, ir.ArrayType(ir.IntType(8), 0), gname, addrspace=SHARED)
        g.linkage = "external"
        g.align = 16
        return g

    def dynamic_shared_bytes(self, fx):
        """COv5+: the ``hidden_dynamic_lds_size`` argument (implicit area +120,
        listed in the metadata only when the kernel uses dynamic LDS, and then
        filled by the runtime). COv4 has no such argument: None."""
        if self.code_object_version < 5:
            return None
        ir = _ir()
        return fx.builder.zext(self._hidden_load(fx, 120, 32), ir.IntType(64))

    def local_array(self, fx, name: str, elem_type, count: int):
        """A private (addrspace 5) array. ``fx.alloca`` makes a generic alloca,
        which :func:`prepare_ir` moves to addrspace(5) behind a generic cast;
        casting back here gives the ``ptr addrspace(5)`` lowering expects
        (InstCombine folds the round trip)."""
        ir = _ir()
        slot = fx.alloca(ir.ArrayType(elem_type, int(count)), name=name)
        return fx.builder.addrspacecast(slot, ir.PointerType(addrspace=PRIVATE))

    # ---------------------------------------------------------------- sync
    def _workgroup_barrier(self, fx) -> None:
        ir = _ir()
        b = fx.builder
        b.fence("release", "workgroup")
        b.call(fx.intrinsic("llvm.amdgcn.s.barrier", ir.VoidType(), []), [])
        b.fence("acquire", "workgroup")

    def barrier(self, fx, kind: str, pred, site):
        ir = _ir()
        i32 = ir.IntType(32)
        self._workgroup_barrier(fx)
        if kind == "syncthreads":
            return None
        op = {"syncthreads_count": "add", "syncthreads_and": "and", "syncthreads_or": "or"}[kind]
        fn = self._declare(fx, f"__ockl_wgred_{op}_i32", i32, [i32], convergent=True)
        return fx.builder.call(fn, [fx.builder.zext(pred, i32)])

    def _declare(self, fx, name, ret, argtys, convergent=False):
        ir = _ir()
        mod = fx.module
        if name in mod.globals:
            return mod.globals[name]
        fn = ir.Function(mod, ir.FunctionType(ret, argtys), name=name)
        if convergent:
            fn.attributes.add("convergent")
        fn.attributes.add("nounwind")
        return fn

    def fence(self, fx, scope: str) -> None:
        sc = {"block": "workgroup", "device": "agent", "system": None}[scope]
        fx.builder.fence("seq_cst", sc)

    def atomic_syncscope(self) -> Optional[str]:
        return "agent"

    def shared_atomic_syncscope(self) -> Optional[str]:
        return "workgroup"

    # ----------------------------------------------------------- wave ops
    def _ballot(self, fx, pred):
        ir = _ir()
        i64 = ir.IntType(64)
        if self._wave(fx) == 64:
            return self._call(fx, "llvm.amdgcn.ballot.i64", i64, [pred])
        v = self._call(fx, "llvm.amdgcn.ballot.i32", ir.IntType(32), [pred])
        return fx.builder.zext(v, i64)

    def _bpermute32(self, fx, value, lane):
        """``value`` (i32) of lane ``lane`` (i32, already in range)."""
        ir = _ir()
        i32 = ir.IntType(32)
        addr = fx.builder.shl(lane, i32(2))
        return self._call(fx, "llvm.amdgcn.ds.bpermute", i32, [addr, value])

    def _shuffle(self, fx, value, lane):
        ir = _ir()
        b = fx.builder
        i32, i64 = ir.IntType(32), ir.IntType(64)
        bits = value.type.width
        if bits == 64:
            lo = b.trunc(value, i32)
            hi = b.trunc(b.lshr(value, i64(32)), i32)
            lo = self._bpermute32(fx, lo, lane)
            hi = self._bpermute32(fx, hi, lane)
            return b.or_(b.zext(lo, i64), b.shl(b.zext(hi, i64), i64(32)))
        v = b.zext(value, i32) if bits < 32 else value
        r = self._bpermute32(fx, v, lane)
        return b.trunc(r, value.type) if bits < 32 else r

    def wave_op(self, fx, name: str, args: list, site):
        ir = _ir()
        b = fx.builder
        i1, i32, i64 = ir.IntType(1), ir.IntType(32), ir.IntType(64)
        ws = self._wave(fx)
        if name == "syncwarp":
            b.fence("release", "wavefront")
            b.call(fx.intrinsic("llvm.amdgcn.wave.barrier", ir.VoidType(), []), [])
            b.fence("acquire", "wavefront")
            return None
        if name == "activemask":
            return self._ballot(fx, i1(1))
        if name in ("shfl_sync", "shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"):
            _mask, value, arg = args
            lane = self._lane_id(fx)
            if name == "shfl_sync":
                src = b.and_(arg, i32(ws - 1))
            elif name == "shfl_up_sync":
                cand = b.sub(lane, arg)
                src = b.select(b.icmp_signed("<", cand, i32(0)), lane, cand)
            elif name == "shfl_down_sync":
                cand = b.add(lane, arg)
                src = b.select(b.icmp_unsigned(">=", cand, i32(ws)), lane, cand)
            else:
                cand = b.xor(lane, arg)
                src = b.select(b.icmp_unsigned(">=", cand, i32(ws)), lane, cand)
            return self._shuffle(fx, value, src)
        mask, pred = args
        if ws == 64:
            # numba/CUDA code spells "every lane" 0xFFFFFFFF: on a 64-lane wave
            # that must still mean every lane, not the lower half
            mask = b.select(b.icmp_unsigned("==", mask, i64(0xFFFFFFFF)), i64(-1), mask)
        ballot = b.and_(self._ballot(fx, pred), mask)
        if name == "ballot_sync":
            return ballot
        if name == "any_sync":
            return b.icmp_unsigned("!=", ballot, i64(0))
        members = b.and_(mask, self._ballot(fx, i1(1)))
        if name == "all_sync":
            return b.icmp_unsigned("==", ballot, members)
        if name == "eq_sync":
            return b.or_(b.icmp_unsigned("==", ballot, members), b.icmp_unsigned("==", ballot, i64(0)))
        raise CompileError(f"internal error: unknown wave op {name!r}")

    # -------------------------------------------------------------- limits
    def max_shared_bytes(self, options) -> int:
        """The arch's LDS per workgroup (64 KiB; gfx950 160 KiB): beyond it
        LLVM stops the process with 'local memory exceeds limit'."""
        return self.arch_info.lds_per_workgroup

    def max_local_bytes(self, options) -> int:
        """64 KiB per work-item (the portable default), never more than the
        arch's scratch can address per lane (:func:`max_scratch_per_lane`,
        131056 bytes in wave64 on gfx9/gfx10): the rest is left for spills."""
        ws = (options.wave_size if options else None) or self.arch_info.effective_wave_size
        return min(Target.max_local_bytes(self, options), max_scratch_per_lane(self.arch_info.major, ws))

    # ---------------------------------------------------------------- math
    def fp_contract(self) -> bool:
        """a*b+c fuses into FMAs by default, as hipcc's ``-ffp-contract=fast``."""
        return True

    def math(self, fx, name: str, args: list, fty):
        ir = _ir()
        b = fx.builder
        llty = args[0].type
        if name in _LLVM_MATH:
            suffix = {16: "f16", 32: "f32", 64: "f64"}[fty.bits]
            return self._call(fx, f"{_LLVM_MATH[name]}.{suffix}", llty, args)
        if name not in _OCML_MATH:
            raise CompileError(f"math function {name!r} is not available on AMD GPUs",
                               loc=getattr(fx, "loc", None))
        if fty.bits == 16:
            # half: compute in float and round once (ocml's f16 set is incomplete in ROCm 5.x)
            f32 = ir.FloatType()
            wide = [b.fpext(a, f32) for a in args]
            r = self._ocml(fx, name, wide, 32)
            return b.fptrunc(r, llty)
        return self._ocml(fx, name, args, fty.bits)

    def _ocml(self, fx, name, args, bits):
        llty = args[0].type
        fn = self._declare(fx, f"__ocml_{_OCML_MATH[name]}_f{bits}", llty, [a.type for a in args])
        return fx.builder.call(fn, args)

    # --------------------------------------------------------------- debug
    def record_error(self, fx, kind: str, message: str, values: list) -> None:
        """Debug bounds failures go to the device global ``__pykern_error``
        (see :data:`ERROR_RECORD`): the first failing thread wins a cmpxchg on
        ``flag`` and writes the message index, its values and its thread and
        block ids. The host reads it with ``hipModuleGetGlobal`` after the
        kernel; the texts are in ``artifact.error_messages``."""
        ir = _ir()
        b = fx.builder
        i32, i64 = ir.IntType(32), ir.IntType(64)
        rec = self._error_global(fx.module)
        messages = fx.module.__dict__.setdefault("_pykern_error_messages", [])
        if message not in messages:
            messages.append(message)
        field = lambda *idx: b.gep(rec, [i32(0), *[i32(i) for i in idx]])  # noqa: E731
        res = b.cmpxchg(field(0), i32(0), i32(ERROR_KINDS.get(kind, 99)), 'syncscope("agent") monotonic',
                        "monotonic")
        with b.if_then(b.extract_value(res, 1)):
            b.store(i32(messages.index(message)), field(1))
            vals = [v if v.type == i64 else b.sext(v, i64) for v in list(values)[:3]]
            vals += [i64(0)] * (3 - len(vals))
            for name in ("thread_idx", "block_idx"):
                vals += [b.zext(self.special_register(fx, name, ax), i64) for ax in range(3)]
            for k, v in enumerate(vals):
                b.store(v, field(2, k))
            b.fence("release", "agent")

    def _error_global(self, mod):
        ir = _ir()
        if ERROR_SYMBOL in mod.globals:
            return mod.globals[ERROR_SYMBOL]
        i32, i64 = ir.IntType(32), ir.IntType(64)
        ty = ir.LiteralStructType([i32, i32, ir.ArrayType(i64, 9)])
        g = ir.GlobalVariable(mod, ty, ERROR_SYMBOL, addrspace=GLOBAL)
        g.initializer = ir.Constant(ty, None)
        g.align = 8
        # llvmlite has no visibility field; storage_class prints at the same
        # place. Protected: exported for hipModuleGetGlobal, accessed without a GOT
        g.storage_class = "protected"
        return g

    # -------------------------------------------------------------- output
    def finalize(self, lowered: LoweredKernel):
        from . import abi
        from .artifact import KernelArtifact

        opts = lowered.options
        info = lowered.info
        name = info.kernel_name
        if "llvm.module.flags" not in lowered.llmodule.namedmetadata:
            self.begin_module(lowered.llmodule, opts)
        text = str(lowered.llmodule)
        text = prepare_ir(text, name, max_block_size=self.max_block_size(opts),
                          max_registers=opts.max_registers,
                          fp_atomics_native=not self.safe_fp_atomics, arch=self.arch_info,
                          param_ranges=shape_ranges(lowered.params))
        built = build(text, self.arch_info, kernel_names=[name], fastmath=opts.fastmath, opt=opts.opt,
                      code_object_version=self.code_object_version, want_asm=False)  # codeobject.assembly_of
        md = built.kernel_metadata(name)
        params = params_from_metadata(lowered.params, md)
        res = built.resources(name, block_size=min(256, self.max_block_size(opts)))
        art = KernelArtifact(
            target="amdgpu",
            arch=self.arch,
            name=name,
            params=params,
            kernarg_size=abi.kernarg_size(params),
            llvm_ir=built.llvm_ir,
            binary=built.binary,
            asm=built.asm or None,
            metadata=md,
            uses_barrier=info.uses_barrier,
            uses_wave_ops=info.uses_wave_ops,
            dynamic_shared=info.uses_dynamic_shared,
            static_shared_bytes=int(md.get(".group_segment_fixed_size", 0)),
            wave_size=int(md.get(".wavefront_size", self.arch_info.effective_wave_size)),
            max_block_size=int(md.get(".max_flat_workgroup_size", 1024)),
        )
        _attach(art, "resources", res)
        _attach(art, "code_object_version", self.code_object_version)
        _attach(art, "device_libs", built.device_libs)
        _attach(art, "error_messages", list(lowered.llmodule.__dict__.get("_pykern_error_messages", [])))
        _attach(art, "error_symbol", ERROR_SYMBOL if art.error_messages else None)
        return art


def max_scratch_per_lane(major: int, wave_size: int) -> int:
    """Most private (scratch) bytes one work-item can have: the per-wave
    scratch size field COMPUTE_TMPRING_SIZE.WAVESIZE (gfx9/gfx10: 13 bits in
    units of 1 KiB; gfx11: 15 bits of 256 bytes; gfx12: 18 bits of 256 bytes,
    as LLVM's ``GCNSubtarget::getMaxWaveScratchSize``) over the wave's lanes.

    Example: ``max_scratch_per_lane(9, 64) == 131056``."""
    if major >= 12:
        per_wave = 256 * ((1 << 18) - 1)
    elif major == 11:
        per_wave = 256 * ((1 << 15) - 1)
    else:
        per_wave = 1024 * ((1 << 13) - 1)
    return per_wave // wave_size


def format_error_record(raw: bytes, messages: list) -> Optional[str]:
    """Decode the ``__pykern_error`` record read back from the device
    (``ERROR_RECORD_BYTES`` bytes): ``None`` when no thread failed, else the
    text for ``KernelRuntimeError``.

    Example::

        >>> format_error_record(bytes(80), ["k.py:3: index out of bounds for array 'x'"]) is None
        True
    """
    import struct

    rec = struct.unpack(ERROR_RECORD, bytes(raw[:ERROR_RECORD_BYTES]))
    kind, msg, index, extent, axis, tx, ty, tz, bx, by, bz = rec
    if kind == 0:
        return None
    text = messages[msg] if 0 <= msg < len(messages) else f"kernel error kind {kind}"
    return (f"{text}: index {index} is out of range for axis {axis} with extent {extent} "
            f"(thread ({tx}, {ty}, {tz}) of block ({bx}, {by}, {bz}))")


def _arg_name(p) -> str:
    """LLVM name of the kernel argument of flat parameter ``p``."""
    return re.sub(r"[^A-Za-z0-9_.]", "_", p.name)


#: numpy's limit on any array, views and broadcasts included: ``size *
#: itemsize`` must fit in an int64 ("array is too big" otherwise)
MAX_ARRAY_BYTES = 2**63 - 1


def shape_ranges(params: list) -> dict:
    """``{argument name: (lo, hi)}``: the value range ``[lo, hi)`` of every
    ``shape`` parameter: an extent is >= 0 and at most
    ``MAX_ARRAY_BYTES // itemsize``. With it LLVM knows that a non-negative
    index below an extent plus a grid stride cannot overflow, so the
    wraparound of negative indices folds away in grid-stride loops.

    Example::

        >>> from pykern.codegen.abi import flatten_params
        >>> from pykern.frontend import types as T
        >>> shape_ranges(flatten_params([T.Array(T.float64, 1)], ["x"]))
        {'x.shape0': (0, 1152921504606846976)}
    """
    out = {}
    itemsize = 1
    for p in params:
        if p.role == "data":
            dt = p.type.dtype
            itemsize = 1 if isinstance(dt, T.Boolean) else max(1, dt.bits // 8)
        elif p.role == "shape":
            out[_arg_name(p)] = (0, MAX_ARRAY_BYTES // itemsize + 1)
    return out


def _attach(art, field: str, value) -> None:
    """Set ``field`` on the artifact whether or not artifact.py declares it
    (a dataclass instance keeps extra attributes through pickling)."""
    setattr(art, field, value)


# ---------------------------------------------------------------------------
# IR text preparation, build pipeline
# ---------------------------------------------------------------------------

_ALLOCA_RE = re.compile(r'^(\s*)(%(?:"[^"]*"|[-\w.$]+)) = alloca (.*)$')
_ATOMIC_RE = re.compile(r"^(\s*%.*= atomicrmw (?:volatile )?(\w+) ptr(?: addrspace\((\d+)\))? [^,]*, "
                        r"(\w+) .*)$")


def _suffix_name(ref: str, suffix: str) -> str:
    if ref.endswith('"'):
        return ref[:-1] + suffix + '"'
    return ref + suffix


def _add_param_ranges(define_line: str, param_ranges: dict) -> str:
    """``range(i64 lo, hi)`` on the i64 kernel arguments named in ``param_ranges``."""
    for argname, (lo, hi) in param_ranges.items():
        pat = re.compile(r'i64 ((?:noundef )?)(%(?:"' + re.escape(argname) + r'"|' + re.escape(argname) + r'))(?=[,)])')
        wrap = lambda v: ((v + 2**63) % 2**64) - 2**63  # noqa: E731
        define_line = pat.sub(lambda m: f"i64 {m.group(1)}range(i64 {wrap(lo)}, {wrap(hi)}) {m.group(2)}",
                              define_line, count=1)
    return define_line


def prepare_ir(text: str, kernel_name: str, *, max_block_size: int = 1024, max_registers=None,
               fp_atomics_native: bool = True, arch=None, param_ranges=None) -> str:
    """AMDGPU fix-ups on LLVM IR text before parsing:

    * kernel attributes: ``amdgpu-flat-work-group-size``, ``uniform-work-group-size``
      (HIP grids are whole blocks), ``amdgpu-num-vgpr`` for ``max_registers``;
    * ``range(i64 lo, hi)`` on the kernel arguments of ``param_ranges``
      (``{name: (lo, hi)}``, see :func:`shape_ranges`; llvmlite cannot print it);
    * generic (addrspace 0) allocas become addrspace(5) allocas plus an
      ``addrspacecast`` to a generic pointer (what clang emits for HIP);
    * ``atomicrmw`` on global/generic memory get ``!amdgpu.no.remote.memory``
      and ``!amdgpu.no.fine.grained.memory`` (clang's HIP default: the array
      is device memory), so LLVM uses the native instruction where the arch
      has one (else it expands a cmpxchg loop); f32 add also gets
      ``!amdgpu.ignore.denormal.mode`` where native. ``fp_atomics_native=False``
      (``safe_fp_atomics``) leaves atomics alone: cmpxchg loops that are
      correct on fine-grained host memory too.
    """
    lines = text.splitlines()
    out = []
    attrs = f'"amdgpu-flat-work-group-size"="1,{int(max_block_size)}" "uniform-work-group-size"="true"'
    if max_registers:
        attrs += f' "amdgpu-num-vgpr"="{int(max_registers)}"'
    kname_re = re.compile(r'^define\s.*amdgpu_kernel\s.*@"?' + re.escape(kernel_name) + r'"?\(')
    for line in lines:
        if kname_re.match(line):
            if param_ranges:
                line = _add_param_ranges(line, param_ranges)
            if line.rstrip().endswith("{"):
                line = line.rstrip()[:-1].rstrip() + " " + attrs + " {"
            else:  # llvmlite puts the brace on the next line
                line = line.rstrip() + " " + attrs
        m = _ALLOCA_RE.match(line)
        if m and not re.search(r",\s*addrspace\(\d+\)\s*(,\s*!.*)?$", m.group(3)):
            ind, ref, rest = m.groups()
            p5 = _suffix_name(ref, ".pykern.as5")
            out.append(f"{ind}{p5} = alloca {rest}, addrspace({PRIVATE})")
            out.append(f"{ind}{ref} = addrspacecast ptr addrspace({PRIVATE}) {p5} to ptr")
            continue
        m = _ATOMIC_RE.match(line)
        if m and fp_atomics_native and arch is not None:
            op, aspace, ty = m.group(2), int(m.group(3) or 0), m.group(4)
            if aspace in (0, GLOBAL):
                # what clang attaches to HIP atomics by default: device memory
                # (not PCIe-remote, not fine-grained host memory)
                line = line.rstrip() + ", !amdgpu.no.remote.memory !{}, !amdgpu.no.fine.grained.memory !{}"
                native = arch.fadd_atomic if op in ("fadd", "fsub") else arch.fminmax_atomic
                if ty == "float" and op in ("fadd", "fsub") and ty in native:
                    # the native f32 add may flush denormals (gfx90a): accept that
                    line += ", !amdgpu.ignore.denormal.mode !{}"
        out.append(line)
    return "\n".join(out) + "\n"


class Built:
    """Result of :func:`build`: code object bytes, asm, final IR, metadata."""

    def __init__(self, emitted, arch, device_libs):
        from . import codeobject

        self.binary = emitted.binary
        self.obj = emitted.obj
        self.asm = emitted.asm
        self.llvm_ir = emitted.llvm_ir
        self.arch = arch
        self.device_libs = device_libs
        self.metadata = codeobject.read_metadata(self.binary) if self.binary else {}

    def kernel_metadata(self, name: str) -> dict:
        from . import codeobject

        return codeobject.kernel_metadata(self.metadata, name)

    def resources(self, name: str, block_size: int = 256) -> dict:
        from . import codeobject

        return codeobject.resources(self.kernel_metadata(name), self.arch, block_size)


def build(ir_text: str, arch, *, kernel_names=(), fastmath: bool = False, opt: int = 3,
          code_object_version: int = 5, want_asm: bool = True) -> Built:
    """LLVM IR text (amdgcn) -> linked code object: verify, link device libs
    if called, internalise, O3, emit (fresh clone per output), ld.lld.

    ``arch`` is an ``archs.Arch`` or target id. Adds the triple, data layout
    and code object version flag when the text lacks them.

    Example::

        >>> b = build(open("k.ll").read(), "gfx942", kernel_names=["k"])   # doctest: +SKIP
        >>> b.kernel_metadata("k")[".vgpr_count"]                          # doctest: +SKIP
    """
    from . import codeobject, devicelibs, toolchain

    a = _archs.parse_target_id(arch, code_object_version) if isinstance(arch, str) else arch
    tm = codeobject.target_machine(a.name, a.llvm_features, 3)
    if "amdhsa_code_object_version" not in ir_text:
        if "!llvm.module.flags" in ir_text:
            raise CompileError("internal error: module flags present without amdhsa_code_object_version")
        ids = [int(x) for x in re.findall(r"^!(\d+) = ", ir_text, flags=re.M)]
        ir_text += codeobject.module_flags_ir(code_object_version, max(ids, default=-1) + 1)
    binding = codeobject.llvm()
    with codeobject.llvm_lock():  # LLVM's global context is not thread-safe
        try:
            mod = binding.parse_assembly(ir_text)
        except RuntimeError as e:
            raise CompileError(f"internal error: LLVM rejected the generated IR: {e}",
                               hint="this is a pykern bug; please report it with the kernel source") from None
        mod.triple = TRIPLE
        mod.data_layout = str(tm.target_data)
        codeobject.verify(mod)
        kernels = list(kernel_names) or _kernel_names(ir_text)
        libs = devicelibs.link(mod, a, fastmath=fastmath, code_object_version=code_object_version,
                               kernel_names=kernels)
        if libs:
            codeobject.verify(mod, "LLVM IR after linking the device libraries")
        codeobject.optimize(mod, tm, max(0, min(3, int(opt))))
        # ld.lld (a process of its own, ~20 ms) links while LLVM writes the assembly
        links = []
        try:
            emitted = codeobject.emit(mod, a, want_asm=want_asm, link=False,
                                      on_object=lambda obj: links.append(toolchain.start_link_shared(obj)))
        except BaseException:
            for job in links:  # reap the linker and its temporary directory
                job.discard()
            raise
    # waited for outside the lock: other threads may use LLVM meanwhile
    emitted.binary = links[0].result()
    return Built(emitted, a, libs)


def _kernel_names(ir_text: str) -> list:
    return re.findall(r'^define\s[^@]*amdgpu_kernel[^@]*@"?([\w.$-]+)"?\(', ir_text, flags=re.M)


def params_from_metadata(params: list, md: dict) -> list:
    """``params`` (``abi.FlatParam``) with offsets taken from the code object's
    explicit ``.args``; raises ``CompileError`` if the two disagree in count
    or size (the runtime would pack the arguments wrongly)."""
    explicit = [a for a in md.get(".args", []) if not str(a.get(".value_kind", "")).startswith("hidden_")]
    if len(explicit) != len(params):
        raise CompileError(f"internal error: code object lists {len(explicit)} kernel arguments, "
                           f"pykern flattened {len(params)}")
    out = []
    for p, a in zip(params, explicit):
        if int(a[".size"]) != p.size:
            raise CompileError(f"internal error: argument {p.name} has size {a['.size']} in the code object, "
                               f"{p.size} in pykern's ABI")
        out.append(replace(p, offset=int(a[".offset"])))
    return out


def compile_llvm_ir(ir_text: str, arch: str = "gfx942", code_object_version: int = 5, **kw) -> Built:
    """Convenience: :func:`build` for hand-written amdgcn LLVM IR (tests, tools).

    Example::

        >>> b = compile_llvm_ir(LL, "gfx90a")                 # doctest: +SKIP
        >>> b.binary[:4]                                      # doctest: +SKIP
        b'\\x7fELF'
    """
    a = _archs.parse_target_id(arch, code_object_version)
    return build(ir_text, a, code_object_version=code_object_version, **kw)
