"""The engines of one kind in a process: the states they hold and the process's pools.

An :class:`EnginePool` holds at most ``capacity`` engines (:class:`~s1gym.engines.base.Engine`) of one
pool key, least recently used first; each state an env reaches is a :class:`GameState` bound to at most
one engine (:meth:`EnginePool.bind`). :func:`pool_for` gives the process's pool for a key (made on first
use), :func:`close_pools` closes them (at interpreter exit too, and a forked child starts with none:
:mod:`s1gym.engines.lifecycle`), :func:`pool_stats` counts what they did. How envs use them (lazy forks,
restore or replay, takeovers) is :class:`~s1gym.engines.base.EngineEnv`'s part: see :mod:`s1gym.engines.base`.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import TYPE_CHECKING, Any

from s1gym.core.lru import LRU
from s1gym.engines import lifecycle
from s1gym.engines.transitions import TransitionCache

if TYPE_CHECKING:
    from s1gym.engines.base import Engine, EngineEnv

__all__ = ["EnginePool", "GameState", "add_user", "close_pools", "live_pool", "pool_for", "pool_stats",
           "remove_user"]


class GameState:
    """One state a game reached: the game, the moves from its start, a snapshot once taken.

    Envs hold their current ``GameState``; a fork shares its parent's until it
    moves. ``engine`` is the engine holding this state, if any (an engine holds
    one state at a time; see :meth:`EnginePool.bind`).
    """

    __slots__ = ("__weakref__", "engine", "game", "moves", "owner", "pool", "snapshot")

    def __init__(self, game: Any, moves: tuple[str, ...], owner: EngineEnv | None, snapshot: Any = None) -> None:
        self.game = game
        self.moves = moves
        self.snapshot = snapshot
        self.owner: weakref.ref[EngineEnv] | None = weakref.ref(owner) if owner is not None else None
        self.engine: Engine | None = None
        self.pool: EnginePool | None = None

    def owned_by(self, env: EngineEnv) -> bool:
        return self.owner is not None and self.owner() is env


class EnginePool:
    """The engines of one kind in this process: at most ``capacity``, least recently used first."""

    def __init__(self, key: Hashable, open_engine: Callable[[], Engine], capacity: int,
                 transition_capacity: int = 0, answer_capacity: int = 0) -> None:
        if capacity < 1:
            raise ValueError(f"engine pool {key!r}: capacity must be >= 1, got {capacity}")
        self.key = key
        self.open_engine = open_engine
        self.capacity = capacity
        self.lock = threading.RLock()
        #: engine -> the state it holds (weakly: a state nobody holds frees its engine)
        self._engines: OrderedDict[Engine, weakref.ref[GameState] | None] = OrderedDict()
        self.closed = False
        #: counters for benchmarks and tests
        self.opened = self.takeovers = self.restores = self.replayed_moves = 0
        #: (game, moves, move) -> answer, least recently used first (EngineEnv.answer_cache bounds it)
        self.answers: LRU[tuple[Any, tuple[str, ...], str], Any] = LRU(answer_capacity)
        #: engine steps of envs' moves (forks' included; restores and replays are counted above)
        self.steps = 0
        #: (state, move) -> the env after it (:mod:`s1gym.engines.transitions`)
        self.transitions = TransitionCache(transition_capacity)

    def __len__(self) -> int:
        return len(self._engines)

    def __iter__(self) -> Iterator[Engine]:
        """The engines in the pool (a copy: the pool may change while the caller walks it)."""
        return iter(list(self._engines))

    def holds(self, engine: Engine | None, state: GameState) -> bool:
        """``engine`` is in this pool, alive, and holds ``state`` (a dead engine met here leaves the pool)."""
        if engine is None or engine not in self._engines:
            return False
        ref = self._engines[engine]
        if ref is None or ref() is not state:
            return False
        if not engine.alive():
            with self.lock:
                self.drop(engine)
            return False
        return True

    def bind(self, engine: Engine, state: GameState | None) -> None:
        """Record that ``engine`` now holds ``state`` (``None``: idle); the previous state loses it."""
        with self.lock:
            old = self._engines.get(engine)
            held = old() if old is not None else None
            if held is not None and held is not state and held.engine is engine:
                held.engine = None
            self._engines[engine] = weakref.ref(state) if state is not None else None
            self._engines.move_to_end(engine)
            if state is not None:
                state.engine, state.pool = engine, self

    def touch(self, engine: Engine) -> None:
        with self.lock:
            if engine in self._engines:
                self._engines.move_to_end(engine)

    def acquire(self) -> Engine:
        """An engine to use for another state: an idle one (the most recently released), a new one,
        or the least recently used one.

        Taking over an engine whose state is still held by a live env snapshots
        that state first (snapshot engines) so the env can restore it later;
        other engines' states are restored by replaying their moves. Dead engines
        met on the way leave the pool (only those: asking every engine whether it
        lives would cost a system call each, on every acquire).
        """
        with self.lock:
            if self.closed:
                raise RuntimeError(f"engine pool {self.key!r} is closed")
            while (engine := self._idle()) is not None:
                if engine.alive():
                    self._engines.move_to_end(engine)
                    return engine
                self.drop(engine)
            while self._engines and not next(iter(self._engines)).alive():
                self.drop(next(iter(self._engines)))
            if len(self._engines) < self.capacity:
                engine = self.open_engine()
                self.opened += 1
                self._engines[engine] = None
                return engine
            engine = next(iter(self._engines))  # least recently used
            ref = self._engines[engine]
            held = ref() if ref is not None else None
            if held is not None:
                if engine.can_snapshot and held.snapshot is None:
                    held.snapshot = engine.snapshot()
                held.engine = None
            self._engines[engine] = None
            self._engines.move_to_end(engine)
            self.takeovers += 1
            return engine

    def _idle(self) -> Engine | None:
        """The most recently released engine that holds no live state, if any."""
        for engine, ref in reversed(self._engines.items()):
            if ref is None or ref() is None:
                return engine
        return None

    def release(self, engine: Engine) -> None:
        """Make ``engine`` idle (its state, if still held, is restored elsewhere when needed)."""
        with self.lock:
            if engine in self._engines:
                self.bind(engine, None)

    def forget_states(self) -> None:
        """Every engine becomes idle (e.g. something outside the pool changed the engines' games)."""
        with self.lock:
            for engine in list(self._engines):
                self.bind(engine, None)

    def drop(self, engine: Engine) -> None:
        """Take ``engine`` out of the pool and close it (a dead engine that fails to close is dropped too)."""
        ref = self._engines.pop(engine, None)
        held = ref() if ref is not None else None
        if held is not None and held.engine is engine:
            held.engine = None
        try:
            engine.close()
        except Exception:  # noqa: BLE001 - a dead engine may fail to close; it is dropped anyway
            pass

    def close(self) -> None:
        """Close every engine; envs still holding states restore them in a new pool when used."""
        with self.lock:
            for engine in list(self._engines):
                ref = self._engines[engine]
                held = ref() if ref is not None else None
                if held is not None and engine.can_snapshot and held.snapshot is None and engine.alive():
                    try:
                        held.snapshot = engine.snapshot()
                    except Exception:  # noqa: BLE001 - the state is replayed instead
                        pass
                self.drop(engine)
            self.transitions.clear()  # its children would restore into engines of a pool that is gone
            self.closed = True


_POOLS: dict[Hashable, EnginePool] = {}
_POOLS_LOCK = threading.Lock()
#: Pool key -> the envs using it that are not closed (only for ``close_engines_with_last_env`` tasks).
_USERS: dict[Hashable, weakref.WeakSet[EngineEnv]] = {}


#: A forked child's copies of its parent's pools, kept referenced for the child's whole life: dropping
#: them would run their objects' finalizers in the child, and py4j's finalizer tells the *parent's* JVM
#: (over the inherited socket) to forget the Java object the parent is still using.
_INHERITED_POOLS: list[dict[Hashable, EnginePool]] = []


def _forget_inherited_pools() -> None:
    """In a forked child (an async vector env's worker) the parent's pools hold the parent's engines
    (its JVM connection, its browser pages): the child starts with no pools of its own and never uses,
    closes or frees the parent's (see :data:`_INHERITED_POOLS`)."""
    global _POOLS_LOCK
    _POOLS_LOCK = threading.Lock()
    _INHERITED_POOLS.append(dict(_POOLS))
    _POOLS.clear()
    _USERS.clear()


lifecycle.at_fork_in_child(_forget_inherited_pools)


def pool_for(key: Hashable, open_engine: Callable[[], Engine], capacity: int,
             transition_capacity: int = 0, answer_capacity: int = 0) -> EnginePool:
    """The process's pool for ``key`` (made on first use, again after :func:`close_pools`)."""
    pool = _POOLS.get(key)
    if pool is not None and not pool.closed:
        return pool
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None or pool.closed:
            pool = _POOLS[key] = EnginePool(key, open_engine, capacity, transition_capacity, answer_capacity)
        return pool


def live_pool(key: Hashable) -> EnginePool | None:
    """The process's open pool for ``key``, if there is one (benchmarks read its transition cache)."""
    pool = _POOLS.get(key)
    return pool if pool is not None and not pool.closed else None


def add_user(key: Hashable, env: EngineEnv) -> None:
    """Count ``env`` as a user of the pool ``key`` (``close_engines_with_last_env`` tasks)."""
    with _POOLS_LOCK:
        _USERS.setdefault(key, weakref.WeakSet()).add(env)


def remove_user(key: Hashable, env: EngineEnv) -> bool:
    """``env`` stops using the pool ``key``; True when no env uses it any more (then close it)."""
    with _POOLS_LOCK:
        users = _USERS.get(key)
        if users is not None:
            users.discard(env)
        return not users


def close_pools(predicate: Callable[[Hashable], bool] | None = None) -> None:
    """Close the pools whose key satisfies ``predicate`` (all by default). Envs that used them count as
    users again (``close_engines_with_last_env``) once they use a pool of that key again."""
    with _POOLS_LOCK:
        keys = [k for k in _POOLS if predicate is None or predicate(k)]
        pools = [_POOLS.pop(k) for k in keys]
        for key in keys:
            _USERS.pop(key, None)
    for pool in pools:
        pool.close()


def pool_stats() -> dict[Hashable, dict[str, int]]:
    """Engines and counters per live pool (benchmarks print them)."""
    return {
        key: {
            "engines": len(p),
            "opened": p.opened,
            "takeovers": p.takeovers,
            "restores": p.restores,
            "replayed_moves": p.replayed_moves,
            "cache_hits": p.answers.hits,
            "steps": p.steps,
            "transition_hits": p.transitions.hits,
        }
        for key, p in list(_POOLS.items())
    }


def _close_at_exit() -> None:
    """Close the engines that hold outside resources; leave in-process ones to the operating system."""
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
    for pool in pools:
        if any(type(e).close_at_exit for e in pool):
            pool.close()


lifecycle.at_exit("pools", _close_at_exit)
