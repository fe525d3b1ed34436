"""A bounded map, least recently used first out, safe across threads: the one the engines' caches share.

The engine pool's answers and transitions (:mod:`s1gym.engines`), the web's memories
(:mod:`s1gym.tasks.web.memory`) and ALFWorld's translation cache (:mod:`s1gym.tasks.alfworld.speedups`) each
keep one. A capacity of 0 keeps nothing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["LRU"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most ``capacity`` entries; a read or a write marks an entry as just used, and the entry used
    longest ago leaves first. ``hits`` and ``misses`` count :meth:`get`'s answers (for benchmarks and tests)."""

    def __init__(self, capacity: int) -> None:
        if int(capacity) < 0:
            raise ValueError(f"LRU capacity must be >= 0, got {capacity}")
        self.capacity = int(capacity)
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def __getstate__(self) -> dict[str, object]:
        """Pickled with its entries, without its lock (a policy holding one goes to worker processes)."""
        with self._lock:
            return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: K) -> bool:
        return key in self._items

    def get(self, key: K) -> V | None:
        """The value under ``key`` (marked as just used), or ``None``."""
        with self._lock:
            found = self._items.get(key)
            if found is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return found

    def put(self, key: K, value: V) -> None:
        """Store ``value`` under ``key`` (replacing what was there), then drop the least recently used
        entries beyond the capacity."""
        with self._lock:
            self._items[key] = value
            self._settle(key)

    def setdefault(self, key: K, value: V) -> V:
        """Store ``value`` unless ``key`` holds one already; the value kept (so equal values are shared)."""
        with self._lock:
            kept = self._items.setdefault(key, value)
            self._settle(key)
            return kept

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def _settle(self, key: K) -> None:
        self._items.move_to_end(key)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)
