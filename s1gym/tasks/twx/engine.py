"""TextWorldExpress's games in the process's one JVM (:mod:`s1gym.engines.jvm`): one loaded game generator
per ``(game, params)`` and JVM (fold seeds, gold paths, the room maps the expert explored), and the engine
(:class:`TWXEngine`: one Scala ``PythonInterface`` game object sharing that generator) TWX envs stand on."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from s1gym.engines import jvm as _jvm
from s1gym.engines.base import Engine
from s1gym.tasks.twx import snapshots as _snapshots

__all__ = ["GameGenerator", "TWXEngine", "game_generator", "get_jvm"]


def _jar() -> tuple[str, str]:
    from textworld_express.constants import BASEPATH, JAR_PATH

    return JAR_PATH, BASEPATH


def get_jvm() -> _jvm.JVM:
    """The process's JVM, with the snapshot helper on its classpath when it compiles (:mod:`.snapshots`)."""
    jar, base = _jar()
    helper = _snapshots.helper_classpath(jar)
    return _jvm.get_jvm(jar if helper is None else jar + os.pathsep + helper, base)


class GameGenerator:
    """One loaded TWX game generator per JVM and ``(game, params)``: the fold seeds, gold paths, maps."""

    def __init__(self, jvm: _jvm.JVM, game: str, params: str) -> None:
        self.jvm = jvm
        self.template = jvm.jvm.textworldexpress.runtime.PythonInterface()
        msg = self.template.load(game, params)
        if msg:
            raise ValueError(f"TextWorldExpress rejected {game} with {params!r}: {msg}")
        self.generator = self.template.gameGenerator()
        self.fold_seeds: dict[str, list[int]] = {}
        self.gold: dict[tuple[int, str], tuple[str, ...]] = {}
        #: Per game, the room graph the CookingWorld planner explored (the map never changes).
        self.rooms: dict[tuple[int, str], dict[str, dict[str, str]]] = {}
        for fold, getter in (("train", "getSeedsTrain"), ("dev", "getSeedsDev"), ("test", "getSeedsTest")):
            text = str(getattr(self.template, getter)().toString())  # one py4j call, not one per element
            self.fold_seeds[fold] = [int(x) for x in text.strip("[]").split(",") if x.strip()]

    def new_game_object(self) -> Any:
        pi = self.jvm.jvm.textworldexpress.runtime.PythonInterface()
        getattr(pi, "gameGenerator_$eq")(self.generator)  # share the loaded generator (Scala setter)
        return pi

    def gold_path(self, seed: int, fold: str) -> tuple[str, ...]:
        key = (seed, fold)
        if key not in self.gold:
            with self.jvm.lock:
                self.template.generateNewGame(seed, fold, True)
                self.gold[key] = tuple(str(a) for a in self.template.getGoldActionSequence())
        return self.gold[key]


def game_generator(game: str, params: str) -> GameGenerator:
    jvm = get_jvm()
    key = ("twx-generator", game, params)
    gen = jvm.cache.get(key)
    if gen is None:
        with jvm.lock:
            gen = jvm.cache.get(key)
            if gen is None:
                gen = jvm.cache[key] = GameGenerator(jvm, game, params)
    return gen


class TWXEngine(Engine):
    """One Scala game object sharing its generator.

    With the JVM's snapshot helper (:mod:`.snapshots`) the engine snapshots and restores its game object in
    the JVM (``can_snapshot``): a restore is sent with the next step, in one round trip; and it steps a
    state's children in one round trip (``can_step_children``). Without it, and
    for a snapshot a dead JVM took with it, the engine replays the moves with TWX's plain (non-JSON) calls.
    """

    label = "TextWorldExpress JVM"

    def __init__(self, gen: GameGenerator) -> None:
        self.gen = gen
        self._pi = gen.new_game_object()
        self.snaps = _snapshots.Snapshots.of(gen.jvm)
        self.can_snapshot = self.can_step_children = self.snaps is not None
        self._game: tuple[int, str] | None = None
        #: the moves since the game began (a snapshot keeps them, to replay it in another JVM)
        self._moves: list[str] = []
        #: a restore not sent yet: the next step sends it with its move (or reading ``pi`` does)
        self._pending: _snapshots.Snapshot | None = None
        #: set by the expert (until the engine is restored): whether it will read the planner's tree after a
        #: move (a move off its plan); such a step brings the tree back with it (:meth:`step`), so a player
        #: that keeps leaving the plan costs no round trip of its own per plan
        self.tree_after: Callable[[str], bool] | None = None
        #: the planner's tree of this state, when the step that reached it brought one
        self._tree: str | None = None

    @property
    def pi(self) -> Any:
        """The Scala game object, at this engine's state."""
        if self._pending is not None:
            snap, self._pending = self._pending, None
            if not self.snaps.restore(self._pi, snap):
                self.replay(self._game, snap.moves)
        return self._pi

    def object_tree(self) -> str:
        """TWX's object tree of the game at this engine's state (JSON; the CookingWorld expert reads it)."""
        pi = self.pi
        return pi.game().getObjectTree() if self.snaps is None else self.snaps.object_tree(pi)

    def cooking_tree(self) -> str:
        """The object tree CookingWorld's expert plans from: only the fields its planner reads when the JVM
        has the helper (S1CookingTree.java, a tenth of the size), else TWX's whole tree (read the same way)."""
        if self._tree is not None:
            return self._tree
        pi = self.pi
        slim = None if self.snaps is None else self.snaps.cooking_tree(pi)
        return self.object_tree() if slim is None else slim

    def new_game(self, game: tuple[int, str]) -> tuple[str, str]:
        """The game's first state (JSON) and its task description."""
        seed, fold = game
        self._pending, self._tree, self.tree_after = None, None, None
        raw = self._pi.generateNewGameJSON(seed, fold, False)
        self._game, self._moves = game, []
        return raw, str(self._pi.getTaskDescription()).strip()

    def step(self, move: str) -> str:
        snap, self._pending, self._tree = self._pending, None, None
        if snap is None and self.tree_after is not None and self.snaps is not None and self.tree_after(move):
            raw, self._tree = self.snaps.step_and_cooking_tree(self._pi, move)
            self._moves.append(move)
            return raw
        raw = None if snap is None else self.snaps.restore_step(self._pi, snap, move)
        if raw is None:
            if snap is not None:  # the JVM does not hold it (e.g. restarted): replay
                self.replay(self._game, snap.moves)
            raw = self._pi.stepJSON(move)
        self._moves.append(move)
        return raw

    def replay(self, game: tuple[int, str], moves: tuple[str, ...]) -> None:
        seed, fold = game
        self._pending, self._tree, self.tree_after = None, None, None
        self._pi.generateNewGame(seed, fold, False)
        for move in moves:
            self._pi.step(move)
        self._game, self._moves = game, list(moves)

    def snapshot(self) -> _snapshots.Snapshot:
        if self._pending is not None:  # not restored yet: this engine's state is that snapshot
            return self._pending
        return self.snaps.take(self._pi, tuple(self._moves))

    def step_children(self, game: tuple[int, str], snapshot: _snapshots.Snapshot,
                      moves: Sequence[str]) -> list[tuple[_snapshots.Snapshot, dict[str, Any]]] | None:
        """Every child of ``snapshot`` in one round trip (:meth:`.snapshots.Snapshots.children`); the engine is
        then at ``snapshot`` (restored with its next step)."""
        out = self.snaps.children(self._pi, snapshot, moves)
        if out is not None:
            self.restore(game, snapshot)  # the JVM left the game object empty
        return out

    def restore(self, game: tuple[int, str], snapshot: _snapshots.Snapshot) -> None:
        if snapshot.owner is not self.snaps:  # taken in a JVM that has gone
            self.replay(game, snapshot.moves)
            return
        self._pending, self._game, self._moves = snapshot, game, list(snapshot.moves)
        self._tree, self.tree_after = None, None

    def alive(self) -> bool:
        return self.gen.jvm is _jvm.current_jvm()

    def crashed(self, exc: BaseException) -> bool:
        """A py4j error other than a Java exception means the JVM is gone (or unreachable: then it is shut
        down so that the next env starts a fresh one)."""
        return self.gen.jvm.crashed(exc)
