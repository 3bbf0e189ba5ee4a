"""Shared helpers of the frontend tests: define kernels from source text
registered in linecache (so line numbers in errors are predictable)."""

import itertools
import linecache
import math
import textwrap

import numpy as np
import pytest

from pykern import stubs as cuda
from pykern.errors import CompileError
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
