"""Target names: one spelling for each meaning.

* A **run target** is where kernels run: ``"cpu"``, ``"hip"`` (an AMD GPU through the HIP
  runtime) or ``"sim"`` (the kernel's IR run as Python, one thread at a time, over host memory).
  Users, the runtime and the dispatcher name run targets (``PYKERN_TARGET``, ``set_target``,
  ``current_target``, ``target=`` arguments); the runtime chooses one (``pykern.runtime``), and
  says where its arrays live (``DeviceArray.target``: "cpu" for "sim").
* A **codegen target** is what a kernel is compiled to: ``"cpu"`` (host code) or ``"amdgpu"``
  (LLVM's AMDGPU backend, code objects for a gfx arch). Codegen, artifacts
  (``KernelArtifact.target``) and cache keys name codegen targets; each compiled run target's
  backend says which one it runs (``runtime.backends``: "hip" runs "amdgpu"; "sim" compiles none).
* ``"amdgcn"`` is LLVM's name of the architecture (the triple ``amdgcn-amd-amdhsa``, the
  ``llvm.amdgcn.*`` intrinsics, the ``amdgcn/bitcode`` device libraries), never a target name.

Codegen still takes the spellings it took before, ``"hip"`` and ``"amdgcn"``, as ``"amdgpu"``
(:func:`codegen_name`).

Example::

    >>> codegen_name("amdgpu"), codegen_name("amdgcn"), codegen_name("hip"), codegen_name("cpu")
    ('amdgpu', 'amdgpu', 'amdgpu', 'cpu')
"""

from __future__ import annotations

#: where kernels run
RUN_TARGETS = ("cpu", "hip", "sim")
#: what kernels are compiled to
CODEGEN_TARGETS = ("cpu", "amdgpu")
#: every spelling codegen accepts -> its codegen target
CODEGEN_SPELLINGS = {"cpu": "cpu", "amdgpu": "amdgpu", "hip": "amdgpu", "amdgcn": "amdgpu"}


def codegen_name(name: str) -> str:
    """The codegen target ``name`` spells; ``ValueError`` for none."""
    try:
        return CODEGEN_SPELLINGS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown target {name!r}: expected 'cpu' or 'amdgpu'") from None
