"""AMDGPU code objects: LLVM module -> linked ELF, its metadata, resources, bundles.

* :func:`emit` runs codegen on a fresh clone of the module per output (emitting
  assembly and then an object from the same module aborts LLVM once the kernel
  branches) and links the object with ld.lld into an ``ET_DYN`` code object.
* :func:`read_metadata` parses the ``NT_AMDGPU_METADATA`` note (msgpack).
* :func:`resources` summarises one kernel's registers, LDS, scratch and
  occupancy for a block size.
* :func:`bundle` writes a clang offload bundle holding several archs.

Example::

    >>> co = emit(module, arch)                                 # doctest: +SKIP
    >>> md = read_metadata(co.binary)["amdhsa.kernels"][0]      # doctest: +SKIP
    >>> archs.resources(md, "gfx942", 256)["waves_per_simd"]    # doctest: +SKIP
    8
"""

from __future__ import annotations

import io
import os
import struct
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

from pykern.core.errors import CompileError

TRIPLE = "amdgcn-amd-amdhsa"
NT_AMDGPU_METADATA = 32
BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
HOST_BUNDLE_ID = "host-x86_64-unknown-linux-gnu-"

def llvm():
    """llvmlite.binding with all targets and asm printers initialised (once;
    shared with the cpu target through ``llvm_util``)."""
    from pykern.codegen.llvm_util import llvm as _llvm

    return _llvm(all_targets=True)


def llvm_lock():
    """The process-wide lock around LLVM work (LLVM's global context is not thread-safe)."""
    from pykern.codegen.llvm_util import LLVM_LOCK

    return LLVM_LOCK


@lru_cache(maxsize=32)
def target_machine(cpu: str, features: str = "", opt: int = 3):
    """A cached amdgcn TargetMachine for ``cpu`` (a processor name LLVM knows)."""
    binding = llvm()
    with llvm_lock():
        target = binding.Target.from_triple(TRIPLE)
        return target.create_target_machine(cpu=cpu, features=features, opt=opt, reloc="pic",
                                            codemodel="default")


@contextmanager
def quiet_stderr():
    """Silence C-level stderr (LLVM's 'not a recognized processor' warnings)."""
    import sys

    try:
        sys.stderr.flush()
        fd = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(fd, 2)
        os.close(fd)


def module_flags_ir(code_object_version: int, md_id: int = 0) -> str:
    """The ``!llvm.module.flags`` text choosing the code object version
    (``md_id``: a metadata number not used elsewhere in the module)."""
    return (f"!llvm.module.flags = !{{!{md_id}}}\n"
            f'!{md_id} = !{{i32 1, !"amdhsa_code_object_version", i32 {code_object_version * 100}}}\n')


def optimize(module, tm, level: int = 3) -> None:
    """Run the new-pass-manager pipeline at ``level`` on ``module`` in place
    (runtime-unrolled loops get their remainder as a prolog: :func:`prolog_remainders`)."""
    binding = llvm()
    pto = binding.create_pipeline_tuning_options(level)
    pb = binding.create_pass_builder(tm, pto)
    mpm = pb.getModulePassManager()
    try:
        with prolog_remainders():
            mpm.run(module, pb)
    finally:
        from pykern.codegen.llvm_util import _dispose_pass_manager

        _dispose_pass_manager(mpm)  # llvmlite 0.50 would keep it forever


#: LLVM's switch between the two remainder shapes of a runtime-unrolled loop
UNROLL_REMAINDER_OPTION = "-unroll-runtime-epilog"


@contextmanager
def prolog_remainders():
    """While held, LLVM's runtime unroller puts a loop's leftover iterations in a
    prolog (``n % k`` single iterations, then the ``k``-times unrolled loop) rather
    than in an epilog. Its own heuristic picks the epilog for every loop whose
    counter starts at a constant, i.e. every ``range`` loop. The epilog's CFG is
    not structured: a short trip count branches from before the unrolled loop
    straight into the remainder, which the unrolled loop's exit also enters, and
    the AMDGPU backend must structurize it (StructurizeCFG: flow blocks whose
    predicates are lane masks, ``s_cselect``/``s_and vcc, exec``/two branches);
    the prolog shape is two plain ifs. block_sum (its partial-sum loop), in
    instructions: 149 -> 144 on gfx942, 156 -> 151 on gfx90a, 197 -> 188 on
    gfx1201, and on gfx1100 177 -> 171 plus the s_nop padding before the
    64-byte-aligned loop head (7 -> 10), 184 -> 181 in all (clang-22 -O3 HIP:
    183). No other benchmark kernel changes.

    The switch is an LLVM command-line option, global to the process, and once
    given it overrides the heuristic for good: so it is set only around an
    AMDGPU pipeline and set back to the epilog afterwards, under the LLVM lock
    (the cpu target runs its pipelines under the same lock). The cpu target,
    after an AMDGPU compile in the same process, thus gets the epilog the
    heuristic chooses for constant-start counters on every runtime-unrolled
    loop; either shape computes the same values in the same order."""
    binding = llvm()
    with llvm_lock():
        binding.set_option("pykern", f"{UNROLL_REMAINDER_OPTION}=false")
        try:
            yield
        finally:
            binding.set_option("pykern", f"{UNROLL_REMAINDER_OPTION}=true")


def verify(module, what: str = "generated LLVM IR") -> None:
    """Verify ``module``; an invalid module would abort the process in codegen."""
    try:
        module.verify()
    except RuntimeError as e:
        raise CompileError(f"internal error: {what} does not verify: {e}",
                           hint="this is a pykern bug; please report it with the kernel source") from None


@dataclass
class Emitted:
    """What :func:`emit` produces."""

    binary: bytes  # linked ET_DYN code object
    obj: bytes  # the relocatable object lld linked
    asm: str
    llvm_ir: str  # after optimisation


def emit(module, arch, *, want_asm: bool = True, link: bool = True, on_object=None) -> Emitted:
    """Codegen ``module`` (verified, optimised) for ``arch`` (an ``archs.Arch``).

    Each output comes from its own clone of the module. Returns the linked
    code object, the object file, assembly and the final IR. ``on_object(obj)``
    is called as soon as the object exists, before the assembly is made (so
    that the caller can start ld.lld in parallel with it)."""
    tm = target_machine(arch.name, arch.llvm_features)
    with llvm_lock():
        verify(module, "optimised LLVM IR")
        ir_text = str(module)
        try:
            obj = tm.emit_object(module.clone())
            if on_object is not None:
                on_object(obj)
            asm = tm.emit_assembly(module.clone()) if want_asm else ""
        except RuntimeError as e:
            raise CompileError(f"AMDGPU code generation failed for {arch.target_id}: {e}") from None
    binary = b""
    if link:
        from pykern.codegen.amdgpu import toolchain

        binary = toolchain.link_shared(obj)
    return Emitted(binary=binary, obj=obj, asm=asm, llvm_ir=ir_text)


# --------------------------------------------------------------------------
# ELF and metadata
# --------------------------------------------------------------------------


def elf_header(code_object: bytes) -> dict:
    """``e_type``, ``osabi``, ``abiversion``, ``e_flags``, ``machine`` of an AMDGPU ELF."""
    if code_object[:4] != b"\x7fELF":
        raise CompileError("not an ELF code object")
    e_type, e_machine = struct.unpack_from("<HH", code_object, 16)
    e_flags = struct.unpack_from("<I", code_object, 48)[0]
    return {"e_type": e_type, "machine": e_machine, "osabi": code_object[7], "abiversion": code_object[8],
            "e_flags": e_flags, "mach": e_flags & 0xFF}


def read_metadata(code_object: bytes) -> dict:
    """Parse the ``NT_AMDGPU_METADATA`` note of a code object (linked or not).

    Returns the msgpack document as a dict (keys ``amdhsa.version``,
    ``amdhsa.target``, ``amdhsa.kernels``...). Strings are decoded.

    Example::

        >>> md = read_metadata(hsaco)                  # doctest: +SKIP
        >>> md["amdhsa.kernels"][0][".symbol"]         # doctest: +SKIP
        'saxpy.kd'
    """
    import msgpack
    from elftools.elf.elffile import ELFFile

    try:
        elf = ELFFile(io.BytesIO(code_object))
    except Exception as e:  # elftools raises several kinds
        raise CompileError(f"cannot parse code object ELF: {e}") from None
    for sec in elf.iter_sections():
        if sec.header["sh_type"] != "SHT_NOTE":
            continue
        # parse notes by hand: pyelftools does not know AMDGPU note types
        data = sec.data()
        off = 0
        while off + 12 <= len(data):
            namesz, descsz, ntype = struct.unpack_from("<III", data, off)
            off += 12
            name = data[off:off + namesz].rstrip(b"\0")
            off += (namesz + 3) & ~3
            desc = data[off:off + descsz]
            off += (descsz + 3) & ~3
            if name == b"AMDGPU" and ntype == NT_AMDGPU_METADATA:
                return msgpack.unpackb(desc, raw=False, strict_map_key=False)
    raise CompileError("code object has no AMDGPU metadata note (NT_AMDGPU_METADATA)")


def kernel_metadata(code_object_or_md, name: str) -> dict:
    """The ``amdhsa.kernels`` entry whose ``.name`` is ``name``."""
    md = code_object_or_md if isinstance(code_object_or_md, dict) else read_metadata(code_object_or_md)
    for k in md.get("amdhsa.kernels", []):
        if k.get(".name") == name:
            return k
    names = [k.get(".name") for k in md.get("amdhsa.kernels", [])]
    raise CompileError(f"kernel {name!r} not in code object metadata (has {names})")


def symbols(code_object: bytes) -> list[dict]:
    """Dynamic+static symbols: ``name``, ``type``, ``bind``, ``defined``."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    out = []
    elf = ELFFile(io.BytesIO(code_object))
    for sec in elf.iter_sections():
        if isinstance(sec, SymbolTableSection):
            for s in sec.iter_symbols():
                if not s.name:
                    continue
                out.append({"name": s.name, "type": s["st_info"]["type"], "bind": s["st_info"]["bind"],
                            "defined": s["st_shndx"] != "SHN_UNDEF", "section": sec.name})
    return out


# --------------------------------------------------------------------------
# Clang offload bundles
# --------------------------------------------------------------------------


def _bundle_id(arch_target_id: str) -> str:
    if arch_target_id.startswith(("hip-", "hipv4-", "host-", "openmp-")):
        return arch_target_id
    return f"hipv4-{TRIPLE}--{arch_target_id}"


def bundle(entries, align: int = 4096) -> bytes:
    """Write a clang offload bundle (``__CLANG_OFFLOAD_BUNDLE__``) of code objects.

    ``entries`` is a list of ``(target_id, code_object_bytes)``; a target id
    like ``gfx942`` or ``gfx90a:xnack-`` becomes the entry id
    ``hipv4-amdgcn-amd-amdhsa--gfx942``. An empty host entry comes first, as
    clang-offload-bundler writes it. Layout: magic, u64 count, then per entry
    u64 offset, u64 size, u64 id length, id; code objects follow, each at an
    ``align``-aligned offset.

    Example::

        >>> b = bundle([("gfx90a", co90a), ("gfx942", co942)])   # doctest: +SKIP
    """
    items = [(HOST_BUNDLE_ID, b"")] + [(_bundle_id(t), bytes(co)) for t, co in entries]
    ids = [i for i, _ in items]
    if len(set(ids)) != len(ids):
        raise CompileError(f"duplicate targets in offload bundle: {ids}")
    header_size = len(BUNDLE_MAGIC) + 8 + sum(24 + len(i.encode()) for i in ids)
    offsets = []
    pos = header_size
    for _, data in items:
        if data:
            pos = -(-pos // align) * align
        offsets.append(pos)
        pos += len(data)
    out = bytearray(BUNDLE_MAGIC)
    out += struct.pack("<Q", len(items))
    for (i, data), off in zip(items, offsets):
        idb = i.encode()
        out += struct.pack("<QQQ", off, len(data), len(idb)) + idb
    for (_, data), off in zip(items, offsets):
        if data:
            out += b"\0" * (off - len(out))
            out += data
    return bytes(out)


def unbundle(blob: bytes) -> dict:
    """Read a clang offload bundle: ``{entry_id: bytes}`` (the inverse of :func:`bundle`)."""
    if not blob.startswith(BUNDLE_MAGIC):
        raise CompileError("not a clang offload bundle (missing __CLANG_OFFLOAD_BUNDLE__ magic)")
    pos = len(BUNDLE_MAGIC)
    (n,) = struct.unpack_from("<Q", blob, pos)
    pos += 8
    out = {}
    for _ in range(n):
        off, size, idlen = struct.unpack_from("<QQQ", blob, pos)
        pos += 24
        eid = blob[pos:pos + idlen].decode()
        pos += idlen
        if off + size > len(blob):
            raise CompileError(f"offload bundle entry {eid} runs past the end of the file")
        out[eid] = blob[off:off + size]
    return out
