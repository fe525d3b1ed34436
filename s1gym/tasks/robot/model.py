"""Local's fitted model for the robot tasks (``s1/PickPlace-v0``): weights on the feature names
:func:`s1gym.tasks.robot.tokens.candidate_tokens` reads off the text (the shape every fitted model shares,
:class:`s1gym.models.fitted.FittedModel`), and the task's progress estimate on
:func:`s1gym.tasks.robot.tokens.progress_tokens`. :mod:`s1gym.tasks.robot.fit` fits both on train-fold scenes
(the privileged expert's skill as the label, and the skills left to its win, on the states the expert and
noisy roll-ins visit) and writes ``data/local_pickplace.json`` (provenance inside), which the family
declares as ``s1/PickPlace-v0``'s model and progress estimate (:mod:`s1gym.tasks.robot.family`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from s1gym.core import Situation
from s1gym.models.fitted import FittedModel
from s1gym.tasks.robot.tokens import candidate_tokens, progress_tokens

__all__ = ["FEATURES_VERSION", "KIND", "RobotModel"]

#: the ``kind`` a model file names (Local picks the model class by it, as for the web model)
KIND = "robot"
#: bumped when the feature names change, so a file fitted on other names is refused
FEATURES_VERSION = 1


@dataclass(frozen=True)
class RobotModel(FittedModel):
    """Weights by skill feature name and the progress estimate's weights; no dense weights."""

    progress_tokens = staticmethod(progress_tokens)


    def tokens(self, situation: Situation) -> list[list[str]]:
        """Per candidate, the skill's feature names; with Lookahead, ``out:revisit`` on a skill that leads back
        to a state the episode was already in (``Candidate.revisits``, the TWX models' token: the expert's
        states never loop, so its weight is set, not fitted)."""
        return [r + ["out:revisit"] if c.revisits else r
                for r, c in zip(candidate_tokens(situation), situation.candidates, strict=True)]

    @classmethod
    def from_json(cls, data: Mapping[str, Any], path: str | Path) -> RobotModel:
        if data.get("kind") != KIND or data.get("features_version") != FEATURES_VERSION:
            raise ValueError(f"{path}: not a robot model of features version {FEATURES_VERSION}; refit it with "
                             "python -m s1gym.tasks.robot.fit")
        return cls(data["weights"], progress=data.get("progress", {}), provenance=data.get("provenance", {}))

    def to_json(self) -> dict[str, Any]:
        return {"kind": KIND, "features_version": FEATURES_VERSION, "provenance": dict(self.provenance),
                "weights": {k: round(v, 4) for k, v in sorted(self.weights.items()) if abs(v) >= 1e-4},
                **({"progress": dict(self.progress)} if self.progress else {})}
