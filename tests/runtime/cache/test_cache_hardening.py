"""The kernel cache under a symlink attack (issue 10): nothing is written,
appended, renamed or deleted outside the cache, whatever a path component was
swapped for, and kernels still run.

The trust check of the cache directory used to happen once per process; a
component replaced later by a symlink then redirected writes (``v1/stats.log``
-> a root-only file) and ``clear()`` (``v1/index`` -> another directory).  Now
every operation walks directory fds opened with ``O_NOFOLLOW`` and checks each
at use.  Two kinds of test:

* symlinks planted by the test itself (any user): the no-follow rules alone;
* a real second uid (``nobody``), when the suite runs as root as CI does: the
  attacker is a forked child that dropped to uid 65534 and plants its links
  through a directory fd after the victim (root) checked the cache and a
  directory of it became writable.  Skipped, with the reason, when not root.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

from pykern.runtime.cache import safe_fs as cache_fs
from pykern.runtime.cache import store as cache_store
from pykern.runtime.cache import CacheKey, CacheWarning, KernelCache

pytestmark = pytest.mark.skipif(not (hasattr(os, "geteuid") and cache_fs.SUPPORTED),
                                reason="POSIX directory fds (openat/unlinkat) needed")
NOBODY = 65534
needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="a second uid needs root (CI runs the suite as root)")


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    for k in ("PYKERN_CACHE", "PYKERN_CACHE_MAX_BYTES", "PYKERN_CACHE_EXPLAIN"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("PYKERN_BUILD_ID", "hardening-test")
    cache_store._warned_dirs.clear()


def _key(name="m.k") -> CacheKey:
    return CacheKey({"name": name, "signature": "(float32[:],)", "source": name})


def _victims(tmp_path):
    """A root-only secret file and a directory of precious files, outside the cache."""
    secret = tmp_path / "secret"
    secret.write_bytes(b"root only\n")
    os.chmod(secret, 0o600)
    precious = tmp_path / "precious"
    precious.mkdir()
    for n in ("a.txt", "0" * 32 + ".json", "f" * 64 + ".pkc"):
        (precious / n).write_bytes(b"keep me")
    return secret, precious


def _untouched(secret, precious):
    assert secret.read_bytes() == b"root only\n"
    assert sorted(p.name for p in precious.iterdir()) == sorted(["a.txt", "0" * 32 + ".json", "f" * 64 + ".pkc"])
    assert all(p.read_bytes() == b"keep me" for p in precious.iterdir())


def _populated(tmp_path):
    d = tmp_path / "c"
    c = KernelCache(d)
    k = _key()
    assert c.put(k, b"payload") and c.get(k) == b"payload"  # trust checked, layout made
    return d, c, k


def _use_everything(c: KernelCache, k: CacheKey):
    """Every store operation once, warnings collected."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = c.get(k)
        c.put(_key("m.other"), b"more")
        c.get(_key("m.absent"))
        c.evict()
        c.info()
        c.entries()
        c.clear()
    return got, [str(x.message) for x in w]


def _replace_with_link(path, target):
    if path.is_dir() and not path.is_symlink():
        path.rename(path.with_name(path.name + ".moved"))
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target)


# ------------------------------------------------------- same-user symlinks


def test_stats_log_symlink_is_never_appended_to(tmp_path):
    secret, precious = _victims(tmp_path)
    d, c, k = _populated(tmp_path)
    _replace_with_link(d / "v1" / "stats.log", secret)
    _, msgs = _use_everything(c, k)  # the same object: its first check was long ago
    _untouched(secret, precious)
    assert any("symbolic link" in m for m in msgs), msgs
    assert not c.enabled and "stats.log" in c.disabled_reason


def test_clear_through_index_symlink_deletes_nothing_outside(tmp_path):
    secret, precious = _victims(tmp_path)
    d, c, k = _populated(tmp_path)
    _replace_with_link(d / "v1" / "index", precious)
    _use_everything(c, k)
    _untouched(secret, precious)
    # a fresh process-like object refuses too
    assert KernelCache(d).clear() == 0
    _untouched(secret, precious)


@pytest.mark.parametrize("component", ["v1", "v1/entries"])
def test_layout_directory_symlink_disables_the_cache(tmp_path, component):
    secret, precious = _victims(tmp_path)
    d, c, k = _populated(tmp_path)
    # the link target even looks like a cache layout, with an entry to delete
    (precious / "entries" / "ff").mkdir(parents=True)
    (precious / "entries" / "ff" / ("f" * 64 + ".pkc")).write_bytes(b"keep me")
    (precious / "index").mkdir()
    (precious / "index" / ("1" * 32 + ".json")).write_bytes(b"keep me")
    _replace_with_link(d / component, precious if component == "v1" else precious / "entries")
    got, msgs = _use_everything(c, k)
    assert got is None
    assert any("symbolic link" in m for m in msgs), msgs
    assert (precious / "entries" / "ff" / ("f" * 64 + ".pkc")).read_bytes() == b"keep me"
    assert (precious / "index" / ("1" * 32 + ".json")).read_bytes() == b"keep me"
    assert not list((precious / "entries").glob("*/*.tmp*")) and secret.read_bytes() == b"root only\n"
    assert not c.enabled


def test_entry_subdirectory_symlink_is_ignored_and_replaced(tmp_path):
    secret, precious = _victims(tmp_path)
    d, c, k = _populated(tmp_path)
    sub = d / "v1" / "entries" / k.digest[:2]
    (precious / (k.digest + ".pkc")).write_bytes(b"keep me")
    _replace_with_link(sub, precious)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert c.get(k) is None  # an entry through a link is not loaded
        assert c.put(k, b"fresh")  # the link is removed (not followed), a real directory made
        assert c.get(k) == b"fresh"
        c.clear()
    assert any("symbolic link" in str(x.message) for x in w)
    assert (precious / (k.digest + ".pkc")).read_bytes() == b"keep me"
    assert sub.is_dir() and not sub.is_symlink()
    assert secret.read_bytes() == b"root only\n" and (precious / "a.txt").read_bytes() == b"keep me"


def test_entry_file_symlink_is_not_read_and_put_replaces_the_link(tmp_path):
    secret, precious = _victims(tmp_path)
    d, c, k = _populated(tmp_path)
    entry = d / "v1" / "entries" / k.digest[:2] / (k.digest + ".pkc")
    good = entry.read_bytes()
    target = tmp_path / "forged"
    target.write_bytes(good)  # even a valid entry is not loaded through a link
    _replace_with_link(entry, target)
    with pytest.warns(CacheWarning, match="symbolic link"):
        assert c.get(k) is None
    assert not entry.is_symlink() and target.read_bytes() == good  # the link went, not its target
    _replace_with_link(entry, secret)
    assert c.put(k, b"new")
    assert not entry.is_symlink() and c.get(k) == b"new"
    assert secret.read_bytes() == b"root only\n"


def test_hard_link_to_a_foreign_file_is_not_appended(tmp_path):
    secret, precious = _victims(tmp_path)
    d, c, k = _populated(tmp_path)
    log = d / "v1" / "stats.log"
    log.unlink()
    os.link(secret, log)
    _use_everything(c, k)
    assert secret.read_bytes() == b"root only\n"
    assert not c.enabled and "hard links" in c.disabled_reason


def test_component_swapped_between_check_and_use(tmp_path, monkeypatch):
    """The victim checked ``v1`` and holds its fd; the attacker swaps the path
    right then.  Appends, writes and unlinks land in the checked directory
    (moved away), never in the link's target."""
    secret, precious = _victims(tmp_path)
    d, c, k = _populated(tmp_path)
    v1 = d / "v1"
    swapped = []

    def swap_then(real):
        def run(*a, **kw):
            if not swapped:
                v1.rename(d / "v1.moved")
                v1.symlink_to(precious)
                swapped.append(True)
            return real(*a, **kw)
        return run

    for name in ("append", "write_atomic", "unlink", "scan", "read_file"):
        swapped.clear()
        monkeypatch.setattr(cache_fs, name, swap_then(getattr(cache_fs, name)))
        c2 = KernelCache(d)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c2.get(k)
            c2.put(_key("m.x"), b"x")
            c2.clear()
        monkeypatch.undo()
        monkeypatch.setenv("PYKERN_BUILD_ID", "hardening-test")
        _untouched(secret, precious)
        if swapped:  # restore the layout for the next operation
            v1.unlink()
            (d / "v1.moved").rename(v1)


def test_kernel_still_runs_with_an_attacked_cache(tmp_path, monkeypatch, cpu_target):
    import pykern

    secret, precious = _victims(tmp_path)
    d = tmp_path / "c"
    monkeypatch.setenv("PYKERN_CACHE_DIR", str(d))

    @pykern.jit
    def twice(a, out):
        i = pykern.grid(1)
        if i < a.size:
            out[i] = a[i] * 2

    @pykern.jit
    def thrice(a, out):
        i = pykern.grid(1)
        if i < a.size:
            out[i] = a[i] * 3

    a = np.arange(8, dtype=np.float32)
    out = np.zeros_like(a)
    twice[1, 8](a, out)  # the cache is made and used
    np.testing.assert_array_equal(out, a * 2)
    _replace_with_link(d / "v1" / "index", precious)
    _replace_with_link(d / "v1" / "stats.log", secret)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        thrice[1, 8](a, out)  # a miss: lookup, compile, store, all through the attacked layout
    np.testing.assert_array_equal(out, a * 3)
    assert any(issubclass(x.category, CacheWarning) for x in w)
    _untouched(secret, precious)


@needs_root
def test_cache_dir_symlink_owned_by_another_user_is_refused(tmp_path):
    """The configured directory may be a symlink (users move ~/.cache), but not
    one someone else planted: their link could point at any directory of ours."""
    real = tmp_path / "mine"
    real.mkdir(mode=0o700)
    link = tmp_path / "c"
    link.symlink_to(real)
    os.lchown(link, NOBODY, NOBODY)
    with pytest.warns(CacheWarning, match="symbolic link owned by uid 65534"):
        assert not KernelCache(link).put(_key(), b"x")
    assert list(real.iterdir()) == []
    os.lchown(link, 0, 0)
    cache_store._warned_dirs.clear()
    assert KernelCache(link).put(_key(), b"x")


# ------------------------------------------------------- a real second uid


def _as_nobody(dir_fd: int, steps) -> None:
    """Run ``steps(dir_fd)`` in a forked child that dropped to uid/gid nobody
    (it reaches the cache only through the inherited fd: the test's tmp dirs
    are private to root)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        code = 1
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            steps(dir_fd)
            code = 0
        except BaseException as exc:
            os.write(2, f"attacker failed: {exc!r}\n".encode())
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the attacker's steps failed"


def _open_dir(path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY)


@needs_root
@pytest.mark.parametrize("restored", [False, True], ids=["dir-still-writable", "dir-mode-restored"])
def test_second_uid_links_stats_log_and_index(tmp_path, restored):
    """Root's cache, checked; ``v1`` becomes writable by others for a while
    (a careless chmod); nobody swaps ``stats.log`` for a link to a root-only
    file and ``index`` for a link to root's directory."""
    secret, precious = _victims(tmp_path)
    d, c, k = _populated(tmp_path)
    os.chmod(d / "v1", 0o777)
    fd = _open_dir(d / "v1")

    def attack(v1):
        os.unlink("stats.log", dir_fd=v1)
        os.symlink(str(secret), "stats.log", dir_fd=v1)
        os.rename("index", "index.old", src_dir_fd=v1, dst_dir_fd=v1)
        os.symlink(str(precious), "index", dir_fd=v1)

    try:
        _as_nobody(fd, attack)
    finally:
        os.close(fd)
    assert os.lstat(d / "v1" / "stats.log").st_uid == NOBODY
    if restored:
        os.chmod(d / "v1", 0o700)
    got, msgs = _use_everything(c, k)  # the long-lived object: checked before the attack
    # the entry itself is still root's own and private: it may load before the
    # stats append trips; with v1 writable by others nothing is read at all
    assert got == (b"payload" if restored else None)
    assert any("symbolic link" in m or "writable by group or others" in m for m in msgs), msgs
    assert not c.enabled
    _untouched(secret, precious)
    fresh = KernelCache(d)  # a new one (warned once per directory already)
    assert _use_everything(fresh, k)[0] == (b"payload" if restored else None) and not fresh.enabled
    _untouched(secret, precious)


@needs_root
def test_second_uid_forged_entry_is_not_loaded(tmp_path):
    """nobody, given a writable entry directory, replaces an entry with a
    byte-identical file of its own (a valid checksum: the checksum detects
    corruption, not tampering):
    root does not load it."""
    secret, precious = _victims(tmp_path)
    d, c, k = _populated(tmp_path)
    sub = d / "v1" / "entries" / k.digest[:2]
    good = (sub / (k.digest + ".pkc")).read_bytes()
    os.chmod(sub, 0o777)
    fd = _open_dir(sub)

    def attack(dfd):
        os.unlink(k.digest + ".pkc", dir_fd=dfd)
        f = os.open(k.digest + ".pkc", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=dfd)
        os.write(f, good)
        os.close(f)

    try:
        _as_nobody(fd, attack)
    finally:
        os.close(fd)
    os.chmod(sub, 0o700)  # even with the directory private again
    with pytest.warns(CacheWarning, match="owned by uid 65534"):
        assert KernelCache(d).get(k) is None
    assert not (sub / (k.digest + ".pkc")).exists()  # discarded
    assert c.put(k, b"payload") and KernelCache(d).get(k) == b"payload"


@needs_root
def test_second_uid_swaps_the_entry_directory_during_clear(tmp_path):
    """The cache's ``entries`` directory became writable; nobody swaps an entry
    subdirectory for a link to root's directory before root clears.  Nothing
    outside is deleted."""
    secret, precious = _victims(tmp_path)
    d, c, k = _populated(tmp_path)
    for i in range(5):
        c.put(_key(f"m.k{i}"), b"x")
    entries = d / "v1" / "entries"
    os.chmod(entries, 0o777)
    fd = _open_dir(entries)
    sub = k.digest[:2]
    (precious / (k.digest + ".pkc")).write_bytes(b"keep me")

    def attack(dfd):
        os.rename(sub, sub + ".old", src_dir_fd=dfd, dst_dir_fd=dfd)
        os.symlink(str(precious), sub, dir_fd=dfd)

    try:
        _as_nobody(fd, attack)
    finally:
        os.close(fd)
    os.chmod(entries, 0o700)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        n = KernelCache(d).clear()
    assert n == 5  # the other entries went; the one behind the link was never followed
    assert (precious / (k.digest + ".pkc")).read_bytes() == b"keep me"
    assert (precious / "a.txt").read_bytes() == b"keep me" and secret.read_bytes() == b"root only\n"


# ------------------------------------------------------- FIFOs where files belong


def _without_hanging(fn, seconds=30.0):
    """``fn()``'s result; fails (instead of hanging the suite) if it blocks."""
    import threading

    out = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "a cache operation blocked on a FIFO"
    return out[0]


def test_fifo_at_an_entry_or_layout_file_never_blocks(tmp_path):
    # opening a FIFO for reading waits for a writer: one planted at an entry path (or at the
    # stats log, the file-hash memo or the index) must be refused, not waited on
    d, c, k = _populated(tmp_path)
    entry = d / "v1" / "entries" / k.digest[:2] / (k.digest + ".pkc")
    entry.unlink()
    os.mkfifo(entry, 0o600)
    with pytest.warns(CacheWarning, match="not a regular file"):
        assert _without_hanging(lambda: c.get(k)) is None
    assert not entry.exists()  # discarded
    for name in ("stats.log", "filehash.json"):
        p = d / "v1" / name
        if p.exists():
            p.unlink()
        os.mkfifo(p, 0o600)
    c2 = KernelCache(d)
    got, _ = _without_hanging(lambda: _use_everything(c2, k))
    assert got is None
    lib = tmp_path / "lib.bc"
    lib.write_bytes(b"device library")
    assert len(_without_hanging(lambda: KernelCache(d).file_digest(str(lib)))) == 64  # reads the filehash memo


@pytest.mark.parametrize("garbage", [b"\x00{", b"[1, 2]", b'{"hits": "x", "misses": null}', b'{"hits": 1e999}',
                                     b'{"hits": -5, "bogus": 3, "misses": 2}'])
def test_garbled_stats_file_loses_only_its_counts(tmp_path, garbage):
    d, c, k = _populated(tmp_path)
    (d / "v1" / "stats.json").write_bytes(garbage)
    os.chmod(d / "v1" / "stats.json", 0o600)
    stats = KernelCache(d).persistent_stats()
    assert all(type(v) is int and v >= 0 for v in stats.values()) and "bogus" not in stats
    assert stats["misses"] == (2 if b'"misses": 2' in garbage else 0)
    assert KernelCache(d).get(k) == b"payload"


def test_huge_file_at_an_entry_path_is_discarded_unread(tmp_path, monkeypatch):
    # a sparse file costs the attacker nothing; reading it whole would exhaust memory
    d, c, k = _populated(tmp_path)
    entry = d / "v1" / "entries" / k.digest[:2] / (k.digest + ".pkc")
    with open(entry, "r+b") as f:
        f.truncate(cache_store.ENTRY_MAX_BYTES + 1)
    reads = []
    real_read = os.read
    monkeypatch.setattr(cache_fs.os, "read", lambda fd, n: reads.append(n) or real_read(fd, n))
    with pytest.warns(CacheWarning, match="more than"):
        assert c.get(k) is None
    assert not reads  # refused at the stat, before any byte was read
    monkeypatch.undo()
    assert not entry.exists() or entry.stat().st_size <= cache_store.ENTRY_MAX_BYTES
    assert c.put(k, b"fresh") and c.get(k) == b"fresh"
