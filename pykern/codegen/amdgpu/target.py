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

    >>> from pykern.codegen.amdgpu.target import AmdgpuTarget
    >>> art = AmdgpuTarget(arch="gfx942").compile(ir_module)     # doctest: +SKIP
    >>> art.metadata[".symbol"]                                  # doctest: +SKIP
    'saxpy.kd'
"""

from __future__ import annotations

import hashlib
from typing import Optional

from pykern.core.errors import CompileError
from pykern.codegen.amdgpu import archs as _archs
# the build half of this target (IR text preparation, device libraries, emission, linking), and the
# amdgcn facts both halves use
from pykern.codegen.amdgpu.build import CONST, GLOBAL, PRIVATE, SHARED, TRIPLE, Built, arg_name, build, compile_llvm_ir, params_from_metadata, prepare_ir, shape_ranges
from pykern.codegen.target_interface import CompileOptions, LoweredKernel, Target, gamma_at_integers, launch_register_range

_ADDRSPACE = {"global": GLOBAL, "shared": SHARED, "const": CONST, "local": PRIVATE}
_AXES = "xyz"

#: Debug error record (``debug=True`` kernels): the layout is part of the kernel ABI (``pykern.core.abi``)
from pykern.core.abi import ERROR_KINDS, ERROR_RECORD, ERROR_RECORD_BYTES, ERROR_SYMBOL, format_error_record  # noqa: E402,F401

#: math names computed with LLVM intrinsics (bit-exact and lowered correctly by the backend)
_LLVM_MATH = {
    "fabs": "llvm.fabs", "floor": "llvm.floor", "ceil": "llvm.ceil", "trunc": "llvm.trunc",
    "rint": "llvm.rint", "copysign": "llvm.copysign", "fma": "llvm.fma",
    "sqrt": "llvm.sqrt",
}
#: math names taken from ocml (``__ocml_<name>_f32/_f64``)
_OCML_MATH = {
    **{n: n for n in (
        "sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp exp2 expm1 log log2 log10 "
        "log1p cbrt erf erfc lgamma atan2 pow hypot fmod remainder nextafter"
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
        from pykern.codegen.amdgpu import codeobject

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
            arg.name = arg_name(p)
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

    # Value ranges of the special registers (``launch_register_range``). LLVM cannot know
    # them, and without them it cannot prove ``cuda.grid(1)`` (a sign-extended int32
    # product) non-negative, so every array access would keep the negative-index
    # wraparound select and 64-bit sign arithmetic. Each bound is one pykern guarantees:
    # launches check griddim.* <= 2**31 - 1 (``hip_launch.LaunchLimits``) and the block
    # size against the kernel's ``amdgpu-flat-work-group-size`` (= ``max_block_size``).
    # lower.py narrows ``range`` loop counters with the same numbers (ranges.py).

    def special_register_range(self, fx, name: str, axis: int):
        return launch_register_range(name, min(1024, self.max_block_size(fx.options)), self._wave(fx))

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

    def _set_register_range(self, fx, inst, name: str) -> None:
        lo, hi = self.special_register_range(fx, name, 0)
        self._set_range(fx, inst, lo, hi + 1)

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
        lo, hi = self.special_register_range(fx, "block_dim", axis)
        bdim = (lo, hi + 1)
        if name == "thread_idx":
            v = self._call(fx, f"llvm.amdgcn.workitem.id.{_AXES[axis]}", i32)
            self._set_register_range(fx, v, name)
            return v
        if name == "block_idx":
            v = self._call(fx, f"llvm.amdgcn.workgroup.id.{_AXES[axis]}", i32)
            self._set_register_range(fx, v, name)
            return v
        if name == "block_dim":
            if self.code_object_version >= 5:
                return self._hidden_load(fx, 12 + 2 * axis, 16, bdim)  # hidden_group_size_{x,y,z}
            return self._dispatch_load(fx, 4 + 2 * axis, 16, bdim)  # hsa packet workgroup_size_*
        if name == "grid_dim":
            lo, hi = self.special_register_range(fx, name, axis)
            if self.code_object_version >= 5:
                return self._hidden_load(fx, 4 * axis, 32, (lo, hi + 1))  # hidden_block_count_{x,y,z}
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
        self._set_register_range(fx, hi, "laneid")
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
        filled by the runtime). COv4 has no such argument; there the dispatch packet's
        ``group_segment_size`` (u32 at +28 of hsa_kernel_dispatch_packet_t) is static +
        dynamic LDS (the runtime adds the launch's dynamic bytes to the kernel's
        ``.group_segment_fixed_size``). The static part is known only after codegen, but
        LLVM places the dynamic buffer right after all static LDS (aligned up to its
        alignment, which the fixed size includes): the buffer's own address is it."""
        ir = _ir()
        i32 = ir.IntType(32)
        b = fx.builder
        if self.code_object_version < 5:
            total = self._dispatch_load(fx, 28, 32)
            static = b.ptrtoint(self.dynamic_shared(fx, None), i32)
            dyn = b.select(b.icmp_unsigned(">", total, static), b.sub(total, static), i32(0))
            return b.zext(dyn, ir.IntType(64))
        return b.zext(self._hidden_load(fx, 120, 32), ir.IntType(64))

    def local_array(self, fx, name: str, elem_type, count: int, align: int = 0):
        """A private (addrspace 5) array. ``fx.alloca`` makes a generic alloca,
        which :func:`prepare_ir` moves to addrspace(5) behind a generic cast;
        casting back here gives the ``ptr addrspace(5)`` lowering expects
        (InstCombine folds the round trip)."""
        ir = _ir()
        slot = fx.alloca(ir.ArrayType(elem_type, int(count)), name=name)
        if align:
            slot.align = align
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
        if kind == "grid_sync":
            self._grid_sync(fx)
            return None
        self._workgroup_barrier(fx)
        if kind == "syncthreads":
            return None
        op = {"syncthreads_count": "add", "syncthreads_and": "and", "syncthreads_or": "or"}[kind]
        fn = self._declare(fx, f"__ockl_wgred_{op}_i32", i32, [i32], convergent=True)
        return fx.builder.call(fn, [fx.builder.zext(pred, i32)])

    def _grid_sync(self, fx) -> None:
        """``cg.this_grid().sync()``, as HIP's ``__ockl_grid_sync`` (device-libs
        ``ockl/src/cg.cl``): device-scope fence, block barrier, then one
        work-item per block waits for the grid -- with the GWS hardware barrier
        on gfx90a, and on archs without GWS (gfx940-942, gfx950, gfx11+) with
        the counter ``mg_info.sgs`` that the runtime's cooperative launch
        passes in the hidden ``multigrid_sync_arg`` (COv5 implicit argument
        +88, COv4 +48) -- then a block barrier again. Only valid in a
        cooperative launch (``hipModuleLaunchCooperativeKernel``)."""
        ir = _ir()
        b = fx.builder
        i32, i64 = ir.IntType(32), ir.IntType(64)
        b.fence("seq_cst", "agent")
        self._workgroup_barrier(fx)
        tid = b.or_(b.or_(self.special_register(fx, "thread_idx", 0), self.special_register(fx, "thread_idx", 1)),
                    self.special_register(fx, "thread_idx", 2))
        leader = b.icmp_unsigned("==", tid, i32(0))
        isa = self.arch_info.isa_version
        avoid_gws = isa >= 9400 or self.arch_info.major >= 10
        with b.if_then(leader):
            if not avoid_gws:
                g = [self.special_register(fx, "grid_dim", k) for k in range(3)]
                nwm1 = b.sub(b.mul(b.mul(g[0], g[1]), g[2]), i32(1))
                gws = fx.intrinsic("llvm.amdgcn.ds.gws.barrier", ir.VoidType(), [i32, i32])
                b.call(gws, [nwm1, i32(0)])
            else:
                base = self._call(fx, "llvm.amdgcn.implicitarg.ptr", ir.PointerType(addrspace=CONST))
                off = 88 if self.code_object_version >= 5 else 48
                slot = b.gep(base, [i64(off)], source_etype=ir.IntType(8), inbounds=True)
                mi = b.inttoptr(b.load(slot, typ=i64, align=8), ir.PointerType(addrspace=GLOBAL))
                sgs = b.gep(mi, [i64(32)], source_etype=ir.IntType(8), inbounds=True)
                members = b.load(b.gep(mi, [i64(40)], source_etype=ir.IntType(8), inbounds=True), typ=i32, align=4)
                agent = 'syncscope("agent") monotonic'  # llvmlite prints the ordering text as given
                v = b.atomic_rmw("add", sgs, i32(1), agent)
                last = b.icmp_unsigned("==", b.and_(v, i32(0xFFFF)), b.sub(members, i32(1)))
                with b.if_else(last) as (then, otherwise):
                    with then:
                        b.atomic_rmw("add", sgs, b.sub(i32(0x10000), members), agent)
                    with otherwise:
                        gen = b.and_(v, i32(~0xFFFF & 0xFFFFFFFF))
                        loop = fx.function.append_basic_block("gridsync.wait")
                        done = fx.function.append_basic_block("gridsync.done")
                        b.branch(loop)
                        b.position_at_end(loop)
                        b.call(fx.intrinsic("llvm.amdgcn.s.sleep", ir.VoidType(), [i32]), [i32(1)])
                        cur = b.load_atomic(sgs, agent, 4, typ=i32)
                        same = b.icmp_unsigned("==", b.and_(cur, i32(~0xFFFF & 0xFFFFFFFF)), gen)
                        b.cbranch(same, loop, done)
                        b.position_at_end(done)
        self._workgroup_barrier(fx)
        b.fence("seq_cst", "agent")

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

    # ---------------------------------------------------------------- print
    def print_line(self, fx, fmt, args):
        """HIP's printf path (what clang emits for ``printf`` with the default
        ``-mprintf-kind=hostcall``, llvm/lib/Transforms/Utils/AMDGPUEmitPrintf.cpp):
        ``__ockl_printf_begin``, the format with ``__ockl_printf_append_string_n``
        (length including the NUL), scalars as 64-bit words with
        ``__ockl_printf_append_args`` (up to 7 per call), ``%s`` arguments with
        ``append_string_n``; the last call says so. ockl reaches the hostcall
        buffer through the implicit arguments, so the code object's metadata asks
        the HIP runtime for it (``hidden_hostcall_buffer``)."""
        ir = _ir()
        b = fx.builder
        i32, i64, gptr = ir.IntType(32), ir.IntType(64), ir.PointerType()
        begin = self._declare(fx, "__ockl_printf_begin", i64, [i64])
        append_args = self._declare(fx, "__ockl_printf_append_args", i64, [i64, i32] + [i64] * 7 + [i32])
        append_str = self._declare(fx, "__ockl_printf_append_string_n", i64, [i64, gptr, i64, i32])

        def text(t):
            data = bytearray(t.encode("utf-8")) + b"\0"
            name = f"__pykern_printf_{hashlib.sha1(bytes(data)).hexdigest()[:12]}"
            g = fx.module.globals.get(name)
            if g is None:
                ty = ir.ArrayType(ir.IntType(8), len(data))
                g = ir.GlobalVariable(fx.module, ty, name, addrspace=CONST)
                g.global_constant = True
                g.linkage = "private"
                g.initializer = ir.Constant(ty, data)
            return b.addrspacecast(g, gptr), len(data)

        # the items after the format, in order: ("s", ptr, len) or ("w", i64)
        items = []
        for kind, v in args:
            if kind == "b":
                (pt, nt), (pf, nf) = text("True"), text("False")
                items.append(("s", b.select(v, pt, pf), b.select(v, ir.Constant(i64, nt), ir.Constant(i64, nf))))
            elif kind == "f":
                items.append(("w", b.bitcast(v, i64)))
            else:
                items.append(("w", v))
        desc = b.call(begin, [ir.Constant(i64, 0)])
        fptr, flen = text(fmt)
        desc = b.call(append_str, [desc, fptr, ir.Constant(i64, flen), ir.Constant(i32, int(not items))])
        k = 0
        while k < len(items):
            if items[k][0] == "s":
                _, p, n = items[k]
                k += 1
                desc = b.call(append_str, [desc, p, n, ir.Constant(i32, int(k == len(items)))])
                continue
            words = []
            while k < len(items) and items[k][0] == "w" and len(words) < 7:
                words.append(items[k][1])
                k += 1
            pad = [ir.Constant(i64, 0)] * (7 - len(words))
            desc = b.call(append_args, [desc, ir.Constant(i32, len(words))] + words + pad
                          + [ir.Constant(i32, int(k == len(items)))])

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
            # lane -/+ (source in the wave ? delta : 0) rather than a select between two lanes:
            # after unrolling, the select of constants folds into the bpermute address
            # (v_lshl_or/v_add_lshl), as in clang's code for HIP's __shfl_up/__shfl_down
            # (block_sum: 192 -> 186 instructions on gfx1100, 154 -> 153 on gfx942)
            elif name == "shfl_up_sync":
                cand = b.sub(lane, arg)
                src = b.sub(lane, b.select(b.icmp_signed(">=", cand, i32(0)), arg, i32(0)))
            elif name == "shfl_down_sync":
                cand = b.add(lane, arg)
                src = b.add(lane, b.select(b.icmp_unsigned("<", cand, i32(ws)), arg, i32(0)))
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

    # ---------------------------------------------------------------- loops
    def local_unroll_budget(self) -> int:
        """600 frontend IR nodes (trip count x body), calibrated on clang-22's decisions
        for the same HIP loops: it unrolls insertion sorts of 8, 12 and 16 elements
        (outer loop 7, 11, 15 trips x 36 nodes <= 600) and keeps 24 and 32 rolled (828,
        1116). LLVM's own estimate misses the 16-element one by a few instructions: the
        wraparound of ``a[j + 1]`` after ``while j >= 0 and ...`` stays (``j + 1`` may
        wrap as far as LLVM knows). The budget also bounds the copies: at most 600 nodes
        of straight-line code per unrolled loop before LLVM simplifies them."""
        return 600

    # ---------------------------------------------------------------- math
    def fp_contract(self) -> bool:
        """a*b+c fuses into FMAs by default, as hipcc's ``-ffp-contract=fast``."""
        return True

    def bf16_convert(self) -> bool:
        return self.arch_info.bf16_convert

    def matrix_op(self, fx, e, args):
        from pykern.codegen.amdgpu.matrix import AmdgpuMatrix

        ws = int(fx.options.wave_size or self.arch_info.effective_wave_size)
        return AmdgpuMatrix(self.arch_info.name, ws)(fx, e, args)

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

    def nanosleep(self, fx, ns) -> None:
        """``s_sleep`` takes an immediate (64 clocks per unit): sleep in steps of
        127 units (~8128 clocks, ~4 us at 2 GHz) until ``ns`` is used up, at
        least once -- a back-off delay of about ``ns``."""
        ir = _ir()
        b = fx.builder
        i32 = ir.IntType(32)
        sleep = fx.intrinsic("llvm.amdgcn.s.sleep", ir.VoidType(), [i32])
        slot = fx.alloca(i32, name="nanosleep.left")
        b.store(ns, slot)
        loop = fx.function.append_basic_block("nanosleep.loop")
        done = fx.function.append_basic_block("nanosleep.done")
        b.branch(loop)
        b.position_at_end(loop)
        b.call(sleep, [i32(127)])
        left = b.sub(b.load(slot), i32(4000))
        b.store(left, slot)
        b.cbranch(b.icmp_signed(">", left, i32(0)), loop, done)
        b.position_at_end(done)

    def _ocml(self, fx, name, args, bits):
        ir = _ir()
        b = fx.builder
        llty = args[0].type
        fn = self._declare(fx, f"__ocml_{_OCML_MATH[name]}_f{bits}", llty, [a.type for a in args])
        r = b.call(fn, args)
        x = args[0]
        if name in ("expm1", "log1p"):
            # ROCm's ocml answers +0.0 for -0.0 and flushes subnormals (log1p_f64(-5e-324) = 0.0);
            # below this bound x - x*x/2 and x + x*x/2 round to x itself (C, numpy, the cpu target)
            tiny = ir.Constant(llty, 2.0 ** (-60 if bits == 64 else -30))
            ax = self._call(fx, f"llvm.fabs.f{bits}", llty, [x])
            return b.select(b.fcmp_ordered("<", ax, tiny), x, r)
        if name == "nextafter":
            # ocml's step from the smallest subnormal towards zero lands on +0.0 from either side;
            # C's is a zero of x's sign (nextafter(-5e-324, 1.0) == -0.0), and y itself when x == y
            y = args[1]
            signed = self._call(fx, f"llvm.copysign.f{bits}", llty, [r, x])
            zero = b.select(b.fcmp_ordered("==", x, y), y, signed)
            return b.select(b.fcmp_ordered("==", r, ir.Constant(llty, 0.0)), zero, r)
        if name == "gamma":
            # ocml's tgamma_f32 underflows to +0.0 for every x < 0 (gamma(-48.5); its f64 keeps the
            # sign): the sign alternates, negative on (-k-1, -k) for even k = floor(-x), as C's
            c = lambda v: ir.Constant(llty, v)  # noqa: E731
            k = self._call(fx, f"llvm.floor.f{bits}", llty, [b.fneg(x)])
            half = b.fmul(k, c(0.5))
            even = b.fcmp_ordered("==", self._call(fx, f"llvm.floor.f{bits}", llty, [half]), half)
            signed = b.select(even, c(-0.0), c(0.0))
            under = b.and_(b.fcmp_ordered("==", r, c(0.0)), b.fcmp_ordered("<", x, c(0.0)))
            r = b.select(under, signed, r)
            # and a few ulps off at the integers: (n-1)! from a table there (target.py)
            return gamma_at_integers(fx, x, r, bits, CONST)
        return r

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
        from pykern.codegen import abi_map as abi
        from pykern.codegen.artifact import KernelArtifact

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
                      code_object_version=self.code_object_version, want_asm=False,  # amdgpu_build.assembly_of
                      externals=self.external_code(lowered))
        md = built.kernel_metadata(name)
        params = params_from_metadata(lowered.params, md)
        res = built.resources(name, block_size=min(256, self.max_block_size(opts)))
        messages = list(lowered.llmodule.__dict__.get("_pykern_error_messages", []))
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
            resources=res,
            code_object_version=self.code_object_version,
            device_libs=built.device_libs,
            error_messages=messages,
            error_symbol=ERROR_SYMBOL if messages else None,
            exceptions=list(info.exceptions),
            cooperative=any(s.kind == "grid_sync" for s in info.sync_sites),
        )
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
