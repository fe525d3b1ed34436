"""How an env copies itself (a mixin of :class:`s1gym.core.S1Env`, whose class docstring states the contract):
the exact fork, a planner's fork that never knows the real future, and forks after moves."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from s1gym.core.helpers import copy_generator

if TYPE_CHECKING:
    from s1gym.core.env import S1Env, StepResult

__all__ = ["Forks"]


class Forks:
    """``fork``, ``planning_fork``, ``fork_step`` and ``fork_steps`` over the env's hooks."""

    #: The game has chance events (tile spawns, deals, noise) that an exact fork replays as they will come:
    #: :meth:`planning_fork` then draws a planner's future from a fresh stream (hook :meth:`_reseed_chance`).
    chance_events: ClassVar[bool] = False
    task_name: str
    _np_random: Any
    _episode_seed: int | None
    _planning_forks: int
    _steps: int

    def fork(self) -> S1Env:
        """An independent env in exactly this state (RNG included)."""
        self._require_started()
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        if self._np_random is not None:
            clone._np_random = copy_generator(self._np_random)
        self._fork_into(clone)
        return clone

    def planning_fork(self) -> S1Env:
        """A fork for planners (what ``Situation.fork`` gives Lookahead and Search): :meth:`fork` on a game
        without chance; on one with chance events (:attr:`chance_events`), the same state whose future
        chance events come from a stream the real game never draws from, so a planner sees what could
        happen, never what will. The stream is fixed by the episode's seed, the step and how many planning
        forks this env gave before, so the same run plans the same way every time."""
        clone = self.fork()
        if self.chance_events:
            self._planning_forks += 1
            key = f"{self._episode_seed}/{self._steps}/{self._planning_forks}/{self.state_key()}"
            clone._reseed_chance(int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little"))
        return clone

    def _reseed_chance(self, seed: int) -> None:
        """Draw this env's future chance events from a fresh stream seeded with ``seed`` (tasks with
        :attr:`chance_events` implement it)."""
        raise NotImplementedError(f"{self.task_name} declares chance_events but no _reseed_chance(seed)")

    def fork_step(self, move: str, keep: bool = False) -> tuple[S1Env, StepResult]:
        """A fork of this env after ``move`` and the step's result (``step_move``'s), this env untouched.

        Tasks on the engine seam serve it from their pool's transition cache when the same state and move
        were stepped before with ``keep=True`` (:mod:`s1gym.engines.transitions`): the same result without
        an engine step. Search keeps the children it steps; Lookahead, asked about the same node next, reads
        them.
        """
        child = self.fork()
        return child, child.step_move(move)

    def fork_steps(self, moves: Iterable[str], keep: bool = False) -> Iterator[tuple[S1Env, StepResult]]:
        """``fork_step(move, keep)`` for each of ``moves``, as the caller asks (Search's expand, Lookahead); the
        engine seam steps them in one engine call where it can (:meth:`s1gym.engines.base.EngineEnv.fork_steps`)."""
        return (self.fork_step(move, keep) for move in moves)
