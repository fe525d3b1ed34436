"""Local's fitted models for the TextWorldExpress games: move scores and a progress estimate.

A :class:`TWXModel` holds, for one game, learned weights on the feature names
:func:`s1gym.tasks.twx.tokens.candidate_tokens` gives each move (a
conditional-logit model: a move's logit is the sum of its features' weights),
and a ridge estimate of the moves left to win from
:func:`s1gym.tasks.twx.tokens.progress_tokens`: the task's progress estimate
(``registration.progress_estimate``, :mod:`s1gym.core.estimates`), which Search uses as h. Both read only
what a player sees. :mod:`s1gym.tasks.twx.fit` fits them on train-fold games and writes one JSON
file per game into the family's data/ (``local_<game>.json``, provenance inside). A model fitted with
``commonsense`` (TWC) also weighs :func:`s1gym.tasks.twx.commonsense.commonsense_tokens`: where a thing
belongs, read off the packaged sentence embedder. The shape it shares with ALFWorld's model is
:mod:`s1gym.models.fitted`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from s1gym.core import Situation
from s1gym.models.fitted import FittedModel
from s1gym.tasks.twx.tokens import candidate_tokens, progress_tokens

__all__ = ["FEATURES_VERSION", "KIND", "TWXModel"]

#: What the model files say they are (the family declares this class for the kind).
KIND = "twx"
#: Bumped when the feature names change, so a model file fitted on other names is refused.
FEATURES_VERSION = 1


@dataclass(frozen=True)
class TWXModel(FittedModel):
    """Weights by feature name for one TWX game (see the module docstring); no dense weights (a TWX model
    embeds nothing)."""

    #: also weigh the embedder's ``cs:*`` names (:mod:`s1gym.tasks.twx.commonsense`)
    commonsense: bool = False

    progress_tokens = staticmethod(progress_tokens)

    def tokens(self, situation: Situation) -> list[list[str]]:
        """Per candidate, the feature names the model weighs; with Lookahead, ``out:revisit`` on a move that
        leads back to a state the episode was already in (``Candidate.revisits``; its weight is chosen on dev
        games, since the oracles' states never loop)."""
        rows = [r + ["out:revisit"] if c.revisits else r
                for r, c in zip(candidate_tokens(situation), situation.candidates, strict=True)]
        if self.commonsense:
            from s1gym.tasks.twx.commonsense import commonsense_tokens

            rows = [r + c for r, c in zip(rows, commonsense_tokens(situation), strict=True)]
        return rows


    @classmethod
    def from_json(cls, data: Mapping[str, Any], path: str | Path) -> TWXModel:
        version = data.get("features_version")
        if data.get("kind") != KIND or version != FEATURES_VERSION:
            raise ValueError(f"{path}: fitted on TWX features version {version}, this s1gym reads version "
                             f"{FEATURES_VERSION}; refit it with python -m s1gym.tasks.twx.fit")
        return cls(data["weights"], progress=data.get("progress", {}), provenance=data.get("provenance", {}),
                   commonsense=bool(data.get("commonsense", False)))

    def to_json(self) -> dict[str, Any]:
        return {"kind": KIND, "features_version": FEATURES_VERSION, "progress_tokens": "twx",
                "commonsense": self.commonsense,
                "provenance": dict(self.provenance),
                "progress": {k: round(v, 4) for k, v in sorted(self.progress.items())},
                "weights": {k: round(v, 4) for k, v in sorted(self.weights.items()) if abs(v) >= 1e-4}}
