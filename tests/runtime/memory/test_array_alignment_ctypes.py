"""numba-cuda's ``alignment=`` of ``cuda.local.array``/``cuda.shared.array`` and
``a.ctypes.data`` (an array's address) in kernels: the addresses are multiples of the
alignment on every cpu path (fast, work-item loops, coroutines) and in amdgpu code;
bad alignments are refused as numba refuses them."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")

REC = np.dtype([("a", np.uint8), ("b", np.int32), ("c", np.float64)], align=False)


@pytest.mark.parametrize("dtype", [np.uint8, REC])
@pytest.mark.parametrize("align", [None, 64, 2048])
def test_local_and_shared_addresses_are_aligned(dtype, align):
    @cuda.jit
    def k(out):
        la = cuda.local.array(shape=(2, 3), dtype=dtype, alignment=align)
        sa = cuda.shared.array(shape=7, dtype=dtype, alignment=align)
        sb = cuda.shared.array(shape=3, dtype=np.uint8)  # a neighbour of another alignment
        out[0] = la.ctypes.data
        out[1] = sa.ctypes.data
        out[2] = sb.ctypes.data

    out = np.zeros(3, np.uint64)
    k[1, 1](out)
    assert out[1] != out[2]
    if align:
        assert out[0] % align == 0 and out[1] % align == 0


@pytest.mark.parametrize("paths", ["", "coroutine"])
def test_barrier_kernels_keep_every_threads_copy_aligned(paths, monkeypatch):
    if paths:
        monkeypatch.setenv("PYKERN_CPU_BARRIERS", paths)
        monkeypatch.setenv("PYKERN_CACHE", "off")

    @cuda.jit
    def k(out):
        a = cuda.local.array(3, np.float64, alignment=128)
        b = cuda.local.array(5, np.uint8, alignment=64)
        s = cuda.shared.array(7, np.uint8, alignment=512)
        i = cuda.threadIdx.x
        a[0] = i
        b[0] = i
        cuda.syncthreads()
        out[i, 0] = a.ctypes.data % 128 + b.ctypes.data % 64 + s.ctypes.data % 512
        out[i, 1] = a[0] + b[0]

    out = np.ones((8, 2), np.uint64)
    k[1, 8](out)
    assert np.array_equal(out[:, 0], np.zeros(8)) and np.array_equal(out[:, 1], 2 * np.arange(8))


def test_amdgpu_code_carries_the_alignment():
    def k(out):
        la = cuda.local.array(5, dtype=np.uint8, alignment=256)
        sa = cuda.shared.array(3, dtype=np.uint8, alignment=1024)
        la[cuda.threadIdx.x] = 1
        out[0] = la.ctypes.data  # the address escapes: the alloca stays
        out[1] = sa[0]

    ck = cuda.compile(k, "void(uint64[::1])", arch="gfx942")
    assert "align 256" in ck.llvm_ir


@pytest.mark.parametrize("bad", [-1, 0, 3, 17])
def test_bad_alignment_values_are_value_errors(bad):
    @cuda.jit
    def k(out):
        a = cuda.local.array(4, np.uint8, alignment=bad)
        out[0] = a.ctypes.data

    with pytest.raises(ValueError, match="Alignment must be a power of 2") as ei:
        k[1, 1](np.zeros(1, np.uint64))
    assert isinstance(ei.value, cuda.CompileError) and "^" in str(ei.value)


@pytest.mark.parametrize("bad", ["1", 1.0, True])
def test_non_integer_alignments_are_compile_errors(bad):
    @cuda.jit
    def k(out):
        a = cuda.shared.array(4, np.uint8, alignment=bad)
        out[0] = a.ctypes.data

    with pytest.raises(cuda.CompileError, match="alignment must be a constant integer"):
        k[1, 1](np.zeros(1, np.uint64))


def test_ctypes_data_of_an_argument_is_its_address_and_other_fields_are_refused():
    @cuda.jit
    def k(a, out):
        out[0] = a.ctypes.data
        out[1] = a[2:].ctypes.data - a.ctypes.data

    a = np.zeros(5, np.float32)
    out = np.zeros(2, np.uint64)
    k[1, 1](a, out)
    assert out[0] == a.ctypes.data and out[1] == 8

    @cuda.jit
    def bad(a, out):
        out[0] = a.ctypes.shape[0]

    with pytest.raises(cuda.CompileError, match="ctypes.shape"):
        bad[1, 1](a, out)
