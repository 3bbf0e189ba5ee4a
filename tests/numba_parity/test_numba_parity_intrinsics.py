"""Kernel intrinsics as numba.cuda programs use them (found by running numba-cuda's own
cudapy tests against pykern): literal device-function arguments that numba types as
literals (bool flags whose dead branch is pruned, int tuples used as shapes), locals
assigned a constant once used as shapes, whole-record stores, vector types
(``cuda.float4``), ``cuda.libdevice``, ``Overload.cooperative`` and fastmath under
``debug=True``. Each runs on the cpu target against numpy/Python, and compiles for every
amdgpu arch."""

import math

import numpy as np
import pytest

import pykern as cuda
from pykern import float64, uint64
from pykern.lang import libdevice
from pykern.dispatch.generated import define
from types_helpers import ARCHS

pytestmark = pytest.mark.usefixtures("cpu_target")


# ---------------------------------------------------------------- literal arguments


@cuda.jit(device=True)
def _to_u64(x):
    return uint64(x)


@cuda.jit(device=True)
def _atomic_on_shared(ary, shape, dtype, op, wrap):
    # numba.cuda's helper style: the shape and dtype of a shared array, the atomic and a
    # flag are arguments. With wrap False, the `%` branch (which would make `bin` a float64
    # tuple: uint64 % int64 promotes to float64) is dead and never typed, as in numba.
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    sm = cuda.shared.array(shape, dtype)
    sm[tx, ty] = ary[tx, ty]
    cuda.syncthreads()
    bin = (tx, _to_u64(ty))
    if wrap:
        bin = (bin[0] % shape[0], bin[1] % shape[1])
    op(sm, bin, 1)
    cuda.syncthreads()
    ary[tx, ty] = sm[tx, ty]


def _shared_shape_tuple(ary):
    _atomic_on_shared(ary, (4, 8), float64, cuda.atomic.add, False)


def test_int_tuple_argument_is_a_shared_array_shape():
    k = cuda.jit(_shared_shape_tuple)
    a = np.arange(32, dtype=np.float64).reshape(4, 8)
    want = a + 1
    k[1, (4, 8)](a)
    np.testing.assert_array_equal(a, want)


def test_false_literal_prunes_a_branch_that_would_not_type():
    @cuda.jit
    def k(ary):
        _atomic_on_shared(ary, (4, 8), float64, cuda.atomic.sub, False)

    a = np.full((4, 8), 5.0)
    k[1, (4, 8)](a)
    np.testing.assert_array_equal(a, np.full((4, 8), 4.0))


@cuda.jit(device=True)
def _pick(x, flag):
    if flag:
        return x * 2
    return x + 100


def test_bool_literal_argument_specialises_each_value():
    @cuda.jit
    def k(out, x):
        out[0] = _pick(x[0], True)
        out[1] = _pick(x[0], False)
        out[2] = _pick(x[0], x[0] > 0)  # a run-time flag still works

    out = np.zeros(3, dtype=np.int64)
    k[1, 1](out, np.array([7], dtype=np.int64))
    assert out.tolist() == [14, 107, 14]


@cuda.jit(device=True)
def _toggle(x, flag):
    flag = not flag  # assigned in the body: an ordinary variable, not a compile-time value
    if flag:
        return x
    return -x


def test_bool_argument_assigned_in_the_callee_stays_a_variable():
    @cuda.jit
    def k(out):
        out[0] = _toggle(3, True)
        out[1] = _toggle(3, False)

    out = np.zeros(2, dtype=np.int64)
    k[1, 1](out)
    assert out.tolist() == [-3, 3]


@cuda.jit(device=True)
def _sum_shape(shape):
    return shape[0] * 10 + shape[1]


def test_int_tuple_argument_used_as_values():
    @cuda.jit
    def k(out):
        out[0] = _sum_shape((3, 4))
        out[1] = _sum_shape((5, 6))

    out = np.zeros(2, dtype=np.int64)
    k[1, 1](out)
    assert out.tolist() == [34, 56]


@pytest.mark.parametrize("arch", ARCHS)
def test_literal_arguments_compile_for_amdgpu(arch):
    ck = cuda.compile(_shared_shape_tuple, "void(float64[:, :])", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"


# ---------------------------------------------------------------- constant locals as shapes


def _constant_locals(out):
    N = 8
    TPB = N // 2
    shape = (TPB, N)
    sm = cuda.shared.array(shape, float64)
    scratch = cuda.local.array(TPB + 1, float64)
    i = cuda.threadIdx.x
    scratch[TPB] = i
    sm[i % TPB, i] = scratch[TPB]
    cuda.syncthreads()
    j = N - 1 - i
    out[i] = sm[j % TPB, j] + 100 * sm.shape[0] + 1000 * scratch.shape[0]


def test_local_assigned_a_constant_once_is_a_shape():
    # numba.cuda's own tests write `N = 100; sm = cuda.shared.array(N, int32)`
    out = np.zeros(8)
    cuda.jit(_constant_locals)[1, 8](out)
    np.testing.assert_array_equal(out, np.arange(7, -1, -1) + 400 + 5000)


def test_parameter_assigned_a_constant_is_not_a_shape():
    @cuda.jit
    def k(out, n):
        if n < 0:
            n = 4  # n is still the argument on the other path: not a compile-time value
        sm = cuda.shared.array(n, float64)
        out[0] = sm.shape[0]

    with pytest.raises(cuda.CompileError, match="compile-time constant"):
        k[1, 1](np.zeros(1), 3)


def test_local_assigned_twice_is_not_a_shape():
    @cuda.jit
    def k(out, flag):
        n = 4
        if flag:
            n = 8
        sm = cuda.shared.array(n, float64)
        out[0] = sm.shape[0]

    with pytest.raises(cuda.CompileError, match="compile-time constant"):
        k[1, 1](np.zeros(1), True)


@pytest.mark.parametrize("arch", ARCHS)
def test_constant_locals_compile_for_amdgpu(arch):
    ck = cuda.compile(_constant_locals, "void(float64[::1])", arch=arch)
    assert ck.resources["lds_bytes"] >= 4 * 8 * 8  # the (4, 8) float64 shared array


# ---------------------------------------------------------------- whole records


_INNER = np.dtype([("a", np.int16), ("b", np.float64)], align=True)
_REC = np.dtype([("i", np.int32), ("j", np.float32, (3, 2)), ("r", _INNER)], align=True)
_PACKED = np.dtype([("i", np.int8), ("x", np.float64), ("c", np.complex64)])
_REC_T = cuda.from_dtype(_REC)


def _records(n, dtype):
    a = np.zeros(n, dtype=dtype)
    raw = a.view(np.uint8)
    raw[:] = np.random.default_rng(5).integers(0, 256, raw.size, dtype=np.uint8)
    for name in dtype.names:  # finite floats, so the comparison below is by value
        if a[name].dtype.kind in "fc":
            a[name] = np.arange(a[name].size).reshape(a[name].shape) * 0.5
    return a


def _chunk_copy(x, y):
    # numba-cuda's test_sm: a block copies its records through shared memory
    sm = cuda.shared.array(16, dtype=_REC_T)
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tx
    if i < len(x):
        sm[tx] = x[i]
    cuda.syncthreads()
    if tx == 0:
        for j in range(16):
            y[cuda.blockIdx.x * 16 + j] = sm[j]


def test_whole_record_assignment_through_shared_memory():
    x = _records(64, _REC)
    x["r"]["a"] = np.arange(64)
    y = np.zeros_like(x)
    cuda.jit(_chunk_copy)[4, 16](x, y)
    np.testing.assert_array_equal(y["i"], x["i"])
    np.testing.assert_array_equal(y["j"], x["j"])
    np.testing.assert_array_equal(y["r"]["b"], x["r"]["b"])
    np.testing.assert_array_equal(y["r"]["a"], x["r"]["a"])


def test_whole_record_assignment_of_a_packed_record_and_a_record_argument():
    @cuda.jit
    def k(a, b, rec):
        i = cuda.grid(1)
        if i < a.size - 1:
            b[i] = a[i + 1]
        else:
            b[i] = rec

    a = _records(8, _PACKED)
    b = np.zeros_like(a)
    k[1, 8](a, b, a[0])
    want = np.concatenate([a[1:], a[:1]])
    for n in _PACKED.names:
        np.testing.assert_array_equal(b[n], want[n])


def test_record_of_another_dtype_is_refused():
    @cuda.jit
    def k(a, b):
        a[0] = b[0]

    with pytest.raises(cuda.CompileError, match="cannot assign a record"):
        k[1, 1](np.zeros(1, _REC), np.zeros(1, _PACKED))


@pytest.mark.parametrize("arch", ARCHS)
def test_whole_record_copy_compiles_for_amdgpu(arch):
    ck = cuda.compile(_chunk_copy, (_REC_T[::1], _REC_T[::1]), arch=arch)
    assert ck.resources["lds_bytes"] >= 16 * _REC.itemsize


# ---------------------------------------------------------------- cooperative groups


def test_overload_says_whether_it_is_cooperative():
    @cuda.jit("void(int32[:, ::1])")
    def rows(m):
        col = cuda.grid(1)
        g = cuda.cg.this_grid()
        for row in range(1, m.shape[0]):
            m[row, col] = m[row - 1, m.shape[1] - col - 1] + 1
            g.sync()

    @cuda.jit("void(int32[:, ::1])")
    def plain(m):
        m[0, cuda.grid(1)] = 1

    a = np.zeros((16, 64), np.int32)
    rows[2, 32](a)
    np.testing.assert_array_equal(a, np.tile(np.arange(16), (64, 1)).T)
    assert rows.overloads[rows.signatures[0]].cooperative is True
    assert plain.overloads[plain.signatures[0]].cooperative is False


# ---------------------------------------------------------------- vector types


def _vectors(out, x):
    i = cuda.grid(1)
    f2 = cuda.float2(x[i], 2)               # an int literal converts to the base type
    v = cuda.float32x4(1.5, f2, f2.y)       # scalars and smaller vectors, flattened in order
    s = cuda.short3(cuda.short2(-1, 7), 40000)  # converted as numba converts (int16 wraps)
    out[i, 0] = v.x
    out[i, 1] = v.y
    out[i, 2] = v.z
    out[i, 3] = v.w
    out[i, 4] = s.x + s.y
    out[i, 5] = s.z
    k = 6
    for w in (v, cuda.float4(f2, f2)):      # a tuple of vectors: the body per element
        out[i, k] = w.x + w.w
        k += 1


def test_vector_types_build_and_read():
    x = np.array([0.25, -3.0], np.float32)
    out = np.zeros((2, 8), np.float32)
    cuda.jit(_vectors)[1, 2](out, x)
    for i in range(2):
        want = [1.5, x[i], 2, 2, 6, np.int16(40000 - 65536), 1.5 + 2, x[i] + 2]
        np.testing.assert_array_equal(out[i], np.array(want, np.float32))


def test_vector_type_names_and_aliases():
    assert cuda.float4 is cuda.float32x4 and cuda.double2 is cuda.float64x2
    assert cuda.int3 is cuda.int32x3 and cuda.long2 is cuda.int64x2 and cuda.uchar1 is cuda.uint8x1
    assert (cuda.float4.base, cuda.float4.n) == ("float32", 4)
    with pytest.raises(RuntimeError, match="inside"):
        cuda.float4(1, 2, 3, 4)  # kernel-only, as numba's


@cuda.jit(device=True)
def _dot3(a, b):
    return a.x * b.x + a.y * b.y + a.z * b.z


def test_vector_through_a_device_function():
    @cuda.jit
    def k(out):
        out[0] = _dot3(cuda.double3(1, 2, 3), cuda.double3(4, 5, 6))

    out = np.zeros(1)
    k[1, 1](out)
    assert out[0] == 32.0


@pytest.mark.parametrize("bad, msg", [
    ("cuda.float4(1.0, 2.0)", "needs 4 elements"),
    ("cuda.float2(cuda.int2(1, 2))", "not a int32x2"),
])
def test_vector_constructor_errors(bad, msg, tmp_path):
    src = f"import pykern as cuda\n\ndef k(out):\n    v = {bad}\n    out[0] = v.x\n"
    path = tmp_path / "vk.py"
    path.write_text(src)
    ns = {}
    exec(compile(src, str(path), "exec"), ns)
    with pytest.raises(cuda.CompileError, match=msg):
        cuda.jit(ns["k"])[1, 1](np.zeros(1))


@pytest.mark.parametrize("arch", ARCHS)
def test_vector_types_compile_for_amdgpu(arch):
    ck = cuda.compile(_vectors, "void(float32[:, ::1], float32[::1])", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"


# ---------------------------------------------------------------- fastmath and debug


def _div(r, x, y):
    r[0] = x / y


def test_fastmath_float_division_by_zero_does_not_raise_under_debug():
    sig = "void(float32[::1], float32, float32)"
    fast = cuda.jit(sig, fastmath=True, debug=True, opt=False)(_div)
    prec = cuda.jit(sig, debug=True, opt=False)(_div)
    r = np.zeros(1, np.float32)
    with pytest.raises(ZeroDivisionError):
        prec[1, 1](r, 10.0, 0.0)
    fast[1, 1](r, 10.0, 0.0)  # numba: fastmath division is the hardware's, inf here
    assert r[0] == np.inf


def test_fastmath_integer_division_by_zero_still_raises_under_debug():
    @cuda.jit(fastmath=True, debug=True, opt=False)
    def k(r, x, y):
        r[0] = x // y

    with pytest.raises(ZeroDivisionError):
        k[1, 1](np.zeros(1, np.int64), 7, 0)


# ---------------------------------------------------------------- cuda.libdevice


_UNARY_REF = {
    "acos": math.acos, "acosh": math.acosh, "asin": math.asin, "asinh": math.asinh, "atan": math.atan,
    "atanh": math.atanh, "cbrt": np.cbrt, "ceil": math.ceil, "cos": math.cos, "cosh": math.cosh,
    "erf": math.erf, "erfc": math.erfc, "exp": math.exp, "exp2": np.exp2, "exp10": lambda x: 10.0 ** x,
    "expm1": math.expm1, "fabs": math.fabs, "floor": math.floor, "lgamma": math.lgamma, "log": math.log,
    "log10": math.log10, "log1p": math.log1p, "log2": math.log2, "rint": np.rint, "nearbyint": np.rint,
    "round": lambda x: math.copysign(math.floor(abs(x) + 0.5), x), "rsqrt": lambda x: 1 / math.sqrt(x),
    "rcbrt": lambda x: 1 / np.cbrt(x), "sin": math.sin, "sinh": math.sinh, "sqrt": math.sqrt, "tan": math.tan,
    "tanh": math.tanh, "tgamma": math.gamma, "trunc": math.trunc, "logb": lambda x: math.frexp(x)[1] - 1,
}
_ARG = {"acosh": 1.75, "lgamma": 2.5, "tgamma": 2.5, "round": 2.5, "rint": 2.5, "nearbyint": 3.5}


def _kernel_calling(names):
    """A kernel writing ``libdevice.<name>(x[k])`` of the k-th name to out[k] (generated source)."""
    body = "".join(f"    out[{k}] = libdevice.{n}(x[{k}])\n" for k, n in enumerate(names))
    return cuda.jit(define("k", f"def k(out, x):\n{body}", {"libdevice": libdevice}))


@pytest.mark.parametrize("suffix, dtype, rtol", [("", np.float64, 1e-14), ("f", np.float32, 2e-6)])
def test_libdevice_unary_float_functions(suffix, dtype, rtol):
    names = sorted(_UNARY_REF)
    x = np.array([_ARG.get(n, 0.625) for n in names], dtype)
    out = np.zeros(len(names), dtype)
    _kernel_calling([n + suffix for n in names])[1, 1](out, x)
    want = np.array([_UNARY_REF[n](float(v)) for n, v in zip(names, x)], dtype)
    np.testing.assert_allclose(out, want, rtol=rtol, err_msg=str(names))


def test_libdevice_binary_and_tuple_functions():
    @cuda.jit
    def k(out, ints, x, y):
        out[0] = libdevice.atan2(x, y)
        out[1] = libdevice.fdim(x, y)
        out[2] = libdevice.fdim(y, x)
        out[3] = libdevice.fmaxf(np.float32(np.nan), np.float32(y))  # ignores the NaN
        out[4] = libdevice.fmin(x, y)
        out[5] = libdevice.hypot(x, y)
        out[6] = libdevice.remainder(x, y)
        out[7] = libdevice.fma(x, y, 1.0)
        out[8] = libdevice.powi(x, 3)
        out[9] = libdevice.ldexp(x, 4)
        f, e = libdevice.frexp(x)
        out[10] = f
        ints[0] = e
        s, c = libdevice.sincosf(np.float32(x))
        out[11] = s
        out[12] = c
        fr, whole = libdevice.modf(-x * 3)
        out[13] = fr
        out[14] = whole
        ints[1] = libdevice.ilogb(x * 1024)
        ints[2] = libdevice.isnand(x - x + np.nan)
        ints[3] = libdevice.signbitd(-0.0)
        out[15] = libdevice.saturatef(np.float32(1.5))

    x, y = 2.75, 0.5
    out, ints = np.zeros(16), np.zeros(4, np.int32)
    k[1, 1](out, ints, x, y)
    s32, c32 = np.sin(np.float32(x)), np.cos(np.float32(x))
    want = [math.atan2(x, y), x - y, 0.0, y, y, math.hypot(x, y), math.remainder(x, y), x * y + 1, x ** 3,
            x * 16, math.frexp(x)[0], s32, c32, *math.modf(-x * 3), 1.0]
    np.testing.assert_allclose(out, want, rtol=2e-7)
    assert ints.tolist() == [math.frexp(x)[1], math.frexp(x * 1024)[1] - 1, 1, 1]


def test_libdevice_integer_functions():
    @cuda.jit
    def k(out, a, b, c):
        out[0] = libdevice.sad(a, b, c)
        out[1] = libdevice.mulhi(a, b)
        out[2] = libdevice.umulhi(a, b)
        out[3] = libdevice.hadd(a, b)
        out[4] = libdevice.rhadd(a, b)
        out[5] = libdevice.umin(a, b)
        out[6] = libdevice.brev(c)
        out[7] = libdevice.clz(c)
        out[8] = libdevice.ffs(c)
        out[9] = libdevice.popcll(np.int64(-1))
        out[10] = libdevice.byte_perm(0x33221100, 0x77665544, 0x7531)
        out[11] = libdevice.llabs(np.int64(-5))

    a, b, c = -7, 2_000_000_000, 0x00F0
    out = np.zeros(12, np.int64)
    k[1, 1](out, a, b, c)
    u = lambda v: v & 0xFFFFFFFF  # noqa: E731
    s32 = lambda v: v - (1 << 32) if v & (1 << 31) else v  # noqa: E731
    want = [abs(a - b) + c, s32(((a * b) >> 32) & 0xFFFFFFFF), s32((u(a) * u(b)) >> 32), (a + b) >> 1,
            (a + b + 1) >> 1, s32(min(u(a), u(b))), s32(int(f"{c:032b}"[::-1], 2)), 24, 5, 64, 0x77553311, 5]
    assert out.tolist() == want


def test_libdevice_conversions():
    @cuda.jit
    def k(out, x):
        out[0] = libdevice.double2int_rn(x)
        out[1] = libdevice.double2int_rz(x)
        out[2] = libdevice.double2int_rd(x)
        out[3] = libdevice.double2int_ru(x)
        out[4] = libdevice.float2ll_rn(np.float32(-x))
        out[5] = libdevice.double2ll_rd(-x)

    out = np.zeros(6, np.int64)
    k[1, 1](out, 2.5)
    assert out.tolist() == [2, 2, 2, 3, -2, -3]


def test_libdevice_functions_programs_called_that_were_missing():
    @cuda.jit
    def k(out, ints, x, y):
        out[0] = libdevice.fdividef(np.float32(x), np.float32(y))
        out[1] = libdevice.rhypot(x, y)
        out[2] = libdevice.rhypotf(np.float32(x), np.float32(y))
        out[3] = libdevice.norm3d(x, y, 2.0)
        out[4] = libdevice.norm3df(np.float32(x), np.float32(y), np.float32(2))
        out[5] = libdevice.rnorm3d(x, y, 2.0)
        out[6] = libdevice.rnorm3df(np.float32(x), np.float32(y), np.float32(2))
        ints[0] = libdevice.llrint(x)
        ints[1] = libdevice.llrintf(np.float32(-x))
        ints[2] = libdevice.llround(x)
        ints[3] = libdevice.llroundf(np.float32(-x))
        ints[4] = libdevice.mul24(0x7FFFFF, -3)
        ints[5] = libdevice.mul24(0x1800003, 5)  # bits above 24 ignored; 0x800003 is negative
        ints[6] = libdevice.umul24(0x1FFFFFF, 0xFFFFFF)

    x, y = 2.5, 0.5
    out, ints = np.zeros(7), np.zeros(7, np.int64)
    k[1, 1](out, ints, x, y)
    n3 = math.sqrt(x * x + y * y + 4)
    np.testing.assert_allclose(out, [x / y, 1 / math.hypot(x, y), 1 / math.hypot(x, y), n3, n3, 1 / n3, 1 / n3],
                               rtol=2e-7)
    low32 = lambda v: ((v + (1 << 31)) % (1 << 32)) - (1 << 31)  # noqa: E731
    assert ints.tolist() == [2, -2, 3, -3, 0x7FFFFF * -3, (0x800003 - (1 << 24)) * 5, low32(0xFFFFFF * 0xFFFFFF)]


def test_libdevice_is_a_lazy_attribute():
    assert cuda.libdevice is libdevice and libdevice.sinf.py_func.__name__ == "sinf"


@pytest.mark.parametrize("arch", ARCHS)
def test_libdevice_compiles_for_amdgpu(arch):
    def k(out, x):
        s, c = libdevice.sincos(x[0])
        out[0] = libdevice.expf(np.float32(s)) + libdevice.erfc(c) + libdevice.sad(1, 5, 2)

    ck = cuda.compile(k, "void(float64[::1], float64[::1])", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"


_PACKED_ARR = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])  # numba-cuda's test_sm record
_ALIGNED_ARR = np.dtype([("d", np.float64), ("v", np.float32, (4,))], align=True)


def test_whole_record_copy_of_a_packed_record_with_an_array_field():
    @cuda.jit
    def k(x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = x[x.size - 1 - i]

    x = np.zeros(6, _PACKED_ARR)
    x["i"] = np.arange(6)
    x["j"] = np.arange(36, dtype=np.float32).reshape(6, 3, 2)
    y = np.zeros_like(x)
    k[1, 8](x, y)
    np.testing.assert_array_equal(y["i"], x["i"][::-1])
    np.testing.assert_array_equal(y["j"], x["j"][::-1])


def test_array_field_elements_claim_only_their_own_alignment():
    # the field starts 8-aligned, but its float32 elements are 4 bytes apart: a load that
    # claimed 8 for every element would let LLVM merge accesses as if they were
    def k(out, a):
        out[0] = a[0].v[1] + a[0].v[3]

    rt = cuda.from_dtype(_ALIGNED_ARR)
    ir_text = cuda.compile(k, (cuda.float32[::1], rt[::1]), arch="gfx942").llvm_ir
    loads = [ln for ln in ir_text.splitlines() if "load float" in ln]
    assert loads and not any("align 8" in ln or "align 16" in ln for ln in loads), loads
    out = np.zeros(1, np.float32)
    a = np.zeros(1, _ALIGNED_ARR)
    a["v"] = [[1, 2, 3, 4]]
    cuda.jit(k)[1, 1](out, a)
    assert out[0] == 6
