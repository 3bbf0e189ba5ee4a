"""``print()`` of complex numbers in kernels, which numba.cuda cannot format (it raises
"printing unimplemented"): Python's shape with numba.cuda's ``%f`` parts,
``(1.000000-2.500000j)``; on amdgpu through the same hostcall printf as other numbers."""

import os
import subprocess
import sys
import textwrap

import pytest

import pykern


def test_print_of_complex_values(tmp_path):
    script = tmp_path / "k.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import pykern as cuda

        @cuda.jit
        def k(z, w):
            print("z", z[0], w[0], z[0] * 2, 3)

        k[1, 1](np.array([1 - 2.5j]), np.array([complex(np.nan, -np.inf)], np.complex64))
    """))
    env = dict(os.environ, PYKERN_TARGET="cpu", PYKERN_CACHE="off")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["z (1.000000-2.500000j) (nan-infj) (2.000000-5.000000j) 3"]


def test_print_of_a_complex_value_compiles_for_amdgpu():
    def k(z):
        print(z[0])

    co = pykern.compile(k, "void(complex64[:])", arch="gfx942")
    assert bytes(co.code_object[:4]) == b"\x7fELF"
