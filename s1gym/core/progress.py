"""What a task's game reports to its env: where it stands (:class:`Progress`, what :meth:`S1Env._progress`
returns) and that a state has more legal moves than the task's cap (:class:`TooManyCandidatesError`)."""

from __future__ import annotations

from typing import NamedTuple

from s1gym.errors import S1GymError

__all__ = ["Progress", "TooManyCandidatesError"]


class TooManyCandidatesError(S1GymError, RuntimeError):
    """A state has more legal moves than the task's documented cap N."""

    def __init__(self, task: str, cap: int, count: int) -> None:
        super().__init__(
            f"{task}: this state has {count} legal moves but the task's candidate cap is N={cap}; "
            f"no move is dropped silently. Raise the cap (the `max_candidates` option) or report the seed."
        )
        self.task, self.cap, self.count = task, cap, count


class Progress(NamedTuple):
    """Where a game stands (what :meth:`S1Env._progress` returns).

    ``score`` is the task's own progress in [0, 1]; ``won``/``lost`` end the
    game; ``over`` ends it neither won nor lost (a Blackjack push, walking
    away from the quiz).
    """

    score: float
    won: bool = False
    lost: bool = False
    over: bool = False

    @property
    def ended(self) -> bool:
        return self.won or self.lost or self.over
