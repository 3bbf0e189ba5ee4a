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

from pykern.runtime.cache import safe_fs as cache_fs
from pykern.runtime.cache import store as cache_store
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
@pytest.mark.parametrize("rel", _FILES + _DIRS, ids=lambda rel: rel.replace(f".{os.getpid()}", ".<pid>"))  # one id in every process
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

ROOT = Path(__file__).resolve().parents[3]

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
from pykern.codegen.cpu import tiers as cpu_tiers
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


# ------------------------------------------------------------------- bounds


def test_leftovers_of_killed_writers_are_swept_everywhere_and_nothing_else(tmp_path):
    """A writer killed mid-write leaves a temp file (entries, v1, index, the root's
    CACHEDIR.TAG), a compile marker or a renamed stats log: swept once an hour old, so
    crashes cannot pile files up; files of the user's that merely look alike stay."""
    c = _populated(tmp_path)
    root = tmp_path / "c"
    sub = root / "v1" / "entries" / D[:2]
    stale = [root / ".tmp-99-0123456789ab", root / "v1" / ".tmp-99-0123456789ac",
             root / "v1" / "index" / ".tmp-99-0123456789ad", sub / ".tmp-99-0123456789ae",
             sub / f"{D}.building.7", root / "v1" / "stats.log.4242"]
    fresh = [root / "v1" / ".tmp-98-0123456789ab", sub / ".tmp-98-0123456789ab"]
    users = [root / ".tmp-notes.txt", root / "my.building.plan"]
    old = time.time() - 7200
    for p in stale + fresh + users:
        p.write_bytes(b"half")
        os.chmod(p, 0o600)
    for p in stale + users:
        os.utime(p, (old, old))
    c.evict()  # runs after every put
    assert [p.name for p in stale if p.exists()] == []
    assert all(p.exists() for p in fresh + users)
    assert c.get(KEY) == b"payload"


def test_explain_index_is_bounded_by_file_count(tmp_path, monkeypatch):
    """One explain-miss file per kernel name ever cached, outside ``max_bytes``: a
    session generating kernels of new names must not grow it without limit."""
    monkeypatch.setattr(cache_store, "_INDEX_MAX_FILES", 5)
    c = KernelCache(tmp_path / "c")
    for i in range(12):
        assert c.put(_key(f"m.k{i}"), b"x")
        path = tmp_path / "c" / "v1" / "index" / KernelCache._index_name(f"m.k{i}")
        os.utime(path, (time.time() - 100 + i,) * 2)  # distinct ages on coarse clocks
    names = os.listdir(tmp_path / "c" / "v1" / "index")
    assert len(names) <= 6  # the cap, plus the newest written after the last sweep
    assert KernelCache._index_name("m.k11") in names


def test_entry_count_and_size_stay_under_the_cap_with_many_entries(tmp_path):
    c = KernelCache(tmp_path / "c", max_bytes=20_000)
    for i in range(60):
        assert c.put(_key(f"m.k{i}"), os.urandom(1500))
    info = c.info()
    assert info["bytes"] <= 20_000 and info["entries"] < 15
    leftovers = [n for _, _, ns in os.walk(tmp_path / "c") for n in ns if n.startswith(".tmp-")]
    assert leftovers == []


# ---------------------------------------------- the key: a stale hit is a wrong answer

NOTEBOOK = r'''
import itertools, json, linecache, sys, textwrap, warnings
warnings.simplefilter("error", category=UserWarning)  # a cache warning here would be a bug
import numpy as np
import pykern as cuda
from pykern.codegen.cpu import tiers as cpu_tiers
cuda.set_target("cpu")
ns = {"__name__": "__main__", "cuda": cuda, "np": np}
serial = itertools.count()
results = []

def cell(text):
    name = f"<notebook-cell-{next(serial)}>"
    text = textwrap.dedent(text)
    linecache.cache[name] = (len(text), None, text.splitlines(True), name)
    exec(compile(text, name, "exec"), ns)

def check(kname, expected, label):
    a = np.arange(16, dtype=np.float64)
    ns[kname][1, 16](a)
    cpu_tiers.wait_all(300)  # stored now, so the next process can hit
    ov = next(iter(ns[kname].overloads.values()))
    results.append({"label": label, "ok": bool(np.array_equal(a, expected(np.arange(16.0)))),
                    "from_cache": ov.from_cache})

KERNEL = """
@cuda.jit
def k(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = f(a[i]) + OFF
"""
cell("SCALE = 2.0\nOFF = 1.0\n@cuda.jit(device=True)\ndef f(x):\n    return x * SCALE\n")
cell(KERNEL); check("k", lambda x: x * 2 + 1, "first")
cell("@cuda.jit(device=True)\ndef f(x):\n    return x * SCALE + 100.0\n")
cell(KERNEL); check("k", lambda x: x * 2 + 101, "device function redefined")
cell("def g(x):\n    return x\n")  # an unrelated new function: changes nothing
cell("SCALE = 3.0\n")
cell(KERNEL); check("k", lambda x: x * 3 + 101, "global read by the device function changed")
cell("OFF = np.float64(5.0)\n")
cell(KERNEL); check("k", lambda x: x * 3 + 105, "global read by the kernel changed (numpy scalar)")
cell("@cuda.jit(device=True)\ndef h(x):\n    return x - 1000.0\n@cuda.jit(device=True)\ndef f(x):\n    return h(x) * SCALE\n")
cell(KERNEL); check("k", lambda x: (x - 1000) * 3 + 5, "device function now calls another")
cell("@cuda.jit(device=True)\ndef h(x):\n    return x - 7.0\n")
cell(KERNEL); check("k", lambda x: (x - 7) * 3 + 5, "callee of a callee redefined")
cell("""
def make(c):
    @cuda.jit
    def kc(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = a[i] * c
    return kc
""")
for c in (2.0, 3.0, -1.0):
    ns["kc"] = ns["make"](c)
    check("kc", lambda x, c=c: x * c, f"closure constant {c}")
for opts in ("", "fastmath=True", "opt=False", "debug=True, opt=False", "lineinfo=True"):
    cell(f"@cuda.jit({opts})\ndef kf(a):\n    i = cuda.grid(1)\n    if i < a.size:\n        a[i] = a[i] * 0.5 + 0.25\n")
    check("kf", lambda x: x * 0.5 + 0.25, f"options ({opts})")
from pykern.runtime.cache import default_cache
print(json.dumps({"results": results, "entries": len(default_cache().entries())}))
'''


def _notebook_session(cache: Path, **env_extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1", PYKERN_CACHE_DIR=str(cache),
               PYKERN_BUILD_ID="attack-test", PYKERN_TARGET="cpu", **env_extra)
    for k in ("PYKERN_CACHE", "PYKERN_CACHE_MAX_BYTES"):
        env.pop(k, None)
    p = subprocess.run([sys.executable, "-c", NOTEBOOK], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def notebook_cache(tmp_path_factory):
    """The cache of a first session, and what that session saw."""
    cache = tmp_path_factory.mktemp("notebook") / "cache"
    return cache, _notebook_session(cache)


def test_a_notebook_session_redefining_device_functions_and_globals_never_hits_stale(notebook_cache):
    """Cells redefine a device function, a callee of a callee, globals the kernel and its
    device function read, a closure constant and the jit options: every re-run kernel cell
    gives the new answer, in the session that compiled it and in a second session that
    replays the cells against the first one's cache (where every kernel is a disk hit)."""
    cache, first = notebook_cache
    assert [r["label"] for r in first["results"] if not r["ok"]] == []
    assert not any(r["from_cache"] for r in first["results"])
    assert first["entries"] == len(first["results"])  # every variant has its own entry
    second = _notebook_session(cache)
    assert [r["label"] for r in second["results"] if not r["ok"]] == []
    assert all(r["from_cache"] for r in second["results"]), second


def test_an_environment_variable_that_changes_the_code_changes_every_key(notebook_cache):
    cache, first = notebook_cache
    other = _notebook_session(cache, PYKERN_CPU_WAVESIZE="32")
    assert [r["label"] for r in other["results"] if not r["ok"]] == []
    assert not any(r["from_cache"] for r in other["results"])
    assert other["entries"] == 2 * first["entries"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="a link owned by another uid needs root")
def test_cache_root_swapped_for_a_foreign_link_after_the_check_is_refused(tmp_path, monkeypatch):
    """A cache root in a shared, world-writable directory: another user replaces the directory by a link to a
    private directory of ours between the look and the open; it must not be followed."""
    victims = Victims(tmp_path)
    real = tmp_path / "was-a-dir"
    real.mkdir(mode=0o700)
    root = tmp_path / "c"
    root.symlink_to(victims.dir, target_is_directory=True)
    os.lchown(root, 65534, 65534)
    genuine_lstat = os.lstat
    monkeypatch.setattr(cache_fs.os, "lstat", lambda p, *a, **k: genuine_lstat(real if str(p) == str(root) else p))
    _, messages = _every_operation(KernelCache(root))
    assert any("pykern cache disabled" in m for m in messages), messages
    victims.assert_untouched()


# ------------------------------------------------ careless set-ups: compile, warn once


def test_a_full_or_read_only_disk_warns_once_and_still_hits(tmp_path, monkeypatch):
    c = _populated(tmp_path)

    def full(*a, **k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(cache_fs, "create_exclusive", full)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for i in range(5):  # what a compile does: claim, then store
            key = _key(f"m.new{i}")
            assert c.get(key) is None
            with c.compiling(key) as claim:
                assert not claim.held
                assert c.put(key, b"new") is False
        assert c.get(KEY) == b"payload"  # what is there still serves
    messages = [str(x.message) for x in w if issubclass(x.category, CacheWarning)]
    assert len(messages) == 1 and "No space left" in messages[0] and "reported once" in messages[0], messages


@pytest.mark.parametrize("home", ["", "relative/dir"])
def test_home_not_absolute_never_puts_the_cache_in_the_working_directory(tmp_path, monkeypatch, home):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", home)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    d = cache_store.default_cache_dir()
    assert os.path.isabs(d) and d != "/.cache/pykern"  # the password database's home
    import pwd

    def no_entry(uid):
        raise KeyError(uid)

    monkeypatch.setattr(pwd, "getpwuid", no_entry)
    assert cache_store.default_cache_dir() == ""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        c = KernelCache()
        assert not c.enabled and c.put(KEY, b"x") is False and c.get(KEY) is None
        KernelCache()
    assert len([x for x in w if "PYKERN_CACHE_DIR" in str(x.message)]) == 1
    assert os.listdir(tmp_path) == []


# ------------------------------------------------------------------ concurrency

import multiprocessing  # noqa: E402
import signal  # noqa: E402

_PAYLOADS = [bytes([i]) * (1000 + 70_000 * i) for i in range(4)]


def _keep_replacing(directory, seconds):
    c = KernelCache(directory)
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        c.put(KEY, _PAYLOADS[i % len(_PAYLOADS)])
        i += 1


def test_a_reader_never_sees_a_partial_entry_while_another_process_replaces_it(tmp_path):
    c = _populated(tmp_path)
    c.put(KEY, _PAYLOADS[0])
    writer = multiprocessing.get_context("fork").Process(target=_keep_replacing, args=(tmp_path / "c", 1.0))
    writer.start()
    seen = set()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        while writer.is_alive():
            got = c.get(KEY)
            assert got in _PAYLOADS, [str(x.message) for x in w]
            seen.add(len(got))
    writer.join()
    assert writer.exitcode == 0
    assert [str(x.message) for x in w] == []
    assert len(seen) >= 2  # the reader did overlap the writer
    assert len(list((tmp_path / "c" / "v1" / "entries" / D[:2]).glob("*.pkc"))) == 1


def _killed_mid_write(directory):
    def half_then_die(fd, data):
        os.write(fd, data[: len(data) // 2])
        os.kill(os.getpid(), signal.SIGKILL)

    cache_fs._write_all = half_then_die
    KernelCache(directory).put(KEY, _PAYLOADS[3])


def test_a_process_killed_mid_write_leaves_the_old_entry_and_a_swept_temp_file(tmp_path):
    c = _populated(tmp_path)
    p = multiprocessing.get_context("fork").Process(target=_killed_mid_write, args=(tmp_path / "c",))
    p.start()
    p.join()
    assert p.exitcode == -signal.SIGKILL
    sub = tmp_path / "c" / "v1" / "entries" / D[:2]
    (tmp,) = sub.glob(".tmp-*")  # the half-written file, invisible under the entry's name
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert c.get(KEY) == b"payload"
    old = time.time() - 7200
    os.utime(tmp, (old, old))
    c.evict()
    assert not tmp.exists() and c.get(KEY) == b"payload"


def test_a_bad_entry_replaced_by_a_good_one_while_judged_is_not_removed(tmp_path, monkeypatch):
    """The reader removes the bad file it read, never the good one a writer renamed over
    it meanwhile (which the next get hits)."""
    c = _populated(tmp_path)
    entry = tmp_path / "c" / "v1" / "entries" / D[:2] / f"{D}{ENTRY_SUFFIX}"
    entry.write_bytes(entry.read_bytes()[:-3])  # truncated
    genuine = cache_fs.read_file

    def read_then_writer_publishes(*a, **k):
        data = genuine(*a, **k)
        if a[1] == entry.name:
            KernelCache(tmp_path / "c").put(KEY, b"good again")
        return data

    monkeypatch.setattr(cache_fs, "read_file", read_then_writer_publishes)
    with pytest.warns(CacheWarning, match="discarding bad entry"):
        assert c.get(KEY) is None
    monkeypatch.setattr(cache_fs, "read_file", genuine)
    assert c.get(KEY) == b"good again"


# ------------------------------------------- entries that do not verify, or verify oddly

import struct  # noqa: E402

from pykern.runtime.cache.store import FORMAT_VERSION, MAGIC, _encode_entry  # noqa: E402


def _raw(version=b"attack", key_json=None, payload=b"p", plen=None, vlen=None, klen=None, fmt=FORMAT_VERSION):
    import hashlib

    k = (KEY.json if key_json is None else key_json).encode() if not isinstance(key_json, bytes) else key_json
    return b"".join((struct.pack("<8sHH", MAGIC, fmt, len(version) if vlen is None else vlen), version,
                     struct.pack("<I", len(k) if klen is None else klen), k, hashlib.sha256(payload).digest(),
                     struct.pack("<Q", len(payload) if plen is None else plen), payload))


def _version():
    from pykern.runtime.cache.key import pykern_identity

    return pykern_identity()["version"].encode()


_ODD = {
    "zero-length": lambda: b"",
    "random bytes": lambda: os.urandom(3000),
    "magic only": lambda: MAGIC,
    "huge version length": lambda: _raw(_version(), vlen=65535),
    "huge key length": lambda: _raw(_version(), klen=2**32 - 1),
    "huge payload length": lambda: _raw(_version(), plen=2**64 - 1),
    "payload shorter than said": lambda: _raw(_version(), plen=5),
    "key not UTF-8": lambda: _raw(_version(), key_json=b"\xff\xfe{"),
    "key JSON a list": lambda: _raw(_version(), key_json="[1, 2]"),
    "key JSON with odd field types": lambda: _raw(_version(), key_json=json.dumps(
        {"name": ["x"], "signature": {"a": 1}, "target": "cpu"})),
    "another pykern version": lambda: _raw(b"0.0.0-other"),
    "another entry format": lambda: _raw(_version(), fmt=FORMAT_VERSION + 1),
    "another key's entry renamed into place": lambda: _encode_entry(_key("m.other"), b"other", _version().decode()),
}


@pytest.mark.parametrize("what", sorted(_ODD))
def test_an_odd_entry_is_a_miss_that_is_removed_and_listing_survives_it(tmp_path, what):
    c = _populated(tmp_path)
    entry = tmp_path / "c" / "v1" / "entries" / D[:2] / f"{D}{ENTRY_SUFFIX}"
    entry.write_bytes(_ODD[what]())
    assert len(c.entries()) == 1  # `pykern cache list` does not crash on it
    assert list(c.raw_entries()) == []  # never exported
    with pytest.warns(CacheWarning, match="discarding bad entry"):
        assert c.get(KEY) is None
    assert not entry.exists()
    assert c.put(KEY, b"again") and c.get(KEY) == b"again"


@pytest.mark.parametrize("what", ["key JSON a list", "key not UTF-8", "random bytes"])
def test_import_of_a_bundle_with_an_odd_entry_skips_it(tmp_path, what):
    import io
    import tarfile

    from pykern.runtime.cache.bundle import ARCHIVE_ROOT, import_cache

    archive = tmp_path / "b.tgz"
    data = _ODD[what]()
    with tarfile.open(archive, "w:gz") as tf:
        info = tarfile.TarInfo(f"{ARCHIVE_ROOT}/entries/{D}.pkc")
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    c = KernelCache(tmp_path / "c")
    report = import_cache(c, archive)
    assert report.imported == 0 and len(report.skipped) == 1 and "corrupted" in report.skipped[0][1]
    assert c.get(KEY) is None


def test_side_files_too_big_to_be_ours_are_removed_unread(tmp_path, monkeypatch):
    """A sparse file planted at a stats, index or file-hash path must not be read into
    memory (each hit appends to the stats log, and folding it reads it all)."""
    c = _populated(tmp_path)
    monkeypatch.setattr(cache_store, "_SIDE_MAX_BYTES", 1000)
    root = tmp_path / "c" / "v1"
    planted = [root / "stats.log", root / "stats.json", root / "filehash.json",
               root / "index" / KernelCache._index_name("m.k")]
    for p in planted:
        with open(p, "wb") as f:
            f.truncate(5000)
    c2 = KernelCache(tmp_path / "c")
    c2.persistent_stats()
    c2.file_digest(__file__)
    c2._layout_op(lambda d: c2._load_index(d, "m.k"), None)
    assert c2.enabled and c2.get(KEY) == b"payload"
    assert [p.name for p in planted if p.exists() and p.stat().st_size > 1000] == []


def test_an_entry_too_big_to_be_read_back_is_not_written(tmp_path, monkeypatch):
    """Writing what every later get refuses (and removes) would cost each process a
    compile, a write and a warning: it is not stored, with one warning."""
    monkeypatch.setattr(cache_store, "ENTRY_MAX_BYTES", 4096)
    c = KernelCache(tmp_path / "c")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert c.put(_key("m.big"), b"x" * 5000) is False
        assert c.put(_key("m.big2"), b"x" * 5000) is False
        assert c.put(KEY, b"small") and c.get(KEY) == b"small"
    assert len(w) == 1 and "size limit" in str(w[0].message)
    assert c.info()["entries"] == 1


def test_a_cache_directory_set_to_one_holding_the_users_files_is_not_tagged_as_a_cache(tmp_path):
    """Backup tools skip a directory with CACHEDIR.TAG whole: ``PYKERN_CACHE_DIR=$HOME``
    must not take the user's files out of their backups (nor clear or sweep them)."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "thesis.tex").write_text("years of work")
    c = KernelCache(home)
    assert c.put(KEY, b"x") and c.get(KEY) == b"x"
    c.clear()
    assert sorted(os.listdir(home)) == ["thesis.tex", "v1"]
    fresh = KernelCache(tmp_path / "fresh")
    assert fresh.put(KEY, b"x") and (tmp_path / "fresh" / "CACHEDIR.TAG").exists()
