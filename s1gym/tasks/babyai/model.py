"""Local's fitted BabyAI model: weights on the feature names :func:`.tokens.candidate_tokens` reads off the
text view (kind ``"babyai"``) and a moves-left estimate on :func:`.tokens.progress_tokens`, fitted by
:mod:`.fit` on train seeds labelled by minigrid's bot and shipped as ``data/local_babyai.json``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from s1gym.models.token_model import TokenModel
from s1gym.tasks.babyai.tokens import candidate_tokens, progress_tokens

__all__ = ["BabyAIModel"]


@dataclass(frozen=True)
class BabyAIModel(TokenModel):
    """Weights by feature name and a moves-left estimate (see the module docstring)."""

    kind: ClassVar[str] = "babyai"
    #: 2: the current clause is the first not done (the view names the parts done), a door to open is not an
    #: open one, ``move|narrow``, ``move|what|front|carry`` and ``move|out:tgt:*`` added
    #: 3: the view's ways over the cells seen ("9 moves away, first turn left"), the nearest unseen cell and
    #: where an object lay from the start; ``move|way:*``, ``move|explore:*``, ``out:unseen:*``; a mission's
    #: "the box on your left" matches only objects that lay there
    features_version: ClassVar[int] = 3
    read = staticmethod(candidate_tokens)
    progress_tokens = staticmethod(progress_tokens)
