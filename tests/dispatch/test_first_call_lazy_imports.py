"""A first compile loads only what it uses: pdb (for ``pdb.set_trace()`` in kernels) is not
imported by pykern, and numba's table of signature conversions is built at the first choice
among explicit signatures, not at import. Checked in a fresh process by what is loaded, never
by a time; the calls still mean what they did once their modules are there."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from pykern.frontend import signature_choice
from pykern.frontend import types as T

SCRIPT = textwrap.dedent('''
    import sys, warnings
    import numpy as np
    import pykern as cuda
    from pykern.frontend import signature_choice

    @cuda.jit
    def k(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = 2.0

    a = np.zeros(8, np.float32)
    k[1, 8](a)
    assert (a == 2.0).all()
    print("loaded", " ".join(m for m in ("pdb", "bdb", "cmd", "pprint") if m in sys.modules) or "-")
    print("kinds", signature_choice._kinds.cache_info().currsize)

    import pdb  # the user's import: from now on a kernel may call pdb.set_trace

    @cuda.jit
    def stops(a):
        pdb.set_trace()
        a[0] = 3.0

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        stops[1, 1](a)
    print("stops", a[0], any("breakpoint() is ignored on the cpu target" in str(w.message) for w in seen))

    @cuda.jit(["void(float64[:], float64)", "void(float64[:], float32)"])
    def declared(a, x):
        a[0] = x

    b = np.zeros(1)
    declared[1, 1](b, 5)  # an int: converted, by numba's rules, to the safe float64
    assert b[0] == 5.0
    print("kinds", signature_choice._kinds.cache_info().currsize)
''')


def _run(tmp_path):
    script = tmp_path / "first.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYKERN_TARGET="cpu", PYKERN_CACHE="off")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return [line.split() for line in r.stdout.splitlines()]


def test_first_compile_imports_no_pdb_and_set_trace_still_lowers(tmp_path):
    lines = _run(tmp_path)
    assert lines[0] == ["loaded", "-"]
    assert lines[1] == ["kinds", "0"]  # no signature was chosen yet
    assert lines[2] == ["stops", "3.0", "True"]  # the breakpoint intrinsic, ignored on cpu as before
    assert lines[3] == ["kinds", "1"]


def test_conversion_kinds_are_numbas_rules_closed():
    c = signature_choice.conversion
    assert c(T.int32, T.int32) == signature_choice.EXACT
    assert c(T.int8, T.int64) == signature_choice.PROMOTE  # a chain of promotions
    assert c(T.int8, T.float64) == signature_choice.SAFE  # promote then safe: as bad as the worst
    assert c(T.float64, T.float32) == signature_choice.UNSAFE
    assert c(T.int32, T.float32) == signature_choice.UNSAFE
    assert c(T.uint64, T.int64) == signature_choice.UNSAFE
