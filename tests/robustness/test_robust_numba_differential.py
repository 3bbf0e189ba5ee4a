"""Answers where a differential of pykern kernels against numba 0.68.1 (``@njit`` loops and
numba.cuda's typing templates, over extreme values: 0, -1, integer minima and maxima, NaN,
+-inf, -0.0, subnormals) found pykern different, now numba's. numba's answers are written
here as literals (numba 0.68.1, numpy 2.4; numba is not needed to run this file); where numba
is installed, ``test_the_literals_are_numbas`` derives them again from it."""

import math

import numpy as np
import pytest

import pykern as cuda
from frontend_helpers import lower
from pykern.frontend import types as T

pytestmark = pytest.mark.usefixtures("cpu_uncached")

#: the argument types of the tables below, in order
TYPES = [T.int8, T.uint8, T.int16, T.uint16, T.int32, T.uint32, T.int64, T.uint64, T.boolean, T.float32, T.float64]

#: numba.cuda 0.68.1's result type of ``math.<f>(a, b)`` (its typing context,
#: ``cuda_target.typing_context.resolve_function_type``): row ``a``, column ``b`` of TYPES;
#: f float32, d float64. ``nextafter`` (not in numba.cuda) is numba's njit table.
MATH2 = {
    "atan2": "dddddddddfd dddddddddfd dddddddddfd ddddddddddd ddddddddddd ddddddddddd ddddddddddd ddddddddddd "
             "dddddddddfd fffdddddffd ddddddddddd",
    "hypot": "dddddddddfd dddddddddfd dddddddddfd ddddddddddd ddddddddddd ddddddddddd ddddddddddd ddddddddddd "
             "dddddddddfd fffdddddffd ddddddddddd",
    "copysign": "fffdddddffd fffdddddffd fffdddddffd ddddddddddd ddddddddddd ddddddddddd ddddddddddd ddddddddddd "
                "fffdddddffd fffdddddffd ddddddddddd",
    "fmod": "fffdddddffd fffdddddffd fffdddddffd ddddddddddd ddddddddddd ddddddddddd ddddddddddd ddddddddddd "
            "fffdddddffd fffdddddffd ddddddddddd",
    "remainder": "fffdddddffd fffdddddffd fffdddddffd ddddddddddd ddddddddddd ddddddddddd ddddddddddd ddddddddddd "
                 "fffdddddffd fffdddddffd ddddddddddd",
    "pow": "fffdfdddffd fffdfdddffd fffdfdddffd ddddddddddd ddddddddddd ddddddddddd ddddddddddd ddddddddddd "
           "fffdfdddffd fffffdddffd ddddddddddd",
    # (numba also converts a float exponent to int32, truncating it; pykern refuses floats there,
    # as Python does: the last two columns are not compared)
    "ldexp": "fffffffffff fffffffffff fffffffffff ddddddddddd ddddddddddd ddddddddddd ddddddddddd ddddddddddd "
             "fffffffffff fffffffffff ddddddddddd",
    "nextafter": "dddddddddfd dddddddddfd dddddddddfd ddddddddddd ddddddddddd ddddddddddd ddddddddddd ddddddddddd "
                 "dddddddddfd fffdddddffd ddddddddddd",
}

#: numba 0.68.1 (njit) result type of ``np.<f>(a, 2)`` with an int literal, per TYPES ("-": no loop)
NP_INT_LITERAL = {
    "lcm": ["int64"] * 7 + ["-", "int64", "-", "-"],
    "gcd": ["int64"] * 7 + ["-", "int64", "-", "-"],
    "fmod": ["int64"] * 7 + ["float64", "int64", "float32", "float64"],
    "ldexp": ["float32"] * 4 + ["float64"] * 4 + ["float32", "float32", "float64"],
}


def _local_type(expr, a, b=T.int64):
    return lower(f"def k(x, y):\n    a = x[0]\n    b = y[0]\n    v = {expr}\n", [T.Array(a, 1), T.Array(b, 1)]).kernel.locals["v"]


def _typed(expr, a, b=T.int64):
    from pykern.core.errors import CompileError

    try:
        return str(_local_type(expr, a, b))
    except CompileError:
        return "-"


# ---------------------------------------------------------------- int literals in numpy functions


@pytest.mark.parametrize("fn", sorted(NP_INT_LITERAL))
def test_int_literal_in_a_numpy_function_is_numbas_int64(fn):
    got = [_typed(f"np.{fn}(a, 2)", t) for t in TYPES]
    assert got == NP_INT_LITERAL[fn]
    if fn != "ldexp":  # the literal first
        assert [_typed(f"np.{fn}(2, a)", t) for t in TYPES] == NP_INT_LITERAL[fn]


@cuda.jit
def _lcm_gcd_of_uint8(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = np.lcm(x[i], 2)
        out[i, 1] = np.gcd(x[i], 170)
        out[i, 2] = np.lcm(x[i], np.int64(2))
        out[i, 3] = np.fmod(x[i], 200)


def test_lcm_of_uint8_and_an_int_literal_does_not_wrap_in_uint8():
    x = np.array([255, 0, 1, 128, 254, 85], np.uint8)
    out = np.zeros((x.size, 4), np.int64)
    _lcm_gcd_of_uint8[1, 8](x, out)
    # numba 0.68.1: np.lcm(np.uint8(255), 2) == 510 (int64); numpy's uint8 loop would give 254
    assert out[:, 0].tolist() == [510, 0, 2, 128, 254, 170]
    assert out[:, 1].tolist() == [85, 170, 1, 2, 2, 85]
    assert out[:, 2].tolist() == out[:, 0].tolist()  # the literal and np.int64(2) alike
    assert out[:, 3].tolist() == [55, 0, 1, 128, 54, 85]


def test_no_loop_for_uint64_and_an_int_literal_is_a_compile_error():
    # numba: uint64 with its int64 literal has no integer loop of np.lcm / np.gcd (numpy's would be float64)
    from pykern.core.errors import CompileError

    with pytest.raises(CompileError, match="np.lcm has no loop for uint64, int64"):
        _local_type("np.lcm(a, 2)", T.uint64)


# ---------------------------------------------------------------- two-argument math functions


@pytest.mark.parametrize("fn", sorted(MATH2))
def test_two_argument_math_result_types_are_numba_cudas(fn):
    want = MATH2[fn].split()
    codes = {"float32": "f", "float64": "d", "-": "-"}
    bad = []
    for i, a in enumerate(TYPES):
        for j, b in enumerate(TYPES):
            if fn == "ldexp" and isinstance(b, T.Float):
                continue
            got = codes[_typed(f"math.{fn}(a, b)", a, b)]
            if got != want[i][j]:
                bad.append((str(a), str(b), got, want[i][j]))
    assert not bad


@cuda.jit
def _mixed_math(f, u, e, outs):
    i = cuda.grid(1)
    if i < f.size:
        outs[i, 0] = math.hypot(f[i], u[i])
        outs[i, 1] = math.atan2(f[i], u[i])
        outs[i, 2] = math.copysign(f[i], u[i])
        outs[i, 3] = math.pow(f[i], e[i])


def test_float32_with_uint16_is_computed_in_float64():
    """numba's uint16-with-float32 rule holds for the math functions as for operators: the
    float32 result of math.hypot(float32, uint16) differed in the last bits."""
    f = np.array([1.1, -0.3, 3.4028235e38, 1e-45, 7.0, np.inf, np.nan, -0.0], np.float32)
    u = np.array([3, 65535, 65535, 1, 0, 2, 1, 7], np.uint16)
    e = np.array([3, -2, 1, 2, 0, -1, 5, 31], np.int32)
    outs = np.zeros((f.size, 4))
    _mixed_math[1, 8](f, u, e, outs)
    for k, (x, n, p) in enumerate(zip(f.tolist(), u.tolist(), e.tolist())):
        for j, want in enumerate((math.hypot(x, n), math.atan2(x, n), math.copysign(x, n))):
            assert outs[k, j] == want or (math.isnan(outs[k, j]) and math.isnan(want)), (j, x, n)
        # math.pow(float32, int32) is numba's float32 powi: float32 result
        with np.errstate(all="ignore"):
            want = np.float32(np.float64(x) ** np.float64(p))
        assert outs[k, 3] == want or (math.isnan(outs[k, 3]) and math.isnan(want)), (x, p)
    assert outs[0, 0] != float(np.float32(math.hypot(np.float32(1.1), 3)))  # not float32 any more


# ---------------------------------------------------------------- float() and complex()


@cuda.jit
def _float_of_float32(x, out, z):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = float(x[i]) / np.float32(3)
        z[i] = complex(x[i], x[i]) / np.float32(3)


def test_float_of_float32_stays_float32():
    x = np.array([1.0, 2.0, 0.1, 3.4028235e38, 1e-45, -0.0, 7.0], np.float32)
    out, z = np.zeros(x.size), np.zeros(x.size, np.complex128)
    _float_of_float32[1, 8](x, out, z)
    # numba 0.68.1: float(float32) is float32, so the division is a float32 one
    assert out.tolist() == (x / np.float32(3)).astype(np.float64).tolist()
    assert out[0] == float(np.float32(1 / 3)) != 1 / 3
    assert z.real.tolist() == (x / np.float32(3)).astype(np.float64).tolist()
    assert _typed("float(a)", T.float32) == "float32" and _typed("float(a)", T.int8) == "float64"
    assert _typed("complex(a)", T.float32) == "complex64" and _typed("complex(a, b)", T.float32, T.float64) == \
        "complex128"


# ---------------------------------------------------------------- code numba compiles


@cuda.jit
def _shifts_and_dead_divisions(x, c, out, z):
    i = cuda.grid(1)
    if i < x.size:
        out[i, 0] = x[i] >> -128
        out[i, 1] = x[i] << -1
        out[i, 2] = x[i] if c[i] else 3 // 0
        out[i, 3] = 7 % 0 if c[i] else x[i]
        z[i] = complex(x[i], 0.0) if c[i] else 3.0 / complex(0.0, -0.0)


def test_negative_constant_shift_counts_and_constant_division_by_zero_run():
    """numba compiles these; the shift by a negative count shifts every bit out (README), an
    integer division by zero is 0 and a complex one numpy's infinities, where they run."""
    x = np.array([5, -5, 0, np.iinfo(np.int64).min, np.iinfo(np.int64).max, -1], np.int64)
    c = np.array([1, 0, 1, 0, 1, 0], np.uint8)
    out = np.zeros((x.size, 4), np.int64)
    z = np.zeros(x.size, np.complex128)
    _shifts_and_dead_divisions[1, 8](x, c, out, z)
    assert out[:, 0].tolist() == [0, -1, 0, -1, 0, -1]
    assert out[:, 1].tolist() == [0] * 6
    assert out[:, 2].tolist() == [5, 0, 0, 0, np.iinfo(np.int64).max, 0]
    assert out[:, 3].tolist() == [0, -5, 0, np.iinfo(np.int64).min, 0, -1]
    for k in range(x.size):
        if c[k]:
            assert z[k] == complex(x[k], 0)
        else:  # 3 / (0 - 0j): CPython's division, numpy's values for a zero divisor
            assert math.isinf(z[k].real) and z[k].real > 0 and math.isnan(z[k].imag)


_SPECIAL = [0.0, -0.0, 1.0, -2.5, 0.5, 1.5, 2.5, 1e308, 1e-310, -1e-310, 3e38, np.inf, -np.inf, np.nan]


@cuda.jit
def _complex_ufuncs(z, outs, flags):
    i = cuda.grid(1)
    if i < z.size:
        outs[i, 0] = np.sign(z[i])
        outs[i, 1] = np.reciprocal(z[i])
        outs[i, 2] = np.rint(z[i])
        outs[i, 3] = np.square(z[i])
        flags[i, 0] = np.isfinite(z[i])
        flags[i, 1] = np.isnan(z[i])
        flags[i, 2] = np.isinf(z[i])


@pytest.mark.parametrize("dt", [np.complex128, np.complex64])
def test_sign_reciprocal_rint_and_predicates_of_complex_values_equal_numpys(dt):
    """numba compiles these; pykern now does, with numpy's values bit for bit (numba's np.sign
    is NaN at every infinity and its reciprocal an ulp off numpy's; numpy's are the answers)."""
    with np.errstate(over="ignore"):
        z = np.array([complex(a, b) for a in _SPECIAL for b in _SPECIAL], dt)
    outs, flags = np.zeros((z.size, 4), dt), np.zeros((z.size, 3), bool)
    _complex_ufuncs[(z.size + 63) // 64, 64](z, outs, flags)
    with np.errstate(all="ignore"):
        want = [np.sign(z), np.reciprocal(z), np.rint(z), np.square(z)]
    for k, w in enumerate(want):
        got = outs[:, k]
        for part in ("real", "imag"):
            g, e = getattr(got, part), getattr(w, part)
            same = ((g == e) & (np.signbit(g) == np.signbit(e))) | (np.isnan(g) & np.isnan(e))
            assert same.all(), (k, part, z[~same][:4], g[~same][:4], e[~same][:4])
    assert (flags[:, 0] == np.isfinite(z)).all() and (flags[:, 1] == np.isnan(z)).all()
    assert (flags[:, 2] == np.isinf(z)).all()
    assert _typed("np.sign(complex(a, a))", T.float32) == "complex64"


# ---------------------------------------------------------------- numba itself, where installed


def test_the_literals_are_numbas():
    """The tables above, derived from numba (skipped where numba is not installed)."""
    numba = pytest.importorskip("numba")
    import warnings

    from numba import types as nbt

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from numba.core.registry import cpu_target
        from numba.cuda.descriptor import cuda_target
    code = {"float32": "f", "float64": "d"}

    def resolve(ctx, fn, args):
        try:
            sig = ctx.resolve_function_type(ctx.resolve_value_type(fn), args, {})
        except Exception:  # noqa: BLE001 -- numba's typing errors vary
            return None
        return None if sig is None else str(sig.return_type)

    for name, table in MATH2.items():
        ctx = (cpu_target if name == "nextafter" else cuda_target).typing_context
        ctx.refresh()
        nb = [getattr(nbt, str(t)) for t in TYPES]
        rows = [
            "".join(code.get(resolve(ctx, getattr(math, name), (a, b)), "-") for b in nb) for a in nb
        ]
        assert " ".join(rows) == table, name
    ctx = cpu_target.typing_context
    ctx.refresh()
    for name, want in NP_INT_LITERAL.items():
        got = [resolve(ctx, getattr(np, name), (getattr(nbt, str(t)), nbt.IntegerLiteral(2))) or "-" for t in TYPES]
        assert got == want, name
    assert numba.__version__
