"""Optional (``None``) arguments of device functions and ``x is None`` (decided at compile time,
the dead branch pruned, as numba does), unreachable code after ``return``, and numba-cuda's
``@jit`` options ``boundscheck``/``lto``."""

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

    with pytest.raises(CompileError, match="compile-time argument"):
        k[1, 1](np.zeros(1))
