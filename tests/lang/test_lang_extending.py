"""numba.extending for kernels (``pykern.numba_compat.extending``): ``register_jitable`` functions called
from kernels and device functions, and ``overload`` functions that choose an implementation
from the pykern types of a call's arguments (``pykern.numba_compat.numba_types``), compared with Python."""

import math

import numpy as np
import pytest

import pykern as cuda
from pykern.numba_compat import numba_types as types
from pykern.core.errors import CompileError
from pykern.numba_compat.extending import overload, register_jitable
from pykern.frontend import compile_ir

pytestmark = pytest.mark.usefixtures("cpu_uncached")


# ---- register_jitable

@register_jitable
def clamp(x, lo=0, hi=10):
    return min(max(x, lo), hi)


@register_jitable(inline="always")
def clamp_sum(a, b):
    return clamp(a) + clamp(b, hi=5)  # a jitable calling a jitable, with a keyword


@cuda.jit(device=True)
def from_device(x):
    return clamp(x, -1, 1) * 100


@cuda.jit
def jitable_uses(xs, out):
    i = cuda.grid(1)
    if i < xs.size:
        out[i, 0] = clamp(xs[i])
        out[i, 1] = clamp_sum(xs[i], xs[i] + 1)
        out[i, 2] = from_device(xs[i])


def test_register_jitable_from_kernels_device_functions_and_python():
    xs = np.array([-4, 0, 3, 7, 12, 50], np.int64)
    out = np.zeros((6, 3), np.int64)
    jitable_uses[1, 8](xs, out)
    want = [[clamp(x), clamp_sum(x, x + 1), from_device.py_func(x)] for x in xs]  # plain Python
    np.testing.assert_array_equal(out, want)
    assert clamp(15) == 10 and clamp.__name__ == "clamp" and clamp.__doc__ is None


def test_register_jitable_refuses_non_functions():
    with pytest.raises(TypeError, match="Python function"):
        register_jitable(3)


# ---- overload: typing-time dispatch

def describe(x):
    raise NotImplementedError  # only its overloads run, in kernels


calls = []


@overload(describe)
def ol_describe(x):
    calls.append(x)
    if isinstance(x, types.Float):
        return lambda x: x * 0.5
    if isinstance(x, types.Integer):
        step = 1000 if x.signed else 2000  # a value chosen at typing time, frozen into impl

        def impl(x):
            return x + step

        return impl
    if isinstance(x, types.Array) and x.ndim == 1 and isinstance(x.dtype, types.Integer):
        def total(x):
            s = 0
            for v in x:
                s += v
            return s

        return total
    return None


@cuda.jit
def describe_uses(ints, uints, floats, out):
    i = cuda.grid(1)
    if i < ints.size:
        out[i, 0] = describe(ints[i])
        out[i, 1] = describe(uints[i])
        out[i, 2] = describe(floats[i])
        out[i, 3] = describe(ints)


def test_overload_picks_an_implementation_by_type():
    ints = np.array([-5, 0, 7], np.int64)
    uints = np.array([1, 2, 3], np.uint32)
    floats = np.array([1.5, -3.0, 0.25])
    out = np.zeros((3, 4))
    del calls[:]
    describe_uses[1, 4](ints, uints, floats, out)
    want = np.stack([ints + 1000, uints.astype(np.int64) + 2000, floats * 0.5, np.full(3, ints.sum())], axis=1)
    np.testing.assert_array_equal(out, want)
    # asked once per argument types, however many passes and call sites there are
    assert sorted(map(str, calls)) == sorted(["int64", "uint32", "float64", "int64[::1]"])


def test_overload_declining_every_type_is_a_compile_error():
    @cuda.jit
    def k(out):
        out[0] = describe((1, 2))

    with pytest.raises(CompileError, match=r"no overload of 'describe' accepts \(UniTuple\(int64, 2\)\)"):
        k[1, 1](np.zeros(1))


def boom(x):
    pass


@overload(boom)
def ol_boom(x):
    if isinstance(x, types.Float):
        raise TypeError("boom takes integers")  # numba: the overload's TypingError


def test_an_overload_function_raising_is_a_compile_error_at_the_call():
    @cuda.jit
    def k(out):
        out[0] = boom(out[0])

    with pytest.raises(CompileError, match="raised TypeError: boom takes integers") as e:
        k[1, 1](np.zeros(1))
    assert "out[0] = boom(out[0])" in str(e.value)


# numba-cuda prefers a "cuda" overload to a "generic" one; "cpu" overloads are not for kernels
def targeted(x):
    pass


@overload(targeted, target="generic")
def ol_targeted_generic(x):
    return lambda x: x + 1


@overload(targeted, target="cuda")
def ol_targeted_cuda(x):
    if isinstance(x, types.Integer):
        return lambda x: x + 100


@overload(targeted, target="cpu")
def ol_targeted_cpu(x):
    return lambda x: x + 10000


def calls_targeted(x):
    pass


@overload(calls_targeted)
def ol_calls_targeted(x):
    def impl(x):
        return targeted(x) * 2  # an implementation calling an overloaded function

    return impl


@cuda.jit
def target_uses(ints, floats, out):
    out[0] = targeted(ints[0])
    out[1] = targeted(floats[0])  # the cuda overload declines floats: the generic one
    out[2] = calls_targeted(ints[0])


def test_cuda_overloads_come_before_generic_ones():
    out = np.zeros(3)
    target_uses[1, 1](np.array([5]), np.array([0.5]), out)
    np.testing.assert_array_equal(out, [105, 1.5, 210])


def defaults_and_keywords():
    pass


@overload(defaults_and_keywords)
def ol_defaults_and_keywords(out, x, y=5, z=6):
    def impl(out, x, y=5, z=6):
        out[0], out[1] = x + y, z

    return impl


def test_overload_defaults_and_keywords():
    @cuda.jit
    def k(a, b, out, out2):
        defaults_and_keywords(out, a, z=b)
        defaults_and_keywords(out2, a, b, z=b * 3)

    out, out2 = np.zeros(2, np.int64), np.zeros(2, np.int64)
    k[1, 1](1, 2, out, out2)
    assert tuple(out) == (6, 2) and tuple(out2) == (3, 6)


def norm2(v):
    return math.sqrt(sum(x * x for x in v))  # Python's; not compilable as written


@overload(norm2, jit_options={"forceinline": True})
def ol_norm2(v):
    if isinstance(v, types.UniTuple) and isinstance(v.elems[0], types.Number):
        def impl(v):
            s = 0.0
            for x in v:
                s += x * x
            return math.sqrt(s)

        return impl


def test_overload_of_a_python_function_matches_python_on_tuples():
    @cuda.jit
    def k(a, out):
        out[0] = norm2((a[0], a[1], a[2]))

    a = np.array([3.0, 4.0, 12.0])
    out = np.zeros(1)
    k[1, 1](a, out)
    assert out[0] == norm2(tuple(a))


def test_types_answer_numba_style_checks():
    assert isinstance(types.int32, types.Integer) and types.int32.bitwidth == 32 and types.int32.signed
    assert isinstance(types.float32, types.Float) and types.float32.bitwidth == 32
    assert all(isinstance(t, types.Number) for t in (types.int8, types.float64, types.complex64))
    assert not isinstance(types.boolean, types.Number)
    arr = types.float32[:, ::1]
    assert isinstance(arr, types.Array) and arr.dtype == types.float32 and arr.ndim == 2 and arr.layout == "C"
    assert isinstance(types.UniTuple, type) and not isinstance(types.none, types.BaseTuple)


def test_complex_types_name_their_part_type_as_numba_does():
    # numba's Complex.underlying_float: overloads and signatures (numba's own tests build
    # ``tp.underlying_float(tp)``) use it as the type of .real/.imag
    for ct, ft, npt in ((types.complex64, types.float32, np.complex64), (types.complex128, types.float64, np.complex128)):
        assert ct.underlying_float == ft

        @cuda.jit(ct.underlying_float(ct), device=True)
        def imag(z):
            return z.imag

        @cuda.jit(cuda.void(ct[:], ct.underlying_float[:]))
        def k(zs, out):
            out[0] = imag(zs[0])

        zs = np.array([1.25 - 3.5j], npt)
        out = np.zeros(1, zs.real.dtype)
        k[1, 1](zs, out)
        assert out[0] == zs[0].imag


def test_kernels_calling_overloads_are_not_disk_cached():
    # the disk-cache key is made without compiling, so it cannot see an overload's choice
    m = compile_ir(describe_uses.py_func, [types.int64[::1], types.uint32[::1], types.float64[::1],
                                           types.float64[:, ::1]])
    assert m.uncacheable
    assert not compile_ir(jitable_uses.py_func, [types.int64[::1], types.int64[:, ::1]]).uncacheable


@pytest.mark.parametrize("arch", ["gfx90a", "gfx1100"])
def test_amdgpu_compiles_overloads_and_jitables(arch, tmp_path):
    from types_helpers import HAVE_LLVM_TOOLS, amdgpu_compile

    if not HAVE_LLVM_TOOLS:
        pytest.skip("llvm tools not installed")
    amdgpu_compile(describe_uses, [types.int64[::1], types.uint32[::1], types.float64[::1], types.float64[:, ::1]],
                   arch, tmp_path)
    amdgpu_compile(jitable_uses, [types.int64[::1], types.int64[:, ::1]], arch, tmp_path)
