"""Local's fitted ScienceWorld model: weights on the feature names :func:`.tokens.candidate_tokens` reads off
the observation, the candidates and the moves so far (kind ``"scienceworld"``), and a moves-left estimate on
:func:`.tokens.progress_tokens`, fitted by :mod:`.fit` on train variations labelled by ScienceWorld's gold
paths and shipped as ``data/local_scienceworld.json``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from s1gym.models.token_model import TokenModel
from s1gym.tasks.scienceworld.tokens import candidate_tokens, progress_tokens

__all__ = ["ScienceWorldModel"]


@dataclass(frozen=True)
class ScienceWorldModel(TokenModel):
    """Weights by feature name and a moves-left estimate (see the module docstring)."""

    kind: ClassVar[str] = "scienceworld"
    #: 1: the first version
    features_version: ClassVar[int] = 1
    read = staticmethod(candidate_tokens)
    progress_tokens = staticmethod(progress_tokens)
