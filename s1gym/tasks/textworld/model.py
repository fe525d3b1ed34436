"""Local's fitted model of s1/TextWorld-v0: weights on :func:`.tokens.candidate_tokens`' feature names and a
progress estimate on :func:`.tokens.progress_tokens`, fitted by :mod:`s1gym.tasks.textworld.fit` on train
seeds and shipped as ``data/local_textworld.json`` (provenance inside)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from s1gym.models.token_model import TokenModel
from s1gym.tasks.textworld.tokens import candidate_tokens, progress_tokens

__all__ = ["TextWorldModel"]


@dataclass(frozen=True)
class TextWorldModel(TokenModel):
    """Weights by feature name and a moves-left estimate (see the module docstring)."""

    kind: ClassVar[str] = "textworld"
    #: 2: ``out:same``, ``out:revisit2/3``, ``out:fewest``, ``prepare|ready/missing`` added
    features_version: ClassVar[int] = 2
    read = staticmethod(candidate_tokens)
    progress_tokens = staticmethod(progress_tokens)
