"""One name per meaning (``core/targets.py``): run targets "cpu"/"hip", codegen targets "cpu"/"amdgpu";
codegen still takes "hip" and "amdgcn" for "amdgpu", with the same results."""

import pytest

from pykern import runtime
from pykern.codegen import get_target, key_options
from pykern.codegen.target_interface import CompileOptions
from pykern.core import targets
from pykern.runtime.backends import BACKENDS


def test_the_runtime_and_its_backends_name_the_run_targets():
    assert runtime.TARGETS == targets.RUN_TARGETS == ("cpu", "hip", "sim")
    assert tuple(BACKENDS) == ("cpu", "hip")  # the compiled ones: "sim" runs the kernel's IR as Python
    assert {b.codegen for b in BACKENDS.values()} == set(targets.CODEGEN_TARGETS)
    assert BACKENDS["hip"].codegen == "amdgpu" and BACKENDS["cpu"].codegen == "cpu"
    assert set(runtime.MEMORY_TARGET) == set(runtime.TARGETS) and set(runtime.MEMORY_TARGET.values()) <= set(BACKENDS)


@pytest.mark.parametrize("spelling", ["amdgpu", "hip", "amdgcn"])
def test_codegen_takes_every_spelling_of_the_gpu_target(spelling):
    t = get_target(spelling, arch="gfx942")
    assert t.name == "amdgpu" and t.arch_info.name == "gfx942"
    assert key_options(spelling, CompileOptions()) == key_options("amdgpu", CompileOptions())


def test_unknown_targets_are_refused_in_the_same_words():
    with pytest.raises(ValueError, match="unknown target 'cuda': expected 'cpu' or 'amdgpu'"):
        get_target("cuda")
    with pytest.raises(ValueError, match="unknown target 'amdgpu': expected one of cpu, hip"):
        runtime.set_target("amdgpu")  # the GPU's run target is "hip"


def test_a_hip_kernel_refuses_artifacts_of_another_codegen_target():
    from types import SimpleNamespace

    from pykern.core.errors import LaunchError
    from pykern.runtime.hip.launch import HipKernel

    for spelling in ("cpu", "x86"):
        with pytest.raises(LaunchError, match=f"compiled for {spelling}, not amdgpu"):
            HipKernel(SimpleNamespace(target=spelling, name="k"))
    assert all(targets.codegen_name(s) == "amdgpu" for s in ("amdgpu", "hip", "amdgcn"))
