"""The kernel cache attacked at every path it creates or opens, and misused by a
careless user: nothing outside the cache directory is read, written,
truncated, chmod'ed or touched; bad entries are misses that are removed; side
files stay bounded; kernels still compile and give the right answer.

Complements ``test_cache_hardening.py`` (path components swapped mid-operation,
a second uid) with an exhaustive sweep over the layout's file names.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import time
import warnings

import pytest

from pykern.runtime import cache_fs, cache_store
from pykern.runtime.cache import ENTRY_SUFFIX, CacheKey, CacheWarning, KernelCache

pytestmark = pytest.mark.skipif(not (hasattr(os, "geteuid") and cache_fs.SUPPORTED),
                                reason="POSIX directory fds (openat/unlinkat) needed")


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    for k in ("PYKERN_CACHE", "PYKERN_CACHE_MAX_BYTES", "PYKERN_CACHE_EXPLAIN", "PYKERN_CACHE_DIR"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("PYKERN_BUILD_ID", "attack-test")
    cache_store._warned_dirs.clear()


def _key(name="m.k") -> CacheKey:
    return CacheKey({"name": name, "signature": "(float32[:],)", "source": name})


KEY = _key()
D = KEY.digest


class Victims:
    """A file and a directory of the user's, outside the cache, with their full
    state recorded: content, mode, mtime, link count, listing."""

    def __init__(self, tmp_path):
        self.file = tmp_path / "victim.txt"
        self.file.write_bytes(b"precious\n")
        os.chmod(self.file, 0o600)
        self.dir = tmp_path / "victimdir"
        self.dir.mkdir(mode=0o700)
        (self.dir / "keep.txt").write_bytes(b"keep")
        old = time.time() - 100000
        os.utime(self.file, (old, old))
        os.utime(self.dir / "keep.txt", (old, old))
        self.before = self._state()

    def _state(self):
        def one(p):
            st = os.lstat(p)
            return (p.read_bytes() if p.is_file() else None, stat.S_IMODE(st.st_mode), st.st_mtime_ns)
        return (one(self.file), stat.S_IMODE(os.lstat(self.dir).st_mode), sorted(os.listdir(self.dir)),
                one(self.dir / "keep.txt"))

    def assert_untouched(self):
        assert self._state() == self.before


def _every_operation(c: KernelCache):
    """Every store operation, warnings recorded; returns (payload got, messages)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        got = c.get(KEY)
        with c.compiling(KEY) as claim:
            if claim.held:
                c.put(KEY, b"fresh")
        c.put(_key("m.other"), b"more")
        c.get(_key("m.absent"))
        c.file_digest(__file__)
        c._layout_op(c._compact_stats, None)
        c.evict()
        c.info()
        c.entries()
        list(c.raw_entries())
        c.persistent_stats()
        c.clear()
    return got, [str(x.message) for x in w]


def _populated(tmp_path) -> KernelCache:
    c = KernelCache(tmp_path / "c")
    assert c.put(KEY, b"payload") and c.get(KEY) == b"payload"
    with c.compiling(_key("m.tmp")):
        pass
    c.file_digest(__file__)  # filehash.json
    c._layout_op(c._compact_stats, None)  # stats.json
    return c


#: every file name the cache creates or opens, relative to the cache directory
_FILES = ["CACHEDIR.TAG", "v1/stats.log", "v1/stats.json", f"v1/stats.log.{os.getpid()}", "v1/filehash.json",
          f"v1/index/{KernelCache._index_name('m.k')}", f"v1/entries/{D[:2]}/{D}{ENTRY_SUFFIX}",
          f"v1/entries/{D[:2]}/{D}.building.1", f"v1/entries/{D[:2]}/{D}.building.2"]
_DIRS = ["v1", "v1/entries", f"v1/entries/{D[:2]}", "v1/index"]


def _plant(path, how, victims):
    if path.is_dir() and not path.is_symlink():
        path.rename(path.with_name(path.name + ".moved"))
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if how == "symlink-file":
        path.symlink_to(victims.file)
    elif how == "symlink-dir":
        path.symlink_to(victims.dir, target_is_directory=True)
    elif how == "hardlink":
        os.link(victims.file, path)


@pytest.mark.parametrize("how", ["symlink-file", "symlink-dir", "hardlink"])
@pytest.mark.parametrize("rel", _FILES + _DIRS)
def test_a_link_at_any_cache_path_reaches_nothing_outside(tmp_path, rel, how):
    if how == "hardlink" and rel in _DIRS:
        pytest.skip("directories cannot be hard-linked")
    victims = Victims(tmp_path)
    c = _populated(tmp_path)
    _plant(tmp_path / "c" / rel, how, victims)
    c2 = KernelCache(tmp_path / "c")  # a fresh process's view
    got, _ = _every_operation(c2)
    assert got in (None, b"payload")  # never the victim's bytes
    victims.assert_untouched()
    if how == "hardlink":  # the victim keeps its other name only if the cache unlinked its own
        assert os.stat(victims.file).st_nlink in (1, 2)


def test_cache_root_that_is_a_symlink_to_a_file_is_refused(tmp_path):
    victims = Victims(tmp_path)
    root = tmp_path / "c"
    root.symlink_to(victims.file)
    _, messages = _every_operation(KernelCache(root))
    assert any("pykern cache disabled" in m and "not a directory" in m.lower() for m in messages), messages
    victims.assert_untouched()


# ------------------------------------------- entries that verify but are not usable code

import dataclasses  # noqa: E402
import pickle  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

KERNEL_MODULE = '''
import pykern as cuda

@cuda.jit
def k(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = i * 2.0 + 1.0
'''

RUN = '''
import json, sys, warnings
warnings.simplefilter("always")
import numpy as np
import pykern
pykern.set_target("cpu")
sys.path.insert(0, sys.argv[1])
import attackmod
a = np.zeros(64)
attackmod.k[1, 64](a)
from pykern.codegen import cpu_tiers
cpu_tiers.wait_all(300)  # the O3 build stores the entry after the launch
from pykern.runtime.cache import default_cache
ov = next(iter(attackmod.k.overloads.values()))
print(json.dumps({"ok": bool(np.array_equal(a, np.arange(64) * 2.0 + 1.0)), "from_cache": ov.from_cache,
                  "stats": default_cache().stats}))
'''


def run_kernel_process(src: Path, cache: Path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1", PYKERN_CACHE_DIR=str(cache),
               PYKERN_BUILD_ID="attack-test", PYKERN_TARGET="cpu")
    for k in ("PYKERN_CACHE", "PYKERN_CACHE_MAX_BYTES"):
        env.pop(k, None)
    p = subprocess.run([sys.executable, "-c", RUN, str(src)], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


@pytest.fixture(scope="module")
def compiled_once(tmp_path_factory):
    """A module with one kernel and a cache holding its entry (compiled once per module)."""
    base = tmp_path_factory.mktemp("attack")
    src = base / "src"
    src.mkdir()
    (src / "attackmod.py").write_text(KERNEL_MODULE)
    cache = base / "cache"
    out, _ = run_kernel_process(src, cache)
    assert out["ok"] and not out["from_cache"]
    return src, cache


def _only_entry(cache: Path):
    c = KernelCache(cache)
    (entry,) = c.entries()
    key = CacheKey(entry.key)
    return c, key, pickle.loads(c.get(key))


def _foreign_elf() -> bytes:
    """A real shared object of this machine with its ELF machine field changed (aarch64 or x86-64)."""
    import ctypes.util

    data = bytearray(Path(sys.executable).read_bytes()[:4096])
    machine = int.from_bytes(data[18:20], "little")
    data[18:20] = (183 if machine != 183 else 62).to_bytes(2, "little")
    return bytes(data)


_UNUSABLE = {
    "garbage code object": lambda art: dataclasses.replace(art, shared_object=b"\x7fELF-not-really" * 64,
                                                           binary=b"junk"),
    "ELF for another machine": lambda art: dataclasses.replace(art, shared_object=_foreign_elf()),
    "empty code object, garbage relocatable": lambda art: dataclasses.replace(art, shared_object=b"",
                                                                               binary=b"junk" * 16),
    "truncated relocatable object": lambda art: dataclasses.replace(art, shared_object=b"",
                                                                    binary=art.binary[:len(art.binary) // 2]),
    "not a kernel artifact": lambda art: {"name": art.name, "binary": art.binary},
    "None payload": lambda art: None,
}


@pytest.mark.parametrize("damage", sorted(_UNUSABLE))
def test_an_entry_whose_code_cannot_be_used_is_a_miss_and_is_replaced(compiled_once, tmp_path, damage):
    """A checksummed entry whose payload is not loadable code (a damaged or foreign code
    object, another object altogether): the kernel is recompiled and gives the right answer,
    the bad entry is replaced by a good one (the next process hits), with one warning."""
    src, cache0 = compiled_once
    cache = tmp_path / "cache"
    shutil.copytree(cache0, cache)
    c, key, art = _only_entry(cache)
    assert c.put(key, pickle.dumps(_UNUSABLE[damage](art)))
    out, err = run_kernel_process(src, cache)
    assert out["ok"], err
    assert err.count("discarding bad entry") == 1, err
    again, err2 = run_kernel_process(src, cache)
    assert again["ok"] and again["from_cache"] and "discarding" not in err2, err2
