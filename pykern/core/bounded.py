"""Bounded per-process maps: the one home of the policy that keeps a notebook
redefining kernels all day at a fixed size.

What a process remembers per kernel it has seen (compiled artifacts, loaded GPU
modules, parsed helper nodes) is kept least recently used first and trimmed to
``entries_limit()`` entries (``$PYKERN_MEMORY_CACHE_ENTRIES``, default 256; 0
keeps nothing). Evicting an entry only costs a later reload or recompile: the
owner's ``on_evict`` releases what the entry held (a GPU module is unloaded once
no queued launch can still use it, ``runtime/hip/launch.py``).

>>> m = LRU(limit=2)
>>> m.put("a", 1); m.put("b", 2); m.get("a"); m.put("c", 3)
1
>>> list(m)
['a', 'c']
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from pykern.core import settings

#: the default limit (the declaration in ``core/settings.py`` is its home)
ENTRIES = settings.default("PYKERN_MEMORY_CACHE_ENTRIES")


def entries_limit() -> int:
    """How many entries each bounded per-process map keeps (``$PYKERN_MEMORY_CACHE_ENTRIES``,
    default 256; 0 keeps none). Example: ``entries_limit() == 256``."""
    return settings.get("PYKERN_MEMORY_CACHE_ENTRIES")


class LRU:
    """A thread-safe map trimmed to ``limit`` entries (a callable read at each
    insertion, so the environment knob applies to a running process), least
    recently used evicted first; ``on_evict(key, value)`` runs outside the lock
    for each entry trimmed away (never for ``pop``/``clear``, whose caller
    handles what it removed)."""

    def __init__(self, limit=entries_limit, on_evict=None):
        self._limit = limit if callable(limit) else (lambda n=int(limit): n)
        self._on_evict = on_evict
        self.lock = threading.Lock()  # public: fork handlers take it (``compiler._fork_locks``)
        self._data: OrderedDict = OrderedDict()

    @property
    def limit(self) -> int:
        return self._limit()

    def get(self, key, default=None):
        """The value for ``key`` (now the most recently used), or ``default``."""
        with self.lock:
            try:
                self._data.move_to_end(key)
            except KeyError:
                return default
            return self._data[key]

    def peek(self, key, default=None):
        """The value for ``key`` without making it recently used."""
        return self._data.get(key, default)

    def put(self, key, value) -> None:
        """Insert or replace ``key`` as the most recently used, then trim."""
        limit = self._limit()
        with self.lock:
            self._data[key] = value
            self._data.move_to_end(key)
            evicted = []
            while len(self._data) > limit:
                evicted.append(self._data.popitem(last=False))
        if self._on_evict is not None:
            for k, v in evicted:
                self._on_evict(k, v)

    def pop(self, key, default=None):
        with self.lock:
            return self._data.pop(key, default)

    def clear(self) -> list:
        """Empty the map; the ``(key, value)`` pairs it held, oldest first."""
        with self.lock:
            items = list(self._data.items())
            self._data.clear()
        return items

    def copy(self) -> dict:
        with self.lock:
            return dict(self._data)

    def update(self, items) -> None:
        for k, v in dict(items).items():
            self.put(k, v)

    def __contains__(self, key) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self):
        """Keys, least recently used first (a snapshot)."""
        with self.lock:
            return iter(list(self._data))
