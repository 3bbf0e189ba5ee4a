"""On-disk kernel cache: compiled kernels survive the process that built them.

The cache stores opaque payloads (the dispatcher pickles its kernel artifacts)
under a :class:`CacheKey`, a set of named parts -- kernel source, callee
sources, frozen globals, argument signature, target, options, toolchain -- that
digest to one file name.  A new process that launches an already-compiled
kernel reads one file instead of running the frontend and LLVM.

Typical use by the dispatcher::

    >>> from pykern.runtime.cache import default_cache
    >>> cache = default_cache()
    >>> key = cache.make_key(fp, signature="(float32[:],)", target="cpu",
    ...                      options={"opt": 3, "debug": False})
    >>> payload = cache.get(key)          # bytes, or None on a miss
    >>> if payload is None:
    ...     payload = compile_somehow()
    ...     cache.put(key, payload)

Why it is built this way:

* Entries are written to a temporary file and renamed, so readers see either
  nothing or a whole entry; concurrent writers of one key both write a valid
  file and the last rename wins.  No locks, so nothing can deadlock after a
  crash.
* Each entry carries its full key and a sha256 of its payload; anything that
  does not verify is discarded with a :class:`CacheWarning` and recompiled.
* Entries are only read from a directory owned by the current user and not
  writable by group/others, because loading an entry means running its code.
* Hit/miss counts are one appended byte per event (``O_APPEND`` writes are
  atomic), folded into a small JSON file now and then.

This module must stay cheap to import: no numpy, no llvmlite.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import struct
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

__all__ = [
    "CacheKey",
    "CacheEntry",
    "CacheWarning",
    "KernelCache",
    "default_cache",
    "default_cache_dir",
    "cache_enabled_by_env",
    "parse_size",
    "parse_age",
]

#: Bumped when the entry layout changes; old entries then live in another subdir.
FORMAT_VERSION = 1
#: Bumped when the meaning of key parts changes (everything misses once).
KEY_FORMAT = 1
MAGIC = b"PYKCACHE"
DEFAULT_MAX_BYTES = 1 << 30
ENTRY_SUFFIX = ".pkc"
_TMP_PREFIX = ".tmp-"
_STALE_TMP_SECONDS = 3600.0
_STATS_COMPACT_BYTES = 64 * 1024
_INDEX_KEYS_PER_NAME = 16
_OFF_VALUES = {"0", "off", "false", "no", "disable", "disabled", "none"}


class CacheWarning(UserWarning):
    """Something in the kernel cache was wrong and was worked around (never fatal)."""


# --------------------------------------------------------------------------- keys


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)


class CacheKey:
    """The named parts that decide whether a cached kernel may be reused.

    ``parts`` is a mapping of part name -> JSON-serialisable value (nested dicts
    are fine).  ``digest`` is a stable sha256 over a canonical JSON encoding,
    independent of dict order and of the process.

    >>> k = CacheKey({"name": "m.k", "signature": "(int64,)"})
    >>> k.digest == CacheKey({"signature": "(int64,)", "name": "m.k"}).digest
    True
    """

    __slots__ = ("parts", "json", "digest")

    def __init__(self, parts: Mapping[str, Any]):
        # Round-trip through JSON so the stored key compares equal to a freshly
        # built one (tuples become lists, non-str leaves become their str()).
        self.json = _canonical_json(dict(parts))
        self.parts: dict[str, Any] = json.loads(self.json)
        self.digest = hashlib.sha256(self.json.encode()).hexdigest()

    @property
    def name(self) -> str:
        """The kernel's qualified name (``module.qualname``), used to explain misses."""
        return str(self.parts.get("name", ""))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CacheKey) and other.json == self.json

    def __hash__(self) -> int:
        return hash(self.digest)

    def __repr__(self) -> str:
        return f"CacheKey({self.name!r}, {self.digest[:16]})"


def diff_parts(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Dotted paths of the key parts that differ between two key-part trees.

    >>> diff_parts({"a": 1, "b": {"c": 2}}, {"a": 1, "b": {"c": 3}})
    ['b.c']
    """
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for name in list(old) + [n for n in new if n not in old]:
            path = f"{prefix}.{name}" if prefix else str(name)
            if name not in new:
                out.append(f"{path} (removed)")
            elif name not in old:
                out.append(f"{path} (added)")
            else:
                out.extend(diff_parts(old[name], new[name], path))
        return out
    return [] if old == new else [prefix or "<key>"]


# ------------------------------------------------------------- environment knobs


def cache_enabled_by_env() -> bool:
    """False when ``PYKERN_CACHE`` says off (``off``, ``0``, ``false``, ``no``)."""
    return os.environ.get("PYKERN_CACHE", "on").strip().lower() not in _OFF_VALUES


def _explain_enabled() -> bool:
    return os.environ.get("PYKERN_CACHE_EXPLAIN", "").strip().lower() not in ("", *_OFF_VALUES)


def default_cache_dir() -> str:
    """``$PYKERN_CACHE_DIR``, else the platform's per-user cache dir + ``pykern``.

    Linux: ``$XDG_CACHE_HOME/pykern`` or ``~/.cache/pykern``; macOS:
    ``~/Library/Caches/pykern``; Windows: ``%LOCALAPPDATA%\\pykern\\Cache``.
    """
    explicit = os.environ.get("PYKERN_CACHE_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
        return os.path.join(base, "pykern", "Cache")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches/pykern")
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.expanduser("~/.cache")
    return os.path.join(base, "pykern")


_SIZE_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1 << 10, "m": 1000**2, "mb": 1000**2,
               "mib": 1 << 20, "g": 1000**3, "gb": 1000**3, "gib": 1 << 30, "t": 1000**4,
               "tb": 1000**4, "tib": 1 << 40}


def parse_size(text: str) -> int:
    """Bytes from ``"1GiB"``, ``"500M"``, ``"4096"``.

    >>> parse_size("2KiB")
    2048
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _SIZE_UNITS:
        raise ValueError(f"not a size: {text!r} (examples: 1073741824, 500M, 1GiB)")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()])


_AGE_UNITS = {"": 1, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(text: str) -> float:
    """Seconds from ``"7d"``, ``"12h"``, ``"30m"``, ``"45s"`` or ``"90"``.

    >>> parse_age("2h")
    7200.0
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _AGE_UNITS:
        raise ValueError(f"not a duration: {text!r} (examples: 7d, 12h, 30m, 45s)")
    return float(m.group(1)) * _AGE_UNITS[m.group(2).lower()]


def _max_bytes_from_env() -> int:
    text = os.environ.get("PYKERN_CACHE_MAX_BYTES")
    if not text:
        return DEFAULT_MAX_BYTES
    try:
        return parse_size(text)
    except ValueError as exc:
        warnings.warn(f"pykern cache: ignoring PYKERN_CACHE_MAX_BYTES: {exc}", CacheWarning, stacklevel=3)
        return DEFAULT_MAX_BYTES


# ------------------------------------------------------- toolchain identity parts

_memo: dict[str, Any] = {}


def _tree_stamp(root: str, suffixes: tuple[str, ...] = (".py",)) -> str:
    """Digest of (relative path, size, mtime) of the source files under ``root``.

    Cheap (stat only) and changes whenever the compiler's own code is edited or
    reinstalled, so a development checkout never reuses kernels built by older
    compiler code under the same version number.
    """
    rows: list[str] = []

    def walk(path: str, rel: str) -> None:
        try:
            items = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError:
            return
        for e in items:
            if e.name.startswith((".", "__pycache__")):
                continue
            if e.is_dir(follow_symlinks=False):
                walk(e.path, rel + e.name + "/")
            elif e.name.endswith(suffixes):
                try:
                    st = e.stat()
                except OSError:
                    continue
                rows.append(f"{rel}{e.name}:{st.st_size}:{st.st_mtime_ns}")

    walk(root, "")
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()[:32]


def pykern_identity() -> dict[str, str]:
    """``{"version": pykern.__version__, "build": <stamp of pykern's sources>}``.

    ``PYKERN_BUILD_ID`` replaces the stamp (for packagers, and for tests that
    must not see other people's edits of the tree).
    """
    if "pykern" not in _memo:
        pkg = sys.modules.get("pykern")
        version = getattr(pkg, "__version__", None) or "0+unknown"
        build = os.environ.get("PYKERN_BUILD_ID") or _tree_stamp(
            os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        _memo["pykern"] = {"version": str(version), "build": build}
    return dict(_memo["pykern"])


def llvm_identity() -> str:
    """Identity of the LLVM that compiles kernels, found without importing llvmlite.

    llvmlite's version plus size/mtime of its bundled LLVM library: a new
    llvmlite or a rebuilt library changes it.
    """
    if "llvm" not in _memo:
        import importlib.util

        ident = "llvmlite:absent"
        loaded = sys.modules.get("llvmlite")
        origin = getattr(loaded, "__file__", None)
        if not origin:
            spec = importlib.util.find_spec("llvmlite")
            origin = spec.origin if spec is not None else None
        if origin:
            pkgdir = os.path.dirname(origin)
            version = "?"
            try:
                with open(os.path.join(pkgdir, "_version.py"), encoding="utf-8") as f:
                    m = re.search(r"version_version\s*=\s*['\"]([^'\"]+)", f.read())
                    version = m.group(1) if m else "?"
            except OSError:
                pass
            libs = []
            bdir = os.path.join(pkgdir, "binding")
            try:
                for fn in sorted(os.listdir(bdir)):
                    if fn.startswith(("libllvmlite", "llvmlite")) and fn.endswith((".so", ".dylib", ".dll")):
                        st = os.stat(os.path.join(bdir, fn))
                        libs.append(f"{fn}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                pass
            ident = f"llvmlite {version} " + ",".join(libs)
        _memo["llvm"] = ident
    return _memo["llvm"]


def host_cpu_identity() -> str:
    """The host CPU (machine, model, feature flags digest): cpu-target code is
    compiled for it, so a cache shared between machines must not mix them."""
    from pykern.hostinfo import cpu_identity

    return cpu_identity()


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


# ------------------------------------------------------------------ the cache


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


_warned_dirs: set[str] = set()


class KernelCache:
    """A directory of compiled kernels.

    ``KernelCache()`` uses :func:`default_cache_dir`; ``enabled`` is False (and
    ``get``/``put`` do nothing) when ``PYKERN_CACHE=off`` or when the directory
    cannot be trusted, with ``disabled_reason`` saying why.

    >>> c = KernelCache("/tmp/some-dir")            # doctest: +SKIP
    >>> c.put(key, b"bytes"); c.get(key)             # doctest: +SKIP
    b'bytes'
    """

    def __init__(self, directory: str | os.PathLike | None = None, *, max_bytes: int | None = None,
                 enabled: bool | None = None):
        self.directory = os.path.abspath(os.fspath(directory)) if directory else default_cache_dir()
        self.max_bytes = _max_bytes_from_env() if max_bytes is None else int(max_bytes)
        self._root = os.path.join(self.directory, f"v{FORMAT_VERSION}")
        self._entries_dir = os.path.join(self._root, "entries")
        self._index_dir = os.path.join(self._root, "index")
        self._stats_log = os.path.join(self._root, "stats.log")
        self._stats_json = os.path.join(self._root, "stats.json")
        self._filehash_json = os.path.join(self._root, "filehash.json")
        self.disabled_reason = "" if (enabled if enabled is not None else cache_enabled_by_env()) \
            else "disabled by PYKERN_CACHE=off"
        self._checked = False
        self._filehash: dict[str, list] | None = None
        self.stats = {"hits": 0, "misses": 0, "writes": 0, "corrupt": 0, "evicted": 0}

    # ---- trust -------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        return not self.disabled_reason

    def _usable(self, create: bool) -> bool:
        """Check (once) that the directory is ours and private; create it if asked."""
        if self.disabled_reason:
            return False
        if self._checked:
            return True
        try:
            st = os.stat(self.directory)
        except FileNotFoundError:
            if not create:
                return False
            try:
                os.makedirs(self.directory, mode=0o700, exist_ok=True)
                st = os.stat(self.directory)
            except OSError as exc:
                return self._disable(f"cannot create {self.directory}: {exc}")
        except OSError as exc:
            return self._disable(f"cannot stat {self.directory}: {exc}")
        problem = _trust_problem(st)
        if problem:
            return self._disable(f"refusing cache directory {self.directory}: {problem}")
        try:
            for d in (self._root, self._entries_dir, self._index_dir):
                os.makedirs(d, mode=0o700, exist_ok=True)
                sub = os.stat(d)
                problem = _trust_problem(sub)
                if problem:
                    return self._disable(f"refusing cache directory {d}: {problem}")
            tag = os.path.join(self.directory, "CACHEDIR.TAG")
            if not os.path.exists(tag):
                _atomic_write(tag, b"Signature: 8a477f597d28d172789f06886806bc55\n"
                                   b"# This directory is a cache of compiled kernels made by pykern.\n")
        except OSError as exc:
            return self._disable(f"cannot use {self.directory}: {exc}")
        self._checked = True
        return True

    def _disable(self, reason: str) -> bool:
        self.disabled_reason = reason
        if self.directory not in _warned_dirs:
            _warned_dirs.add(self.directory)
            warnings.warn(f"pykern cache disabled: {reason}", CacheWarning, stacklevel=4)
        return False

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
        (content-hashed, memoised by size/mtime); ``extra`` any further parts.
        Source locations are part of the key only for ``debug``/``lineinfo``
        builds, whose code embeds line numbers.
        """
        opts = dict(options or {})
        parts: dict[str, Any] = {"format": KEY_FORMAT}
        for name, value in fingerprint.items():
            if name == "location" and not (opts.get("debug") or opts.get("lineinfo")):
                continue
            parts[name] = value
        parts["signature"] = str(signature)
        tgt: dict[str, Any] = {"name": str(target), "arch": arch}
        if target == "cpu":
            tgt["host"] = host_cpu_identity()
        parts["target"] = tgt
        parts["options"] = {str(k): (v if isinstance(v, (bool, int, float, str, type(None))) else repr(v))
                            for k, v in sorted(opts.items())}
        parts["pykern"] = pykern_identity()
        parts["llvm"] = llvm_identity()
        parts["python"] = "%d.%d" % sys.version_info[:2]
        np = sys.modules.get("numpy")
        parts["numpy"] = getattr(np, "__version__", "not-imported")
        paths = sorted(os.fspath(p) for p in devlibs)
        parts["devlibs"] = {os.path.basename(p): self.file_digest(p) for p in paths} if paths else "none"
        if extra:
            parts.update(extra)
        return CacheKey(parts)

    def file_digest(self, path: str) -> str:
        """sha256 of a file's content, remembered by (size, mtime, inode) so that
        new processes do not re-read megabytes of device libraries."""
        real = os.path.realpath(path)
        try:
            st = os.stat(real)
        except OSError:
            return "missing"
        stamp = [st.st_size, st.st_mtime_ns, st.st_ino]
        if self._filehash is None:
            self._filehash = {}
            if self.enabled and os.path.exists(self._filehash_json):
                try:
                    with open(self._filehash_json, encoding="utf-8") as f:
                        loaded = json.load(f)
                    if isinstance(loaded, dict):
                        self._filehash = loaded
                except (OSError, ValueError):
                    pass
        memo = self._filehash.get(real)
        if isinstance(memo, list) and len(memo) == 4 and memo[:3] == stamp:
            return memo[3]
        h = hashlib.sha256()
        try:
            with open(real, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
        except OSError:
            return "unreadable"
        digest = h.hexdigest()
        self._filehash[real] = stamp + [digest]
        if self._usable(create=True):
            try:
                _atomic_write(self._filehash_json, json.dumps(self._filehash).encode())
            except OSError:
                pass
        return digest

    # ---- get / put ---------------------------------------------------------

    def entry_path(self, key: CacheKey) -> str:
        return os.path.join(self._entries_dir, key.digest[:2], key.digest + ENTRY_SUFFIX)

    def get(self, key: CacheKey) -> bytes | None:
        """The payload stored under ``key``, or None (miss, disabled, or a bad
        entry that was discarded with a :class:`CacheWarning`)."""
        if not self._usable(create=True):
            if self.disabled_reason and _explain_enabled():
                _explain(key, self.disabled_reason)
            return None
        path = self.entry_path(key)
        try:
            data = _read_trusted(path)
        except FileNotFoundError:
            self._miss(key, None)
            return None
        except _BadEntry as exc:
            self._discard(path, str(exc))
            self._miss(key, f"entry was discarded: {exc}")
            return None
        except OSError as exc:
            warnings.warn(f"pykern cache: cannot read {path}: {exc}", CacheWarning, stacklevel=2)
            self._miss(key, f"unreadable entry: {exc}")
            return None
        try:
            version, key_json, payload = _decode_entry(data)
            if version != pykern_identity()["version"]:
                raise _BadEntry(f"written by pykern {version!r}, this is "
                                f"{pykern_identity()['version']!r}")
            if key_json != key.json:
                raise _BadEntry("stored key differs from the requested key")
        except _BadEntry as exc:
            self._discard(path, str(exc))
            self._miss(key, f"entry was discarded: {exc}")
            return None
        try:
            os.utime(path)  # last-use time for LRU eviction
        except OSError:
            pass
        self.stats["hits"] += 1
        self._record(b"h")
        return payload

    def put(self, key: CacheKey, payload: bytes) -> bool:
        """Store ``payload`` under ``key`` atomically; True if stored.  Never
        raises for I/O trouble (full disk, read-only dir): warns instead."""
        if not self._usable(create=True):
            return False
        path = self.entry_path(key)
        try:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            _atomic_write(path, _encode_entry(key, bytes(payload), pykern_identity()["version"]))
        except OSError as exc:
            warnings.warn(f"pykern cache: cannot write {path}: {exc}", CacheWarning, stacklevel=2)
            return False
        self.stats["writes"] += 1
        self._record(b"w")
        self._remember(key)
        if self.max_bytes >= 0:
            self.evict(keep=path)
        return True

    def discard(self, key: CacheKey, reason: str) -> None:
        """Remove the entry of ``key`` with a warning: for a payload that the
        caller could not use (e.g. it no longer unpickles)."""
        if self._usable(create=False):
            self._discard(self.entry_path(key), reason)

    def _discard(self, path: str, reason: str) -> None:
        warnings.warn(f"pykern cache: discarding bad entry {path}: {reason}; the kernel will be recompiled",
                      CacheWarning, stacklevel=3)
        self.stats["corrupt"] += 1
        self._record(b"c")
        try:
            os.unlink(path)
        except OSError:
            pass

    def _miss(self, key: CacheKey, reason: str | None) -> None:
        self.stats["misses"] += 1
        self._record(b"m")
        if _explain_enabled():
            _explain(key, reason or self._why_missing(key))

    # ---- explain-miss index ------------------------------------------------

    def _index_path(self, name: str) -> str:
        return os.path.join(self._index_dir, hashlib.sha256(name.encode()).hexdigest()[:32] + ".json")

    def _load_index(self, name: str) -> list[dict]:
        try:
            with open(self._index_path(name), encoding="utf-8") as f:
                data = json.load(f)
            keys = data.get("keys", []) if data.get("name") == name else []
            return [k for k in keys if isinstance(k, dict)]
        except (OSError, ValueError, AttributeError):
            return []

    def _remember(self, key: CacheKey) -> None:
        if not key.name:
            return
        keys = [k for k in self._load_index(key.name) if k != key.parts]
        keys.insert(0, key.parts)
        try:
            _atomic_write(self._index_path(key.name),
                          json.dumps({"name": key.name, "keys": keys[:_INDEX_KEYS_PER_NAME]}).encode())
        except OSError:
            pass

    def _why_missing(self, key: CacheKey) -> str:
        previous = self._load_index(key.name)
        if not previous:
            return "no kernel of this name was cached before"
        best = min((diff_parts(old, key.parts) for old in previous), key=len)
        if not best:
            return "the same key was cached before; its entry was evicted or cleared"
        return "changed: " + ", ".join(best)

    # ---- stats -------------------------------------------------------------

    def _record(self, event: bytes) -> None:
        try:
            fd = os.open(self._stats_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, event)
                size = os.lseek(fd, 0, os.SEEK_CUR)
            finally:
                os.close(fd)
            if size > _STATS_COMPACT_BYTES:
                self._compact_stats()
        except OSError:
            pass

    def _compact_stats(self) -> None:
        # Renaming the log is atomic: exactly one process gets to fold it.
        mine = f"{self._stats_log}.{os.getpid()}"
        try:
            os.rename(self._stats_log, mine)
        except OSError:
            return
        try:
            with open(mine, "rb") as f:
                events = f.read()
            totals = self._stats_totals()
            for letter, name in _EVENT_NAMES.items():
                totals[name] = totals.get(name, 0) + events.count(letter)
            _atomic_write(self._stats_json, json.dumps(totals).encode())
        finally:
            try:
                os.unlink(mine)
            except OSError:
                pass

    def _stats_totals(self) -> dict[str, int]:
        try:
            with open(self._stats_json, encoding="utf-8") as f:
                data = json.load(f)
            return {k: int(v) for k, v in data.items()} if isinstance(data, dict) else {}
        except (OSError, ValueError, TypeError):
            return {}

    def persistent_stats(self) -> dict[str, int]:
        """Hit/miss/write/corrupt/evicted counts over every process that used this directory."""
        totals = {name: 0 for name in _EVENT_NAMES.values()}
        for name, n in self._stats_totals().items():
            totals[name] = totals.get(name, 0) + n
        try:
            with open(self._stats_log, "rb") as f:
                events = f.read()
            for letter, name in _EVENT_NAMES.items():
                totals[name] += events.count(letter)
        except OSError:
            pass
        return totals

    # ---- listing and housekeeping -----------------------------------------

    def _scan(self) -> list[tuple[str, int, float]]:
        """(path, size, mtime) of every entry file; removes stale temp files."""
        out = []
        now = time.time()
        try:
            subdirs = list(os.scandir(self._entries_dir))
        except OSError:
            return out
        for sub in subdirs:
            if not sub.is_dir(follow_symlinks=False):
                continue
            try:
                files = list(os.scandir(sub.path))
            except OSError:
                continue
            for f in files:
                try:
                    st = f.stat(follow_symlinks=False)
                except OSError:
                    continue
                if f.name.startswith(_TMP_PREFIX):
                    if now - st.st_mtime > _STALE_TMP_SECONDS:  # a writer died mid-write
                        _unlink_quiet(f.path)
                    continue
                if f.name.endswith(ENTRY_SUFFIX):
                    out.append((f.path, st.st_size, st.st_mtime))
        return out

    def entries(self) -> list[CacheEntry]:
        """Every entry, least recently used first, with its kernel name,
        signature and target read from the entry header."""
        if not self._usable(create=False):
            return []
        out = []
        for path, size, mtime in sorted(self._scan(), key=lambda t: t[2]):
            e = CacheEntry(path=path, digest=os.path.basename(path)[: -len(ENTRY_SUFFIX)], size=size,
                           last_used=mtime)
            try:
                with open(path, "rb") as f:
                    head = f.read(1 << 16)
                    while True:
                        try:
                            _, key_json, _ = _decode_header(head)
                            break
                        except _BadEntry:
                            more = f.read(1 << 20)
                            if not more:
                                raise
                            head += more
                e.key = json.loads(key_json)
                e.name = str(e.key.get("name", "?"))
                e.signature = str(e.key.get("signature", "?"))
                tgt = e.key.get("target") or {}
                e.target = str(tgt.get("name", "?")) + (f":{tgt['arch']}" if tgt.get("arch") else "")
            except (OSError, ValueError, _BadEntry) as exc:
                e.valid, e.problem = False, str(exc)
            out.append(e)
        return out

    def info(self) -> dict[str, Any]:
        """Location, state, entry count, bytes used and limit, persistent counts."""
        scan = self._scan() if self._usable(create=False) else []
        d = {
            "directory": self.directory,
            "enabled": self.enabled,
            "disabled_reason": self.disabled_reason,
            "entries": len(scan),
            "bytes": sum(s for _, s, _ in scan),
            "max_bytes": self.max_bytes,
        }
        d.update(self.persistent_stats() if self._checked else {n: 0 for n in _EVENT_NAMES.values()})
        return d

    def clear(self, older_than_seconds: float | None = None) -> int:
        """Remove entries (all, or those unused for ``older_than_seconds``);
        returns how many were removed."""
        if not self._usable(create=False):
            return 0
        cutoff = None if older_than_seconds is None else time.time() - float(older_than_seconds)
        removed = 0
        for path, _, mtime in self._scan():
            if cutoff is None or mtime < cutoff:
                removed += _unlink_quiet(path)
        if cutoff is None:
            try:
                for f in os.scandir(self._index_dir):
                    _unlink_quiet(f.path)
            except OSError:
                pass
        return removed

    def evict(self, keep: str | None = None) -> int:
        """Remove least-recently-used entries until the total is at most
        ``max_bytes``; returns how many were removed."""
        if not self._usable(create=False):
            return 0
        scan = self._scan()
        total = sum(s for _, s, _ in scan)
        removed = 0
        for path, size, _ in sorted(scan, key=lambda t: t[2]):
            if total <= self.max_bytes:
                break
            if path == keep:
                continue
            if _unlink_quiet(path):
                removed += 1
            total -= size
        if removed:
            self.stats["evicted"] += removed
            self._record(b"e" * removed)
        return removed


_EVENT_NAMES = {b"h": "hits", b"m": "misses", b"w": "writes", b"c": "corrupt", b"e": "evicted"}


def _trust_problem(st: os.stat_result) -> str:
    """Why a directory may not be trusted, or "" if it may."""
    if not stat.S_ISDIR(st.st_mode):
        return "not a directory"
    if hasattr(os, "geteuid"):
        if st.st_uid != os.geteuid():
            return f"owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})"
        if st.st_mode & 0o022:
            return f"writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    return ""


def _read_trusted(path: str) -> bytes:
    """Read an entry, refusing files that are not ours or that others may write."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        if os.path.islink(path):
            raise _BadEntry("is a symbolic link") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _BadEntry("not a regular file")
        if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
            raise _BadEntry(f"owned by uid {st.st_uid}, not by this user")
        if hasattr(os, "geteuid") and st.st_mode & 0o022:
            raise _BadEntry(f"writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})")
        # the entry's own directory too: another user able to write there could
        # swap the file between our checks of the root and this read
        problem = _trust_problem(os.stat(os.path.dirname(path) or "."))
        if problem:
            raise _BadEntry(f"its directory is {problem}")
        chunks = []
        while True:
            chunk = os.read(fd, max(st.st_size, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _atomic_write(path: str, data: bytes) -> None:
    """Write ``data`` to a temp file beside ``path`` and rename it over ``path``."""
    import tempfile  # only when writing

    fd, tmp = tempfile.mkstemp(prefix=_TMP_PREFIX, dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        _unlink_quiet(tmp)
        raise


def _unlink_quiet(path: str) -> int:
    try:
        os.unlink(path)
        return 1
    except OSError:
        return 0


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


_default: tuple[tuple, KernelCache] | None = None


def default_cache() -> KernelCache:
    """The process-wide cache configured by ``PYKERN_CACHE``, ``PYKERN_CACHE_DIR``
    and ``PYKERN_CACHE_MAX_BYTES`` (rebuilt if those change)."""
    global _default
    env = tuple(os.environ.get(n) for n in ("PYKERN_CACHE", "PYKERN_CACHE_DIR", "PYKERN_CACHE_MAX_BYTES",
                                             "XDG_CACHE_HOME"))
    if _default is None or _default[0] != env:
        _default = (env, KernelCache())
    return _default[1]
