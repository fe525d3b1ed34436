"""What a policy may know when it decides: :class:`Situation`, its :class:`Candidate` moves, and
:class:`Privileged`, the named door through which baselines (only) reach what a player does not know."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from s1gym.core.env import S1Env

__all__ = ["Candidate", "Privileged", "Situation"]


@dataclass(frozen=True)
class Candidate:
    """One move a player may make, as the task names it."""

    text: str
    #: Lookahead: the observation after the move (``None`` when not looked at).
    outcome: str | None = None
    #: Lookahead: moves available after this one that were not available before.
    new_actions: tuple[str, ...] = ()
    #: Lookahead: the reward the move earns, i.e. the change in the task's score (``None``: not looked at).
    reward: float | None = None
    #: Lookahead: how many times this episode already was in the state the move leads to, the current state
    #: included (``Situation.visited`` and ``Situation.state_key``); 0: a state new to the episode, ``None``:
    #: not looked at. A move that undoes the last one counts at least 1, a move that changes nothing too.
    revisits: int | None = None


class Privileged:
    """The explicit, named door through which *baselines* reach knowledge a player does not have.

    ``Situation.privileged`` holds one when the situation comes from a live env.
    ``rule_action()`` is the task's hand-written baseline (the ``Rule`` policy),
    ``expert_action()`` the oracle (tests, experts). Decision models must not
    read it; wrappers pass it along untouched. It only reads the env it was
    made from (never steps it).
    """

    __slots__ = ("_env",)

    def __init__(self, env: S1Env) -> None:
        self._env = env

    def rule_action(self) -> str:
        """The task's rule-baseline move in this state."""
        return self._env.rule_action()

    def expert_action(self) -> str:
        """The oracle's move in this state (privileged: a winning plan, the right answer)."""
        return self._env.expert_action()

    def __repr__(self) -> str:
        return f"Privileged({self._env.task_name})"


@dataclass(frozen=True)
class Situation:
    """Everything a policy may know when it decides (no privileged knowledge).

    ``observation`` is exactly what the env returned; ``state_text`` is the same
    text without its closing ``Moves: ...`` paragraph (the candidates are in
    ``candidates``), for models that send the moves separately.
    """

    task: str
    observation: str
    candidates: tuple[Candidate, ...]
    #: ``(move, feedback)`` pairs played so far this episode.
    history: tuple[tuple[str, str], ...] = ()
    #: Free-form guidance, e.g. a plan from Rethink's planner.
    notes: tuple[str, ...] = ()
    #: The task's own progress in [0, 1].
    score: float = 0.0
    #: Returns an independent copy of the env in this state (``None`` when the
    #: situation does not come from a live env).
    fork: Callable[[], S1Env] | None = field(default=None, compare=False, repr=False)
    #: A key of the game state that ignores how it was reached (used by
    #: Search's duplicate detection and Rethink's stall detection).
    state_key: str = ""
    #: The observation without the trailing ``Moves:`` paragraph (``None``: same as ``observation``).
    state_text: str | None = None
    #: The state keys of the states this episode passed through before this one, oldest first (each state
    #: the env was asked for a situation in and then left by a move; a state left twice is there twice).
    #: Lookahead counts a move's revisits with it.
    visited: tuple[str, ...] = field(default=(), repr=False)
    #: The reward each move of ``history`` earned (the change in the task's score, what any RL agent sees),
    #: aligned with ``history``; ``()`` where not known (a situation made by hand), so a reader uses it only
    #: when ``len(rewards) == len(history)``.
    rewards: tuple[float, ...] = ()
    #: For baselines only (``Rule``): see :class:`Privileged`. ``None`` when no env is behind the situation.
    privileged: Privileged | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.state_text is None:
            object.__setattr__(self, "state_text", self.observation)

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(c.text for c in self.candidates)

    def with_candidates(self, candidates: Sequence[Candidate]) -> Situation:
        return replace(self, candidates=tuple(candidates))

    def with_notes(self, notes: Sequence[str]) -> Situation:
        return replace(self, notes=tuple(notes))
