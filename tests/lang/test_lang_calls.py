"""Calls as numba.cuda code writes them: compile-time values as device-function arguments (types,
functions, int literals), functions of the ``operator`` module, declared signatures that convert
arguments (and arrays of any layout, shared ones too, for a declared ``float64[:]``), overload
resolution among eager signatures, plain ``@jit`` functions called from kernels, lambdas as device
functions, recursion with a signature, ``ord()`` of a character constant. Each runs on the cpu
target against Python/numpy and compiles for every amdgpu arch."""

import math
import operator
import os
import subprocess

import numpy as np
import pytest

import pykern as cuda
from pykern import CompileError, float64, uint32

ARCHS = ["gfx90a", "gfx942", "gfx1100", "gfx1201"]

pytestmark = pytest.mark.usefixtures("cpu_target")


# ---------------------------------------------------------------- wrong results, first


def test_eager_overloads_prefer_the_exact_match():
    @cuda.jit(["void(float64[::1], float32, float32)", "void(float64[::1], float64, float64)"])
    def f(r, x, y):
        r[0] = x + y

    r = np.zeros(1)
    f[1, 1](r, 1, 2**-25)
    assert r[0] == 1.0 + 2**-25  # numba: the float64 overload (the float32 one would give 1.0)


def test_eager_overloads_take_the_safest_conversion():
    @cuda.jit(["void(float64[::1], int16)", "void(float64[::1], float64)"])
    def f(r, x):
        r[0] = x / 3

    r = np.zeros(1)
    f[1, 1](r, np.int8(7))  # int8 -> int16 is a promotion: better than a safe conversion to float64
    assert r[0] == 7 / 3
    assert (cuda.float64[::1], cuda.int16) in f.overloads


def test_eager_overloads_tie_is_a_type_error_naming_both():
    @cuda.jit(["void(float64[::1], float32, float64)", "void(float64[::1], float64, float32)"])
    def f(r, x, y):
        r[0] = x + y

    with pytest.raises(TypeError, match=r"ambiguous.*\(float64\[::1\], float32, float64\).*\(float64\[::1\], float64, float32\)"):
        f[1, 1](np.zeros(1), 1, 2)


def test_declared_device_signature_converts_the_arguments():
    @cuda.jit("int64(int64, int64)", device=True)
    def add(a, b):
        return a + b

    @cuda.jit("int64(int64, int64)", device=True)
    def band(a, b):
        return a & b

    @cuda.jit
    def k(out, x):
        out[0] = add(1.5, 2.5)
        out[1] = band(x[0], 6)
        out[2] = add(x[0], x[1])

    out = np.zeros(3)
    k[1, 1](out, np.array([7.9, 2.2]))
    assert out.tolist() == [3.0, 7 & 6, 9.0]  # numba: int(1.5) + int(2.5) == 3


def test_declared_return_type_converts_the_result():
    @cuda.jit("float32(float64)", device=True)
    def third(x):
        return x / 3

    @cuda.jit
    def k(out):
        out[0] = third(1.0)

    out = np.zeros(1)
    k[1, 1](out)
    assert out[0] == float(np.float32(1 / 3))


# ---------------------------------------------------------------- compile-time arguments


@cuda.jit(device=True)
def _accumulate(ary, dtype, n, op):
    buf = cuda.local.array(n, dtype)
    for i in range(n):
        buf[i] = i
    s = dtype(0)
    for i in range(n):
        s += buf[i]
    op(ary, 0, s)


@cuda.jit
def _types_funcs_literals(a32, a64):
    _accumulate(a32, uint32, 32, cuda.atomic.add)
    _accumulate(a64, float64, 5, cuda.atomic.max)


def test_types_functions_and_int_literals_as_device_function_arguments():
    a32 = np.zeros(1, np.uint32)
    a64 = np.zeros(1, np.float64)
    _types_funcs_literals[1, 8](a32, a64)
    assert a32[0] == 8 * sum(range(32)) and a64[0] == sum(range(5))


@cuda.jit(device=True)
def _apply(f, x, y):
    return f(x, y)


@cuda.jit(device=True)
def _sq_sum(x, y):
    return x * x + y * y


@cuda.jit
def _functions_as_values(out, x):
    out[0] = _apply(operator.add, x[0], x[1])
    out[1] = _apply(operator.mul, x[0], x[1])
    out[2] = _apply(max, x[0], x[1])
    out[3] = _apply(_sq_sum, x[0], x[1])
    out[4] = _apply(operator.truediv, x[0], x[1])


def test_functions_as_device_function_arguments():
    x = np.array([3.0, 4.0])
    out = np.zeros(5)
    _functions_as_values[1, 1](out, x)
    assert out.tolist() == [7.0, 12.0, 4.0, 25.0, 0.75]


def test_int_literal_parameter_reassigned_in_the_callee_stays_a_value():
    @cuda.jit(device=True)
    def countdown(n):
        s = 0
        while n > 0:
            s += n
            n -= 1
        return s

    @cuda.jit
    def k(out):
        out[0] = countdown(10)

    out = np.zeros(1, np.int64)
    k[1, 1](out)
    assert out[0] == 55


def test_operator_module_functions():
    @cuda.jit
    def k(out, x, i):
        out[0] = operator.sub(x[0], x[1])
        out[1] = operator.floordiv(x[0], x[1])
        out[2] = operator.mod(x[0], -x[1])
        out[3] = operator.pow(x[0], 2)
        out[4] = operator.neg(x[1])
        out[5] = operator.lt(x[0], x[1])
        out[6] = operator.xor(i[0], i[1])
        out[7] = operator.lshift(i[0], 3)
        out[8] = operator.invert(i[1])
        out[9] = operator.abs(-x[0])
        out[10] = operator.not_(i[0])
        out[11] = operator.eq(x[0], 7.5)
        out[12] = operator.getitem(x, 1) + operator.getitem((4.0, 5.0), 0)
        out[13] = operator.iadd(x[0], 1)

    out = np.zeros(14)
    x = np.array([7.5, 2.0])
    i = np.array([5, 12])
    k[1, 1](out, x, i)
    assert out.tolist() == [5.5, 3.0, 7.5 % -2.0, 56.25, -2.0, 0.0, 5 ^ 12, 40.0, ~12, 7.5, 0.0, 1.0, 6.0, 8.5]


# ---------------------------------------------------------------- @jit called from a kernel, recursion


@cuda.jit
def _plain_kernel(a, i, v):
    a[i] = v


def test_plain_jit_function_called_from_a_kernel():
    @cuda.jit
    def k(a):
        _plain_kernel(a, 1, 7.5)
        _plain_kernel(a, 2, 1)

    a = np.zeros(3)
    k[1, 1](a)
    assert a.tolist() == [0.0, 7.5, 1.0]
    # and it is still a kernel of its own
    _plain_kernel[1, 1](a, 0, 2.0)
    assert a[0] == 2.0


@cuda.jit("int64(int64)", device=True)
def _fib(n):
    if n < 2:
        return n
    return _fib(n - 1) + _fib(n - 2)


@cuda.jit
def _fibs(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = _fib(i)


def test_self_recursion_with_a_signature():
    out = np.zeros(20, np.int64)
    _fibs[1, 32](out)
    f = [0, 1]
    while len(f) < 20:
        f.append(f[-1] + f[-2])
    assert out.tolist() == f


def test_self_recursion_without_a_signature_is_inferred_from_the_base_case():
    # numba types the recursive call by the returns typed so far (numba-cuda test_recursion's fib3)
    @cuda.jit(device=True)
    def fact(n):
        if n <= 1:
            return 1
        return n * fact(n - 1)

    @cuda.jit(device=True)
    def fib(n):  # the recursive return first: typed on the pass after the base case's
        if n >= 2:
            return fib(n - 1) + fib(n - 2)
        return n

    @cuda.jit(device=True)
    def halves(x):  # int64 base case, float64 recursive result: the return type widens
        if x < 1:
            return x
        return halves(x // 2) + 0.5

    @cuda.jit
    def k(out, n):
        out[0] = fact(5)
        out[1] = fib(n)
        out[2] = halves(n)

    out = np.zeros(3)
    k[1, 1](out, 10)
    assert out.tolist() == [120.0, 55.0, 2.0]


def test_recursion_whose_returns_are_conditional_expressions():
    # numba finds the base case among a conditional expression's branches too
    @cuda.jit(device=True)
    def fact(n):
        return n * fact(n - 1) if n > 1 else 1

    @cuda.jit(device=True)
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    @cuda.jit(device=True)
    def steps(n):  # nested: the base case is the outer branch
        return 0 if n <= 0 else (steps(n - 1) + 2 if n % 2 else steps(n - 1) + 1)

    @cuda.jit
    def k(out, n):
        out[0] = fact(n)
        out[1] = fib(n + 5)
        out[2] = steps(n)

    def py_fib(n):
        return n if n < 2 else py_fib(n - 1) + py_fib(n - 2)

    for n in (0, 1, 7, 10):
        out = np.zeros(3, np.int64)
        k[1, 1](out, n)
        assert out.tolist() == [math.factorial(n), py_fib(n + 5), n + (n + 1) // 2]


def test_runaway_recursion_is_a_located_compile_error():
    @cuda.jit(device=True)
    def runaway(x):
        return runaway(x)

    @cuda.jit
    def k(out):
        out[0] = runaway(1)

    with pytest.raises(cuda.CompileError, match="cannot type infer runaway recursion") as e:
        k[1, 1](np.zeros(1, np.int64))
    assert e.value.line is not None and "return runaway(x)" in str(e.value)


def test_growing_recursive_return_is_a_compile_error():
    # numba-cuda test_recursion's make_growing_tuple_case (numba issue 4387)
    @cuda.jit(device=True)
    def make_list(n):
        if n <= 0:
            return None
        return (n, make_list(n - 1))

    @cuda.jit
    def k():
        make_list(100)

    with pytest.raises(cuda.CompileError, match="Return type of recursive function does not converge"):
        k[1, 1]()


def test_mutual_recursion_without_a_signature_is_a_located_compile_error():
    @cuda.jit(device=True)
    def is_even(n):
        if n == 0:
            return True
        return is_odd(n - 1)

    @cuda.jit(device=True)
    def is_odd(n):
        if n == 0:
            return False
        return is_even(n - 1)

    @cuda.jit
    def k(out):
        out[0] = is_even(4)

    with pytest.raises(cuda.CompileError, match="needs a signature") as e:
        k[1, 1](np.zeros(1, np.bool_))
    assert e.value.line is not None and "is_even(n - 1)" in str(e.value)


def test_tied_device_call_takes_the_first_signature_as_numba():
    # numba's typing resolves a tie between a device function's signatures (numba issue 8307)
    @cuda.jit(["float64(float32, float64)", "float64(float64, float32)"], device=True)
    def g(a, b):
        return a + b

    @cuda.jit
    def k(out):
        out[0] = g(0.1, 0.2)

    out = np.zeros(1)
    k[1, 1](out)
    assert out[0] == np.float64(np.float32(0.1)) + 0.2


# ---------------------------------------------------------------- amdgpu


def _ops(code, tmp_path):
    p = os.path.join(tmp_path, "k.hsaco")
    with open(p, "wb") as f:
        f.write(code)
    dis = subprocess.run(["llvm-objdump-22", "-d", p], capture_output=True, text=True, check=True).stdout
    return [ln.split()[0] for ln in dis.splitlines() if ln.startswith("\t")]


@pytest.mark.parametrize("arch", ARCHS)
def test_amdgpu_compile_time_arguments_and_recursion(arch, tmp_path):
    ck = cuda.compile(_types_funcs_literals, "void(uint32[::1], float64[::1])", arch=arch)
    ops = _ops(ck.code_object, tmp_path)
    assert any("atomic" in o and "add" in o for o in ops) or any("cmpswap" in o for o in ops)
    ck = cuda.compile(_functions_as_values, "void(float64[::1], float64[::1])", arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"
    ck = cuda.compile(_fibs, "void(int64[::1])", arch=arch)
    ops = _ops(ck.code_object, tmp_path)
    # a real recursive call: a call instruction and a dynamic call stack
    assert "s_swappc_b64" in ops or "s_swap_pc_i64" in ops
    assert ck.metadata[".uses_dynamic_stack"] is True


@cuda.jit(device=True)
def _fill_local(out, n):
    buf = cuda.local.array(n, cuda.int32)  # n must be known at compile time
    for i in range(n):
        buf[i] = i * i
    s = 0
    for i in range(n):
        s += buf[i]
    out[0] = s


@cuda.jit(device=True)
def _pass_on(out, n):
    _fill_local(out, n)


def test_int_literals_become_compile_time_values_only_when_needed():
    @cuda.jit(device=True)
    def scale(x, k):
        return x * k

    @cuda.jit
    def k(out):
        _pass_on(out, 6)  # the literal travels through a device function that passes it on
        out[1] = scale(2.5, 3) + scale(1.5, 3)

    out = np.zeros(2, np.int64)
    k[1, 1](out)
    assert out.tolist() == [sum(i * i for i in range(6)), 12]
    # scale(x, 3) was not specialised to the value 3: one overload for both calls
    from pykern.frontend import compile_ir

    names = list(compile_ir(k.py_func, [cuda.int64[::1]]).functions)
    assert [n for n in names if n.startswith("scale")] == ["scale__f64_i64"]
    assert any(n.startswith("_fill_local") and n.endswith("__s6") for n in names)


def test_non_constant_where_a_constant_is_needed_stays_a_located_error():
    @cuda.jit
    def k(out, n):
        _fill_local(out, n)

    with pytest.raises(cuda.CompileError, match="compile-time constant") as e:
        k[1, 1](np.zeros(1, np.int64), 4)
    assert e.value.line is not None


@cuda.jit("boolean(int64)", device=True)
def _even(n):
    if n == 0:
        return True
    return _odd(n - 1)


@cuda.jit("boolean(int64)", device=True)
def _odd(n):
    if n == 0:
        return False
    return _even(n - 1)


def test_mutual_recursion_with_signatures():
    @cuda.jit
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = _even(i)

    out = np.zeros(9, np.bool_)
    k[1, 16](out)
    assert out.tolist() == [i % 2 == 0 for i in range(9)]


def test_recursion_under_debug_inlining_is_a_located_compile_error():
    @cuda.jit(debug=True, cache=False)
    def k(out):
        out[0] = _fib(5)

    with pytest.raises(cuda.CompileError, match="cannot be inlined") as e:
        k[1, 1](np.zeros(1, np.int64))
    assert e.value.line is not None


@cuda.jit(device=True)
def _atomic_binary_1dim_shared(ary, idx, op2, ary_dtype, ary_nelements, binop_func, neg_idx):
    # the shape of numba-cuda's own atomics tests: dtype, size and operation are compile-time arguments
    tid = cuda.threadIdx.x
    sm = cuda.shared.array(ary_nelements, ary_dtype)
    sm[tid] = ary[tid]
    cuda.syncthreads()
    bin = idx[tid] % ary_nelements
    if neg_idx:
        bin = bin - ary_nelements
    binop_func(sm, bin, op2)
    cuda.syncthreads()
    ary[tid] = sm[tid]


@cuda.jit
def _shared_atomic_add_u32(ary, idx):
    _atomic_binary_1dim_shared(ary, idx, 1, uint32, 32, cuda.atomic.add, False)


@cuda.jit
def _shared_atomic_add_f64(ary, idx):
    _atomic_binary_1dim_shared(ary, idx, 1.0, float64, 32, cuda.atomic.add, True)


def test_numba_cuda_style_atomic_helper_with_compile_time_arguments():
    rng = np.random.default_rng(3)
    orig = rng.integers(0, 32, 32).astype(np.uint32)
    idx = rng.integers(0, 64, 32).astype(np.int64)
    gold = orig.copy()
    for i in idx:
        gold[i % 32] += 1
    ary = orig.copy()
    _shared_atomic_add_u32[1, 32](ary, idx)
    np.testing.assert_array_equal(ary, gold)
    aryd = orig.astype(np.float64)
    _shared_atomic_add_f64[1, 32](aryd, idx)  # negative indices wrap, as in Python
    np.testing.assert_array_equal(aryd, gold.astype(np.float64))


@pytest.mark.parametrize("arch", ARCHS)
def test_amdgpu_numba_cuda_style_atomic_helper(arch, tmp_path):
    ck = cuda.compile(_shared_atomic_add_u32, "void(uint32[::1], int64[::1])", arch=arch)
    ops = _ops(ck.code_object, tmp_path)
    assert any(o.startswith("ds_add") for o in ops)  # the atomic on LDS
    assert ck.resources["lds_bytes"] == 32 * 4


def test_cache_key_follows_a_plain_jit_function_called_from_a_kernel():
    import linecache

    from pykern.frontend.fingerprint import fingerprint

    ns = {"cuda": cuda}
    src = "@cuda.jit\ndef callee(a):\n    a[0] = {v}\n\n@cuda.jit\ndef caller(a):\n    callee(a)\n"
    keys = []
    for v in (1, 2):
        code = compile(src.format(v=v), f"<lang-callee-{v}>", "exec")
        linecache.cache[f"<lang-callee-{v}>"] = (len(src), None, src.format(v=v).splitlines(True), f"<lang-callee-{v}>")
        exec(code, ns)
        keys.append(fingerprint(ns["caller"])["callees"])
    assert keys[0] != keys[1]  # the callee's source is part of the caller's key


class _NumbaLikeDispatcher:
    """Stands for a ``numba.njit`` dispatcher (numba is optional here): a
    ``py_func`` and a type from a ``numba`` module."""

    def __init__(self, f):
        self.py_func = f


_NumbaLikeDispatcher.__module__ = "numba.core.registry"


def _njit_helper(x, y):
    return x * y + 1


def test_numba_njit_functions_can_be_called_from_kernels():
    helper = _NumbaLikeDispatcher(_njit_helper)

    @cuda.jit(cache=False)
    def k(out, x):
        out[0] = helper(x[0], 3)

    out = np.zeros(1)
    k[1, 1](out, np.array([2.5]))
    assert out[0] == 8.5
    try:
        import numba
    except ImportError:
        return
    real = numba.njit(_njit_helper)

    @cuda.jit(cache=False)
    def k2(out, x):
        out[0] = real(x[0], 4)

    k2[1, 1](out, np.array([2.5]))
    assert out[0] == 11.0


# ---------------------------------------------------------------- *args of device functions


@cuda.jit(device=True)
def _count(*args):
    return len(args)


@cuda.jit(device=True)
def _apply(func, *args):
    return func(*args)


@cuda.jit(device=True)
def _add3(a, b, c):
    return a + b + c


@cuda.jit(device=True)
def _first_or(default, *rest):
    if len(rest) > 0:
        return rest[0]
    return default


@cuda.jit(device=True)
def _total(*args):
    s = 0.0
    for a in cuda.literal_unroll(args):
        s += a
    return s


def test_star_args_of_device_functions_are_a_tuple_as_numba():
    @cuda.jit
    def k(r, x):
        r[0] = _count()
        r[1] = _count(1, 2.0, x[0])
        r[2] = _apply(_add3, 1, 2, x[0])  # numba-cuda's consumer(func, *args)
        r[3] = _first_or(7.0)
        r[4] = _first_or(7.0, 9.0, 1.0)
        r[5] = _total(1, 2.5, np.int32(3))
        t = (1, 2, 3)
        r[6] = _apply(_add3, *t)

    r = np.zeros(7)
    k[1, 1](r, np.array([4.0]))
    assert r.tolist() == [0.0, 3.0, 7.0, 7.0, 9.0, 6.5, 6.0]


def test_star_args_of_a_kernel_are_a_located_compile_error():
    @cuda.jit
    def k(*arrays):
        arrays[0][0] = 1.0

    with pytest.raises(cuda.CompileError, match=r"kernel cannot have \*args") as e:
        k[1, 1](np.zeros(1))
    assert e.value.line is not None


# ---------------------------------------------------------------- nested functions and lambdas

_G = 123


@cuda.jit(device=True)
def _consumer(func, *args):
    return func(*args)


@cuda.jit(device=True)
def _consumer2(func1, func2):
    return func2(func1)


def test_nested_defs_called_and_passed_on_as_numba():
    @cuda.jit
    def k(out, x):
        y = 10  # a constant local: frozen into the nested functions

        def callinner(z):
            return y + z + _G

        def inner():
            return 10

        def innerinner(f):
            return f()

        def add(z):  # reads a run-time local: passed by the call
            return x[0] + z

        def kw(a, b, c, d1=123, d2=456):
            return d1 + d2 + 4 + y + a + b + c

        out[0] = _consumer(callinner, 6)
        out[1] = _consumer2(inner, innerinner)
        out[2] = add(1) + add(2)
        out[3] = _consumer(lambda v: v * 2, 360)
        out[4] = kw(1, 2, 5, 91, 53) + _consumer(kw, 1, 2, 3, 73) + _consumer(kw, 1, 2, 3) + kw(1, 2, 4)

    out = np.zeros(5, np.int64)
    k[1, 1](out, np.array([5], np.int64))

    def kw(a, b, c, d1=123, d2=456):
        return d1 + d2 + 4 + 10 + a + b + c

    assert out.tolist() == [139, 10, 13, 720, kw(1, 2, 5, 91, 53) + kw(1, 2, 3, 73) + kw(1, 2, 3) + kw(1, 2, 4)]


def test_lambdas_in_kernels():
    @cuda.jit
    def k(out, x):
        sq = lambda v: v * v  # noqa: E731
        scale = x[0]
        mul = lambda v: v * scale  # noqa: E731
        out[0] = sq(x[0])
        out[1] = _consumer(lambda v: v + 1.5, x[0])
        out[2] = mul(3.0)

    out = np.zeros(3)
    k[1, 1](out, np.array([4.0]))
    assert out.tolist() == [16.0, 5.5, 12.0]


def test_nested_functions_inside_nested_functions_bind_their_own_names():
    @cuda.jit
    def k(out, xs):
        def outer_fn(v):
            def sq(x):  # its x, not the kernel's x (assigned later)
                return x * x
            return sq(v) + 1

        f = lambda q: (lambda x: x + q)(1)  # noqa: E731
        out[0] = outer_fn(3.0)
        out[1] = f(2.0)
        x = xs[0]
        out[2] = x

    out = np.zeros(3)
    k[1, 1](out, np.array([7.0]))
    assert out.tolist() == [10.0, 3.0, 7.0]


def test_a_nested_function_passed_on_cannot_read_run_time_locals():
    @cuda.jit
    def k(out, x):
        def add(z):
            return x[0] + z

        out[0] = _consumer(add, 1)

    with pytest.raises(cuda.CompileError, match="Cannot capture the non-constant value associated with 'x'"):
        k[1, 1](np.zeros(1), np.zeros(1))


@cuda.jit
def _upper(s, out):
    i = cuda.grid(1)
    if i < s.size:
        c = s[i]
        if c >= ord('a') and c <= ord('z'):
            c = c - (ord('a') - ord('A'))
        out[i] = c


def test_ord_of_a_character_constant_gives_its_code():
    text = np.frombuffer(b"Hello, numba on amd {z}", dtype=np.uint8)
    out = np.zeros_like(text)
    _upper[1, 64](text, out)
    assert out.tobytes() == b"HELLO, NUMBA ON AMD {Z}"


def test_ord_is_an_int64_as_numba_types_it():
    @cuda.jit
    def k(out):
        out[0] = ord('\u20ac') * 2**40  # would wrap in 32 bits

    out = np.zeros(1, np.int64)
    k[1, 1](out)
    assert out[0] == 0x20AC * 2**40


def test_ord_of_more_than_one_character_is_a_compile_error():
    @cuda.jit
    def k(out):
        out[0] = ord('ab')

    with pytest.raises(cuda.CompileError, match="one-character string"):
        k[1, 1](np.zeros(1, np.int64))


def tensor_map(fn):
    def _map(out, inp, n):
        i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if i < n:
            out[i] = fn(inp[i])
    return cuda.jit()(_map)


def test_lambda_device_functions():
    neg, sq = cuda.jit(device=True)(lambda x: -x * 2.0), cuda.jit(device=True)(lambda y: y * y)
    a = np.arange(5.0)
    for fn, ref in ((neg, -2.0 * a), (sq, a * a)):
        out = np.zeros(5)
        tensor_map(fn)[1, 8](out, a, 5)
        np.testing.assert_array_equal(out, ref)


def test_lambdas_that_cannot_be_told_apart():
    f, g = cuda.jit(device=True)(lambda x: x + 1.0), cuda.jit(device=True)(lambda x: x + 2.0)
    out = np.zeros(1)
    with pytest.raises(CompileError, match="told apart"):
        tensor_map(g)[1, 1](out, np.zeros(1), 1)
    assert f is not g


def test_declared_any_layout_arrays_take_contiguous_and_shared_ones():
    """``@cuda.jit(void(float64[:], ...), device=True)`` called with C-contiguous, strided and
    shared arrays (numba passes each as is); unpacking the limits and a slice, as a neutron-optics
    code on GitHub does."""
    from pykern import float64, int64, void

    @cuda.jit(void(float64[:], float64[:], int64, float64[:, :, :]), device=True)
    def propagate(neutron, limits, n, out):
        xmin, xmax, maxdiv = limits
        vx, vy, vz = neutron[3:6]
        if vx <= xmin or vx >= xmax:
            return
        cuda.atomic.add(out, (0, 0, 0), n)
        cuda.atomic.add(out, (1, 0, 0), vy * vz + neutron[-2] * 0.0 + maxdiv * 0.0)

    @cuda.jit
    def k(nb, lim, out):
        sh = cuda.shared.array(3, cuda.float64)
        if cuda.threadIdx.x == 0:
            for j in range(3):
                sh[j] = lim[j]
        cuda.syncthreads()
        propagate(nb[cuda.threadIdx.x], sh, 1, out)  # a row view and a shared array

    nb = np.tile(np.array([0, 0, 0, 0.5, 2.0, 3.0, 9.0, 1.0]), (4, 1))
    out = np.zeros((2, 1, 1))
    k[1, 4](nb, np.array([0.0, 1.0, 45.0]), out)
    assert out[0, 0, 0] == 4 and out[1, 0, 0] == 24
