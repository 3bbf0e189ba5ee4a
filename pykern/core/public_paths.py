"""Import paths users write that name modules living elsewhere in the tree.

numba.cuda programs import ``numba.cuda.random``, ``numba.cuda.cudadrv.driver``,
``numba.cuda.libdevice``...; ported, they import ``pykern.random`` and so on.
Those modules live in the package of their role (``pykern.lang``, ``pykern.host``,
``pykern.numba_compat``); this table maps each public path to its home, and
``install()`` adds a finder that makes ``import pykern.random`` (and
``pykern.cudadrv.driver``, any submodule below an aliased package) give the
home module itself -- one module object under two names, loaded on first use::

    import pykern.random
    assert pykern.random is pykern.lang.random
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

PUBLIC_PATHS = {
    "pykern.random": "pykern.lang.random",
    "pykern.libdevice": "pykern.lang.libdevice",
    "pykern.dask": "pykern.host.dask",
    "pykern.compat": "pykern.numba_compat.host_api",
    "pykern.cudadrv.memory": "pykern.numba_compat.cudadrv.driver_memory",
    "pykern.cudadrv": "pykern.numba_compat.cudadrv",
    "pykern.kernels": "pykern.numba_compat.kernels",
    "pykern.types": "pykern.numba_compat.numba_types",
    "pykern.extending": "pykern.numba_compat.extending",
    "pykern.args": "pykern.dispatch.arg_hints",
    "pykern.debug": "pykern.sim.watch",
}


def home_of(fullname: str) -> str | None:
    """The module a public path names (``pykern.cudadrv.driver`` ->
    ``pykern.numba_compat.cudadrv.driver``), or None when it is not an alias."""
    if not fullname.startswith("pykern."):  # the finder is asked about every import
        return None
    public = fullname
    while True:  # the longest aliased prefix (the more specific path) first
        home = PUBLIC_PATHS.get(public)
        if home is not None:
            return home + fullname[len(public):]
        public, dot, _ = public.rpartition(".")
        if not dot:
            return None


class _Alias(importlib.abc.Loader):
    def __init__(self, home: str):
        self.home = home

    def create_module(self, spec):
        module = importlib.import_module(self.home)
        self.own = module.__spec__, module.__loader__
        return module

    def exec_module(self, module):
        # the import system wrote the alias's spec and loader over the module's own: give them back
        module.__spec__, module.__loader__ = self.own


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        home = home_of(fullname)
        if home is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(home))


def install() -> None:
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
