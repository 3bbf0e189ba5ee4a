"""Which host CPU this is, read without LLVM (cheap enough for the warm-start path).

cpu-target machine code is built for the host CPU's model and features, so the
cache key and the loader compare this identity: a cache shared between
machines, or an artifact carried to another one, must not run there.

Example::

    >>> cpu_identity().startswith(__import__("platform").machine())
    True
"""

from __future__ import annotations

import hashlib

_memo: dict = {}


def cpu_identity() -> str:
    """Machine, CPU model and a digest of the CPU feature flags."""
    if "host" not in _memo:
        import platform

        ident = platform.machine()
        try:
            with open("/proc/cpuinfo", "rb") as f:
                head = f.read(16384).split(b"\n\n", 1)[0].decode(errors="replace")
            fields = dict((k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in head.splitlines()))
            flags = fields.get("flags") or fields.get("Features") or ""
            model = fields.get("model name") or fields.get("CPU part") or ""
            ident += f" {model} flags:{hashlib.sha256(flags.encode()).hexdigest()[:16]}"
        except OSError:
            ident += " " + platform.processor()
        _memo["host"] = ident
    return _memo["host"]
