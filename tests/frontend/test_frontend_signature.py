"""Signature strings/objects and the numba-style type spellings."""

import numpy as np
import pytest

from pykern.core.errors import CompileError
from pykern.frontend import parse_signature, parse_type
from pykern.frontend import types as T
from pykern.frontend.signature import Signature

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
