"""How an env copies itself (a mixin of :class:`s1gym.core.S1Env`, whose class docstring states the contract):
the exact fork, a planner's fork that never knows the real future, and forks after moves."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import gymnasium as gym

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

    #: Set on planning forks (:meth:`planning_fork`): answer moves (:meth:`is_answer_move`) are not played.
    _hides_answers: bool = False
    #: A planning fork after an answer move it did not play: the game's outcome is unknown to it (no moves
    #: follow, neither won nor lost). Search keeps such a child as a commitment, never as a goal or a loss.
    outcome_hidden: bool = False

    #: The Gymnasium generator this env shares with the forks made of it (or it was made from) until one of
    #: them reads ``np_random`` (:meth:`fork`)
    _shared_np_random: Any = None

    def fork(self) -> S1Env:
        """An independent env in exactly this state (RNG included).

        The Gymnasium generator is not copied here: the fork and this env share it until either reads
        ``np_random``, which gives that env its own copy first (copy on access), so every env draws what it
        would have drawn from a copy made now. Most tasks read it only when ``reset`` picks a game without a
        seed, and Search and Lookahead fork every node: the copy was the larger part of a fork's own cost
        (docs/benchmarks.md, issue 55). The task's own state is copied by its ``_fork_into``."""
        self._require_started()
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        if self._np_random is not None:
            self._shared_np_random = clone._shared_np_random = self._np_random
        self._fork_into(clone)
        return clone

    @property
    def np_random(self) -> Any:
        """The env's Gymnasium generator (its own copy, made now, when it still shares it with a fork)."""
        rng = self._np_random
        if rng is not None and rng is self._shared_np_random:
            self._np_random = copy_generator(rng)
            self._shared_np_random = None
        return gym.Env.np_random.fget(self)

    @np_random.setter
    def np_random(self, value: Any) -> None:
        gym.Env.np_random.fset(self, value)

    def planning_fork(self) -> S1Env:
        """A fork for planners (what ``Situation.fork`` gives Lookahead and Search): :meth:`fork`, except
        that it never knows what the player cannot. On a game with chance events (:attr:`chance_events`) its
        future chance events come from a stream the real game never draws from, so a planner sees what
        could happen, never what will. The stream is fixed by the episode's seed, the step and how many
        planning forks this env gave before, so the same run plans the same way every time. And it does not
        play answer moves (:meth:`is_answer_move`): stepping one ends the fork with the outcome hidden."""
        clone = self.fork()
        clone._hides_answers = True
        if self.chance_events:
            self._planning_forks += 1
            key = f"{self._episode_seed}/{self._steps}/{self._planning_forks}/{self.state_key()}"
            clone._reseed_chance(int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little"))
        return clone

    def is_answer_move(self, move: str) -> bool:
        """Whether ``move`` states an answer whose verdict is its outcome: ScienceWorld's ``focus on X``
        scores or wins when X is the right object and loses the game when it is not. A planning fork does
        not play it (the verdict is what the player must work out, not read off a copy of the game): the
        fork ends there with :attr:`outcome_hidden`. Default: no move is (the hook of tasks with such moves;
        tasks whose every move is an answer declare ``fork_reveals_answer`` instead)."""
        return False

    def reveal_answers(self) -> None:
        """Let this planning fork play answer moves as the real game does: an oracle, measured on purpose
        (the wrappers' ``allow_oracle=True``)."""
        self._hides_answers = False

    def hides_outcome(self, move: str) -> bool:
        """Whether this env keeps ``move``'s outcome hidden: a planning fork (not revealed) and an answer move
        (what Search asks before it steps one, ``policy_answers``)."""
        return self._hides_answers and self.is_answer_move(move)

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
        return child, child.step_move(move)  # an answer move a planning fork hides is not played (step)

    def fork_steps(self, moves: Iterable[str], keep: bool = False) -> Iterator[tuple[S1Env, StepResult]]:
        """``fork_step(move, keep)`` for each of ``moves``, as the caller asks (Search's expand, Lookahead); the
        engine seam steps them in one engine call where it can (:meth:`s1gym.engines.base.EngineEnv.fork_steps`)."""
        return (self.fork_step(move, keep) for move in moves)
