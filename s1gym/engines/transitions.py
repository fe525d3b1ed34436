"""One engine step per child: a cache of (state, move) -> the env after the move, per engine pool.

Search steps every child of a node it expands; Lookahead, asked about that node
right after, would step the same children again to show their outcomes. With
this cache the second visit forks the env the first one left behind instead of
stepping the engine (:meth:`s1gym.engines.base.EngineEnv.fork_step`).

Keys identify the state exactly: the game, the engine moves that reached it (the
engines are deterministic: replaying the moves is how a fork is rebuilt, so
they fix the engine's state), and everything of the env that a step reads or
returns besides the engine: the step count (truncation), the candidates (a
hygiene-like option changes them), the task's own settings
(``EngineEnv._transition_settings``) and the RNG state. A hit hands out a fork
of the stored child, whose step count, history and RNG are the ones the real
step gave, and a copy of the step's result.

Only callers that ask for it store (``fork_step(move, keep=True)``, or
``fork_steps(moves, keep=True)`` for a state's children): Search,
which reads every child's state key and so snapshots every child anyway; the
stored env is a fork of the child sharing that snapshot, so a hit costs a fork
(a copy of the env's attributes) and stepping on from it costs a restore, as
from the original. Lookahead only reads, so on its own it changes nothing.
Entries are kept in least-recently-used order, at most ``capacity`` per pool
(``EngineEnv.transition_capacity``; docs/benchmarks.md has the memory an entry
takes on ALFWorld and the A/B).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from s1gym.core.env import StepResult
from s1gym.core.lru import LRU

if TYPE_CHECKING:
    from s1gym.core import S1Env
    from s1gym.engines.base import EngineEnv

__all__ = ["CachedTransitions", "Stepped", "TransitionCache", "copy_result"]

class Stepped(NamedTuple):
    """A stored child the engine stepped with its siblings: ``move`` played from the keyed state gave the engine
    state ``snapshot`` and the engine's ``answer`` (what ``step`` returns; a task's ``_on_step`` reads it and
    keeps it unchanged). A hit plays it again onto a fork of the asking env, which the key says is in the same
    state (``EngineEnv._stepped_child``): the same child and result, no engine call."""

    move: str
    snapshot: Any
    answer: Any


def copy_result(result: StepResult) -> StepResult:
    """A step's result whose ``info`` the caller may change without touching the stored one."""
    obs, reward, terminated, truncated, info = result
    info = {k: (v.copy() if isinstance(v, np.ndarray | list | dict | set) else v) for k, v in info.items()}
    return obs, reward, terminated, truncated, info


class TransitionCache:
    """(state, move) -> (the env after the move, the step's result), least recently used first out."""

    def __init__(self, capacity: int) -> None:
        self._entries: LRU[Hashable, tuple[EngineEnv | Stepped, StepResult | None]] = LRU(max(0, int(capacity)))
        #: children stored (``hits`` and ``misses`` count lookups): counters for benchmarks and tests
        self.stored = 0

    @property
    def capacity(self) -> int:
        return self._entries.capacity

    @property
    def hits(self) -> int:
        return self._entries.hits

    @property
    def misses(self) -> int:
        return self._entries.misses

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> tuple[EngineEnv | Stepped, StepResult | None] | None:
        """The stored child and result for ``key`` (a :class:`Stepped` and ``None``: rebuilt by the caller),
        counted as a hit or a miss."""
        return self._entries.get(key)

    def put(self, key: Hashable, child: EngineEnv | Stepped, result: StepResult | None = None) -> None:
        """Store ``child`` (an env nobody else steps) and its step's ``result`` under ``key``, or a
        :class:`Stepped` child (no result: a hit steps it again)."""
        if self.capacity == 0:
            return
        self._entries.put(key, (child, None if isinstance(child, Stepped) else copy_result(result)))
        self.stored += 1

    def clear(self) -> None:
        self._entries.clear()


class CachedTransitions:
    """What :class:`~s1gym.engines.base.EngineEnv` adds to ``fork_step``: the pool's transition cache (the
    mixin comes before :class:`~s1gym.core.S1Env`, whose ``fork_step`` steps a fork)."""

    def _transition_settings(self) -> Hashable:
        """The env's settings, besides the engine's state, that change what a step gives (tasks add theirs)."""
        return (self.max_steps, self.max_candidates, self.action_slots)

    def _transition_state(self, cache: TransitionCache) -> tuple[Any, ...] | None:
        """The key of this state in ``cache``, to which a move is added (see :mod:`s1gym.engines.transitions`);
        ``None`` when nothing is cached (the cache is off, or a game id is not hashable)."""
        if not cache.capacity:
            return None
        state = self.game_state
        rng = None if self._np_random is None else repr(self._np_random.bit_generator.state)
        key = (type(self), state.game, state.moves, self._steps, self._candidates, self._transition_settings(), rng)
        try:
            hash(key)
        except TypeError:  # a game id that is not hashable: nothing is cached
            return None
        return key

    def _from_cache(self, hit: tuple[EngineEnv | Stepped, StepResult | None]) -> tuple[S1Env, StepResult]:
        """The child and result a cache entry gives this env: a fork of the stored child and a copy of its
        result, or a :class:`Stepped` child played again onto a fork of this env."""
        child, result = hit
        if isinstance(child, Stepped):
            return self._stepped_child(child.move, child.snapshot, child.answer, counted=False)
        assert result is not None
        return child.fork(), copy_result(result)

    def fork_step(self, move: str, keep: bool = False) -> tuple[S1Env, StepResult]:
        """A fork after ``move`` and the step's result, from the pool's transition cache when it holds them;
        ``keep``: store a stepped child there (its snapshot is taken now; a caller that reads the child's
        state key takes it anyway)."""
        cache = self._pool().transitions
        prefix = self._transition_state(cache)
        if prefix is None or self.hides_outcome(move):  # an answer a planning fork hides: not played, not cached
            return super().fork_step(move)
        hit = cache.get((*prefix, move))
        if hit is not None:
            return self._from_cache(hit)
        child, result = super().fork_step(move)
        if keep:
            cache.put((*prefix, move), child.fork(), result)
        return child, result
