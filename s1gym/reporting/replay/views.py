"""What a replay draws for each task: structured views parsed from the recorded observations.

An episode file holds the observation text of every tick (and, since format 2,
the final one and each move's feedback). :func:`s1gym.core.position.episode_positions`
turns them into positions and :func:`episode_views` into one *view* per position
(before each decision, then the final state), a small dict the page's script draws:

- a task whose family declares a view (``Task.view``, :func:`s1gym.registration.replay_view`;
  the games' board, cards and quiz card: :mod:`s1gym.tasks.games.views`) gets what that
  function parses, drawn by the script its module names (``SCRIPT``, ``STYLE``: see
  :func:`view_assets`);
- ``transcript`` (every other task, and any position whose text a view cannot parse):
  the current state (``now``) under a transcript the page builds from the moves and
  their feedback;
- ``screenshot``: a recorded ``env.screenshot()`` (web and desktop tasks, with
  ``s1 run --frames``) above the same transcript.

A view function returns ``None`` for a text it does not parse (a task's wording
changed); that position falls back to the transcript view, so a replay never fails
on it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from s1gym import registration
from s1gym.core.position import Position, episode_positions, split_moves

__all__ = ["Position", "episode_positions", "episode_views", "split_moves", "view_assets", "view_kind"]

#: A view function: (position, the episode's memory) -> the view, or ``None`` when the text does not parse.
ViewFunction = Callable[[Position, dict[str, Any]], "dict[str, Any] | None"]


def view_transcript(pos: Position, _memory: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "transcript"}


def _short(env_id: str) -> str:
    return re.sub(r"-v\d+$", "", env_id.split(":")[-1].split("/")[-1])


def _declared(env_id: str) -> tuple[str, ViewFunction] | None:
    """The (kind, function) the task's family declares for ``env_id``, or ``None`` (the transcript)."""
    return registration.replay_view(_short(env_id))


def view_kind(env_id: str) -> str:
    """The view a task gets: the kind its family declares (``2048``, ``blackjack``...) or ``transcript``."""
    found = _declared(env_id)
    return found[0] if found else "transcript"


def view_assets(env_id: str) -> tuple[str, str]:
    """The script and the style that draw the task's declared view (``""``, ``""`` for the transcript): the
    files its view module names as ``SCRIPT`` and ``STYLE``, read from beside that module's file."""
    found = _declared(env_id)
    if found is None:
        return "", ""
    module = sys.modules[found[1].__module__]
    folder = Path(module.__file__ or "").parent
    texts = []
    for attr in ("SCRIPT", "STYLE"):
        name = getattr(module, attr, None)
        texts.append((folder / name).read_text(encoding="utf-8") if name else "")
    return texts[0], texts[1]


def episode_views(env_id: str, positions: Sequence[Position]) -> list[dict[str, Any]]:
    """One view per position (see the module doc); transcript views where a text does not parse."""
    found = _declared(env_id)
    build = found[1] if found else view_transcript
    memory: dict[str, Any] = {}
    views = []
    for pos in positions:
        view = build(pos, memory) or view_transcript(pos, memory)
        views.append(view)
        if pos.move is not None:
            memory["last_move"] = pos.move
    return views
