"""TextWorldExpress's games in the process's one JVM (:mod:`s1gym.engines.jvm`): one loaded game generator
per ``(game, params)`` and JVM (fold seeds, gold paths, the room maps the expert explored), and the engine
(:class:`TWXEngine`: one Scala ``PythonInterface`` game object sharing that generator) TWX envs stand on."""

from __future__ import annotations

from typing import Any

from s1gym.engines import jvm as _jvm
from s1gym.engines.base import Engine

__all__ = ["GameGenerator", "TWXEngine", "game_generator", "get_jvm"]


def _jar() -> tuple[str, str]:
    from textworld_express.constants import BASEPATH, JAR_PATH

    return JAR_PATH, BASEPATH


def get_jvm() -> _jvm.JVM:
    return _jvm.get_jvm(*_jar())


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
    """One Scala game object sharing its generator; replays with TWX's plain (non-JSON) calls."""

    def __init__(self, gen: GameGenerator) -> None:
        self.gen = gen
        self.pi = gen.new_game_object()

    def new_game(self, game: tuple[int, str]) -> tuple[str, str]:
        """The game's first state (JSON) and its task description."""
        seed, fold = game
        raw = self.pi.generateNewGameJSON(seed, fold, False)
        return raw, str(self.pi.getTaskDescription()).strip()

    def step(self, move: str) -> str:
        return self.pi.stepJSON(move)

    def replay(self, game: tuple[int, str], moves: tuple[str, ...]) -> None:
        seed, fold = game
        self.pi.generateNewGame(seed, fold, False)
        for move in moves:
            self.pi.step(move)

    def alive(self) -> bool:
        return self.gen.jvm is _jvm.current_jvm()
