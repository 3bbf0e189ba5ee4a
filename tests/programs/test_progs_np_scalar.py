"""numpy ufuncs on numbers in kernels that real numba.cuda programs use and pykern lacked:
np.sign, np.square, np.reciprocal, np.signbit, np.heaviside, np.logaddexp(2), np.float_power --
compared with numpy's own loops, value and type, for float64/float32/float16 and integers."""

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_uncached")

SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.5, -3.75, 1e-30, -1e30, np.inf, -np.inf, np.nan, 700.0, -700.0]


@cuda.jit
def unary(x, sign, square, recip, signbit):
    i = cuda.grid(1)
    if i < x.size:
        sign[i] = np.sign(x[i])
        square[i] = np.square(x[i])
        recip[i] = np.reciprocal(x[i])
        signbit[i] = np.signbit(x[i])


@cuda.jit
def binary(x, y, heav, lae, lae2, fpow):
    i = cuda.grid(1)
    if i < x.size:
        heav[i] = np.heaviside(x[i], y[i])
        lae[i] = np.logaddexp(x[i], y[i])
        lae2[i] = np.logaddexp2(x[i], y[i])
        fpow[i] = np.float_power(abs(x[i]), y[i])


def _same(got, want):
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)  # NaNs in the same places, values bit-close below


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.float16, np.int32, np.int64, np.uint8])
def test_unary_ufuncs_match_numpy(dt):
    with np.errstate(all="ignore"):
        if np.dtype(dt).kind == "f":
            x = np.array(SPECIAL + list(np.random.default_rng(1).standard_normal(20) * 10), dt)
        else:
            x = np.array([0, 1, 2, 3, 100, 127] + ([-1, -2, -100] if np.dtype(dt).kind == "i" else []), dt)
        want = [np.sign(x), np.square(x), np.reciprocal(x) if x.dtype.kind == "f" else None, np.signbit(x)]
    if want[2] is None:
        want[2] = np.where(x == 1, 1, np.where(x.astype(np.int64) == -1, -1, 0)).astype(dt)  # C's 1 / x, 0 for 0
    outs = [np.zeros_like(want[0]), np.zeros_like(want[1]), np.zeros_like(want[2]), np.zeros_like(want[3])]
    unary[1, 64](x, *outs)
    for got, w in zip(outs, want):
        _same(got, w)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_binary_ufuncs_match_numpy(dt):
    rng = np.random.default_rng(2)
    x = np.array(SPECIAL + list(rng.standard_normal(20) * 5), dt)
    y = np.array(list(rng.permutation(SPECIAL)) + list(rng.standard_normal(20) * 5), dt)
    y[3] = x[3]  # equal arguments: x + ln 2
    with np.errstate(all="ignore"):
        want = [np.heaviside(x, y), np.logaddexp(x, y), np.logaddexp2(x, y), np.float_power(np.abs(x), y)]
    outs = [np.zeros_like(w) for w in want]
    binary[1, 64](x, y, *outs)
    for got, w in zip(outs, want):
        assert got.dtype == w.dtype
        np.testing.assert_allclose(got, w, rtol=4 * np.finfo(dt).eps, atol=0)


def test_python_numbers_and_integers_promote_as_numpy():
    @cuda.jit
    def k(out, n):
        out[0] = np.sign(-3)
        out[1] = np.logaddexp(n, 2)  # integers: float64
        out[2] = np.heaviside(n - 1, 0.5)
        out[3] = np.float_power(n, 2)

    out = np.zeros(4)
    k[1, 1](out, 1)
    np.testing.assert_allclose(out, [-1.0, np.logaddexp(1, 2), 0.5, 1.0], rtol=1e-15)


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.int64])
def test_np_round_matches_numpy(dt):
    @cuda.jit
    def k(x, r0, r2, rm1):
        i = cuda.grid(1)
        if i < x.size:
            r0[i] = np.round(x[i])
            r2[i] = np.around(x[i], 2)
            rm1[i] = np.round(x[i], decimals=-1)

    if np.dtype(dt).kind == "f":
        x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 2.675, 1.005, 0.125, 125.0, 135.0, -35.0, 1e30, np.nan, np.inf], dt)
    else:
        x = np.array([0, 5, 15, 25, -25, 1234, -1250], dt)
    outs = [np.zeros_like(x) for _ in range(3)]
    k[1, 32](x, *outs)
    with np.errstate(all="ignore"):
        for got, want in zip(outs, [np.round(x), np.round(x, 2), np.round(x, -1)]):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
