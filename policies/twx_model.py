"""Local's fitted models for the TextWorldExpress games: move scores and a progress estimate.

A :class:`TWXModel` holds, for one game, learned weights on the feature names
:func:`s1gym.tasks.twx.tokens.candidate_tokens` gives each move (a
conditional-logit model: a move's logit is the sum of its features' weights),
and a ridge estimate of the moves left to win from
:func:`s1gym.tasks.twx.tokens.progress_tokens`: the task's progress estimate
(``S1Env.progress_estimate``, :mod:`s1gym.estimates`), which Search uses as h. Both read only what a player
sees. ``bench/twx_local.py`` fits them on train-fold games and writes one JSON
file per game into s1gym/data (``local_twx_<game>.json``, provenance inside). A model fitted with
``commonsense`` (TWC) also weighs :func:`s1gym.policies.commonsense.commonsense_tokens`: where a thing
belongs, read off the packaged sentence embedder.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from s1gym.core import Situation
from s1gym.estimates import TokenProgress
from s1gym.tasks.twx.tokens import candidate_tokens, progress_tokens

__all__ = ["TWXModel"]

#: Bumped when the feature names change, so a model file fitted on other names is refused.
FEATURES_VERSION = 1


@dataclass(frozen=True)
class TWXModel:
    """Weights by feature name for one TWX game (see the module docstring)."""

    weights: Mapping[str, float]
    progress: Mapping[str, float] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)
    #: Local's dense feature weights to add (none: a TWX model embeds nothing)
    dense: Mapping[str, float] = field(default_factory=dict)
    #: also weigh the embedder's ``cs:*`` names (:mod:`s1gym.policies.commonsense`)
    commonsense: bool = False

    def tokens(self, situation: Situation) -> list[list[str]]:
        """Per candidate, the feature names the model weighs; with Lookahead, ``out:revisit`` on a move that
        leads back to a state the episode was already in (``Candidate.revisits``; its weight is chosen on dev
        games, since the oracles' states never loop)."""
        rows = [r + ["out:revisit"] if c.revisits else r
                for r, c in zip(candidate_tokens(situation), situation.candidates, strict=True)]
        if self.commonsense:
            from s1gym.policies.commonsense import commonsense_tokens

            rows = [r + c for r, c in zip(rows, commonsense_tokens(situation), strict=True)]
        return rows

    def scores(self, situation: Situation) -> np.ndarray:
        """One logit per candidate."""
        w = self.weights
        return np.array([sum(w.get(f, 0.0) for f in fs) for fs in self.tokens(situation)], dtype=np.float64)

    def remaining(self, situation: Situation) -> float:
        """The progress estimate: predicted moves left to win (>= 0); the task's own estimate
        (``S1Env.progress_estimate``) when this is the shipped model."""
        return TokenProgress(self.progress, progress_tokens)(situation)

    @classmethod
    def load(cls, path: str | Path) -> TWXModel:
        data = json.loads(Path(path).read_text())
        version = data.get("features_version")
        if version != FEATURES_VERSION:
            raise ValueError(f"{path}: fitted on TWX features version {version}, this s1gym reads version "
                             f"{FEATURES_VERSION}; refit it with bench/twx_local.py")
        return cls(data["weights"], data.get("progress", {}), data.get("provenance", {}),
                   commonsense=bool(data.get("commonsense", False)))

    def save(self, path: str | Path) -> None:
        data = {"features_version": FEATURES_VERSION, "progress_tokens": "twx", "commonsense": self.commonsense,
                "provenance": dict(self.provenance),
                "progress": {k: round(v, 4) for k, v in sorted(self.progress.items())},
                "weights": {k: round(v, 4) for k, v in sorted(self.weights.items()) if abs(v) >= 1e-4}}
        Path(path).write_text(json.dumps(data, indent=1) + "\n")
