"""The sanitizer leaves unchecked only what cannot race or be unwritten: array parameters the
kernel never writes, and ones each thread touches only at its own grid index
(``codegen/lowering/sanitize_elision.py``, decided for each launch by
``runtime/cpu/sanitizer.elision``). Each racy kernel here looks elidable at first sight and
must still be reported; each clean one must be left unchecked (``last_launch["unchecked"]``)."""

import warnings

import numpy as np
import pytest

import pykern as cuda
from pykern.codegen.lowering.sanitize_elision import elidable
from pykern.runtime.cpu import sanitizer
from test_sanitizer import line_of  # tests/codegen/cpu/test_sanitizer.py

pytestmark = pytest.mark.usefixtures("cpu_uncached")


def reports(kernel, grid, block, *args):
    """(kind, element) of each hazard the launch reports."""
    try:
        kernel[grid, block](*args)
    except cuda.SanitizerError as e:
        return sorted((h.kind, h.where) for h in e.reports)
    return []


@cuda.jit(sanitize="race,init")
def shift_copy(src, dst):
    i = cuda.grid(1)
    if i < dst.size:
        dst[i] = src[i] + 1


def test_disjoint_arguments_go_unchecked_and_compute_the_same():
    src = np.arange(64, dtype=np.float32)
    dst = np.zeros(64, np.float32)
    assert reports(shift_copy, 1, 64, src, dst) == []
    assert sanitizer.last_launch["unchecked"] == ["dst", "src"]
    np.testing.assert_array_equal(dst, src + 1)


def test_a_read_only_array_that_overlaps_the_written_one_is_checked():
    # thread i writes buf[i]; thread i - 1 reads buf[i] through src in the same interval
    buf = np.zeros(65, np.float32)
    got = reports(shift_copy, 1, 64, buf[1:], buf[:-1])
    assert sanitizer.last_launch["unchecked"] == []
    assert ("race", "array 'src' element [0]") in got or ("race", "array 'dst' element [1]") in got, got


def test_the_same_array_passed_twice_is_checked():
    buf = np.zeros(64, np.float32)
    assert reports(shift_copy, 1, 64, buf, buf) == []  # each thread reads and writes only its own element
    assert sanitizer.last_launch["unchecked"] == []


@cuda.jit(device=True)
def put(a, i, v):
    a[i] = v


@cuda.jit(sanitize="race")
def write_through_device_function(a, out):
    i = cuda.grid(1)
    put(a, 0, np.float32(i))  # every thread writes a[0]
    out[i] = a[1]


def test_an_array_written_only_in_a_device_function_is_checked():
    a, out = np.zeros(2, np.float32), np.zeros(32, np.float32)
    got = reports(write_through_device_function, 1, 32, a, out)
    assert [k for k, w in got] == ["race"] and got[0][1] == "array 'a' element [0]", got
    assert sanitizer.last_launch["unchecked"] == ["out"]


@cuda.jit(sanitize="init")
def copy_in(src, out):
    i = cuda.grid(1)
    out[i] = src[i]


@cuda.jit(sanitize="init")
def fill(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = i


def test_a_device_array_read_before_any_write_is_reported(monkeypatch):
    monkeypatch.setenv("PYKERN_SANITIZE", "init")  # device arrays remember their unwritten bytes
    src = cuda.device_array(32, np.float32)
    out = np.zeros(32, np.float32)
    got = reports(copy_in, 1, 32, src, out)
    assert got == [("uninitialized", "array 'src' element [0]")], got
    assert "src" not in sanitizer.last_launch["unchecked"]


def test_a_half_written_device_array_is_checked_until_all_of_it_is_written(monkeypatch):
    monkeypatch.setenv("PYKERN_SANITIZE", "init")
    src = cuda.device_array(32, np.float32)
    fill[1, 32](src[:16])
    out = np.zeros(32, np.float32)
    got = reports(copy_in, 1, 32, src, out)
    assert got == [("uninitialized", "array 'src' element [16]")], got
    fill[1, 32](src[16:])  # the second half: now every byte is written
    assert reports(copy_in, 1, 32, src, out) == []
    assert sanitizer.last_launch["unchecked"] == ["out", "src"]


@cuda.jit(sanitize="race")
def neighbour(a):
    i = cuda.grid(1)
    if i + 1 < a.size:
        a[i] = a[i + 1]  # RACE: thread i + 1 writes a[i + 1]


def test_an_own_index_array_read_at_the_neighbours_index_is_checked():
    got = reports(neighbour, 1, 32, np.arange(32, dtype=np.float32))
    assert got == [("race", "array 'a' element [1]")], got
    assert sanitizer.last_launch["unchecked"] == []


@cuda.jit(sanitize="race")
def own(a):
    i = cuda.grid(1)
    a[i] = cuda.threadIdx.y


def test_own_index_is_own_only_when_the_other_axes_have_one_thread():
    a = np.zeros(32, np.int64)
    assert reports(own, 1, 32, a) == []
    assert sanitizer.last_launch["unchecked"] == ["a"]
    got = reports(own, 1, (32, 2), a)  # threads (x, 0) and (x, 1) share cuda.grid(1)
    assert got == [("race", "array 'a' element [0]")], got
    assert sanitizer.last_launch["unchecked"] == []


def test_own_index_on_an_array_whose_elements_overlap_is_checked():
    buf = np.zeros(1, np.int64)
    a = np.lib.stride_tricks.as_strided(buf, shape=(32,), strides=(0,))
    got = reports(own, 1, 32, a)
    assert [k for k, _ in got] == ["race"], got
    assert sanitizer.last_launch["unchecked"] == []


@cuda.jit(sanitize="race")
def both_orders(c):
    x, y = cuda.grid(2)
    c[y, x] = 1
    c[x, y] = 2  # RACE: thread (y, x) wrote c[x, y] above


def test_an_own_index_array_indexed_in_two_orders_is_checked():
    got = reports(both_orders, 1, (4, 4), np.zeros((4, 4), np.int32))
    assert got and {k for k, _ in got} == {"race"}, got
    assert sanitizer.last_launch["unchecked"] == []


@cuda.jit(sanitize="race")
def transposed(c):
    x, y = cuda.grid(2)
    c[y, x] = x


def test_transposed_grid_index_is_own():
    c = np.zeros((8, 4), np.int64)
    assert reports(transposed, (1, 2), (4, 4), c) == []
    assert sanitizer.last_launch["unchecked"] == ["c"]
    np.testing.assert_array_equal(c, np.tile(np.arange(4), (8, 1)))


@cuda.jit(sanitize="race")
def shift_copy_unguarded(src, dst):
    i = cuda.grid(1)
    v = src[i % 32]
    dst[i] = v  # OOB


def test_an_out_of_bounds_write_into_unchecked_memory_is_reported():
    # src and dst are disjoint, so both go unchecked; but threads 32..63 write past dst's end,
    # into src, whose reads nobody recorded: each such write is reported
    buf = np.zeros(64, np.float32)
    try:
        shift_copy_unguarded[1, 64](buf[32:], buf[:32])
    except cuda.SanitizerError as e:
        got = e.reports
    assert sanitizer.last_launch["unchecked"] == ["dst", "src"]
    line = line_of(shift_copy_unguarded, "OOB")
    assert [(h.kind, h.where, h.second.kind, h.second.line, h.second.thread, h.count) for h in got] == [
        ("out-of-bounds", "array 'src' element [0]", "write", line, (32, 0, 0), 32)]
    assert "did not check the accesses of array 'src'" in got[0].text


def test_the_compiler_elides_only_what_the_body_proves():
    from pykern.frontend import ir, types as T

    f32 = T.Array(T.float32, 1, "C")
    i64 = T.int64

    def gx(n, axis=0):
        return ir.Cast(ir.Intrinsic(n, [], T.int32, {"axis": axis}), i64)

    grid = ir.BinOp("+", ir.BinOp("*", gx("block_idx"), gx("block_dim"), i64), gx("thread_idx"), i64)
    i, j, k = ir.Var("i", i64), ir.Var("j", i64), ir.Var("k", i64)
    v = {n: ir.Var(n, f32) for n in "abcdefgh"}
    one = ir.Const(1.0, T.float32)
    body = [
        ir.Store(v["g"], [k], one),  # k read before it holds the grid index
        ir.Assign("i", grid),
        ir.Assign("k", grid),
        ir.Assign("j", i), ir.Assign("j", ir.BinOp("+", j, ir.Const(0, i64), i64)),  # j: two values
        ir.Store(v["a"], [j], one),
        ir.ExprStmt(ir.Atomic("add", v["b"], [i], [one], T.float32)),
        ir.Store(v["c"], [i], ir.Load(v["d"], [i], T.float32)),
        ir.ExprStmt(ir.Call("dev", [v["e"]], T.void)),  # passed on: may be written there
        ir.Store(v["f"], [gx("thread_idx")], one),  # unique in a block only
        ir.Assign("h", v["d"]),  # an alias of d... and h reassigned
    ]
    fn = ir.Function("k", [ir.Param(n, f32) for n in "abcdefgh"], T.void, body,
                     {**{n: f32 for n in "abcdefgh"}, "i": i64, "j": i64, "k": i64}, True)
    assert elidable(fn) == {"c": ("own", (0,))}


with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the notice that kernels run on the cpu target
    CAPTURED = cuda.to_device(np.zeros(64, np.float32))


@cuda.jit(sanitize="race")
def write_captured(src, out):
    i = cuda.grid(1)
    if i + 1 < 64:
        CAPTURED[i + 1] = 1  # a device array the kernel names as a global
    out[i] = src[i]


def test_a_read_only_argument_that_is_a_written_global_is_checked():
    out = np.zeros(64, np.float32)
    got = reports(write_captured, 1, 64, CAPTURED, out)
    assert sanitizer.last_launch["unchecked"] == ["out"]
    assert [k for k, _ in got] == ["race"], got
    assert reports(write_captured, 1, 64, np.zeros(64, np.float32), out) == []
    assert sanitizer.last_launch["unchecked"] == ["out", "src"]
