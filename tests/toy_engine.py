"""The smallest task on the engine seam (docs/adding-a-task.md shows this file).

The "engine" is a tally kept outside the env, as a JVM or a browser page would
keep its game: the env cannot copy it, only ask it to start a game, play a
move, and (when ``can_snapshot``) save and load its state.
"""

from __future__ import annotations

from typing import Any

from s1gym.core import Progress
from s1gym.engines.base import Engine, EngineEnv


class TallyEngine(Engine):
    """Counts towards a target; 'add 1', 'add 2', 'double'. Overshooting loses."""

    def new_game(self, game: int) -> dict[str, Any]:
        self.target, self.total = game, 0
        return self.answer()

    def step(self, move: str) -> dict[str, Any]:
        self.total = self.total * 2 if move == "double" else self.total + int(move.split()[1])
        return self.answer()

    def answer(self) -> dict[str, Any]:
        return {"total": self.total, "target": self.target}


class SnapshotTallyEngine(TallyEngine):
    """The same engine with a cheap state save/load: forks restore instead of replaying."""

    can_snapshot = True

    def snapshot(self) -> int:
        return self.total

    def restore(self, game: int, snapshot: int) -> None:
        self.target, self.total = game, snapshot


class TallyEnv(EngineEnv):
    task_name = "Tally"
    default_max_candidates = 3
    default_max_steps = 20
    engine_capacity = 2

    def __init__(self, engine_class: type[TallyEngine] = TallyEngine, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.engine_class = engine_class
        self.total = self.target = 0

    # the engine seam's hooks
    def _open_engine(self) -> TallyEngine:
        return self.engine_class()

    def _pool_key(self) -> Any:
        return ("tally", self.engine_class)

    def _choose_game(self, seed: int | None, options: dict[str, Any]) -> int:
        return 10 + int(self.np_random.integers(20))  # the target; reset(seed) seeds np_random

    def _on_start(self, raw: dict[str, Any]) -> str:
        self.total, self.target = raw["total"], raw["target"]
        return f"Reach exactly {self.target}."

    def _on_step(self, move: str, raw: dict[str, Any]) -> str:
        self.total = raw["total"]
        return f"You {move}: {self.total}."

    # the game as every S1Env describes it
    def _legal_moves(self) -> list[str]:
        return ["add 1", "add 2", "double"]

    def _describe(self) -> str:
        return f"Total {self.total} of {self.target}."

    def _progress(self) -> Progress:
        return Progress(min(self.total / self.target, 1.0), won=self.total == self.target, lost=self.total > self.target)
