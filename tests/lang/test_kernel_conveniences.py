"""Small things numba.cuda programs write: float("inf") initial values, kernel default arguments."""

import numpy as np
import pytest

import pykern as cuda


def test_float_inf_and_nan_constants():
    cuda.set_target("cpu")

    @cuda.jit
    def minmax(x, out):
        if cuda.grid(1) == 0:
            lo = float("inf")
            hi = float("-inf")
            for j in range(x.size):
                lo = min(lo, x[j])
                hi = max(hi, x[j])
            out[0] = lo
            out[1] = hi
            out[2] = float("nan")

    x = np.random.default_rng(0).random(50).astype(np.float32)
    out = np.zeros(3, np.float32)
    minmax[1, 1](x, out)
    assert out[0] == x.min() and out[1] == x.max() and np.isnan(out[2])


def test_float_of_other_strings_is_a_located_compile_error():
    cuda.set_target("cpu")

    @cuda.jit
    def bad(out):
        out[0] = float("1.5")

    with pytest.raises(cuda.CompileError, match=r"only 'inf', '-inf' and 'nan'") as e:
        bad[1, 1](np.zeros(1))
    assert e.value.line is not None


def test_kernel_default_arguments_are_filled_in():
    cuda.set_target("cpu")

    @cuda.jit
    def fill(out, value=7, scale=2.0):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = value * scale

    out = np.zeros(4)
    fill[1, 4](out)
    np.testing.assert_array_equal(out, 14.0)
    fill[1, 4](out, 3)
    np.testing.assert_array_equal(out, 6.0)
    with pytest.raises(cuda.LaunchError, match="takes 1 to 3 argument"):
        fill[1, 4]()
