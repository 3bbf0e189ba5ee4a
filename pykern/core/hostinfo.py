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
    """The host's identity: machine, CPU model and a digest of the CPU feature flags. The cpu
    target's code is built for it, so cache keys hold it and the loader compares an artifact's
    (``KernelArtifact.host_cpu``) with it before running the code."""
    if "host" not in _memo:
        import platform

        ident = platform.machine()
        fields = cpuinfo()
        if fields is None:
            ident += " " + platform.processor()
        else:
            flags = fields.get("flags") or fields.get("Features") or ""
            model = fields.get("model name") or fields.get("CPU part") or ""
            ident += f" {model} flags:{hashlib.sha256(flags.encode()).hexdigest()[:16]}"
        _memo["host"] = ident
    return _memo["host"]


def cpuinfo():
    """The fields of the first processor in ``/proc/cpuinfo`` (``{"model name": ..., "flags":
    ..., "cpu MHz": ...}``), read now; None where the file does not exist."""
    try:
        with open("/proc/cpuinfo", "rb") as f:
            head = f.read(16384).split(b"\n\n", 1)[0].decode(errors="replace")
    except OSError:
        return None
    return dict((k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in head.splitlines()))


def _own_elf_header() -> bytes:
    if "elf" not in _memo:
        import sys

        head = b""
        for path in ("/proc/self/exe", sys.executable):
            try:
                with open(path, "rb") as f:
                    head = f.read(64)
                break
            except OSError:
                continue
        _memo["elf"] = head if head[:4] == b"\x7fELF" else b""
    return _memo["elf"]


def elf_problem(data: bytes, e_type: int) -> str:
    """Why ``data`` is not an ELF file of type ``e_type`` (1: relocatable object, 3: shared
    library) that this process could load, or "" when it may be.

    LLVM's object reader and the dynamic loader trust the headers they are given (a garbled
    relocatable object crashed the process in MCJIT), so code from a cache is checked first:
    the class, byte order and machine of this interpreter, and tables inside the file.

    >>> elf_problem(b"junk", 3)
    'not an ELF file'
    """
    import struct

    own = _own_elf_header()
    if own[4:6] != b"\x02\x01":  # not a 64-bit little-endian ELF host (macOS: Mach-O): the loader judges
        return ""
    if len(data) < 64 or data[:4] != b"\x7fELF":
        return "not an ELF file"
    if data[4:6] != own[4:6]:
        return "not a 64-bit little-endian ELF file"
    kind, machine = struct.unpack_from("<HH", data, 16)
    if kind != e_type:
        return f"ELF type {kind}, expected {e_type}"
    if machine != struct.unpack_from("<H", own, 18)[0]:
        return f"ELF for machine {machine}, this host runs machine {struct.unpack_from('<H', own, 18)[0]}"
    phoff, shoff = struct.unpack_from("<QQ", data, 32)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, 54)
    if shoff + shnum * shentsize > len(data) or phoff + phnum * phentsize > len(data):
        return "truncated ELF file (its header tables point past its end)"
    return ""
