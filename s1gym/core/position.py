"""An episode as positions: the state text before each decision, the move played from it and its feedback.

An episode file (:mod:`s1gym.jobs`) holds the observation text of every tick (and, since format 2, the
final one and each move's feedback). :func:`episode_positions` turns them into one :class:`Position` per
decision and one for the end, the unit the replay's views draw (:mod:`s1gym.reporting.replay.views`, and a
family's own view functions, declared as ``Task.view``). It lives in the contract's floor so a family's
views import it without importing the reporting layer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MOVES_PREFIX", "Position", "episode_positions", "split_moves"]

MOVES_PREFIX = "Moves: "


def split_moves(observation: str) -> str:
    """The observation without its closing ``Moves: ...`` paragraph (the candidates are shown apart)."""
    head, sep, last = observation.rpartition("\n\n")
    if last.startswith(MOVES_PREFIX):
        return head if sep else ""
    return observation


@dataclass(frozen=True)
class Position:
    """One position of an episode: the state text before decision ``t`` (``t == n``: the end)."""

    t: int
    state: str  # observation without the Moves paragraph
    candidates: tuple[str, ...]
    #: the move played from here and the feedback it got (``None`` at the end)
    move: str | None
    feedback: str | None


def episode_positions(episode: Mapping[str, Any]) -> list[Position]:
    """The positions of an (expanded) episode: one per tick and, when known, the final state.

    Feedback comes from the tick (files of format 2) or, for older files, from
    the paragraphs of the next observation that the current one lacks.
    """
    ticks = list(episode.get("ticks") or ())
    final_obs = (episode.get("final") or {}).get("observation")
    texts = [t["observation"] for t in ticks] + ([final_obs] if isinstance(final_obs, str) else [])
    out = []
    for i, tick in enumerate(ticks):
        feedback = tick.get("feedback")
        if not isinstance(feedback, str):
            feedback = _new_paragraphs(texts[i], texts[i + 1]) if i + 1 < len(texts) else ""
        out.append(Position(i, split_moves(tick["observation"]), tuple(tick["candidates"]), tick["move"], feedback))
    if isinstance(final_obs, str):
        out.append(Position(len(ticks), split_moves(final_obs), (), None, None))
    return out


def _new_paragraphs(before: str, after: str) -> str:
    seen = set(split_moves(before).split("\n\n"))
    return "\n\n".join(p for p in split_moves(after).split("\n\n") if p not in seen)
