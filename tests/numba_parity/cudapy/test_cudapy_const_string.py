"""numba-cuda's ``tests/cudapy/test_const_string.py`` (see conftest.py): string constants in kernels
(refused, as documented)."""

from __future__ import annotations

import numpy as np
import pytest

import pykern as cuda

pytestmark = pytest.mark.usefixtures("cpu_target")


def test_const_string_assignments_are_refused_as_documented():
    # test_const_string.py TestConstString: numba stores "XYZ"/b"XYZ" into <U12/S12 arrays and
    # record fields. pykern documents strings as not yet supported (README "Not yet"); these
    # programs are refused with a clear error, not run with wrong contents.
    from pykern.core.errors import CompileError, LaunchError

    @cuda.jit
    def str_assign(arr):
        i = cuda.grid(1)
        if i < len(arr):
            arr[i] = "XYZ"

    @cuda.jit
    def bytes_assign(arr):
        i = cuda.grid(1)
        if i < len(arr):
            arr[i] = b"XYZ"

    for k, dt in ((str_assign, "<U12"), (bytes_assign, "S12")):
        with pytest.raises(LaunchError, match="is not supported"):
            k[1, 8](np.zeros(9, dtype=dt))

    @cuda.jit
    def f(a):
        a[0]["x"] = 1
        a[0]["y"] = "ABC"

    a = np.zeros(2, np.dtype([("x", np.int32), ("y", np.dtype("<U12"))]))
    with pytest.raises(CompileError, match="strings are not supported"):
        f[1, 1](a)
    assert a["x"].tolist() == [0, 0]
