"""numba-compatible exception classes: launch errors are also ValueError/TypeError,
debug=True raises IndexError / ZeroDivisionError (numba's debug mode uses the
Python error model), on the cpu target; the amdgpu record kinds are checked in
the code object path."""

import numpy as np
import pytest

import pykern as cuda
from pykern.core.errors import KernelIndexError, KernelRuntimeError, KernelZeroDivisionError, LaunchError, LaunchValueError


@cuda.jit
def _fill(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = i


@pytest.mark.parametrize("config, exc", [
    ((0, 32), ValueError), ((1, (1, 1, 1, 1)), ValueError), ((1, 2048), ValueError),
    ((1.5, 32), TypeError), ((1, "x"), TypeError), ((1, 32, 0, -4), ValueError),
])
def test_bad_launch_configuration_is_a_value_or_type_error(cpu_target, config, exc):
    a = np.zeros(8, np.int64)
    with pytest.raises(exc) as info:
        _fill[config](a)
    assert isinstance(info.value, LaunchError)
    if exc is ValueError:
        assert isinstance(info.value, LaunchValueError)


def test_bad_arguments_are_type_errors(cpu_target):
    a = np.zeros(8, np.int64)
    with pytest.raises(TypeError):
        _fill[1, 8](a, a)  # too many arguments
    with pytest.raises(TypeError):
        _fill[1, 8]("text")
    eager = cuda.jit("void(float32[:])")(_fill.py_func)
    with pytest.raises(TypeError):
        eager[1, 8](np.zeros(8, np.int32))


def test_debug_out_of_range_index_is_an_index_error(cpu_uncached):
    @cuda.jit(debug=True)
    def k(a, j):
        if cuda.grid(1) == 0:
            a[j] = 1.0

    a = np.zeros(10)
    k[1, 4](a, 9)
    k[1, 4](a, -10)  # -shape is still in range
    for bad in (10, -11, 1 << 40):
        with pytest.raises(IndexError) as info:
            k[1, 4](a, bad)
        assert isinstance(info.value, KernelIndexError) and isinstance(info.value, KernelRuntimeError)
        assert "test_host_errors.py" in str(info.value)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("op", ["/", "//", "%"])
def test_debug_division_by_zero_is_a_zero_division_error(cpu_uncached, dtype, op):
    import linecache

    ns = {"cuda": cuda}
    # a generated kernel with its source in linecache (the frontend reads it)
    src = f"def k(a, b, out):\n    i = cuda.grid(1)\n    if i < out.size:\n        out[i] = a[i] {op} b[i]\n"
    fname = f"<host-errors-{op}-{np.dtype(dtype).name}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    code = compile(src, fname, "exec")
    exec(code, ns)
    k = cuda.jit(debug=True)(ns["k"])
    a = np.array([7, 8, 9], dtype)
    b = np.array([2, 3, 4], dtype)
    out = np.zeros(3, np.float64 if op == "/" else dtype)
    k[1, 3](a, b, out)
    with np.errstate(all="ignore"):
        expect = {"/": a / b, "//": a // b, "%": a % b}[op]
    np.testing.assert_allclose(out, expect)
    b[1] = 0
    with pytest.raises(ZeroDivisionError) as info:
        k[1, 3](a, b, out)
    assert isinstance(info.value, KernelZeroDivisionError)
    assert "by zero" in str(info.value) and "thread (1, 0, 0)" in str(info.value)
    # without debug: numpy's error model (inf/nan for floats, 0 for ints), no exception
    nodebug = cuda.jit(ns["k"])
    nodebug[1, 3](a, b, out)


def test_amdgpu_debug_division_records_a_zerodiv_kind():
    from pykern.codegen.amdgpu.target import ERROR_KINDS, format_error_record
    import struct

    raw = struct.pack("<iiqqqqqqqqq", ERROR_KINDS["zerodiv"], 0, 0, 0, 0, 1, 0, 0, 2, 0, 0)
    text = format_error_record(raw, ["k.py:3: division by zero"])
    assert text.startswith("k.py:3: division by zero") and "block (2, 0, 0)" in text
    from pykern.core.errors import error_class_for_kind

    assert error_class_for_kind(ERROR_KINDS["zerodiv"]) is KernelZeroDivisionError
    assert error_class_for_kind(ERROR_KINDS["bounds"]) is KernelIndexError

    def k(a, b):
        a[0] = a[0] / b

    ck = cuda.compile(k, "void(float32[:], float32)", arch="gfx942", debug=True)
    assert "division by zero" in " ".join(ck.artifacts[0].error_messages)
