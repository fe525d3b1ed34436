"""Local's fitted model of Race: weights on feature names read off what the player sees.

:func:`race_tokens` reads the total and the goal from the observation text (never from the env, so the
model sees what a player sees) and names, per candidate move, the move alone, the move with what is left
to go modulo 4 (the quantity the game turns on), and the move with what is left to go when that is 4 or
less (the endgame). :class:`RaceModel` is s1gym's :class:`~s1gym.models.token_model.TokenModel` with that
reader and the kind ``"race"`` its files carry (made by :func:`~s1gym.models.token_model.token_model`);
:mod:`s1race.fit` fits it and writes ``data/local_race.json``.
"""

from __future__ import annotations

import re

from s1gym.core import Situation
from s1gym.models.token_model import per_move, token_model

__all__ = ["RaceModel", "race_tokens", "read_total"]

_TOTAL = re.compile(r"^Total: (\d+) of (\d+) \(\d+ to go\)\.$", re.MULTILINE)


def read_total(text: str) -> tuple[int, int] | None:
    """``(total, goal)`` of an open game's observation; ``None`` once it is over."""
    found = _TOTAL.search(text)
    return None if found is None else (int(found[1]), int(found[2]))


def race_tokens(situation: Situation) -> list[list[str]]:
    """Per candidate: the move; the move with what is left to go modulo 4; the move with what is left to go
    when that is at most 4 (``left:more`` otherwise)."""
    return per_move(situation, read_total, _left_names)


def _left_names(m: str, read: tuple[int, int]) -> list[str]:
    total, goal = read
    left = goal - total
    return [m, f"{m}|mod4:{left % 4}", f"{m}|left:{left if left <= 4 else 'more'}"]


RaceModel = token_model("RaceModel", "race", race_tokens, __name__)
