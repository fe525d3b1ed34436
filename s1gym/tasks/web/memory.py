"""What the web engines remember across pages of this process: bounded maps, least recently used first out
(:class:`~s1gym.core.lru.LRU`).

:data:`SPECS` (how to carry out each move of each state read so far), :data:`MEMO` (a memoryless page's
answers by the page's state) and :data:`MOVE_LISTS` (each distinct tuple of moves once); the engine
(:mod:`s1gym.tasks.web.engine`) fills and reads them.
"""

from __future__ import annotations

from s1gym.core.lru import LRU

__all__ = ["MEMO", "MOVE_LISTS", "SPECS"]


#: How to carry out each move of each state read so far: (game, moves) -> {move text: spec}. A replay
#: finds the element of each move by the path read at its state (the page is the same), so it does not
#: read the page between moves (a missing entry costs one read of the page during a replay).
SPECS = LRU(20_000)
#: A page's answer to a move by the page's state before it, not by the moves that led there:
#: (game, the move's :attr:`~s1gym.tasks.web.engine.WebAnswer.memo` key, move) -> the answer. Only for the tasks whose catalogue
#: entry says ``memoryless`` (their scripts keep nothing a move changes that the document does not show),
#: where two ways to the same page answer every move alike (simple-algebra: a number typed over another
#: is the page with only that number typed, and typing clears the field first); the web env consults it
#: (:mod:`s1gym.tasks.web.env`).
MEMO = LRU(20_000)
#: Each distinct tuple of moves once (thousands of remembered answers of one page share a few).
MOVE_LISTS = LRU(4_096)
