"""Local's fitted model for the web pages (MiniWoB++): move scores from what a page shows.

A :class:`WebModel` (a :class:`~s1gym.policies.fitted.FittedModel`) holds learned weights on the feature
names :func:`s1gym.tasks.web.tokens.candidate_tokens` gives each move (a move's logit is the sum of its
names' weights). It reads only what a player sees. ``bench/web_local.py`` fits it with the shared recipe
(:mod:`s1gym.policies.fitting`) on the rules' games and noisy roll-ins of the train seeds
(bench/web_protocol.md) and writes ``s1gym/data/local_web.json`` (provenance inside), which
:class:`~s1gym.tasks.web.env.MiniWoBEnv` names as its ``local_model``. It has no progress estimate (Search
on the web uses the page's own score).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from s1gym.core import Situation
from s1gym.policies.fitted import FittedModel
from s1gym.tasks.web.tokens import candidate_tokens

__all__ = ["WebModel"]

#: Bumped when the feature names change, so a model file fitted on other names is refused.
FEATURES_VERSION = 2
#: What a model file says it is (Local tells the families' model files apart by it).
KIND = "web"


@dataclass(frozen=True)
class WebModel(FittedModel):
    """Weights by feature name for the web pages (see the module docstring); no dense weights and no
    progress estimate."""

    def tokens(self, situation: Situation) -> list[list[str]]:
        return candidate_tokens(situation)

    @staticmethod
    def progress_tokens(situation: Situation) -> Sequence[str]:
        return ()

    @classmethod
    def from_json(cls, data: Mapping[str, Any], path: str | Path) -> WebModel:
        version = data.get("features_version")
        if data.get("kind") != KIND or version != FEATURES_VERSION:
            raise ValueError(f"{path}: not a web model of features version {FEATURES_VERSION} (kind "
                             f"{data.get('kind')!r}, version {version}); refit it with bench/web_local.py")
        return cls(data["weights"], provenance=data.get("provenance", {}))

    def to_json(self) -> dict[str, Any]:
        return {"kind": KIND, "features_version": FEATURES_VERSION, "provenance": dict(self.provenance),
                "weights": {k: round(v, 4) for k, v in sorted(self.weights.items()) if abs(v) >= 1e-4}}
