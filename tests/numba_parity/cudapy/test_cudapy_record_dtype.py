"""numba-cuda's ``tests/cudapy/test_record_dtype.py`` (see conftest.py): record (structured dtype)
fields: set/read, nested arrays, device-function access."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


_recordtype = np.dtype([("a", np.float64), ("b", np.int32), ("c", np.complex64),
                        ("d", (np.uint8, 5))], align=True)


_recordwitharray = np.dtype([("g", np.int32), ("h", np.float32, 2)], align=True)


_recordwith2darray = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])


_nested_array1_dtype = np.dtype([("array1", np.int16, (3,))], align=True)


_nested_array2_dtype = np.dtype([("array2", np.int16, (3, 2))], align=True)


def _set_a(ary, i, v):
    ary[i].a = v


def _set_b(ary, i, v):
    ary[i].b = v


def _set_c(ary, i, v):
    ary[i].c = v


def _set_record(ary, i, j):
    ary[i] = ary[j]


def _record_set_a(r, v):
    r.a = v


def _record_set_b(r, v):
    r.b = v


def _record_set_c(r, v):
    r.c = v


def _record_read_a(r, arr):
    arr[0] = r.a


def _record_read_b(r, arr):
    arr[0] = r.b


def _record_read_c(r, arr):
    arr[0] = r.c


def _record_write_array(r):
    r.g = 2
    r.h[0] = 3.0
    r.h[1] = 4.0


def _record_write_2d_array(r):
    r.i = 3
    r.j[0, 0] = 5.0
    r.j[0, 1] = 6.0
    r.j[1, 0] = 7.0
    r.j[1, 1] = 8.0
    r.j[2, 0] = 9.0
    r.j[2, 1] = 10.0


def _record_read_array(r, a):
    a[0] = r.h[0]
    a[1] = r.h[1]


def _record_read_2d_array(r, a):
    a[0, 0] = r.j[0, 0]
    a[0, 1] = r.j[0, 1]
    a[1, 0] = r.j[1, 0]
    a[1, 1] = r.j[1, 1]
    a[2, 0] = r.j[2, 0]
    a[2, 1] = r.j[2, 1]


# numba runs TestRecordDtype on np.recarray (uninitialised: np.recarray(n)) and on zeroed
# structured arrays; both are zeroed here so that whole-array comparisons are defined
@pytest.fixture(params=["recarray", "structured"])
def rec_samples(request):
    def mk(n, dt):
        a = np.zeros(n, dtype=dt)
        return a.view(np.recarray) if request.param == "recarray" else a

    sample1d = mk(3, _recordtype)
    for i in range(sample1d.size):
        x = i + 1
        sample1d[i]["a"] = x / 2
        sample1d[i]["b"] = x
        sample1d[i]["c"] = x * 1j
        sample1d[i]["d"] = "%d" % x
    return sample1d, mk(1, _recordwitharray)[0], mk(1, _recordwith2darray)[0]


@pytest.mark.parametrize("pyfunc,value", [(_set_a, 3.1415), (_set_a, np.float32(3.0)),
                                          (_set_b, 123), (_set_b, 123.0),
                                          (_set_c, np.complex64(43j)), (_set_c, 43j)])
def test_record_set_field(rec_samples, pyfunc, value):
    # test_record_dtype.py TestRecordDtype.test_set_a / test_set_b / test_set_c
    sample1d = rec_samples[0]
    cfunc = cuda.jit()(pyfunc)
    for i in range(sample1d.size):
        got = sample1d.copy()
        expect = got.copy().view(np.recarray)
        cfunc[1, 1](got, i, value)
        pyfunc(expect, i, value)
        assert np.all(expect == got)


def test_record_set_record(rec_samples):
    # test_record_dtype.py TestRecordDtype.test_set_record
    sample1d = rec_samples[0]
    cfunc = cuda.jit()(_set_record)
    for i, j in [(0, 1), (1, 2), (0, 2)]:
        expect = sample1d.copy()
        _set_record(expect, i, j)
        got = sample1d.copy()
        cfunc[1, 1](got, i, j)
        assert expect[i] == expect[j]
        assert got[i] == got[j]
        assert np.all(expect == got)


@pytest.mark.parametrize("v,setf,readf,f", [
    (np.float64(1.5), _record_set_a, _record_read_a, "a"),
    (np.int32(2), _record_set_b, _record_read_b, "b"),
    (np.complex64(4.0 + 5.0j), _record_set_c, _record_read_c, "c")])
def test_record_scalar_record_set_and_read(rec_samples, v, setf, readf, f):
    # test_record_dtype.py test_rec_set_a/_b/_c and test_rec_read_a/_b/_c
    rec = rec_samples[0].copy()[0]
    cuda.jit()(setf)[1, 1](rec, v)
    np.testing.assert_equal(rec[f], v)

    rec = rec_samples[0].copy()[0]
    rec[f] = v
    arr = np.zeros(1, v.dtype)
    cuda.jit()(readf)[1, 1](rec, arr)
    np.testing.assert_equal(arr[0], v)


def test_record_nested_arrays_write_and_read(rec_samples):
    # test_record_dtype.py test_record_write_1d_array / _2d_array, test_record_read_1d_array /
    # _2d_array
    _, rec1, rec2 = rec_samples
    rec = rec1.copy()
    cuda.jit()(_record_write_array)[1, 1](rec)
    expected = rec1.copy()
    expected["g"] = 2
    expected["h"][0] = 3.0
    expected["h"][1] = 4.0
    np.testing.assert_equal(expected, rec)

    rec = rec2.copy()
    cuda.jit()(_record_write_2d_array)[1, 1](rec)
    expected = rec2.copy()
    expected["i"] = 3
    expected["j"][:] = np.asarray([5.0, 6.0, 7.0, 8.0, 9.0, 10.0], np.float32).reshape(3, 2)
    np.testing.assert_equal(expected, rec)

    rec = rec1.copy()
    rec["h"][0] = 4.0
    rec["h"][1] = 5.0
    arr = np.zeros(2, dtype=rec["h"].dtype)
    cuda.jit()(_record_read_array)[1, 1](rec, arr)
    np.testing.assert_equal(rec["h"], arr)

    rec = rec2.copy()
    rec["j"][:] = np.asarray([5.0, 6.0, 7.0, 8.0, 9.0, 10.0], np.float32).reshape(3, 2)
    arr = np.zeros((3, 2), dtype=rec["j"].dtype)
    cuda.jit()(_record_read_2d_array)[1, 1](rec, arr)
    np.testing.assert_equal(rec["j"], arr)


def _nested_cfunc(pyfunc, retty):
    inner = cuda.jit(device=True)(pyfunc)

    @cuda.jit
    def outer(arg0, res):
        res[0] = inner(arg0)

    def host(arg0):
        res = np.zeros(1, dtype=retty)
        outer[1, 1](arg0, res)
        return res[0]

    return host


def test_record_nested_read_through_device_functions():
    # test_record_dtype.py TestNestedArrays.test_record_read_array / test_record_read_2d_array
    def read_array0(ary):
        return ary.h[0]

    def read_array1(ary):
        return ary.h[1]

    def read_2d00(ary):
        return ary.j[0, 0]

    def read_2d10(ary):
        return ary.j[1, 0]

    def read_2d01(ary):
        return ary.j[0, 1]

    nbval = np.recarray(1, dtype=_recordwitharray)
    nbval[0].h[0] = 15.0
    nbval[0].h[1] = 25.0
    assert _nested_cfunc(read_array0, np.float32)(nbval[0]) == nbval[0].h[0]
    assert _nested_cfunc(read_array1, np.float32)(nbval[0]) == nbval[0].h[1]

    nbval = np.recarray(1, dtype=_recordwith2darray)
    nbval[0].j = np.asarray([1.5, 2.5, 3.5, 4.5, 5.5, 6.5], np.float32).reshape(3, 2)
    assert _nested_cfunc(read_2d00, np.float32)(nbval[0]) == nbval[0].j[0, 0]
    assert _nested_cfunc(read_2d01, np.float32)(nbval[0]) == nbval[0].j[0, 1]
    assert _nested_cfunc(read_2d10, np.float32)(nbval[0]) == nbval[0].j[1, 0]


def test_record_nested_setitem():
    # test_record_dtype.py TestNestedArrays.test_setitem
    def record_setitem_array(rec_source, rec_dest):
        rec_dest["j"] = rec_source["j"]

    def gen():
        nbarr1 = np.recarray(1, dtype=_recordwith2darray)
        nbarr1[0] = np.array([(1, ((1, 2), (4, 5), (2, 3)))], dtype=_recordwith2darray)[0]
        nbarr2 = np.recarray(1, dtype=_recordwith2darray)
        nbarr2[0] = np.array([(10, ((10, 20), (40, 50), (20, 30)))], dtype=_recordwith2darray)[0]
        return nbarr1[0], nbarr2[0]

    pyargs = gen()
    record_setitem_array(*pyargs)
    cuargs = gen()
    cuda.jit(record_setitem_array)[1, 1](*cuargs)
    np.testing.assert_equal(pyargs, cuargs)


def test_record_nested_getitem_idx():
    # test_record_dtype.py TestNestedArrays.test_getitem_idx: a record returned from a device
    # function, and the first field of a record
    def recarray_getitem_return(ary):
        return ary[0]

    nbarr = np.recarray(2, dtype=_recordwitharray)
    nbarr[0] = np.array([(1, (2, 3))], dtype=_recordwitharray)[0]
    for arg, retty in [(nbarr, _recordwitharray), (nbarr[0], np.int32)]:
        np.testing.assert_equal(_nested_cfunc(recarray_getitem_return, retty)(arg),
                                recarray_getitem_return(arg))


def test_record_nested_set_record_and_assign_arrays():
    # test_record_dtype.py TestNestedArrays.test_set_record / test_assign_array_to_nested /
    # test_assign_array_to_nested_2d / test_issue_7693
    def recarray_set_record(ary, rec):
        ary[0] = rec

    rec = np.ones(2, dtype=_recordwith2darray).view(np.recarray)[0]
    nbarr = np.zeros(2, dtype=_recordwith2darray).view(np.recarray)
    arr = np.zeros(2, dtype=_recordwith2darray).view(np.recarray)
    recarray_set_record(arr, rec)
    cuda.jit(recarray_set_record)[1, 1](nbarr, rec)
    np.testing.assert_equal(nbarr, arr)

    def assign_array_to_nested(dest, src):
        dest["array1"] = src

    def assign_array_to_nested_2d(dest, src):
        dest["array2"] = src

    for fn, dt, src in ((assign_array_to_nested, _nested_array1_dtype,
                         (np.arange(3) + 1).astype(np.int16)),
                        (assign_array_to_nested_2d, _nested_array2_dtype,
                         (np.arange(6) + 1).astype(np.int16).reshape((3, 2)))):
        got = np.zeros(2, dtype=dt)
        expected = np.zeros(2, dtype=dt)
        cuda.jit(fn)[1, 1](got[0], src)
        fn(expected[0], src)
        np.testing.assert_array_equal(expected, got)

    src_dtype = np.dtype([("user", np.float64), ("array", np.int16, (3,))], align=True)
    dest_dtype = np.dtype([("user1", np.float64), ("array1", np.int16, (3,))], align=True)

    @cuda.jit
    def copy(index, src, dest):
        dest["user1"] = src[index]["user"]
        dest["array1"] = src[index]["array"]

    source = np.zeros(2, dtype=src_dtype)
    got = np.zeros(2, dtype=dest_dtype)
    expected = np.zeros(2, dtype=dest_dtype)
    source[0] = (1.2, [1, 2, 3])
    copy[1, 1](0, source, got[0])
    copy.py_func(0, source, expected[0])
    np.testing.assert_array_equal(expected, got)
