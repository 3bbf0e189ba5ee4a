"""The disk cache's key names the compiler that built an entry: in a source checkout, a stamp of
every source file of the pykern package -- the code generator's too, not only the runtime's."""

from __future__ import annotations

import os

import pykern
from pykern.runtime.cache import key


def test_source_stamp_covers_the_whole_package(monkeypatch):
    monkeypatch.delenv("PYKERN_BUILD_ID", raising=False)
    monkeypatch.setattr(key, "_memo", {})
    pkgdir = os.path.dirname(os.path.abspath(pykern.__file__))
    if key._record_stamp(pkgdir, "pykern", pykern.__version__):  # an installed wheel: stamped by its RECORD
        return
    assert key.pykern_identity()["build"] == key._tree_stamp(pkgdir)
    assert key._tree_stamp(pkgdir) != key._tree_stamp(os.path.join(pkgdir, "runtime"))
