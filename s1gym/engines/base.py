"""The engine seam: tasks whose game lives in a costly engine without a cheap copy.

TextWorldExpress keeps its game in a JVM, ALFWorld in a compiled planner
library, the web tasks in a browser page, the desktop task in an application
window. None can be copied the way a Python object can, and starting one is
slow, so ``fork()`` cannot simply copy them. This module owns, once for every
such task, what that takes:

- an :class:`Engine` is one live game instance (a TWX game object, an ALFWorld
  ``PddlEnv``, a browser page). A task implements four methods:
  ``new_game(game)``, ``step(move)``, ``close()`` (``replay`` when it has a
  faster way than a new game and a step per move) and, when the engine can save
  and load its state cheaply, ``snapshot()`` / ``restore(game, snapshot)``;
- an :class:`EnginePool` holds the engines of one kind in this process (at most
  ``capacity``); when it is full the least recently used engine is taken over;
- an :class:`EngineEnv` is the :class:`~s1gym.core.S1Env` base for such tasks.
  Each state the env reaches is a :class:`GameState` (the game, the moves that
  led there, a snapshot once one was taken) bound to at most one engine.

Forks are lazy: a fork shares its parent's ``GameState`` and holds no engine
until it is stepped (or something reads the engine). The env that reached a
state *owns* it and keeps its engine; another env at that state (a fork) takes
an engine of its own and brings it to the state by restoring the snapshot
(engines with ``can_snapshot``) or by replaying the moves from a new game.
Snapshot engines are cheap to restore, so a fork may take the owner's engine
directly (the owner restores the snapshot, taken when the fork was made, if it
is stepped again); so may a fork of a task with ``forks_take_engines`` (the
owner replays). When the pool takes over an engine whose state is still held
by a live env, that env restores it the same way on its next step.

``EngineEnv`` implements ``_new_game``, ``_play`` and ``_fork_into``; a task
implements (see docs/adding-a-task.md, and ``tests/test_engine.py`` for the
smallest complete example):

- ``_open_engine() -> Engine``: start one engine (the pool calls it when it has room);
- ``_pool_key() -> Hashable`` (default: the class): engines with the same key are interchangeable;
- ``_choose_game(seed, options) -> game``: which game ``reset`` starts (any value the engine's
  ``new_game`` takes; kept in every ``GameState``);
- ``_on_start(raw) -> str`` and ``_on_step(move, raw) -> str``: read the engine's answer into the
  env's own (copyable) attributes and return the feedback text;
- the usual ``_legal_moves``, ``_describe``, ``_progress`` from those attributes.

``engine_capacity`` (class attribute) bounds the pool. ``answer_cache`` (class attribute, default 0:
off) lets a task whose engine is a function of its game and moves (the web pages) remember that many
``(game, moves, move) -> answer`` triples per pool: an env with no engine at its state (a fork) that
steps a remembered move takes the answer without an engine, and restores an engine only when a move
nobody played yet needs one (Search steps each child once to judge it and again when it expands it). ``env.engine()`` gives
the engine at the env's state for code that must read more than ``step``
returns (an expert reading TWX's object tree). ``close()`` gives the engine
back to the pool; :func:`close_pools` closes every engine (at interpreter exit
too: :mod:`s1gym.engines.lifecycle`). A task whose engines hold processes that
nothing else ends (a desktop) sets ``close_engines_with_last_env``: its pool
closes, ending those processes, when the last env that used it (the env made by
``gym.make`` or any of its forks) is closed; until then the envs and forks share
the engines.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, ClassVar, TypeVar

from s1gym.core import S1Env
from s1gym.engines import lifecycle
from s1gym.engines.transitions import CachedTransitions, TransitionCache
from s1gym.errors import EngineCrashed

__all__ = ["Engine", "EngineEnv", "EnginePool", "GameState", "close_pools", "pool_for", "pool_stats"]


class Engine:
    """One live game instance. Subclasses implement ``new_game``, ``step``, ``close`` and,
    when ``can_snapshot``, ``snapshot`` and ``restore``."""

    #: ``snapshot()``/``restore()`` are implemented and cheap (about one step).
    can_snapshot: ClassVar[bool] = False
    #: Closed by :func:`close_pools` at interpreter exit. Engines that hold other processes (a browser, a
    #: desktop) must be; an engine living inside this process (a loaded C library) should not, since
    #: unloading it while the interpreter tears down its objects can crash the exit.
    close_at_exit: ClassVar[bool] = True
    #: What the engine is, as an :class:`~s1gym.errors.EngineCrashed` names it ("TextWorldExpress JVM").
    label: ClassVar[str] = ""

    def new_game(self, game: Any) -> Any:
        """Start ``game``; return the engine's first answer (whatever the env's ``_on_start`` reads)."""
        raise NotImplementedError

    def step(self, move: str) -> Any:
        """Play ``move``; return the engine's answer (whatever the env's ``_on_step`` reads)."""
        raise NotImplementedError

    def replay(self, game: Any, moves: tuple[str, ...]) -> None:
        """Bring this engine to the state after ``moves`` from the start of ``game`` (engines may
        override it with something cheaper than ``new_game`` plus ``step`` per move)."""
        self.new_game(game)
        for move in moves:
            self.step(move)

    def snapshot(self) -> Any:
        """The current state as a value ``restore`` accepts (only when ``can_snapshot``)."""
        raise NotImplementedError(f"{type(self).__name__} cannot snapshot its state")

    def restore(self, game: Any, snapshot: Any) -> None:
        """Bring this engine to ``snapshot`` of ``game`` (only when ``can_snapshot``)."""
        raise NotImplementedError(f"{type(self).__name__} cannot restore a snapshot")

    def alive(self) -> bool:
        """False once the engine cannot be used any more (its process died); the pool drops it."""
        return True

    def crashed(self, exc: BaseException) -> bool:
        """Whether ``exc``, raised by a call into this engine, means the engine is gone (default: it is not
        :meth:`alive` any more). The env then ends the episode with :class:`~s1gym.errors.EngineCrashed`."""
        return not self.alive()

    def close(self) -> None:
        """Release the engine's resources."""


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
                 transition_capacity: int = 0) -> None:
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
        self.opened = self.takeovers = self.restores = self.replayed_moves = self.cache_hits = 0
        #: (game, moves, move) -> answer, least recently used first (EngineEnv.answer_cache bounds it)
        self.answers: OrderedDict[tuple[Any, tuple[str, ...], str], Any] = OrderedDict()
        #: engine steps of envs' moves (forks' included; restores and replays are counted above)
        self.steps = 0
        #: (state, move) -> the env after it (:mod:`s1gym.engines.transitions`)
        self.transitions = TransitionCache(transition_capacity)

    def __len__(self) -> int:
        return len(self._engines)

    def holds(self, engine: Engine | None, state: GameState) -> bool:
        """``engine`` is in this pool, alive, and holds ``state``."""
        if engine is None or engine not in self._engines:
            return False
        ref = self._engines[engine]
        return ref is not None and ref() is state and engine.alive()

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
        other engines' states are restored by replaying their moves.
        """
        with self.lock:
            if self.closed:
                raise RuntimeError(f"engine pool {self.key!r} is closed")
            for engine in list(self._engines):
                if not engine.alive():
                    self._drop(engine)
            for engine, ref in reversed(self._engines.items()):  # the most recently released first
                if ref is None or ref() is None:
                    self._engines.move_to_end(engine)
                    return engine
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

    def _drop(self, engine: Engine) -> None:
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
                self._drop(engine)
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
             transition_capacity: int = 0) -> EnginePool:
    """The process's pool for ``key`` (made on first use, again after :func:`close_pools`)."""
    pool = _POOLS.get(key)
    if pool is not None and not pool.closed:
        return pool
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None or pool.closed:
            pool = _POOLS[key] = EnginePool(key, open_engine, capacity, transition_capacity)
        return pool


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
            "cache_hits": p.cache_hits,
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
        if any(type(e).close_at_exit for e in list(pool._engines)):
            pool.close()


lifecycle.at_exit("pools", _close_at_exit)


_F = TypeVar("_F", bound=Callable[..., Any])


def _engine_guard(method: _F) -> _F:
    """A call into the engines that raises because an engine died ends the episode with
    :class:`~s1gym.errors.EngineCrashed` (naming the engine, the seed and the step); the dead engines leave
    the pool, and the pool closes when none is left (its transition cache, whose forks stood on them, with
    it), so nothing reuses them and the next game starts on a fresh engine."""

    @functools.wraps(method)
    def guarded(self: EngineEnv, *args: Any) -> Any:
        try:
            return method(self, *args)
        except Exception as exc:
            crash = self._engine_crash(exc, reset=method.__name__ == "_new_game")
            if crash is None:
                raise
            if crash is exc:
                raise
            raise crash from exc

    return guarded  # type: ignore[return-value]


class EngineEnv(CachedTransitions, S1Env):
    """An :class:`~s1gym.core.S1Env` whose game lives in pooled engines (see the module docstring)."""

    #: Most engines of this kind alive at once in a process (per pool key).
    engine_capacity: ClassVar[int] = 8
    #: Close the pool (every engine of this key) when the last env using it closes: for engines holding
    #: processes nothing else would end before the interpreter exits (a desktop session).
    close_engines_with_last_env: ClassVar[bool] = False
    #: Remembered (game, moves, move) -> answer triples per pool (0: none; see the module docstring).
    answer_cache: ClassVar[int] = 0
    #: A fork stepped first takes the engine of the env that owns its state, which replays its moves when
    #: it steps again (Search forks each node once per move and never steps the node itself: the first
    #: child costs no replay); False: the fork replays on an engine of its own.
    forks_take_engines: ClassVar[bool] = False
    #: Entries of the pool's transition cache (:mod:`s1gym.engines.transitions`); 0 turns it off.
    transition_capacity: ClassVar[int] = 1024

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._game_state: GameState | None = None

    # ------------------------------------------------------------ task hooks
    def _open_engine(self) -> Engine:
        raise NotImplementedError

    def _pool_key(self) -> Hashable:
        return type(self)

    def _choose_game(self, seed: int | None, options: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _on_start(self, raw: Any) -> str:
        raise NotImplementedError

    def _on_step(self, move: str, raw: Any) -> str:
        raise NotImplementedError

    # --------------------------------------------------------------- engines
    def _engine_crash(self, exc: Exception, reset: bool = False) -> EngineCrashed | None:
        """The :class:`EngineCrashed` that ``exc`` means (``None``: no engine died); drops dead engines."""
        pool = getattr(self, "_last_pool", None)
        engines = list(pool._engines) if pool is not None else []
        dead = [e for e in engines if e.crashed(exc)]
        if not dead and not isinstance(exc, EngineCrashed):
            return None
        state = self._game_state
        known = [*dead, *engines, *([state.engine] if state is not None and state.engine is not None else [])]
        label = next((type(e).label for e in known if type(e).label), "") or type(self).__name__ + " engine"
        if isinstance(exc, EngineCrashed):
            crash = exc
        else:
            first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
            crash = EngineCrashed(f"the {label} died: {type(exc).__name__}" + (f": {first}" if first else ""))
        crash.locate(engine=label, seed=getattr(self, "_episode_seed", None),
                     step=len(state.moves) if state is not None and not reset else None)
        if pool is not None:
            with pool.lock:
                for engine in dead:
                    pool._drop(engine)
                pool.transitions.clear()
                empty = not any(e.alive() for e in pool._engines)
            if empty:
                close_pools(lambda k: k == pool.key)
        return crash

    def _pool(self) -> EnginePool:
        key = self._pool_key()
        if self.close_engines_with_last_env:
            with _POOLS_LOCK:
                _USERS.setdefault(key, weakref.WeakSet()).add(self)
        self._last_pool = pool_for(key, self._open_engine, self.engine_capacity, self.transition_capacity)
        return self._last_pool

    @property
    def game_state(self) -> GameState:
        """The env's current state (shared with its unstepped forks)."""
        if self._game_state is None:
            raise RuntimeError(f"{self.task_name}: call reset() first")
        return self._game_state

    @_engine_guard
    def engine(self) -> Engine:
        """An engine holding this env's state (restored or replayed when needed), for reading it."""
        pool = self._pool()
        with pool.lock:
            state = self.game_state
            if state.owner is None or state.owner() is None:
                state.owner = weakref.ref(self)  # adopt a state whose owner is gone
            engine = state.engine if pool.holds(state.engine, state) else None
            if not state.owned_by(self):
                # Another env owns this state: work on a copy of it that this env owns.
                mine = GameState(state.game, state.moves, self, state.snapshot)
                if engine is not None and (self.forks_take_engines or (engine.can_snapshot and state.snapshot is not None)):
                    pool.bind(engine, mine)  # the owner restores the snapshot or replays when it needs one again
                else:
                    engine = None
                self._game_state = state = mine
            if engine is None:
                engine = pool.acquire()
                self._restore(pool, engine, state)
                pool.bind(engine, state)
            else:
                pool.touch(engine)
            return engine

    def _restore(self, pool: EnginePool, engine: Engine, state: GameState) -> None:
        pool.restores += 1
        if engine.can_snapshot and state.snapshot is not None:
            engine.restore(state.game, state.snapshot)
            return
        engine.replay(state.game, state.moves)
        pool.replayed_moves += len(state.moves)

    @_engine_guard
    def snapshot(self) -> Any:
        """The snapshot of this env's state (taken now if needed; snapshot engines only)."""
        state = self.game_state
        if state.snapshot is None:
            state.snapshot = self.engine().snapshot()
        return state.snapshot

    # ------------------------------------------------------------- S1Env hooks
    @_engine_guard
    def _new_game(self, seed: int | None, options: dict[str, Any]) -> str:
        self._episode_seed = seed
        game = self._choose_game(seed, options)
        pool = self._pool()
        with pool.lock:
            old = self._game_state
            engine = old.engine if old is not None and old.owned_by(self) and pool.holds(old.engine, old) else None
            engine = engine or pool.acquire()
            raw = engine.new_game(game)
            self._game_state = GameState(game, (), self)
            pool.bind(engine, self._game_state)
        return self._on_start(raw)

    @_engine_guard
    def _play(self, move: str) -> str:
        pool = self._pool()
        state = self.game_state
        key = (state.game, state.moves, move)
        if self.answer_cache and not (state.owned_by(self) and pool.holds(state.engine, state)):
            with pool.lock:
                raw = pool.answers.get(key)
                if raw is not None:
                    pool.answers.move_to_end(key)
                    pool.cache_hits += 1
            if raw is not None:  # a page played this move from this state before: the same answer
                self._game_state = GameState(state.game, (*state.moves, move), self)
                return self._on_step(move, raw)
        engine = self.engine()
        state = self.game_state
        raw = engine.step(move)
        new = GameState(state.game, (*state.moves, move), self)
        pool.steps += 1
        pool.bind(engine, new)
        self._game_state = new
        if self.answer_cache:
            with pool.lock:
                pool.answers[key] = raw
                while len(pool.answers) > self.answer_cache:
                    pool.answers.popitem(last=False)
        return self._on_step(move, raw)

    @_engine_guard
    def _fork_into(self, clone: S1Env) -> None:
        state = self.game_state
        if state.snapshot is None and state.owned_by(self):
            pool = self._pool()
            if pool.holds(state.engine, state) and state.engine.can_snapshot:
                state.snapshot = state.engine.snapshot()  # the fork may take this engine: keep a way back

    def close(self) -> None:
        """Give this env's engine back to its pool (the env can still be used: it restores on demand);
        with ``close_engines_with_last_env``, close the pool when no other env uses it."""
        state = getattr(self, "_game_state", None)
        if state is not None and state.owned_by(self) and state.pool is not None:
            if state.pool.holds(state.engine, state):
                state.pool.release(state.engine)
        if self.close_engines_with_last_env:
            key = self._pool_key()
            with _POOLS_LOCK:
                users = _USERS.get(key)
                if users is not None:
                    users.discard(self)
                last = not users
            if last:
                close_pools(lambda k: k == key)
        super().close()
