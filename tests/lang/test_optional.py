"""numba's Optional return values: a device function returning None on some paths and a
number on others (numba-examples' histogram ``compute_bin``). ``r is None`` tells them apart;
a None read as a number is numba's TypeError, which stops the thread."""

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_uncached")


@cuda.jit(device=True)
def bin_of(x, n, lo, hi):
    if x == hi:
        return n - 1
    b = np.int32(n * (x - lo) / (hi - lo))
    if b < 0 or b >= n:
        return None
    else:
        return b


@cuda.jit(device=True)
def none_first(x):
    if x < 0:
        return None
    return x * 2.5


@cuda.jit(device=True)
def falls_off(x):
    if x > 0:
        return x + 1


@cuda.jit(device=True)
def passes_on(x):
    return none_first(x)


@cuda.jit
def optional_uses(xs, present, values, truth, passed):
    i = cuda.grid(1)
    if i < xs.size:
        r = none_first(xs[i])
        present[i] = r is not None
        if r is None:
            values[i] = -1.0
        else:
            values[i] = r + 1.0  # read as its number
        truth[i] = 1 if falls_off(xs[i]) else 0  # None is false, else the number's truth
        p = passes_on(xs[i])
        passed[i] = 0 if p is None else 1


def test_optional_is_none_and_values():
    xs = np.array([-2.0, 0.0, 3.0, -0.5, 4.0])
    present = np.zeros(5, np.bool_)
    values = np.zeros(5)
    truth = np.zeros(5, np.int64)
    passed = np.zeros(5, np.int64)
    optional_uses[1, 8](xs, present, values, truth, passed)
    np.testing.assert_array_equal(present, xs >= 0)
    np.testing.assert_array_equal(values, np.where(xs >= 0, xs * 2.5 + 1, -1.0))
    np.testing.assert_array_equal(truth, (xs > 0).astype(np.int64))
    np.testing.assert_array_equal(passed, (xs >= 0).astype(np.int64))


@cuda.jit
def histogram(x, lo, hi, out):
    start = cuda.grid(1)
    for i in range(start, x.shape[0], cuda.gridsize(1)):
        b = bin_of(x[i], out.shape[0], lo, hi)
        if b >= 0 and b < out.shape[0]:  # a None here stops the thread (numba's TypeError)
            cuda.atomic.add(out, b, 1)


def test_histogram_with_optional_bins():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(3000)
    out = np.zeros(16, np.int32)
    histogram[4, 64](x, x.min(), x.max(), out)
    np.testing.assert_array_equal(out, np.histogram(x, 16)[0])


@cuda.jit
def none_as_number(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = 7.0
        out[i] = none_first(x[i]) + 1.0


def test_none_read_as_a_number_stops_the_thread():
    x = np.array([1.0, -1.0, 2.0])
    out = np.zeros(3)
    none_as_number[1, 4](x, out)
    np.testing.assert_array_equal(out, [3.5, 7.0, 6.0])  # thread 1 stopped before its store


def test_none_read_as_a_number_raises_type_error_under_debug():
    k = cuda.jit(debug=True)(none_as_number.py_func)
    with pytest.raises(TypeError, match="expected float64, got None"):
        k[1, 4](np.array([1.0, -1.0]), np.zeros(2))


@cuda.jit(device=True)
def first_or_flag(t):
    return t[0] if t[1] else -1.0


@cuda.jit(device=True)
def unwrap_or(r, default):
    if r is None:
        return default
    return r


@cuda.jit
def same_shape_types(x, out):
    # an optional float64 and a plain (float64, bool) tuple specialise the callees apart
    out[0] = unwrap_or(none_first(x[0]), 5.0)
    out[1] = first_or_flag((x[0], x[0] > 0))
    out[2] = unwrap_or(none_first(-x[0]), 5.0)


def test_optional_and_plain_tuple_specialise_apart():
    out = np.zeros(3)
    same_shape_types[1, 1](np.array([4.0]), out)
    np.testing.assert_array_equal(out, [10.0, 4.0, 5.0])


@cuda.jit(device=True)
def step3(x):
    if x > 10:
        return None
    return x + 3


@cuda.jit
def optional_in_while_tests(out):
    x = 0
    n = 0
    while step3(x) is not None:  # re-tested every iteration
        x = x + 3
        n += 1
    else:
        out[3] = 1  # the test's own exit is no break: the else runs
    out[0] = x
    out[1] = n
    m = 0
    while step3(m * 3) < 100:  # None once m * 3 > 10: the thread stops there (numba's TypeError)
        m += 1
        out[2] = m


def test_optional_in_a_while_test_is_checked_every_iteration():
    out = np.zeros(4, np.int64)
    optional_in_while_tests[1, 1](out)
    np.testing.assert_array_equal(out, [12, 4, 4, 1])


# ---- falling off the end: Python's implicit `return None` (numba's Optional, as `return None`)

@cuda.jit(device=True)
def find(a, v):
    for j in range(a.size):
        if a[j] == v:
            return j


@cuda.jit(device=True)
def positive_or_fall(x):
    if x > 0:
        return x


@cuda.jit(device=True)
def loops_until_return(x):
    while True:  # no break: the end is never reached, so the result is a plain number
        if x > 3:
            return x
        x += 1


@cuda.jit(device=True)
def returns_or_raises(x):
    if x >= 0:
        return x * 2
    raise ValueError("negative")


@cuda.jit
def fall_off_uses(a, vs, idx, other, plain):
    i = cuda.grid(1)
    if i < vs.size:
        r = find(a, vs[i])
        idx[i] = -1 if r is None else r  # the untaken branch is not unwrapped
        other[i] = positive_or_fall(vs[i]) if vs[i] > 0 else -7
        plain[i] = loops_until_return(vs[i]) + returns_or_raises(abs(vs[i]))


def _expected_fall_off(a, vs):
    idx = [next((j for j in range(a.size) if a[j] == v), -1) for v in vs]
    other = [v if v > 0 else -7 for v in vs]
    plain = [max(v, 4) + 2 * abs(v) for v in vs]
    return idx, other, plain


def test_falling_off_the_end_returns_none():
    a = np.array([5, 3, 9, 3, 0], np.int64)
    vs = np.array([3, 4, 0, 9, -2, 5], np.int64)
    idx, other, plain = (np.zeros(6, np.int64) for _ in range(3))
    fall_off_uses[1, 8](a, vs, idx, other, plain)
    want = _expected_fall_off(a, vs)
    np.testing.assert_array_equal(idx, want[0])
    np.testing.assert_array_equal(other, want[1])
    np.testing.assert_array_equal(plain, want[2])


def test_return_types_of_falling_off():
    from pykern.frontend import compile_ir
    from pykern.frontend import types as T
    m = compile_ir(fall_off_uses.py_func, [T.Array(T.int64, 1, "C")] * 5)
    ret = {f.pyname: f.return_type for f in m.functions.values() if not f.is_kernel}
    assert ret == {"find": T.optional(T.int64), "positive_or_fall": T.optional(T.int64),
                   "loops_until_return": T.int64, "returns_or_raises": T.int64}


@cuda.jit
def none_read_after_fall(vs, out):
    i = cuda.grid(1)
    if i < vs.size:
        out[i] = 7
        out[i] = positive_or_fall(vs[i]) * 2  # None: numba's TypeError stops the thread


def test_none_from_falling_off_read_as_a_number_stops_the_thread():
    vs = np.array([2, -1, 3], np.int64)
    out = np.zeros(3, np.int64)
    none_read_after_fall[1, 4](vs, out)
    np.testing.assert_array_equal(out, [4, 7, 6])
    k = cuda.jit(debug=True)(none_read_after_fall.py_func)
    with pytest.raises(TypeError, match="expected int64, got None"):
        k[1, 4](vs, np.zeros(3, np.int64))


def test_kernel_falling_off_is_unaffected():
    @cuda.jit
    def k(out):
        if out[0] > 0:
            return
        out[0] = 5

    out = np.zeros(1, np.int64)
    k[1, 1](out)
    assert out[0] == 5


def pair_or_fall(x):
    if x > 0:
        return (x, x)


def test_falling_off_a_tuple_return_is_a_compile_error():
    # numba: an Optional tuple, which pykern has not (a `r is None` of a tuple would fold to False)
    from pykern.core.errors import CompileError
    f = cuda.jit(device=True)(pair_or_fall)

    @cuda.jit
    def k(out):
        f(out[0])

    with pytest.raises(CompileError, match="'pair_or_fall' returns a UniTuple.* can end here without returning"):
        k[1, 1](np.ones(2, np.int64))


@cuda.jit("int64(int64)", device=True)
def declared_fall(x):
    if x > 0:
        return x * 3
    x = 2


@cuda.jit
def calls_declared(xs, out):
    i = cuda.grid(1)
    if i < xs.size:
        out[i] = -7
        out[i] = declared_fall(xs[i])


def test_falling_off_a_declared_return_type_is_numbas_type_error():
    # numba converts the implicit None to the declared int64 at the return: TypeError at run time
    xs = np.array([2, -1, 5], np.int64)
    out = np.zeros(3, np.int64)
    calls_declared[1, 4](xs, out)
    np.testing.assert_array_equal(out, [6, -7, 15])  # the None thread stopped before its store
    k = cuda.jit(debug=True)(calls_declared.py_func)
    with pytest.raises(TypeError, match="expected int64, got None"):
        k[1, 4](xs, np.zeros(3, np.int64))


@pytest.mark.parametrize("arch", ["gfx90a", "gfx1100"])
def test_amdgpu_compiles_falling_off(arch, tmp_path):
    from types_helpers import HAVE_LLVM_TOOLS, amdgpu_compile
    from pykern.frontend import types as T
    if not HAVE_LLVM_TOOLS:
        pytest.skip("llvm tools not installed")
    amdgpu_compile(fall_off_uses, [T.Array(T.int64, 1, "C")] * 5, arch, tmp_path)


@cuda.jit
def optional_variables(a, vs, o1, o2, o3, o4):
    i = cuda.grid(1)
    if i < vs.size:
        r = find(a, vs[i])
        if r is None:
            r = -1  # a number assigned to an optional variable: present (numba's unify)
        o1[i] = r
        s = 100
        if vs[i] > 2:
            s = find(a, vs[i])  # a number first, an optional at the join
        o2[i] = -5 if s is None else s
        t = find(a, vs[i])
        t += 1  # its number plus one (a None: numba's TypeError stops the thread)
        o3[i] = t
        w = find(a, vs[i])
        w = 2.5  # a float widens the optional to OptionalType(float64)
        o4[i] = w


def test_optional_variables_take_numbers():
    a, vs = np.array([5, 3, 9], np.int64), np.array([3, 4, 9, 1, 5], np.int64)
    o1, o2, o3 = (np.full(5, 77, np.int64) for _ in range(3))
    o4 = np.zeros(5)
    optional_variables[1, 8](a, vs, o1, o2, o3, o4)
    found = [next((j for j in range(a.size) if a[j] == v), None) for v in vs]
    np.testing.assert_array_equal(o1, [-1 if f is None else f for f in found])
    np.testing.assert_array_equal(o2, [100 if v <= 2 else -5 if f is None else f for v, f in zip(vs, found)])
    np.testing.assert_array_equal(o3, [77 if f is None else f + 1 for f in found])  # None: stopped before
    np.testing.assert_array_equal(o4, [0.0 if f is None else 2.5 for f in found])


def test_optional_ifexp_whose_branch_needs_statements():
    """``r + 1 if r is not None else None`` is an optional (numba's join) and its ``r + 1``
    unwraps ``r`` on the taken path only; an optional assigned from a conditional keeps None."""
    @cuda.jit(device=True)
    def find(a, v):
        for i in range(a.size):
            if a[i] == v:
                return i
        return None

    @cuda.jit(device=True)
    def after(a, v):
        r = find(a, v)
        return r + 1 if r is not None else None

    @cuda.jit
    def k(a, out):
        i = cuda.grid(1)
        if i < out.size:
            y = after(a, i) if i % 2 == 0 else -5
            out[i] = -1 if y is None else y

    a = np.array([3, 1, 4, 0, 7], dtype=np.int64)
    out = np.zeros(8, np.int64)
    k[1, 8](a, out)
    where = {int(x): j for j, x in enumerate(a)}
    expect = [(where[i] + 1 if i in where else -1) if i % 2 == 0 else -5 for i in range(8)]
    assert out.tolist() == expect


@cuda.jit(device=True)
def _maybe_double(x):
    if x < 0:
        return
    return x * 2.0


@cuda.jit
def _guarded(xs, out):
    i = cuda.threadIdx.x
    v = _maybe_double(xs[i])
    best = 5.0
    if v is not None and v < best:  # v < best is read only when v is not None
        out[i, 0] = 1
    out[i, 1] = 7 if v is None or v > 3 else 8
    out[i, 2] = v if v is not None else -1.0
    ok = xs[i] > -5 and v is not None and v < 100
    out[i, 3] = ok


def test_an_optional_read_behind_a_none_check_in_and_or_if_else_is_not_read_early():
    out = np.zeros((3, 4))
    _guarded[1, 3](np.array([1.0, -1.0, 4.0]), out)
    assert out.tolist() == [[1, 8, 2, 1], [0, 7, -1, 0], [0, 7, 8, 1]]


@cuda.jit(device=True)
def _search(x):
    best_val = np.float32(0)
    found = False
    for k in range(3):
        v = _maybe_double(x - k)
        if v is not None and (not found or v < best_val):
            best_val = v  # a number here, an optional there: the variable is optional (numba's unify)
            found = True
    return found, best_val


@cuda.jit
def _use_search(xs, out):
    i = cuda.threadIdx.x
    found, val = _search(xs[i])
    out[i, 0] = found
    out[i, 1] = val
    out[i, 2] = val is None


def test_a_variable_assigned_an_optional_and_a_number_is_optional():
    out = np.zeros((3, 3))
    _use_search[1, 3](np.array([5.0, 1.0, -3.0]), out)
    assert out.tolist() == [[1, 6.0, 0], [1, 0.0, 0], [0, 0.0, 0]]
