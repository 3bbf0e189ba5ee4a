"""Programs from numba-cuda's own cudapy test files (numba_cuda/numba/cuda/tests/cudapy/), one
file here per file there (``test_cudapy_<name>.py`` ports ``test_<name>.py``), kernels and
assertions kept as numba's tests wrote them, run on the cpu target with ``import pykern as cuda``.
Each test names the numba-cuda test it comes from; expected values are those numba's assertions
check; where a test was adapted its comment says why.

Left out: PTX/SASS/LLVM inspection, linking NVIDIA formats (PTX, cubins: CUDA C/HIP sources link,
``test_cudapy_declare_device.py``), cupy interop, fp16
bindings via Numbast, and what README "Differences from numba.cuda" lists."""

import pytest


# numba's warp tests assume 32-lane warps with full masks of 0xFFFFFFFF; pykern's cpu target
# runs 64-lane waves unless PYKERN_CPU_WAVESIZE=32 (README), so these run with that switch.
@pytest.fixture
def wave32(monkeypatch):
    monkeypatch.setenv("PYKERN_CPU_WAVESIZE", "32")
