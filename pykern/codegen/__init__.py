"""Typed IR -> LLVM IR -> object code. ``get_target(name, **opts)`` picks a backend.

Example::

    >>> from pykern.codegen import get_target
    >>> get_target("cpu").name
    'cpu'
"""

from __future__ import annotations

from dataclasses import asdict

from pykern.codegen.target_interface import CompileOptions, Target  # noqa: F401  (light: no llvmlite import)
from pykern.core import settings as _settings
from pykern.core.targets import CODEGEN_SPELLINGS, codegen_name


def get_target(name: str, **opts) -> Target:
    """A target by name: "cpu", or "amdgpu" (``arch=``, ``code_object_version=``, ... passed to
    ``AmdgpuTarget``; "hip" and "amdgcn" are taken as "amdgpu", see ``core/targets.py``)."""
    return _TARGETS[codegen_name(name)](**opts)


def _cpu_target(**opts) -> Target:
    from pykern.codegen import llvm_util
    from pykern.core.llvm_host import host_target_machine, quick_target_machine

    # the compiler asks for a target right before running the frontend: the first time in a
    # process, LLVM loads and initialises on a thread meanwhile -- before importing .cpu: its
    # llvmlite.ir import (~5 ms) overlaps the dlopen too
    llvm_util.warm_up_in_background(host_target_machine, *([quick_target_machine] if opts.get("tiered") else []))
    from pykern.codegen.cpu.target import CpuTarget

    return CpuTarget(**opts)


def _amdgpu_target(**opts) -> Target:
    from pykern.codegen import llvm_util
    from pykern.codegen.amdgpu.target import AmdgpuTarget
    from pykern.codegen.amdgpu.codeobject import target_machine

    t = AmdgpuTarget(**opts)
    llvm_util.warm_up_in_background(lambda: target_machine(t.arch_info.name, t.arch_info.llvm_features, 3))
    return t


#: codegen target -> how it is made
_TARGETS = {"cpu": _cpu_target, "amdgpu": _amdgpu_target}


def key_options(name: str, options: CompileOptions) -> dict:
    """Everything that decides target ``name``'s code for ``options``, computed
    without building the target (the warm cache path must not load LLVM).

    Example: ``key_options("cpu", CompileOptions())["opt"] == 3``"""
    parts = asdict(options)
    # the settings a target reads while compiling decide its code: their text is keyed as it is
    for var in _settings.key_settings(CODEGEN_SPELLINGS.get(name, name)):
        parts[f"env:{var}"] = _settings.raw(var)
    return parts
