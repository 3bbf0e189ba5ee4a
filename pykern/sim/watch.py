"""Watchpoints (``pykern.debug``) on the sim and the compiled cpu target: each matching access of
a watched array, reported.

``watch(array, index, on="write", when=None, stop=False)`` registers a watch; while a
kernel runs, every load/store of that array at ``index`` (an int, a tuple, or slices: any
element the selection covers) is recorded as a ``Hit`` -- kind ("read", "write", "atomic"),
thread, block, the kernel's source line, the old and new value -- if ``when(hit)`` (when given)
is true. ``Watch.hits`` lists what was seen; ``Watch.remove()`` ends it. On the sim target the
watched argument is a ``Watched`` array; ``stop=True`` opens pdb at the kernel's line of the
access. On the cpu target a launch of a watched array (a numpy array or a cpu device array)
runs the kernel's build with the sanitizer's access hooks (``_CpuWatcher``); ``stop`` has no
effect there (compiled code cannot stop in pdb).

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
    kind: str  # "read" | "write" | "atomic"
    thread: tuple
    block: tuple
    file: str
    line: int
    index: tuple
    old: Any
    new: Any

    def __str__(self):
        what = f"{self.old} -> {self.new}" if self.kind != "read" else f"{self.old}"
        return (f"{self.file}:{self.line}: {self.kind} [{', '.join(map(str, self.index))}] {what} "
                f"by thread {self.thread} of block {self.block}")


class Watch:
    def __init__(self, array, index, on: str, when: Optional[Callable], stop: bool, report: bool):
        if on not in ("read", "write", "access"):
            raise ValueError(f"watch(on={on!r}): expected 'read', 'write' or 'access'")
        hv = getattr(array, "_host_view", None)  # a cpu device array: its memory, not a copy
        self.base = hv() if hv is not None and not isinstance(array, np.ndarray) else np.asarray(array)
        mask = np.zeros(self.base.shape, bool)
        mask[index] = True
        self.mask, self.on, self.when, self.stop, self.report = mask, on, when, stop, report
        self.hits: list = []

    def remove(self) -> None:
        if self in _WATCHES:
            _WATCHES.remove(self)
            _changed()

    def span(self) -> tuple:
        """The [lo, hi) bytes of the watched array's memory."""
        b = self.base
        lo = hi = b.ctypes.data
        for n, st in zip(b.shape, b.strides):
            lo, hi = (lo + (n - 1) * st, hi) if st < 0 else (lo, hi + (n - 1) * st)
        return lo, hi + b.itemsize

    def element(self, addr: int):
        """The index of the watched array's element that starts at byte ``addr``, or None."""
        b = self.base
        off, idx = addr - b.ctypes.data, [0] * b.ndim
        for k in sorted(range(b.ndim), key=lambda k: -abs(b.strides[k])):
            st = b.strides[k]
            if st:
                i = off // st
                if not 0 <= i < b.shape[k]:
                    return None
                idx[k], off = i, off - i * st
        return tuple(idx) if off == 0 else None

    def covers(self, arr) -> bool:
        return arr is self.base or (np.shares_memory(arr, self.base) and arr.shape == self.base.shape
                                    and arr.ctypes.data == self.base.ctypes.data)


def watch(array, index=(), on: str = "write", when: Optional[Callable] = None, stop: bool = False,
          report: bool = True) -> Watch:
    """Watch ``array[index]`` on the sim target (see the module's doc)."""
    w = Watch(array, index, on, when, stop, report)
    _WATCHES.append(w)
    _changed()
    return w


def _changed() -> None:
    """Launches on the cpu target look again whether they need the build with access hooks: its
    launchers' fast paths (made for the plain build) are dropped by a new device generation."""
    import sys

    from pykern.runtime.cpu import sanitizer

    sanitizer.watcher = _CPU if _WATCHES else None
    dispatcher = sys.modules.get("pykern.dispatch.dispatcher")  # the layer above, by name
    if dispatcher is not None:
        dispatcher._device_generation[0] += 1


def _value_at(base, idx):
    v = base[idx]
    return v.copy() if isinstance(v, (np.void, np.ndarray)) else v


class _CpuWatcher:
    """Watchpoints on the compiled cpu target (``runtime/cpu/sanitizer.watcher``): a launch of an
    array some watch covers runs the kernel's build with the sanitizer's access hooks, which call
    ``access`` before each load or store that touches a watched array's memory. A write's new
    value is read when the next hooked access comes (blocks of such a launch run one after another,
    so nothing else stores to the element in between) or when the launch ends."""

    def __init__(self):
        self.pending = []

    @staticmethod
    def covers_any(args) -> bool:
        for a in args:
            hv = getattr(a, "_host_view", None)
            arr = a if isinstance(a, np.ndarray) else hv() if hv is not None and hasattr(a, "copy_to_host") else None
            if isinstance(a, tuple):
                if _CpuWatcher.covers_any(a):
                    return True
            elif arr is not None and any(np.may_share_memory(arr, w.base) for w in _WATCHES):
                return True
        return False

    @staticmethod
    def ranges():
        return [w.span() for w in _WATCHES if w.base.size]

    def access(self, kind, file, line, col, thread, block, addr, nbytes):
        self.launch_ended()  # the last write's store has happened
        for w in list(_WATCHES):
            if not (w.on == "access" or w.on == kind or kind == "atomic"):
                continue
            idx = w.element(addr)
            if idx is None or not w.mask[idx]:
                continue
            old = _value_at(w.base, idx)
            hit = Hit(kind, thread, block, file, line, idx, old, old)
            if kind == "read":
                _record(w, hit, None)
            else:
                self.pending.append((w, hit, idx))

    def launch_ended(self):
        pending, self.pending = self.pending, []
        for w, hit, idx in pending:
            hit.new = _value_at(w.base, idx)
            _record(w, hit, None)


_CPU = _CpuWatcher()


def _record(w, hit, frame) -> None:
    """Keep and print ``hit`` when ``w.when`` agrees; on the sim target, pdb at ``frame`` when asked."""
    if w.when is not None and not w.when(hit):
        return
    w.hits.append(hit)
    if w.report:
        print(f"watch: {hit}", flush=True)
    if w.stop and frame is not None:
        from pykern.sim.executor import open_pdb

        open_pdb(frame)


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
        _record(w, hit, frame)


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
