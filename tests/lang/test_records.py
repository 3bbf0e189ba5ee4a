"""Record arrays (issue 12, item 3): numpy structured dtypes -- aligned and packed,
nested records, arrays inside records -- as kernel arguments, record references
(``r = a[i]; r.x += 1``), ``a[i].y``, ``a[i]['x']``, record scalars as kernel and
device-function arguments (by reference, as numba), ``pykern.from_dtype`` in
signatures and as the dtype of local/shared arrays; cpu results against numpy,
code objects for the amdgpu archs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pykern as cuda
from pykern.frontend import types as T
from pykern.frontend.typeof import typeof

from types_helpers import ARCHS, amdgpu_compile, needs_llvm_tools

pytestmark = pytest.mark.usefixtures("cpu_target")

INNER = np.dtype([("p", "u1"), ("q", "c8")], align=True)
ALIGNED = np.dtype([("x", "f4"), ("y", "i8"), ("a", "f8", (2, 3)), ("s", INNER), ("b", "?")], align=True)
PACKED = np.dtype([("c", "u1"), ("d", "f8"), ("e", "i4"), ("h", "f2")])  # itemsize 15, no padding


def same_fields(a, b):
    """Field by field (padding bytes are not compared: numpy's copy leaves them undefined)."""
    for name in a.dtype.names:
        x, y = a[name], b[name]
        if x.dtype.names:
            same_fields(x, y)
        else:
            np.testing.assert_array_equal(x, y, err_msg=name)


@cuda.jit
def update(arr, out):
    i = cuda.grid(1)
    if i < arr.size:
        r = arr[i]
        r.x += 1
        arr[i].y = arr[i].y * 2
        arr[i]["x"] += 0.5
        r.a[1, 2] = r.x
        r.s.p = 7
        r["s"].q = complex(r.x, 1.0)
        out[i] = r.a[0, 0] + r.s.q.real + r.b
        r.b = not r.b


def update_ref(a):
    a = a.copy()
    out = np.zeros(a.size)
    a["x"] += 1
    a["y"] *= 2
    a["x"] += np.float32(0.5)
    a["a"][:, 1, 2] = a["x"]
    a["s"]["p"] = 7
    a["s"]["q"] = a["x"].astype(np.float64) + 1j
    out[:] = a["a"][:, 0, 0] + a["s"]["q"].real + a["b"]
    a["b"] = ~a["b"]
    return a, out


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.floats(-1e6, 1e6, width=32), st.integers(-(2**40), 2**40), st.floats(width=64),
                          st.booleans()), min_size=1, max_size=70))
def test_aligned_nested_records_hypothesis(vals):
    a = np.zeros(len(vals), ALIGNED)
    a["x"] = [v[0] for v in vals]
    a["y"] = [v[1] for v in vals]
    a["a"][:, 0, 0] = [v[2] for v in vals]
    a["b"] = [v[3] for v in vals]
    want, want_out = update_ref(a)
    out = np.zeros(a.size)
    update[1, 128](a, out)
    same_fields(a, want)
    np.testing.assert_array_equal(out, want_out)


@cuda.jit
def packed_kernel(p, out):
    i = cuda.grid(1)
    if i < p.size:
        p[i].d *= 2
        p[i].c = i
        p[i]["h"] = p[i].h + 1
        out[i] = p[i].d + p[i].e


def test_packed_records_unaligned_fields():
    assert PACKED.itemsize == 15 and PACKED.alignment == 1
    p = np.zeros(5, PACKED)
    p["d"] = [1.5, np.nan, -0.0, np.inf, 3.25]
    p["e"] = [1, -2, 3, 2**31 - 1, -(2**31)]
    p["h"] = [0.5, 1, 2, 65504, -1]
    out = np.zeros(5)
    want = p.copy()
    want["d"] *= 2
    want["c"] = np.arange(5)
    with np.errstate(over="ignore"):
        want["h"] = want["h"] + np.float16(1)
    packed_kernel[1, 8](p, out)
    same_fields(p, want)
    np.testing.assert_array_equal(out, want["d"] + want["e"])


@cuda.jit(device=True)
def bump(r, k):
    r.x += k
    return r.y + r["s"].p


@cuda.jit
def by_reference(rec, arr, out):
    out[0] = bump(rec, 2)  # a record scalar argument, into a device function
    out[1] = bump(arr[1], 3)  # an element of a record array
    rec.y = 99


def test_record_scalar_arguments_by_reference():
    a = np.zeros(3, ALIGNED)
    a["x"] = [1, 2, 3]
    a["y"] = [10, 20, 30]
    a["s"]["p"] = [4, 5, 6]
    out = np.zeros(2)
    by_reference[1, 1](a[0], a, out)  # a[0] is numpy's view of the element: writes reach the array
    assert list(out) == [14, 25]
    assert list(a["x"]) == [3, 5, 3] and a["y"][0] == 99
    assert typeof(a[0]) == T.Array(T.from_dtype(ALIGNED), 0, "A")
    standalone = a[2].copy()
    by_reference[1, 1](standalone, a, out)
    assert standalone["y"] == 99 and standalone["x"] == 5 and a["y"][2] == 30


def test_from_dtype_signatures_and_record_local_arrays():
    rec = cuda.from_dtype(ALIGNED)
    assert isinstance(rec, T.Record) and rec.size == ALIGNED.itemsize and rec.np_dtype == ALIGNED
    assert cuda.from_dtype(np.float32) == T.float32

    @cuda.jit(cuda.void(rec[:], rec, cuda.float64[:]))
    def k(arr, r, out):
        tmp = cuda.local.array(2, rec)
        tmp[0].x = r.x
        tmp[1].y = arr[0].y
        sh = cuda.shared.array(4, ALIGNED)
        sh[cuda.threadIdx.x].s.q = 1j
        cuda.syncthreads()
        out[0] = tmp[0].x + tmp[1].y + sh[0].s.q.imag

    a = np.zeros(2, ALIGNED)
    a["x"] = [1.5, 2.5]
    a["y"] = [7, 8]
    out = np.zeros(1)
    k[1, 4](a, a[1], out)
    assert out[0] == 2.5 + 7 + 1


def test_record_errors_are_located():
    @cuda.jit
    def no_field(a):
        a[0].z = 1

    with pytest.raises(cuda.CompileError, match="no field 'z'") as ei:
        no_field[1, 1](np.zeros(2, ALIGNED))
    assert "test_types_records.py:" in str(ei.value)

    @cuda.jit
    def number_as_record(a):
        a[0].s = 1  # a record field takes a record (a[0].s = a[1].s copies it)

    with pytest.raises(cuda.CompileError, match="as a record"):
        number_as_record[1, 1](np.zeros(2, ALIGNED))

    @cuda.jit
    def packed_array_field(a):
        a[0].v[1] = 1  # no longer an error: an unaligned view (tests/programs/test_progs_records.py)

    a = np.zeros(2, np.dtype([("c", "u1"), ("v", "f8", (2,))]))
    packed_array_field[1, 1](a)
    assert a["v"].tolist() == [[0, 1], [0, 0]]


@cuda.jit
def record_memory_spaces(arr, out):
    t = cuda.threadIdx.x
    sh = cuda.shared.array(64, ALIGNED)
    loc = cuda.local.array(2, PACKED)
    sh[t].s.q = arr[t % arr.size].s.q * 2
    sh[t].a[1, 1] = 1.5
    loc[1].d = sh[t].a[1, 1] + t
    cuda.syncthreads()
    out[t] = sh[63 - t].s.q.real + loc[1].d


def test_records_in_shared_and_local_memory():
    a = np.zeros(64, ALIGNED)
    a["s"]["q"] = np.arange(64) + 0.5j
    out = np.zeros(64)
    record_memory_spaces[1, 64](a, out)
    np.testing.assert_array_equal(out, (63 - np.arange(64)) * 2.0 + 1.5 + np.arange(64))


@needs_llvm_tools
@pytest.mark.parametrize("arch", ARCHS)
def test_records_compile_for_amdgpu(arch, tmp_path):
    art, ops = amdgpu_compile(record_memory_spaces, [T.Array(T.from_dtype(ALIGNED), 1, "C"), T.Array(T.float64, 1, "C")],
                              arch, tmp_path)
    assert any(o.startswith(("ds_write", "ds_store")) for o in ops) and art.static_shared_bytes == 64 * ALIGNED.itemsize
    rec_arr = T.Array(T.from_dtype(ALIGNED), 1, "C")
    amdgpu_compile(update, [rec_arr, T.Array(T.float64, 1, "C")], arch, tmp_path)
    art, ops = amdgpu_compile(packed_kernel, [T.Array(T.from_dtype(PACKED), 1, "C"), T.Array(T.float64, 1, "C")],
                              arch, tmp_path)
    assert "align 1" in art.llvm_ir or "align 1\n" in art.llvm_ir  # unaligned field accesses stay byte-aligned
    amdgpu_compile(by_reference, [T.Array(T.from_dtype(ALIGNED), 0, "A"), rec_arr, T.Array(T.float64, 1, "C")],
                   arch, tmp_path)


def test_device_arrays_of_records():
    h = np.zeros(3, ALIGNED)
    h["y"] = [1, 2, 3]
    d = cuda.to_device(h)
    assert typeof(d) == T.Array(T.from_dtype(ALIGNED), 1, "C")

    @cuda.jit
    def k(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i].x = a[i].y * 1.5

    k[1, 3](d)
    back = d.copy_to_host()
    assert back.dtype == ALIGNED and list(back["x"]) == [1.5, 3.0, 4.5] and list(back["y"]) == [1, 2, 3]


def test_loop_over_records_and_store_errors():
    @cuda.jit
    def k(a, out):
        s = 0.0
        for r in a:
            r.x = r.y + 0.5
            s += r.x
        out[0] = s

    a = np.zeros(4, ALIGNED)
    a["y"] = [1, 2, 3, 4]
    out = np.zeros(1)
    k[1, 1](a, out)
    assert list(a["x"]) == [1.5, 2.5, 3.5, 4.5] and out[0] == 12.0

    @cuda.jit
    def bad(a):
        a[0] = 5

    with pytest.raises(cuda.CompileError, match="cannot convert"):
        bad[1, 1](np.zeros(2, ALIGNED))


def test_numpy_recarrays_and_their_records():
    ra = np.rec.array(np.zeros(3, ALIGNED))
    ra.y = [4, 5, 6]

    @cuda.jit
    def k(a, r, out):
        out[0] = a[2].y + r.y
        r.x = 2.5

    out = np.zeros(1)
    k[1, 1](ra, ra[0], out)  # a recarray and one of its np.record elements
    assert out[0] == 10 and ra.x[0] == 2.5
