"""``pykern.lang.libdevice`` is a table (``FUNCTIONS``: name, numba signature, body, one-line doc)
expanded into device functions: every row is a module function with the row's signature, every
public device function is a row, and the rows read as documentation."""

import inspect
import math

import numpy as np

import pykern as cuda
from pykern.dispatch.dispatcher import Dispatcher
from pykern.frontend.signature import parse_signature
from pykern.lang import libdevice


def test_every_row_is_a_device_function_with_its_signature():
    names = [f.name for f in libdevice.FUNCTIONS]
    assert len(names) == len(set(names)) == 231
    for f in libdevice.FUNCTIONS:
        d = getattr(libdevice, f.name)
        assert isinstance(d, Dispatcher) and d.__pykern_device__, f.name
        ret, params = parse_signature(f.signature)
        assert d._signatures == [(ret, list(params))], f.name
        assert len(inspect.signature(d.py_func).parameters) == len(params), f.name
        assert d.py_func.__doc__ == f.doc and f.doc and "\n" not in f.doc, f.name


def test_every_public_device_function_is_a_row():
    public = {n for n, v in vars(libdevice).items() if isinstance(v, Dispatcher) and not n.startswith("_")}
    assert public == {f.name for f in libdevice.FUNCTIONS}


def test_rows_keep_numbas_names_and_signatures():
    rows = {f.name: f.signature for f in libdevice.FUNCTIONS}
    assert rows["sinf"] == "float32(float32)" and rows["sin"] == "float64(float64)"
    assert rows["frexpf"] == "Tuple(float32, int32)(float32)" and rows["sincos"] == "UniTuple(float64, 2)(float64)"
    assert rows["double2uint_rd"] == "int32(float64)" and rows["ull2float_rn"] == "float32(int64)"
    assert rows["popcll"] == "int32(int64)" and rows["ullmin"] == "int64(int64, int64)"
    assert inspect.signature(libdevice.byte_perm.py_func).parameters.keys() == {"x", "y", "s"}


def test_generated_functions_have_source_for_tools_and_the_cache_key():
    src = inspect.getsource(libdevice.powif.py_func)
    assert src.startswith("def powif(x, y):") and "return x ** float32(y)" in src
    from pykern.frontend import fingerprint

    @cuda.jit
    def k(out, x):
        out[0] = libdevice.normcdf(x[0])

    key = fingerprint.fingerprint(k)
    assert key["callees"]["pykern.lang.libdevice.normcdf"]["source"].startswith("src:")
    assert "uncacheable" not in key


def test_templated_rows_compute_in_their_own_type():
    @cuda.jit
    def k(out, x):
        out[0] = libdevice.normcdff(np.float32(x[0]))
        out[1] = libdevice.normcdf(x[0])
        out[2] = libdevice.signbitf(np.float32(-0.0))
        out[3] = libdevice.powif(np.float32(1.1), 7)

    out = np.zeros(4)
    k[1, 1](out, np.array([0.3]))
    want = 0.5 * math.erfc(-0.3 / math.sqrt(2))
    assert out[0] == float(np.float32(out[0])) and abs(out[0] - want) < 1e-7  # float32 all the way
    assert abs(out[1] - want) < 1e-15 and out[1] != float(np.float32(out[1]))  # float64
    assert out[2] == 1.0
    assert out[3] == float(np.float32(out[3])) and abs(out[3] - 1.1 ** 7) < 1e-6
