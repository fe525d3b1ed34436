"""The one shape of Local's fitted models: weights by feature name, read off what a player sees.

A :class:`FittedModel` scores each candidate move by the sum of the weights of the feature names the
task family gives it (a conditional-logit model: a move's logit is that sum), adds Local's dense feature
weights fitted with them (:attr:`~FittedModel.dense`), and estimates the moves left from the situation's
tokens (:attr:`~FittedModel.progress`, the form :class:`s1gym.core.estimates.TokenProgress` ships). A family's
model names its two readers, :meth:`~FittedModel.tokens` (per candidate) and
:meth:`~FittedModel.progress_tokens`, and the JSON form of its file (which says its ``kind``); this base
holds the rest. Families fit their models with :mod:`s1gym.models.fitting` (each family's ``fit`` module,
``python -m s1gym.tasks.<family>.fit``) and ship them as JSON in their ``data/`` folder, provenance inside;
a family declares the class of each kind (:class:`s1gym.family.Family`), and
:func:`s1gym.registration.load_model` reads a file by its kind. Names never seen in training weigh 0.
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

