"""The compiled form of one kernel, handed from codegen to the runtime and
stored by the cache (plain, picklable, immutable data; every field declared
here, so the runtime reads fields, never ``getattr`` defaults).

Example::

    art = get_target("cpu").compile(mod)
    pickle.loads(pickle.dumps(art)).name == art.name
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class KernelArtifact:
    target: str  #: "cpu" or "amdgpu"
    arch: Optional[str]  #: gfx target id, None on cpu
    name: str  #: kernel symbol (cpu: the ``run_blocks`` entry symbol)
    params: list  #: list[pykern.core.abi.FlatParam]
    kernarg_size: int
    llvm_ir: str  #: optimised LLVM IR text
    binary: bytes  #: cpu: host relocatable object; amdgpu: linked ET_DYN code object
    asm: Optional[str] = None
    metadata: dict = field(default_factory=dict)
    uses_barrier: bool = False
    uses_wave_ops: bool = False
    dynamic_shared: bool = False
    static_shared_bytes: int = 0
    wave_size: int = 64
    max_block_size: int = 1024
    #: cpu: "fast" (plain thread loop) or "coroutine" (barrier/wave-op scheduler)
    execution: str = ""
    #: cpu: the object linked into a shared library (binutils ``ld -shared``, else ld.lld), so a
    #: cached kernel loads with ``dlopen`` -- no LLVM in the process; b"" when no
    #: linker was found (then ``binary`` goes through MCJIT)
    shared_object: bytes = b""
    #: cpu: ``pykern.core.hostinfo.cpu_identity()`` of the compiling host (the loader checks it,
    #: without LLVM, before loading ``shared_object`` or ``binary``)
    host_cpu: str = ""
    #: the kernel syncs its grid (cg.this_grid().sync()): it needs a cooperative launch
    cooperative: bool = False
    #: amdgpu: registers, LDS, scratch, spills, occupancy (``archs.resources``)
    resources: dict = field(default_factory=dict)
    #: amdgpu: the code object version (4, 5 or 6); None on cpu
    code_object_version: Optional[int] = None
    #: amdgpu: the device libraries linked in ("ocml", "ockl")
    device_libs: list = field(default_factory=list)
    #: texts of the run-time errors the kernel can report (index = message number in the error record)
    error_messages: list = field(default_factory=list)
    #: amdgpu: the global the kernel writes its first run-time error to; None when it reports none
    error_symbol: Optional[str] = None
    #: debug=True: the exceptions the kernel's ``raise``/``assert`` report, ``(class
    #: "module:qualname", constant args)``; a "raise" error record's value indexes it
    exceptions: list = field(default_factory=list)
    #: cpu, sanitize=: the checks compiled in (a canonical list, ``core/sanitize.py``); "" for none
    sanitize: str = ""
    #: cpu, sanitize=: what a report names -- ``access``: the access sites (kind, file, line, col,
    #: array), ``sync``: the barrier/wave-op sites' descriptions, ``shared``: static shared arrays
    #: by name, ``(offset, shape, itemsize)``
    sanitizer_sites: dict = field(default_factory=dict)
