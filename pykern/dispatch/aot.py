"""``pykern.compile``: ahead-of-time code objects for AMD GPUs (one arch, or an offload bundle).

Example::

    ck = pykern.compile(saxpy, "void(float32, float32[::1], float32[::1], float32[::1])", arch="gfx942")
"""

from __future__ import annotations

from pykern.dispatch.compiler import CompiledKernel, compile_amdgpu
from pykern.dispatch.dispatcher import Dispatcher
from pykern.core.errors import CompileError
from pykern.frontend import parse_signature


def compile(fn, signature, arch="gfx942", **options):
    """Compile ``fn`` ahead of time for AMD GPU ``arch`` -- no GPU needed.

    ``arch`` is a gfx name with optional target-id features (``"gfx90a:xnack-"``)
    or a list of them, which gives one clang offload bundle. Options are those
    of ``@jit`` (``fastmath``, ``opt``, ``debug``, ``code_object_version``...).

    Example::

        ck = pykern.compile(saxpy, "void(float32, float32[::1], float32[::1], float32[::1])", arch="gfx942")
        ck.code_object[:4] == b"\\x7fELF"
    """
    if options.pop("device", False):
        raise CompileError("compile(device=True): pykern compiles kernels into AMDGPU code objects; numba's "
                           "PTX/LTO-IR of a lone device function has no AMD form",
                           hint="compile a kernel that calls the device function")
    disp = fn if isinstance(fn, Dispatcher) else Dispatcher(fn, None, False)
    _, argtypes = parse_signature(signature)
    archs = [arch] if isinstance(arch, str) else list(arch)
    if not archs:
        raise CompileError("compile(): arch list is empty")
    parts = [compile_amdgpu(disp, argtypes, a, **options) for a in archs]
    if len(parts) == 1:
        return parts[0]
    from pykern.codegen.amdgpu import codeobject

    bundle = codeobject.bundle([(p.arch, p.code_object) for p in parts])
    first = parts[0]
    return CompiledKernel(first.name, [p.arch for p in parts], bundle, None,  # asm made when first read
                          first.llvm_ir, first.metadata, first.resources, [a for p in parts for a in p.artifacts])
