"""Globals of a kernel, as numba.cuda treats them: numpy arrays are frozen into the code as constant
data when the kernel compiles; device arrays are captured by reference (the kernel reads and writes
the live array); ``global``/``nonlocal`` declarations of names a kernel only reads are accepted.
Also the cache key: it covers a captured device array's address."""

import numpy as np
import pytest

import pykern as cuda
from pykern.frontend.fingerprint import value_digest

ARCHS = ["gfx90a", "gfx942", "gfx1100", "gfx1201"]

TABLE = np.array([1.5, 2.5, 3.5])
GRID = np.arange(12, dtype=np.int32).reshape(3, 4)
DEV = DEV2D = None  # device arrays, made on the cpu target by the fixture


@pytest.fixture(autouse=True, scope="module")
def _device_globals(cpu_target):
    global DEV, DEV2D
    DEV = cuda.to_device(np.zeros(8, np.float32))
    DEV2D = cuda.to_device(np.arange(6, dtype=np.int64).reshape(2, 3))


@cuda.jit
def _uses_globals(out):
    i = cuda.grid(1)
    if i < DEV.size:
        DEV[i] += i + TABLE[i % 3]
        out[i] = GRID[i % 3, i % 4] + DEV.shape[0] + DEV2D[i % 2, i % 3]


def test_numpy_globals_are_frozen_and_device_arrays_are_live():
    global TABLE
    out = np.zeros(8)
    _uses_globals[1, 8](out)
    _uses_globals[1, 8](out)
    i = np.arange(8)
    host_table = TABLE.copy()
    np.testing.assert_array_equal(DEV.copy_to_host(), (2 * (i + host_table[i % 3])).astype(np.float32))
    np.testing.assert_array_equal(out, GRID[i % 3, i % 4] + 8 + np.arange(6).reshape(2, 3)[i % 2, i % 3])
    # the device array is captured by reference: the kernel sees the host's new values
    DEV.copy_to_device(np.full(8, 100, np.float32))
    # a numpy global was frozen at compile time: rebinding it changes nothing (numba does the same)
    TABLE = np.zeros(3)
    try:
        _uses_globals[1, 8](out)
    finally:
        TABLE = host_table
    np.testing.assert_array_equal(DEV.copy_to_host(), (100 + i + host_table[i % 3]).astype(np.float32))


def test_a_device_array_global_is_not_copied_into_the_code():
    from pykern.frontend import compile_ir

    text = str(compile_ir(_uses_globals.py_func, [cuda.float64[::1]]))
    assert f"global_array(0x{DEV.__cuda_array_interface__['data'][0]:x})" in text
    assert "const.array(3,)" in text  # TABLE, frozen


def test_cache_key_names_the_captured_address():
    a = cuda.to_device(np.zeros(4, np.float32))
    b = cuda.to_device(np.zeros(4, np.float32))
    assert value_digest(a) != value_digest(b)
    assert str(a.__cuda_array_interface__["data"][0]) in value_digest(a)


@pytest.mark.parametrize("arch", ARCHS)
def test_amdgpu_bakes_the_address_and_the_constant_data(arch):
    ck = cuda.compile(_uses_globals, "void(float64[::1])", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"
    assert np.ascontiguousarray(GRID).tobytes() in ck.code_object  # frozen numpy global
    addr = DEV.__cuda_array_interface__["data"][0]
    assert str(addr) in ck.llvm_ir or f"{addr:#x}" in ck.llvm_ir.lower()


_TABLE = np.arange(6.0).reshape(2, 3)


def test_copy_of_a_global_array_is_a_writable_local_array():
    @cuda.jit
    def k(out, x):
        c = _TABLE.copy()  # numba.cuda needs its NRT for this; a local array of the global's shape here
        c[0, 0] = x[0]
        d = np.copy(_TABLE)
        d[1, 2] += c[0, 0]
        for i in range(2):
            for j in range(3):
                out[i, j] = c[i, j] + 10 * d[i, j]

    out = np.zeros((2, 3))
    k[1, 1](out, np.array([7.0]))
    c = _TABLE.copy()
    c[0, 0] = 7.0
    d = _TABLE.copy()
    d[1, 2] += 7.0
    np.testing.assert_array_equal(out, c + 10 * d)
    np.testing.assert_array_equal(_TABLE, np.arange(6.0).reshape(2, 3))  # the global is untouched


def test_copy_of_a_run_time_shaped_array_is_a_located_compile_error():
    @cuda.jit
    def k(a):
        b = a.copy()
        b[0] = 1.0

    with pytest.raises(cuda.CompileError, match="shape is known only at run time") as e:
        k[1, 1](np.zeros(3))
    assert "a.copy()" in str(e.value)


SEP = ","


def _closure_kernel(scale):
    @cuda.jit
    def k(out, arr):
        nonlocal scale
        global SEP
        arr1 = arr[0]
        out[0] = scale * len(arr1) + ord(SEP)
        arr = cuda.local.array(4, dtype=np.float64)  # the parameter's name, rebound to another type
        arr[0] = 2.0
        out[1] = arr[0]
    return k


@pytest.mark.usefixtures("cpu_uncached")
def test_nonlocal_and_global_of_names_only_read_are_accepted():
    out = np.zeros(2)
    _closure_kernel(3.0)[1, 1](out, np.ones((2, 5)))
    assert out.tolist() == [3.0 * 5 + ord(","), 2.0]


@pytest.mark.usefixtures("cpu_uncached")
def test_nonlocal_of_an_assigned_name_is_refused_at_its_line():
    total = 0

    @cuda.jit
    def k(out):
        nonlocal total
        total = 1
        out[0] = total

    with pytest.raises(cuda.CompileError, match="'total' is declared 'nonlocal' and assigned") as e:
        k[1, 1](np.zeros(1))
    assert "nonlocal total" in str(e.value)
