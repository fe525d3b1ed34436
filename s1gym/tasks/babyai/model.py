"""Local's fitted BabyAI model: weights on the feature names :func:`.tokens.candidate_tokens` reads off the
text view (kind ``"babyai"``), fitted by :mod:`.fit` on train seeds labelled by minigrid's bot and shipped
as ``data/local_babyai.json``."""

from __future__ import annotations

from s1gym.models.token_model import token_model
from s1gym.tasks.babyai.tokens import candidate_tokens

__all__ = ["BabyAIModel"]

BabyAIModel = token_model("BabyAIModel", "babyai", candidate_tokens, __name__)
