"""Watchpoints on the sim target: each matching access of a watched array, reported.

``watch(array, index, on="write", when=None, stop=False)`` registers a watch; while a
kernel runs on the sim target every load/store of that array at ``index`` (an int, a
tuple, or slices: any element the selection covers) is recorded as a ``Hit`` -- thread,
block, the kernel's source line, the old and new value -- if ``when(hit)`` (when given)
is true. ``stop=True`` opens pdb at the kernel's line of the access. ``Watch.hits`` lists
what was seen; ``Watch.remove()`` ends it.

Example::

    >>> import numpy as np
    >>> from pykern.sim.watch import watch
    >>> a = np.zeros(4, np.float32)
    >>> w = watch(a, 2, on="write")
    >>> w.on, w.hits
    ('write', [])
    >>> w.remove()
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from pykern.sim import runtime

_WATCHES: list = []


@dataclass
class Hit:
    kind: str  # "read" | "write"
    thread: tuple
    block: tuple
    file: str
    line: int
    index: tuple
    old: Any
    new: Any

    def __str__(self):
        what = f"{self.old} -> {self.new}" if self.kind == "write" else f"{self.old}"
        return (f"{self.file}:{self.line}: {self.kind} [{', '.join(map(str, self.index))}] {what} "
                f"by thread {self.thread} of block {self.block}")


class Watch:
    def __init__(self, array, index, on: str, when: Optional[Callable], stop: bool, report: bool):
        if on not in ("read", "write", "access"):
            raise ValueError(f"watch(on={on!r}): expected 'read', 'write' or 'access'")
        self.base = np.asarray(array)
        mask = np.zeros(self.base.shape, bool)
        mask[index] = True
        self.mask, self.on, self.when, self.stop, self.report = mask, on, when, stop, report
        self.hits: list = []

    def remove(self) -> None:
        if self in _WATCHES:
            _WATCHES.remove(self)

    def covers(self, arr) -> bool:
        return arr is self.base or (np.shares_memory(arr, self.base) and arr.shape == self.base.shape
                                    and arr.ctypes.data == self.base.ctypes.data)


def watch(array, index=(), on: str = "write", when: Optional[Callable] = None, stop: bool = False,
          report: bool = True) -> Watch:
    """Watch ``array[index]`` on the sim target (see the module's doc)."""
    w = Watch(array, index, on, when, stop, report)
    _WATCHES.append(w)
    return w


class Watched(np.ndarray):
    """A kernel argument some watch covers: its element accesses are checked."""

    def __array_finalize__(self, obj):
        self._pk_watches = []  # a view made from it in the kernel: other indices, not watched

    def __getitem__(self, idx):
        v = np.ndarray.__getitem__(self, idx)
        if not isinstance(v, np.ndarray):
            _seen(self, "read", idx, v, v)
        return v

    def __setitem__(self, idx, value):
        old = np.ndarray.__getitem__(self, idx)
        np.ndarray.__setitem__(self, idx, value)
        if not isinstance(old, np.ndarray):
            _seen(self, "write", idx, old, np.ndarray.__getitem__(self, idx))


def _seen(arr, kind, idx, old, new):
    idx = idx if isinstance(idx, tuple) else (idx,)
    key = tuple(int(i) for i in idx)
    for w in arr._pk_watches:
        if w.on not in (kind, "access") or not w.mask[key]:
            continue
        frame = sys._getframe(2)
        t = runtime.STATE.thread
        hit = Hit(kind, tuple(int(v) for v in t.tid), tuple(int(v) for v in t.bid), frame.f_code.co_filename,
                  frame.f_lineno, key, old, new)
        if w.when is not None and not w.when(hit):
            continue
        w.hits.append(hit)
        if w.report:
            print(f"watch: {hit}", flush=True)
        if w.stop:
            from pykern.sim.scheduler import open_pdb

            open_pdb(frame)


def wrap(arr):
    """``arr`` as a kernel sees it: a ``Watched`` view when a watch covers it."""
    if not _WATCHES or not isinstance(arr, np.ndarray):
        return arr
    ws = [w for w in _WATCHES if w.covers(arr)]
    if not ws:
        return arr
    v = arr.view(Watched)
    v._pk_watches = ws
    return v
