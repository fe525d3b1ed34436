"""What the web engines remember across pages of this process: bounded maps, least recently used first out.

:data:`SPECS` (how to carry out each move of each state read so far), :data:`MEMO` (a memoryless page's
answers by the page's state) and :data:`MOVE_LISTS` (each distinct tuple of moves once); the engine
(:mod:`s1gym.tasks.web.engine`) fills and reads them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

__all__ = ["MEMO", "MOVE_LISTS", "SPECS"]


class _Memory:
    """A bounded map, least recently used first out, safe across threads."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable) -> Any:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                self.hits += 1
            return found

    def put(self, key: Hashable, value: Any) -> Any:
        """Remember ``value``; the value kept (an equal one already there is kept and returned)."""
        with self._lock:
            value = self._items.setdefault(key, value)
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
            return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


#: How to carry out each move of each state read so far: (game, moves) -> {move text: spec}. A replay
#: finds the element of each move by the path read at its state (the page is the same), so it does not
#: read the page between moves (a missing entry costs one read of the page during a replay).
SPECS = _Memory(20_000)
#: A page's answer to a move by the page's state before it, not by the moves that led there:
#: (game, the move's :attr:`~s1gym.tasks.web.engine.WebAnswer.memo` key, move) -> the answer. Only for the tasks whose catalogue
#: entry says ``memoryless`` (their scripts keep nothing a move changes that the document does not show),
#: where two ways to the same page answer every move alike (simple-algebra: a number typed over another
#: is the page with only that number typed, and typing clears the field first); the web env consults it
#: (:mod:`s1gym.tasks.web.env`).
MEMO = _Memory(20_000)
#: Each distinct tuple of moves once (thousands of remembered answers of one page share a few).
MOVE_LISTS = _Memory(4_096)
