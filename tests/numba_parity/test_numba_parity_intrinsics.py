"""Kernel intrinsics as numba.cuda programs use them (found by running numba-cuda's own cudapy tests
against pykern): literal device-function arguments that numba types as literals (bool flags whose
dead branch is pruned, int tuples used as shapes), locals assigned a constant once used as shapes,
fastmath under ``debug=True``. Each runs on the cpu target against numpy/Python, and compiles for
every amdgpu arch.

Whole-record stores, vector types, ``cuda.libdevice`` and ``Overload.cooperative``:
tests/lang/test_records.py, test_vector_types.py, test_libdevice.py, test_cooperative_groups.py."""


import numpy as np
import pytest

import pykern as cuda
from pykern import float64, uint64
from types_helpers import ARCHS

pytestmark = pytest.mark.usefixtures("cpu_target")


# ---------------------------------------------------------------- literal arguments


@cuda.jit(device=True)
def _to_u64(x):
    return uint64(x)


@cuda.jit(device=True)
def _atomic_on_shared(ary, shape, dtype, op, wrap):
    # numba.cuda's helper style: the shape and dtype of a shared array, the atomic and a
    # flag are arguments. With wrap False, the `%` branch (which would make `bin` a float64
    # tuple: uint64 % int64 promotes to float64) is dead and never typed, as in numba.
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    sm = cuda.shared.array(shape, dtype)
    sm[tx, ty] = ary[tx, ty]
    cuda.syncthreads()
    bin = (tx, _to_u64(ty))
    if wrap:
        bin = (bin[0] % shape[0], bin[1] % shape[1])
    op(sm, bin, 1)
    cuda.syncthreads()
    ary[tx, ty] = sm[tx, ty]


def _shared_shape_tuple(ary):
    _atomic_on_shared(ary, (4, 8), float64, cuda.atomic.add, False)


def test_int_tuple_argument_is_a_shared_array_shape():
    k = cuda.jit(_shared_shape_tuple)
    a = np.arange(32, dtype=np.float64).reshape(4, 8)
    want = a + 1
    k[1, (4, 8)](a)
    np.testing.assert_array_equal(a, want)


def test_false_literal_prunes_a_branch_that_would_not_type():
    @cuda.jit
    def k(ary):
        _atomic_on_shared(ary, (4, 8), float64, cuda.atomic.sub, False)

    a = np.full((4, 8), 5.0)
    k[1, (4, 8)](a)
    np.testing.assert_array_equal(a, np.full((4, 8), 4.0))


@cuda.jit(device=True)
def _pick(x, flag):
    if flag:
        return x * 2
    return x + 100


def test_bool_literal_argument_specialises_each_value():
    @cuda.jit
    def k(out, x):
        out[0] = _pick(x[0], True)
        out[1] = _pick(x[0], False)
        out[2] = _pick(x[0], x[0] > 0)  # a run-time flag still works

    out = np.zeros(3, dtype=np.int64)
    k[1, 1](out, np.array([7], dtype=np.int64))
    assert out.tolist() == [14, 107, 14]


@cuda.jit(device=True)
def _toggle(x, flag):
    flag = not flag  # assigned in the body: an ordinary variable, not a compile-time value
    if flag:
        return x
    return -x


def test_bool_argument_assigned_in_the_callee_stays_a_variable():
    @cuda.jit
    def k(out):
        out[0] = _toggle(3, True)
        out[1] = _toggle(3, False)

    out = np.zeros(2, dtype=np.int64)
    k[1, 1](out)
    assert out.tolist() == [-3, 3]


@cuda.jit(device=True)
def _sum_shape(shape):
    return shape[0] * 10 + shape[1]


def test_int_tuple_argument_used_as_values():
    @cuda.jit
    def k(out):
        out[0] = _sum_shape((3, 4))
        out[1] = _sum_shape((5, 6))

    out = np.zeros(2, dtype=np.int64)
    k[1, 1](out)
    assert out.tolist() == [34, 56]


@pytest.mark.parametrize("arch", ARCHS)
def test_literal_arguments_compile_for_amdgpu(arch):
    ck = cuda.compile(_shared_shape_tuple, "void(float64[:, :])", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"


# ---------------------------------------------------------------- constant locals as shapes


def _constant_locals(out):
    N = 8
    TPB = N // 2
    shape = (TPB, N)
    sm = cuda.shared.array(shape, float64)
    scratch = cuda.local.array(TPB + 1, float64)
    i = cuda.threadIdx.x
    scratch[TPB] = i
    sm[i % TPB, i] = scratch[TPB]
    cuda.syncthreads()
    j = N - 1 - i
    out[i] = sm[j % TPB, j] + 100 * sm.shape[0] + 1000 * scratch.shape[0]


def test_local_assigned_a_constant_once_is_a_shape():
    # numba.cuda's own tests write `N = 100; sm = cuda.shared.array(N, int32)`
    out = np.zeros(8)
    cuda.jit(_constant_locals)[1, 8](out)
    np.testing.assert_array_equal(out, np.arange(7, -1, -1) + 400 + 5000)


def test_parameter_assigned_a_constant_is_not_a_shape():
    @cuda.jit
    def k(out, n):
        if n < 0:
            n = 4  # n is still the argument on the other path: not a compile-time value
        sm = cuda.shared.array(n, float64)
        out[0] = sm.shape[0]

    with pytest.raises(cuda.CompileError, match="compile-time constant"):
        k[1, 1](np.zeros(1), 3)


def test_local_assigned_twice_is_not_a_shape():
    @cuda.jit
    def k(out, flag):
        n = 4
        if flag:
            n = 8
        sm = cuda.shared.array(n, float64)
        out[0] = sm.shape[0]

    with pytest.raises(cuda.CompileError, match="compile-time constant"):
        k[1, 1](np.zeros(1), True)


@pytest.mark.parametrize("arch", ARCHS)
def test_constant_locals_compile_for_amdgpu(arch):
    ck = cuda.compile(_constant_locals, "void(float64[::1])", arch=arch)
    assert ck.resources["lds_bytes"] >= 4 * 8 * 8  # the (4, 8) float64 shared array


# ---------------------------------------------------------------- fastmath and debug


def _div(r, x, y):
    r[0] = x / y


def test_fastmath_float_division_by_zero_does_not_raise_under_debug():
    sig = "void(float32[::1], float32, float32)"
    fast = cuda.jit(sig, fastmath=True, debug=True, opt=False)(_div)
    prec = cuda.jit(sig, debug=True, opt=False)(_div)
    r = np.zeros(1, np.float32)
    with pytest.raises(ZeroDivisionError):
        prec[1, 1](r, 10.0, 0.0)
    fast[1, 1](r, 10.0, 0.0)  # numba: fastmath division is the hardware's, inf here
    assert r[0] == np.inf


def test_fastmath_integer_division_by_zero_still_raises_under_debug():
    @cuda.jit(fastmath=True, debug=True, opt=False)
    def k(r, x, y):
        r[0] = x // y

    with pytest.raises(ZeroDivisionError):
        k[1, 1](np.zeros(1, np.int64), 7, 0)

