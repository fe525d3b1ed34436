"""What a task's game reports (:class:`Progress`, :class:`TooManyCandidatesError`) and the small helpers
every task shares: the observation charset, a text's facts, a copy of an RNG."""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from s1gym.errors import S1GymError

__all__ = ["BASE_CHARSET", "Progress", "TooManyCandidatesError", "charset_for", "copy_generator", "text_atoms"]

#: Characters every task may print: printable ASCII (letters, digits,
#: punctuation, space, tab, newline). Tasks that show arbitrary text (trivia,
#: tickets, injection texts) extend it with :func:`charset_for`.
BASE_CHARSET: frozenset[str] = frozenset(string.printable)


def charset_for(texts: Iterable[str]) -> frozenset[str]:
    """The base charset plus every character that occurs in ``texts``."""
    chars = set(BASE_CHARSET)
    for text in texts:
        chars.update(text)
    return frozenset(chars)


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


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")


def text_atoms(text: str) -> frozenset[str]:
    """The sentences and lines of ``text``, as facts for :meth:`S1Env.state_atoms`."""
    return frozenset(p for p in _SENTENCE.split(text) if p.strip())


def copy_generator(rng: np.random.Generator) -> np.random.Generator:
    """A generator that continues exactly where ``rng`` is (cheaper than ``deepcopy``: docs/benchmarks.md)."""
    bit_generator = type(rng.bit_generator)(0)
    bit_generator.state = rng.bit_generator.state
    return np.random.Generator(bit_generator)
