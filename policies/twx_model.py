"""Local's fitted models for the TextWorldExpress games: move scores and a progress estimate.

A :class:`TWXModel` holds, for one game, learned weights on the feature names
:func:`s1gym.policies.twx_features.candidate_tokens` gives each move (a
conditional-logit model: a move's logit is the sum of its features' weights),
and a ridge estimate of the moves left to win from :func:`progress_tokens`,
which ``Search(heuristic="progress")`` uses as h. Both read only what a player
sees. ``bench/twx_local.py`` fits them on train-fold games and writes one JSON
file per game into s1gym/data (``local_twx_<game>.json``, provenance inside).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from s1gym.core import Situation
from s1gym.policies.twx_features import _Game, candidate_tokens, context_tokens, read_view

__all__ = ["TWXModel", "progress_tokens"]

#: Bumped when the feature names change, so a model file fitted on other names is refused.
FEATURES_VERSION = 1


def progress_tokens(situation: Situation) -> list[str]:
    """What the progress estimate reads: the context tokens and a few counts, one-hot."""
    view = read_view(situation)
    game = _Game(view, situation.texts)
    out = context_tokens(view, game)
    out.append(f"score:{round(situation.score * 20)}")
    if view.recipe is not None:
        out.append(f"n_missing:{min(5, len(game.missing))}")
        out.append(f"n_pending:{min(6, len(game.pending))}")
        out.append(f"n_ingredients:{min(5, len(view.recipe.ingredients))}")
    unvisited = sum(1 for r, _ in view.exits.values() if not r or r not in view.visited)
    out.append(f"unvisited_exits:{min(3, unvisited)}")
    out.append(f"visited:{min(11, len(view.visited))}")
    return out


@dataclass(frozen=True)
class TWXModel:
    """Weights by feature name for one TWX game (see the module docstring)."""

    weights: Mapping[str, float]
    progress: Mapping[str, float] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)
    #: Local's dense feature weights to add (none: a TWX model embeds nothing)
    dense: Mapping[str, float] = field(default_factory=dict)

    def scores(self, situation: Situation) -> np.ndarray:
        """One logit per candidate."""
        w = self.weights
        return np.array([sum(w.get(f, 0.0) for f in fs) for fs in candidate_tokens(situation)], dtype=np.float64)

    def remaining(self, situation: Situation) -> float:
        """The progress estimate: predicted moves left to win (>= 0)."""
        w = self.progress
        if not w:
            return 0.0
        return max(0.0, sum(w.get(t, 0.0) for t in progress_tokens(situation)))

    @classmethod
    def load(cls, path: str | Path) -> TWXModel:
        data = json.loads(Path(path).read_text())
        version = data.get("features_version")
        if version != FEATURES_VERSION:
            raise ValueError(f"{path}: fitted on TWX features version {version}, this s1gym reads version "
                             f"{FEATURES_VERSION}; refit it with bench/twx_local.py")
        return cls(data["weights"], data.get("progress", {}), data.get("provenance", {}))

    def save(self, path: str | Path) -> None:
        data = {"features_version": FEATURES_VERSION, "provenance": dict(self.provenance),
                "progress": {k: round(v, 4) for k, v in sorted(self.progress.items())},
                "weights": {k: round(v, 4) for k, v in sorted(self.weights.items()) if abs(v) >= 1e-4}}
        Path(path).write_text(json.dumps(data, indent=1) + "\n")
