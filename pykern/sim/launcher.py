"""A launch on the sim target: the kernel's IR made Python once per argument types, then run.

Nothing is stored in the disk cache (the generated Python is cheap to make and its
code objects point into the user's file). The generated functions see the kernel's
own globals, except that the pykern module (``cuda``, ``pykern``) is seen through a
proxy whose ``threadIdx``/``blockIdx``/``blockDim``/``gridDim``/``grid``/``gridsize``
read the running thread: in pdb ``p cuda.threadIdx.x`` prints the current thread's.

Example::

    >>> from pykern.sim.launcher import Dim3
    >>> Dim3((1, 2, 3))
    Dim3(x=1, y=2, z=3)
"""

from __future__ import annotations

import types as pytypes
import weakref

import numpy as np

from pykern.frontend import types as T
from pykern.sim import runtime, scheduler, watch

_compiled: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # dispatcher -> {argtypes: entry}


class Dim3:
    """The running thread's ``threadIdx`` (etc.) as pdb shows it."""

    __slots__ = ("x", "y", "z")

    def __init__(self, v):
        self.x, self.y, self.z = (int(i) for i in v)

    def __repr__(self):
        return f"Dim3(x={self.x}, y={self.y}, z={self.z})"


def _current(field):
    t = runtime.STATE.thread
    if t is None:
        raise RuntimeError(f"{field} is only defined while a kernel runs on the sim target")
    return t


class _Proxy(pytypes.ModuleType):
    """The pykern module as sim kernels see it (every other name is the module's own)."""

    def __init__(self, real):
        super().__init__(real.__name__, real.__doc__)
        object.__setattr__(self, "_real", real)

    def __getattr__(self, name):
        return getattr(object.__getattribute__(self, "_real"), name)

    @property
    def threadIdx(self):
        return Dim3(_current("threadIdx").tid)

    @property
    def blockIdx(self):
        return Dim3(_current("blockIdx").bid)

    @property
    def blockDim(self):
        return Dim3(_current("blockDim").bdim)

    @property
    def gridDim(self):
        return Dim3(_current("gridDim").gdim)

    def grid(self, ndim):
        t = _current("grid")
        g = [int(t.bid[k]) * int(t.bdim[k]) + int(t.tid[k]) for k in range(ndim)]
        return g[0] if ndim == 1 else tuple(g)


_proxies: dict = {}


def _globals_for(py_func) -> dict:
    import sys

    top = sys.modules.get("pykern")  # the public face, by name: this layer does not import it
    faces = {id(top), id(getattr(top, "cuda", None))} - {id(None)}
    g = dict(py_func.__globals__)
    for k, v in list(g.items()):
        if id(v) in faces:
            p = _proxies.get(id(v))
            if p is None:
                p = _proxies[id(v)] = _Proxy(v)
            g[k] = p
    return g


def _externals(dispatcher, module):
    """The external device code ``module`` calls, built for this machine as the cpu target
    builds it, and loaded (None when it calls none)."""
    from pykern.codegen import external_build
    from pykern.core.external import kernel_links

    symbols = external_build.symbols_of(module)
    if not symbols:
        return None
    return external_build.host_functions(kernel_links(dispatcher.options.get("link"), module.links), symbols)


def _entry(dispatcher, argtypes):
    per = _compiled.setdefault(dispatcher, {})
    hit = per.get(argtypes)
    if hit is None:
        from pykern.frontend import compile_ir
        from pykern.sim.codegen_py import generate

        module = compile_ir(dispatcher.py_func, list(argtypes), is_kernel=True,
                            debug=bool(dispatcher.options.get("debug", False)))
        filename = dispatcher.py_func.__code__.co_filename
        funcs, source = generate(module, filename, _globals_for(dispatcher.py_func), _externals(dispatcher, module))
        codes = {f.__code__ for f in funcs.values()}
        suspends = bool(module.kernel.uses_barrier or module.kernel.uses_wave_ops)
        hit = per[argtypes] = (funcs[module.kernel.name], codes, suspends, source)
    return hit


def _value(a, t):
    if isinstance(t, T.Array):
        hv = getattr(a, "_host_view", None)
        return watch.wrap(a if isinstance(a, np.ndarray) else hv() if hv is not None else np.asarray(a))
    if isinstance(t, T.Tuple) and isinstance(a, tuple):
        return tuple(_value(v, et) for v, et in zip(a, t.elems))
    if isinstance(t, T.Boolean):
        return np.bool_(a)
    if isinstance(t, (T.Integer, T.Float, T.Complex)):
        return runtime.cast(np.asarray(a)[()], t.np_dtype) if isinstance(t, T.Integer) else t.np_dtype.type(a)
    return a


def launch(dispatcher, args, argtypes, griddim, blockdim, sharedmem) -> None:
    """Run ``dispatcher``'s kernel for ``args`` (typed ``argtypes``) on the sim target."""
    from pykern.core import settings

    kernel, codes, suspends, _ = _entry(dispatcher, argtypes)
    values = [_value(a, t) for a, t in zip(args, argtypes)]
    scheduler.run(kernel, codes, values, tuple(griddim), tuple(blockdim), int(sharedmem or 0), suspends,
                 warpsize=int(settings.get("PYKERN_CPU_WAVESIZE")))


def python_source(dispatcher, argtypes) -> str:
    """The generated Python of ``dispatcher`` for ``argtypes`` (one line per kernel statement)."""
    return _entry(dispatcher, tuple(argtypes))[3]
