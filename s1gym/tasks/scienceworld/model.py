"""Local's fitted ScienceWorld model: weights on the feature names :func:`.tokens.candidate_tokens` reads off
the observation, the candidates and the moves so far (kind ``"scienceworld"``), and a moves-left estimate on
:func:`.tokens.progress_tokens`, fitted by :mod:`.fit` on train variations labelled by ScienceWorld's gold
paths and shipped as ``data/local_scienceworld.json``.

One rule beside the weights: on the task types whose stated order of focuses binds (:attr:`ScienceWorldModel.
ordered`, read off the train gold paths by ``fit order``), a ``focus on`` the task's instructions do not put next
(:attr:`.tokens.FocusPlaces.out_of_order`) gets :data:`HELD_BACK` added to its logit: a wrong focus ends the
game, and the task names the right one (first the thermometer, then the substance). On those types too, a focus
on one of k objects the task offers at the next step (``if the melting point is above 150 degrees, focus on the
orange box; if below, on the yellow box``: :attr:`.tokens.FocusPlaces.alternatives`) gets it while the score so
far is above 1/k: the model cannot read which alternative holds, so its pick is worth about 1/k, and a wrong one
ends the game at 0."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from s1gym.core import Situation
from s1gym.models.token_model import TokenModel
from s1gym.tasks.scienceworld.tokens import candidate_tokens, focus_places, progress_tokens, read_state

__all__ = ["HELD_BACK", "ScienceWorldModel"]

#: added to the logit of a focus the rule holds back (odds of e^-30: never the choice while any other move is on
#: offer, and still a finite number for every wrapper that adds or compares logits)
HELD_BACK = -30.0


@dataclass(frozen=True)
class ScienceWorldModel(TokenModel):
    """Weights by feature name, a moves-left estimate and the task types whose order of focuses binds (see the
    module docstring)."""

    kind: ClassVar[str] = "scienceworld"
    #: 1: the first version
    features_version: ClassVar[int] = 1
    read = staticmethod(candidate_tokens)
    progress_tokens = staticmethod(progress_tokens)
    #: the task types (ScienceWorld's names) whose gold paths on train focus only in the order the task states
    ordered: frozenset[str] = frozenset()

    def scores(self, situation: Situation) -> np.ndarray:
        logits = super().scores(situation)
        if not self.ordered:
            return logits
        state = read_state(situation.state_text or "")
        if state.kind in self.ordered:
            focus = focus_places(situation, state)
            k = np.asarray(focus.alternatives, dtype=np.float64)
            blind_pick = (k > 0) & (situation.score > 1.0 / np.maximum(k, 1.0))
            logits[np.asarray(focus.out_of_order, dtype=bool) | blind_pick] += HELD_BACK
        return logits

    @classmethod
    def from_json(cls, data: Mapping[str, Any], path: str | Path) -> ScienceWorldModel:
        model = super().from_json(data, path)
        ordered = data.get("ordered", [])
        if not isinstance(ordered, list) or not all(isinstance(t, str) for t in ordered):
            raise ValueError(f"{path}: 'ordered' must be a list of ScienceWorld task names, not {ordered!r}; refit "
                             "it with python -m s1gym.tasks.scienceworld.fit order")
        return replace(model, ordered=frozenset(ordered))

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        return {**out, "ordered": sorted(self.ordered)} if self.ordered else out
