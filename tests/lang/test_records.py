"""Record arrays (numpy structured dtypes) in kernels: aligned and packed, nested records, arrays
inside records (array views of fields, misaligned ones loaded with alignment 1, assigned whole like
slices), string fields (copied whole, not read), as kernel arguments, record references (``r = a[i];
r.x += 1``), ``a[i].y``, ``a[i]['x']``, fields by position, whole-record copies, record scalars as
kernel and device-function arguments (by reference, as numba), fields of global records as
constants, ``pykern.from_dtype`` in signatures and as the dtype of local/shared arrays; cpu results
against numpy, code objects for the amdgpu archs."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

import pykern as cuda
from pykern.core.errors import CompileError
from pykern.frontend import types as T
from pykern.frontend.typeof import typeof

from types_helpers import amdgpu_compile, ARCHS, needs_llvm_tools

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
    assert "test_records.py:" in str(ei.value)

    @cuda.jit
    def number_as_record(a):
        a[0].s = 1  # a record field takes a record (a[0].s = a[1].s copies it)

    with pytest.raises(cuda.CompileError, match="as a record"):
        number_as_record[1, 1](np.zeros(2, ALIGNED))

    @cuda.jit
    def packed_array_field(a):
        a[0].v[1] = 1  # no longer an error: an unaligned view (test_packed_record_array_fields_as_arrays below)

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


# packed: 'vals' sits at byte 1, so its float64 elements are misaligned in every record
PACKED_VALS = np.dtype([("tag", "u1"), ("vals", "<f8", 3), ("n", "<i4"), ("word", "<i4", 5)])


@cuda.jit(device=True)
def count_in(word, n, letter):
    c = 0
    for p in range(n):
        if word[p] == letter:
            c += 1
    return c


@cuda.jit
def packed_fields(recs, letter, counts, sums):
    i = cuda.grid(1)
    r = recs[i]  # before the bounds check, as real programs do: a view, nothing is read
    if i < len(recs):
        word = r["word"]
        counts[i] = count_in(word, r["n"], letter)
        vals = r.vals
        s = 0.0
        for k in range(vals.shape[0]):
            s += vals[k]
        sums[i] = s
        tail = vals[1:]
        tail[0] = s  # a store through a slice of the unaligned view
        word[0] += 1


def _packed_vals_records(n):
    rng = np.random.default_rng(3)
    a = np.zeros(n, PACKED_VALS)
    a["tag"] = rng.integers(0, 255, n)
    a["vals"] = rng.random((n, 3))
    a["n"] = rng.integers(0, 6, n)
    a["word"] = rng.integers(97, 100, (n, 5))
    return a


def test_packed_record_array_fields_as_arrays():
    assert PACKED_VALS.fields["vals"][1] == 1 and not PACKED_VALS.isalignedstruct
    a = _packed_vals_records(37)
    ref = a.copy()
    counts = np.zeros(37, np.int64)
    sums = np.zeros(37)
    packed_fields[2, 32](a, 98, counts, sums)
    want_counts = [int((ref["word"][i, : ref["n"][i]] == 98).sum()) for i in range(37)]
    np.testing.assert_array_equal(counts, want_counts)
    np.testing.assert_allclose(sums, ref["vals"].sum(1), rtol=1e-15)
    np.testing.assert_allclose(a["vals"][:, 1], sums, rtol=1e-15)
    np.testing.assert_array_equal(a["vals"][:, [0, 2]], ref["vals"][:, [0, 2]])
    np.testing.assert_array_equal(a["word"][:, 0], ref["word"][:, 0] + 1)
    np.testing.assert_array_equal(a["tag"], ref["tag"])


def test_unaligned_type_keeps_its_own_specialisation():
    """The device function is compiled for the unaligned view and for a plain array alike."""
    word = np.array([98, 97, 98, 98, 0], np.int32)
    out = np.zeros(2, np.int64)

    @cuda.jit
    def both(recs, w, out):
        out[0] = count_in(recs[0]["word"], 5, 98)
        out[1] = count_in(w, 5, 98)

    recs = np.zeros(1, PACKED_VALS)
    recs["word"][0] = word
    both[1, 1](recs, word, out)
    np.testing.assert_array_equal(out, [3, 3])


@cuda.jit
def whole_view_ops(recs, out):
    v = recs[0].vals
    out[0] = v.sum()
    t = 0.0
    for x in v:
        t += x * x
    out[1] = t
    v[:] = 2.5
    w = recs[0].word
    w[1] += 7
    out[2] = w[1]


def test_unaligned_view_whole_array_operations():
    recs = np.zeros(1, PACKED_VALS)
    recs["vals"][0] = [1.0, 2.0, 4.0]
    recs["word"][0, 1] = 5
    out = np.zeros(3)
    whole_view_ops[1, 1](recs, out)
    np.testing.assert_array_equal(out, [7.0, 21.0, 12.0])
    np.testing.assert_array_equal(recs["vals"][0], [2.5, 2.5, 2.5])
    assert recs["word"][0, 1] == 12


def test_unaligned_elements_claim_alignment_one():
    ir = whole_view_ops.inspect_llvm()
    text = ir if isinstance(ir, str) else "\n".join(ir.values())
    accesses = [ln for ln in text.splitlines() if "load double" in ln or "store double 2.5" in ln]
    assert accesses and all("align 1" in ln for ln in accesses), accesses


# ------------------------------------------------------------ recarray alignment
def test_recarray_of_an_aligned_dtype_matches_an_aligned_signature():
    dt = np.dtype([("a", np.int32), ("b", np.float64)], align=True)

    @cuda.jit((cuda.from_dtype(dt)[:],))
    def k(r):
        i = cuda.grid(1)
        r[i].a = r[i].b

    ra = np.recarray(3, dtype=dt)
    ra.a = 0
    ra.b = np.array([123.0, 246.0, 369.0])
    k[1, 3](ra)
    np.testing.assert_array_equal(ra.a, ra.b)


def test_array_field_of_a_recarray_element():
    dt = np.dtype([("g", np.int32), ("h", np.float32, 2)], align=True)

    @cuda.jit
    def k(rec, out):
        rec.h[1] = 4.0
        out[0] = rec.h[0]

    ra = np.recarray(1, dtype=dt)
    ra[0].h[0] = 15.0
    out = np.zeros(1, np.float32)
    k[1, 1](ra[0], out)
    assert out[0] == 15.0 and ra[0].h[1] == 4.0


_PACKED = np.dtype([("a", np.int8), ("b", np.float64), ("c", np.complex64)])  # b at byte 1, c at 9


def _field_views(x, o1, o2):
    i = cuda.grid(1)
    if i < x.size:
        o1[i] = x.b[i] + x.a[i]
        o2[i] = x.c[::-1][i]


def _field_writes(x):
    i = cuda.grid(1)
    if i < x.size:
        x.b[i] = -x.b[i]
        s = x.c
        s[i] += 1


def test_record_array_fields_are_array_views_as_numpy_gives():
    # numba types `a.b` of an array of records as the strided array of the field (np.recarray's
    # attribute); here in a packed record, whose fields sit at odd bytes
    a = np.zeros(5, _PACKED)
    a["a"], a["b"], a["c"] = np.arange(5), np.arange(5) * 1.5, np.arange(5) * (1 - 2j)
    o1, o2 = np.zeros(5), np.zeros(5, np.complex64)
    cuda.jit(_field_views)[1, 8](a, o1, o2)
    np.testing.assert_array_equal(o1, a["b"] + a["a"])
    np.testing.assert_array_equal(o2, a["c"][::-1])
    want_b, want_c = -a["b"], a["c"] + 1
    cuda.jit(_field_writes)[1, 8](a)
    np.testing.assert_array_equal(a["b"], want_b)
    np.testing.assert_array_equal(a["c"], want_c)
    r = np.recarray(4, dtype=[("x", np.int32), ("y", np.float32)])
    r.x, r.y = [1, 2, 3, 4], [0.5, 0.25, 2.0, 4.0]
    out = np.zeros(4, np.float32)

    @cuda.jit
    def k(r, out):
        for i in range(r.size):
            out[i] = r.x[i] * r.y[i]

    k[1, 1](r, out)
    np.testing.assert_array_equal(out, r.x * r.y)


def test_a_record_array_field_that_is_no_number_is_a_compile_error():
    dt = np.dtype([("g", np.int32), ("h", np.float32, 2)])

    @cuda.jit
    def k(a, out):
        out[0] = a.h[0][0]

    with pytest.raises(CompileError, match="only number fields"):
        k[1, 1](np.zeros(2, dt), np.zeros(1, np.float32))


# ------------------------------------------------------------ amdgpu
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_record_array_field_views_build_for_amdgpu(arch):
    sig = (cuda.from_dtype(_PACKED)[::1], cuda.float64[::1], cuda.complex64[::1])
    assert cuda.compile(_field_views, sig, arch=arch).code_object[:4] == b"\x7fELF"


# ------------------------------------------------------------ array fields of records, assigned whole
def test_array_fields_of_records_are_assigned_like_slices():
    dt = np.dtype([("x", np.float64), ("a", np.int16, (3,)), ("m", np.float32, (2, 2))], align=True)

    @cuda.jit
    def k(recs, src, m):
        recs[0]["a"] = src
        recs[1].a = 7
        recs[2].a += src
        r = recs[1]
        r.m = m
        r["m"] *= 2
        recs[0].a[1:] = (10, 11)

    got, want = np.zeros(3, dt), np.zeros(3, dt)
    got["a"][2] = want["a"][2] = [1, 1, 1]
    src, m = np.array([1, 2, 3], np.int16), np.arange(4, dtype=np.float32).reshape(2, 2)
    k[1, 1](got, src, m)
    want[0]["a"] = src
    want[1]["a"] = 7
    want[2]["a"] += src
    want[1]["m"] = m
    want[1]["m"] *= 2
    want[0]["a"][1:] = (10, 11)
    np.testing.assert_array_equal(got, want)


def test_array_field_of_a_record_argument_from_another_record():
    src_dt = np.dtype([("user", np.float64), ("array", np.int16, (3,))], align=True)
    dst_dt = np.dtype([("user1", np.float64), ("array1", np.int16, (3,))], align=True)

    @cuda.jit
    def copy(index, src, dest):
        dest["user1"] = src[index]["user"]
        dest["array1"] = src[index]["array"]

    source, got = np.zeros(2, src_dt), np.zeros(2, dst_dt)
    source[0] = (1.2, [1, 2, 3])
    copy[1, 1](0, source, got[0])
    assert got[0]["user1"] == 1.2 and got[0]["array1"].tolist() == [1, 2, 3] and got[1]["user1"] == 0


# ------------------------------------------------------------ whole records
_INNER = np.dtype([("p", np.int32), ("q", np.float32)], align=True)


_OUTER = np.dtype([("a", np.float64), ("s", _INNER), ("h", np.float32, 2), ("b", np.int8)], align=True)


def test_whole_records_are_copied_field_by_field():
    @cuda.jit
    def k(ary, rec, other):
        ary[0] = ary[2]  # a record of the same array
        ary[1] = rec  # a record argument
        ary[2].s = other[0].s  # a nested record field
        r = ary[3]
        r["s"] = rec.s

    ary = np.zeros(4, _OUTER)
    ary[2] = (1.5, (2, 2.5), (3.0, 4.0), 5)
    rec = np.array([(6.5, (7, 7.5), (8.0, 9.0), 10)], _OUTER)
    other = np.array([(0.0, (11, 11.5), (0.0, 0.0), 0)], _OUTER)
    want = ary.copy()
    want[0] = want[2]
    want[1] = rec[0]
    want[2]["s"] = other[0]["s"]
    want[3]["s"] = rec[0]["s"]
    k[1, 1](ary, rec[0], other)
    np.testing.assert_array_equal(ary, want)


def test_record_of_another_dtype_is_a_compile_error():
    other = np.dtype([("a", np.float64)], align=True)

    @cuda.jit
    def k(ary, src):
        ary[0] = src[0]

    with pytest.raises(CompileError, match="same dtype"):
        k[1, 1](np.zeros(1, _OUTER), np.zeros(1, other))


def test_record_fields_by_position():
    @cuda.jit
    def k(ary, out):
        out[0] = ary[0][0]  # numpy's r[0]: the first field
        out[1] = ary[0][-1]
        ary[1][0] = 4.25

    ary = np.zeros(2, _OUTER)
    ary[0] = (2.5, (0, 0.0), (0.0, 0.0), -3)
    out = np.zeros(2)
    k[1, 1](ary, out)
    assert out.tolist() == [2.5, -3.0] and ary[1]["a"] == 4.25


@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_record_copies_and_field_arrays_build_for_amdgpu(arch):
    def k(ary, src, z):
        ary[0] = ary[1]
        ary[1].h = src
        ary[2].s = ary[0].s
        ary[3][0] = ary[3][-1]
        z[0] = np.sqrt(z[1]) + np.complex64(src[0], src[1])

    sig = (cuda.from_dtype(_OUTER)[::1], cuda.float32[::1], cuda.complex64[::1])
    ck = cuda.compile(k, sig, arch=arch)
    assert ck.code_object[:4] == b"\x7fELF"


_COPY_INNER = np.dtype([("a", np.int16), ("b", np.float64)], align=True)


_COPY_REC = np.dtype([("i", np.int32), ("j", np.float32, (3, 2)), ("r", _COPY_INNER)], align=True)


_COPY_PACKED = np.dtype([("i", np.int8), ("x", np.float64), ("c", np.complex64)])


_COPY_REC_T = cuda.from_dtype(_COPY_REC)


def _copy_records(n, dtype):
    a = np.zeros(n, dtype=dtype)
    raw = a.view(np.uint8)
    raw[:] = np.random.default_rng(5).integers(0, 256, raw.size, dtype=np.uint8)
    for name in dtype.names:  # finite floats, so the comparison below is by value
        if a[name].dtype.kind in "fc":
            a[name] = np.arange(a[name].size).reshape(a[name].shape) * 0.5
    return a


def _chunk_copy(x, y):
    # numba-cuda's test_sm: a block copies its records through shared memory
    sm = cuda.shared.array(16, dtype=_COPY_REC_T)
    tx = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tx
    if i < len(x):
        sm[tx] = x[i]
    cuda.syncthreads()
    if tx == 0:
        for j in range(16):
            y[cuda.blockIdx.x * 16 + j] = sm[j]


def test_whole_record_assignment_through_shared_memory():
    x = _copy_records(64, _COPY_REC)
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

    a = _copy_records(8, _COPY_PACKED)
    b = np.zeros_like(a)
    k[1, 8](a, b, a[0])
    want = np.concatenate([a[1:], a[:1]])
    for n in _COPY_PACKED.names:
        np.testing.assert_array_equal(b[n], want[n])


def test_record_of_another_dtype_is_refused():
    @cuda.jit
    def k(a, b):
        a[0] = b[0]

    with pytest.raises(cuda.CompileError, match="cannot assign a record"):
        k[1, 1](np.zeros(1, _COPY_REC), np.zeros(1, _COPY_PACKED))


@pytest.mark.parametrize("arch", ARCHS)
def test_whole_record_copy_compiles_for_amdgpu(arch):
    ck = cuda.compile(_chunk_copy, (_COPY_REC_T[::1], _COPY_REC_T[::1]), arch=arch)
    assert ck.resources["lds_bytes"] >= 16 * _COPY_REC.itemsize


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


# record arrays
rec_dt = np.dtype([("x", np.float32), ("y", np.int32), ("z", np.float64)])


@cuda.jit
def recs(r, out):
    i = cuda.grid(1)
    if i < r.size:
        e = r[i]
        e.x += 1
        out[i] = e.x * e.y + r[i].z


def test_record_arrays():
    r = np.zeros(20, rec_dt)
    r["x"] = np.arange(20); r["y"] = np.arange(20) * 2; r["z"] = 0.5
    exp_x = r["x"] + 1
    out = np.zeros(20)
    recs[1, 32](r, out)
    np.testing.assert_array_equal(r["x"], exp_x)
    np.testing.assert_array_equal(out, exp_x.astype(np.float64) * r["y"] + 0.5)


_STR_REC = np.dtype([('a', np.float64), ('b', np.int32), ('name', 'U5'), ('tag', 'S3')], align=True)


@cuda.jit
def _copy_rec(ary, i, j):
    ary[i] = ary[j]
    ary[i].b += 1


def test_records_with_string_fields_copy_whole():
    ary = np.zeros(3, _STR_REC)
    ary[1] = (5.5, 7, 'héllo', b'xyz')
    _copy_rec[1, 1](ary, 2, 1)
    assert ary[2].tolist() == (5.5, 8, 'héllo', b'xyz')
    assert ary[0].tolist() == (0.0, 0, '', b'')
    d = cuda.to_device(ary)
    _copy_rec[1, 1](d, 0, 1)
    assert d.copy_to_host()[0].tolist() == (5.5, 8, 'héllo', b'xyz')


def test_reading_a_string_field_is_a_compile_error():
    @cuda.jit
    def k(ary, out):
        out[0] = len(ary[0].name)

    with pytest.raises(cuda.CompileError, match="'name' is a string"):
        k[1, 1](np.zeros(1, _STR_REC), np.zeros(1))


_CONFIG = np.rec.array([(10.0, 9.0, 3)], dtype=[('height', 'f4'), ('start', 'f4'), ('n', 'i4')])[0]


def test_fields_of_a_global_record_are_constants():
    @cuda.jit
    def k(out):
        out[0] = _CONFIG.height - _CONFIG.start
        out[1] = _CONFIG.n * 2

    out = np.zeros(2)
    k[1, 1](out)
    assert out.tolist() == [1.0, 6.0]

    @cuda.jit
    def bad(out):
        out[0] = _CONFIG.width

    with pytest.raises(cuda.CompileError, match="has no field 'width'"):
        bad[1, 1](out)
