"""Helpers of the tests/test_types_*.py files: run a kernel on the cpu target,
compile it for the four checked AMD archs and read the code object with LLVM's
own tools (llvm-readelf-22 / llvm-objdump-22)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from pykern.codegen import abi_map as abi
from pykern.codegen.amdgpu.target import AmdgpuTarget
from pykern.codegen.target_interface import CompileOptions
from pykern.frontend import compile_ir

ARCHS = ["gfx90a", "gfx942", "gfx1100", "gfx1201"]
HAVE_LLVM_TOOLS = bool(shutil.which("llvm-readelf-22") and shutil.which("llvm-objdump-22"))
needs_llvm_tools = pytest.mark.skipif(not HAVE_LLVM_TOOLS, reason="llvm-readelf-22/llvm-objdump-22 not installed")


def amdgpu_compile(fn, argtypes, arch, tmp_path, **options):
    """Compile ``fn`` for ``arch``; check the code object (arguments as the ABI
    flattens them, no undefined symbols, disassembles); return (artifact,
    list of instruction mnemonics)."""
    py = getattr(fn, "py_func", fn)
    mod = compile_ir(py, list(argtypes))
    art = AmdgpuTarget(arch=arch).compile(mod, CompileOptions(**options))
    flat = abi.flatten_params(list(argtypes))
    explicit = [a for a in art.metadata[".args"] if not a[".value_kind"].startswith("hidden_")]
    assert [(a[".offset"], a[".size"]) for a in explicit] == [(p.offset, p.size) for p in flat]
    path = os.path.join(str(tmp_path), f"{py.__name__}-{arch}.hsaco")
    with open(path, "wb") as f:
        f.write(art.binary)
    hdr = subprocess.run(["llvm-readelf-22", "-h", "--syms", "--dyn-syms", path], capture_output=True, text=True,
                         check=True).stdout
    assert "AMDGPU" in hdr and arch in hdr.lower(), hdr[:400]
    assert not re.search(r"\sUND[ \t]+\S", hdr), "undefined symbols in the code object"
    dis = subprocess.run(["llvm-objdump-22", "-d", path], capture_output=True, text=True, check=True).stdout
    ops = [ln.split()[0] for ln in dis.splitlines() if ln.startswith("\t")]
    assert ops, "no instructions disassembled"
    return art, ops
