"""On-disk kernel cache: compiled kernels survive the process that built them.

The cache stores opaque payloads (the dispatcher pickles its kernel artifacts)
under a :class:`CacheKey`, a set of named parts -- kernel source, callee
sources, frozen globals, argument signature, target, options, toolchain -- that
digest to one file name.  A new process that launches an already-compiled
kernel reads one file instead of running the frontend and LLVM.

Typical use by the dispatcher (which takes :func:`default_cache`; this example
keeps its entry in a directory of its own)::

    >>> import tempfile
    >>> from pykern.runtime.cache import KernelCache
    >>> from pykern.frontend.fingerprint import fingerprint
    >>> def double(x):
    ...     x[0] *= 2
    >>> scratch = tempfile.TemporaryDirectory()
    >>> cache = KernelCache(scratch.name)
    >>> key = cache.make_key(fingerprint(double), signature="(float32[:],)", target="cpu",
    ...                      options={"opt": 3, "debug": False})
    >>> payload = cache.get(key)          # bytes, or None on a miss
    >>> if payload is None:
    ...     with cache.compiling(key) as claim:   # other processes: wait, or compile once
    ...         payload = cache.get(key) if claim.ready else None
    ...         if payload is None:
    ...             payload = b"the pickled artifact"
    ...             stored = cache.put(key, payload)
    >>> cache.get(key)
    b'the pickled artifact'
    >>> scratch.cleanup()

The pieces: :mod:`.key` (what makes a key), :mod:`.store` (entry
files, index, eviction, stats, compile-once claims), :mod:`.safe_fs` (file
operations that never follow a symlink and check ownership at use),
:mod:`.bundle` (export/import archives) and :mod:`.cli`
(``python -m pykern cache``).  This module is the public face and holds the
process-wide :func:`default_cache`.

This module must stay cheap to import: no numpy, no llvmlite.
"""

from __future__ import annotations

import os

from pykern.core import settings
from pykern.runtime.cache.key import KEY_FORMAT, CacheKey, _memo, build_key, diff_parts, llvm_identity, pykern_identity
from pykern.runtime.cache.store import DEFAULT_MAX_BYTES, ENTRY_SUFFIX, FORMAT_VERSION, MAGIC, CacheEntry, CacheWarning, Claim, KernelCache, _BadEntry, _decode_entry, _decode_header, _encode_entry, cache_enabled_by_env, default_cache_dir, parse_age, parse_size

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

_default: tuple[tuple, KernelCache] | None = None


def default_cache() -> KernelCache:
    """The process-wide cache configured by ``PYKERN_CACHE``, ``PYKERN_CACHE_DIR``
    and ``PYKERN_CACHE_MAX_BYTES`` (rebuilt if those change)."""
    global _default
    env = (settings.raw("PYKERN_CACHE"), settings.raw("PYKERN_CACHE_DIR"), settings.raw("PYKERN_CACHE_MAX_BYTES"),
           os.environ.get("XDG_CACHE_HOME"))
    if _default is None or _default[0] != env:
        _default = (env, KernelCache())
    return _default[1]
