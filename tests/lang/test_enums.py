"""``enum.Enum``/``enum.IntEnum`` members in kernels, as numba.cuda compiles them: ``Color['red']``,
comparisons across enum classes, members as kernel arguments, IntEnum arithmetic and eager
signatures -- on the cpu target against Python."""

from __future__ import annotations

import enum

import numpy as np
import pytest

import pykern as cuda
from pykern.core.errors import CompileError

pytestmark = pytest.mark.usefixtures("cpu_target")


# ------------------------------------------------------------ Enum["name"]
class _Color(enum.Enum):
    red = 1
    green = 2


class _Err(enum.IntEnum):
    not_found = 404
    internal = 500


def test_enum_class_indexed_by_member_name():
    @cuda.jit
    def k(out, x):
        out[0] = _Color["red"] == _Color["green"]
        out[1] = _Color["green"] == _Color.green
        out[2] = x + _Err["internal"]

    out = np.zeros(3, np.int64)
    k[1, 1](out, 3)
    assert out.tolist() == [0, 1, 503]


def test_enum_class_indexed_by_an_unknown_name_is_a_compile_error():
    @cuda.jit
    def k(out):
        out[0] = _Err["gone"]

    with pytest.raises(CompileError, match="no member 'gone'"):
        k[1, 1](np.zeros(1, np.int64))


# ------------------------------------------------------------ Enum comparisons
class _Other(enum.Enum):
    x = 1  # the value of _Color.red


def test_members_of_different_enums_differ_even_with_equal_values():
    @cuda.jit
    def k(out):
        out[0] = _Color.red == _Other.x
        out[1] = _Color.red is _Other.x
        out[2] = _Color.red is _Color["red"]
        out[3] = _Color.red != _Other.x
        out[4] = _Color.red is not _Color.green

    out = np.zeros(5, np.bool_)
    k[1, 1](out)
    assert out.tolist() == [False, False, True, True, True]


class _Planet(enum.Enum):
    earth = (5.97e24, 6.37e6)
    mars = (6.42e23, 3.39e6)


def _enum_args(a, b, out):
    out[0] = a == b
    out[1] = a is b
    out[2] = a != b
    out[3] = a is not _Color.green


def test_enum_members_as_kernel_arguments_compare_as_python():
    # numba passes Enum and IntEnum members to kernels; pykern reads each as the member itself
    pairs = [(_Color.red, _Color.red), (_Color.red, _Color.green), (_Color.green, _Color.red),
             (_Color.red, _Other.x), (_Err.internal, _Err.internal), (_Err.not_found, _Err.internal)]
    k = cuda.jit(_enum_args)
    for a, b in pairs:
        got, want = np.zeros(4, np.bool_), np.zeros(4, np.bool_)
        k[1, 1](a, b, got)
        _enum_args(a, b, want)
        assert got.tolist() == want.tolist(), (a, b)


def test_enum_member_arguments_values_and_int_enum_arithmetic():
    @cuda.jit
    def k(p, e, n, out):
        out[0] = p.value[0] / p.value[1] ** 2
        out[1] = e + n  # an IntEnum member is an int
        out[2] = e * 2 - _Err.not_found
        out[3] = e == 500

    for p, e, n in ((_Planet.earth, _Err.internal, 3), (_Planet.mars, _Err.not_found, -7)):
        out = np.zeros(4)
        k[1, 1](p, e, n, out)
        assert out.tolist() == [p.value[0] / p.value[1] ** 2, e + n, e * 2 - _Err.not_found, e == 500]


def test_int_enum_members_convert_to_eager_signatures_as_ints():
    @cuda.jit("void(int32, int64[:])")
    def k(x, out):
        out[0] = x + 1

    out = np.zeros(1, np.int64)
    k[1, 1](_Err.internal, out)
    assert out[0] == _Err.internal + 1
    with pytest.raises(cuda.LaunchError, match="No matching definition"):
        k[1, 1](_Color.red, out)  # an Enum member is no number
