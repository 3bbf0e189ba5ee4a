"""What makes a kernel cache key: the named parts of one compilation.

A :class:`CacheKey` is a set of named parts -- kernel source, callee sources,
frozen globals, argument signature, target, options, toolchain identity -- that
digest to one entry name.  :func:`build_key` assembles them for a compilation;
the store (:mod:`pykern.runtime.cache.store`) only sees the digest and the JSON.

    >>> k = build_key({"name": "m.k", "source": "..."}, signature="(int64,)", target="cpu")
    >>> k.name, len(k.digest)
    ('m.k', 64)

This module must stay cheap to import: no numpy, no llvmlite.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from typing import Any, Callable, Iterable, Mapping

from pykern.core import settings
from pykern.core.hostinfo import cpu_identity

__all__ = ["CacheKey", "build_key", "diff_parts", "pykern_identity", "llvm_identity", "KEY_FORMAT"]

#: Bumped when the meaning of key parts changes (everything misses once).
#: 2: builtins replaced, lazy module attributes, subclass values and namedtuple fields are
#: keyed; locations name callees, and cpu code with barriers or wave ops is keyed by them.
KEY_FORMAT = 2


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


# ------------------------------------------------------- toolchain identity parts

_memo: dict[str, Any] = {}


def _tree_stamp(root: str, suffixes: tuple[str, ...] = (".py",)) -> str:
    """Digest of (relative path, size, mtime, ctime) of the source files under ``root``.

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
                # ctime too: an edit that keeps the size and restores the mtime (`touch -d`, an
                # editor or sync tool preserving times) still moves ctime, which no one can set
                rows.append(f"{rel}{e.name}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}")

    walk(root, "")
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()[:32]


def _record_hashes(pkgdir: str, dist: str, version: str) -> dict[str, str]:
    """``{relative path: "sha256=..."}`` of the package's files from its wheel
    ``RECORD`` (empty for a source checkout or an editable install, whose RECORD
    does not list the package's files).  Byte-compiled files are left out: they
    embed the source mtime, which differs per install."""
    out: dict[str, str] = {}
    try:  # the exact dist-info name: no directory listing on the warm path
        with open(os.path.join(os.path.dirname(pkgdir), f"{dist}-{version}.dist-info", "RECORD"),
                  encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return out
    prefix = os.path.basename(pkgdir) + "/"
    for line in lines:
        path, _, rest = line.partition(",")
        digest = rest.partition(",")[0]
        if path.startswith(prefix) and digest and "__pycache__" not in path and not path.endswith(".pyc"):
            out[path] = digest
    return out


def _record_stamp(pkgdir: str, dist: str, version: str) -> str | None:
    rows = _record_hashes(pkgdir, dist, version)
    if not rows:
        return None
    text = "\n".join(f"{p}:{h}" for p, h in sorted(rows.items()))
    return "record:" + hashlib.sha256(text.encode()).hexdigest()[:32]


def pykern_identity() -> dict[str, str]:
    """``{"version": pykern.__version__, "build": <stamp of pykern's sources>}``.

    An installed wheel is stamped by the file hashes its ``RECORD`` lists, so
    every machine that installed the same wheel computes the same key (install
    times differ, contents do not): a shared cache or an exported bundle hits
    there.  A source checkout is stamped by its files' sizes, mtimes and ctimes.
    ``PYKERN_BUILD_ID`` replaces the stamp (for packagers, and for tests that
    must not see other people's edits of the tree).
    """
    if "pykern" not in _memo:
        pkg = sys.modules.get("pykern")
        version = getattr(pkg, "__version__", None) or "0+unknown"
        pkgdir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # pykern/ (from runtime/cache/)
        build = settings.get("PYKERN_BUILD_ID") or _record_stamp(pkgdir, "pykern", str(version)) or _tree_stamp(pkgdir)
        _memo["pykern"] = {"version": str(version), "build": build}
    return dict(_memo["pykern"])


def llvm_identity() -> str:
    """Identity of the LLVM that compiles kernels, found without importing llvmlite.

    llvmlite's version plus the library's sha256 from llvmlite's wheel
    ``RECORD`` (the same on every machine with that wheel), else its
    size/mtime/ctime: a new llvmlite or a rebuilt library changes it.
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
            recorded = _record_hashes(pkgdir, "llvmlite", version)
            bdir = os.path.join(pkgdir, "binding")
            try:
                for fn in sorted(os.listdir(bdir)):
                    if fn.startswith(("libllvmlite", "llvmlite")) and fn.endswith((".so", ".dylib", ".dll")):
                        if recorded.get(f"llvmlite/binding/{fn}"):
                            libs.append(f"{fn}:{recorded[f'llvmlite/binding/{fn}']}")
                            continue
                        st = os.stat(os.path.join(bdir, fn))
                        libs.append(f"{fn}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}")
            except OSError:
                pass
            ident = f"llvmlite {version} " + ",".join(libs)
        _memo["llvm"] = ident
    return _memo["llvm"]


def build_key(fingerprint: Mapping[str, Any], *, signature: str, target: str, arch: str | None = None,
              options: Mapping[str, Any] | None = None, devlibs: Iterable[str] = (),
              extra: Mapping[str, Any] | None = None,
              file_digest: Callable[[str], str] | None = None) -> CacheKey:
    """The full key of one compilation (see :meth:`KernelCache.make_key`, which
    passes its memoised ``file_digest`` for the device libraries)."""
    opts = dict(options or {})
    parts: dict[str, Any] = {"format": KEY_FORMAT}
    for name, value in fingerprint.items():
        if name == "location" and not _located(value, target, opts):
            continue
        parts[name] = value
    parts["signature"] = str(signature)
    tgt: dict[str, Any] = {"name": str(target), "arch": arch}
    if target == "cpu":  # cpu code is built for this host: a cache shared between machines must not mix them
        tgt["host"] = cpu_identity()
    parts["target"] = tgt
    parts["options"] = {str(k): (v if isinstance(v, (bool, int, float, str, type(None))) else repr(v))
                        for k, v in sorted(opts.items())}
    parts["pykern"] = pykern_identity()
    parts["llvm"] = llvm_identity()
    parts["python"] = "%d.%d" % sys.version_info[:2]
    np = sys.modules.get("numpy")
    parts["numpy"] = getattr(np, "__version__", "not-imported")
    paths = sorted(os.fspath(p) for p in devlibs)
    digest = file_digest or file_sha256
    parts["devlibs"] = {os.path.basename(p): digest(p) for p in paths} if paths else "none"
    if extra:
        parts.update(extra)
    return CacheKey(parts)


def _located(location: Any, target: str, opts: Mapping[str, Any]) -> bool:
    """Does the compiled code name source lines? Debug builds' error messages do, and on
    the cpu target so do barrier and wave-op sites (the divergent-barrier report): a kernel
    that moved, or whose callee did, must not reuse code that points at the old lines."""
    if opts.get("debug") or opts.get("lineinfo"):
        return True
    return target == "cpu" and isinstance(location, Mapping) and bool(location.get("sync"))


def file_sha256(path: str) -> str:
    """Hex sha256 of a file's content, or ``"unreadable"``."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return "unreadable"
    return h.hexdigest()
