"""ROCm device libraries (ocml for math, ockl for helpers): finding and linking them.

Kernels that call ``__ocml_*`` / ``__ockl_*`` functions get those bitcode
libraries linked in; kernels that call none get nothing (and need no libs
installed). Places searched, in order:

1. ``PYKERN_DEVICE_LIBS`` (a directory holding ``ocml.bc`` and ``ockl.bc``),
2. ``$ROCM_PATH/amdgcn/bitcode``,
3. ``/opt/rocm/amdgcn/bitcode``,
4. clang resource dirs ``.../lib/llvm/lib/clang/NN/lib/amdgcn/bitcode`` under
   ``$ROCM_PATH``, ``/opt/rocm`` and pip ROCm SDK packages (newest NN first),
5. Debian/Ubuntu ``/usr/lib/<multiarch>/amdgcn/bitcode`` (``rocm-device-libs``).

The ``__oclc_*`` control constants are defined here per arch and fast-math
setting instead of linking the ``oclc_*.bc`` files (Debian's set lacks
gfx942/gfx11 ISA files).

Example::

    >>> from pykern.codegen.amdgpu import devicelibs
    >>> devicelibs.needed_libs(["__ocml_sin_f64", "foo"])
    ['ocml']
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import sys
import sysconfig
from functools import lru_cache

from pykern.core import settings
from pykern.core.errors import CompileError

LIBS = ("ocml", "ockl")
INSTALL_HINT = (
    "install the ROCm device libraries: `apt-get install rocm-device-libs` (Debian/Ubuntu) or ROCm, "
    "or point PYKERN_DEVICE_LIBS at a directory containing ocml.bc and ockl.bc"
)


def _clang_resource_dirs(root: str) -> list[str]:
    pats = [
        os.path.join(root, "lib", "llvm", "lib", "clang", "*", "lib", "amdgcn", "bitcode"),
        os.path.join(root, "llvm", "lib", "clang", "*", "lib", "amdgcn", "bitcode"),
    ]
    found = [p for pat in pats for p in glob.glob(pat)]

    def version(p: str) -> int:
        m = re.search(r"clang[/\\](\d+)", p)
        return int(m.group(1)) if m else 0

    return sorted(found, key=version, reverse=True)


def search_dirs(env: dict | None = None) -> list[tuple[str, str]]:
    """Every directory looked at, in order, as ``(description, path)``."""
    env = os.environ if env is None else env
    out: list[tuple[str, str]] = []
    explicit = settings.get("PYKERN_DEVICE_LIBS", env)
    if explicit:
        out.append(("$PYKERN_DEVICE_LIBS", explicit))
    rocm = env.get("ROCM_PATH")
    if rocm:
        out.append(("$ROCM_PATH/amdgcn/bitcode", os.path.join(rocm, "amdgcn", "bitcode")))
    out.append(("/opt/rocm/amdgcn/bitcode", "/opt/rocm/amdgcn/bitcode"))
    roots = ([rocm] if rocm else []) + ["/opt/rocm"]
    for root in roots:
        for p in _clang_resource_dirs(root):
            out.append(("clang resource dir", p))
        out.append(("clang resource dir", os.path.join(root, "lib", "llvm", "lib", "clang", "NN", "lib",
                                                       "amdgcn", "bitcode")))
    # pip ROCm SDK ("TheRock") wheels keep a clang resource dir inside site-packages
    for sp in dict.fromkeys(p for p in sys.path if p and os.path.isdir(p)):
        for pkg in glob.glob(os.path.join(sp, "_rocm_sdk*")):
            for p in _clang_resource_dirs(pkg):
                out.append(("pip ROCm SDK", p))
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    debian = [f"/usr/lib/{multiarch}/amdgcn/bitcode"] if multiarch else []
    debian += sorted(set(glob.glob("/usr/lib/*/amdgcn/bitcode")) - set(debian))
    debian.append("/usr/lib/amdgcn/bitcode")
    for p in debian:
        out.append(("Debian rocm-device-libs", p))
    return out


def _complete(path: str) -> bool:
    return all(os.path.isfile(os.path.join(path, f"{lib}.bc")) for lib in LIBS)


def find_dir(env: dict | None = None) -> str:
    """The directory with ``ocml.bc``/``ockl.bc``; ``CompileError`` listing every place tried."""
    env = os.environ if env is None else env
    tried = search_dirs(env)
    explicit = settings.get("PYKERN_DEVICE_LIBS", env)
    if explicit and not _complete(explicit):
        raise CompileError(f"PYKERN_DEVICE_LIBS={explicit} does not contain ocml.bc and ockl.bc",
                           hint=INSTALL_HINT)
    for _, p in tried:
        if _complete(p):
            return p
    places = "\n".join(f"  - {desc}: {p}" for desc, p in dict.fromkeys(tried))
    raise CompileError("ROCm device libraries (ocml.bc, ockl.bc) not found; the kernel calls math "
                       "functions that need them. Looked in:\n" + places, hint=INSTALL_HINT)


def _stamp(st) -> tuple:
    # ctime too: a rewrite in place that keeps the size and restores the mtime still moves it (the
    # cache key's file_digest sees it; the bytes linked must be the ones it digested)
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


@lru_cache(maxsize=8)
def _read(path: str, stamp: tuple) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def library_bytes(lib: str, env: dict | None = None) -> bytes:
    """Bytes of ``lib``.bc (read once per file version and cached; parse them
    again for each link because ``link_in`` consumes the parsed module)."""
    path = os.path.join(find_dir(env), f"{lib}.bc")
    st = os.stat(path)
    return _read(path, _stamp(st))


def content_hash(env: dict | None = None) -> str:
    """sha256 of the device libraries' bytes (for the compile cache key);
    ``"none"`` when no libraries are installed."""
    try:
        d = find_dir(env)
    except CompileError:
        return "none"
    stamps = tuple(_stamp(st) for st in (os.stat(os.path.join(d, f"{lib}.bc")) for lib in LIBS))
    return _hash_dir(d, stamps)


@lru_cache(maxsize=8)
def _hash_dir(d: str, stamps: tuple) -> str:
    h = hashlib.sha256()
    for lib in LIBS:
        h.update(lib.encode())
        path = os.path.join(d, f"{lib}.bc")
        st = os.stat(path)
        h.update(_read(path, _stamp(st)))
    h.update(d.encode())
    return h.hexdigest()


def needed_libs(function_names) -> list[str]:
    """Which libraries the given referenced function names need (in link order)."""
    names = list(function_names)
    return [lib for lib in LIBS if any(n.startswith(f"__{lib}_") for n in names)]


def control_constants(arch, *, fastmath: bool = False, code_object_version: int = 5,
                      wave_size: int | None = None) -> str:
    """LLVM IR defining the ``__oclc_*`` constants ocml/ockl read."""
    ws = wave_size or arch.effective_wave_size
    flags = {
        "__oclc_finite_only_opt": int(bool(fastmath)),
        "__oclc_unsafe_math_opt": int(bool(fastmath)),
        "__oclc_daz_opt": 0,
        "__oclc_correctly_rounded_sqrt32": 1,
        "__oclc_wavefrontsize64": int(ws == 64),
    }
    ints = {"__oclc_ISA_version": arch.isa_version, "__oclc_ABI_version": code_object_version * 100}
    lines = []
    for name, v in flags.items():
        lines.append(f"@{name} = linkonce_odr hidden local_unnamed_addr addrspace(4) constant i8 {v}, align 1")
    for name, v in ints.items():
        lines.append(f"@{name} = linkonce_odr hidden local_unnamed_addr addrspace(4) constant i32 {v}, align 4")
    return "\n".join(lines) + "\n"


def _external_refs(module) -> tuple[list[str], list[str]]:
    funcs = [f.name for f in module.functions if f.is_declaration and not f.name.startswith("llvm.")]
    gvars = [g.name for g in module.global_variables if g.is_declaration]
    return funcs, gvars


def link(module, arch, *, fastmath: bool = False, code_object_version: int = 5, env: dict | None = None,
         kernel_names=()) -> list[str]:
    """Link the libraries ``module`` (an llvmlite binding module) needs, in place.

    Defines the control constants, then marks every non-kernel definition
    internal so O3 keeps only what is called. Returns the libraries linked
    (``[]`` when the kernel calls none: nothing is searched for then).
    Undefined ``__ocml_``/``__ockl_`` functions left afterwards (a name the
    libraries do not have) raise ``CompileError``."""
    import llvmlite.binding as llvm

    funcs, _ = _external_refs(module)
    wanted = needed_libs(funcs)
    if not wanted:
        return []
    linked: list[str] = []
    consts = llvm.parse_assembly(
        f'target triple = "{module.triple}"\ntarget datalayout = "{module.data_layout}"\n'
        + control_constants(arch, fastmath=fastmath, code_object_version=code_object_version)
    )
    # ockl can call ocml and back: link until nothing new is needed
    while wanted:
        lib = wanted.pop(0)
        if lib in linked:
            continue
        libmod = llvm.parse_bitcode(library_bytes(lib, env))
        # the 5.x bitcode carries its own (older) data layout; ours wins
        libmod.triple = module.triple
        libmod.data_layout = module.data_layout
        try:
            module.link_in(libmod)
        except RuntimeError as e:  # pragma: no cover - LLVM linker diagnostics
            raise CompileError(f"linking {lib}.bc failed: {e}") from None
        linked.append(lib)
        funcs, _ = _external_refs(module)
        wanted = [x for x in needed_libs(funcs) if x not in linked]
    # after the libraries: the linker only pulls linkonce_odr definitions that are referenced
    module.link_in(consts)
    funcs, gvars = _external_refs(module)
    missing = [f for f in funcs if f.startswith(("__ocml_", "__ockl_"))]
    if missing:
        raise CompileError("device library function(s) not found in " + ", ".join(f"{x}.bc" for x in linked)
                           + ": " + ", ".join(sorted(missing)),
                           hint="the installed ROCm device libraries may be too old for this function")
    unknown_oclc = [g for g in gvars if g.startswith("__oclc_")]
    if unknown_oclc:
        raise CompileError("device libraries need control constant(s) pykern does not define: "
                           + ", ".join(sorted(unknown_oclc)))
    internalize(module, kernel_names)
    return linked


def internalize(module, kernel_names=()) -> None:
    """Make every definition except the kernels internal (so unused ones vanish)."""
    import llvmlite.binding as llvm

    keep = set(kernel_names)
    for f in module.functions:
        if f.is_declaration or f.name in keep or f.name.startswith("llvm."):
            continue
        if not keep and "amdgpu_kernel" in str(f).split("{", 1)[0]:
            continue
        f.linkage = llvm.Linkage.internal
    for g in module.global_variables:
        # __pykern_error is read by the host (hipModuleGetGlobal): stays exported
        if g.is_declaration or g.name.startswith("llvm.") or g.name == "__pykern_error":
            continue
        g.linkage = llvm.Linkage.internal
