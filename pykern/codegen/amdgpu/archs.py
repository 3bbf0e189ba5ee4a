"""AMD GPU architectures pykern compiles for: what each one has and how big it is.

``parse_target_id("gfx90a:xnack-:sramecc+")`` gives an :class:`Arch` with the
wave size, ISA version (``__oclc_ISA_version``), register file and LDS sizes
used for occupancy, and the features codegen cares about (float atomics).

The table below covers the common data-centre and RDNA parts. Any other
processor name LLVM's amdgcn backend knows is accepted too: its properties are
derived from the name's generation (``gfx<major><minor><stepping>``), and the
name is checked by asking LLVM (see :func:`llvm_knows`).

Example::

    >>> a = parse_target_id("gfx90a:xnack-")
    >>> a.name, a.wave_size, a.isa_version, a.target_id
    ('gfx90a', 64, 9010, 'gfx90a:xnack-')

Numbers come from LLVM's ``AMDGPUBaseInfo.cpp`` (IsaInfo: total/addressable
VGPRs, allocation granules, max waves per EU, LDS per CU).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from pykern.core.errors import CompileError


@dataclass(frozen=True)
class Arch:
    """One AMDGPU processor (plus target-id features) and its limits."""

    name: str  # processor, e.g. "gfx942"
    major: int
    minor: int
    stepping: int
    wave_size: int  # default wave size (64 on gfx9, 32 on RDNA)
    max_waves_per_simd: int  # hardware wave slots per SIMD ("EU")
    simds_per_cu: int  # SIMDs sharing one workgroup's LDS (CU, or WGP on RDNA)
    total_vgprs: int  # VGPRs per lane in one SIMD's register file
    vgpr_granule: int  # VGPR allocation granule (per wave)
    addressable_vgprs: int  # max VGPRs one wave may address (incl. AGPRs on gfx90a+)
    agprs: int  # accumulation registers (0 when the arch has none)
    total_sgprs: int  # SGPRs per SIMD (0: not an occupancy limit, RDNA)
    sgpr_granule: int
    addressable_sgprs: int
    lds_per_workgroup: int  # bytes one workgroup may allocate
    lds_per_cu: int  # bytes shared by the workgroups resident on one CU/WGP
    #: native float atomics in global memory, as LLVM type names
    fadd_atomic: frozenset = frozenset()
    fminmax_atomic: frozenset = frozenset()
    #: target-id features this processor supports ("xnack", "sramecc")
    supported_features: frozenset = frozenset()
    #: features set in the target id: name -> True (+) / False (-)
    features: tuple = ()
    #: wave size requested explicitly (RDNA can run wave64)
    wave64: bool = False
    generic: bool = False  # a "gfx9-generic"-style target (needs code object v6)
    #: one instruction rounds float32 to bfloat16 (``v_cvt_pk_bf16_f32``); elsewhere an integer sequence
    bf16_convert: bool = False
    known: bool = True  # from the table (False: derived from the name only)

    @property
    def isa_version(self) -> int:
        """``__oclc_ISA_version``: major*1000 + minor*100 + stepping."""
        return self.major * 1000 + self.minor * 100 + self.stepping

    @property
    def target_id(self) -> str:
        """Canonical target id, e.g. ``gfx90a:sramecc+:xnack-`` (LLVM's feature order)."""
        parts = [self.name]
        for feat, on in sorted(self.features):
            parts.append(f"{feat}{'+' if on else '-'}")
        return ":".join(parts)

    @property
    def llvm_features(self) -> str:
        """Feature string for LLVM's target machine (``+xnack,-sramecc``)."""
        feats = [f"{'+' if on else '-'}{feat}" for feat, on in sorted(self.features)]
        if self.wave64 and self.major >= 10:
            feats.append("+wavefrontsize64")
        return ",".join(feats)

    @property
    def bundle_id(self) -> str:
        """Clang offload bundle entry id (``hipv4-amdgcn-amd-amdhsa--gfx942``)."""
        return f"hipv4-amdgcn-amd-amdhsa--{self.target_id}"

    @property
    def effective_wave_size(self) -> int:
        return 64 if (self.wave64 or self.major < 10) else self.wave_size

    def vgpr_file(self, wave_size: int | None = None) -> int:
        """VGPRs per lane in one SIMD for the given wave size (RDNA halves it in wave64)."""
        ws = wave_size or self.effective_wave_size
        if self.major >= 10 and ws == 64:
            return self.total_vgprs // 2
        return self.total_vgprs

    def vgpr_alloc_granule(self, wave_size: int | None = None) -> int:
        ws = wave_size or self.effective_wave_size
        if self.major >= 10 and ws == 64:
            return self.vgpr_granule // 2
        return self.vgpr_granule


_GFX9_ATOMIC_SRAM = frozenset({"xnack", "sramecc"})


def _gfx9(name, minor, stepping, **kw):
    base = dict(
        major=9,
        minor=minor,
        stepping=stepping,
        wave_size=64,
        max_waves_per_simd=10,
        simds_per_cu=4,
        total_vgprs=256,
        vgpr_granule=4,
        addressable_vgprs=256,
        agprs=0,
        total_sgprs=800,
        sgpr_granule=16,
        addressable_sgprs=102,
        lds_per_workgroup=65536,
        lds_per_cu=65536,
        supported_features=frozenset({"xnack"}),
    )
    base.update(kw)
    return Arch(name=name, **base)


def _cdna(name, minor, stepping, **kw):
    # gfx90a and later CDNA: unified 512-entry VGPR+AGPR file, 8 waves/SIMD
    base = dict(
        max_waves_per_simd=8,
        total_vgprs=512,
        vgpr_granule=8,
        addressable_vgprs=512,
        agprs=256,
        fadd_atomic=frozenset({"float", "double"}),
        fminmax_atomic=frozenset({"double"}),
        supported_features=_GFX9_ATOMIC_SRAM,
    )
    base.update(kw)
    return _gfx9(name, minor, stepping, **base)


def _rdna(name, major, minor, stepping, *, full_vgprs=False, max_waves=16, **kw):
    base = dict(
        major=major,
        minor=minor,
        stepping=stepping,
        wave_size=32,
        max_waves_per_simd=max_waves,
        simds_per_cu=4,  # WGP mode (the default): 2 CUs x 2 SIMD32
        total_vgprs=1536 if full_vgprs else 1024,
        vgpr_granule=24 if full_vgprs else (16 if (major, minor) >= (10, 3) else 8),
        addressable_vgprs=256,
        agprs=0,
        total_sgprs=0,
        sgpr_granule=106,
        addressable_sgprs=106,
        lds_per_workgroup=65536,
        lds_per_cu=131072,  # WGP mode: both CUs' LDS
    )
    base.update(kw)
    return Arch(name=name, **base)


#: The architectures pykern documents and tests. Others LLVM knows also work.
ARCHS: dict[str, Arch] = {
    a.name: a
    for a in (
        _gfx9("gfx906", 0, 6, supported_features=_GFX9_ATOMIC_SRAM),
        _gfx9("gfx908", 0, 8, agprs=256, supported_features=_GFX9_ATOMIC_SRAM),
        _cdna("gfx90a", 0, 10),
        _cdna("gfx942", 4, 2),
        _cdna("gfx950", 5, 0, lds_per_workgroup=163840, lds_per_cu=163840, bf16_convert=True),
        _rdna("gfx1030", 10, 3, 0, fminmax_atomic=frozenset({"float", "double"})),
        _rdna("gfx1100", 11, 0, 0, full_vgprs=True, fadd_atomic=frozenset({"float"}),
              fminmax_atomic=frozenset({"float"})),
        _rdna("gfx1101", 11, 0, 1, full_vgprs=True, fadd_atomic=frozenset({"float"}),
              fminmax_atomic=frozenset({"float"})),
        _rdna("gfx1102", 11, 0, 2, fadd_atomic=frozenset({"float"}), fminmax_atomic=frozenset({"float"})),
        _rdna("gfx1200", 12, 0, 0, full_vgprs=True, fadd_atomic=frozenset({"float"}),
              fminmax_atomic=frozenset({"float"})),
        _rdna("gfx1201", 12, 0, 1, full_vgprs=True, fadd_atomic=frozenset({"float"}),
              fminmax_atomic=frozenset({"float"})),
    )
}

_PROC_RE = re.compile(r"^gfx(\d{1,2})([0-9a-f])([0-9a-f])$")
_GENERIC_RE = re.compile(r"^gfx(\d{1,2})(?:-(\d))?-generic$")


def _derived(name: str) -> Arch:
    """Properties of a processor not in the table, from its generation."""
    m = _PROC_RE.match(name)
    g = _GENERIC_RE.match(name)
    if m:
        major, minor, stepping = int(m.group(1)), int(m.group(2), 16), int(m.group(3), 16)
        generic = False
    else:
        assert g
        major, minor, stepping = int(g.group(1)), int(g.group(2) or 0), 0
        generic = True
    if major >= 10:
        full = major >= 11 and not generic and (major, minor, stepping) in ((11, 0, 0), (11, 0, 1), (11, 5, 1))
        a = _rdna(name, major, minor, stepping, full_vgprs=full,
                  max_waves=20 if (major, minor) < (10, 3) else 16)
        if (major, minor) < (10, 3):
            a = replace(a, supported_features=frozenset({"xnack"}))
    elif major == 9 and (minor >= 4 or (minor, stepping) == (0, 10)):
        a = _cdna(name, minor, stepping)
    else:
        a = _gfx9(name, minor, stepping)
        a = replace(a, major=major)
        if (major, minor, stepping) in ((9, 0, 6), (9, 0, 8)):
            a = replace(a, supported_features=_GFX9_ATOMIC_SRAM)
        if major < 9:
            a = replace(a, supported_features=frozenset({"xnack"}) if major == 8 else frozenset())
    return replace(a, generic=generic, known=False)


def known_names() -> list[str]:
    return sorted(ARCHS, key=lambda n: (len(n), n))


@lru_cache(maxsize=None)
def llvm_knows(processor: str, code_object_version: int = 6) -> bool:
    """Ask LLVM's amdgcn backend whether it knows ``processor``.

    Compiles an empty kernel and reads the ELF ``e_flags`` machine field
    (0 = unknown processor). LLVM prints a warning on stderr for unknown
    names; it is silenced here."""
    if not (_PROC_RE.match(processor) or _GENERIC_RE.match(processor)):
        return False
    if _GENERIC_RE.match(processor) and code_object_version < 6:
        # LLVM aborts the process (fatal error) for generic targets below COv6
        return False
    import struct

    from pykern.codegen.amdgpu import codeobject

    llvm = codeobject.llvm()

    src = (
        'target triple = "amdgcn-amd-amdhsa"\n'
        "define amdgpu_kernel void @probe() { ret void }\n"
        "!llvm.module.flags = !{!0}\n"
        f'!0 = !{{i32 1, !"amdhsa_code_object_version", i32 {code_object_version * 100}}}\n'
    )
    with codeobject.llvm_lock(), codeobject.quiet_stderr():
        tm = codeobject.target_machine(processor, "", opt=0)
        mod = llvm.parse_assembly(src)
        mod.data_layout = str(tm.target_data)
        obj = tm.emit_object(mod)
    e_flags = struct.unpack_from("<I", obj, 48)[0]
    return (e_flags & 0xFF) != 0


def parse_target_id(target_id: str, code_object_version: int = 5, wave64: bool = False) -> Arch:
    """Parse ``gfx90a``, ``gfx90a:xnack-``, ``gfx942:sramecc+:xnack-`` into an :class:`Arch`.

    Unknown processor names, unsupported or repeated features raise
    ``CompileError`` listing what is accepted.
    """
    if isinstance(target_id, Arch):
        return target_id
    if not isinstance(target_id, str) or not target_id.strip():
        raise CompileError(f"arch must be a string like 'gfx942', got {target_id!r}",
                           hint="known archs: " + ", ".join(known_names()))
    parts = target_id.strip().split(":")
    proc = parts[0].lower()
    m_old = _PROC_RE.match(proc)
    if m_old and int(m_old.group(1)) < 8:
        # LLVM aborts the process on wave ops (ds_bpermute) for gfx6/gfx7
        raise CompileError(f"{proc} is too old for pykern: gfx8 (GCN3) or newer is needed",
                           hint="known archs: " + ", ".join(known_names()))
    if proc in ARCHS:
        arch = ARCHS[proc]
    elif llvm_knows(proc, code_object_version):
        arch = _derived(proc)
    else:
        extra = ""
        if _GENERIC_RE.match(proc) and code_object_version < 6:
            extra = f" (generic targets need code_object_version=6, not {code_object_version})"
        raise CompileError(
            f"unknown AMD GPU architecture {proc!r}{extra}",
            hint="known archs: " + ", ".join(known_names())
            + "; any other processor LLVM's amdgcn target knows (e.g. gfx1151) is accepted too",
        )
    feats: dict[str, bool] = {}
    for p in parts[1:]:
        if len(p) < 2 or p[-1] not in "+-":
            raise CompileError(f"bad target-id feature {p!r} in {target_id!r}",
                               hint="features are written 'xnack+', 'xnack-', 'sramecc+' or 'sramecc-'")
        name, on = p[:-1].lower(), p[-1] == "+"
        if name not in arch.supported_features:
            sup = ", ".join(sorted(arch.supported_features)) or "none"
            raise CompileError(f"{proc} does not support target-id feature {name!r}",
                               hint=f"features {proc} accepts: {sup}")
        if name in feats:
            raise CompileError(f"target-id feature {name!r} given twice in {target_id!r}")
        feats[name] = on
    return replace(arch, features=tuple(sorted(feats.items())), wave64=bool(wave64 and arch.major >= 10))


def occupancy(arch: Arch, *, vgprs: int, agprs: int = 0, sgprs: int = 0, lds_bytes: int = 0,
              block_size: int = 256, wave_size: int | None = None) -> dict:
    """Waves per SIMD a kernel reaches, and what limits it.

    ``vgprs``/``agprs``/``sgprs`` per wave as reported by the code object
    metadata; ``lds_bytes`` per workgroup (static + dynamic). Follows LLVM's
    IsaInfo formulas. Returns ``{"waves_per_simd", "limited_by", "per_limit"}``.

    Example::

        >>> occupancy(ARCHS["gfx942"], vgprs=128, block_size=256)["waves_per_simd"]
        4
    """
    ws = wave_size or arch.effective_wave_size
    max_waves = arch.max_waves_per_simd
    limits = {"hardware": max_waves}
    # VGPRs: on gfx90a+ AGPRs live in the same file, after the VGPRs rounded to 4
    regs = vgprs
    if arch.agprs and arch.total_vgprs == 512 and agprs:
        regs = ((vgprs + 3) // 4) * 4 + agprs
    gran = arch.vgpr_alloc_granule(ws)
    total = arch.vgpr_file(ws)
    if regs >= gran:
        rounded = -(-regs // gran) * gran
        limits["vgprs"] = min(max(total // rounded, 1), max_waves)
    else:
        limits["vgprs"] = max_waves
    if arch.total_sgprs and sgprs:
        rounded = -(-sgprs // arch.sgpr_granule) * arch.sgpr_granule
        limits["sgprs"] = min(max(arch.total_sgprs // rounded, 1), max_waves)
    waves_per_group = -(-max(block_size, 1) // ws)
    if lds_bytes > 0:
        groups = arch.lds_per_cu // lds_bytes
        limits["lds"] = min(max_waves, (groups * waves_per_group) // arch.simds_per_cu) if groups else 0
    # workgroup slots: at most 16 barrier-using groups per CU (32 per WGP)
    if waves_per_group > 1:
        max_groups = min(max_waves * arch.simds_per_cu // waves_per_group, 32 if arch.major >= 10 else 16)
        limits["workgroups"] = min(max_waves, max(1, (max_groups * waves_per_group) // arch.simds_per_cu))
    waves = min(limits.values())
    limited_by = min(limits, key=lambda k: (limits[k], k != "hardware"))
    return {"waves_per_simd": waves, "limited_by": limited_by, "per_limit": limits}


def resources(metadata_kernel: dict, arch, block_size: int = 256, dynamic_shared: int = 0) -> dict:
    """Registers, memory and occupancy of one kernel (its ``amdhsa.kernels`` entry).

    ``arch`` is an ``archs.Arch`` or a target id string. Returns a dict with
    ``vgprs``, ``agprs``, ``sgprs``, ``lds_bytes`` (static), ``scratch_bytes``
    (per work-item), ``vgpr_spills``, ``sgpr_spills``, ``wave_size``,
    ``max_block_size``, ``waves_per_simd`` (occupancy at ``block_size`` with
    ``dynamic_shared`` extra LDS bytes) and ``occupancy_limited_by``.

    Example::

        >>> resources(md, "gfx942", 256)["vgprs"]      # doctest: +SKIP
        7
    """
    a = parse_target_id(arch) if isinstance(arch, str) else arch
    k = metadata_kernel
    wave = int(k.get(".wavefront_size", a.effective_wave_size))
    lds = int(k.get(".group_segment_fixed_size", 0))
    occ = occupancy(a, vgprs=int(k.get(".vgpr_count", 0)), agprs=int(k.get(".agpr_count", 0)),
                          sgprs=int(k.get(".sgpr_count", 0)), lds_bytes=lds + int(dynamic_shared),
                          block_size=int(block_size), wave_size=wave)
    return {
        "arch": a.target_id,
        "vgprs": int(k.get(".vgpr_count", 0)),
        "agprs": int(k.get(".agpr_count", 0)),
        "sgprs": int(k.get(".sgpr_count", 0)),
        "lds_bytes": lds,
        "scratch_bytes": int(k.get(".private_segment_fixed_size", 0)),
        "vgpr_spills": int(k.get(".vgpr_spill_count", 0)),
        "sgpr_spills": int(k.get(".sgpr_spill_count", 0)),
        "dynamic_stack": bool(k.get(".uses_dynamic_stack", False)),
        "wave_size": wave,
        "max_block_size": int(k.get(".max_flat_workgroup_size", 1024)),
        "kernarg_size": int(k.get(".kernarg_segment_size", 0)),
        "block_size": int(block_size),
        "waves_per_simd": occ["waves_per_simd"],
        "occupancy_limited_by": occ["limited_by"],
    }
