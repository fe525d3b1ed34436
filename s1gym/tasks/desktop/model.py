"""Local's fitted model of the calculator: weights on the feature names :func:`.tokens.button_tokens`
reads for each button (:class:`s1gym.models.token_model.TokenModel`), fitted by :mod:`.fit` and shipped as
``data/local_calculator.json``."""

from __future__ import annotations

from s1gym.models.token_model import token_model
from s1gym.tasks.desktop.tokens import button_tokens

__all__ = ["CalculatorModel"]

CalculatorModel = token_model("CalculatorModel", "calculator", button_tokens, __name__)
