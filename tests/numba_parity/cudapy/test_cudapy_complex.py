"""numba-cuda's ``tests/cudapy/test_complex.py`` (see conftest.py): complex arithmetic,
real/imag/conjugate, cmath functions, atomics on components."""

from __future__ import annotations

import cmath
import itertools
import math

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def _assert_precise(got, expected, prec, ulps, ignore_sign_on_zero, msg):
    # numba's TestCase._assertPreciseEqual for floats, complex numbers and bools: NaN equals NaN
    # (a complex NaN any complex NaN), zeros and infinities exactly (with the sign of zero),
    # others within 2**(ulps - bits - 1) * (|got| + |expected|), per component for complex
    if isinstance(expected, bool):
        assert bool(got) == expected, msg
        return
    if cmath.isnan(got) and cmath.isnan(expected):
        return
    bits = {"single": 24, "double": 53}[prec]
    delta = 2.0 ** (ulps - bits - 1) * (abs(complex(got)) + abs(complex(expected)))

    def num(first, second):
        first, second = float(first), float(second)
        if first == second == 0.0 or math.isinf(first) or math.isinf(second):
            assert first == second, msg
            if not ignore_sign_on_zero:
                assert math.copysign(1, first) == math.copysign(1, second), msg
            return
        assert first == second or abs(first - second) <= delta, msg

    if isinstance(expected, complex):
        got, expected = complex(got), complex(expected)
        num(got.real, expected.real)
        num(got.imag, expected.imag)
    else:
        num(got, expected)


def _compile_scalar_func(pyfunc, argtypes, restype):
    # numba's test_complex.compile_scalar_func
    device_func = cuda.jit(restype(*argtypes), device=True)(pyfunc)
    kernel_types = [cuda.from_dtype(np.dtype(_np_of(tp)))[::1] for tp in [restype] + list(argtypes)]
    if len(argtypes) == 1:
        def kernel_func(out, a):
            i = cuda.grid(1)
            if i < out.shape[0]:
                out[i] = device_func(a[i])
    else:
        def kernel_func(out, a, b):
            i = cuda.grid(1)
            if i < out.shape[0]:
                out[i] = device_func(a[i], b[i])

    kernel = cuda.jit(tuple(kernel_types))(kernel_func)

    def kernel_wrapper(values):
        n = len(values)
        inputs = [np.empty(n, dtype=_np_of(tp)) for tp in argtypes]
        output = np.empty(n, dtype=_np_of(restype))
        for i, vs in enumerate(values):
            for v, inp in zip(vs, inputs):
                inp[i] = v
        kernel[int(math.ceil(n / 256)), 256](output, *inputs)
        return list(output)

    return kernel_wrapper


def _np_of(tp):
    return {cuda.complex64: np.complex64, cuda.complex128: np.complex128,
            cuda.float32: np.float32, cuda.float64: np.float64, cuda.boolean: np.bool_}[tp]


def _basic_values():
    reals = [-0.0, +0.0, 1, -1, +1.5, -3.5, float("-inf"), float("+inf"), float("nan")]
    return [complex(x, y) for x, y in itertools.product(reals, reals)]


def _more_values():
    reals = [0.0, +0.0, 1, -1, -math.pi, +math.pi, float("-inf"), float("+inf"), float("nan")]
    return [complex(x, y) for x, y in itertools.product(reals, reals)]


def _non_nan_values():
    reals = [-0.0, +0.0, 1, -1, -math.pi, +math.pi, float("inf"), float("-inf")]
    return [complex(x, y) for x, y in itertools.product(reals, reals)]


def _run_func(pyfunc, sigs, values, ulps=1, ignore_sign_on_zero=False):
    # numba's BaseComplexTest.run_func; sigs as (restype, argtypes)
    for restype, argtypes in sigs:
        prec = "single" if argtypes[0] in (cuda.float32, cuda.complex64) else "double"
        cudafunc = _compile_scalar_func(pyfunc, argtypes, restype)
        ok_values, expected_list = [], []
        for args in values:
            if not isinstance(args, (list, tuple)):
                args = (args,)
            try:
                expected_list.append(pyfunc(*args))
                ok_values.append(args)
            except ValueError as e:
                assert "math domain error" in str(e)
        got_list = cudafunc(ok_values)
        for got, expected, args in zip(got_list, expected_list, ok_values):
            _assert_precise(got, expected, prec, ulps, ignore_sign_on_zero,
                            f"{pyfunc.__name__} for input {args!r} with prec {prec}: {got!r} != {expected!r}")


def test_complex_basic_ops():
    # test_complex.py TestCudaComplexBasicOps.test_complex_add / _multiply / _abs
    @cuda.jit
    def complex_add_kernel(a, b, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] + b[i]

    @cuda.jit
    def complex_mul_kernel(a, b, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a[i] * b[i]

    a = np.array([1 + 2j, -3 + 4j, 5 - 6j], dtype=np.complex64)
    b = np.array([2 - 1j, 4 + 3j, -5 + 6j], dtype=np.complex64)
    for k, exp in ((complex_add_kernel, a + b), (complex_mul_kernel, a * b)):
        dout = cuda.to_device(np.zeros_like(a))
        k[1, 128](cuda.to_device(a), cuda.to_device(b), dout)
        cuda.synchronize()
        np.testing.assert_array_equal(dout.copy_to_host(), exp)

    @cuda.jit
    def complex_abs_kernel(inp, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = abs(inp[i])

    inp = np.array([3 + 4j, 5 - 12j, -8 + 15j], dtype=np.complex64)
    dout = cuda.to_device(np.zeros(inp.size, dtype=np.float32))
    complex_abs_kernel[1, 128](cuda.to_device(inp), dout)
    np.testing.assert_allclose(dout.copy_to_host(), np.abs(inp), rtol=1e-6)


def test_complex_real_imag_conjugate():
    # test_complex.py TestComplex.test_real / test_imag / test_conjugate
    def real_usecase(x):
        return x.real

    def imag_usecase(x):
        return x.imag

    def conjugate_usecase(x):
        return x.conjugate()

    c64, c128 = cuda.complex64, cuda.complex128
    for f in (real_usecase, imag_usecase):
        _run_func(f, [(cuda.float32, (c64,)), (cuda.float64, (c128,))], _basic_values())
    _run_func(conjugate_usecase, [(c64, (c64,)), (c128, (c128,))], _basic_values())


def _cm_phase(x):
    return cmath.phase(x)


def _cm_exp(x):
    return cmath.exp(x)


def _cm_polar(x):
    return complex(*cmath.polar(x))


def _cm_log(x):
    return cmath.log(x)


def _cm_log10(x):
    return cmath.log10(x)


def _cm_sqrt(x):
    return cmath.sqrt(x)


def _cm_acos(x):
    return cmath.acos(x)


def _cm_asin(x):
    return cmath.asin(x)


def _cm_atan(x):
    return cmath.atan(x)


def _cm_cos(x):
    return cmath.cos(x)


def _cm_sin(x):
    return cmath.sin(x)


def _cm_tan(x):
    return cmath.tan(x)


def _cm_acosh(x):
    return cmath.acosh(x)


def _cm_asinh(x):
    return cmath.asinh(x)


def _cm_atanh(x):
    return cmath.atanh(x)


def _cm_cosh(x):
    return cmath.cosh(x)


def _cm_sinh(x):
    return cmath.sinh(x)


def _cm_tanh(x):
    return cmath.tanh(x)


# (function, ulps, values or None, ignore_sign_on_zero): TestCMath.test_<name>
_CMATH_UNARY = [
    (_cm_polar, 1, None, False), (_cm_exp, 2, None, False), (_cm_log, 1, None, False), (_cm_log10, 1, None, False),
    (_cm_sqrt, 1, None, False), (_cm_acos, 2, None, False), (_cm_asin, 2, None, False),
    (_cm_atan, 2, _non_nan_values, False), (_cm_cos, 2, None, False), (_cm_sin, 2, None, False),
    (_cm_tan, 2, None, True), (_cm_acosh, 1, None, False), (_cm_asinh, 2, None, False),
    (_cm_atanh, 2, None, True), (_cm_cosh, 2, None, False), (_cm_sinh, 2, None, False),
    (_cm_tanh, 2, None, True),
]


@pytest.mark.parametrize("pyfunc,ulps,values,ignore_sign_on_zero", _CMATH_UNARY,
                         ids=[t[0].__name__[4:] for t in _CMATH_UNARY])
def test_cmath_unary(pyfunc, ulps, values, ignore_sign_on_zero):
    # test_complex.py TestCMath.test_<name> (test_polar for polar) via check_unary_func: complex128 over more_values, complex64 over
    # basic_values (or the test's own values for both)
    c64, c128 = cuda.complex64, cuda.complex128
    _run_func(pyfunc, [(c128, (c128,))], values() if values else _more_values(), ulps,
              ignore_sign_on_zero)
    _run_func(pyfunc, [(c64, (c64,))], values() if values else _basic_values(), ulps,
              ignore_sign_on_zero)


def test_cmath_phase():
    # test_complex.py TestCMath.test_phase
    _run_func(_cm_phase, [(cuda.float64, (cuda.complex128,))], _more_values())
    _run_func(_cm_phase, [(cuda.float32, (cuda.complex64,))], _basic_values())


def test_cmath_rect():
    # test_complex.py TestCMath.test_rect
    def rect_usecase(r, phi):
        return cmath.rect(r, phi)

    for tp, ft, seed in ((cuda.complex128, cuda.float64, _more_values()),
                         (cuda.complex64, cuda.float32, _basic_values())):
        values = [(z.real, z.imag) for z in seed if not math.isinf(z.imag) or z.real == 0]
        _run_func(rect_usecase, [(tp, (ft, ft))], values)


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite"])
def test_cmath_predicates(name):
    # test_complex.py TestCMath.test_isnan / test_isinf / test_isfinite
    f = getattr(cmath, name)

    def pred(x):
        return f(x)

    _run_func(pred, [(cuda.boolean, (cuda.complex128,)), (cuda.boolean, (cuda.complex64,))],
              _basic_values())


def test_cmath_log_base():
    # test_complex.py TestCMath.test_log_base (numba xfails it on Python >= 3.14)
    if (3, 14) <= __import__("sys").version_info[:2]:
        pytest.skip("cmath.log's behaviour changed in Python 3.14")

    def log_base_usecase(x, base):
        return cmath.log(x, base)

    values = list(itertools.product(_more_values(), _more_values()))
    _run_func(log_base_usecase, [(cuda.complex128, (cuda.complex128, cuda.complex128)),
                                 (cuda.complex64, (cuda.complex64, cuda.complex64))], values, ulps=3)


def test_complex_atomic_on_components():
    # test_complex.py TestAtomicOnComplexComponents.test_atomic_on_real / test_atomic_on_imag
    @cuda.jit
    def atomic_add_one(values):
        i = cuda.grid(1)
        cuda.atomic.add(values.real, i, 1)

    @cuda.jit
    def atomic_add_one_j(values):
        i = cuda.grid(1)
        cuda.atomic.add(values.imag, i, 1)

    arr1 = np.arange(32) + np.arange(32) * 1j
    arr2 = arr1.copy()
    atomic_add_one[1, 32](arr2)
    np.testing.assert_equal(arr1 + 1, arr2)
    arr2 = arr1.copy()
    atomic_add_one_j[1, 32](arr2)
    np.testing.assert_equal(arr1 + 1j, arr2)
