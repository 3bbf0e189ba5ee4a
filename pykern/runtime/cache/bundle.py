"""Cache archives: ship compiled kernels to other machines.

``python -m pykern cache export ARCHIVE`` writes the cache's verified entries
into a gzipped tar; ``cache import ARCHIVE`` on a worker stores them into its
own cache, so the first launch there is a hit.  Typical AOT bundle::

    $ python -m pykern compile kernels.py:saxpy kernels.py:stencil -s "..." -s "..." \\
          --arch gfx90a:sramecc+:xnack-,gfx942:sramecc+:xnack- --export kernels.pkc.tgz
    $ python -m pykern cache import kernels.pkc.tgz     # on each worker, at start

An archive is data, never paths: import reads only regular members named
``pykern-cache/entries/<sha256>.pkc`` into memory (nothing is extracted by
name, so ``../`` members, absolute names, links and devices are skipped), and
stores an entry only when its checksum verifies, its name is the digest of the
key it holds, and it was built by this pykern, this LLVM and this Python (the
key says so; other entries could never be hit here).  Entries go through the
store, which writes only below its checked directory.

    >>> n = export_cache(KernelCache(), "k.tgz")                  # doctest: +SKIP
    >>> import_cache(KernelCache(), "k.tgz").imported             # doctest: +SKIP
    4
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import tarfile
import time
import zlib
from dataclasses import dataclass, field
from typing import Iterable

from pykern.runtime.cache.key import CacheKey, llvm_identity, pykern_identity
from pykern.runtime.cache.store import KernelCache, _BadEntry, _decode_entry

__all__ = ["export_cache", "import_cache", "ImportReport"]

ARCHIVE_ROOT = "pykern-cache"
BUNDLE_FORMAT = 1
MAX_ENTRY_BYTES = 1 << 30
_MEMBER_RE = re.compile(re.escape(ARCHIVE_ROOT) + r"/entries/([0-9a-f]{64})\.pkc")
_MANIFEST = f"{ARCHIVE_ROOT}/manifest.json"


def _python() -> str:
    return "%d.%d" % sys.version_info[:2]


def export_cache(cache: KernelCache, archive: str | os.PathLike, digests: Iterable[str] | None = None) -> int:
    """Write every verified entry of ``cache`` (or those in ``digests``) to
    ``archive`` (a ``.tar.gz``, replaced atomically); returns how many."""
    archive = os.fspath(archive)
    entries = list(cache.raw_entries(digests))
    manifest = {
        "format": BUNDLE_FORMAT, "pykern": pykern_identity(), "llvm": llvm_identity(), "python": _python(),
        "created": time.time(),
        "entries": [{"digest": k.digest, "name": k.name, "signature": k.parts.get("signature"),
                     "target": k.parts.get("target"), "bytes": len(data)} for k, data in entries],
    }
    tmp = os.path.join(os.path.dirname(os.path.abspath(archive)),
                       f".{os.path.basename(archive)}.{os.getpid()}-{os.urandom(4).hex()}")
    try:
        with tarfile.open(tmp, "w:gz") as tf:
            _add(tf, _MANIFEST, json.dumps(manifest, indent=1).encode())
            for key, data in entries:
                _add(tf, f"{ARCHIVE_ROOT}/entries/{key.digest}.pkc", data)
        os.replace(tmp, archive)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return len(entries)


def _add(tf: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), 0o600, int(time.time())
    tf.addfile(info, io.BytesIO(data))


@dataclass
class ImportReport:
    """What :func:`import_cache` did: ``imported`` entries stored, ``skipped``
    (member name, reason) pairs, and the archive's manifest."""

    imported: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    manifest: dict = field(default_factory=dict)
    #: why reading stopped early (a truncated or corrupted archive), or "": the entries read
    #: before the damage were verified one by one and are stored
    damaged: str = ""


#: what reading a damaged gzip/tar stream raises part way through
_DAMAGE = (EOFError, zlib.error, tarfile.ReadError)


def import_cache(cache: KernelCache, archive: str | os.PathLike) -> ImportReport:
    """Store the entries of ``archive`` that are valid for this pykern/LLVM/Python
    into ``cache``; raises ``OSError``/``tarfile.TarError`` (``EOFError``, ``zlib.error``)
    for an archive that cannot be opened; one damaged part way (truncated) keeps the
    entries before the damage and says so in ``report.damaged``."""
    report = ImportReport()
    mine = {"pykern": pykern_identity(), "llvm": llvm_identity(), "python": _python()}
    with tarfile.open(os.fspath(archive), "r:*") as tf:
        try:
            _read_members(cache, tf, report, mine)
        except _DAMAGE as exc:
            report.damaged = f"{type(exc).__name__}: {exc}"
    if report.imported and cache.max_bytes >= 0:
        cache.evict()
    return report


def _read_members(cache: KernelCache, tf: tarfile.TarFile, report: ImportReport, mine: dict) -> None:
    for m in tf:
        if m.name == _MANIFEST and m.isreg() and m.size < (1 << 24):
            try:
                report.manifest = json.loads(tf.extractfile(m).read())
            except ValueError:
                report.skipped.append((m.name, "unreadable manifest"))
            continue
        match = _MEMBER_RE.fullmatch(m.name)
        if not match or not m.isreg():
            report.skipped.append((m.name, "not a cache entry (only regular files "
                                   f"{ARCHIVE_ROOT}/entries/<sha256>.pkc are read)"))
            continue
        if m.size > MAX_ENTRY_BYTES:
            report.skipped.append((m.name, f"{m.size} bytes, more than {MAX_ENTRY_BYTES}"))
            continue
        reason = _store(cache, match.group(1), tf.extractfile(m).read(MAX_ENTRY_BYTES + 1), mine)
        if reason:
            report.skipped.append((m.name, reason))
        else:
            report.imported += 1


def _store(cache: KernelCache, digest: str, data: bytes, mine: dict) -> str:
    """Store one entry; the reason it was refused, or ""."""
    try:
        version, key_json, _ = _decode_entry(data)
        key = CacheKey(json.loads(key_json))
    except _BadEntry as exc:
        return f"corrupted: {exc}"
    except (ValueError, TypeError):  # TypeError: JSON, but not an object
        return "corrupted: the key is not a JSON object"
    if key.json != key_json or key.digest != digest:
        return "its name is not the digest of the key it holds"
    if version != mine["pykern"]["version"] or key.parts.get("pykern") != mine["pykern"]:
        return f"built by pykern {key.parts.get('pykern')}, this is {mine['pykern']}"
    if key.parts.get("llvm") != mine["llvm"]:
        return f"built with LLVM {key.parts.get('llvm')!r}, this is {mine['llvm']!r}"
    if key.parts.get("python") != mine["python"]:
        return f"built for Python {key.parts.get('python')}, this is {mine['python']}"
    if not cache.put_raw(key, data):
        return "could not be stored: " + (cache.disabled_reason or "see the warning")
    return ""
