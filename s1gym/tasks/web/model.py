"""Local's fitted model for the web pages (MiniWoB++): move scores from what a page shows.

A :class:`WebModel` (a :class:`~s1gym.models.token_model.TokenModel`) holds learned weights on the feature
names :func:`s1gym.tasks.web.tokens.candidate_tokens` gives each move (a move's logit is the sum of its
names' weights). It reads only what a player sees. :mod:`s1gym.tasks.web.fit` fits it with the shared
recipe (:mod:`s1gym.models.fitting`) on the rules' games and noisy roll-ins of the train seeds
(bench/web_protocol.md) and writes ``data/local_web.json`` (provenance inside), which the family declares
as every page's model (:mod:`s1gym.tasks.web.family`). It has no progress estimate (Search on the web uses
the page's own score).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from s1gym.models.token_model import TokenModel
from s1gym.tasks.web.tokens import candidate_tokens

__all__ = ["KIND", "WebModel"]

#: What a model file says it is (the family declares this class for the kind).
KIND = "web"


@dataclass(frozen=True)
class WebModel(TokenModel):
    """Weights by feature name for the web pages (see the module docstring); no dense weights and no
    progress estimate."""

    kind: ClassVar[str] = KIND
    read = staticmethod(candidate_tokens)
    #: bumped when the feature names change, so a model file fitted on other names is refused
    features_version: ClassVar[int] = 2
