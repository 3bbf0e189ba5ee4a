"""KernelCache storage in one process: keys, entry format checks, housekeeping.

(The same behaviours across real processes are in test_cache_process.py.)
"""

from __future__ import annotations

import json
import logging
import os
import stat
import time

import pytest

from pykern.runtime import cache as cache_mod
from pykern.runtime.cache import store as cache_store
from pykern.runtime.cache import CacheKey, CacheWarning, KernelCache, default_cache, default_cache_dir, diff_parts, parse_age, parse_size

FP = {"name": "m.k", "source": "src:abc", "globals": {"N": "int:4"}, "callees": {},
      "location": {"file": "/x/m.py", "line": 3}}


pytestmark = pytest.mark.usefixtures("cache_env")


def key_for(c: KernelCache, **changes) -> CacheKey:
    fp = {**FP, **changes.pop("fp", {})}
    kw = dict(signature="(float32[:],)", target="cpu", options={"opt": 3, "debug": False})
    kw.update(changes)
    return c.make_key(fp, **kw)


def test_key_digest_is_canonical_and_keeps_the_parts():
    a = CacheKey({"name": "m.k", "x": (1, 2), "y": {"b": 1, "a": 2}})
    b = CacheKey({"y": {"a": 2, "b": 1}, "x": [1, 2], "name": "m.k"})
    assert a == b and a.digest == b.digest and len(a.digest) == 64
    assert a.parts["x"] == [1, 2] and a.name == "m.k"
    assert CacheKey({"name": "m.k", "x": [1, 3]}).digest != a.digest


def test_make_key_parts(tmp_path):
    c = KernelCache(tmp_path / "c")
    k = key_for(c)
    for part in ("name", "source", "globals", "callees", "signature", "target", "options", "pykern", "llvm",
                 "python", "devlibs"):
        assert part in k.parts, part
    assert "location" not in k.parts  # line numbers matter only to debug builds
    assert "location" in key_for(c, options={"debug": True}).parts
    assert k.parts["target"]["host"]  # cpu code is built for this host
    assert k.parts["pykern"]["build"] == "test-build"
    assert "llvmlite" in k.parts["llvm"]
    amd = key_for(c, target="amdgpu", arch="gfx90a:xnack-")
    assert amd.parts["target"] == {"name": "amdgpu", "arch": "gfx90a:xnack-"}
    assert key_for(c, target="amdgpu", arch="gfx90a:xnack+").digest != amd.digest


def test_devlibs_are_content_hashed_and_memoised(tmp_path):
    lib = tmp_path / "ocml.bc"
    lib.write_bytes(b"BC\xc0\xde" + b"1" * 1000)
    c = KernelCache(tmp_path / "c")
    k1 = key_for(c, target="amdgpu", arch="gfx942", devlibs=[lib])
    assert c.file_digest(str(lib)) == k1.parts["devlibs"]["ocml.bc"]
    # A new process reads the memo instead of the file.
    memo = json.loads((tmp_path / "c" / "v1" / "filehash.json").read_text())
    assert memo[str(lib)][-1] == k1.parts["devlibs"]["ocml.bc"]
    lib.write_bytes(b"BC\xc0\xde" + b"2" * 1000)  # same size: an upgrade of the libs
    os.utime(lib, ns=(time.time_ns() + 10**9,) * 2)
    k2 = key_for(KernelCache(tmp_path / "c"), target="amdgpu", arch="gfx942", devlibs=[lib])
    assert k2.digest != k1.digest
    assert diff_parts(k1.parts, k2.parts) == ["devlibs.ocml.bc"]


def test_round_trip_and_entry_layout(tmp_path):
    c = KernelCache(tmp_path / "c")
    k = key_for(c)
    assert c.get(k) is None
    assert c.put(k, b"payload\x00bytes")
    assert c.get(k) == b"payload\x00bytes"
    path = c.entry_path(k)
    data = open(path, "rb").read()
    assert data.startswith(cache_mod.MAGIC)
    assert k.json.encode() in data  # the full key travels with the entry
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "c").st_mode) == 0o700
    assert (tmp_path / "c" / "CACHEDIR.TAG").exists()
    assert c.stats["hits"] == 1 and c.stats["misses"] == 1 and c.stats["writes"] == 1
    info = KernelCache(tmp_path / "c").info()
    assert (info["hits"], info["misses"], info["writes"], info["entries"]) == (1, 1, 1, 1)


def test_another_key_in_the_entry_file_is_refused(tmp_path):
    c = KernelCache(tmp_path / "c")
    k1, k2 = key_for(c), key_for(c, signature="(float64[:],)")
    c.put(k2, b"other kernel")
    os.replace(c.entry_path(k2), c.entry_path(k1) if os.path.isdir(os.path.dirname(c.entry_path(k1)))
               else _mkdir_for(c.entry_path(k1)))
    with pytest.warns(CacheWarning, match="stored key differs"):
        assert c.get(k1) is None
    assert not os.path.exists(c.entry_path(k1))


def _mkdir_for(path):
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    return path


@pytest.mark.parametrize("damage,why", [
    (lambda b: b[: len(b) // 2], "truncated"),
    (lambda b: b[:-1] + bytes([b[-1] ^ 1]), "checksum"),
    (lambda b: b"", "empty file"),
    (lambda b: b + b"x", "padded"),
    (lambda b: b[:10], "truncated"),
])
def test_damaged_entry_is_discarded_with_warning(tmp_path, damage, why):
    c = KernelCache(tmp_path / "c")
    k = key_for(c)
    c.put(k, b"p" * 100)
    path = c.entry_path(k)
    with open(path, "rb") as f:
        damaged = damage(f.read())
    with open(path, "wb") as f:
        f.write(damaged)
    with pytest.warns(CacheWarning, match=why):
        assert c.get(k) is None
    assert not os.path.exists(path) and c.stats["corrupt"] == 1
    assert c.put(k, b"p" * 100) and c.get(k) == b"p" * 100


def test_discard_for_an_unusable_payload(tmp_path):
    c = KernelCache(tmp_path / "c")
    k = key_for(c)
    c.put(k, b"not a pickle")
    with pytest.warns(CacheWarning, match="does not unpickle"):
        c.discard(k, "does not unpickle")
    assert c.get(k) is None


def test_explain_names_the_changed_part(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("PYKERN_CACHE_EXPLAIN", "1")
    c = KernelCache(tmp_path / "c")
    with caplog.at_level(logging.INFO, logger="pykern.cache"):
        c.get(key_for(c))
        assert "no kernel of this name was cached before" in caplog.text
        c.put(key_for(c), b"x")
        c.put(key_for(c, signature="(int32[:],)"), b"y")
        caplog.clear()
        c.get(key_for(c, fp={"callees": {"m.f": {"source": "src:new", "globals": {}}}}))
        assert "changed: callees.m.f (added)" in caplog.text
        caplog.clear()
        c.get(key_for(c, fp={"globals": {"N": "int:5"}}))
        assert "changed: globals.N" in caplog.text and "signature" not in caplog.text
        c.clear()
        caplog.clear()
        c.put(key_for(c), b"x")
        os.unlink(c.entry_path(key_for(c)))
        c.get(key_for(c))
        assert "evicted or cleared" in caplog.text


def test_clear_and_older_than(tmp_path):
    c = KernelCache(tmp_path / "c")
    keys = [key_for(c, signature=f"(int{b}[:],)") for b in (8, 16, 32)]
    for k in keys:
        c.put(k, b"x" * 10)
    old = time.time() - 10 * 86400
    os.utime(c.entry_path(keys[0]), (old, old))
    assert c.clear(older_than_seconds=parse_age("7d")) == 1
    assert [os.path.exists(c.entry_path(k)) for k in keys] == [False, True, True]
    assert c.clear() == 2 and c.entries() == []


def test_evict_keeps_recently_used(tmp_path):
    c = KernelCache(tmp_path / "c", max_bytes=-1)  # no automatic eviction while filling
    keys = [key_for(c, signature=f"(int{b}[:],)") for b in (8, 16, 32, 64)]
    for i, k in enumerate(keys):
        c.put(k, b"x" * 1000)
        os.utime(c.entry_path(k), ns=(time.time_ns() - (10 - i) * 10**9,) * 2)  # used in this order
    c.get(keys[0])  # now the most recent
    size = os.path.getsize(c.entry_path(keys[0]))
    c.max_bytes = 2 * size + 10
    assert c.evict() == 2
    assert [os.path.exists(c.entry_path(k)) for k in keys] == [True, False, False, True]
    assert c.info()["evicted"] == 2


def test_stale_temp_files_are_swept(tmp_path):
    c = KernelCache(tmp_path / "c")
    k = key_for(c)
    c.put(k, b"x")
    d = os.path.dirname(c.entry_path(k))
    stale, fresh = os.path.join(d, ".tmp-123-" + "a" * 12), os.path.join(d, ".tmp-124-" + "b" * 12)
    for p in (stale, fresh):
        open(p, "wb").write(b"half")
    os.utime(stale, (time.time() - 7200,) * 2)
    c.evict()
    assert not os.path.exists(stale) and os.path.exists(fresh)


def test_stats_log_is_compacted(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_store, "_STATS_COMPACT_BYTES", 50)
    c = KernelCache(tmp_path / "c")
    k = key_for(c)
    c.put(k, b"x")
    for _ in range(120):
        c.get(k)
    assert (tmp_path / "c" / "v1" / "stats.json").exists()
    assert os.path.getsize(tmp_path / "c" / "v1" / "stats.log") <= 51
    assert c.info()["hits"] == 120 and c.info()["writes"] == 1


def test_disabled_by_env(tmp_path, monkeypatch):
    monkeypatch.setenv("PYKERN_CACHE", "off")
    c = KernelCache(tmp_path / "c")
    assert not c.enabled and "PYKERN_CACHE" in c.disabled_reason
    assert c.put(key_for(c), b"x") is False and c.get(key_for(c)) is None
    assert not (tmp_path / "c").exists()


def test_insecure_dir_is_refused_once(tmp_path):
    d = tmp_path / "open"
    d.mkdir()
    os.chmod(d, 0o777)
    c = KernelCache(d)
    with pytest.warns(CacheWarning, match="writable by group or others"):
        assert c.get(key_for(c)) is None
    assert not c.enabled
    assert c.put(key_for(c), b"x") is False
    assert list(d.iterdir()) == []


def test_default_dir_and_env(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == str(tmp_path / "xdg" / "pykern")
    monkeypatch.setenv("PYKERN_CACHE_DIR", str(tmp_path / "mine"))
    monkeypatch.setenv("PYKERN_CACHE_MAX_BYTES", "2MiB")
    c = default_cache()
    assert c.directory == str(tmp_path / "mine") and c.max_bytes == 2 << 20
    assert default_cache() is c
    monkeypatch.setenv("PYKERN_CACHE_DIR", str(tmp_path / "other"))
    assert default_cache().directory == str(tmp_path / "other")


def test_parsers_and_diff():
    assert parse_size("1GiB") == 1 << 30 and parse_size("500M") == 500_000_000 and parse_size("12") == 12
    assert parse_age("45s") == 45 and parse_age("1.5h") == 5400 and parse_age("90") == 90
    for bad in ("lots", "1 parsec"):
        with pytest.raises(ValueError):
            parse_size(bad)
    assert diff_parts({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}}) == ["a.c (added)"]
    assert diff_parts({"a": 1}, {"a": 1}) == []


def test_garbage_in_side_files_is_survived(tmp_path, monkeypatch):
    monkeypatch.setenv("PYKERN_CACHE_EXPLAIN", "1")
    c = KernelCache(tmp_path / "c")
    k = key_for(c)
    c.put(k, b"x")
    root = tmp_path / "c" / "v1"
    for f in [root / "stats.json", root / "filehash.json", *(root / "index").iterdir()]:
        f.write_bytes(b"\x00not json[")
    (root / "stats.log").write_bytes(b"hhzz")
    c2 = KernelCache(tmp_path / "c")
    assert c2.get(k) == b"x"
    assert c2.get(key_for(c2, signature="(int8[:],)")) is None
    lib = tmp_path / "lib.bc"
    lib.write_bytes(b"bc")
    assert len(c2.file_digest(str(lib))) == 64
    assert c2.info()["hits"] == 3  # two from the log we scribbled on, one now
    assert c2.put(k, b"y") and c2.get(k) == b"y"


def test_symlinked_entry_is_not_followed(tmp_path):
    c = KernelCache(tmp_path / "c")
    k = key_for(c)
    c.put(k, b"real")
    elsewhere = tmp_path / "planted.pkc"
    os.replace(c.entry_path(k), elsewhere)
    os.symlink(elsewhere, c.entry_path(k))
    with pytest.warns(CacheWarning, match="symbolic link"):
        assert c.get(k) is None
    assert not os.path.lexists(c.entry_path(k)) and elsewhere.exists()
