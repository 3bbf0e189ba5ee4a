"""LLVM in this process: llvmlite initialised once, the lock around LLVM's global context, and
the host target machine -- shared by codegen (the cpu target compiles for this machine) and the
runtime (its MCJIT fallback loads cpu objects for it). llvmlite is imported on first use only.

Example::

    with LLVM_LOCK:
        tm = host_target_machine()
    host_triple()      # 'x86_64-pc-linux-gnu'

(The host's identity -- what cpu code and cache keys are checked against -- is
``core/hostinfo.cpu_identity``, read without LLVM.)
"""

from __future__ import annotations

import threading

_init_lock = threading.Lock()
_initialised = False  # the native target
_all_targets = False

#: LLVM's global context is not thread-safe: hold this lock around parsing,
#: optimising and emitting (``with LLVM_LOCK: ...``).
LLVM_LOCK = threading.RLock()


def llvm(all_targets: bool = False):
    """The ``llvmlite.binding`` module with the native target and asm printer initialised
    once; ``all_targets``: every target LLVM was built with too (amdgpu code objects).
    The cpu target needs only the host's: registering all of them costs ~2 ms."""
    global _initialised, _all_targets
    import llvmlite.binding as ll

    if not _initialised or (all_targets and not _all_targets):
        with _init_lock:
            # llvm.initialize() is deprecated in llvmlite 0.50: do not call it
            if not _initialised:
                ll.initialize_native_target()
                ll.initialize_native_asmprinter()
                _initialised = True
            if all_targets and not _all_targets:
                ll.initialize_all_targets()
                ll.initialize_all_asmprinters()
                _all_targets = True
    return ll


_tm_lock = threading.Lock()
_host = {}


def _host_cpu():
    """(triple, cpu name, feature string) of this host, asked of LLVM once (the features
    query costs ~0.5 ms, and every cpu kernel loaded through MCJIT needs them)."""
    if "cpu" not in _host:
        ll = llvm()
        _host["cpu"] = (ll.get_process_triple(), ll.get_host_cpu_name(), ll.get_host_cpu_features().flatten())
    return _host["cpu"]


def new_host_target_machine():
    """A new TargetMachine for this host, owned by the caller (e.g. an MCJIT engine,
    which frees the one it is given with itself)."""
    with _tm_lock:
        triple, cpu, feats = _host_cpu()
    return llvm().Target.from_triple(triple).create_target_machine(
        cpu=cpu, features=feats, opt=3, reloc="pic", codemodel="jitdefault")


def quick_target_machine():
    """The process-wide host TargetMachine whose code generator runs at level 0 (fast
    instruction selection and register allocation: ~1.5 ms for saxpy where level 3 takes
    ~15), for first-tier code (``codegen/cpu/tiers.py``). Same cpu and features as
    :func:`host_target_machine`, so the same instructions and the same IEEE semantics."""
    with _tm_lock:
        if "quick" not in _host:
            triple, cpu, feats = _host_cpu()
            _host["quick"] = llvm().Target.from_triple(triple).create_target_machine(
                cpu=cpu, features=feats, opt=0, reloc="pic", codemodel="jitdefault")
        return _host["quick"]


def host_target_machine():
    """The process-wide host TargetMachine (created once; host cpu + features)."""
    with _tm_lock:
        if "tm" not in _host:
            ll = llvm()
            triple, cpu, feats = _host_cpu()
            _host["tm"] = ll.Target.from_triple(triple).create_target_machine(
                cpu=cpu, features=feats, opt=3, reloc="pic", codemodel="jitdefault"
            )
            _host["triple"] = triple
        return _host["tm"]


def host_triple() -> str:
    """LLVM's triple of this process."""
    host_target_machine()
    return _host["triple"]
