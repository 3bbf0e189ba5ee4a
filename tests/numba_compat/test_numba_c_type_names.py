"""numba's C type names in ``pykern.types`` (``types.ulonglong``, ``types.intc``...) name the
types numba's do on this host (numba-cuda's tests/cudapy/test_ufuncs.py spells them)."""

from __future__ import annotations

import pytest

import pykern as cuda
from pykern import types

NAMES = ["char", "byte", "uchar", "short", "ushort", "intc", "uintc", "int_", "long_", "longlong",
         "uint", "ulong", "ulonglong", "size_t", "ssize_t", "double", "intp", "uintp"]


@pytest.mark.parametrize("name", NAMES)
def test_c_names_are_numbas(name):
    nb = pytest.importorskip("numba.core.types")
    assert str(getattr(types, name)) == str(getattr(nb, name))


def test_c_names_work_in_signatures(cpu_target):
    import numpy as np

    @cuda.jit(types.void(types.ulonglong[:], types.intc))
    def k(out, x):
        out[0] = x + 1

    out = np.zeros(1, np.uint64)
    k[1, 1](out, 41)
    assert out[0] == 42
