"""numba's ``cuda.compile(f, sig, device=True)`` (PTX/LTO-IR of a lone device function) has no AMD
form: ``pykern.compile`` says so as a ``CompileError`` (it was a ``TypeError`` from inside);
``device=False`` is what it does anyway."""

from __future__ import annotations

import pytest

import pykern as cuda
from pykern import types


def _set_zero(a):
    a[0] = 0


def test_device_true_is_a_compile_error():
    with pytest.raises(cuda.CompileError, match="device=True"):
        cuda.compile(_set_zero, (types.float32[::1],), device=True)


def test_device_false_compiles_the_kernel():
    ck = cuda.compile(_set_zero, "void(float32[::1])", arch="gfx90a", device=False)
    assert ck.artifacts[0].binary[:4] == b"\x7fELF"
