"""The engine seam: tasks whose game lives in a costly engine without a cheap copy.

TextWorldExpress keeps its game in a JVM, ALFWorld in a compiled planner
library, the web tasks in a browser page, the desktop task in an application
window. None can be copied the way a Python object can, and starting one is
slow, so ``fork()`` cannot simply copy them. This module owns, once for every
such task, what that takes (and re-exports the parts its sibling modules hold):

- an :class:`Engine` is one live game instance (a TWX game object, an ALFWorld
  ``PddlEnv``, a browser page). A task implements four methods:
  ``new_game(game)``, ``step(move)``, ``close()`` (``replay`` when it has a
  faster way than a new game and a step per move) and, when the engine can save
  and load its state cheaply, ``snapshot()`` / ``restore(game, snapshot)``
  (and ``step_children(game, snapshot, moves)`` when it can step a state's
  children in one call) (:mod:`s1gym.engines.engine`: the interface);
- an :class:`EnginePool` holds the engines of one kind in this process (at most
  ``capacity``); when it is full the least recently used engine is taken over
  (:mod:`s1gym.engines.pool`: the pools, the states they hold, the process's registry);
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
``(game, moves, move) -> answer`` triples per pool (like ``transition_capacity``, the value of the env
that opens the pool sizes it): an env with no engine at its state (a fork) that
steps a remembered move takes the answer without an engine, and restores an engine only when a move
nobody played yet needs one (Search steps each child once to judge it and again when it expands it). ``env.fork_steps(moves)``
gives the children of a state (a fork after each move), in one call into the
engine when the engine can step them together (``Engine.step_children``: TWX),
else one ``fork_step`` each; Search expands and Lookahead annotates with it.
``env.engine()`` gives
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
import weakref
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, ClassVar, TypeVar

from s1gym.core import S1Env
from s1gym.core.env import StepResult
from s1gym.engines.engine import Engine
from s1gym.engines.pool import EnginePool, GameState, add_user, close_pools, pool_for, pool_stats, remove_user
from s1gym.engines.transitions import CachedTransitions, Stepped
from s1gym.errors import EngineCrashed

__all__ = ["Engine", "EngineEnv", "EnginePool", "GameState", "close_pools", "pool_for", "pool_stats"]

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

    #: ``(move, snapshot, answer, counted)`` of a child stepped by ``fork_steps``, which its own step then takes
    _ready: tuple[str, Any, Any, bool] | None = None

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
        engines = list(pool) if pool is not None else []
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
                    pool.drop(engine)
                pool.transitions.clear()
                empty = not any(e.alive() for e in pool)
            if empty:
                close_pools(lambda k: k == pool.key)
        return crash

    def _pool(self) -> EnginePool:
        key = self._pool_key()
        if self.close_engines_with_last_env:
            add_user(key, self)
        self._last_pool = pool_for(key, self._open_engine, self.engine_capacity, self.transition_capacity,
                                   self.answer_cache)
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

    def fork_steps(self, moves: Iterable[str], keep: bool = False) -> Iterator[tuple[S1Env, StepResult]]:
        """The children of this state: for each of ``moves``, in order, a fork after the move and the step's
        result, exactly what ``fork_step(move, keep)`` gives; this env is untouched. Search expands a node
        with it and Lookahead annotates a situation with it.

        Children the pool's transition cache holds come from it. The others are stepped, in one call into the
        engine before the first child is yielded when the engine has ``can_step_children``
        (:meth:`Engine.step_children`: TWX restores the parent and steps every move in the JVM in one round
        trip, each child kept as a snapshot), else one by one as the caller asks for them, with
        ``fork_step`` (so a caller that stops early, as Search does at a winning child, steps no more). This
        default holds for every engine: a task overrides nothing, its engine implements ``step_children``
        when it can do better than one call per child."""
        moves = list(moves)
        hidden = {move for move in moves if self.hides_outcome(move)}  # never played, never cached (planning forks)
        cache = self._pool().transitions
        prefix = self._transition_state(cache)
        hits = {}
        if prefix is not None:
            for move in moves:
                hit = cache.get((*prefix, move))
                if hit is not None:
                    hits[move] = hit
        todo = [move for move in moves if move not in hits and move not in hidden]
        stepped = self._step_children(todo)
        ready = dict(zip(todo, stepped, strict=True)) if stepped is not None else {}
        for move in moves:
            if move in hidden:
                yield S1Env.fork_step(self, move)
                continue
            if move in hits:
                yield self._from_cache(hits[move])
                continue
            if move in ready:
                child, result = self._stepped_child(move, *ready[move])
                if keep and prefix is not None:  # stored as what made it: cheaper than a fork (Stepped)
                    cache.put((*prefix, move), Stepped(move, *ready[move]))
            else:
                child, result = S1Env.fork_step(self, move)
                if keep and prefix is not None:
                    cache.put((*prefix, move), child.fork(), result)
            yield child, result

    def _stepped_child(
        self, move: str, snapshot: Any, answer: Any, counted: bool = True
    ) -> tuple[S1Env, StepResult]:
        """A fork after ``move`` whose step takes the engine's ``answer`` and ``snapshot`` (``fork_steps``;
        ``counted``: the engine stepped it just now, a step of the pool, not a child rebuilt from the cache)."""
        child = self.fork()
        child._ready = (move, snapshot, answer, counted)
        try:
            return child, child.step_move(move)
        finally:
            child._ready = None

    @_engine_guard
    def _step_children(self, moves: Sequence[str]) -> list[tuple[Any, Any]] | None:
        """The engine's ``(snapshot, answer)`` for each of ``moves`` from this state, stepped in one call on an
        engine of the pool (this env's own keeps its state); ``None`` when the engines cannot."""
        pool = self._pool()
        with pool.lock:
            state = self.game_state
            probe = state.engine if state.engine is not None else next(iter(pool), None)
            if not moves or probe is None or not probe.can_step_children:
                return None
            snapshot = self.snapshot()
            engine = pool.acquire()  # an idle one, a new one or the least recently used (its state kept)
            out = engine.step_children(state.game, snapshot, moves)
            pool.bind(engine, None)
            return out

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
        state = self.game_state
        ready, self._ready = self._ready, None
        if ready is not None and ready[0] == move:  # a child the engine stepped already (fork_steps)
            self._game_state = GameState(state.game, (*state.moves, move), self, ready[1])
            if ready[3]:
                self._last_pool.steps += 1  # the pool its parent used a moment ago (finding it again costs more)
            return self._on_step(move, ready[2])
        pool = self._pool()
        key = (state.game, state.moves, move)
        if self.answer_cache and not (state.owned_by(self) and pool.holds(state.engine, state)):
            raw = pool.answers.get(key)
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
            pool.answers.put(key, raw)
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
            if remove_user(key, self):
                close_pools(lambda k: k == key)
        super().close()
