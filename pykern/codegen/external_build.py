"""External device code (``@jit(link=...)``, ``declare_device(link=...)``) as LLVM modules
linked into a kernel's module before it is optimised, so that calls of it inline.

* HIP C++ sources (``.hip``, ``.cpp``, ``.cc``, ``.cxx``, ``.cu``, ``CUSource``) are compiled by
  clang (``PYKERN_CLANG``, else ``clang-22``, else ``clang``) to bitcode: for an AMD GPU as HIP
  device code for the kernel's processor, wave size and code object version
  (``-x hip --offload-device-only -fgpu-rdc -nogpulib``, ``hip/hip_runtime.h`` included first
  when its headers are installed, as hipcc does; ``cuda_runtime.h``, ``cuda.h`` and
  ``cuda_runtime_api.h`` include it); for the cpu target as C++ for the host, after a prelude
  that defines HIP's function qualifiers (``__device__``, ``__host__``, ``__forceinline__``...)
  as nothing (``__constant__`` as ``static const``), includes ``<cmath>``, ``<cstdint>`` and
  ``<cstddef>`` and defines ``__pykern_cpu__`` (``hip/hip_runtime.h`` and CUDA's runtime headers
  are empty there) -- so functions of plain C++ on numbers and pointers run on both, and code
  that uses HIP's thread indices, intrinsics or vector types is GPU-only (clang says so, located).
* ``.ll`` (LLVM IR text) and ``.bc`` (bitcode) are parsed as they are; their triple and data
  layout become the kernel's.

Compiled bitcode is kept in the disk cache through the ``store`` the compiler passes
(``get(parts)``/``put(parts, data)``, parts a dict: the source's content digest, clang's
version, the flags) and in this process's memory; the source's digest covers the headers it
includes with ``#include "..."`` from its own directory (``core/external.LinkItem.digest``).
A compile error is a ``CompileError`` holding clang's diagnostics (file, line, caret).

Example::

    # in the amdgpu build, after the kernel's module is parsed and before the device libraries:
    link(mod, module.links, symbols_of(module), tm=tm, target="amdgpu", arch=arch_info,
         code_object_version=5, store=store)
"""

from __future__ import annotations

import hashlib
import os
import threading

from pykern.core import settings
from pykern.core.bounded import LRU
from pykern.core.errors import CompileError

#: defines HIP's function qualifiers as nothing for the host compile of the cpu target (``__shared__``
#: and ``__managed__`` stay undefined: one static variable would be every block's, so a source
#: using them is refused there, located, rather than computing something else)
CPU_PRELUDE = """\
#include <cmath>
#include <cstddef>
#include <cstdint>
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __constant__ static const
#define __restrict__ __restrict
#define __pykern_cpu__ 1
"""

_OPT = "-O2"  # the kernel's pipeline optimises it again once linked; O0 would mark it optnone
_memory = LRU()
_version_lock = threading.Lock()
_versions: dict = {}


def clang() -> str:
    """The clang executable that compiles HIP/C++ link items."""
    explicit = settings.get("PYKERN_CLANG")
    if explicit:
        return explicit
    import shutil  # (here: every compile imports this module, few run clang)

    for name in ("clang-22", "clang"):
        found = shutil.which(name)
        if found:
            return found
    raise CompileError("compiling external HIP/C++ code (link=) needs clang, which is not installed",
                       hint="install clang-22 (scripts/setup.sh does), set PYKERN_CLANG to a clang, or link "
                            "LLVM IR (.ll) / bitcode (.bc) instead")


def clang_version(exe: str) -> str:
    """clang's ``--version`` first line (part of the compiled code's cache key)."""
    with _version_lock:
        hit = _versions.get(exe)
    if hit is None:
        import subprocess  # (subprocess and what it imports: ~3 ms of every first compile otherwise)

        try:
            out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
        except OSError as e:
            raise CompileError(f"cannot run clang {exe!r}: {e.strerror}",
                               hint="set PYKERN_CLANG to a clang executable") from None
        hit = (out.stdout.splitlines() or ["?"])[0].strip()
        with _version_lock:
            _versions[exe] = hit
    return hit


def _hip_headers() -> bool:
    for base in (os.environ.get("ROCM_PATH"), "/opt/rocm", "/usr"):
        if base and os.path.isfile(os.path.join(base, "include", "hip", "hip_runtime.h")):
            return True
    return False


def hip_flags(arch, code_object_version: int) -> list:
    """clang's flags for HIP device code of the kernel's ``arch`` (an ``archs.Arch``)."""
    wave = 64 if (arch.wave64 or arch.wave_size == 64) else 32
    flags = ["-x", "hip", "--offload-device-only", "-fgpu-rdc", "-nogpulib", f"--offload-arch={arch.target_id}",
             f"-mcode-object-version={code_object_version}", f"-D__AMDGCN_WAVEFRONT_SIZE={wave}"]
    if wave == 64 and arch.wave_size != 64:
        flags.append("-mwavefrontsize64")
    if _hip_headers():
        flags += ["-include", "hip/hip_runtime.h"]
    return flags


def cpu_flags(triple: str) -> list:
    """clang's flags for the host compile of the cpu target (the prelude is included first)."""
    return ["-x", "c++", "-std=c++17", f"--target={triple}", "-fno-exceptions", "-fno-rtti"]


def _compile(item, flags: list, store) -> bytes:
    exe = clang()
    parts = {"kind": "external-code", "source": item.digest(), "clang": clang_version(exe),
             "flags": flags + [_OPT], "headers": _HEADERS_DIGEST}
    memo_key = repr(sorted(parts.items()))
    data = _memory.get(memo_key)
    if data is None and store is not None:
        data = store.get(parts)
    if data is not None:
        _memory.put(memo_key, data)
        return data
    data = _run_clang(exe, item, flags)
    _memory.put(memo_key, data)
    if store is not None:
        store.put(parts, data)
    return data


def _run_clang(exe: str, item, flags: list) -> bytes:
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="pykern-ext-") as tmp:
        out = os.path.join(tmp, "out.bc")
        src = item.path
        shown = None
        if src is None:  # a CUSource: a file for clang, its name in the messages
            src = os.path.join(tmp, "source.hip")
            with open(src, "w", encoding="utf-8") as f:
                f.write(item.text)
            shown = item.name
        cmd = [exe, *flags]
        host = "c++" in flags
        if host:
            prelude = os.path.join(tmp, "pykern_cpu_prelude.h")
            with open(prelude, "w", encoding="utf-8") as f:
                f.write(CPU_PRELUDE)
            cmd += ["-include", prelude]
        cmd += ["-isystem", _stand_in_headers(tmp, host)]
        cmd += [_OPT, "-fno-color-diagnostics", "-emit-llvm", "-c", src, "-o", out]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except OSError as e:
            raise CompileError(f"cannot run clang {exe!r}: {e.strerror}") from None
        if r.returncode != 0 or not os.path.isfile(out):
            text = r.stderr.strip()
            if shown is not None:
                text = text.replace(src, shown)
            target = "the cpu target" if "c++" in flags else next(
                (f.split("=", 1)[1] for f in flags if f.startswith("--offload-arch=")), "the GPU")
            raise CompileError(f"clang could not compile {shown or item.path} for {target}:\n{text}",
                               hint="code for the cpu target is compiled as host C++: HIP's thread indices, "
                                    "intrinsics and vector types exist only on GPUs" if "c++" in flags else None)
        with open(out, "rb") as f:
            return f.read()


#: CUDA's runtime headers a .cu file includes: HIP's runtime header on GPUs; on the cpu target these
#: and HIP's own runtime header are empty (the prelude has what they would give plain C++)
CUDA_HEADERS = ("cuda_runtime.h", "cuda.h", "cuda_runtime_api.h")
HOST_EMPTY_HEADERS = CUDA_HEADERS + ("hip/hip_runtime.h",)
#: what pykern puts before a source (the prelude, the header stand-ins): part of the key
_HEADERS_DIGEST = hashlib.sha256((CPU_PRELUDE + repr(HOST_EMPTY_HEADERS) + "hip/hip_runtime.h").encode()).hexdigest()[:16]


def _stand_in_headers(tmp: str, host: bool) -> str:
    d = os.path.join(tmp, "include")
    include_hip = not host and _hip_headers()
    for name in HOST_EMPTY_HEADERS if host else CUDA_HEADERS:
        path = os.path.join(d, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write("#pragma once\n" + ("#include <hip/hip_runtime.h>\n" if include_hip else ""))
    return d


def modules(items, *, target: str, triple: str, data_layout: str, arch=None, code_object_version: int = 5,
            store=None, context=None) -> list:
    """Parsed LLVM modules (llvmlite binding) of ``items`` for ``target`` ("cpu" or "amdgpu"),
    each with the kernel module's ``triple`` and ``data_layout``."""
    import llvmlite.binding as llvm

    ctx = getattr(context, "ctx", context)  # an llvm_util.own_context tracks what is parsed into it
    out = []
    for item in items:
        try:
            if item.kind == "ll":
                text = item.read().decode()
                mod = llvm.parse_assembly(text, ctx) if ctx is not None else llvm.parse_assembly(text)
            else:
                if item.kind == "bc":
                    data = item.read()
                elif target == "cpu":
                    data = _compile(item, cpu_flags(triple), store)
                else:
                    data = _compile(item, hip_flags(arch, code_object_version), store)
                mod = llvm.parse_bitcode(data, ctx) if ctx is not None else llvm.parse_bitcode(data)
            if hasattr(context, "track"):
                context.track(mod)
            mod.verify()
        except RuntimeError as e:
            raise CompileError(f"LLVM cannot read {item}: {e}") from None
        mod.triple = triple
        mod.data_layout = data_layout
        out.append(mod)
    return out


def _linked(items, symbols, *, tm, triple: str, data_layout: str, **kw):
    """``items`` compiled and linked into one module in which only ``symbols`` stay external
    (and what nothing reaches is dropped)."""
    from pykern.codegen.llvm_util import run_passes

    mods = modules(items, triple=triple, data_layout=data_layout, **kw)
    first = mods[0]
    for m in mods[1:]:
        _link_in(first, m, items)
    wanted = set(symbols)
    for f in first.functions:
        if not f.is_declaration and f.name not in wanted and not f.name.startswith("llvm."):
            f.linkage = "internal"
    run_passes(first, tm, ("global_dead_code_eliminate",), speed_level=0)
    return first


class HostFunctions:
    """External functions compiled for this machine (the cpu target's build of them) and loaded
    by MCJIT, for the sim target to call through ctypes: ``address[symbol]``. The engine owning
    the code lives as long as this object (callers keep it while they hold an address)."""

    def __init__(self, engine, address: dict):
        self.engine, self.address = engine, address


_host_memo = LRU()


def host_functions(items, symbols, store=None) -> HostFunctions:
    """``symbols`` of the link ``items``, compiled for the host and loaded (memoised per
    process by the items' contents); a ``CompileError`` when one is not defined by them."""
    from pykern.core.llvm_host import LLVM_LOCK, host_triple, llvm, new_host_target_machine

    symbols = tuple(sorted(set(symbols)))
    if not items:
        raise _no_code(symbols)
    key = (tuple(item.digest() for item in items), symbols)
    hit = _host_memo.get(key)
    if hit is not None:
        return hit
    with LLVM_LOCK:
        ll = llvm()
        tm = new_host_target_machine()
        mod = _linked(items, symbols, tm=tm, target="cpu", triple=host_triple(),
                      data_layout=str(tm.target_data), store=store)
        engine = ll.create_mcjit_compiler(mod, tm)
        engine.finalize_object()
        address = {s: engine.get_function_address(s) for s in symbols}
    missing = [s for s, a in address.items() if not a]
    if missing:
        raise _undefined(missing)
    hit = HostFunctions(engine, address)
    _host_memo.put(key, hit)
    return hit


def link(module, items, symbols, *, tm, **kw) -> None:
    """Link ``items`` (see :func:`modules`) into the binding ``module`` in place. The items are
    linked together first (a file may call what another defines), then everything in them but
    the ``symbols`` the kernel calls is made internal and what nothing reaches dropped, so that
    neither unused code nor what it needs (device libraries) reaches the kernel's module. A
    symbol still undefined afterwards is a ``CompileError``."""
    if not items:
        if symbols:
            raise _no_code(symbols)
        return
    first = _linked(items, symbols, tm=tm, triple=module.triple, data_layout=module.data_layout, **kw)
    wanted = set(symbols)
    declared = {f.name: str(f.global_value_type) for f in module.functions if f.name in wanted}
    _link_in(module, first, items)
    for f in module.functions:
        if f.name in declared and not f.is_declaration and str(f.global_value_type) != declared[f.name]:
            raise CompileError(f"external device function '{f.name}' is defined as `{f.global_value_type}` in LLVM "
                               f"terms by {', '.join(map(str, items))}, but its declaration calls it as "
                               f"`{declared[f.name]}`",
                               hint="numba's ABI (the default) is `int f(T *result, args...)`; declare_device(..., "
                                    "abi=\"c\") calls `T f(args...)`; the argument types must match too")
    missing = sorted(f.name for f in module.functions if f.is_declaration and f.name in wanted)
    for f in module.functions:  # the module is whole now: no one else calls them
        if f.name in wanted and not f.is_declaration:
            f.linkage = "internal"
    if missing:
        raise _undefined(missing)


def _no_code(symbols) -> CompileError:
    return CompileError("external device function(s) " + ", ".join(symbols) + " have no code to link",
                        hint="give the source with declare_device(..., link=...) or @jit(link=[...])")


def _undefined(symbols) -> CompileError:
    return CompileError("external device function(s) not defined by the linked code: " + ", ".join(symbols),
                        hint="check the name given to declare_device (C++ names are mangled unless declared "
                             "extern \"C\") and the link= entries")


def symbols_of(module) -> list:
    """The external functions the frontend ``module`` (an ``ir.Module``) calls, by symbol."""
    from pykern.frontend import ir
    from pykern.frontend.analysis import walk

    out = {}
    for fn in [module.kernel, *module.functions.values()]:
        for n in walk(fn.body):
            if isinstance(n, ir.ExternCall):
                out[n.symbol] = None
    return list(out)


def _link_in(dst, src, items) -> None:
    try:
        dst.link_in(src)
    except RuntimeError as e:
        raise CompileError(f"linking external code ({', '.join(map(str, items))}) failed: {e}") from None
