"""Building amdgcn code objects: the build half of the amdgpu target (``amdgpu/target.py`` is the
``Target`` half, what lowering asks of the hardware).

``prepare_ir`` adjusts the lowered IR text (launch bounds, register limits,
argument ranges, allocas in the private address space, float atomics),
``build`` links the device libraries, optimises, emits and links with ld.lld,
``params_from_metadata`` takes the argument offsets from the code object.

Example::

    >>> b = compile_llvm_ir(LL, "gfx90a")                 # doctest: +SKIP
    >>> b.binary[:4]                                      # doctest: +SKIP
    b'\\x7fELF'
"""

from __future__ import annotations

import re

from pykern.core import abi as _shared_abi
from pykern.core.errors import CompileError
from pykern.codegen.amdgpu import archs as _archs

TRIPLE = "amdgcn-amd-amdhsa"
GLOBAL, SHARED, CONST, PRIVATE = 1, 3, 4, 5


def arg_name(p) -> str:
    """LLVM name of the kernel argument of flat parameter ``p``."""
    return re.sub(r"[^A-Za-z0-9_.]", "_", p.name)


def shape_ranges(params: list) -> dict:
    """``{argument name: (lo, hi)}``: the value range ``[lo, hi)`` of every
    ``shape`` parameter: an extent is >= 0 and at most
    ``ranges.max_extent`` (numpy's limit). With it LLVM knows that a non-negative
    index below an extent plus a grid stride cannot overflow, so the
    wraparound of negative indices folds away in grid-stride loops.

    Example::

        >>> from pykern.codegen.abi_map import flatten_params
        >>> from pykern.frontend import types as T
        >>> shape_ranges(flatten_params([T.Array(T.float64, 1)], ["x"]))
        {'x.shape0': (0, 1152921504606846976)}
    """
    from pykern.codegen.lowering.ranges import max_extent

    out = {}
    largest = max_extent(None)
    for p in params:
        if p.role == "data":
            largest = max_extent(p.type.dtype)
        elif p.role == "shape":
            out[arg_name(p)] = (0, largest + 1)
    return out


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
        n = int(max_registers)
        if arch is not None and getattr(arch, "agprs", 0) and getattr(arch, "total_vgprs", 0) == 512:
            # gfx90a+ (unified VGPR/AGPR file): LLVM doubles "amdgpu-num-vgpr" there,
            # so halve it for the code object's .vgpr_count to honour the cap
            n = max(1, n // 2)
        attrs += f' "amdgpu-num-vgpr"="{n}"'
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
        from pykern.codegen.amdgpu import codeobject

        self.binary = emitted.binary
        self.obj = emitted.obj
        self.asm = emitted.asm
        self.llvm_ir = emitted.llvm_ir
        self.arch = arch
        self.device_libs = device_libs
        self.metadata = codeobject.read_metadata(self.binary) if self.binary else {}

    def kernel_metadata(self, name: str) -> dict:
        from pykern.codegen.amdgpu import codeobject

        return codeobject.kernel_metadata(self.metadata, name)

    def resources(self, name: str, block_size: int = 256) -> dict:
        return _archs.resources(self.kernel_metadata(name), self.arch, block_size)


def build(ir_text: str, arch, *, kernel_names=(), fastmath: bool = False, opt: int = 3,
          code_object_version: int = 5, want_asm: bool = True, externals=None) -> Built:
    """LLVM IR text (amdgcn) -> linked code object: verify, link device libs
    if called, internalise, O3, emit (fresh clone per output), ld.lld.

    ``arch`` is an ``archs.Arch`` or target id. Adds the triple, data layout
    and code object version flag when the text lacks them.

    Example::

        >>> b = build(open("k.ll").read(), "gfx942", kernel_names=["k"])   # doctest: +SKIP
        >>> b.kernel_metadata("k")[".vgpr_count"]                          # doctest: +SKIP
    """
    from pykern.codegen.amdgpu import toolchain

    a = _archs.parse_target_id(arch, code_object_version) if isinstance(arch, str) else arch
    # ld.lld starts up (~6 ms, loading libLLVM) while LLVM optimises; it reads the object
    # from a named pipe once emitted, then links in ~3 ms while LLVM writes the assembly
    link = toolchain.start_link_shared_early()
    try:
        emitted, libs = _emit(ir_text, a, opt, kernel_names, want_asm, fastmath, code_object_version, link.feed,
                              externals)
    except BaseException:
        link.discard()  # reap the linker and its temporary directory
        raise
    # waited for outside the lock: other threads may use LLVM meanwhile
    emitted.binary = link.result()
    return Built(emitted, a, libs)


def _emit(ir_text, a, opt, kernel_names, want_asm, fastmath, code_object_version, on_object,
          externals=None) -> tuple:
    """(``codeobject.Emitted`` without its linked binary, device libraries linked) of
    :func:`build`; ``on_object(obj)`` is called as soon as the object exists; ``externals``:
    ``(link items, symbols, store)`` of external code, linked before the device libraries
    (which the external code may call) and before optimising (so its calls inline)."""
    from pykern.codegen.amdgpu import codeobject
    from pykern.codegen.amdgpu import devicelibs

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
        if int(opt) > 0:  # the kernel's own code only: before the device libraries are linked
            _fold_guarded_indices(mod, tm)
        if externals is not None:
            from pykern.codegen import external_build as external

            items, symbols, store = externals
            external.link(mod, items, symbols, tm=tm, target="amdgpu", arch=a,
                          code_object_version=code_object_version, store=store)
        libs = devicelibs.link(mod, a, fastmath=fastmath, code_object_version=code_object_version,
                               kernel_names=kernels)
        if libs:
            codeobject.verify(mod, "LLVM IR after linking the device libraries")
        codeobject.optimize(mod, tm, max(0, min(3, int(opt))))
        if libs and "ockl" in libs:  # only ockl has such asm
            mod = _drop_comment_asm(binding, mod)
        if int(opt) > 0:
            mod = _load_kernargs_together(binding, mod, kernels)
        emitted = codeobject.emit(mod, a, want_asm=want_asm, link=False, on_object=on_object)
    return emitted, libs


def _fold_guarded_indices(mod, tm) -> None:
    """SROA and InstCombine once before the O<n> pipeline, so that a negative-index
    wraparound (``i < 0 ? i + n : i``) under a guard that rules it out (``while j >= 0
    and a[j] > v: ... a[j]``) is folded before SimplifyCFG merges the loop's exits into
    one ``select``: with the exits apart, the exit with a constant trip count lets the
    unroller fully unroll small loops over local arrays, as clang does for HIP (the
    insertion sort of ``benchmarks/kernels.py``: 779 -> 392 instructions on gfx942).
    pykern's integers wrap, so LLVM can fold the wraparound only from the guard, not
    from ``nsw`` arithmetic as in C."""
    from pykern.codegen.llvm_util import run_passes

    run_passes(mod, tm, ("sroa", "instruction_combine"), speed_level=1)


#: bytes of explicit kernel arguments :func:`_load_kernargs_together` may load at once (32 SGPRs)
KERNARG_WINDOW = 128
#: the widest scalar load (``s_load_b512``, 16 SGPRs)
SCALAR_LOAD_BYTES = 64
_ARG_BYTES = {"i1": 1, "i8": 1, "i16": 2, "half": 2, "bfloat": 2, "i32": 4, "float": 4, "i64": 8,
              "double": 8, "ptr": 8, "ptr addrspace(1)": 8, "ptr addrspace(4)": 8,
              "ptr addrspace(3)": 4, "ptr addrspace(5)": 4}


def _split_params(text: str) -> list:
    """``[(type, name)]`` of an LLVM ``define`` parameter list (commas inside
    ``range(i64 a, b)`` do not split)."""
    out = []
    for part in re.split(r",(?![^()]*\))", text):  # (attribute parentheses do not nest)
        part = part.strip()
        if not part:
            continue
        toks = part.split()
        ty = toks[0] + (" " + toks[1] if toks[0] == "ptr" and len(toks) > 1 and toks[1].startswith("addrspace(")
                        else "")
        out.append((ty, toks[-1]))
    return out


def _load_kernargs_together(binding, mod, kernel_names):
    """Keep every explicit argument from the first one the optimised kernel reads
    up to the last (at most :data:`KERNARG_WINDOW` bytes) alive in the entry block
    with ``llvm.fake.use`` (no machine code). Without it LLVM loads only the
    arguments the kernel reads, each where it is used: the strides of contiguous
    arrays, which pykern's ABI passes and most kernels never read, leave holes in
    the kernarg segment, so the loads stay separate ``s_load_b64``/``b128`` (plus
    ``s_clause`` and waits) where clang's HIP kernels get one ``s_load_b256/b512``.
    Measured: matmul gfx942 131 -> 122 instructions, saxpy gfx1100 31 -> 27,
    insertion sort gfx1201 422 -> 411. The code object's ``.args`` do not change."""
    text = str(mod)
    edits = []
    for name in kernel_names:
        m = re.search(r'^define\s[^@\n]*amdgpu_kernel\s[^@\n]*@"?' + re.escape(name) + r'"?\((.*)\)[^\n]*\{\n',
                      text, flags=re.M)
        if not m:
            continue
        params = _split_params(m.group(1))
        if any(ty not in _ARG_BYTES for ty, _ in params):
            continue  # an aggregate or vector argument: offsets not computed here
        end = text.find("\n}\n", m.end())
        body = text[m.end():end]
        offsets, off = [], 0
        for ty, _ in params:
            size = _ARG_BYTES[ty]
            off = -(-off // size) * size
            offsets.append(off)
            off += size
        used = [i for i, (_, n) in enumerate(params) if re.search(re.escape(n) + r'(?![\w.$"-])', body)]
        if not used:
            continue
        lo = offsets[used[0]]
        hi = min(offsets[used[-1]] + _ARG_BYTES[params[used[-1]][0]], lo + KERNARG_WINDOW)
        keep = [i for i in range(used[0], len(params)) if offsets[i] + _ARG_BYTES[params[i][0]] <= hi]
        if len(keep) < 2:
            continue
        calls = "".join(f"  call void (...) @llvm.fake.use({params[i][0]} {params[i][1]})\n" for i in keep)
        top, after_hidden = _fake_use_offsets(body)
        edits.append((m.end() + top, calls))
        if after_hidden != top and hi - lo > SCALAR_LOAD_BYTES:
            # several loads in flight: keep their registers until the hidden loads are issued
            edits.append((m.end() + after_hidden, calls))
    if not edits:
        return mod
    for at, calls in sorted(edits, reverse=True):
        text = text[:at] + calls + text[at:]
    if "declare void @llvm.fake.use" not in text:
        text += "\ndeclare void @llvm.fake.use(...)\n"
    try:  # an optimisation only: IR it cannot rewrite keeps its separate loads
        new = binding.parse_assembly(text)
        new.verify()
    except RuntimeError:
        return mod
    new.triple, new.data_layout = mod.triple, mod.data_layout
    return new


def _fake_use_offsets(body: str) -> tuple:
    """(top of the entry block, just after its last load from the constant
    address space whose value the entry block uses) as offsets into a kernel's
    body text: where :func:`_load_kernargs_together` puts its ``llvm.fake.use``
    calls. Those loads are the hidden arguments (group sizes; the block count
    when used at once). The calls at the top make LLVM load the argument window
    first; the register of an argument kept only by them is dead right after,
    and the allocator may hand it to a hidden-argument load issued while the
    window's loads are still in flight: write after write, so a wait and a second
    ``s_clause``. A second set of calls after the hidden loads keeps those
    registers busy until then and all loads form one clause (matmul: 162 -> 159
    instructions on gfx1100, 176 -> 172 on gfx1201, 121 -> 120 on gfx942). Done
    only for windows of more than one ``s_load_b512``: on block_sum's 32-byte
    window it only moved other instructions (+1 on gfx1100 and gfx1201)."""
    lines = body.split("\n")
    top = len(lines[0]) + 1 if re.match(r'^("[^"]*"|[-\w.$]+):', lines[0]) else 0
    entry, ends, loads = [], [], []
    off = 0
    for ln in lines:
        off += len(ln) + 1
        if off <= top:
            continue
        s = ln.strip()
        if re.match(r'^("[^"]*"|[-\w.$]+):', s):  # the next block: the entry block is over
            break
        entry.append(s)
        ends.append(off)
        m = re.match(r'(%(?:"[^"]*"|[-\w.$]+)) = load [^,]+, ptr addrspace\(4\) ', s)
        if m:
            loads.append((len(entry) - 1, m.group(1)))
    after = top
    for k, name in loads:
        if any(re.search(re.escape(name) + r'(?![\w.$"-])', later) for later in entry[k + 1:]):
            after = ends[k]
    return top, after


#: ockl's "hoisting hack" inline asm: a comment with the value tied in a VGPR
#: (``asm sideeffect "; ...", "=v,0"(i32 %x)``), e.g. in the hostcall behind printf
_COMMENT_ASM = re.compile(
    r'(%[\w.]+) = (?:tail |notail |musttail )?call (i32|i64) asm sideeffect "; [^"]*", "=v,0"'
    r'\((?:i32|i64) (?:noundef )?(%[\w.]+)\)[^\n]*'
)


def _drop_comment_asm(binding, mod):
    """Replace comment-only inline asm with ``freeze`` (the identity it is): llvmlite
    has no AMDGPU asm parser, and LLVM's object streamer aborts the process on any
    inline asm without one. Done after optimisation, when IR passes already
    respected the asm as a barrier; the callers that rely on it (ockl's hostcall)
    are ``optnone`` and keep the call boundary."""
    text = str(mod)
    if "asm sideeffect" not in text:
        return mod
    text = _COMMENT_ASM.sub(r"\1 = freeze \2 \3", text)
    if re.search(r"\basm\s+sideeffect\b", text):
        raise CompileError("internal error: the kernel contains inline assembly pykern cannot emit",
                           hint="llvmlite has no AMDGPU assembly parser")
    new = binding.parse_assembly(text)
    new.triple, new.data_layout = mod.triple, mod.data_layout
    codeobject_verify = __import__("pykern.codegen.amdgpu.codeobject", fromlist=["verify"]).verify
    codeobject_verify(new, "LLVM IR after removing comment-only inline asm")
    return new


def _kernel_names(ir_text: str) -> list:
    return re.findall(r'^define\s[^@]*amdgpu_kernel[^@]*@"?([\w.$-]+)"?\(', ir_text, flags=re.M)


def params_from_metadata(params: list, md: dict) -> list:
    """``params`` (``abi.FlatParam``) with offsets taken from the code object's
    explicit ``.args``; raises ``CompileError`` if the two disagree in count
    or size (the runtime would pack the arguments wrongly)."""
    try:
        return _shared_abi.at_metadata_offsets(params, md.get(".args", []))
    except ValueError as e:
        raise CompileError(f"internal error: {e}") from None


def compile_llvm_ir(ir_text: str, arch: str = "gfx942", code_object_version: int = 5, **kw) -> Built:
    """Convenience: :func:`build` for hand-written amdgcn LLVM IR (tests, tools).

    Example::

        >>> b = compile_llvm_ir(LL, "gfx90a")                 # doctest: +SKIP
        >>> b.binary[:4]                                      # doctest: +SKIP
        b'\\x7fELF'
    """
    a = _archs.parse_target_id(arch, code_object_version)
    return build(ir_text, a, code_object_version=code_object_version, **kw)


def assembly_of(artifact) -> str:
    """The assembly listing of an amdgpu ``KernelArtifact``: its own when it
    has one, else made now from its optimised IR (a compile does not emit it:
    that is a second full codegen run, a quarter of a small kernel's compile).

    Example: ``"s_endpgm" in assembly_of(art)``"""
    if artifact.asm:
        return artifact.asm
    a = _archs.parse_target_id(artifact.arch, artifact.code_object_version,
                              wave64=artifact.wave_size == 64)
    from pykern.codegen.amdgpu import codeobject

    tm = codeobject.target_machine(a.name, a.llvm_features)
    binding = codeobject.llvm()
    with codeobject.llvm_lock():
        try:
            return tm.emit_assembly(binding.parse_assembly(artifact.llvm_ir))
        except RuntimeError as e:
            raise CompileError(f"AMDGPU assembly listing failed for {a.target_id}: {e}") from None
