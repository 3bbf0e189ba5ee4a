"""Kernel-language behaviour that numba-cuda's own cudapy tests rely on, on the cpu
target against numpy/Python: augmented slice assignment, ``len(range(...))``,
``np.complex64(re, im)``, ``Color["red"]``, global lists, cmath special values,
recarray alignment; and amdgpu builds of the new lowering.
"""

from __future__ import annotations

import cmath
import enum
import math

import numpy as np
import pytest

import pykern as cuda
from pykern.core.errors import CompileError

pytestmark = pytest.mark.usefixtures("cpu_target")


# ------------------------------------------------------------ a[1:3] op= v
def _aug_kernel(a, b, m):
    a[1:3] += 5
    a[3:] *= b[:3]
    m[1] += 10  # a row of a 2-d array
    m[:, 0] -= b[0:3]
    m[0, 1:] //= 2
    m[2, ::-1] %= 3


def test_augmented_slice_assignment_matches_numpy():
    a, b, m = np.arange(6.0), np.array([2.0, 3.0, 4.0, 5.0]), np.arange(-4, 5).reshape(3, 3)
    ea, em = a.copy(), m.copy()
    ea[1:3] += 5
    ea[3:] *= b[:3]
    em[1] += 10
    em[:, 0] -= b[0:3].astype(np.int64)
    em[0, 1:] //= 2
    em[2, ::-1] %= 3
    cuda.jit(_aug_kernel)[1, 1](a, b, m)
    np.testing.assert_array_equal(a, ea)
    np.testing.assert_array_equal(m, em)


def test_augmented_slice_assignment_reads_an_overlapping_source_first():
    @cuda.jit
    def shift_add(a, c):
        a[1:] += a[:-1]
        c[:-1] += c[1:]

    a, c = np.arange(8.0), np.arange(8.0)
    ea, ec = a.copy(), c.copy()
    ea[1:] += ea[:-1]  # numpy reads the source as it was
    ec[:-1] += ec[1:]
    shift_add[1, 1](a, c)
    np.testing.assert_array_equal(a, ea)
    np.testing.assert_array_equal(c, ec)


def test_augmented_slice_assignment_with_a_tuple_and_a_device_function():
    @cuda.jit(device=True)
    def bump(row, v):
        row[:] += v

    @cuda.jit
    def k(a, m):
        a[:3] += (1, 2, 3)
        bump(m[1], 2.5)

    a, m = np.ones(4), np.zeros((2, 3), np.float32)
    k[1, 1](a, m)
    np.testing.assert_array_equal(a, [2, 3, 4, 1])
    np.testing.assert_array_equal(m, [[0, 0, 0], [2.5, 2.5, 2.5]])


def test_augmented_slice_assignment_evaluates_the_value_once():
    @cuda.jit
    def k(a, counter):
        a[:] += cuda.atomic.add(counter, 0, 1)

    a, counter = np.zeros(5, np.int64), np.full(1, 7, np.int64)
    k[1, 1](a, counter)
    np.testing.assert_array_equal(a, 7)
    assert counter[0] == 8


def test_augmented_assignment_to_a_read_only_slice_is_a_compile_error():
    c = np.arange(4.0)

    @cuda.jit
    def k(a):
        cc = cuda.const.array_like(c)
        cc[1:] += a[0]

    with pytest.raises(CompileError, match="read-only"):
        k[1, 1](np.zeros(1))


# ------------------------------------------------------------ len(range(...))
def test_len_of_range_is_the_loop_trip_count():
    @cuda.jit
    def k(out, a, b, s):
        out[0] = len(range(a))
        out[1] = len(range(a, b))
        out[2] = len(range(a, b, s))
        out[3] = len(range(b, a, -s))
        out[4] = len(range(5, 1))
        n = 0
        for i in range(len(range(0, 10, 3))):
            n += i
        out[5] = n

    for a, b, s in [(3, 11, 2), (0, 0, 1), (-5, 7, 3), (10, 2, 4), (2, 3, 7)]:
        out = np.zeros(6, np.int64)
        k[1, 1](out, a, b, s)
        want = [len(range(a)), len(range(a, b)), len(range(a, b, s)), len(range(b, a, -s)), 0, sum(range(len(range(0, 10, 3))))]
        assert out.tolist() == want, (a, b, s)


# ------------------------------------------------------------ np.complex64(re, im)
@pytest.mark.parametrize("ct, ft", [(np.complex64, np.float32), (np.complex128, np.float64)])
def test_numpy_complex_type_of_two_parts(ct, ft):
    @cuda.jit
    def k(out, re, im):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = ct(re[i], im[i])
        if i == 0:
            out[3] = ct(1.5, 2)

    re = np.array([1.5, -2.0, 0.1, 0.0], ft)
    im = np.array([-3.25, 4.0, 1e-3, 0.0], ft)
    out = np.zeros(4, ct)
    k[1, 3](out, re, im)
    want = np.array([ct(complex(r, i)) for r, i in zip(re, im)])
    want[3] = ct(1.5 + 2j)
    np.testing.assert_array_equal(out, want)
    assert out.dtype == ct


def test_numpy_complex_type_refuses_complex_parts():
    @cuda.jit
    def k(out, re, im):
        out[0] = np.complex128(re, im)

    with pytest.raises(CompileError, match="real parts"):
        k[1, 1](np.zeros(1, np.complex128), 1j, 2.0)


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


# ------------------------------------------------------------ global lists
_WEIGHTS = [0.25, 0.5, 0.25]


def test_global_list_is_read_as_a_frozen_tuple():
    @cuda.jit
    def k(out, a):
        i = cuda.grid(1)
        if i < out.size:
            s = 0.0
            for j in range(len(_WEIGHTS)):
                s += _WEIGHTS[j] * a[i + j]
            for w in _WEIGHTS:
                s += w
            out[i] = s

    a, out = np.arange(10.0), np.zeros(8)
    k[1, 8](out, a)
    np.testing.assert_allclose(out, np.convolve(a, _WEIGHTS, "valid") + 1.0)


def test_closure_list_of_ints():
    lst = [3, 1, 2]

    @cuda.jit
    def k(out):
        for i in range(len(lst)):
            out[i] = lst[i]

    out = np.zeros(3)
    k[1, 1](out)
    assert out.tolist() == lst


# ------------------------------------------------------------ cmath special values
_REALS = [-0.0, 0.0, 1.0, -1.0, -math.pi, math.inf, -math.inf, math.nan]
_VALUES = [complex(x, y) for x in _REALS for y in _REALS]
_UNARY = ["sqrt", "exp", "log", "log10", "sin", "cos", "tan", "sinh", "cosh", "tanh",
          "asin", "acos", "atan", "asinh", "acosh", "atanh"]


def _same_complex(got, want, rel):
    def same(g, w):
        if math.isnan(w) or math.isnan(g):
            return math.isnan(w) and math.isnan(g)
        if math.isinf(w) or math.isinf(g) or w == 0:
            return g == w
        return abs(g - w) <= rel * abs(w)
    return same(got.real, want.real) and same(got.imag, want.imag)


def _cmath_kernel(fn):
    @cuda.jit
    def k(out, z):
        i = cuda.grid(1)
        if i < z.size:
            out[i] = fn(z[i])
    return k


@pytest.mark.parametrize("name", _UNARY)
def test_cmath_special_values_are_pythons(name):
    fn = getattr(cmath, name)
    k = _cmath_kernel(fn)
    for ct, rel in ((np.complex128, 1e-13), (np.complex64, 1e-6)):
        vals = [v for v in _VALUES if not (ct is np.complex64 and math.isfinite(v.real) and math.isfinite(v.imag))]
        ok = []
        for v in vals:
            v = complex(ct(v))  # the argument as the kernel sees it (-pi rounds up in float32)
            try:
                ok.append((v, fn(v)))
            except ValueError:
                pass
        z = np.array([v for v, _ in ok], ct)
        out = np.zeros_like(z)
        k[1, len(z)](out, z)
        bad = [(v, complex(g), w) for (v, w), g in zip(ok, out) if not _same_complex(complex(g), w, rel)]
        assert not bad, (name, ct, bad[:5])


def test_cmath_rect_special_values_are_pythons():
    @cuda.jit
    def k(out, r, phi):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = cmath.rect(r[i], phi[i])

    pairs = []
    for x in _REALS:
        for y in _REALS:
            try:
                pairs.append((x, y, cmath.rect(x, y)))
            except ValueError:
                pass
    r, phi = (np.array([p[k] for p in pairs]) for k in (0, 1))
    out = np.zeros(len(pairs), np.complex128)
    k[1, len(pairs)](out, r, phi)
    bad = [(x, y, complex(g), w) for (x, y, w), g in zip(pairs, out) if not _same_complex(complex(g), w, 1e-13)]
    assert not bad, bad[:5]


def test_atanh_of_an_infinite_imaginary_part_is_a_quarter_turn():
    # was 3*pi/8 (a finite wrong answer) before the special values
    k = _cmath_kernel(cmath.atanh)
    z = np.array([complex(0, math.inf), complex(1, -math.inf)])
    out = np.zeros_like(z)
    k[1, 2](out, z)
    np.testing.assert_array_equal(out, [cmath.atanh(v) for v in z])


# ------------------------------------------------------------ recarray alignment
def test_recarray_of_an_aligned_dtype_matches_an_aligned_signature():
    dt = np.dtype([("a", np.int32), ("b", np.float64)], align=True)

    @cuda.jit((cuda.from_dtype(dt)[:],))
    def k(r):
        i = cuda.grid(1)
        r[i].a = r[i].b

    ra = np.recarray(3, dtype=dt)
    ra.a = 0
    ra.b = np.array([123.0, 246.0, 369.0])
    k[1, 3](ra)
    np.testing.assert_array_equal(ra.a, ra.b)


def test_array_field_of_a_recarray_element():
    dt = np.dtype([("g", np.int32), ("h", np.float32, 2)], align=True)

    @cuda.jit
    def k(rec, out):
        rec.h[1] = 4.0
        out[0] = rec.h[0]

    ra = np.recarray(1, dtype=dt)
    ra[0].h[0] = 15.0
    out = np.zeros(1, np.float32)
    k[1, 1](ra[0], out)
    assert out[0] == 15.0 and ra[0].h[1] == 4.0


_PACKED = np.dtype([("a", np.int8), ("b", np.float64), ("c", np.complex64)])  # b at byte 1, c at 9


def _field_views(x, o1, o2):
    i = cuda.grid(1)
    if i < x.size:
        o1[i] = x.b[i] + x.a[i]
        o2[i] = x.c[::-1][i]


def _field_writes(x):
    i = cuda.grid(1)
    if i < x.size:
        x.b[i] = -x.b[i]
        s = x.c
        s[i] += 1


def test_record_array_fields_are_array_views_as_numpy_gives():
    # numba types `a.b` of an array of records as the strided array of the field (np.recarray's
    # attribute); here in a packed record, whose fields sit at odd bytes
    a = np.zeros(5, _PACKED)
    a["a"], a["b"], a["c"] = np.arange(5), np.arange(5) * 1.5, np.arange(5) * (1 - 2j)
    o1, o2 = np.zeros(5), np.zeros(5, np.complex64)
    cuda.jit(_field_views)[1, 8](a, o1, o2)
    np.testing.assert_array_equal(o1, a["b"] + a["a"])
    np.testing.assert_array_equal(o2, a["c"][::-1])
    want_b, want_c = -a["b"], a["c"] + 1
    cuda.jit(_field_writes)[1, 8](a)
    np.testing.assert_array_equal(a["b"], want_b)
    np.testing.assert_array_equal(a["c"], want_c)
    r = np.recarray(4, dtype=[("x", np.int32), ("y", np.float32)])
    r.x, r.y = [1, 2, 3, 4], [0.5, 0.25, 2.0, 4.0]
    out = np.zeros(4, np.float32)

    @cuda.jit
    def k(r, out):
        for i in range(r.size):
            out[i] = r.x[i] * r.y[i]

    k[1, 1](r, out)
    np.testing.assert_array_equal(out, r.x * r.y)


def test_a_record_array_field_that_is_no_number_is_a_compile_error():
    dt = np.dtype([("g", np.int32), ("h", np.float32, 2)])

    @cuda.jit
    def k(a, out):
        out[0] = a.h[0][0]

    with pytest.raises(CompileError, match="only number fields"):
        k[1, 1](np.zeros(2, dt), np.zeros(1, np.float32))


# ------------------------------------------------------------ amdgpu
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_record_array_field_views_build_for_amdgpu(arch):
    sig = (cuda.from_dtype(_PACKED)[::1], cuda.float64[::1], cuda.complex64[::1])
    assert cuda.compile(_field_views, sig, arch=arch).code_object[:4] == b"\x7fELF"


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_new_lowering_builds_for_amdgpu(arch):
    def k(a, b, out, z):
        a[1:3] += b[0]
        a[2:] *= b[:2]
        out[0] = len(range(1, a.size, 2))
        z[0] = cmath.acos(z[1]) + np.complex128(a[0], b[0])

    sig = "void(float64[::1], float64[::1], int64[::1], complex128[::1])"
    ck = cuda.compile(k, sig, arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"


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


# ------------------------------------------------------------ a.view(dtype), a.real, a.imag
def test_array_view_reinterprets_the_bytes():
    @cuda.jit
    def k(b, start, stop, out, f, bits):
        out[0] = b[start:stop].view(np.int32)[0]
        w = b.view(np.uint16)
        out[1] = w[3]
        out[2] = w.size
        v = f.view(np.uint32)
        for i in range(v.size):
            bits[i] = v[i]
        f.view(np.int32)[0] = 0  # writes through the view
        out[3] = b.view(np.uint64).size

    b = np.arange(16, dtype=np.uint8)
    f = np.array([1.5, -2.0, 3.25], np.float32)
    want_bits = f.view(np.uint32).copy()
    out, bits = np.zeros(4, np.int64), np.zeros(3, np.uint32)
    k[1, 1](b, 4, 8, out, f, bits)
    assert out.tolist() == [b[4:8].view(np.int32)[0], b.view(np.uint16)[3], 8, 2]
    np.testing.assert_array_equal(bits, want_bits)
    assert f[0] == 0.0 and f[1] == -2.0


def test_array_view_of_a_2d_array_rescales_the_last_axis():
    @cuda.jit
    def k(a, out):
        v = a.view(np.uint8)
        for i in range(v.shape[0]):
            for j in range(v.shape[1]):
                out[i, j] = v[i, j]

    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    out = np.zeros((2, 6), np.uint8)
    k[1, 1](a, out)
    np.testing.assert_array_equal(out, a.view(np.uint8))


def test_array_view_of_another_size_needs_a_contiguous_array():
    @cuda.jit
    def k(a, out):
        out[0] = a[::2].view(np.int64)[0]

    with pytest.raises(CompileError, match="C-contiguous"):
        k[1, 1](np.zeros(8, np.int32), np.zeros(1, np.int64))


@pytest.mark.parametrize("ct", [np.complex64, np.complex128])
def test_real_and_imag_of_a_complex_array_are_views(ct):
    @cuda.jit
    def k(z, out):
        re, im = z.real, z.imag
        out[0] = re.size
        re[1] = 7.0
        im[0] += 2.0
        cuda.atomic.add(z.imag, 2, 1.0)
        out[1] = z[1:].imag[1]

    z = np.array([1 + 1j, 2 + 2j, 3 + 3j], ct)
    out = np.zeros(2)
    k[1, 1](z, out)
    np.testing.assert_array_equal(z, np.array([1 + 3j, 7 + 2j, 3 + 4j], ct))
    assert out.tolist() == [3.0, 4.0]


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_array_views_build_for_amdgpu(arch):
    def k(z, b, out):
        z.imag[0] = b.view(np.float32)[1]
        out[0] = z[::2].real[0]

    ck = cuda.compile(k, "void(complex64[::1], int32[::1], float32[::1])", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"


# ------------------------------------------------------------ device functions returning arrays
@cuda.jit(device=True)
def _window(a, start, stop):
    return a[start:stop]


@cuda.jit(device=True)
def _pick(a, b):
    if b[0] > a[0]:
        r = a
    else:
        r = b
    return r


@cuda.jit(device=True)
def _first_zero_led(x, y):
    for arr in (x, y):
        if arr[0] == 0:
            return arr
    return y


@cuda.jit(device=True)
def _block(a, i, j):
    return a[2 * i:2 * i + 2, 2 * j:2 * j + 2]


@cuda.jit(device=True)
def _as_u16(a):
    return a.view(np.uint16)


def test_device_functions_return_views_of_their_array_arguments():
    @cuda.jit
    def k(a, b, m, u):
        _window(a, 2, 4)[0] = 10.0
        _pick(a, b)[1] = 20.0  # b[0] > a[0]: a
        _first_zero_led(b, a)[3] = 30.0  # a[0] == 0
        blk = _block(m, 1, 0)
        blk[1, 1] = -1.0
        w = _as_u16(u)
        w[0] = 1
        w[1] = 2

    a, b = np.zeros(5), np.ones(5)
    m = np.zeros((4, 4))
    u = np.zeros(2, np.uint32)
    k[1, 1](a, b, m, u)
    assert a.tolist() == [0, 20, 10, 30, 0]
    assert b.tolist() == [1, 1, 1, 1, 1]
    assert m[3, 1] == -1.0 and np.count_nonzero(m) == 1
    assert u[0] == 2 * 2**16 + 1 and u[1] == 0


def test_device_function_cannot_return_a_local_array():
    @cuda.jit(device=True)
    def scratch():
        return cuda.local.array(4, np.float32)

    @cuda.jit
    def k(out):
        s = scratch()
        out[0] = s[0]

    with pytest.raises(CompileError, match="cannot return a local array"):
        k[1, 1](np.zeros(1, np.float32))


def test_device_function_returning_arrays_of_two_types_is_a_compile_error():
    @cuda.jit(device=True)
    def either(a, b, flag):
        if flag:
            return a[1:]
        return b

    @cuda.jit
    def k(a, b):
        either(a, b, a[0] > 0)[0] = 1  # a run-time flag: a literal one prunes a branch

    with pytest.raises(CompileError, match="arrays of one type"):
        k[1, 1](np.zeros(4), np.zeros(4, np.float32))


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_array_returns_build_for_amdgpu(arch):
    def k(a, m):
        _window(a, 1, 3)[0] = 2.0
        _block(m, 0, 1)[0, 0] = 3.0

    ck = cuda.compile(k, "void(float64[::1], float64[:, ::1])", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"


# ------------------------------------------------------------ f(*t)
_T3 = (1.0, 2.0, 3.0)


@cuda.jit(device=True)
def _add3(a, b, c):
    return a + 10 * b + 100 * c


def test_call_with_starred_tuple_arguments():
    @cuda.jit
    def k(out, z, x):
        out[0] = _add3(*_T3)  # a frozen global tuple
        t = (x[0], x[1])
        out[1] = _add3(5.0, *t)
        w = complex(*cmath.polar(z[0]))  # numba's complex_usecases spelling
        out[2] = w.real
        out[3] = w.imag
        out[4] = math.hypot(*t)
        out[5] = _add3(*(x[0], x[1]), x[2])

    out, z, x = np.zeros(6), np.array([3 + 4j]), np.array([1.0, 2.0, 3.0])
    k[1, 1](out, z, x)
    np.testing.assert_allclose(out, [321, 215, 5.0, math.atan2(4, 3), math.hypot(1, 2), 321], rtol=1e-15)


def test_starred_array_argument_is_a_compile_error():
    @cuda.jit
    def k(out, x):
        out[0] = _add3(*x)

    with pytest.raises(CompileError, match="only tuples can be unpacked"):
        k[1, 1](np.zeros(1), np.zeros(3))


# ------------------------------------------------------------ a.reshape(...)
def _reshape2d(arr, newshape, got):
    y = arr.reshape(newshape)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            got[i, j] = y[i, j]


@pytest.mark.parametrize("src, shape", [
    (np.arange(24), (4, 6)), (np.arange(24).reshape(2, 3, 4), (8, 3)), (np.arange(25).reshape(5, 5), (-1, 5)),
    (np.arange(24.0), (6, -1)), (np.zeros(0), (0, 3)),
])
def test_reshape_with_a_run_time_shape_matches_numpy(src, shape):
    want = src.reshape(shape)
    got = np.full(want.shape, -7, src.dtype)
    cuda.jit(_reshape2d)[1, 1](src, shape, got)
    np.testing.assert_array_equal(got, want)


def test_reshape_spellings_and_writes_through_the_view():
    @cuda.jit
    def k(a, out):
        m = a.reshape(3, 4)
        m[1, 2] = -1
        out[0] = a[6]
        out[1] = a[2:10].reshape((2, 4))[1, 3]
        out[2] = a.reshape(-1).size
        out[3] = m.reshape(12)[11]

    a, out = np.arange(12), np.zeros(4, np.int64)
    k[1, 1](a, out)
    assert out.tolist() == [-1, 9, 12, 11]


def test_reshape_to_another_size_is_empty_and_a_debug_value_error():
    from pykern.core.errors import KernelValueError

    def k(a, n, out):
        out[0] = a.reshape(n, 5).size

    out = np.full(1, 99)
    cuda.jit(k)[1, 1](np.arange(12), 2, out)
    assert out[0] == 0
    with pytest.raises(KernelValueError, match="total size"):
        cuda.jit(debug=True)(k)[1, 1](np.arange(12), 2, out)


def test_reshape_of_a_strided_array_is_a_compile_error():
    @cuda.jit
    def k(a, out):
        out[0] = a[::2].reshape(2, 2)[0, 0]

    with pytest.raises(CompileError, match="C-contiguous"):
        k[1, 1](np.arange(8.0), np.zeros(1))


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_reshape_builds_for_amdgpu(arch):
    def k(a, n, out):
        out[0] = a.reshape(n, -1)[1, 2]

    ck = cuda.compile(k, "void(float32[::1], int64, float32[::1])", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"


# ------------------------------------------------------------ device signatures of argument types only
def test_device_function_with_argument_types_only_infers_its_return_type():
    fma3 = cuda.jit((cuda.float64, cuda.float64, cuda.float64), device=True)(lambda x, y, z: x * y + z)
    half = cuda.jit((cuda.int32,), device=True)(lambda n: n / 2)

    @cuda.jit
    def k(r):
        r[0] = fma3(2.0, 3.0, 1.0)
        r[1] = half(3)

    r = np.zeros(2)
    k[1, 1](r)
    assert r.tolist() == [7.0, 1.5]


# ------------------------------------------------------------ array fields of records, assigned whole
def test_array_fields_of_records_are_assigned_like_slices():
    dt = np.dtype([("x", np.float64), ("a", np.int16, (3,)), ("m", np.float32, (2, 2))], align=True)

    @cuda.jit
    def k(recs, src, m):
        recs[0]["a"] = src
        recs[1].a = 7
        recs[2].a += src
        r = recs[1]
        r.m = m
        r["m"] *= 2
        recs[0].a[1:] = (10, 11)

    got, want = np.zeros(3, dt), np.zeros(3, dt)
    got["a"][2] = want["a"][2] = [1, 1, 1]
    src, m = np.array([1, 2, 3], np.int16), np.arange(4, dtype=np.float32).reshape(2, 2)
    k[1, 1](got, src, m)
    want[0]["a"] = src
    want[1]["a"] = 7
    want[2]["a"] += src
    want[1]["m"] = m
    want[1]["m"] *= 2
    want[0]["a"][1:] = (10, 11)
    np.testing.assert_array_equal(got, want)


def test_array_field_of_a_record_argument_from_another_record():
    src_dt = np.dtype([("user", np.float64), ("array", np.int16, (3,))], align=True)
    dst_dt = np.dtype([("user1", np.float64), ("array1", np.int16, (3,))], align=True)

    @cuda.jit
    def copy(index, src, dest):
        dest["user1"] = src[index]["user"]
        dest["array1"] = src[index]["array"]

    source, got = np.zeros(2, src_dt), np.zeros(2, dst_dt)
    source[0] = (1.2, [1, 2, 3])
    copy[1, 1](0, source, got[0])
    assert got[0]["user1"] == 1.2 and got[0]["array1"].tolist() == [1, 2, 3] and got[1]["user1"] == 0


# ------------------------------------------------------------ whole records
_INNER = np.dtype([("p", np.int32), ("q", np.float32)], align=True)
_OUTER = np.dtype([("a", np.float64), ("s", _INNER), ("h", np.float32, 2), ("b", np.int8)], align=True)


def test_whole_records_are_copied_field_by_field():
    @cuda.jit
    def k(ary, rec, other):
        ary[0] = ary[2]  # a record of the same array
        ary[1] = rec  # a record argument
        ary[2].s = other[0].s  # a nested record field
        r = ary[3]
        r["s"] = rec.s

    ary = np.zeros(4, _OUTER)
    ary[2] = (1.5, (2, 2.5), (3.0, 4.0), 5)
    rec = np.array([(6.5, (7, 7.5), (8.0, 9.0), 10)], _OUTER)
    other = np.array([(0.0, (11, 11.5), (0.0, 0.0), 0)], _OUTER)
    want = ary.copy()
    want[0] = want[2]
    want[1] = rec[0]
    want[2]["s"] = other[0]["s"]
    want[3]["s"] = rec[0]["s"]
    k[1, 1](ary, rec[0], other)
    np.testing.assert_array_equal(ary, want)


def test_record_of_another_dtype_is_a_compile_error():
    other = np.dtype([("a", np.float64)], align=True)

    @cuda.jit
    def k(ary, src):
        ary[0] = src[0]

    with pytest.raises(CompileError, match="same dtype"):
        k[1, 1](np.zeros(1, _OUTER), np.zeros(1, other))


def test_record_fields_by_position():
    @cuda.jit
    def k(ary, out):
        out[0] = ary[0][0]  # numpy's r[0]: the first field
        out[1] = ary[0][-1]
        ary[1][0] = 4.25

    ary = np.zeros(2, _OUTER)
    ary[0] = (2.5, (0, 0.0), (0.0, 0.0), -3)
    out = np.zeros(2)
    k[1, 1](ary, out)
    assert out.tolist() == [2.5, -3.0] and ary[1]["a"] == 4.25


# ------------------------------------------------------------ numpy ufuncs of complex values; ufunc closures
_NP_UNARY = [np.sqrt, np.exp, np.log, np.log10, np.sin, np.cos, np.tan, np.sinh, np.cosh, np.tanh,
             np.arcsin, np.arccos, np.arctan, np.arcsinh, np.arccosh, np.arctanh]


def _key(v):
    return "nan" if v != v else (v, math.copysign(1.0, v))


@pytest.mark.parametrize("uf", _NP_UNARY, ids=lambda u: u.__name__)
def test_numpy_ufunc_special_values_of_complex_are_numpys(uf):
    reps = [-math.inf, -1.0, -0.0, 0.0, 1.0, math.inf, math.nan]
    z = np.array([complex(x, y) for x in reps for y in reps if not (math.isfinite(x) and math.isfinite(y))])
    k = _cmath_kernel(uf)  # each ufunc its own kernel: the closure's ufunc is part of the cache key
    out = np.zeros_like(z)
    k[1, len(z)](out, z)
    with np.errstate(all="ignore"):
        want = uf(z)
    bad = [(v, g, w) for v, g, w in zip(z, out, want)
           if (_key(g.real), _key(g.imag)) != (_key(w.real), _key(w.imag))]
    assert not bad, bad[:4]


def test_kernels_closing_over_different_ufuncs_are_different_kernels():
    x = np.array([0.25, 4.0])
    got = {}
    for uf in (np.sqrt, np.exp, np.log):
        @cuda.jit
        def k(out, a):
            i = cuda.grid(1)
            if i < a.size:
                out[i] = uf(a[i])

        out = np.zeros(2)
        k[1, 2](out, x)
        got[uf.__name__] = out
    for name, out in got.items():
        np.testing.assert_allclose(out, getattr(np, name)(x), rtol=1e-15)


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_record_copies_and_field_arrays_build_for_amdgpu(arch):
    def k(ary, src, z):
        ary[0] = ary[1]
        ary[1].h = src
        ary[2].s = ary[0].s
        ary[3][0] = ary[3][-1]
        z[0] = np.sqrt(z[1]) + np.complex64(src[0], src[1])

    sig = (cuda.from_dtype(_OUTER)[::1], cuda.float32[::1], cuda.complex64[::1])
    ck = cuda.compile(k, sig, arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"


# ------------------------------------------------------------ 0-d integer arrays as indices
def test_zero_d_integer_array_indexes_with_its_value():
    # numba's cache tests launch k(r, ary, np.asarray(i)): a 0-d int array used as an index
    rec = np.dtype([("a", np.int8), ("b", np.float64)], align=True)
    recs = np.array([(1, 42.5), (2, 43.5)], dtype=rec)

    @cuda.jit
    def pick(r, ary, i, m, j, out):
        r[()] = ary[i]
        out[0] = m[j, i]
        out[1] = m[i, -1]

    r = np.zeros((), dtype=rec)
    m = np.arange(12.0).reshape(3, 4)
    out = np.zeros(2)
    pick[1, 1](r, recs, np.asarray(1), m, np.asarray(np.int32(2)), out)
    assert tuple(r[()]) == (2, 43.5)
    assert out.tolist() == [m[2, 1], m[1, -1]]


def test_zero_d_float_array_is_still_refused_as_an_index():
    @cuda.jit
    def bad(a, f):
        a[0] = a[f]

    with pytest.raises(CompileError, match="array index must be an integer"):
        bad[1, 1](np.zeros(2), np.asarray(1.0))
