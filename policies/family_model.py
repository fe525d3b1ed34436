"""Local's fitted models for the families whose situations one reader turns into feature names: Blackjack,
2048, the calculator, and the labelled-text tasks (tickets, injection).

A :class:`FamilyModel` is the shape every fitted model shares (:class:`s1gym.policies.fitted.FittedModel`:
a move's logit is the sum of its feature names' weights) with the reader named by its file's ``kind``
(:data:`READERS`: the family's ``tokens.py``). ``bench/others_local.py`` fits them with the shared recipe
(:mod:`s1gym.policies.fitting`) as bench/others_protocol.md says and writes ``s1gym/data/local_<kind>.json``
(provenance inside), which each task class names as its ``local_model``. No dense weights and no progress
estimate: Local embeds nothing on these tasks, and Search uses the task's own score.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from pathlib import Path
from typing import Any

from s1gym.core import Situation
from s1gym.policies.fitted import FittedModel

__all__ = ["FEATURES_VERSION", "READERS", "FamilyModel"]

#: Bumped when a reader's feature names change, so a file fitted on other names is refused.
FEATURES_VERSION = 1
#: kind -> the reader ("module:function", imported on first use) giving each candidate's feature names
READERS: Mapping[str, str] = {
    "blackjack": "s1gym.tasks.games.tokens:blackjack_tokens",
    "2048": "s1gym.tasks.games.tokens:board_tokens",
    "calculator": "s1gym.tasks.desktop.tokens:button_tokens",
    "tickets": "s1gym.tasks.text.tokens:label_tokens",
    "injection": "s1gym.tasks.text.tokens:label_tokens",
}


@cache
def reader(kind: str) -> Callable[[Situation], list[list[str]]]:
    """The reader of ``kind`` (:data:`READERS`)."""
    module, name = READERS[kind].split(":")
    return getattr(import_module(module), name)


@dataclass(frozen=True)
class FamilyModel(FittedModel):
    """Weights by feature name, read by the reader of :attr:`kind`."""

    kind: str = ""

    def tokens(self, situation: Situation) -> list[list[str]]:
        return reader(self.kind)(situation)

    @staticmethod
    def progress_tokens(situation: Situation) -> Sequence[str]:
        return ()

    @classmethod
    def from_json(cls, data: Mapping[str, Any], path: str | Path) -> FamilyModel:
        kind, version = data.get("kind"), data.get("features_version")
        if kind not in READERS or version != FEATURES_VERSION:
            raise ValueError(f"{path}: not a model of {', '.join(READERS)} of features version {FEATURES_VERSION} "
                             f"(kind {kind!r}, version {version}); refit it with bench/others_local.py")
        return cls(data["weights"], provenance=data.get("provenance", {}), kind=kind)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "features_version": FEATURES_VERSION, "provenance": dict(self.provenance),
                "weights": {k: round(v, 4) for k, v in sorted(self.weights.items()) if abs(v) >= 1e-4}}
