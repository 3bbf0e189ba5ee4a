"""Signature strings/objects and the numba-style type spellings."""

import math

import numpy as np
import pytest

import pykern as cuda
from pykern import float64, void
from pykern.core.errors import CompileError
from pykern.frontend import parse_signature, parse_type, types as T
from pykern.frontend.signature import Signature
from pykern.numba_compat import numba_types as types

ALL_SCALARS = list(T.SCALARS.values())


def test_readme_signature():
    ret, args = parse_signature("void(float32[:], float64[:, ::1], int32, UniTuple(float32, 3))")
    assert ret == T.void
    assert args == [
        T.Array(T.float32, 1, "A"),
        T.Array(T.float64, 2, "C"),
        T.int32,
        T.Tuple((T.float32,) * 3),
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("float32[::1, :]", T.Array(T.float32, 2, "F")),
        ("float32[:,::1]", T.Array(T.float32, 2, "C")),
        ("int8[:, :, :]", T.Array(T.int8, 3, "A")),
        ("uint16[::1]", T.Array(T.uint16, 1, "C")),
        ("float64[]", T.Array(T.float64, 0, "A")),
        ("Tuple(int32, float64)", T.Tuple((T.int32, T.float64))),
        ("Tuple()", T.Tuple(())),
        ("UniTuple(int64 x 2)", T.Tuple((T.int64, T.int64))),
        ("array(float32, 2d, C)", T.Array(T.float32, 2, "C")),
        ("array(int32, 1d, A, readonly)", T.Array(T.int32, 1, "A", readonly=True)),
        ("readonly float32[:]", T.Array(T.float32, 1, "A", readonly=True)),
        ("shared float32[::1]", T.Array(T.float32, 1, "C", "shared")),
        ("f4", T.float32),
        ("bool", T.boolean),
        ("Tuple(float32[:], UniTuple(int32, 2))", T.Tuple((T.Array(T.float32, 1), T.Tuple((T.int32, T.int32))))),
    ],
)
def test_parse_type(text, expected):
    assert parse_type(text) == expected


def _all_types():
    out = list(ALL_SCALARS)
    for dt in (T.float32, T.int64, T.boolean, T.float16):
        for ndim in range(0, 5):
            for layout in ("C", "F", "A"):
                if ndim <= 1 and layout == "F":
                    continue
                if ndim == 0 and layout == "C":
                    continue
                out.append(T.Array(dt, ndim, layout))
                out.append(T.Array(dt, ndim, layout, readonly=True))
    out.append(T.Array(T.float32, 2, "C", "shared"))
    out.append(T.Array(T.float32, 1, "C", "local"))
    out.append(T.Array(T.int32, 3, "C", "const", readonly=True))
    out.append(T.Tuple((T.int32, T.float64)))
    out.append(T.Tuple((T.int32,) * 4))
    out.append(T.Tuple((T.Tuple((T.int8, T.uint64)), T.Array(T.float32, 2, "F"))))
    return out


@pytest.mark.parametrize("t", _all_types(), ids=str)
def test_str_round_trips(t):
    assert parse_type(str(t)) == t
    ret, args = parse_signature(f"void({t}, int32)")
    assert ret == T.void and args == [t, T.int32]


def test_return_types_and_bare_lists():
    assert parse_signature("float32(float32, int64)") == (T.float32, [T.float32, T.int64])
    assert parse_signature("UniTuple(int64, 2)(int64)") == (T.Tuple((T.int64, T.int64)), [T.int64])
    assert parse_signature("(float32[:], int32)") == (T.void, [T.Array(T.float32, 1), T.int32])
    assert parse_signature("float32[::1, :]") == (T.void, [T.Array(T.float32, 2, "F")])
    assert parse_signature("float32[:], int32") == (T.void, [T.Array(T.float32, 1), T.int32])
    # a program built 'float32[:], int32, ' from annotations: numba reads it as a Python tuple
    assert parse_signature("float32[:], int32, ") == (T.void, [T.Array(T.float32, 1), T.int32])
    assert parse_signature("float32[:],") == (T.void, [T.Array(T.float32, 1)])
    assert parse_signature("void()") == (T.void, [])


def test_signature_objects_from_types():
    sig = T.void(T.float32[:], T.int32)
    assert isinstance(sig, Signature)
    assert parse_signature(sig) == (T.void, [T.Array(T.float32, 1, "A"), T.int32])
    assert str(sig) == "void(float32[:], int32)"
    assert parse_signature(str(sig)) == parse_signature(sig)
    assert T.float32[:, ::1] == T.Array(T.float32, 2, "C")
    assert T.float32[::1, :] == T.Array(T.float32, 2, "F")
    assert T.float32[::1] == T.Array(T.float32, 1, "C")
    assert T.float64(T.float64, T.float64).return_type == T.float64


def test_plain_tuple_of_types():
    assert parse_signature((T.float32[:], T.int32)) == (T.void, [T.Array(T.float32, 1), T.int32])
    assert parse_signature([np.float32, "int64", np.dtype("uint8")]) == (T.void, [T.float32, T.int64, T.uint8])


def test_numba_like_signature_objects():
    class FakeNumbaType:
        def __init__(self, s):
            self.s = s

        def __str__(self):
            return self.s

    class FakeSig:
        return_type = FakeNumbaType("none")
        args = (FakeNumbaType("array(float32, 1d, C)"), FakeNumbaType("int32"))

    assert parse_signature(FakeSig()) == (T.void, [T.Array(T.float32, 1, "C"), T.int32])


def test_host_side_type_call_converts():
    assert T.float32(1.5) == np.float32(1.5) and isinstance(T.float32(1.5), np.float32)


@pytest.mark.parametrize(
    "bad, words",
    [
        ("void(float32[:]", ["expected"]),
        ("void(floot32)", ["unknown type name 'floot32'"]),
        ("void(float32[:, ::2])", ["cannot read"]),
        ("void(float32[::1, ::1])", ["'::1' may mark only"]),
        ("void(void)", ["'void' is only a return type"]),
        ("void(float32) extra", ["unexpected text"]),
        ("void(float32[:,:,:,:,:,:,:,:,:])", ["0 to 8 dimensions"]),
        ("void(UniTuple(int32))", ["expected"]),
        ("void(readonly int32)", ["apply to arrays only"]),
        ("void(int32 $)", ["cannot read signature"]),
    ],
)
def test_bad_strings(bad, words):
    with pytest.raises(CompileError) as ei:
        parse_signature(bad)
    msg = str(ei.value)
    for w in words:
        assert w in msg
    assert "accepted:" in msg
    assert isinstance(ei.value, TypeError)


def test_bad_objects():
    with pytest.raises(TypeError, match="cannot read signature"):
        parse_signature(42)
    with pytest.raises(TypeError, match="accepted"):
        parse_signature([object()])
    with pytest.raises(TypeError):
        T.float32["x"]
    with pytest.raises(TypeError):
        T.float32[::1, :, ::1]


@pytest.mark.usefixtures("cpu_uncached")
def test_signature_built_from_annotations_with_a_trailing_comma():
    # a ray tracer's ``cuda_auto_type``: ``signature += type_mapping[annot] + ", "`` per parameter
    @cuda.jit(func_or_sig="float32[:], float32, ", device=True)
    def length(v, s):
        return (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) ** 0.5 * s

    @cuda.jit(func_or_sig="float32[:, :], float32[:], int32, ")
    def kern(vs, out, n):
        i = cuda.grid(1)
        if i < n:
            out[i] = length(vs[i], np.float32(2))

    vs = np.random.RandomState(2).rand(10, 3).astype(np.float32)
    out = np.zeros(10, np.float32)
    kern[1, 16](vs, out, 10)
    np.testing.assert_allclose(out, 2 * np.linalg.norm(vs, axis=1), rtol=1e-5)


@pytest.mark.usefixtures("cpu_uncached")
def test_device_functions_declared_with_numba_tuple_constructors():
    # signatures as numba programs write them: the string Tuple((...)) and types.UniTuple(...)
    @cuda.jit("Tuple((float64, int64))(float64[:])", device=True)
    def max_and_index(row):
        best = row[0]
        at = 0
        for j in range(1, row.shape[0]):
            if row[j] > best:
                best = row[j]
                at = j
        return best, at

    @cuda.jit(types.UniTuple(types.float64, 2)(types.float64, types.float64), device=True)
    def polar(x, y):
        return math.hypot(x, y), math.atan2(y, x)

    @cuda.jit(void(float64[:, :], float64[:, :], types.UniTuple(types.int64, 2)))
    def k(a, out, offs):
        i = cuda.grid(1)
        if i < a.shape[0]:
            v, j = max_and_index(a[i])
            r, t = polar(v, 1.0 * j)
            out[i, 0] = v + offs[0]
            out[i, 1] = j + offs[1]
            out[i, 2] = r
            out[i, 3] = t

    a = np.random.RandomState(12).rand(10, 7)
    out = np.zeros((10, 4))
    k[1, 16](a, out, (10, 20))
    m, j = a.max(1), a.argmax(1)
    assert np.array_equal(out[:, 0], m + 10) and np.array_equal(out[:, 1], j + 20)
    assert np.allclose(out[:, 2], np.hypot(m, j)) and np.allclose(out[:, 3], np.arctan2(j, m))
