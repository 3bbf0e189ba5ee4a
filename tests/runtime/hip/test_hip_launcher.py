"""The hip launch of an overload (``hip_launch.launcher``), without a GPU: a HipKernel assembled
around a real gfx942 code object (as the HIP benchmarks do), the driver call recorded. One check of
the configuration, first: a refused launch copies nothing in; its errors name the kernel."""

import threading

import numpy as np
import pytest

import pykern as cuda
from pykern.core.errors import LaunchError, LaunchValueError
from pykern.dispatch import compiler
from pykern.dispatch.argument_types import argument_types
from pykern.runtime.hip import launch as hip_launch
from pykern.runtime.kernargs import get_packer, kernarg_size
from pykern.runtime.memory.arrays import DeviceArray, Storage


class _Launches:
    def __init__(self):
        self.calls = []

    def hipModuleLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        self.calls.append((int(getattr(fn, "value", fn)), (gx, gy, gz), (bx, by, bz), shared))


def _scale(out, x, a):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * a


def _device_arrays():
    return [DeviceArray((16,), (4,), np.float32, Storage(p, 64, "hip")) for p in (0x10000, 0x20000)]


def _kernel(args, max_block_size=256):
    """A HipKernel of ``_scale`` for ``args``'s types on a gfx942 device allowing ``max_block_size``
    threads per block, minus the device queries and module load."""
    k = cuda.jit(_scale)
    art, _ = compiler.compile_artifact(k, "amdgpu", argument_types(args, "scale")[0], arch="gfx942")
    hk = object.__new__(hip_launch.HipKernel)
    hk.artifact, hk.name, hk.device_id = art, art.name, 0
    hk.params = hip_launch.explicit_params(art)
    hk.kernarg_size = max(art.kernarg_size, kernarg_size(hk.params))
    hk.packer = get_packer(hk.params, hk.kernarg_size)
    hk.limits = hip_launch.LaunchLimits(max_block_size=max_block_size)
    hk.function, hk._checked, hk._tls, hk._error_record = 0xF00D, {}, threading.local(), None
    hk.cooperative, hk.occupancy_estimate = False, None
    return hk


@pytest.fixture
def launches(monkeypatch):
    lib = _Launches()
    monkeypatch.setattr(hip_launch, "_hip", lambda: lib)
    return lib.calls


def test_device_arrays_are_launched_as_they_are(launches):
    args = _device_arrays() + [2.0]
    launch = hip_launch.launcher(_kernel(args), 3, "scale")
    launch(args, (1, 1, 1), (16, 1, 1), 0, 0)
    launch(tuple(args), 2, 16, 0, 0)
    assert launches == [(0xF00D, (1, 1, 1), (16, 1, 1), 0), (0xF00D, (2, 1, 1), (16, 1, 1), 0)]


@pytest.mark.parametrize("block, shared, words", [
    ((512, 1, 1), 0, "scale: blockdim (512, 1, 1) has 512 threads"),
    ((16, 32, 1), 0, "scale: blockdim (16, 32, 1) has 512 threads"),
    ((16, 1, 1), 1 << 20, "scale: 1048576 bytes of dynamic shared memory"),
])
def test_a_refused_configuration_is_refused_before_host_arrays_are_copied(launches, monkeypatch, block, shared,
                                                                           words):
    args = [np.zeros(16, np.float32), np.arange(16, dtype=np.float32), 2.0]
    launch = hip_launch.launcher(_kernel(_device_arrays() + [2.0]), 3, "scale")
    copied = []
    monkeypatch.setattr(hip_launch, "prepare_args", lambda *a: copied.append(a))
    with pytest.raises(LaunchValueError) as refused:
        launch(args, (1, 1, 1), block, 0, shared)
    assert str(refused.value).startswith(words) and copied == [] and launches == []


def test_errors_name_the_kernel_once(launches):
    args = _device_arrays() + [2.0]
    launch = hip_launch.launcher(_kernel(args), 3, "scale")
    with pytest.raises(LaunchError, match=r"^scale: argument a \(float64\): cannot pass .x."):
        launch(args[:2] + ["x"], (1, 1, 1), (16, 1, 1), 0, 0)
    with pytest.raises(LaunchValueError, match=r"^scale: griddim \(0, 1, 1\)") as e:
        hip_launch.launch(_kernel(args), None, args, 0, 16, kernel_name="scale")
    assert str(e.value).count("scale:") == 1 and launches == []
