"""Every intrinsic of the kernel namespace's catalogue (``ir.INTRINSICS``, what ``pykern.lang``'s
names lower to) runs on the sim target, and the ones the sim computes itself give the cpu
target's bits."""

import importlib.util
import math
import os

import numpy as np
import pytest

import pykern as cuda
from pykern.frontend import analysis, ir
from pykern.frontend import types as T
from pykern.sim import executor
from pykern.sim.codegen_py import generate

from test_sim_matches_cpu import F32, I32, I64, same

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "catalogue_kernels", os.path.join(_HERE, "..", "architecture", "test_architecture_intrinsics.py"))
catalogue = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(catalogue)  # its ``catalogue_kernel``: one call of each row on scalar parameters

#: rows the sim runs but that stop the thread by design, each with why
RAISES = {
    "value_error": (ValueError, "a failed slice-assignment check: the sim reports it (debug=True or not)"),
    "index_error": (IndexError, "a tuple indexed out of range at run time: reported, as debug=True does"),
}


def _argument(p):
    t = p.type
    if isinstance(t, T.Array):
        et = t.dtype
        dt = np.dtype([(f"f{k}", e.np_dtype) for k, e in enumerate(et.elems)]) if isinstance(et, T.Tuple) \
            else np.dtype(np.bool_) if isinstance(et, T.Boolean) else et.np_dtype
        return np.zeros(1024, dt)  # room for a 16 x 16 tile at offset 3, leading dimension 3 (the matrix rows)
    if isinstance(t, T.Boolean):
        return np.bool_(True)
    dt = t.np_dtype
    return dt.type(3) if not isinstance(t, T.Complex) else dt.type(1.5 - 2j)


@pytest.mark.parametrize("binding", range(len(catalogue.BINDINGS)))
@pytest.mark.parametrize("name", sorted(ir.INTRINSICS))
def test_every_catalogued_intrinsic_runs_on_the_sim(name, binding, monkeypatch):
    monkeypatch.setenv("PYTHONBREAKPOINT", "0")  # breakpoint(): the hook the program chose
    if not catalogue._binds(name, catalogue.BINDINGS[binding]):
        pytest.skip(f"{name} has no instance with this binding's types (no complex32)")
    mod = catalogue.catalogue_kernel([name], catalogue.BINDINGS[binding])
    analysis.scan(mod)
    funcs, _ = generate(mod, "<catalogue>", {})
    kernel = funcs[mod.kernel.name]
    args = [_argument(p) for p in mod.kernel.params]
    run = lambda: executor.run(kernel, {kernel.__code__}, args, (1, 1, 1), (1, 1, 1), 0,  # noqa: E731
                               bool(mod.kernel.uses_barrier or mod.kernel.uses_wave_ops))
    if name in RAISES:
        with pytest.raises(RAISES[name][0]):
            run()
    else:
        run()


@cuda.jit
def bits_and_floats(i32, i64, f32, f64, iout, fout, dout):
    k = cuda.grid(1)
    if k < i32.size:
        iout[k, 0] = cuda.clz(i32[k])
        iout[k, 1] = cuda.ffs(i32[k])
        iout[k, 2] = cuda.brev(i32[k])
        iout[k, 3] = cuda.clz(i64[k])
        iout[k, 4] = cuda.ffs(i64[k])
        iout[k, 5] = cuda.popc(i64[k])
        m, e = math.frexp(f32[k])
        fout[k, 0] = m
        iout[k, 6] = e
        fout[k, 1] = math.ldexp(f32[k], i32[k] % 300)
        fout[k, 2] = math.remainder(f32[k], f32[(k + 3) % f32.size])
        fout[k, 3] = cuda.fma(f32[k], f32[(k + 1) % f32.size], f32[(k + 2) % f32.size])
        dout[k, 0] = cuda.fma(f64[k], f64[(k + 1) % f64.size], f64[(k + 2) % f64.size])
        dout[k, 1] = round(f64[k], i32[k] % 7)
        dout[k, 2] = cuda.brev(i64[k])


def test_bit_counts_frexp_ldexp_remainder_fma_and_round_match_the_cpu_target():
    f32 = np.concatenate([F32, np.array([1 + 2**-23, -(1 + 2**-23), 2**-12, 3.0], np.float32)])
    f64 = np.concatenate([F32.astype(np.float64) * 1.1, [1 + 2**-52, -(1 + 2**-52), 2**-27, 3.0]])
    i32 = np.concatenate([I32, I32[:4] * 3])
    i64 = np.concatenate([I64, I64[:4] + 1])
    same(bits_and_floats, (1, 16), i32, i64, f32, f64, np.zeros((14, 7), np.int64), np.zeros((14, 4), np.float32),
         np.zeros((14, 3), np.float64), outputs={4, 5, 6})


def test_fused_multiply_add_rounds_once():
    # (1 + 2**-23)**2 - 1 in float32: 2**-22 + 2**-46 exactly, which a float32 product loses
    a = np.array([1 + 2**-23], np.float32)
    out = same(fma_one, (1, 1), a, np.zeros(1, np.float32), outputs={1})[1]
    assert out[0] == np.float32(2**-22 + 2**-46)


@cuda.jit
def fma_one(a, out):
    out[0] = cuda.fma(a[0], a[0], np.float32(-1))


@cuda.jit
def bf16_ops(x, i64, out, bits):
    k = cuda.grid(1)
    if k < x.size:
        b = cuda.bfloat16(x[k])
        out[k, 0] = b
        out[k, 1] = cuda.bfloat16(i64[k])
        out[k, 2] = b * cuda.bfloat16(3) + cuda.bfloat16(0.1)
        out[k, 3] = cuda.bf16.hfma(b, b, cuda.bfloat16(-1))
        out[k, 4] = cuda.bf16.float32_to_bfloat16_ru(np.float32(x[k]))
        out[k, 5] = cuda.bf16.int64_to_bfloat16_rz(i64[k])
        out[k, 6] = cuda.bf16.float64_to_bfloat16(x[k] * 3)
        bits[k] = cuda.bf16.bfloat16_as_uint16(b)


def test_bfloat16_roundings_match():
    x = np.array([1.00390625, -1.0078125, 3e38, np.nan, -0.0, 1e-40, 0.1, 7.0], np.float64)
    i64 = np.array([2**53 + 2**40 + 1, -(2**60) - 3, 0, 255, 257, 2**63 - 1, -7, 65535], np.int64)
    from pykern.frontend.types import bfloat16_dtype

    same(bf16_ops, (1, 8), x, i64, np.zeros((8, 7), bfloat16_dtype()), np.zeros(8, np.uint16), outputs={2, 3})


@cuda.jit
def float_max_min_pow(x, olds, p):
    i = cuda.grid(1)
    if i < p.size:
        olds[i, 0] = cuda.atomic.max(x, i % 4, np.float32(i) - 2)
        olds[i, 1] = cuda.atomic.min(x, 4 + i % 4, np.float32(i) - 2)
        olds[i, 2] = cuda.atomic.nanmax(x, 8 + i % 4, np.float32(i) - 2)
        p[i] = x[12 + i % 4] ** np.float32(0.37) + np.float32(i) ** x[12]


def test_float_atomic_max_min_keep_a_nan_and_pow_is_the_c_librarys():
    x = np.array([np.nan, 1, -5, 3] * 4, np.float32)
    x[12:] = [0.3, 0.92, 1.7, 2.5]
    sim = same(float_max_min_pow, (1, 12), x, np.zeros((12, 3), np.float32), np.zeros(12, np.float32),
               outputs={0, 1, 2})
    assert np.isnan(sim[0][0]) and np.isnan(sim[0][4])  # numba's max/min: a NaN element stays
    assert sim[0][8] == 6  # nanmax: the NaN is missing (values -2, 2, 6 from threads 0, 4, 8)


@cuda.jit
def dates(d, delta, out):
    i = cuda.grid(1)
    if i < d.size:
        out[i] = d[i] - delta


def test_datetime_arithmetic_matches():
    d = np.arange("2005-02", "2005-03", dtype="datetime64[D]")
    same(dates, (1, 32), d, d[3] - d[1], np.zeros_like(d), outputs={2})
