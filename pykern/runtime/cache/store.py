"""The kernel cache's store: entry files on disk, the explain-miss index,
LRU eviction, hit/miss statistics and compile-once claims between processes.

The store keeps opaque payloads under a :class:`~pykern.runtime.cache.key.CacheKey`
(what makes a key lives in :mod:`pykern.runtime.cache.key`); the dispatcher
pickles its kernel artifacts into them.

Why it is built this way:

* Entries are written to a temporary file and renamed, so readers see either
  nothing or a whole entry; concurrent writers of one key both write a valid
  file and the last rename wins.  Atomic rename and ``O_EXCL`` creation are the
  only synchronisation (both hold on NFS), so a shared cache directory works
  across machines and nothing can deadlock after a crash.
* Several processes that miss on one key compile it once: the first creates an
  ``O_EXCL`` marker ``<digest>.building.1`` (pid, host, time) beside the entry and
  compiles; the others wait for the entry, bounded by ``PYKERN_CACHE_WAIT``
  (default 120 s) per holder, and take a marker over at once when its holder
  died on this host, or after the bound otherwise (see :meth:`KernelCache.compiling`).
* Each entry carries its full key and a sha256 of its payload; anything that
  does not verify is discarded with a :class:`CacheWarning` and recompiled.
  The checksum detects corruption, not tampering: entries are trusted because
  the directory and files are this user's own and private (0700/0600), which
  is checked on every use without following symlinks (:mod:`.safe_fs`).
* Hit/miss/compile counts are one appended byte per event (``O_APPEND`` writes
  are atomic), folded into a small JSON file now and then.

This module must stay cheap to import: no numpy, no llvmlite.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import stat
import struct
import sys
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping

from pykern.core import settings
from pykern.core.settings import parse_age, parse_size  # noqa: F401  (this package's public names)
from pykern.runtime.cache import safe_fs as fs
from pykern.runtime.cache.safe_fs import Untrusted
from pykern.runtime.cache.key import CacheKey, build_key, diff_parts, file_sha256, pykern_identity

__all__ = ["KernelCache", "CacheEntry", "CacheWarning", "default_cache_dir", "cache_enabled_by_env",
           "parse_size", "parse_age"]

#: Bumped when the entry layout changes; old entries then live in another subdir.
FORMAT_VERSION = 1
MAGIC = b"PYKCACHE"
DEFAULT_MAX_BYTES = settings.default("PYKERN_CACHE_MAX_BYTES")
DEFAULT_WAIT_SECONDS = settings.default("PYKERN_CACHE_WAIT")
_UNREADABLE_MARKER_GRACE = 2.0  # seconds an empty or garbled compile marker is given
ENTRY_SUFFIX = ".pkc"
#: no kernel's entry comes near this; a bigger file at an entry's path (a sparse file planted
#: there, one growing while read) is discarded unread instead of filling memory
ENTRY_MAX_BYTES = 256 << 20
MARKER_SUFFIX = ".building"
_STALE_TMP_SECONDS = 3600.0
_STATS_COMPACT_BYTES = 64 * 1024
_INDEX_KEYS_PER_NAME = 16
_ENTRY_RE = re.compile(r"[0-9a-f]{64}" + re.escape(ENTRY_SUFFIX))
_INDEX_RE = re.compile(r"[0-9a-f]{32}\.json")
_INDEX_MAX_FILES = 1000
_OURS_RE = re.compile(r"v\d+|CACHEDIR\.TAG")  # what the cache root holds (a layout version per subdirectory)
_SIDE_MAX_BYTES = 16 << 20  # index, stats and file-hash files are kilobytes
#: what a writer killed mid-write may leave: a temp file of ``write_atomic``, a compile
#: marker, the stats log renamed by the process folding it (names this cache makes and
#: nothing else: a cache directory set to one of the user's own holds other files)
_LEFTOVER_RE = re.compile(re.escape(fs.TMP_PREFIX) + r"\d+-[0-9a-f]{12}|[0-9a-f]{64}" + re.escape(MARKER_SUFFIX)
                          + r"\.\d+|stats\.log\.\d+")


class CacheWarning(UserWarning):
    """Something in the kernel cache was wrong and was worked around (never fatal)."""


# ------------------------------------------------------------- environment knobs


def cache_enabled_by_env() -> bool:
    """False when ``PYKERN_CACHE`` says off (``off``, ``0``, ``false``, ``no``, ...: ``settings.OFF_WORDS``)."""
    return settings.get("PYKERN_CACHE")


def _explain_enabled() -> bool:
    return settings.get("PYKERN_CACHE_EXPLAIN")


def default_cache_dir() -> str:
    """``$PYKERN_CACHE_DIR``, else the platform's per-user cache dir + ``pykern``.

    Linux: ``$XDG_CACHE_HOME/pykern`` or ``~/.cache/pykern``; macOS:
    ``~/Library/Caches/pykern``; Windows: ``%LOCALAPPDATA%\\pykern\\Cache``;
    "" when there is no absolute home directory (the cache is then off).
    """
    explicit = settings.get("PYKERN_CACHE_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
        return os.path.join(base, "pykern", "Cache")
    home = _home()
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Caches", "pykern") if home else ""
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "pykern")
    return os.path.join(home, ".cache", "pykern") if home else ""


def _home() -> str:
    """The user's home directory, absolute, or "" (then there is no default cache
    directory): ``HOME`` set to "" or a relative path must not put a cache in
    ``/.cache`` or whatever directory a process happens to start in; the password
    database is asked instead."""
    home = os.environ.get("HOME", "")
    if not os.path.isabs(home):  # unset, "" (which expanduser makes "/") or relative
        try:
            import pwd

            home = pwd.getpwuid(os.getuid()).pw_dir
        except (ImportError, KeyError):
            return ""
    return home if os.path.isabs(home) else ""


def _max_bytes_from_env() -> int:
    return settings.get("PYKERN_CACHE_MAX_BYTES")


#: digest -> Event of the thread of this process that claims it now (see ``compiling``)
_local_claims: dict = {}
_local_claims_lock = threading.Lock()


def _release_local(digest: str, event) -> None:
    if event is None:
        return
    with _local_claims_lock:
        if _local_claims.get(digest) is event:
            del _local_claims[digest]
    event.set()


def _wait_seconds() -> float:
    return settings.get("PYKERN_CACHE_WAIT")


# ------------------------------------------------------------------ entry format
# MAGIC | u16 format | u16 len + pykern version | u32 len + key json | sha256(payload) | u64 len | payload

_HEAD = struct.Struct("<8sHH")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")


class _BadEntry(Exception):
    pass


def _encode_entry(key: CacheKey, payload: bytes, version: str) -> bytes:
    v = version.encode()
    k = key.json.encode()
    return b"".join((
        _HEAD.pack(MAGIC, FORMAT_VERSION, len(v)), v, _U32.pack(len(k)), k,
        hashlib.sha256(payload).digest(), _U64.pack(len(payload)), payload,
    ))


def _decode_header(data: bytes) -> tuple[str, str, int]:
    """(pykern version, key json, offset of the sha256 field); raises _BadEntry."""
    if len(data) < _HEAD.size:
        raise _BadEntry("empty or truncated header" if data else "empty file")
    magic, fmt, vlen = _HEAD.unpack_from(data, 0)
    if magic != MAGIC:
        raise _BadEntry("bad magic (not a pykern cache entry)")
    if fmt != FORMAT_VERSION:
        raise _BadEntry(f"entry format {fmt}, expected {FORMAT_VERSION}")
    pos = _HEAD.size
    version = data[pos:pos + vlen]
    pos += vlen
    if len(data) < pos + _U32.size:
        raise _BadEntry("truncated header")
    (klen,) = _U32.unpack_from(data, pos)
    pos += _U32.size
    if len(data) < pos + klen:
        raise _BadEntry("truncated key")
    try:
        return version.decode(), data[pos:pos + klen].decode(), pos + klen
    except UnicodeDecodeError:
        raise _BadEntry("garbled header") from None


def _verify_entry(data: bytes) -> tuple[str, bytes]:
    """(key json, payload) of a whole entry this pykern may use; raises _BadEntry."""
    version, key_json, payload = _decode_entry(data)
    if version != pykern_identity()["version"]:
        raise _BadEntry(f"written by pykern {version!r}, this is {pykern_identity()['version']!r}")
    return key_json, payload


def _decode_entry(data: bytes) -> tuple[str, str, bytes]:
    """(pykern version, key json, payload) of a whole entry; raises _BadEntry."""
    version, key_json, pos = _decode_header(data)
    if len(data) < pos + 32 + _U64.size:
        raise _BadEntry("truncated checksum")
    checksum = data[pos:pos + 32]
    (plen,) = _U64.unpack_from(data, pos + 32)
    payload = data[pos + 32 + _U64.size:]
    if len(payload) != plen:
        raise _BadEntry(f"payload is {len(payload)} bytes, header says {plen} (truncated or padded)")
    if hashlib.sha256(payload).digest() != checksum:
        raise _BadEntry("payload checksum mismatch (corrupted)")
    return version, key_json, payload



# ------------------------------------------------------------------ the store


@dataclass
class CacheEntry:
    """One stored kernel, as listed by :meth:`KernelCache.entries`."""

    path: str
    digest: str
    size: int
    last_used: float  # seconds since the epoch (file mtime, bumped on every hit)
    name: str = "?"
    signature: str = "?"
    target: str = "?"
    valid: bool = True
    problem: str = ""
    key: dict = field(default_factory=dict)


@dataclass
class Claim:
    """What :meth:`KernelCache.compiling` found: ``held`` -- this process
    holds the key's marker and should compile; ``ready`` -- the entry exists
    (another process published it: read it with ``get``); neither -- compile
    without a claim (the cache could not be used for it)."""

    held: bool = False
    ready: bool = False
    waited: float = 0.0
    nonce: str = ""
    marker: str = ""
    #: markers of the generations this claim took over: removed with its own on release
    superseded: tuple = ()


_warned_dirs: set[str] = set()
_warned_io: set[tuple] = set()
_EVENT_NAMES = {b"h": "hits", b"m": "misses", b"w": "writes", b"c": "corrupt", b"e": "evicted",
                b"b": "compiles", b"i": "imported"}


class KernelCache:
    """A directory of compiled kernels.

    ``KernelCache()`` uses :func:`default_cache_dir`; ``enabled`` is False (and
    ``get``/``put`` do nothing) when ``PYKERN_CACHE=off`` or when the directory
    cannot be trusted, with ``disabled_reason`` saying why.

    >>> c = KernelCache(os.path.expanduser("~/.cache/pykern"))            # doctest: +SKIP
    >>> c.put(key, b"bytes"); c.get(key)             # doctest: +SKIP
    b'bytes'
    """

    def __init__(self, directory: str | os.PathLike | None = None, *, max_bytes: int | None = None,
                 enabled: bool | None = None):
        self.directory = os.path.abspath(os.fspath(directory)) if directory else default_cache_dir()
        self.max_bytes = _max_bytes_from_env() if max_bytes is None else int(max_bytes)
        self._root = os.path.join(self.directory, f"v{FORMAT_VERSION}")
        self._entries_dir = os.path.join(self._root, "entries")
        self.disabled_reason = "" if (enabled if enabled is not None else cache_enabled_by_env()) \
            else "disabled by PYKERN_CACHE=off"
        if not self.disabled_reason and not fs.SUPPORTED:
            self.disabled_reason = "this platform lacks the no-follow directory calls the cache relies on"
        if not self.disabled_reason and not self.directory:
            self._disable("no home directory to keep it in (HOME is not an absolute path); set PYKERN_CACHE_DIR")
        self._filehash: dict[str, list] | None = None
        self._held: set[str] = set()
        self.touched: set[str] | None = None  # digests used, while :meth:`tracking`
        self.stats = {name: 0 for name in _EVENT_NAMES.values()}

    # ---- trust: every operation opens and checks the directories it uses ----

    @property
    def enabled(self) -> bool:
        return not self.disabled_reason

    def _open(self, create: bool) -> fs.Dirs | None:
        """The checked fds of the cache root and ``v1`` (``d.v1``), or None when
        the cache is off, absent (and not ``create``) or untrustworthy (then it
        is disabled with a warning)."""
        if self.disabled_reason:
            return None
        d = None
        try:
            d = fs.Dirs(self.directory, create)
            d.v1 = d.sub(d.root, f"v{FORMAT_VERSION}", create)
            if create and not fs.exists(d.root, "CACHEDIR.TAG") and _only_ours(d.root):
                fs.write_atomic(d.root, "CACHEDIR.TAG", b"Signature: 8a477f597d28d172789f06886806bc55\n"
                                b"# This directory is a cache of compiled kernels made by pykern.\n")
            return d
        except OSError as exc:  # Untrusted is one
            if d is not None:
                d.close()
            if isinstance(exc, Untrusted):
                self._disable(f"refusing cache directory {self.directory}: {exc}")
            elif not isinstance(exc, FileNotFoundError):
                self._disable(f"cannot use {self.directory}: {exc}")
            elif create:
                self._disable(f"cannot create {self.directory}")
            return None

    def _usable(self, create: bool) -> bool:
        d = self._open(create)
        if d is None:
            return False
        d.close()
        return True

    def _disable(self, reason: str) -> bool:
        self.disabled_reason = reason
        if self.directory not in _warned_dirs:
            _warned_dirs.add(self.directory)
            warnings.warn(f"pykern cache disabled: {reason}", CacheWarning, stacklevel=4)
        return False

    def _warn_once(self, doing: str, exc: OSError) -> None:
        """Warn of a failed write once per directory and errno: a full or read-only
        disk fails every write, and a session compiling all day must not repeat it."""
        tag = (self.directory, exc.errno)
        if tag not in _warned_io:
            _warned_io.add(tag)
            warnings.warn(f"pykern cache: cannot {doing} in {self.directory}: {exc.strerror or exc}; new kernels "
                          "are compiled but not cached (reported once)", CacheWarning, stacklevel=5)

    def _distrust(self, exc: OSError) -> None:
        """A file or directory of the cache's own layout failed a check at use
        (a symlink, not ours, writable by others): stop using the cache."""
        self._disable(f"refusing cache directory {self.directory}: {exc}")

    def _entries(self, d: fs.Dirs, create: bool = False) -> int:
        try:
            return d.child(d.v1, "entries", create)
        except Untrusted as exc:
            self._distrust(exc)
            raise

    def _entry_dir(self, d: fs.Dirs, digest: str, create: bool) -> int:
        entries = self._entries(d, create)
        try:
            return d.sub(entries, digest[:2], create)
        except Untrusted as exc:
            # something else sits where the entry subdirectory belongs: remove
            # the directory entry itself (never what a link points to)
            if create and not stat.S_ISDIR(os.stat(digest[:2], dir_fd=entries, follow_symlinks=False).st_mode):
                warnings.warn(f"pykern cache: replacing {digest[:2]} in {self._entries_dir}: {exc}", CacheWarning,
                              stacklevel=4)
                fs.unlink(entries, digest[:2])
                return d.sub(entries, digest[:2], create)
            raise

    # ---- keys --------------------------------------------------------------

    def make_key(self, fingerprint: Mapping[str, Any], *, signature: str, target: str,
                 arch: str | None = None, options: Mapping[str, Any] | None = None,
                 devlibs: Iterable[str] = (), extra: Mapping[str, Any] | None = None) -> CacheKey:
        """Build the full key of one compilation.

        ``fingerprint`` comes from :func:`pykern.frontend.fingerprint.fingerprint`;
        ``signature`` is the argument-type signature as a string; ``arch`` the
        full target id (``"gfx90a:xnack-"``); ``options`` every compile option
        that changes code (opt, fastmath, debug, code_object_version,
        wave_size, ...); ``devlibs`` the paths of the device libraries linked
        (content-hashed, memoised by size/mtime/ctime); ``extra`` any further parts.
        Source locations are part of the key only for ``debug``/``lineinfo``
        builds, whose code embeds line numbers.
        """
        return build_key(fingerprint, signature=signature, target=target, arch=arch, options=options,
                         devlibs=devlibs, extra=extra, file_digest=self.file_digest)

    def file_digest(self, path: str) -> str:
        """sha256 of a file's content, remembered by (size, mtime, inode, ctime) so that
        new processes do not re-read megabytes of device libraries (ctime: an edit in place
        that restores the mtime still moves it)."""
        real = os.path.realpath(path)
        try:
            st = os.stat(real)
        except OSError:
            return "missing"
        stamp = [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]
        if self._filehash is None:
            self._filehash = {}
            d = self._open(create=False)
            if d is not None:
                with d:
                    loaded = self._read_side(d.v1, "filehash.json")
                    if isinstance(loaded, dict):
                        self._filehash = loaded
        memo = self._filehash.get(real)
        if isinstance(memo, list) and len(memo) == len(stamp) + 1 and memo[:-1] == stamp:
            return memo[-1]
        digest = file_sha256(real)
        if digest == "unreadable":
            return digest
        self._filehash[real] = stamp + [digest]
        d = self._open(create=True)
        if d is not None:
            with d:
                try:
                    fs.write_atomic(d.v1, "filehash.json", json.dumps(self._filehash).encode())
                except OSError:
                    pass
        return digest

    # ---- get / put ---------------------------------------------------------

    def entry_path(self, key: CacheKey) -> str:
        """Where ``key``'s entry lives (informational: the store itself never
        opens this path, it walks directory fds)."""
        return os.path.join(self._entries_dir, key.digest[:2], key.digest + ENTRY_SUFFIX)

    def get(self, key: CacheKey) -> bytes | None:
        """The payload stored under ``key``, or None (miss, disabled, or a bad
        entry that was discarded with a :class:`CacheWarning`)."""
        d = self._open(create=True)
        if d is None:
            if self.disabled_reason and _explain_enabled():
                _explain(key, self.disabled_reason)
            return None
        with d:
            name = key.digest + ENTRY_SUFFIX
            opened: list = []  # the file judged, so that only it is removed if it is bad
            try:
                sub = self._entry_dir(d, key.digest, create=False)
                data = fs.read_file(sub, name, touch=True, limit=ENTRY_MAX_BYTES, opened=opened)  # mtime: LRU
            except FileNotFoundError:
                self._miss(d, key, None)
                return None
            except Untrusted as exc:
                if not self.enabled:  # the layout itself failed its check
                    return None
                self._reject(d, key.digest, str(exc), opened[0] if opened else None)
                self._miss(d, key, f"entry was discarded: {exc}")
                return None
            except OSError as exc:
                warnings.warn(f"pykern cache: cannot read {self.entry_path(key)}: {exc}", CacheWarning,
                              stacklevel=2)
                self._miss(d, key, f"unreadable entry: {exc}")
                return None
            try:
                key_json, payload = _verify_entry(data)
                if key_json != key.json:
                    raise _BadEntry("stored key differs from the requested key")
            except _BadEntry as exc:
                self._reject(d, key.digest, str(exc), opened[0])
                self._miss(d, key, f"entry was discarded: {exc}")
                return None
            self.stats["hits"] += 1
            self._record(d, b"h")
            if self.touched is not None:
                self.touched.add(key.digest)
            return payload

    def put(self, key: CacheKey, payload: bytes) -> bool:
        """Store ``payload`` under ``key`` atomically; True if stored.  Never
        raises for I/O trouble (full disk, read-only dir): warns instead."""
        return self._put_entry(key, _encode_entry(key, bytes(payload), pykern_identity()["version"]),
                               b"b" if key.digest in self._held else b"")

    def _put_entry(self, key: CacheKey, data: bytes, extra_event: bytes = b"", evict: bool = True) -> bool:
        if len(data) > ENTRY_MAX_BYTES:  # `get` would refuse it: every process would write it again
            self._warn_once("store an entry over the size limit", OSError(errno.EFBIG, f"{len(data)} bytes is "
                            f"more than the {ENTRY_MAX_BYTES} an entry may have"))
            return False
        d = self._open(create=True)
        if d is None:
            return False
        with d:
            try:
                sub = self._entry_dir(d, key.digest, create=True)
                fs.write_atomic(sub, key.digest + ENTRY_SUFFIX, data)
            except OSError as exc:
                self._warn_once("write an entry", exc)
                return False
            self.stats["writes"] += 1
            for letter in extra_event:
                self.stats[_EVENT_NAMES[bytes([letter])]] += 1
            self._record(d, b"w" + extra_event)
            if self.touched is not None:
                self.touched.add(key.digest)
            self._remember(d, key)
        if evict and self.max_bytes >= 0:
            self.evict(keep=key.digest + ENTRY_SUFFIX)
        return True

    def discard(self, key: CacheKey, reason: str) -> None:
        """Remove the entry of ``key`` with a warning: for a payload that the
        caller could not use (e.g. it no longer unpickles)."""
        d = self._open(create=False)
        if d is not None:
            with d:
                self._reject(d, key.digest, reason)

    def _reject(self, d: fs.Dirs, digest: str, reason: str, only: os.stat_result | None = None) -> None:
        """Warn and remove a bad entry (the directory entry itself: a symlink is
        unlinked, never followed; with ``only``, just while it is still that file)."""
        warnings.warn(f"pykern cache: discarding bad entry {digest[:2]}/{digest}{ENTRY_SUFFIX}: {reason}; "
                      "the kernel will be recompiled", CacheWarning, stacklevel=4)
        self.stats["corrupt"] += 1
        self._record(d, b"c")
        try:
            sub = self._entry_dir(d, digest, create=False)
        except Untrusted:
            if self.enabled:
                with contextlib.suppress(OSError):
                    fs.unlink(self._entries(d), digest[:2])
            return
        except OSError:
            return
        fs.unlink(sub, digest + ENTRY_SUFFIX, only)

    def _miss(self, d: fs.Dirs, key: CacheKey, reason: str | None) -> None:
        self.stats["misses"] += 1
        self._record(d, b"m")
        if _explain_enabled():
            _explain(key, reason or self._why_missing(d, key))

    @contextlib.contextmanager
    def tracking(self) -> Iterator[set[str]]:
        """Collect the digests of entries hit or stored inside the block (for
        ``pykern compile --export``).

        >>> with cache.tracking() as used:              # doctest: +SKIP
        ...     pykern.compile(k, sig, arch="gfx942")
        """
        previous, self.touched = self.touched, set()
        try:
            yield self.touched
        finally:
            self.touched = previous

    # ---- compile once across processes ------------------------------------

    @contextlib.contextmanager
    def compiling(self, key: CacheKey) -> Iterator[Claim]:
        """Claim the compilation of ``key`` among the processes sharing this
        cache, for a caller that just missed on it.

        Yields a :class:`Claim`: ``held`` -- compile and :meth:`put` (the put is
        counted as a compile in the stats); ``ready`` -- another process
        published the entry while we waited: :meth:`get` it.  The claim is an
        ``O_EXCL`` marker file ``<digest>.building.<generation>`` beside the
        entry, removed on exit.  A waiter takes a marker over when its holder
        died on this host (pid gone) or after ``PYKERN_CACHE_WAIT`` seconds, by
        creating the next generation with ``O_EXCL``: of several waiters
        exactly one wins, and nothing is deleted to take over (the superseded
        markers go when the new claim ends), so a killed holder blocks others
        at most that long and two live claims never mix.

        >>> with cache.compiling(key) as claim:          # doctest: +SKIP
        ...     payload = cache.get(key) if claim.ready else None
        ...     if payload is None:
        ...         payload = compile_it(); cache.put(key, payload)
        """
        # threads of one process share its pid, which the markers name: they take turns here
        # first (a racing takeover between two of them was seen to leave two holders), then
        # the marker protocol orders this process among the others
        with _local_claims_lock:
            ahead = _local_claims.get(key.digest)
            mine = None
            if ahead is None:
                mine = _local_claims[key.digest] = threading.Event()
        if ahead is not None:
            ahead.wait(_wait_seconds())
        try:
            claim = self._claim(key)
        except BaseException:
            _release_local(key.digest, mine)
            raise
        if claim.held:
            self._held.add(key.digest)
        try:
            yield claim
        finally:
            _release_local(key.digest, mine)
            if claim.held:
                self._held.discard(key.digest)
                d = self._open(create=False)
                if d is not None:
                    with d, contextlib.suppress(OSError):
                        sub = self._entry_dir(d, key.digest, create=False)
                        if _marker_nonce(sub, claim.marker) == claim.nonce:
                            fs.unlink(sub, claim.marker)
                            for name in claim.superseded:
                                fs.unlink(sub, name)

    def _claim(self, key: CacheKey) -> Claim:
        wait = _wait_seconds()
        entry = key.digest + ENTRY_SUFFIX
        nonce = os.urandom(8).hex()
        start = time.monotonic()
        first_seen: dict[str, float] = {}
        delay = 0.005
        while True:
            d = self._open(create=True)
            if d is None:
                return Claim()
            with d:
                try:
                    sub = self._entry_dir(d, key.digest, create=True)
                    if fs.exists(sub, entry):
                        return Claim(ready=True, waited=time.monotonic() - start)
                    gens = _marker_generations(sub, key.digest)
                    top = max(gens, default=0)
                    if top:
                        name = f"{key.digest}{MARKER_SUFFIX}.{top}"
                        try:
                            theirs = json.loads(fs.read_file(sub, name, limit=4096))
                            if not isinstance(theirs, dict):
                                raise ValueError
                        except FileNotFoundError:
                            continue  # released just now: look again
                        except (ValueError, Untrusted):
                            theirs = {}  # unreadable (half-written or tampered): judged by age alone
                        now = time.monotonic()
                        seen = first_seen.setdefault(f"{top}:{theirs.get('nonce')}", now)
                        stale = _marker_stale(theirs, sub, name, now - seen, wait)
                    if not top or stale:
                        mine = f"{key.digest}{MARKER_SUFFIX}.{top + 1}"
                        info = {"pid": os.getpid(), "host": _host_id(), "time": time.time(), "nonce": nonce}
                        try:
                            fs.create_exclusive(sub, mine, json.dumps(info).encode())
                        except FileExistsError:
                            continue  # another waiter won this generation
                        # The superseded markers stay until this claim ends: removed now, a
                        # claimant whose listing predates ours and whose look at them comes
                        # after the removal would find no marker, claim generation 1 and
                        # compile beside us (seen as two compiles of one key under load).
                        superseded = tuple(f"{key.digest}{MARKER_SUFFIX}.{g}" for g in gens)
                        if fs.exists(sub, entry):  # published between our look and our claim
                            for name in (mine, *superseded):
                                fs.unlink(sub, name)
                            return Claim(ready=True, waited=time.monotonic() - start)
                        return Claim(held=True, nonce=nonce, marker=mine, superseded=superseded,
                                     waited=time.monotonic() - start)
                except OSError as exc:
                    self._warn_once("claim a compile among processes", exc)
                    return Claim()
            time.sleep(delay)
            delay = min(delay * 1.5, 0.1)

    # ---- explain-miss index ------------------------------------------------

    @staticmethod
    def _index_name(name: str) -> str:
        return hashlib.sha256(name.encode()).hexdigest()[:32] + ".json"

    def _load_index(self, d: fs.Dirs, name: str) -> list[dict]:
        try:
            index = d.child(d.v1, "index")
        except Untrusted as exc:
            self._distrust(exc)
            return []
        except OSError:
            return []
        data = self._read_side(index, self._index_name(name))
        keys = data.get("keys") if isinstance(data, dict) and data.get("name") == name else None
        return [k for k in keys if isinstance(k, dict)] if isinstance(keys, list) else []

    def _remember(self, d: fs.Dirs, key: CacheKey) -> None:
        if not key.name:
            return
        keys = [k for k in self._load_index(d, key.name) if k != key.parts]
        keys.insert(0, key.parts)
        try:
            fs.write_atomic(d.child(d.v1, "index", create=True), self._index_name(key.name),
                            json.dumps({"name": key.name, "keys": keys[:_INDEX_KEYS_PER_NAME]}).encode())
        except Untrusted as exc:
            self._distrust(exc)
        except OSError:
            pass

    def _why_missing(self, d: fs.Dirs, key: CacheKey) -> str:
        previous = self._load_index(d, key.name)
        if not previous:
            return "no kernel of this name was cached before"
        best = min((diff_parts(old, key.parts) for old in previous), key=len)
        if not best:
            return "the same key was cached before; its entry was evicted or cleared"
        return "changed: " + ", ".join(best)

    # ---- stats -------------------------------------------------------------

    def _record(self, d: fs.Dirs, events: bytes) -> None:
        try:
            size = fs.append(d.v1, "stats.log", events)
            if size > _STATS_COMPACT_BYTES:
                self._compact_stats(d)
        except Untrusted as exc:
            self._distrust(exc)
        except OSError:
            pass

    def _compact_stats(self, d: fs.Dirs) -> None:
        # Renaming the log is atomic: exactly one process gets to fold it.
        mine = f"stats.log.{os.getpid()}"
        try:
            os.rename("stats.log", mine, src_dir_fd=d.v1, dst_dir_fd=d.v1)
        except OSError:
            return
        try:
            events = self._read_side(d.v1, mine, parse=False) or b""
            totals = self._stats_totals(d)
            for letter, name in _EVENT_NAMES.items():
                totals[name] = totals.get(name, 0) + events.count(letter)
            fs.write_atomic(d.v1, "stats.json", json.dumps(totals).encode())
        finally:
            fs.unlink(d.v1, mine)

    def _stats_totals(self, d: fs.Dirs) -> dict[str, int]:
        data = self._read_side(d.v1, "stats.json")
        # a garbled file loses its counts, never the launch or `cache info` (1e999 is inf)
        return {k: v for k, v in data.items() if k in _EVENT_NAMES.values() and type(v) is int and v >= 0} \
            if isinstance(data, dict) else {}

    def _read_side(self, dfd: int, name: str, parse: bool = True) -> Any:
        """A small file of the layout (index, stats, file hashes) as JSON (``parse``) or
        bytes; None when absent or garbled. One too big to be ours is removed unread (a
        sparse file planted there must not fill memory); one that fails the trust
        check stops the cache."""
        try:
            data = fs.read_file(dfd, name, limit=_SIDE_MAX_BYTES)
            return json.loads(data) if parse else data
        except fs.TooLarge:
            fs.unlink(dfd, name)
        except Untrusted as exc:
            self._distrust(exc)
        except (OSError, ValueError):
            pass
        return None

    def persistent_stats(self) -> dict[str, int]:
        """Hit/miss/write/compile/corrupt/evicted/imported counts over every
        process that used this directory."""
        totals = {name: 0 for name in _EVENT_NAMES.values()}
        d = self._open(create=False)
        if d is None:
            return totals
        with d:
            for name, n in self._stats_totals(d).items():
                totals[name] = totals.get(name, 0) + n
            events = self._read_side(d.v1, "stats.log", parse=False) or b""
            for letter, name in _EVENT_NAMES.items():
                totals[name] += events.count(letter)
        return totals

    # ---- listing and housekeeping -----------------------------------------

    def _scan(self, d: fs.Dirs) -> list[tuple[str, str, int, float]]:
        """(subdir, file name, size, mtime) of every entry file; removes what
        writers killed mid-write left (see :func:`_sweep`) and bounds the
        explain-miss index.  Symlinks and anything not ours are skipped, never
        followed."""
        out = []
        now = time.time()
        for parent in (d.root, d.v1):
            _sweep(parent, fs.scan(parent), now)
        self._bound_index(d, now)
        try:
            entries = d.child(d.v1, "entries")
        except FileNotFoundError:
            return out
        for subname, st in fs.scan(entries):
            if not stat.S_ISDIR(st.st_mode) or not re.fullmatch(r"[0-9a-f]{2}", subname):
                continue
            try:
                sub = d.sub(entries, subname)
            except OSError:
                continue
            try:
                for name, fst in _sweep(sub, fs.scan(sub), now):
                    if _ENTRY_RE.fullmatch(name) and stat.S_ISREG(fst.st_mode):
                        out.append((subname, name, fst.st_size, fst.st_mtime))
            finally:
                d.release(sub)
        return out

    def _bound_index(self, d: fs.Dirs, now: float) -> None:
        """At most ``_INDEX_MAX_FILES`` explain-miss files (one per kernel name ever
        cached, not counted in ``max_bytes``): the least recently written go."""
        try:
            index = d.child(d.v1, "index")
        except FileNotFoundError:
            return
        files = [(st.st_mtime, name) for name, st in _sweep(index, fs.scan(index), now)
                 if _INDEX_RE.fullmatch(name) and stat.S_ISREG(st.st_mode)]
        for _, name in sorted(files)[:max(0, len(files) - _INDEX_MAX_FILES)]:
            fs.unlink(index, name)

    def _unlink_entry(self, d: fs.Dirs, subname: str, name: str) -> int:
        try:
            sub = d.sub(d.child(d.v1, "entries"), subname)
        except OSError:
            return 0
        try:
            return fs.unlink(sub, name)
        finally:
            d.release(sub)

    def _layout_op(self, fn, default):
        """Run ``fn(d)`` on the opened cache; a trust failure disables the cache."""
        d = self._open(create=False)
        if d is None:
            return default
        with d:
            try:
                return fn(d)
            except Untrusted as exc:
                self._distrust(exc)
                return default

    def entries(self) -> list[CacheEntry]:
        """Every entry, least recently used first, with its kernel name,
        signature and target read from the entry header."""
        def run(d):
            out = []
            for subname, name, size, mtime in sorted(self._scan(d), key=lambda t: t[3]):
                e = CacheEntry(path=os.path.join(self._entries_dir, subname, name),
                               digest=name[: -len(ENTRY_SUFFIX)], size=size, last_used=mtime)
                try:
                    sub = d.sub(d.child(d.v1, "entries"), subname)
                    try:
                        _, key_json, _ = _decode_header(fs.read_file(sub, name, limit=ENTRY_MAX_BYTES))
                    finally:
                        d.release(sub)
                    e.key = json.loads(key_json)
                    if not isinstance(e.key, dict):
                        raise _BadEntry("the stored key is not a JSON object")
                    e.name = str(e.key.get("name", "?"))
                    e.signature = str(e.key.get("signature", "?"))
                    tgt = e.key.get("target")
                    tgt = tgt if isinstance(tgt, dict) else {"name": tgt or "?"}
                    e.target = str(tgt.get("name", "?")) + (f":{tgt['arch']}" if tgt.get("arch") else "")
                except (OSError, ValueError, _BadEntry) as exc:
                    e.valid, e.problem = False, str(exc)
                out.append(e)
            return out
        return self._layout_op(run, [])

    def raw_entries(self, digests: Iterable[str] | None = None) -> Iterator[tuple[CacheKey, bytes]]:
        """(key, whole entry bytes) of every entry that verifies (checksum, key
        matches its name), or of those in ``digests``; for ``cache export``."""
        wanted = None if digests is None else set(digests)
        d = self._open(create=False)
        if d is None:
            return
        with d:
            try:
                scan = self._scan(d)
            except Untrusted as exc:
                self._distrust(exc)
                return
            for subname, name, _, _ in scan:
                digest = name[: -len(ENTRY_SUFFIX)]
                if wanted is not None and digest not in wanted:
                    continue
                try:
                    sub = d.sub(d.child(d.v1, "entries"), subname)
                    try:
                        data = fs.read_file(sub, name, limit=ENTRY_MAX_BYTES)
                    finally:
                        d.release(sub)
                    key_json, _ = _verify_entry(data)
                    key = CacheKey(json.loads(key_json))
                except (OSError, _BadEntry, ValueError, TypeError):  # TypeError: JSON that is not an object
                    continue
                if key.digest == digest:
                    yield key, data

    def put_raw(self, key: CacheKey, entry: bytes) -> bool:
        """Store a whole, already verified entry (``cache import``); counted as imported."""
        return self._put_entry(key, entry, b"i", evict=False)

    def info(self) -> dict[str, Any]:
        """Location, state, entry count, bytes used and limit, persistent counts."""
        scan = self._layout_op(self._scan, [])
        d = {
            "directory": self.directory,
            "enabled": self.enabled,
            "disabled_reason": self.disabled_reason,
            "entries": len(scan),
            "bytes": sum(t[2] for t in scan),
            "max_bytes": self.max_bytes,
        }
        d.update(self.persistent_stats())
        return d

    def clear(self, older_than_seconds: float | None = None) -> int:
        """Remove entries (all, or those unused for ``older_than_seconds``);
        returns how many were removed."""
        cutoff = None if older_than_seconds is None else time.time() - float(older_than_seconds)

        def run(d):
            removed = 0
            for subname, name, _, mtime in self._scan(d):
                if cutoff is None or mtime < cutoff:
                    removed += self._unlink_entry(d, subname, name)
            if cutoff is None:
                try:
                    index = d.child(d.v1, "index")
                except FileNotFoundError:
                    return removed
                for name, st in fs.scan(index):
                    if _INDEX_RE.fullmatch(name) and stat.S_ISREG(st.st_mode):
                        fs.unlink(index, name)
            return removed
        return self._layout_op(run, 0)

    def evict(self, keep: str | None = None) -> int:
        """Remove least-recently-used entries until the total is at most
        ``max_bytes``; returns how many were removed.  ``keep`` (an entry's
        path or file name) is never removed."""
        keep_name = os.path.basename(keep) if keep else None

        def run(d):
            scan = self._scan(d)
            total = sum(t[2] for t in scan)
            removed = 0
            for subname, name, size, _ in sorted(scan, key=lambda t: t[3]):
                if total <= self.max_bytes:
                    break
                if name == keep_name:
                    continue
                if self._unlink_entry(d, subname, name):
                    removed += 1
                total -= size
            if removed:
                self.stats["evicted"] += removed
                self._record(d, b"e" * removed)
            return removed
        return self._layout_op(run, 0)


# --------------------------------------------------------------- claim markers

_host: list[str] = []


def _read_text(path: str) -> str:
    with open(path, encoding="ascii") as f:
        return f.read().strip()


def _host_id() -> str:
    """This machine and pid namespace: a marker's pid is only checked where it means the same process."""
    if not _host:
        parts = [os.uname().nodename]  # gethostname() is this; importing socket would cost ~5 ms
        for read in (lambda: _read_text("/proc/sys/kernel/random/boot_id"),
                     lambda: os.readlink("/proc/self/ns/pid")):
            try:
                parts.append(read())
            except OSError:
                pass
        _host.append("|".join(parts))
    return _host[0]


def _pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError, ValueError):
        return False
    try:  # killed but not yet reaped by its parent still counts as gone
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rpartition(")")[2].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return False


def _marker_stale(theirs: dict, sub: int, marker: str, seen_for: float, wait: float) -> bool:
    pid = theirs.get("pid")
    if theirs.get("host") == _host_id() and isinstance(pid, int) and _pid_gone(pid):
        return True
    if seen_for > wait:
        return True
    try:
        age = time.time() - os.stat(marker, dir_fd=sub, follow_symlinks=False).st_mtime
    except OSError:
        return False
    # A holder writes its marker in the call that creates it, so one still unreadable after a
    # moment was left half-written (a crash, a full disk) or is not a marker at all: waiting the
    # whole bound for it would stall every process that misses on the key.
    return age > wait or (not theirs and age > _UNREADABLE_MARKER_GRACE)


def _only_ours(dfd: int) -> bool:
    """The cache root holds nothing but what the cache makes. Only then is it tagged
    CACHEDIR.TAG: backup tools skip a tagged directory whole, and ``PYKERN_CACHE_DIR``
    set to a directory of the user's own (``$HOME``) must not drop it from backups."""
    with os.scandir(dfd) as it:
        return all(_OURS_RE.fullmatch(e.name) or _LEFTOVER_RE.fullmatch(e.name) for e in it)


def _sweep(dfd: int, listing: list[tuple[str, os.stat_result]], now: float) -> list[tuple[str, os.stat_result]]:
    """Unlink what a writer killed mid-write left in a cache directory (``_LEFTOVER_RE``)
    once it is ``_STALE_TMP_SECONDS`` old (a live writer is done with it in well under
    that), so crashes cannot pile files up; returns the rest of ``listing``.  A key's compile
    markers go only together, once its newest is that old: an old one superseded by a live
    claim must stay while that claim does (see ``_claim``)."""
    newest: dict[str, float] = {}  # a marker's digest (any other leftover's name) -> newest mtime
    for name, st in listing:
        if _LEFTOVER_RE.fullmatch(name):
            group = name.partition(MARKER_SUFFIX)[0]
            newest[group] = max(newest.get(group, st.st_mtime), st.st_mtime)
    rest = []
    for name, st in listing:
        if _LEFTOVER_RE.fullmatch(name):
            if now - newest[name.partition(MARKER_SUFFIX)[0]] > _STALE_TMP_SECONDS:
                fs.unlink(dfd, name)
        else:
            rest.append((name, st))
    return rest


def _marker_generations(sub: int, digest: str) -> list[int]:
    # Every kind of directory entry counts (a FIFO or a link named like a marker too): one left
    # out would make the next generation's O_EXCL create fail forever. Reading a non-regular one
    # fails the trust check, so it is judged unreadable and superseded after the grace.
    prefix = f"{digest}{MARKER_SUFFIX}."
    return [int(name[len(prefix):]) for name, _ in fs.scan(sub)
            if name.startswith(prefix) and name[len(prefix):].isdigit()]


def _marker_nonce(sub: int, name: str) -> Any:
    try:
        return json.loads(fs.read_file(sub, name, limit=4096)).get("nonce")
    except (OSError, ValueError, AttributeError):
        return None


def _explain(key: CacheKey, reason: str) -> None:
    import logging  # only when explaining: keeps the import of this module cheap

    log = logging.getLogger("pykern.cache")
    if not log.handlers and not logging.getLogger().handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)
    if log.level == logging.NOTSET or log.level > logging.INFO:
        log.setLevel(logging.INFO)
    log.info("pykern cache miss: %s[%s] (%s): %s", key.name or "?", key.parts.get("signature", "?"),
             key.digest[:12], reason)
