"""numba.cuda programs of the sixth probe round, run as written (``import pykern as cuda``) on the
cpu target. Expected values are numba 0.68.1's (njit of the same kernel bodies; CUDA's numpy error
model where it matters), recorded literally: the tests do not need numba.

Fixed here: the complex ``/`` operator divides as numba's (CPython's algorithm, not numpy's Smith
division, which stays for ``np.divide``); ``abs``/``np.abs`` of a complex is ``math.hypot`` as in
numba (correctly rounded, where numpy's npy_cabsf can be an ulp off); ``int ** negative
constant`` computes as numba's ``int_power``."""

import cmath
import math

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_uncached")


# ---- 1. complex division: the operator is CPython's algorithm, np.divide numpy's

@cuda.jit
def cdiv(a, b, out):
    out[0] = a[0] / b[0]
    out[1] = np.divide(a[0], b[0])
    z = a[0]
    z /= b[0]
    out[2] = z


def _cdiv(dt, x, y):
    a, b = np.array([x], dt), np.array([y], dt)
    out = np.zeros(3, dt)
    cdiv[1, 1](a, b, out)
    return [complex(v) for v in out]


def test_complex64_division_operator_is_numbas():
    # numba: w / w.conjugate() is 0.8000000715255737 (numpy's Smith division: 0.800000011920929)
    r = _cdiv(np.complex64, 3.3 - 1.1j, 3.3 + 1.1j)
    assert r[0] == complex(0.8000000715255737, -0.6000000238418579)
    assert r[2] == r[0]
    assert r[1] == complex(0.800000011920929, -0.6000000238418579)
    r = _cdiv(np.complex64, 1 + 0.5j, 1 + 2.5j)
    assert r[0] == complex(0.3103448152542114, -0.27586206793785095)
    assert r[1] == complex(0.31034478545188904, -0.27586206793785095)


def test_complex128_division_operator_is_numbas():
    r = _cdiv(np.complex128, 1 + 0.5j, 1 + 2.5j)
    assert r[0] == r[2] == complex(0.3103448275862069, -0.27586206896551724) == (1 + 0.5j) / (1 + 2.5j)
    assert r[1] == complex(0.3103448275862069, -0.2758620689655173)
    r = _cdiv(np.complex128, 3.3 - 1.1j, 3.3 + 1.1j)
    assert r[0] == complex(0.7999999999999999, -0.6000000000000001)
    assert r[1] == complex(0.8, -0.6000000000000001)


def test_complex_division_special_values_as_numba():
    for dt in (np.complex64, np.complex128):
        r = _cdiv(dt, 1 + 1j, complex(math.nan, 1))
        assert all(math.isnan(v.real) and math.isnan(v.imag) for v in r)
        r = _cdiv(dt, complex(math.inf, 1), 2)
        assert all(v.real == math.inf and math.isnan(v.imag) for v in r)
        r = _cdiv(dt, 1 + 2j, complex(0, math.inf))
        for v in r:
            assert v == 0 and math.copysign(1, v.real) == 1 and math.copysign(1, v.imag) == -1


@cuda.jit
def cdiv_arrays(a, b, out):
    np.divide(a, b, out)


def test_complex_divide_ufunc_on_arrays_is_numpys():
    a = np.array([3.3 - 1.1j], np.complex64)
    out = np.zeros(1, np.complex64)
    cdiv_arrays[1, 1](a, a.conjugate(), out)
    assert out[0].real.item() == 0.800000011920929  # numba's ufunc loop: numpy's Smith division


# ---- 2. abs of a complex is math.hypot in numba (builtin abs, np.abs, np.absolute)

@cuda.jit
def cabs(a, out):
    out[0] = abs(a[0])
    out[1] = np.abs(a[0])
    out[2] = np.absolute(a[0])


def test_complex64_abs_is_hypot():
    out = np.zeros(3, np.float32)
    cabs[1, 1](np.array([0.6875 - 0.5j], np.complex64), out)
    # numpy's np.abs(np.complex64(0.6875-0.5j)) is 0.8500918745994568
    assert [v.item() for v in out] == [0.8500919342041016] * 3
    cabs[1, 1](np.array([3.3 - 1.1j], np.complex64), out)
    assert [v.item() for v in out] == [3.4785053730010986] * 3


# ---- 3. int ** negative constant: numba's int_power (0 -> the int64 minimum, CUDA's error model)

@cuda.jit
def int_neg_pow(a, out):
    for i in range(a.size):
        x = a[i]
        out[i, 0] = x ** -3
        out[i, 1] = x ** -2
        out[i, 2] = x ** -1


def test_int_to_negative_constant_power():
    m = -9223372036854775808
    for dt in (np.int64, np.int32, np.int8):
        a = np.array([0, 1, -1, 2, -2, 5], dt)
        out = np.zeros((a.size, 3), np.int64)
        int_neg_pow[1, 1](a, out)
        assert out.tolist() == [[m, m, m], [1, 1, 1], [-1, 1, -1], [0, 0, 0], [0, 0, 0], [0, 0, 0]], dt
    for dt in (np.uint8, np.uint64):
        a = np.array([0, 1, 2, 255, np.iinfo(dt).max], dt)
        out = np.zeros((a.size, 3), np.int64)
        int_neg_pow[1, 1](a, out)
        # numba's uint64 max is int64 -1 in int_power
        last = [0, 0, 0] if dt == np.uint8 else [-1, 1, -1]
        assert out.tolist() == [[m, m, m], [1, 1, 1], [0, 0, 0], [0, 0, 0], last], dt


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_complex_division_abs_int_power_nditer_compile_for_amdgpu(arch):
    def k(a, b, out, r, n):
        out[0] = a[0] / b[0]
        out[1] = np.divide(a[0], b[0])
        r[0] = abs(a[0])
        n[0] = n[1] ** -3
        for v in np.nditer(r):
            v[()] = v.item() + 1

    for ct in ("complex64", "complex128"):
        ft = "float32" if ct == "complex64" else "float64"
        ck = cuda.compile(k, f"void({ct}[:], {ct}[:], {ct}[:], {ft}[:], int32[:])", arch=arch)
        assert ck.code_object[:4] == b"\x7fELF"


# ---- 4. cmath's inverse functions at large arguments: numba's log form above FLT_MAX / 4

@cuda.jit
def inverse_large(a, o):
    for i in range(a.size):
        z = a[i]
        o[0, i] = cmath.asinh(z)
        o[1, i] = cmath.acosh(z)
        o[2, i] = cmath.asin(z)
        o[3, i] = cmath.acos(z)


def test_complex64_inverse_functions_do_not_overflow_near_flt_max():
    a = np.array([3e38 + 3e38j, -3e38 + 1j], np.complex64)
    o = np.zeros((4, 2), np.complex64)
    inverse_large[1, 1](a, o)
    c = lambda re, im: complex(np.float32(re), np.float32(im))  # noqa: E731
    assert [complex(v) for v in o[:, 0]] == [
        c(89.63656616210938, 0.7853981852531433), c(89.63656616210938, 0.7853981852531433),
        c(0.7853981852531433, 89.63656616210938), c(0.7853981852531433, -89.63656616210938)]
    assert [complex(v) for v in o[:, 1]] == [
        c(-89.28999328613281, 3.333333116818801e-39), c(89.28999328613281, 3.1415927410125732),
        c(-1.5707963705062866, 89.28999328613281), c(3.1415927410125732, -89.28999328613281)]


def test_complex128_inverse_functions_at_large_arguments_are_numbas():
    a = np.array([3e38 + 3e38j, -1.7e308 + 1e308j], np.complex128)
    o = np.zeros((4, 2), np.complex128)
    inverse_large[1, 1](a, o)
    assert [complex(v) for v in o[:, 0]] == [
        89.63656659328177 + 0.7853981633974483j, 89.63656659328177 + 0.7853981633974483j,
        0.7853981633974483 + 89.63656659328177j, 0.7853981633974483 - 89.63656659328177j]
    assert [complex(v) for v in o[:, 1]] == [
        -710.5685604015412 + 0.5317240672588056j, 710.5685604015412 + 2.609868586330988j,
        -1.039072259536091 + 710.5685604015412j, 2.609868586330988 - 710.5685604015412j]


# ---- 5. for v in np.nditer(a): writable 0-d views; C order, memory order for F arrays (numba's)

@cuda.jit
def nditer_kernel(a, out):
    j = 0
    for v in np.nditer(a):
        out[j] = v.item() + v[()]
        v[()] = v.item() * 10
        j += 1


@pytest.mark.parametrize("case", ["c", "f", "strided", "transposed", "0d", "int"])
def test_nditer_single_array(case):
    base = np.arange(12.0).reshape(3, 4)
    a = {"c": np.arange(6.0).reshape(2, 3), "f": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
         "strided": base[::2, 1:3], "transposed": base.T[::2], "0d": np.full((), 5.0), "int": np.arange(4)}[case]
    # numba 0.68.1's order: C (logical) order, except memory order for an F-contiguous array
    # (numpy's own nditer takes K order: it would give 0, 2, 4... for "transposed")
    want = {"c": [0, 1, 2, 3, 4, 5], "f": [0, 3, 1, 4, 2, 5], "strided": [1, 2, 9, 10],
            "transposed": [0, 4, 8, 2, 6, 10], "0d": [5], "int": [0, 1, 2, 3]}[case]
    out = np.zeros(a.size)
    before = a.copy()
    nditer_kernel[1, 1](a, out)
    assert out.tolist() == [2.0 * w for w in want]
    assert (a == before * 10).all()


def test_nditer_and_item_errors():
    def two(a, b):
        for v in np.nditer((a, b)):
            a[0] = v.item()

    def item_1d(a):
        a[0] = a.item()

    with pytest.raises(cuda.CompileError, match="np.nditer\\(\\) takes one array"):
        cuda.jit("void(float64[:], float64[:])")(two)
    with pytest.raises(cuda.CompileError, match="item\\(\\) of a float64\\[::1\\] array is not supported"):
        cuda.jit("void(float64[::1])")(item_1d)
