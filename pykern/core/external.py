"""External device code: what ``@jit(link=[...])`` and ``declare_device(..., link=...)`` name,
and the functions ``declare_device`` declares.

A link item is a file (``.hip``/``.cpp``/``.cc``/``.cxx``/``.cu`` compiled as HIP C++, ``.ll``
LLVM IR text, ``.bc`` LLVM bitcode) or an in-memory :class:`CUSource`. The frontend records the
items a kernel's calls need in its ``ir.Module``; codegen (``codegen/external_build.py``) compiles them
for the kernel's target and links them into its LLVM module before optimisation. Everything
here is plain data that every layer reads, so it lives in the base layer.

Example::

    >>> item = LinkItem.of(CUSource('extern "C" __device__ int one() { return 1; }'))
    >>> item.kind, len(item.digest())
    ('hip', 64)
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from typing import Any, Optional

from pykern.core.bounded import LRU
from pykern.core.errors import CompileError

#: file suffix -> kind of source (how codegen turns it into LLVM bitcode)
SUFFIX_KINDS = {".hip": "hip", ".cpp": "hip", ".cc": "hip", ".cxx": "hip", ".cu": "hip",
                ".ll": "ll", ".bc": "bc"}
#: numba-cuda's other linkable formats: NVIDIA machine code or NVVM, which no AMD GPU runs
_NVIDIA_SUFFIXES = (".ptx", ".cubin", ".fatbin", ".a", ".o", ".ltoir")


class CUSource:
    """numba's ``cuda.CUSource(data)``: device source code held in memory, compiled as HIP C++
    (a CUDA source that keeps to the device subset CUDA and HIP share compiles unchanged).

    Example::

        times2 = pykern.declare_device("times2", "int32(int32)", link=pykern.CUSource(
            'extern "C" __device__ int times2(int *out, int a) { *out = 2 * a; return 0; }'))
    """

    kind = "hip"

    def __init__(self, data, name: Optional[str] = None, setup_callback=None, teardown_callback=None):
        if isinstance(data, bytes):
            data = data.decode()
        if not isinstance(data, str):
            raise TypeError(f"CUSource takes the source text (str or bytes), not {type(data).__name__}")
        if setup_callback is not None or teardown_callback is not None:
            raise CompileError("CUSource setup/teardown callbacks are not supported: they receive a CUDA "
                               "module handle, which no AMD GPU or cpu-target kernel has")
        self.data = data
        self.name = name or "<cusource>"

    def __repr__(self) -> str:
        return f"CUSource({self.name!r}, {len(self.data)} characters)"


#: path -> (stamp, sha256): bounded like every per-process map (a notebook linking temp files all day)
_digests = LRU()


def _file_digest(path: str) -> str:
    """sha256 of the file's bytes, remembered by (size, mtime, ctime): an edit that keeps
    the size and restores the mtime still moves ctime."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise CompileError(f"cannot read link file {path!r}: {e.strerror}") from None
    stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    hit = _digests.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    _digests.put(path, (stamp, digest))
    return digest


_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def _quoted_includes(path: str) -> list:
    """The files ``path`` includes with ``#include "name"`` that exist next to the including
    file, transitively, in a stable order (what clang finds first for a quoted include; headers
    found through include paths or chosen by macros are not seen)."""
    found, todo = {}, [path]
    while todo:
        cur = todo.pop()
        try:
            with open(cur, "rb") as f:
                text = f.read()
        except OSError:
            continue
        for m in _INCLUDE.finditer(text):
            dep = os.path.normpath(os.path.join(os.path.dirname(cur), m.group(1).decode(errors="replace")))
            if dep not in found and dep != path and os.path.isfile(dep):
                found[dep] = None
                todo.append(dep)
    return sorted(found)


@dataclass(frozen=True)
class LinkItem:
    """One piece of external code: ``kind`` ("hip", "ll" or "bc") and either ``path`` (an
    absolute file name) or ``text`` (a ``CUSource``'s code, named ``name`` in messages)."""

    kind: str
    path: Optional[str] = None
    text: Optional[str] = None
    name: str = ""

    @staticmethod
    def of(obj: Any) -> "LinkItem":
        """The item a ``link=`` entry names: a path (str or path-like) or a ``CUSource``."""
        if isinstance(obj, LinkItem):
            return obj
        if isinstance(obj, CUSource):
            return LinkItem("hip", text=obj.data, name=obj.name)
        if isinstance(obj, (str, os.PathLike)):
            path = os.path.abspath(os.fspath(obj))
            suffix = os.path.splitext(path)[1].lower()
            if suffix in _NVIDIA_SUFFIXES:
                raise CompileError(f"cannot link {path!r}: {suffix} files are NVIDIA code (PTX, cubins, "
                                   "archives of them or LTO-IR) that no AMD GPU or the cpu target runs",
                                   hint="link the CUDA/HIP C++ source (.cu/.hip/.cpp), LLVM IR (.ll) or bitcode (.bc)")
            kind = SUFFIX_KINDS.get(suffix)
            if kind is None:
                raise CompileError(f"cannot link {path!r}: unknown kind of file {suffix or '(no suffix)'}",
                                   hint="link files ending in " + ", ".join(SUFFIX_KINDS))
            if not os.path.isfile(path):
                raise CompileError(f"link file {path!r} does not exist")
            return LinkItem(kind, path=path, name=path)
        raise CompileError(f"cannot link {obj!r}: a link entry is a file name or a pykern.CUSource")

    def digest(self) -> str:
        """sha256 of the code: a file's current contents (not its name or time) and, for C++,
        those of the headers it includes with ``#include "..."`` (found next to the file that
        includes them, transitively)."""
        if self.path is None:
            return hashlib.sha256(self.text.encode()).hexdigest()
        if self.kind != "hip":
            return _file_digest(self.path)
        parts = [f"{os.path.basename(p)}:{_file_digest(p)}" for p in _quoted_includes(self.path)]
        return hashlib.sha256("\n".join([_file_digest(self.path), *parts]).encode()).hexdigest()

    def read(self) -> bytes:
        if self.path is None:
            return self.text.encode()
        try:
            with open(self.path, "rb") as f:
                return f.read()
        except OSError as e:
            raise CompileError(f"cannot read link file {self.path!r}: {e.strerror}") from None

    def __str__(self) -> str:
        return self.name or self.path or "<source>"


def link_items(link) -> tuple:
    """``link=`` as numba takes it (None, one entry, or a list/tuple/set of them) -> a tuple of
    distinct :class:`LinkItem`, in a stable order (a set's order is the process's)."""
    if link is None:
        return ()
    if not isinstance(link, (list, tuple, set, frozenset)):
        link = (link,)
    items = [LinkItem.of(x) for x in link]
    if isinstance(link, (set, frozenset)):
        items.sort(key=lambda i: (i.kind, i.path or "", i.text or ""))
    return tuple(dict.fromkeys(items))


def kernel_links(link, module_links) -> tuple:
    """What a kernel links: its own ``link=`` items, then those its calls brought
    (``declare_device``, device functions; a frontend module's ``links``), each once."""
    return tuple(dict.fromkeys(link_items(link) + tuple(module_links)))


def links_digest(items) -> list:
    """What the cache key holds for ``items``: each one's kind and content digest."""
    return [f"{i.kind}:{i.digest()}" for i in items]


#: the calling conventions ``declare_device(abi=...)`` takes
ABIS = ("numba", "c")


class ExternFunction:
    """What ``declare_device`` returns: an external device function a kernel calls by this
    object (numba's ``ExternFunction``: ``.name``, ``.sig``). ``abi`` "numba": ``int name(T *ret,
    args...)``, the status returned ignored (foreign code raises no Python exception); "c":
    ``T name(args...)``. ``links``: the :class:`LinkItem` that define it."""

    def __init__(self, name: str, sig, restype, argtypes, links=(), abi: str = "numba"):
        self.name = name
        self.sig = sig
        self.restype = restype
        self.argtypes = tuple(argtypes)
        self.links = tuple(links)
        self.abi = abi

    def __call__(self, *args):
        raise TypeError(f"external device function '{self.name}' can only be called from a kernel "
                        "or device function")

    def cache_text(self) -> str:
        """Its meaning for a kernel's cache key: the symbol, ABI, signature and the code linked."""
        return (f"extern:{self.name}:{self.abi}:{self.restype}({', '.join(map(str, self.argtypes))})"
                f":{links_digest(self.links)}")

    def __repr__(self) -> str:
        return f"<external device function {self.name} {self.sig} abi={self.abi!r}>"
