"""Idioms of numba.cuda programs found in the wild that pykern refused or lacked:
``nonlocal``/``global`` declarations of names a kernel only reads, ``ord('a')`` of a
one-character constant, records with string fields, ``DeviceArray.to_host()`` (older
numba's copy back into the array ``to_device`` was given), kernels written in
``python -c`` text."""

import os
import subprocess
import sys
import warnings
from textwrap import dedent

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_uncached")

SEP = ","


def _closure_kernel(scale):
    @cuda.jit
    def k(out, arr):
        nonlocal scale
        global SEP
        arr1 = arr[0]
        out[0] = scale * len(arr1) + ord(SEP)
        arr = cuda.local.array(4, dtype=np.float64)  # the parameter's name, rebound to another type
        arr[0] = 2.0
        out[1] = arr[0]
    return k


def test_nonlocal_and_global_of_names_only_read_are_accepted():
    out = np.zeros(2)
    _closure_kernel(3.0)[1, 1](out, np.ones((2, 5)))
    assert out.tolist() == [3.0 * 5 + ord(","), 2.0]


def test_nonlocal_of_an_assigned_name_is_refused_at_its_line():
    total = 0

    @cuda.jit
    def k(out):
        nonlocal total
        total = 1
        out[0] = total

    with pytest.raises(cuda.CompileError, match="'total' is declared 'nonlocal' and assigned") as e:
        k[1, 1](np.zeros(1))
    assert "nonlocal total" in str(e.value)


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


_REC = np.dtype([('a', np.float64), ('b', np.int32), ('name', 'U5'), ('tag', 'S3')], align=True)


@cuda.jit
def _copy_rec(ary, i, j):
    ary[i] = ary[j]
    ary[i].b += 1


def test_records_with_string_fields_copy_whole():
    ary = np.zeros(3, _REC)
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
        k[1, 1](np.zeros(1, _REC), np.zeros(1))


@cuda.jit
def _inc(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1


def test_to_host_copies_back_into_the_array_given_to_to_device():
    h = np.arange(10, dtype=np.int64)
    d = cuda.to_device(h)
    _inc[1, 16](d)
    assert h[0] == 0
    with pytest.warns(DeprecationWarning):
        d.to_host()
    assert (h == np.arange(10) + 1).all()


def test_to_host_without_a_source_array_raises():
    d = cuda.device_array(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(ValueError, match="no associated writeback"):
            d.to_host()
        with pytest.raises(ValueError):
            cuda.to_device(np.zeros(4))[1:].to_host()  # a view has none either


def test_a_kernel_in_python_dash_c_text_compiles():
    code = dedent("""
        import numpy as np
        import pykern as cuda
        cuda.set_target("cpu")
        @cuda.jit
        def k(a):
            a[cuda.grid(1)] += 2
        a = np.zeros(4)
        k[1, 4](a)
        print(a.sum())
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "8.0"


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


def test_xoroshiro128p_type_and_typeof_spell_signatures():
    from pykern.lang.random import create_xoroshiro128p_states, xoroshiro128p_type, xoroshiro128p_uniform_float64

    a = np.zeros(8)

    @cuda.jit((cuda.typeof(a), xoroshiro128p_type[:]))
    def k(out, states):
        i = cuda.grid(1)
        out[i] = xoroshiro128p_uniform_float64(states, i)

    k[1, 8](a, create_xoroshiro128p_states(8, seed=3))
    assert ((a > 0) & (a < 1)).all() and len(set(a.tolist())) == 8
    assert str(cuda.typeof(np.zeros((2, 3), np.float32))) == str(cuda.float32[:, ::1])
    assert cuda.typeof(2.5) == cuda.float64
    with pytest.raises(ValueError):
        cuda.typeof(object())
