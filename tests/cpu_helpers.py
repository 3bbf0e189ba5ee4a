"""Test helpers for the cpu target: build typed IR by hand, compile it, pack
arguments per ``abi.flatten_params`` and launch -- or do the same from a
Python kernel (``run_py``).

Example::

    k = compile_module(mod)
    launch(k, (4,), (64,), x, y, np.float32(2))
"""

from __future__ import annotations

import os
import struct

import numpy as np

import pykern as cuda
from pykern.codegen import get_target
from pykern.codegen.target_interface import CompileOptions
from pykern.frontend import ir
from pykern.frontend import types as T
from pykern.runtime.cpu import executor as cpu_executor

#: how the cpu target runs a kernel with plain barriers in uniform control flow: work-item loops,
#: unless PYKERN_CPU_BARRIERS=coroutine forces coroutines (CI runs the barrier tests both ways)
BARRIER_PATH = "coroutine" if os.environ.get("PYKERN_CPU_BARRIERS", "").strip() == "coroutine" else "regions"

# ---------------------------------------------------------------- IR DSL
i32, i64, f32, f64, b1 = T.int32, T.int64, T.float32, T.float64, T.boolean


def C(value, t=i64):
    return ir.Const(value, t)


def V(name, t):
    return ir.Var(name, t)


def op(o, a, b, t=None):
    return ir.BinOp(o, a, b, t or a.type)


def cmp(o, a, b):
    return ir.Compare(o, a, b)


def cast(e, t):
    return ir.Cast(e, t)


def intr(name, *args, t=i32, **attrs):
    return ir.Intrinsic(name, list(args), t, dict(attrs))


def tid(axis=0):
    return cast(intr("thread_idx", axis=axis), i64)


def bid(axis=0):
    return cast(intr("block_idx", axis=axis), i64)


def bdim(axis=0):
    return cast(intr("block_dim", axis=axis), i64)


def gtid():
    return op("+", op("*", bid(), bdim()), tid())


def load(a, *idx):
    return ir.Load(a, list(idx), a.type.dtype)


def store(a, idx, v):
    return ir.Store(a, list(idx) if isinstance(idx, (list, tuple)) else [idx], v)


def kernel(name, params, body, locals_=None, functions=()):
    """An ``ir.Module`` of one kernel; ``params`` a list of (name, type);
    ``locals_`` extra local variables."""
    loc = dict(params)
    loc.update(locals_ or {})
    fn = ir.Function(name, [ir.Param(n, t) for n, t in params], T.void, body, loc, True, pyname=name)
    return ir.Module(fn, {f.name: f for f in functions})


def device(name, params, ret, body, locals_=None):
    loc = dict(params)
    loc.update(locals_ or {})
    return ir.Function(name, [ir.Param(n, t) for n, t in params], ret, body, loc, False, pyname=name)


# ---------------------------------------------------------------- running
def compile_module(mod, **opts):
    # hand-built IR takes the path compile_ir's output takes: verified once, then codegen
    from pykern.frontend.verify import verify_module

    verify_module(mod)
    art = get_target("cpu").compile(mod, CompileOptions(**opts))
    return cpu_executor.load(art)


def _flat_values(t, v, out):
    if isinstance(t, T.Array):
        a = v
        out.append(a.ctypes.data)
        out.extend(a.shape)
        out.extend(a.strides)
    elif isinstance(t, T.Tuple):
        for et, ev in zip(t.elems, v):
            _flat_values(et, ev, out)
    else:
        out.append(v)


_FMT = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uint8": "B", "uint16": "H",
        "uint32": "I", "uint64": "Q", "float16": "e", "float32": "f", "float64": "d", "boolean": "?"}


def pack_args(kern, values):
    art = kern.artifact
    fn_types = _arg_types(kern)
    flat = []
    for t, v in zip(fn_types, values):
        _flat_values(t, v, flat)
    buf = bytearray(max(art.kernarg_size, 8))
    for p, v in zip(art.params, flat):
        if p.role == "data":
            struct.pack_into("<Q", buf, p.offset, v)
        elif p.role in ("shape", "stride"):
            struct.pack_into("<q", buf, p.offset, v)
        else:
            fmt = _FMT[str(p.type)]
            if fmt in "bhiqBHIQ":
                v = int(v)
                bits = p.size * 8
                v &= (1 << bits) - 1
                if fmt in "bhiq" and v >= 1 << (bits - 1):
                    v -= 1 << bits
            struct.pack_into("<" + fmt, buf, p.offset, v)
    return buf


def _arg_types(kern):
    return kern.argtypes


def launch(kern, grid, block, *values, shared=0):
    kern.launch(grid, block, shared, pack_args(kern, values))


def compile_and_launch(mod, grid, block, *values, shared=0, **opts):
    k = compile_module(mod, **opts)
    k.argtypes = [p.type for p in mod.kernel.params]
    launch(k, grid, block, *values, shared=shared)
    return k


def run_py(pyfunc, grid, block, *values, shared=0, **opts):
    """Compile a Python kernel through the frontend and run it on the cpu."""
    from pykern.frontend import compile_ir
    from pykern.frontend.typeof import typeof

    k = compile_py(pyfunc, *values, **opts)
    launch(k, grid, block, *values, shared=shared)
    return k


def compile_py(pyfunc, *values, **opts):
    """Compile a Python kernel for the types of ``values``; returns a CpuKernel
    to run with ``launch(k, grid, block, *values)``."""
    from pykern.frontend import compile_ir
    from pykern.frontend.typeof import typeof

    import os

    argtypes = [typeof(v) for v in values]
    key = (pyfunc, tuple(argtypes), tuple(sorted(opts.items())), os.environ.get("PYKERN_CPU_WAVESIZE"),
           os.environ.get("PYKERN_CPU_BARRIERS"))
    k = _compiled.get(key)
    if k is None:
        mod = compile_ir(pyfunc, argtypes, debug=opts.get("debug", False))
        k = compile_module(mod, **opts)
        k.argtypes = argtypes
        _compiled[key] = k
    return k


_compiled: dict = {}


# ---------------------------------------------------------------- Python kernels several test files run
def add_one(a):
    # a[i] += 1 on every element: the smallest kernel that writes
    i = cuda.grid(1)
    if i < a.size:
        a[i] += 1


def spin(out, n):
    # each thread loops n times before writing: a launch as long as a test wants (Ctrl-C tests)
    i = cuda.grid(1)
    acc = 0.0
    for j in range(n):
        acc = acc * 0.999 + j
    if i < out.size:
        out[i] = acc
