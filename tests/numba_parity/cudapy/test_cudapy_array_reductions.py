"""numba-cuda's ``tests/cudapy/test_array_reductions.py`` (see conftest.py): array reductions (sum,
prod, min, max, all, any, median...) in kernels."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


_RED_ARRAYS = (
    np.float64([1.0, 2.0, 0.0, -0.0, 1.0, -1.5]),
    np.float64([-0.0, -1.5]),
    np.float64([-1.5, 2.5, float("inf")]),
    np.float64([-1.5, 2.5, -float("inf")]),
    np.float64([-1.5, 2.5, float("inf"), -float("inf")]),
    np.float64([np.nan, -1.5, 2.5, np.nan, 3.0]),
    np.float64([np.nan, -1.5, 2.5, np.nan, float("inf"), -float("inf"), 3.0]),
    np.float64([5.0, np.nan, -1.5, np.nan]),
    np.float64([np.nan, np.nan]),
)


_NAN_ARRAYS = (
    np.float64([1.0, 2.0, 0.0, -0.0, 1.0, -1.5]),
    np.float64([-0.0, -1.5]),
    np.float64([-1.5, 2.5, np.nan]),
    np.float64([-1.5, 2.5, float("inf")]),
    np.float64([-1.5, 2.5, -float("inf")]),
    np.float64([-1.5, 2.5, float("inf"), -float("inf")]),
    np.float64([np.nan, -1.5, 2.5, np.nan, 3.0]),
    np.float64([5.0, np.nan, -1.5, np.nan]),
    np.float64([np.nan, np.nan]),
)


_NANMEAN_ARRAYS = (
    np.float64([1.0, 2.0, 0.0, -0.0, 1.0, -1.5]),
    np.float64([-0.0, -1.5]),
    np.float64([-1.5, 2.5, np.nan]),
    np.float64([np.nan, -1.5, 2.5, np.nan, 3.0]),
    np.float64([np.nan, -1.5, 2.5, np.nan, float("inf"), -float("inf"), 3.0]),
    np.float64([5.0, np.nan, -1.5, np.nan]),
    np.float64([np.nan, np.nan]),
)


def _reduction_kernel(fn, arrays):
    # numba's tests spell np.sum(arr), np.mean(arr)... in separate kernels: one module per
    # function keeps them separate here (closures over the function are another matter, see
    # test_closures_over_different_numpy_functions_are_different_kernels)
    import importlib.util
    import tempfile

    src = (
        "import numpy as np\n"
        "import pykern as cuda\n"
        "arrays = None\n"
        "def kernel(out):\n"
        "    i = 0\n"
        "    for arr in cuda.literal_unroll(arrays):\n"
        f"        out[i] = np.{fn.__name__}(arr)\n"
        "        i += 1\n"
    )
    path = f"{tempfile.mkdtemp(prefix='nb_red_')}/nb_red_{fn.__name__}.py"
    with open(path, "w") as f:
        f.write(src)
    spec = importlib.util.spec_from_file_location(f"nb_red_{fn.__name__}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.arrays = arrays
    return cuda.jit(mod.kernel)


@pytest.mark.parametrize("fn,arrays", [
    (np.sum, _RED_ARRAYS), (np.mean, _RED_ARRAYS), (np.var, _RED_ARRAYS), (np.std, _RED_ARRAYS),
    (np.min, _RED_ARRAYS), (np.max, _RED_ARRAYS), (np.nanmin, _NAN_ARRAYS), (np.nanmax, _NAN_ARRAYS),
    (np.nanmean, _NANMEAN_ARRAYS), (np.nansum, _NAN_ARRAYS), (np.nanprod, _NAN_ARRAYS),
], ids=lambda v: getattr(v, "__name__", ""))
def test_array_reductions_basic(fn, arrays):
    # test_array_reductions.py test_sum_basic .. test_nanprod_basic (assertPreciseEqual
    # "exact"; test_var_basic "double", 1 ulp)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = np.array([fn(a) for a in arrays], dtype=np.float64)
    out = cuda.to_device(np.zeros(len(arrays), dtype=np.float64))
    _reduction_kernel(fn, arrays)[1, 1](out)
    got = out.copy_to_host()
    if fn is np.var:
        np.testing.assert_allclose(got, expected, rtol=2.0**-52)
    else:
        np.testing.assert_array_equal(got, expected)


def test_array_reductions_all_any():
    # test_array_reductions.py test_all_basic / test_any_basic
    all_cases = (
        np.float64([1.0, 0.0, float("inf"), float("nan")]),
        np.float64([1.0, -0.0, float("inf"), float("nan")]),
        np.float64([1.0, 1.5, float("inf"), float("nan")]),
        np.float64([[1.0, 1.5], [float("inf"), float("nan")]]),
        np.float64([[1.0, 1.5], [1.5, 1.0]]),
    )
    any_cases = (
        np.float64([0.0, -0.0, 0.0, 0.0]),
        np.float64([0.0, -0.0, np.nan, 0.0]),
        np.float64([0.0, -0.0, float("inf"), 0.0]),
        np.float64([0.0, -0.0, 1.5, 0.0]),
        np.float64([[0.0, -0.0], [1.5, 0.0]]),
        np.float64([[0.0, -0.0], [1.5, 0.0]])[::-1],
    )
    for fn, cases in ((np.all, all_cases), (np.any, any_cases)):
        out = cuda.to_device(np.zeros(len(cases), dtype=np.bool_))

        @cuda.jit
        def kernel(out):
            i = 0
            for case in cuda.literal_unroll(cases):
                out[i] = fn(case)
                i += 1

        kernel[1, 1](out)
        np.testing.assert_array_equal(out.copy_to_host(), np.array([fn(a) for a in cases]))


def test_array_reductions_median():
    # test_array_reductions.py test_median_basic (sorted, reversed, shuffled, duplicates;
    # odd and even sizes, 2-d and transposed)
    rng = np.random.RandomState(42)

    def variations(a):
        yield a
        a = a[::-1].copy()
        yield a
        rng.shuffle(a)
        yield a
        a[a % 4 >= 1] = 3.5
        yield a

    def check(arr):
        @cuda.jit
        def kernel(out):
            out[0] = np.median(arr)

        out = cuda.to_device(np.zeros(1, dtype=np.float64))
        kernel[1, 1](out)
        assert out.copy_to_host()[0] == np.median(arr)

    for a in variations(np.arange(63) + 10.5):
        check(a)
        check(a.reshape((9, 7)))
        check(a.reshape((9, 7)).T)
    for a in variations(np.arange(64) + 10.5):
        check(a)
        check(a.reshape((4, 16)))
        check(a.reshape((4, 16)).T)


def test_closures_over_different_numpy_functions_are_different_kernels():
    # found porting test_array_reductions.py: a kernel factory closing over np.sum, then np.mean
    a = np.float64([1.0, 2.0, 0.0, -0.0, 1.0, -1.5])

    def make(fn):
        @cuda.jit
        def kernel(out):
            out[0] = fn(a)

        return kernel

    for fn in (np.sum, np.mean, np.max):
        out = np.zeros(1)
        make(fn)[1, 1](out)
        assert out[0] == fn(a), fn.__name__
