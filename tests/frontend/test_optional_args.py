"""Optional (``None``) arguments of device functions and ``x is None`` (decided at compile time,
the dead branch pruned, as numba does), None's truth value, ``a = None`` locals, compile-time
string comparisons, unreachable code after ``return``, and numba-cuda's ``@jit`` options
``boundscheck``/``lto``."""

import numpy as np
import pytest

import pykern as cuda
from pykern import CompileError

pytestmark = pytest.mark.usefixtures("cpu_uncached")


@cuda.jit(device=True)
def scaled(x, scale=None, offset=None):
    if scale is None:
        scale = 2.0
    if offset is not None:
        return x * scale + offset
    return x * scale


def test_none_defaults_and_explicit_values():
    @cuda.jit
    def k(a):
        a[0] = scaled(a[0])
        a[1] = scaled(a[1], 3.0)
        a[2] = scaled(a[2], offset=1.0)
        a[3] = scaled(a[3], None, 0.5)

    a = np.array([1.0, 1.0, 1.0, 1.0])
    k[1, 1](a)
    assert a.tolist() == [2.0, 3.0, 3.0, 2.5]


def test_code_after_return_is_not_compiled():
    @cuda.jit(device=True)
    def first(x):
        return x + 1
        y = "unreachable"  # noqa: F841  (a string would be a CompileError if it were lowered)

    @cuda.jit
    def k(a):
        for i in range(3):
            a[i] = first(a[i])
            continue
            a[i] = -1.0

    a = np.zeros(3)
    k[1, 1](a)
    assert a.tolist() == [1.0, 1.0, 1.0]


def test_none_used_as_a_number_names_the_parameter():
    @cuda.jit(device=True)
    def bad(x, offset=None):
        return x + offset

    @cuda.jit
    def k(a):
        a[0] = bad(a[0])

    with pytest.raises(CompileError, match="offset"):
        k[1, 1](np.zeros(1))


def test_is_between_numbers_is_refused():
    @cuda.jit
    def k(a):
        if a[0] is a[1]:
            a[0] = 1.0

    with pytest.raises(CompileError, match="only with None"):
        k[1, 1](np.zeros(2))


def test_numba_jit_options_boundscheck_and_lto():
    @cuda.jit(boundscheck=False, lto=True)
    def k(a):
        a[0] = 1.0

    a = np.zeros(1)
    k[1, 1](a)
    assert a[0] == 1.0
    with pytest.raises(NotImplementedError, match="debug=True"):
        cuda.jit(boundscheck=True)(lambda a: None)


def test_assigning_a_none_argument_in_a_loop_is_refused():
    @cuda.jit(device=True)
    def acc(x, total=None):
        for i in range(3):
            total = x * i
        return total

    @cuda.jit
    def k(a):
        a[0] = acc(a[0])

    with pytest.raises(CompileError, match="compile-time value"):
        k[1, 1](np.zeros(1))


def test_none_is_false_as_a_condition():
    @cuda.jit(device=True)
    def f(x, scale=None):
        if scale:  # None and 0.0 are false, as in Python
            x = x * scale
        if not scale:
            x = x + 100.0
        return x

    @cuda.jit
    def k(r, opt):
        r[0] = f(2.0)
        r[1] = f(2.0, 3.0)
        r[2] = f(2.0, None)
        r[3] = f(2.0, 0.0)
        r[4] = bool(opt)
        r[5] = 7.0 if opt else 8.0
        # `and`/`or` stop where a compile-time operand decides: `opt > 3` is never typed for None
        r[6] = opt is not None and opt > 3
        r[7] = opt is None or opt > 3

    def f_py(x, scale=None):
        if scale:
            x = x * scale
        if not scale:
            x = x + 100.0
        return x

    for opt in (None, 5, 2):
        r = np.zeros(8)
        k[1, 1](r, opt)
        expect = [f_py(2.0), f_py(2.0, 3.0), f_py(2.0, None), f_py(2.0, 0.0), bool(opt), 7.0 if opt else 8.0,
                  opt is not None and opt > 3, opt is None or opt > 3]
        assert r.tolist() == [float(e) for e in expect], opt


def test_none_argument_assigned_in_a_run_time_branch():
    @cuda.jit(device=True)
    def f(x, scale=None):
        if x > 0:
            if scale is None:
                scale = 2.0
            return x * scale  # the branch returns: past it, scale is None again
        if scale is None:
            return -x
        return x - scale

    @cuda.jit(device=True)
    def g(x, scale=None):
        if x > 0:
            scale = 2.0
        else:
            scale = 3.0
        return x * scale

    @cuda.jit
    def k(r):
        r[0], r[1], r[2], r[3] = f(2.0), f(-2.0), f(2.0, 5.0), f(-2.0, 5.0)
        r[4], r[5], r[6] = g(2.0), g(-2.0), g(2.0, None)

    r = np.zeros(7)
    k[1, 1](r)
    assert r.tolist() == [4.0, 2.0, 10.0, -7.0, 4.0, -6.0, 4.0]


def test_none_on_one_path_and_a_value_on_another_is_refused():
    @cuda.jit(device=True)
    def f(x, scale=None):
        if x > 0:
            scale = 2.0
        return x * scale  # numba: Optional(float64)

    @cuda.jit
    def k(r):
        r[0] = f(r[0])

    with pytest.raises(CompileError, match="None on one path to here") as e:
        k[1, 1](np.zeros(1))
    assert "return x * scale" in str(e.value)


def test_local_none_and_compile_time_string_comparisons():
    MODE = "fast"

    @cuda.jit
    def k(r, n):
        best = None
        for i in range(n):
            if i > 0:
                pass
            unused = None  # noqa: F841  (numba types it as none)
        if best is None:
            r[0] = 1.0
        best = 5.0  # a value from here on
        r[1] = best
        if MODE == "fast" and "a" != "b":
            r[2] = 2.0
        if MODE == b"fast" or "x" == "y":  # str and bytes differ, as in Python
            r[3] = 9.0

    r = np.zeros(4)
    k[1, 1](r, 3)
    assert r.tolist() == [1.0, 5.0, 2.0, 0.0]

    @cuda.jit
    def bad(r):
        v = r[0]
        if r[1] > 0:
            v = None
        r[1] = v is None  # both versions reach here: Optional (apart, they are two variables)

    with pytest.raises(CompileError, match="Optional") as e:
        bad[1, 1](np.zeros(2))
    assert "v = None" in str(e.value)
