"""The kernel cache never loads entries others could have written.

Complements tests/runtime/cache/test_cache_store.py and tests/runtime/cache/test_cache_process.py (which
cover a 0777 cache directory, a foreign entry and a directory owned by someone
else) with: every group/other write bit on the directory, sticky world-writable
directories, a symlinked cache directory, entry files writable by others, and
world-writable directories below the cache root."""

from __future__ import annotations

import os
import stat
import warnings

import pytest

from pykern.runtime.cache import CacheKey, KernelCache

pytestmark = [pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX permissions"),
              pytest.mark.usefixtures("cache_env")]


def _key(c: KernelCache) -> CacheKey:
    fp = {"name": "m.k", "source": "src:abc", "globals": {}, "callees": {}, "location": {"file": "/x/m.py", "line": 3}}
    return c.make_key(fp, signature="(float32[:],)", target="cpu", options={"opt": 3, "debug": False})


def _stored(path) -> tuple[KernelCache, CacheKey]:
    c = KernelCache(path)
    k = _key(c)
    assert c.put(k, b"trusted payload")
    assert KernelCache(path).get(k) == b"trusted payload"  # control: loads while private
    return c, k


def _get(path, k):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = KernelCache(path).get(k)
    return got, [str(x.message) for x in w]


@pytest.mark.parametrize("mode", [0o720, 0o702, 0o770, 0o777, 0o1777, 0o1733])
def test_cache_dir_writable_by_group_or_others_is_refused(tmp_path, mode):
    d = tmp_path / "c"
    _, k = _stored(d)
    os.chmod(d, mode)
    got, msgs = _get(d, k)
    assert got is None
    assert any("writable by group or others" in m for m in msgs), msgs


def test_refused_dir_is_not_written_either(tmp_path):
    d = tmp_path / "c"
    c, k = _stored(d)
    os.chmod(d, 0o777)
    before = sorted(p.relative_to(d) for p in d.rglob("*"))
    c2 = KernelCache(d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert c2.put(CacheKey({"name": "other"}), b"x") is False
    assert sorted(p.relative_to(d) for p in d.rglob("*")) == before


def test_symlinked_cache_dir_is_judged_by_its_target(tmp_path):
    real = tmp_path / "open"
    _, k = _stored(real)
    os.chmod(real, 0o777)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    got, msgs = _get(link, k)
    assert got is None
    assert any("writable by group or others" in m for m in msgs), msgs


@pytest.mark.parametrize("mode", [0o666, 0o620, 0o602])
def test_entry_file_writable_by_others_is_not_loaded(tmp_path, mode):
    d = tmp_path / "c"
    c, k = _stored(d)
    os.chmod(c.entry_path(k), mode)
    got, msgs = _get(d, k)
    assert got is None
    assert msgs, "refusing an entry must say so"


def test_private_dir_with_private_entry_still_loads(tmp_path):
    d = tmp_path / "c"
    c, k = _stored(d)
    assert stat.S_IMODE(os.stat(d).st_mode) & 0o022 == 0
    assert stat.S_IMODE(os.stat(c.entry_path(k)).st_mode) & 0o022 == 0
    got, msgs = _get(d, k)
    assert got == b"trusted payload" and not msgs


def test_entry_in_a_world_writable_subdirectory_is_not_loaded(tmp_path):
    d = tmp_path / "c"
    c, k = _stored(d)
    os.chmod(os.path.dirname(c.entry_path(k)), 0o777)
    got, msgs = _get(d, k)
    assert got is None
