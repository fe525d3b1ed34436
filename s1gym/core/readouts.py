"""What an env shows about its game without changing it: the read-only properties every :class:`S1Env`
has and the privileged moves of its expert and rule baseline (a mixin, so env.py holds the contract's
moving parts), and the defaults of its options."""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["Readouts", "init_defaults"]


def init_defaults(cls: type, base: type) -> dict[str, Any]:
    """The defaults of the ``__init__`` keywords along ``cls``'s hierarchy down to ``base`` (later classes
    win), leaving out the arguments every env takes that are no task option."""
    out: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        init = klass.__dict__.get("__init__")
        if init is None or not issubclass(klass, base):
            continue
        for p in inspect.signature(init).parameters.values():
            if p.default is not inspect.Parameter.empty and p.name not in ("render_mode", "charset", "action_slots"):
                out[p.name] = p.default
    return out


class Readouts:
    """The game's state as properties (the env's bookkeeping fields, kept by :class:`s1gym.core.S1Env`)."""

    _candidates: tuple[str, ...]
    _score: float
    _won: bool
    _lost: bool
    _steps: int
    _history: tuple[tuple[str, str], ...]
    _over: bool
    max_steps: int

    task_name: str

    def _state_text(self) -> str:
        raise NotImplementedError

    # ------------------------------------------------------------ privileged (baselines, agreement)
    def expert_action(self) -> str:
        """The next move of a winning (or baseline) plan: privileged, for Rule and tests."""
        raise NotImplementedError(f"{self.task_name} has no expert; use another policy than Rule")

    def expert_move(self) -> str | None:
        """The expert's move among the candidates now, for measuring a policy's agreement with it (privileged:
        the runner reads it after each decision; no policy sees it): :meth:`expert_action` when it names a
        candidate, ``None`` when the task has no expert here (``NotImplementedError``; a ``RuntimeError``
        such as an expert lost off its plan; a ``LookupError`` such as a web rule that cannot find on this
        page what its next move needs, once a policy has left its path) or names no candidate. Tasks whose
        expert names moves the candidates hide, or whose expert is costly, override it (ALFWorld)."""
        try:
            move = self.expert_action()
        except (RuntimeError, LookupError):  # NotImplementedError included: no expert here
            return None
        return move if move in self._candidates else None

    def rule_action(self) -> str:
        """The task's hand-written baseline move (the ``Rule`` policy); defaults to the expert.

        Tasks whose expert is an oracle (e.g. knows the right answer) override
        this with a baseline that has no such knowledge.
        """
        return self.expert_action()

    @property
    def candidates(self) -> tuple[str, ...]:
        """The legal moves now (what policies choose among), in index order."""
        return self._candidates

    @property
    def state_text(self) -> str:
        """The observation without its ``Moves:`` paragraph (what Lookahead shows as an outcome)."""
        return self._state_text()

    @property
    def score(self) -> float:
        return self._score

    @property
    def won(self) -> bool:
        return self._won

    @property
    def lost(self) -> bool:
        return self._lost

    @property
    def steps(self) -> int:
        """Steps taken this episode, invalid ones included (they count toward ``max_steps``)."""
        return self._steps

    @property
    def history(self) -> tuple[tuple[str, str], ...]:
        return self._history

    @property
    def game_over(self) -> bool:
        """The game has ended (won, lost, or neither, e.g. a push); ``terminated`` in step's terms."""
        return self._over

    @property
    def done(self) -> bool:
        """The game has ended or the step limit is reached."""
        return self._over or self._steps >= self.max_steps

