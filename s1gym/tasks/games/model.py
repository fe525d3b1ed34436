"""Local's fitted models of Blackjack and 2048: weights on the feature names :mod:`.tokens` reads off what a
player sees (:class:`s1gym.models.token_model.TokenModel`), fitted by :mod:`.fit` and shipped as
``data/local_blackjack.json`` and ``data/local_2048.json``."""

from __future__ import annotations

from s1gym.models.token_model import token_model
from s1gym.tasks.games.tokens import blackjack_tokens, board_tokens

__all__ = ["BlackjackModel", "BoardModel"]

BlackjackModel = token_model("BlackjackModel", "blackjack", blackjack_tokens, __name__)
BoardModel = token_model("BoardModel", "2048", board_tokens, __name__)
