"""Typed IR -> LLVM IR -> object code. ``get_target(name, **opts)`` picks a backend.

Example::

    >>> from pykern.codegen import get_target
    >>> get_target("cpu").name
    'cpu'
"""

from __future__ import annotations

from .target import CompileOptions, Target  # noqa: F401  (light: no llvmlite import)


def get_target(name: str, **opts) -> Target:
    """A target by name: "cpu", or "amdgpu"/"hip" (``arch=``,
    ``code_object_version=``, ... passed to ``AmdgpuTarget``)."""
    if name == "cpu":
        from .cpu import CpuTarget

        return CpuTarget(**opts)
    if name in ("amdgpu", "hip", "amdgcn"):
        from .amdgpu import AmdgpuTarget

        return AmdgpuTarget(**opts)
    raise ValueError(f"unknown target {name!r}: expected 'cpu' or 'amdgpu'")
