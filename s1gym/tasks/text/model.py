"""Local's fitted models of the labelled-text tasks: weights on the words and word pairs
:func:`.tokens.label_tokens` reads for each label (:class:`s1gym.models.token_model.TokenModel`), fitted by
:mod:`.fit` and shipped as ``data/local_tickets.json`` and ``data/local_injection.json``."""

from __future__ import annotations

from s1gym.models.token_model import token_model
from s1gym.tasks.text.tokens import label_tokens

__all__ = ["InjectionModel", "TicketsModel"]

TicketsModel = token_model("TicketsModel", "tickets", label_tokens, __name__)
InjectionModel = token_model("InjectionModel", "injection", label_tokens, __name__)
