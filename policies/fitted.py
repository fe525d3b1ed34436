"""The one shape of Local's fitted models: weights by feature name, read off what a player sees.

A :class:`FittedModel` scores each candidate move by the sum of the weights of the feature names the
task family gives it (a conditional-logit model: a move's logit is that sum), adds Local's dense feature
weights fitted with them (:attr:`~FittedModel.dense`), and estimates the moves left from the situation's
tokens (:attr:`~FittedModel.progress`, the form :class:`s1gym.core.estimates.TokenProgress` ships). A family's
model names its two readers, :meth:`~FittedModel.tokens` (per candidate) and
:meth:`~FittedModel.progress_tokens`, and the JSON form of its file; this base holds the rest. Models are
fitted by :mod:`s1gym.policies.fitting` (bench/alfworld_local.py, bench/twx_local.py) and shipped as JSON in
s1gym/data, their provenance inside. Names never seen in training weigh 0.

The families' models: :class:`s1gym.policies.alfworld_model.ALFWorldModel` (pairs of situation and move
tokens) and :class:`s1gym.policies.twx_model.TWXModel` (one TextWorldExpress game's feature names).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from s1gym.core import Situation
from s1gym.core.estimates import TokenProgress

__all__ = ["FittedModel"]

M = TypeVar("M", bound="FittedModel")


@dataclass(frozen=True)
class FittedModel(ABC):
    """Weights by feature name (see the module docstring); subclasses name how a situation is read."""

    #: feature name -> weight of a candidate's logit
    weights: Mapping[str, float]
    #: Local's dense feature weights fitted with the model (:data:`s1gym.policies.local.FEATURES`)
    dense: Mapping[str, float] = field(default_factory=dict)
    #: situation token -> weight of the moves-left estimate (``*``: the intercept)
    progress: Mapping[str, float] = field(default_factory=dict)
    #: what it was fitted on and how well (games, decisions, NLL, top-1...)
    provenance: Mapping[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------ what a family names
    @abstractmethod
    def tokens(self, situation: Situation) -> list[list[str]]:
        """Per candidate, the feature names the model weighs."""
        ...

    @staticmethod
    @abstractmethod
    def progress_tokens(situation: Situation) -> Sequence[str]:
        """The situation's tokens the progress estimate weighs."""
        ...

    @classmethod
    @abstractmethod
    def from_json(cls: type[M], data: Mapping[str, Any], path: str | Path) -> M:
        """The model in a file's JSON (``path`` names the file in errors)."""
        ...

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """The file's JSON (its keys in the order the shipped files hold them)."""
        ...

    # ------------------------------------------------------------ the shape they share
    def scores(self, situation: Situation) -> np.ndarray:
        """One logit per candidate: the sum of its feature names' weights."""
        w = self.weights
        return np.array([sum(w.get(f, 0.0) for f in fs) for fs in self.tokens(situation)], dtype=np.float64)

    def remaining(self, situation: Situation) -> float:
        """The progress estimate: predicted moves left (>= 0) from the situation's tokens; the task's own
        estimate (``S1Env.progress_estimate``) when this is the shipped model."""
        return TokenProgress(self.progress, self.progress_tokens)(situation)

    @classmethod
    def load(cls: type[M], path: str | Path) -> M:
        return cls.from_json(json.loads(Path(path).read_text()), path)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")

