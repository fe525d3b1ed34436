"""ALFWorld's fitted model for Local: learned weights on (situation token, move token) pairs.

The pairs (:mod:`s1gym.tasks.alfworld.tokens`) say how a move relates to what was already done, what the
player holds and the goal's words; the progress estimate weighs the situation tokens
(:func:`s1gym.tasks.alfworld.goals.context_tokens`), without the goal's words. Fitted by
``python -m s1gym.tasks.alfworld.fit`` on the handcoded expert's games and shipped as ``data/local_alfworld.json``
(provenance inside); the shape it shares with the TextWorldExpress models is :mod:`s1gym.models.fitted`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from s1gym.core import Situation
from s1gym.models.fitted import FittedModel
from s1gym.tasks.alfworld.goals import context_tokens
from s1gym.tasks.alfworld.tokens import situation_pairs

__all__ = ["KIND", "ALFWorldModel"]

#: What the model file says it is (the family declares this class for the kind).
KIND = "alfworld"


class ALFWorldModel(FittedModel):
    """Pair weights (``c|m`` -> weight) and the dense Local weights fitted with them."""

    progress_tokens = staticmethod(context_tokens)

    def tokens(self, situation: Situation) -> list[list[str]]:
        """Per candidate, the pairs it scores."""
        return situation_pairs(situation)


    @classmethod
    def from_json(cls, data: Mapping[str, Any], path: str | Path) -> ALFWorldModel:
        if data.get("kind") != KIND:
            raise ValueError(f"{path}: not an ALFWorld model (kind {data.get('kind')!r}); refit it with "
                             "python -m s1gym.tasks.alfworld.fit")
        return cls(data["pairs"], data.get("dense", {}), data.get("progress", {}), data.get("provenance", {}))

    def to_json(self) -> dict[str, Any]:
        return {"kind": KIND, "provenance": dict(self.provenance), "dense": dict(self.dense),
                "progress": dict(self.progress),
                "pairs": {k: round(v, 4) for k, v in sorted(self.weights.items()) if abs(v) >= 1e-4}}
