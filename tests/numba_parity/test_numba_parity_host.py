"""Host-side behaviour numba-cuda's own test files expect (dispatcher, launch configuration,
device arrays, ufuncs, reductions, kernel arguments), each checked on the cpu target against
numpy/Python or against numba's documented answer."""

import numpy as np
import pytest

import pykern as cuda
from pykern import float32, float64, int32, int64
from pykern.frontend import types as T


def _add(x, y):
    return x + y


def _noop3(r, x, y):
    pass


# ---------------------------------------------------------------- dispatcher


def test_device_signature_without_return_type_infers_it(cpu_target):
    # numba: a device function's "(int64, int64)" leaves the return type to the body
    add_device = cuda.jit(["(int64, int64)", "(float64, float64)"], device=True)(_add)

    @cuda.jit
    def k(r, x, y):
        r[0] = add_device(x, y)

    r = np.zeros(1, np.int64)
    k[1, 1](r, 1, 2)
    assert r[0] == 3
    r = np.zeros(1, np.float64)
    k[1, 1](r, 1.5, 2.5)
    assert r[0] == 4.0
    # a tuple of types is the same spelling
    add32 = cuda.jit((float32, float32), device=True)(_add)

    @cuda.jit
    def k32(r, x, y):
        r[0] = add32(x, y)

    r = np.zeros(1, np.float64)
    k32[1, 1](r, np.float32(1), np.float32(2**-25))
    assert r[0] == 1.0  # added in float32, as the signature says


def test_device_signature_with_void_return_still_returns_nothing(cpu_target):
    @cuda.jit("void(float64[:], float64)", device=True)
    def store(a, v):
        a[0] = v

    @cuda.jit
    def k(a):
        store(a, 7.0)

    a = np.zeros(1)
    k[1, 1](a)
    assert a[0] == 7.0


def test_device_call_with_tied_signatures_takes_the_first(cpu_target):
    # numba's typing resolves a tie between a device function's signatures (numba issue 8307);
    # a kernel launch still refuses it
    add_device = cuda.jit(["(float32, float64)", "(float64, float32)", "(int64, int64)"], device=True)(_add)

    @cuda.jit
    def k(r, x, y):
        r[0] = add_device(x, y)

    r = np.zeros(1)
    k[1, 1](r, 0.1, 0.2)
    assert r[0] == np.float64(np.float32(0.1)) + 0.2  # (float32, float64), the first: only x rounded
    kern = cuda.jit(["(float64[::1], float32, float64)", "(float64[::1], float64, float32)"])(_noop3)
    with pytest.raises(TypeError, match="ambiguous"):
        kern[1, 1](r, 1.0, 2.0)


def test_no_matching_definition_names_numbas_phrase(cpu_target):
    f = cuda.jit(["(int64[::1], int64, int64)", "(float64[::1], float64, float64)"])(_noop3)
    with pytest.raises(TypeError, match="No matching definition for argument type"):
        f[1, 1](np.zeros(1, np.complex128), 1j, 1j)


def test_specialize_takes_types_and_lists_specializations(cpu_target):
    @cuda.jit
    def k(x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = 2 * x[i]

    assert k.specializations == {}
    kc = k.specialize(float32[::1], float32[::1])
    assert k.specialize(float32[::1], float32[::1]) is kc
    ka = k.specialize(float32[:], float32[:])
    assert ka is not kc and len(k.specializations) == 2
    x = np.arange(8, dtype=np.float32)
    y = np.zeros_like(x)
    kc[1, 8](x, y)
    np.testing.assert_array_equal(y, 2 * x)
    # a type and a value mixed
    y[:] = 0
    k.specialize(float32[::1], y)[1, 8](x, y)
    np.testing.assert_array_equal(y, 2 * x)
    with pytest.raises(RuntimeError, match="Dispatcher already specialized"):
        kc.specialize(float32[::1], float32[::1])
    with pytest.raises(RuntimeError, match="Dispatcher already specialized"):
        cuda.jit("void(int32[::1])")(lambda x: None).specialize(float32[::1])


def test_launch_bounds_and_carveout_options_checked_as_numba():
    with pytest.raises(ValueError, match="Got 4 launch bounds"):
        cuda.jit("void()", launch_bounds=(128, 2, 4, 8))(lambda: None)
    for bad in (150, -2, 101):
        with pytest.raises(ValueError, match="must be between -1 and 100"):
            cuda.jit(shared_memory_carveout=bad)(lambda x: None)
    with pytest.raises(ValueError, match="Invalid carveout value"):
        cuda.jit(shared_memory_carveout="InvalidOption")(lambda x: None)
    with pytest.raises(TypeError, match="must be str or int"):
        cuda.jit(shared_memory_carveout=1.5)(lambda x: None)


def test_carveout_values_are_accepted_and_change_nothing(cpu_target):
    for carveout in ("MaxL1", "MaxShared", "default", 0, 50, 100, -1):
        @cuda.jit("void(int32[:])", shared_memory_carveout=carveout)
        def add_one(x):
            i = cuda.grid(1)
            if i < x.size:
                x[i] = i + 1

        x = np.zeros(10, np.int32)
        add_one[1, 10](x)
        np.testing.assert_array_equal(x, np.arange(1, 11))


# ---------------------------------------------------------------- device arrays


def test_to_device_of_a_permuted_view_with_a_length_one_axis(cpu_target):
    # (1, 3, 100) with strides (8, 8, 24): dense (numpy calls it F-contiguous); it was refused
    a = np.random.randn(100, 3, 1)
    b = a.transpose(2, 1, 0)
    d = cuda.to_device(b)
    np.testing.assert_array_equal(d.copy_to_host(), b)
    assert cuda.device_array((1, 3, 100), np.float64, strides=(24, 8, 24)).shape == (1, 3, 100)
    with pytest.raises(ValueError, match="not a dense layout"):
        cuda.device_array((3, 4), np.float64, strides=(64, 8))


# ---------------------------------------------------------------- exceptions seen by the host


def test_debug_tuple_index_out_of_range_is_an_index_error(cpu_target):
    @cuda.jit(debug=True)
    def shape_at(ary, out):
        x = cuda.threadIdx.x
        out[x] = ary.shape[-x]

    @cuda.jit(debug=True)
    def tuple_at(t, out):
        x = cuda.threadIdx.x
        out[x] = t[x - 3]

    out = np.zeros(3, np.int64)
    shape_at[1, 2](np.zeros(5), out)  # -0 and -1 are in range
    np.testing.assert_array_equal(out[:2], [5, 5])
    with pytest.raises(IndexError, match="tuple index out of range"):
        shape_at[1, 3](np.zeros(5), out)
    out[:] = 0
    tuple_at[1, 3]((7, 8, 9), out)  # -3, -2, -1
    np.testing.assert_array_equal(out, [7, 8, 9])
    with pytest.raises(IndexError, match="tuple index out of range"):
        tuple_at[1, 7]((7, 8, 9), np.zeros(7, np.int64))  # 0, 1, 2 are in range, 3 is not


# ---------------------------------------------------------------- None as a kernel argument


@cuda.jit(device=True)
def _scaled(x, scale):
    if scale is None:
        return x
    return x * scale


@cuda.jit
def _affine(out, x, scale, bias):
    i = cuda.grid(1)
    if i < out.size:
        v = _scaled(x[i], scale)
        if bias is not None:
            v += bias
        out[i] = v


@cuda.jit
def _default_if_none(out, scale):
    if scale is None:
        scale = 3.0
    out[0] = scale


def test_none_kernel_argument_is_decided_at_compile_time(cpu_target):
    x = np.arange(5.0)
    out = np.zeros(5)
    for scale, bias in ((None, None), (2.0, None), (None, 10.0), (2.0, 1.0), (None, None)):
        _affine[1, 5](out, x, scale, bias)
        np.testing.assert_array_equal(out, x * (1 if scale is None else scale) + (0 if bias is None else bias))
    assert T.none in next(iter(_affine.overloads))  # numba's `none` type, one overload per combination
    assert len(_affine.overloads) == 4
    o = np.zeros(1)
    _default_if_none[1, 1](o, None)
    assert o[0] == 3.0
    _default_if_none[1, 1](o, 5.0)
    assert o[0] == 5.0


@cuda.jit
def _none_in_tuples(out, t, p):
    out[0] = 1 if t[1] is None else 2
    out[1] = 1 if t[0] is None else 2
    v = t[1]
    out[2] = _scaled(2.0, v)  # passed on to a device function, still None there
    if p.scale is None:
        out[3] = p.a
    else:
        out[3] = p.a * p.scale


def test_none_inside_tuple_arguments_is_none(cpu_target):
    from collections import namedtuple

    P = namedtuple("P", "a scale")
    out = np.zeros(4)
    _none_in_tuples[1, 1](out, (1.0, None), P(3.0, None))
    np.testing.assert_array_equal(out, [1, 2, 2.0, 3.0])
    _none_in_tuples[1, 1](out, (1.0, 5.0), P(3.0, 2.0))
    np.testing.assert_array_equal(out, [2, 2, 10.0, 6.0])


def test_none_kernel_argument_used_as_a_value_is_a_located_error(cpu_target):
    @cuda.jit
    def k(out, scale):
        out[0] = scale + 1.0

    with pytest.raises(cuda.CompileError, match="scale") as e:
        k[1, 1](np.zeros(1), None)
    assert e.value.line is not None


def test_none_takes_no_kernel_argument_space():
    # the launcher packs nothing for it, on every target: the next argument follows directly
    from pykern.codegen.abi_map import flatten_params
    from pykern.runtime import kernargs as K

    params = flatten_params([T.float32, T.none, T.float32])
    assert [(p.offset, p.arg_index) for p in params] == [(0, 0), (4, 2)]
    flat = K.flatten_values(params, (1.5, None, 2.5), nargs=3)
    buf = K.pack(params, flat, K.kernarg_size(params))
    assert np.frombuffer(bytes(buf[:8]), np.float32).tolist() == [1.5, 2.5]


def test_none_parameter_in_an_amdgpu_code_object():
    # the HIP launcher packs at the code object's metadata offsets: they agree with the flat
    # parameters (none for the None), so the arguments after it land where the kernel reads them
    from pykern.runtime.hip import launch as hip_launch
    from pykern.runtime import kernargs as K

    argtypes = (T.Array(T.float64, 1, "C"), T.Array(T.float64, 1, "C"), T.none, T.float64)
    art = cuda.compile(_affine, argtypes, arch="gfx942").artifacts[0]
    params = hip_launch.explicit_params(art)
    assert [p.arg_index for p in params] == [0, 0, 0, 1, 1, 1, 3]
    flat = K.flatten_values(params, (cuda.to_device(np.zeros(2)), cuda.to_device(np.zeros(2)), None, 7.5), nargs=4)
    assert flat[-1] == 7.5


# ---------------------------------------------------------------- ufuncs


class _Foreign:
    """Only ``__cuda_array_interface__`` (what cupy or another library hands over)."""

    def __init__(self, d):
        self._d = d
        self.__cuda_array_interface__ = d.__cuda_array_interface__


def test_vectorize_takes_foreign_arrays_as_inputs_and_out(cpu_target):
    @cuda.vectorize(["f8(f8, f8)"])
    def vadd(a, b):
        return a + b

    h = np.random.random(10)
    got = vadd(_Foreign(cuda.to_device(h)), 6)
    np.testing.assert_array_equal(got.copy_to_host(), h + 6)
    d = cuda.device_array(10)
    returned = vadd(h, 6, out=_Foreign(d))
    np.testing.assert_array_equal(d.copy_to_host(), h + 6)
    assert returned.__cuda_array_interface__["data"][0] == d.__cuda_array_interface__["data"][0]


def test_gufunc_takes_a_foreign_out(cpu_target):
    @cuda.guvectorize(["(f8, f8, f8[:])"], "(),()->()")
    def gadd(inp, val, out):
        out[0] = inp + val

    h = np.random.random(10)
    d = cuda.device_array(10)
    returned = gadd(h, np.float64(7), out=_Foreign(d))
    np.testing.assert_array_equal(returned.copy_to_host(), h + 7)
    np.testing.assert_array_equal(d.copy_to_host(), h + 7)


def test_vectorize_of_more_than_four_dimensions(cpu_target):
    @cuda.vectorize(["f8(f8, f8)", "i4(i4, i4)"])
    def vsub(a, b):
        return a - b

    a = np.random.random((3, 2, 4, 2, 3, 2))
    b = np.asfortranarray(np.random.random((3, 2, 4, 2, 3, 2)))
    np.testing.assert_array_equal(vsub(a, b), a - b)
    np.testing.assert_array_equal(vsub(a, 1.5), a - 1.5)  # a scalar operand
    i = np.arange(2 * 3 * 2 * 2 * 2, dtype=np.int32).reshape(2, 3, 2, 2, 2)
    np.testing.assert_array_equal(vsub(i, i[0]), i - i[0])  # broadcast over the first axis
    out = np.zeros_like(a)
    assert vsub(a, b, out=out) is out
    np.testing.assert_array_equal(out, a - b)
    d = vsub(cuda.to_device(a), cuda.to_device(b))  # device arrays stay on the device
    np.testing.assert_array_equal(d.copy_to_host(), a - b)


def test_ufunc_argument_errors_as_numba():
    def copy(a, b):
        for i in range(b.size):
            b[i] = a[i]

    g = cuda.guvectorize(["void(float32[:], float32[:])"], "(x)->(x)")(copy)
    x = np.zeros(10, np.float32)
    with pytest.raises(ValueError, match="cannot specify argument 'out' as both positional and keyword"):
        g(x, x, out=x)
    with pytest.raises(TypeError, match=r"gufunc accepts 1 positional arguments .* or 2 positional arguments"
                                        r".*Got 3 positional arguments\."):
        g(x, x, x)
    with pytest.raises(TypeError, match="guvectorized functions cannot return values"):
        cuda.guvectorize([int32(int32[:], int32[:])], "(m)->(m)")(copy)
    with pytest.raises(TypeError, match="nopython flag must be True"):
        cuda.guvectorize(["void(float32[:], float32[:])"], "(x)->(x)", nopython=False)(copy)
    with pytest.raises(TypeError, match="The following target options are not supported: 'what1'"):
        cuda.guvectorize(["void(float32[:], float32[:])"], "(x)->(x)", what1=True)(copy)
    with pytest.warns(RuntimeWarning, match="nopython kwarg for cuda target is redundant"):
        cuda.vectorize(["f4(f4)"], nopython=True)(_scaled_one)
    with pytest.raises(KeyError, match="Unrecognized options"):
        cuda.vectorize(["f4(f4)"], nonexistent=2)(_scaled_one)


def _scaled_one(x):
    return 2 * x


# ---------------------------------------------------------------- reductions


def test_reduce_into_a_foreign_result_array(cpu_target):
    sum_reduce = cuda.Reduce(lambda a, b: a + b)
    a = np.arange(10, dtype=np.float64) + 1
    d = cuda.device_array(1)
    assert sum_reduce(a, res=_Foreign(d)) is None
    assert d.copy_to_host()[0] == a.sum()
    d2 = cuda.device_array(1)
    assert sum_reduce(np.zeros(0), res=_Foreign(d2), init=3) is None  # empty: init is the result
    assert d2.copy_to_host()[0] == 3


# ---------------------------------------------------------------- streams


def test_stream_handle_has_ctypes_value():
    # numba's handle is a c_void_p: interop code writes stream.handle.value
    from pykern.runtime.streams import Stream, StreamHandle

    h = Stream(0x1234, target="hip").handle
    assert h == 0x1234 and h.value == 0x1234 and int(h) == 0x1234
    assert Stream(0).handle.value is None  # the null stream, as c_void_p(0).value
    assert isinstance(h, int) and isinstance(StreamHandle(5), int)
    import ctypes

    assert ctypes.c_void_p(h).value == 0x1234  # still passes as a pointer-sized int
    assert cuda.cudadrv.driver.Stream is Stream


def test_stream_handle_value_matches_cuda_array_interface(cpu_target):
    s = cuda.stream()
    d = cuda.device_array(10, stream=s)
    assert d.__cuda_array_interface__["stream"] == s.handle.value


# ---------------------------------------------------------------- globals


def _kernel_reading(g):
    # the same source each time, capturing a different array: the cache must tell them apart
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = g[i] * 2.0

    return k


def test_foreign_array_globals_are_captured_by_address(cpu_target):
    for fill in (1.0, 5.0, 7.0):  # each a new allocation, each a new kernel of the same text
        g = _Foreign(cuda.to_device(np.full(4, fill, np.float32)))
        out = np.zeros(4, np.float32)
        _kernel_reading(g)[1, 4](out)
        np.testing.assert_array_equal(out, 2 * fill)
    d = cuda.to_device(np.zeros(3, np.float32))
    m = _Foreign(d)

    @cuda.jit
    def write():
        i = cuda.grid(1)
        if i < 3:
            m[i] = i + 1.0

    write[1, 3]()
    np.testing.assert_array_equal(d.copy_to_host(), [1, 2, 3])  # by reference: writes reach it


def test_fingerprint_holds_the_address_of_a_foreign_global():
    from pykern.frontend.fingerprint import value_digest

    a, b = _Foreign(cuda.to_device(np.zeros(2))), _Foreign(cuda.to_device(np.zeros(2)))
    assert value_digest(a).startswith("device-array:") and value_digest(a) != value_digest(b)


# ---------------------------------------------------------------- launch configuration


def _noop1(x):
    pass


def test_launch_configuration_errors_in_numbas_words():
    k = cuda.jit(_noop1)
    with pytest.raises(ValueError, match=r"griddim must be a sequence of 1, 2 or 3 integers, got \[1, 2, 3, 4\]"):
        k[(1, 2, 3, 4), (5, 6)]
    with pytest.raises(ValueError, match=r"blockdim must be a sequence of 1, 2 or 3 integers, got \[3, 4, 5, 6\]"):
        k[(1, 2), (3, 4, 5, 6)]
    with pytest.raises(TypeError, match=r"griddim must be a sequence of integers, got \[2.0\]"):
        k[2.0, 3]
    with pytest.raises(TypeError, match=r"blockdim must be a sequence of integers, got \[3.0\]"):
        k[2, 3.0]
    for kern in (cuda.jit(_noop1), cuda.jit("void(int32)")(_noop1)):
        with pytest.raises(ValueError, match="launch configuration was not specified"):
            kern(0)
    with pytest.raises(ValueError, match="Can't create ForAll with negative task count"):
        k.forall(-1)


def test_ravel_and_reshape_with_order_a(cpu_target):
    c = np.arange(60).reshape(2, 5, 2, 3)
    f = np.asfortranarray(c)
    for host in (c, f):
        d = cuda.to_device(host)
        for order in "CFA" if host is c else "FA":
            if host is c and order == "F":
                continue
            np.testing.assert_array_equal(d.ravel(order=order).copy_to_host(), host.ravel(order=order))
    np.testing.assert_array_equal(cuda.to_device(np.arange(10)).reshape(2, 5, order="A").copy_to_host(),
                                  np.arange(10).reshape(2, 5, order="A"))
    with pytest.raises(NotImplementedError):
        cuda.to_device(np.arange(60))[::2].ravel()


def test_device_array_error_messages_as_numba(cpu_target):
    d = cuda.to_device(np.arange(12, dtype="i2").reshape(4, 3))
    with pytest.raises(ValueError, match=r"^When changing to a larger dtype, its size must be a divisor"):
        d.view("i4")
    with pytest.raises(ValueError, match="^To change to a dtype of a different size, the last axis"):
        cuda.to_device(np.arange(32, dtype="i2").reshape(4, 8))[:, ::2].view("i4")
    with pytest.raises(ValueError, match="Can't assign 3-D array to 1-D self"):
        cuda.to_device(np.arange(35))[:] = np.ones((1, 2, 3))
    with pytest.raises(ValueError, match="Can't copy sequence with size 2 to array axis 0 with dimension 5"):
        cuda.to_device(np.arange(5))[:] = [1, 3]
    d = cuda.to_device(np.arange(35).reshape(5, 7))
    d[:, 2] = np.full(5, 400)  # what broadcasts is still taken
    expect = np.arange(35).reshape(5, 7)
    expect[:, 2] = 400
    np.testing.assert_array_equal(d.copy_to_host(), expect)
    cai = dict(cuda.to_device(np.zeros(3)).__cuda_array_interface__, mask=cuda.to_device(np.ones(3, bool)))
    with pytest.raises(NotImplementedError, match="Masked arrays are not supported"):
        cuda.from_cuda_array_interface(cai)


def test_cudadrv_devicearray_helpers(cpu_target):
    from pykern.numba_compat.cudadrv import devicearray as da

    for view in (np.zeros(10)[::2], np.zeros((10, 12))[::2, ::2], np.zeros((10, 12), order="F"),
                 np.broadcast_to(np.arange(3.0), (4, 3)), cuda.device_array((10, 12)).T):
        assert da.is_contiguous(view) == da.array_core(view).flags["C_CONTIGUOUS"]
    y = np.zeros((3, 4), np.complex128)
    d = da.from_array_like(y)
    assert (d.shape, d.strides, d.dtype) == (y.shape, y.strides, y.dtype)
    assert "non-contiguous" in da.errmsg_contiguous_buffer


# ---------------------------------------------------------------- cuda.kernels


def test_kernels_transpose_any_dtype(cpu_target):
    from pykern.numba_compat.kernels.transpose import transpose

    rec = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])
    for rows, cols in ((2, 3), (17, 16), (33, 5)):
        x = np.arange(rows * cols, dtype=np.float64).reshape(cols, rows)
        np.testing.assert_array_equal(transpose(cuda.to_device(x)).copy_to_host(), x.T)
        z = (x + 1j * x).astype(np.complex128)
        dz = cuda.device_array((rows, cols), np.complex128)
        assert transpose(cuda.to_device(z), dz) is dz
        np.testing.assert_array_equal(dz.copy_to_host(), z.T)
        bits = np.random.randint(2, size=(rows, cols)).astype(np.bool_)
        out = cuda.device_array_like(bits.T)  # an F-ordered result
        np.testing.assert_array_equal(transpose(cuda.to_device(bits), out).copy_to_host(), bits.T)
        r = np.zeros((rows, cols), rec)
        r["i"] = np.arange(rows * cols).reshape(rows, cols)
        r["j"] = np.random.random((rows, cols, 3, 2))
        np.testing.assert_array_equal(cuda.kernels.transpose.transpose(cuda.to_device(r)).copy_to_host(), r.T)
    with pytest.raises(ValueError, match="needs a"):
        transpose(cuda.to_device(np.zeros((2, 3))), cuda.device_array((2, 3)))


def test_ufuncs_pickle_by_value(cpu_target):
    import pickle

    @cuda.vectorize(["int64(int64)", "float64(float64)"])
    def twice(x):
        return x * 2

    @cuda.guvectorize(["void(float64[:], float64[:])"], "(n)->()")
    def total(x, r):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i]
        r[0] = s

    a = np.arange(10)
    t2 = pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(twice))))  # twice over, as numba's test
    np.testing.assert_array_equal(t2(a), a * 2)
    np.testing.assert_array_equal(t2(a * 0.5), a * 1.0)
    assert t2.types == twice.types
    g2 = pickle.loads(pickle.dumps(total))
    m = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(g2(m), m.sum(axis=1))
    assert g2.layout == "(n)->()"


# ---------------------------------------------------------------- print


@cuda.jit
def _print_dim3():
    print(cuda.threadIdx, "of", cuda.blockDim)


def test_print_of_a_dim3_is_a_tuple(cpu_target, capfd):
    _print_dim3[1, (2, 2, 2)]()
    lines = sorted(capfd.readouterr().out.splitlines())
    assert lines == sorted(f"{t} of (2, 2, 2)" for t in np.ndindex(2, 2, 2))


def test_device_record_constructors_and_copies_into_a_record(cpu_target):
    from pykern.numba_compat.cudadrv.devicearray import DeviceRecord, auto_device, from_record_like

    dt = np.dtype([("a", np.int32), ("b", np.float32)], align=True)
    for make in (np.zeros, np.recarray):
        zero, full = make(1, dt)[0], make(1, dt)[0]
        zero["a"], zero["b"] = 0, 0.0
        full["a"], full["b"] = 10, 11.0
        rec = DeviceRecord(dt)  # numba's constructor: new device memory
        assert (rec.shape, rec.strides, rec.dtype, rec.alloc_size) == ((), (), dt, dt.itemsize)
        rec.copy_to_device(full)
        got = zero.copy()
        assert rec.copy_to_host(got) is got  # into the record scalar, in place
        assert (got["a"], got["b"]) == (10, 11.0)
        like = from_record_like(rec)
        assert isinstance(like, DeviceRecord) and like.dtype == dt and like.ptr != rec.ptr
        d, new = auto_device(full)
        assert new and d.copy_to_host()["a"] == 10


def test_device_ndarray_constructor_allocates_as_numba(cpu_target):
    from pykern.numba_compat.cudadrv.devicearray import DeviceNDArray

    arr = DeviceNDArray((1, 10), (800, 8), np.float64)  # relaxed strides: a length-1 axis
    assert arr.flags["C_CONTIGUOUS"] and arr.flags["F_CONTIGUOUS"]
    arr.copy_to_device(np.arange(10.0).reshape(1, 10))
    np.testing.assert_array_equal(arr.copy_to_host(), np.arange(10.0).reshape(1, 10))
    f = DeviceNDArray((3, 4), (8, 24), np.float64, cuda.stream())  # F order, with a stream
    f.copy_to_device(np.asfortranarray(np.arange(12.0).reshape(3, 4)))
    np.testing.assert_array_equal(f.copy_to_host(), np.arange(12.0).reshape(3, 4))
    empty = DeviceNDArray((0,), (8,), np.int8)
    empty.copy_to_host(np.ndarray((0,), np.int8, strides=(0,)))


def test_driver_memset_and_raw_copies(cpu_target):
    from pykern.numba_compat.cudadrv import driver

    host = cuda.pinned_array(10, dtype=np.uint32)
    host.fill(123)
    dev = cuda.to_device(host)
    assert driver.device_memory_size(dev) == 40
    driver.device_memset(dev, 0, driver.device_memory_size(dev))
    assert (host == 123).all() and (dev.copy_to_host() == 0).all()
    driver.device_memset(dev[2:4], 0xFF, 8)  # a view: its own bytes only
    np.testing.assert_array_equal(dev.copy_to_host(), [0, 0, 2**32 - 1, 2**32 - 1, 0, 0, 0, 0, 0, 0])
    mapped = cuda.mapped_array(10, dtype=np.uint32)
    mapped.fill(5)
    driver.device_memset(mapped, 0, driver.device_memory_size(mapped))
    assert (mapped == 0).all()
    src = np.arange(10, dtype=np.uint32)
    driver.host_to_device(dev, src, src.nbytes)
    out = np.zeros_like(src)
    driver.device_to_host(out, dev, src.nbytes)
    np.testing.assert_array_equal(out, src)
    other = cuda.device_array_like(src)
    driver.device_to_device(other, dev, src.nbytes)
    np.testing.assert_array_equal(other.copy_to_host(), src)
