"""Helpers of the tests/lang feature files: run a kernel on the cpu target,
compile it for the four checked AMD archs and read the code object with LLVM's
own tools (llvm-readelf-22 / llvm-objdump-22)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import numpy as np
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


#: complex atanh/atan arguments near the poles and far beyond sqrt(MAX/4), shared by the cpu
#: (lang/test_complex.py) and amdgpu (codegen/amdgpu/test_amdgpu_value_semantics.py) checks
ATANH_HARD = {
    np.complex128: [1 + 1e-200j, 1 - 1e-200j, 1 + 1e-300j, -1 + 1e-250j, -1 - 5e-324j, 1 + 1e-154j,
                    0.9999999999999999 + 1e-200j, 1e200 + 1j, 1e300 + 1e300j, -1e300 + 2j, 3 + 1e300j,
                    1e154 + 1e154j, 1e-200 + 1e300j, 1.7e308 + 0j, -1.7e308 - 0j, 7e153 + 0.5j, 1e19 + 0j],
    np.complex64: [1 + 1e-20j, 1 - 1e-20j, -1 + 1e-25j, 1 + 1e-44j, 1 + 1e-19j, 0.99999994 + 1e-20j,
                   1e38 + 1e38j, 3e38 + 0j, 3e38j, -1e38 + 1e38j, 1e19 + 1e19j, 1e20 + 1j, 1e-30 + 1e30j,
                   9.3e18 + 0.5j],
}


def atanh_hard(dt):
    z = np.array(ATANH_HARD[dt], dt)
    return np.concatenate([z, z * np.array(1j, dt), -z, np.conj(z)])


def close_parts(got, want, rtol):
    """Component-wise relative error within rtol; NaN, infinities and zeros exactly so."""
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        fin = np.isfinite(w) & (w != 0)
        assert (np.isnan(g) == np.isnan(w)).all() and (g[~fin & ~np.isnan(w)] == w[~fin & ~np.isnan(w)]).all(), \
            (got, want)
        err = np.abs(g[fin] - w[fin]) / np.abs(w[fin])
        assert (err <= rtol).all(), list(zip(got[fin][err > rtol], want[fin][err > rtol]))
