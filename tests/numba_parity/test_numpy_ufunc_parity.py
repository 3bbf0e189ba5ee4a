"""numpy ufuncs in kernels on the values numba.cuda's ufunc tests use (complex operands
of the ordering ufuncs and of min/max, complex ``np.log2``) and kernels built from
generated source (``exec`` with the text in ``linecache``, the function renamed after
definition) -- run on the cpu target against numpy."""

from __future__ import annotations

import linecache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")

SPECIAL = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan]


def same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype.kind != "c":
        return bool(np.array_equal(got, want))
    ok = lambda g, w: (g == w) | (np.isnan(g) & np.isnan(w))  # noqa: E731
    return bool(np.all(ok(got.real, want.real) & ok(got.imag, want.imag)))


def special_pairs(dt):
    s = np.array(SPECIAL)
    z = np.empty(len(s) ** 2, dt)
    z.real, z.imag = np.repeat(s, len(s)), np.tile(s, len(s))
    a, b = np.meshgrid(z, z)
    return a.ravel(), b.ravel()


@cuda.jit
def order_and_minmax(a, b, o, m):
    for i in range(a.size):
        o[0, i] = np.less(a[i], b[i])
        o[1, i] = np.less_equal(a[i], b[i])
        o[2, i] = np.greater(a[i], b[i])
        o[3, i] = np.greater_equal(a[i], b[i])
        m[0, i] = np.maximum(a[i], b[i])
        m[1, i] = np.minimum(a[i], b[i])
        m[2, i] = np.fmax(a[i], b[i])
        m[3, i] = np.fmin(a[i], b[i])


def _numpy_order_and_minmax(a, b):
    with np.errstate(invalid="ignore"):
        o = np.array([np.less(a, b), np.less_equal(a, b), np.greater(a, b), np.greater_equal(a, b)])
        m = np.array([np.maximum(a, b), np.minimum(a, b), np.fmax(a, b), np.fmin(a, b)])
    return o, m


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_order_and_minmax_equal_numpy_on_special_values(dt):
    a, b = special_pairs(dt)
    o = np.zeros((4, a.size), np.bool_)
    m = np.zeros((4, a.size), dt)
    order_and_minmax[1, 1](a, b, o, m)
    want_o, want_m = _numpy_order_and_minmax(a, b)
    assert np.array_equal(o, want_o)
    assert same(m, want_m)


parts = st.sampled_from(SPECIAL) | st.floats(-4, 4, width=32)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(parts, parts, parts, parts), min_size=1, max_size=8))
def test_complex_order_and_minmax_equal_numpy(rows):
    a = np.array([complex(r[0], r[1]) for r in rows], np.complex128)
    b = np.array([complex(r[2], r[3]) for r in rows], np.complex128)
    o = np.zeros((4, a.size), np.bool_)
    m = np.zeros((4, a.size), np.complex128)
    order_and_minmax[1, 1](a, b, o, m)
    want_o, want_m = _numpy_order_and_minmax(a, b)
    assert np.array_equal(o, want_o)
    assert same(m, want_m)


@cuda.jit
def cmp_arrays(a, b, out):
    np.less(a, b, out)


def test_complex_order_ufunc_array_form():
    a = np.array([1 + 1j, 1 + 2j, 2 + 0j], np.complex64)
    b = np.array([1 + 2j, 1 + 1j, 1 + 9j], np.complex64)
    out = np.zeros(3, np.bool_)
    cmp_arrays[1, 1](a, b, out)
    assert np.array_equal(out, np.less(a, b))


def test_python_complex_ordering_still_refused():
    @cuda.jit
    def k(a, b, out):
        out[0] = a[0] < b[0]

    a = np.ones(1, np.complex128)
    with pytest.raises(cuda.CompileError, match="not defined for complex") as ei:
        k[1, 1](a, a, np.zeros(1, np.bool_))
    msg = str(ei.value)
    assert "out[0] = a[0] < b[0]" in msg and "^" in msg


@cuda.jit
def log2_of(a, out):
    for i in range(a.size):
        out[i] = np.log2(a[i])


@pytest.mark.parametrize("dt", [np.complex64, np.complex128])
def test_complex_log2_equals_numpy(dt):
    a, _ = special_pairs(dt)
    rng = np.random.default_rng(1)
    a = np.concatenate([a, (rng.standard_normal(64) + 1j * rng.standard_normal(64)).astype(dt)])
    out = np.zeros_like(a)
    log2_of[1, 1](a, out)
    with np.errstate(all="ignore"):
        want = np.log2(a)
    finite = np.isfinite(want)
    assert same(out[~finite], want[~finite])
    tol = 4 * np.finfo(a.real.dtype).eps
    assert np.allclose(out[finite], want[finite], rtol=tol, atol=tol)


def _generated_kernel(ufunc):
    """A kernel as generated code makes one: exec'd source registered in linecache, renamed."""
    args = ",".join(f"a{i}" for i in range(ufunc.nargs))
    src = f"def fn({args}):\n    np.{ufunc.__name__}({args})\n"
    fname = f"<pa-generated-{ufunc.__name__}>"
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    ns = {"np": np}
    exec(compile(src, fname, "exec"), ns)
    fn = ns["fn"]
    fn.__name__ = f"{ufunc.__name__}_usecase"
    return cuda.jit(fn)


def test_renamed_generated_function_compiles():
    k = _generated_kernel(np.hypot)
    a = np.array([3.0, 5.0]), np.array([4.0, 12.0])
    out = np.zeros(2)
    k[1, 1](*a, out)
    assert np.array_equal(out, np.hypot(*a))
