"""numba-cuda's @jit options and inspection API as its test files use them: ``fma=False``
(no fused multiply-add where the amdgpu target fuses by default), ``inspect_asm()`` without
a signature (a dict by argument types, eager signatures too), and a clear refusal for
listings of device functions (their code lives in the kernels that call them)."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda
from pykern import float32, float64

pytestmark = pytest.mark.usefixtures("cpu_target")

SIG = (float32[::1], float32, float32, float32)


def muladd(r, x, y, z):
    r[0] = x * y + z


def test_fma_false_keeps_two_roundings_on_amdgpu():
    fused = cuda.jit(SIG)(muladd).inspect_asm(SIG, arch="gfx942")
    plain = cuda.jit(SIG, fma=False)(muladd).inspect_asm(SIG, arch="gfx942")
    assert "v_fma_f32" in fused
    assert "v_fma" not in plain and "v_mul_f32" in plain and "v_add_f32" in plain


def test_fma_false_runs_with_numpys_rounding():
    k = cuda.jit(fma=False)(muladd)
    r = np.zeros(1, np.float32)
    x, y, z = np.float32(1.1), np.float32(2.2), np.float32(3.3)
    k[1, 1](r, x, y, z)
    assert r[0] == x * y + z


def test_inspect_asm_without_signature_is_a_dict_by_argument_types():
    eager = cuda.jit(SIG)(muladd)
    listings = eager.inspect_asm(arch="gfx942")
    assert list(listings) == [SIG] and "v_fma_f32" in listings[SIG]

    lazy = cuda.jit(muladd)
    lazy[1, 1](np.zeros(1, np.float32), np.float32(1), np.float32(2), np.float32(3))
    (key,), = [tuple(lazy.inspect_asm(arch="gfx942"))]
    assert key == SIG


def test_listings_of_device_functions_are_refused_clearly():
    dev = cuda.jit((float64, float64, float64), device=True)(lambda x, y, z: x * y + z)
    for inspect in (dev.inspect_asm, dev.inspect_llvm):
        with pytest.raises(cuda.CompileError, match="device function"):
            inspect((float64, float64, float64))


def test_kernels_decorated_with_numba_cpu_options():
    # projects share one options dict between numba.njit and cuda.jit; numba.cuda's target options
    # accept nopython and nogil (no effect on a GPU)
    opts = dict(nopython=True, nogil=True, fastmath=False)

    @cuda.jit(device=True, **opts)
    def smoothstep(e0, e1, x):
        t = min(max((x - e0) / (e1 - e0), 0.0), 1.0)
        return t * t * (3.0 - 2.0 * t)

    @cuda.jit(**opts)
    def apply(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = smoothstep(0.2, 0.8, x[i])

    x = np.linspace(0, 1, 101)
    out = np.zeros_like(x)
    apply[1, 128](x, out)
    t = np.clip((x - 0.2) / 0.6, 0, 1)
    assert np.allclose(out, t * t * (3 - 2 * t), rtol=0, atol=1e-15)
