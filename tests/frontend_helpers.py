"""Shared helpers of the frontend tests: define kernels from source text
registered in linecache (so line numbers in errors are predictable); kernels as
source text for tests that run them elsewhere (a file, a notebook cell, a child
process), and that child's environment."""

import itertools
import linecache
import math
import os
import textwrap

import numpy as np
import pytest

from pykern.lang import stubs as cuda
from pykern.core.errors import CompileError
from pykern.frontend import compile_ir, parse_signature
from pykern.frontend import types as T

_counter = itertools.count()


def jit(f=None, **kw):
    """``pykern.jit`` without the disk cache (test kernels are throwaway)."""
    import pykern

    kw.setdefault("cache", False)
    if f is None:
        return lambda g: pykern.jit(g, **kw)
    return pykern.jit(f, **kw)


class DeviceFn:
    """What the lead's dispatcher hands the frontend for @jit(device=True)."""

    __pykern_device__ = True

    def __init__(self, f):
        self.py_func = f
        self.__name__ = f.__name__


def define(src: str, name: str | None = None, **globs):
    """exec ``src`` under a linecache-registered pseudo file; returns the function
    ``name`` (default: the last def) and the namespace."""
    src = textwrap.dedent(src).lstrip("\n")
    fname = f"<pykern-test-{next(_counter)}>"
    lines = src.splitlines(True)
    linecache.cache[fname] = (len(src), None, lines, fname)
    g = {"cuda": cuda, "np": np, "math": math, "device": DeviceFn, **globs}
    exec(compile(src, fname, "exec"), g)
    if name is None:
        defs = [l.split("def ", 1)[1].split("(", 1)[0] for l in lines if l.startswith("def ")]
        name = defs[-1]
    return g[name]


def lower(src: str, sig, name=None, is_kernel=True, **globs):
    f = define(src, name, **globs)
    args = parse_signature(sig)[1] if isinstance(sig, str) else list(sig)
    return compile_ir(f, args, is_kernel=is_kernel)


def compile_error(src: str, sig, name=None, **globs) -> CompileError:
    with pytest.raises(CompileError) as ei:
        lower(src, sig, name, **globs)
    return ei.value


# ---------------------------------------------------------------- kernels as source text
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: the text a script starts with to run the snippets below (they read ``cuda`` and ``np``)
IMPORTS = "import numpy as np\nimport pykern as cuda\n"

#: a saxpy kernel, compiled for ``SAXPY_SIG``
SAXPY_SRC = '''
@cuda.jit
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]
'''
SAXPY_SIG = "void(float32, float32[::1], float32[::1], float32[::1])"

#: a kernel the frontend refuses (``try``), and its launch
TRY_EXCEPT_SRC = '''
@cuda.jit(cache=False)
def tries(a):
    i = cuda.grid(1)
    try:
        a[i] = 1
    except Exception:
        pass

tries[1, 4](np.zeros(4))
'''


def child_env(**env) -> dict:
    """The environment of a child Python that runs this tree's pykern on the cpu target."""
    path = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
    return dict(os.environ, **{"PYKERN_TARGET": "cpu", "PYTHONPATH": path, **env})
