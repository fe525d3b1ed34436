"""Learned progress estimates: how many moves a task expects are left from a situation.

``Search(heuristic="progress")`` (``--wrap-option heuristic=progress``; the default ``"auto"`` too, where
one ships) uses the task's estimate as its h. The estimate belongs to the task's family, not to a decision
model or to the env, so any family can ship one and Search finds it through :mod:`s1gym.registration`. How a
family ships one (this is the one place it is described):

1. **Fit it** on what a player sees. :class:`TokenProgress` is the shipped form: a linear model of the moves
   left on the situation's tokens (read by the family's own function),
   ``max(0, w["*"] + sum of the weights of the tokens present)``, e.g. by ridge regression of the moves
   left along expert games (:func:`s1gym.models.fitting.fit_progress`).
2. **Store it** as the ``"progress"`` object (token -> weight) of a JSON file in the family's ``data/``
   folder (the file may hold other things too: Local's model of the task).
3. **Declare it** on the task's row (:class:`s1gym.family.Task`): ``model="local_x.json"`` and the function
   that reads its tokens, ``progress_tokens="pkg.tokens:progress_tokens"``.
   :func:`s1gym.registration.progress_estimate` loads it once per process.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from s1gym.core.situation import Situation

__all__ = ["TokenProgress", "TokenReader", "intercept_only", "load_progress"]

#: How a task family reads a situation as the tokens its estimate weighs.
TokenReader = Callable[["Situation"], Sequence[str]]


def intercept_only(situation: Situation) -> list[str]:
    """Only the intercept ``*``: an estimate that weighs nothing the player sees (CookingWorld's, as
    shipped)."""
    return ["*"]


@dataclass(frozen=True)
class TokenProgress:
    """A learned estimate of the moves left: a weight per situation token (see the module docstring)."""

    weights: Mapping[str, float]
    #: the task family's reader of the situation's tokens
    tokens: TokenReader = field(repr=False)

    def __call__(self, situation: Situation) -> float:
        """Predicted moves left (>= 0) from the situation's tokens; 0 without weights."""
        w = self.weights
        if not w:
            return 0.0
        tokens = self.tokens(situation)
        return max(0.0, w.get("*", 0.0) + sum(w.get(t, 0.0) for t in tokens if t != "*"))


@lru_cache(maxsize=None)
def load_progress(path: Path, tokens: TokenReader) -> TokenProgress:
    """The estimate in the ``"progress"`` object of the model file at ``path``, read with ``tokens``
    (loaded once)."""
    data = json.loads(Path(path).read_text())
    if not data.get("progress"):
        raise ValueError(f"{path} holds no progress estimate (no \"progress\" weights)")
    return TokenProgress(dict(data["progress"]), tokens)
