"""Learned progress estimates: how many moves a task expects are left from a situation.

``Search(heuristic="progress")`` (``--wrap-option heuristic=progress``) uses the task's estimate as its h.
The estimate belongs to the task, not to a decision model, so any task can ship one and Search finds it
through the task. How a task ships one (this is the one place it is described):

1. **Fit it** on what a player sees. :class:`TokenProgress` is the shipped form: a linear model of the moves
   left on the situation's tokens (read by the task family's own function, e.g. ALFWorld's
   :func:`s1gym.tasks.alfworld.goals.context_tokens` or the TextWorldExpress games'
   :func:`s1gym.tasks.twx.tokens.progress_tokens`), ``max(0, w["*"] + sum of the weights of the tokens
   present)``. ``bench/alfworld_local.py`` and ``bench/twx_local.py`` fit them by ridge regression of the
   moves left along expert games.
2. **Store it** as the ``"progress"`` object (token -> weight) of a JSON file in ``s1gym/data`` (the file may
   hold other things too: Local's model of the task).
3. **Name it on the env class**: ``progress_model = "local_alfworld.json"`` and the function that reads its
   tokens, ``progress_tokens = staticmethod(context_tokens)``. The default
   :meth:`S1Env.progress_estimate <s1gym.core.S1Env.progress_estimate>` loads it once per process and
   returns it. A task whose estimate is something else overrides ``progress_estimate()`` (a classmethod)
   and returns any ``callable(situation) -> float`` (moves left, >= 0), or ``None`` when it has none.

Search asks the env at the root of each search (``env.progress_estimate()``); a task without an estimate
is a clear ``ValueError`` naming the task.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from s1gym.datasets import packaged
from s1gym.errors import S1GymError

if TYPE_CHECKING:
    from s1gym.core.situation import Situation

__all__ = ["ProgressTokensError", "TokenProgress", "TokenReader", "intercept_only", "load_progress"]

#: How a task family reads a situation as the tokens its estimate weighs.
TokenReader = Callable[["Situation"], Sequence[str]]


def intercept_only(situation: Situation) -> list[str]:
    """Only the intercept ``*``: an estimate that weighs nothing the player sees (CookingWorld's, as
    shipped)."""
    return ["*"]


class ProgressTokensError(S1GymError, TypeError):
    """A task class names a progress model file but not the function that reads its tokens."""


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
def load_progress(name: str, tokens: TokenReader) -> TokenProgress:
    """The estimate in the ``"progress"`` object of the packaged data file ``name``, read with ``tokens``
    (loaded once)."""
    data = json.loads(packaged(name).read_text())
    if not data.get("progress"):
        raise ValueError(f"s1gym/data/{name} holds no progress estimate (no \"progress\" weights)")
    return TokenProgress(dict(data["progress"]), tokens)
