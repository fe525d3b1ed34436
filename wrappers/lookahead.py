"""Lookahead: show the policy what each move would do before it chooses."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from s1gym.core import Candidate, Decision, Policy, Situation

from ._base import Wrapper, step_text


class Lookahead(Wrapper):
    """Fork once per candidate, step the copy, and annotate the candidate before asking ``policy``.

    Each candidate gets ``outcome`` (the observation after the move) and
    ``new_actions`` (the moves available after it that were not available
    before, in the new state's order). Candidates whose step loses the game are
    dropped unless every candidate loses; the inner policy is asked once and
    its probabilities are mapped back onto the full candidate list (dropped
    candidates get 0). The real env is never stepped: only forks are.

    Costs one fork and one env step per candidate and no extra policy calls.
    """

    kind = "lookahead"

    def __init__(self, policy: Policy, allow_oracle: bool = False) -> None:
        super().__init__(policy, allow_oracle)

    def annotate(self, situation: Situation) -> tuple[Situation, list[int], list[str]]:
        """The annotated situation the inner policy sees, the root indices it keeps, and the dropped moves."""
        before: frozenset[str] | None = None
        annotated: list[Candidate] = []
        kept: list[int] = []
        losing: list[str] = []
        all_annotated: list[Candidate] = []
        for i, cand in enumerate(situation.candidates):
            env = self.fork(situation)
            if before is None:
                before = frozenset(env.candidates)
            obs, _reward, _terminated, _truncated, info = step_text(env, cand.text)
            new = tuple(a for a in info["candidates"] if a not in before)
            c = Candidate(cand.text, outcome=obs, new_actions=new)
            all_annotated.append(c)
            if info["lost"]:
                losing.append(cand.text)
            else:
                annotated.append(c)
                kept.append(i)
        if not kept:  # every move loses: show them all rather than nothing
            annotated, kept = all_annotated, list(range(len(all_annotated)))
            losing = []
        return situation.with_candidates(annotated), kept, losing

    def decide(self, situation: Situation) -> Decision:
        return self.decide_many([situation])[0]

    def decide_many(self, situations: Sequence[Situation]) -> list[Decision]:
        prepared = [self.annotate(s) for s in situations]
        inner = self._inner_many([p[0] for p in prepared])
        return [
            self._map_back(s, kept, losing, d)
            for s, (_, kept, losing), d in zip(situations, prepared, inner, strict=True)
        ]

    def _map_back(self, situation: Situation, kept: list[int], losing: list[str], d: Decision) -> Decision:
        p = np.zeros(len(situation.candidates))
        p[kept] = d.probabilities
        # The inner info stays at the top level so outer layers and the runner see e.g. ``give_up``.
        info = {**d.info, "lookahead": {"dropped_losing": losing, "shown": len(kept)}}
        return Decision(p, kept[d.action], d.usage, info)
