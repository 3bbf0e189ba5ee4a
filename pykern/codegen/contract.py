"""What ``lowering/module.py`` and the targets exchange: compile options, facts about the kernel, the
lowered kernel. (Which intrinsics each ``Target`` method receives is ``lowering/intrinsics.py``'s reading of
``ir.INTRINSICS``: ``SPECIAL_REGISTERS``, ``BARRIER_KINDS``, ``WAVE_OPS``.)

Example::

    >>> CompileOptions(debug=True).with_(opt=2).opt
    2
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional

from pykern.core.cpu_context import LDS_BYTES
from pykern.core.errors import SourceLoc

#: Shared memory (LDS) per block allowed by default (see Target.max_shared_bytes): the cpu
#: target's, which is the LDS of the GPUs pykern targets.
DEFAULT_MAX_SHARED_BYTES = LDS_BYTES
#: Local (private) array bytes per thread allowed by default (see Target.max_local_bytes).
DEFAULT_MAX_LOCAL_BYTES = 64 * 1024


@dataclass(frozen=True)
class CompileOptions:
    """Knobs of one compilation; hashable and picklable (part of cache keys).

    ``wave_size`` None means "the target's default" (cpu: 64, or 32 when the
    environment variable ``PYKERN_CPU_WAVESIZE=32`` is set at compile time;
    amdgpu: from the arch). :meth:`Target.resolve_options` fills it in.

    Example::

        >>> CompileOptions(debug=True).opt
        3
    """

    opt: int = 3  #: LLVM optimisation level 0..3 (new pass manager pipeline)
    fastmath: bool = False  #: allow reassociation/contraction (LLVM 'fast' flags)
    fma: bool = True  #: let a target that fuses a*b+c by default do so (numba-cuda's ``fma=False`` turns it off)
    debug: bool = False  #: bounds-checked indexing with a KernelRuntimeError
    wave_size: Optional[int] = None  #: lanes per wave (32 or 64)
    max_block_size: Optional[int] = None  #: launch-bounds hint (threads per block)
    max_registers: Optional[int] = None  #: register cap hint (amdgpu)
    code_object_version: int = 5  #: amdgpu code object version (4/5/6)
    arch: Optional[str] = None  #: amdgpu target id ("gfx942", "gfx90a:xnack-")
    #: the kernel sanitizer's checks, a canonical comma list ("init,race"; ``core/sanitize.py``):
    #: every array access calls the cpu target's shadow-memory checker
    sanitize: str = ""

    def with_(self, **changes) -> "CompileOptions":
        return replace(self, **changes)


@dataclass(frozen=True)
class SyncSite:
    """One barrier or wave operation in the source: ``id`` is unique per
    compiled kernel (0, 1, ...), ``kind`` the intrinsic name
    ("syncthreads", "syncthreads_count", "shfl_sync", ...), ``loc`` where it is.
    Used by targets that must name the site in a run-time error (cpu)."""

    id: int
    kind: str
    loc: Optional[SourceLoc] = None

    def describe(self) -> str:
        where = f"{self.loc.file}:{self.loc.line}" if self.loc else "<unknown>"
        return f"{self.kind}() at {where}"


@dataclass
class KernelInfo:
    """Facts about the kernel gathered by ``lowering/module.py`` before/while lowering.

    ``uses_barrier``/``uses_wave_ops``/``uses_dynamic_shared`` are transitive
    over device functions. ``sync_sites`` lists every barrier/wave op (after
    inlining, each call-site copy has its own site). ``shared`` lists static
    shared allocations as ``(name, offset, nbytes, align)``; offsets are into
    one per-block area of ``static_shared_bytes`` (a target may ignore them
    and place each array as its own symbol)."""

    kernel_name: str
    uses_barrier: bool = False
    uses_wave_ops: bool = False
    uses_dynamic_shared: bool = False
    sync_sites: list = field(default_factory=list)  # list[SyncSite]
    shared: list = field(default_factory=list)  # list[(name, offset, nbytes, align)]
    static_shared_bytes: int = 0
    wave_size: int = 64
    debug: bool = False  #: copy of CompileOptions.debug
    sanitize: str = ""  #: copy of CompileOptions.sanitize
    #: per function name (kernel included): (uses_barrier, uses_wave_ops,
    #: uses_dynamic_shared), transitive over calls (``frontend.analysis.function_facts``)
    function_uses: dict = field(default_factory=dict)
    #: what a target learns about the kernel for its own use (``Target.analyse``, lowering)
    target_facts: dict = field(default_factory=dict)
    #: debug=True: the exceptions the kernel's ``raise``/``assert`` statements report, as
    #: ``(class "module:qualname", args)``; a "raise" error record carries an index into it
    exceptions: list = field(default_factory=list)
    #: sanitize=: the array accesses the checker is told about, ``(kind, file, line, col,
    #: array, element bytes)`` ("read"/"write"/"atomic"); a report names them by index
    access_sites: list = field(default_factory=list)


@dataclass
class LoweredKernel:
    """What ``lowering/module.py`` hands to :meth:`Target.finalize`: the llvmlite module
    (not yet verified/optimised), the kernel's LLVM function, its flat
    parameters (``abi.flatten_params``) and the :class:`KernelInfo`."""

    llmodule: Any  # llvmlite.ir.Module
    kernel_function: Any  # llvmlite.ir.Function returned by Target.define_kernel
    params: list  # list[FlatParam]
    info: KernelInfo
    options: CompileOptions
    source: Any = None  # the frontend ir.Module
