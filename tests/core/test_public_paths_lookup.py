"""``public_paths.home_of``: a public import path maps to its home by the longest aliased prefix
that ends at a dot; every other name (the finder is asked about each import of the process)
maps to nothing."""

from __future__ import annotations

import importlib

from pykern.core import public_paths
from pykern.core.public_paths import PUBLIC_PATHS, home_of


def _by_scan(fullname):
    """The rule spelt out: of the aliases that are ``fullname`` or a dotted prefix of it, the
    longest."""
    hits = [p for p in PUBLIC_PATHS if fullname == p or fullname.startswith(p + ".")]
    if not hits:
        return None
    best = max(hits, key=len)
    return PUBLIC_PATHS[best] + fullname[len(best):]


def test_every_alias_and_its_submodules_map_home():
    names = [n for p in PUBLIC_PATHS for n in (p, p + ".x", p + ".x.y", p + "x", p + "_y")]
    for name in names:
        assert home_of(name) == _by_scan(name), name
    assert home_of("pykern.cudadrv.memory") == "pykern.numba_compat.cudadrv.driver_memory"  # the specific one
    assert home_of("pykern.cudadrv.driver") == "pykern.numba_compat.cudadrv.driver"
    assert home_of("pykern.random.sub") == "pykern.lang.random.sub"


def test_other_names_are_not_aliases():
    for name in ("numpy", "pykern", "pykern.", "pykern.frontend.calls", "pykernel.random", "random",
                 "pykern.randomness", "", "a.pykern.random"):
        assert home_of(name) is None, name


def test_an_alias_imports_the_home_module():
    assert importlib.import_module("pykern.cudadrv.driver") is importlib.import_module(
        "pykern.numba_compat.cudadrv.driver")
    assert any(isinstance(f, public_paths._Finder) for f in __import__("sys").meta_path)
