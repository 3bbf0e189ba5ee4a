"""Kernel argument flattening and packing against hand-computed ABI offsets."""

import struct
import timeit

import numpy as np
import pytest

from pykern.core import abi
from pykern.codegen.abi_map import flatten_params as param_layout
from pykern.core.errors import LaunchError
from pykern.frontend import types as T
from pykern.runtime import kernargs as K
from pykern.runtime.memory.arrays import to_device


def flatten_values(argtypes, values):
    """The runtime's flattener for the layout codegen gives ``argtypes``."""
    return K.flatten_values(param_layout(argtypes), values, nargs=len(argtypes))

SCALARS = [T.int8, T.int16, T.int32, T.int64, T.uint8, T.uint16, T.uint32, T.uint64, T.float16, T.float32, T.float64]
SAMPLE = {
    "int8": -100, "int16": -30000, "int32": -2_000_000_000, "int64": -(2**62) - 5,
    "uint8": 250, "uint16": 65000, "uint32": 4_000_000_000, "uint64": 2**64 - 3,
    "float16": 1.5, "float32": 3.25, "float64": -2.0e300,
}


def field(buf, off, dtype):
    dt = np.dtype(dtype)
    return np.frombuffer(bytes(buf[off : off + dt.itemsize]), dt)[0]


def roundtrip(argtypes, values):
    params = param_layout(argtypes)
    flat = flatten_values(argtypes, values)
    return params, flat, K.pack(params, flat, K.kernarg_size(params))


@pytest.mark.parametrize("t", SCALARS, ids=str)
def test_every_scalar_dtype_after_a_byte(t):
    # an int8 first forces the padding of the second parameter to its own size
    v = SAMPLE[str(t)]
    params, flat, buf = roundtrip((T.int8, t), (-1, v))
    size = np.dtype(str(t)).itemsize
    assert [(p.offset, p.size, p.role) for p in params] == [(0, 1, "scalar"), (size, size, "scalar")]
    assert flat == [-1, v]
    assert len(buf) == (2 * size + 7) // 8 * 8
    assert field(buf, 0, "i1") == -1
    assert all(b == 0 for b in buf[1:size])  # padding is zero
    assert field(buf, size, str(t)) == np.array(v, dtype=str(t))


@pytest.mark.parametrize("t", SCALARS, ids=str)
def test_numpy_scalar_values(t):
    v = np.array(SAMPLE[str(t)], dtype=str(t))[()]
    _, _, buf = roundtrip((t,), (v,))
    assert field(buf, 0, str(t)) == v


def test_bools_are_one_byte_zero_or_one():
    argtypes = (T.boolean, T.boolean, T.int32, T.boolean, T.float64)
    params, flat, buf = roundtrip(argtypes, (True, np.bool_(False), 7, 1, 2.5))
    assert [p.offset for p in params] == [0, 1, 4, 8, 16]
    assert [p.size for p in params] == [1, 1, 4, 1, 8]
    assert bytes(buf[:2]) == b"\x01\x00" and buf[8] == 1
    assert field(buf, 4, "i4") == 7 and field(buf, 16, "f8") == 2.5
    assert len(buf) == 24


def test_tuples_flatten_in_order_recursively():
    argtypes = (T.int8, T.Tuple((T.float64, T.float64)), T.int16, T.Tuple((T.int32, T.Tuple((T.boolean, T.float32)))))
    values = (3, (1.0, 2.0), -4, (5, (True, 0.5)))
    params, flat, buf = roundtrip(argtypes, values)
    # int8@0, f64@8, f64@16, int16@24, int32@28, bool@32, float32@36
    assert [p.offset for p in params] == [0, 8, 16, 24, 28, 32, 36]
    assert [p.arg_index for p in params] == [0, 1, 1, 2, 3, 3, 3]
    assert flat == [3, 1.0, 2.0, -4, 5, True, 0.5]
    assert (field(buf, 8, "f8"), field(buf, 16, "f8"), field(buf, 24, "i2")) == (1.0, 2.0, -4)
    assert (field(buf, 28, "i4"), buf[32], field(buf, 36, "f4")) == (5, 1, 0.5)
    assert len(buf) == 40


def test_hand_computed_mixed_layout():
    argtypes = (T.Array(T.float32, 2, "C"), T.int32, T.boolean, T.Array(T.int64, 1, "C"))
    params = param_layout(argtypes)
    expect = [
        ("arg0.data", 0, "data"), ("arg0.shape0", 8, "shape"), ("arg0.shape1", 16, "shape"),
        ("arg0.stride0", 24, "stride"), ("arg0.stride1", 32, "stride"), ("arg1", 40, "scalar"),
        ("arg2", 44, "scalar"), ("arg3.data", 48, "data"), ("arg3.shape0", 56, "shape"), ("arg3.stride0", 64, "stride"),
    ]
    assert [(p.name, p.offset, p.role) for p in params] == expect
    assert K.kernarg_size(params) == 72


def _check_array_fields(buf, params, base, ptr, shape, strides):
    ps = params[base : base + 1 + 2 * len(shape)]
    assert field(buf, ps[0].offset, "u8") == ptr
    for i, n in enumerate(shape):
        assert field(buf, ps[1 + i].offset, "i8") == n
    for i, s in enumerate(strides):
        assert field(buf, ps[1 + len(shape) + i].offset, "i8") == s


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_numpy_arrays_of_every_ndim_with_negative_strides(ndim):
    shape = (7, 3, 4, 5)[:ndim]
    full = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    sl = tuple(slice(None, None, -1) if i % 2 == 0 else slice(None, None, 2) for i in range(ndim))
    a = full[sl]
    assert any(s < 0 for s in a.strides)
    argtypes = (T.int8, T.Array(T.float64, ndim, "A"))
    params, flat, buf = roundtrip(argtypes, (1, a))
    assert flat == [1, a.ctypes.data, *a.shape, *a.strides]
    assert params[1].offset == 8
    _check_array_fields(buf, params, 1, a.ctypes.data, a.shape, a.strides)


def test_zero_strides_and_zero_size():
    b = np.broadcast_to(np.arange(4, dtype=np.int32), (3, 4))
    e = np.zeros((0, 5), np.float32)
    argtypes = (T.Array(T.int32, 2, "A"), T.Array(T.float32, 2, "C"))
    params, flat, buf = roundtrip(argtypes, (b, e))
    assert flat[3:5] == [0, 4]
    _check_array_fields(buf, params, 0, b.ctypes.data, (3, 4), (0, 4))
    _check_array_fields(buf, params, 5, e.ctypes.data, (0, 5), e.strides)


def test_device_arrays_and_views():
    d = to_device(np.arange(60, dtype=np.int16).reshape(3, 4, 5), target="cpu")
    v = d[::-1, 1:, ::2]
    argtypes = (T.Array(T.int16, 3, "A"), T.Array(T.int16, 3, "C"))
    params, flat, buf = roundtrip(argtypes, (v, d))
    assert flat[:7] == [v.ptr, 3, 3, 3, -40, 10, 4]
    assert v.ptr == d.ptr + 2 * 40 + 10
    _check_array_fields(buf, params, 7, d.ptr, (3, 4, 5), (40, 10, 2))


def test_cuda_array_interface_objects():
    class Foreign:
        def __init__(self, a):
            self.a = a
            self.__cuda_array_interface__ = {"shape": a.shape, "strides": None, "typestr": a.dtype.str,
                                             "data": (a.ctypes.data, False), "version": 3}

    a = np.zeros((2, 3), np.float32)
    flat = flatten_values((T.Array(T.float32, 2, "C"),), (Foreign(a),))
    assert flat == [a.ctypes.data, 2, 3, 12, 4]


def test_arrays_inside_tuples():
    a = np.zeros(5, np.float32)
    argtypes = (T.Tuple((T.Array(T.float32, 1, "C"), T.int32)),)
    assert flatten_values(argtypes, ((a, 9),)) == [a.ctypes.data, 5, 4, 9]


def test_errors_are_launch_errors_naming_the_argument():
    with pytest.raises(LaunchError, match="takes 2 argument"):
        flatten_values((T.int32, T.int32), (1,))
    with pytest.raises(LaunchError, match="expected a 2-d array"):
        flatten_values((T.Array(T.float32, 2, "C"),), (np.zeros(3, np.float32),))
    with pytest.raises(LaunchError, match="expected an array"):
        flatten_values((T.Array(T.float32, 1, "C"),), (3.0,))
    with pytest.raises(LaunchError, match="expected a tuple of 2"):
        flatten_values((T.UniTuple(T.int32, 2) if hasattr(T, "UniTuple") else T.Tuple((T.int32, T.int32)),), ((1, 2, 3),))
    params = param_layout((T.int32, T.uint8))
    assert K.pack(params, [1, 300]) == K.pack(params, [1, 44])  # the low bits, as numba's ctypes.c_uint8(300)
    with pytest.raises(LaunchError, match=r"arg1 \(uint8\).*'x'"):
        K.pack(params, [1, "x"])
    with pytest.raises(LaunchError, match=r"arg0 \(int32\)"):
        K.pack(params, [1.5, 3])
    with pytest.raises(LaunchError, match="flatten to 1 values"):
        K.pack(params, [1])


def test_packer_follows_metadata_order_and_size():
    # parameters as a code object might list them: not sorted, buffer padded to 32
    def P(name, code, off, size, idx):
        return abi.FlatParam(name, None, off, size, "scalar", idx, code, (idx,))

    params = [P("b", "f", 8, 4, 1), P("a", "q", 0, 8, 0), P("c", "?", 12, 1, 2)]
    buf = K.pack(params, [2.0, -7, True], size=32)
    assert len(buf) == 32
    assert field(buf, 0, "i8") == -7 and field(buf, 8, "f4") == 2.0 and buf[12] == 1
    with pytest.raises(LaunchError, match="overlaps"):
        K.Packer([P("a", "q", 0, 8, 0), P("b", "i", 4, 4, 1)])
    with pytest.raises(LaunchError, match="does not fit"):
        K.Packer([P("a", "q", 0, 4, 0)])


def test_packers_and_flatteners_are_cached():
    argtypes = (T.int32, T.Array(T.float32, 1, "C"))
    params = param_layout(argtypes)
    assert K.get_flattener(params, 2) is K.get_flattener(params, 2)
    assert K.get_flattener(params, 2) is K.get_flattener(list(params), 2)  # same layout, other container
    assert K.get_packer(params, 32) is K.get_packer(params, 32)
    assert K.get_packer(params) is not K.get_packer(params, 32)


def test_flattener_and_packer_follow_one_layout():
    # both are generated from the same FlatParams: every flat value lands at its parameter's offset
    cases = [
        (T.int8, T.float64, T.boolean, T.Array(T.float32, 3, "A"), T.Tuple((T.int16, T.Array(T.uint8, 1, "C"))), T.float16),
        (T.Array(T.float64, 4, "F"), T.uint64),
        (T.Tuple((T.Tuple((T.int8, T.float32)), T.Tuple(()), T.int64)),),
        (),
    ]
    for argtypes in cases:
        params = param_layout(argtypes)
        values = [_value_for(t) for t in argtypes]
        flat = flatten_values(argtypes, values)
        buf = K.pack(params, flat, abi.kernarg_size(params))
        assert len(buf) == abi.kernarg_size(params)
        assert len(flat) == len(params)
        for p, v in zip(params, flat):
            assert struct.unpack_from("<" + p.code, buf, p.offset)[0] == v, p
        assert [p.arg_index for p in params] == [p.path[0] for p in params]


def _value_for(t):
    if isinstance(t, T.Array):
        return np.zeros((2,) * t.ndim, dtype=str(t.dtype))
    if isinstance(t, T.Tuple):
        return tuple(_value_for(e) for e in t.elems)
    return np.zeros((), dtype=t.np_dtype)[()]


def test_host_overhead_is_small():
    d = to_device(np.zeros(16, np.float32), target="cpu")
    argtypes = (T.Array(T.float32, 1, "C"), T.Array(T.float32, 1, "C"), T.float32, T.int64)
    vals = (d, d, 2.0, 16)
    params = param_layout(argtypes)
    size = K.kernarg_size(params)
    run = lambda: K.pack(params, K.flatten_values(params, vals), size)  # noqa: E731
    run()
    best = min(timeit.repeat(run, number=2000, repeat=5)) / 2000
    # ~1 us on an idle core; generous so a loaded CI machine does not flake
    assert best < 20e-6, f"{best * 1e6:.2f} us per flatten+pack of 4 arguments"
    assert struct.calcsize("<QqqQqqfq") <= size
