"""Lookahead: show the policy what each move would do before it chooses."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from s1gym.core import Candidate, Decision, Policy, Situation

from ._base import Wrapper


class Lookahead(Wrapper):
    """Fork once per candidate, step the copy, and annotate the candidate before asking ``policy``.

    Each candidate gets ``outcome`` (the observation after the move, without
    its ``Moves:`` paragraph), ``new_actions`` (the moves available after it
    that were not available before, in the new state's order), ``reward``
    (what the move earns: the change in the task's score) and ``revisits``
    (how many times the episode was already in the state the move leads to,
    by the task's ``state_key``: ``Situation.visited`` and the current state;
    a move that undoes the last one or changes nothing counts at least 1).
    Candidates whose step loses the game are dropped unless every candidate
    loses; the inner policy is asked once and its probabilities are mapped
    back onto the full candidate list (dropped candidates get 0). The real
    env is never stepped: only forks are.

    Costs one fork and one env step per candidate (on engines that allow it, all the candidates' steps in one
    call into the engine: ``S1Env.fork_steps``) and no extra policy calls.
    """

    kind = "lookahead"
    refuses_inside = {
        "search": "Lookahead's outcomes would only reach Search's root, which plans from forks anyway; "
        "look ahead inside the search instead: Search(Lookahead(policy)) (wrap(p, ['search', 'lookahead']))"
    }

    def __init__(self, policy: Policy, allow_oracle: bool = False) -> None:
        super().__init__(policy, allow_oracle)

    def annotate(self, situation: Situation) -> tuple[Situation, list[int], list[str]]:
        """The annotated situation the inner policy sees, the root indices it keeps, and the dropped moves."""
        annotated: list[Candidate] = []
        kept: list[int] = []
        losing: list[str] = []
        all_annotated: list[Candidate] = []
        parent = self.fork(situation)
        before = frozenset(parent.candidates)
        been = Counter((*situation.visited, situation.state_key))
        # Search keeps the children it steps: asked about a node it expanded, this steps nothing.
        stepped = parent.fork_steps(situation.texts)
        for i, (cand, (env, (_obs, reward, _terminated, _truncated, info))) in enumerate(
            zip(situation.candidates, stepped, strict=True)
        ):
            new = tuple(a for a in env.candidates if a not in before)
            revisits = been[env.state_key()] if situation.state_key else None
            c = Candidate(cand.text, outcome=env.state_text, new_actions=new, reward=float(reward),
                          revisits=revisits)
            env.close()
            all_annotated.append(c)
            if info["lost"]:
                losing.append(cand.text)
            else:
                annotated.append(c)
                kept.append(i)
        parent.close()
        if not kept:  # every move loses: show them all rather than nothing
            annotated, kept = all_annotated, list(range(len(all_annotated)))
            losing = []
        return situation.with_candidates(annotated), kept, losing

    def decide(self, situation: Situation) -> Decision:
        return self.decide_many([situation])[0]

    def decide_many(self, situations: Sequence[Situation]) -> list[Decision]:
        prepared = [self.annotate(s) for s in situations]
        inner = self.inner_many([p[0] for p in prepared])
        return [
            self._map_back(s, kept, losing, d)
            for s, (_, kept, losing), d in zip(situations, prepared, inner, strict=True)
        ]

    def _map_back(self, situation: Situation, kept: list[int], losing: list[str], d: Decision) -> Decision:
        p = np.zeros(len(situation.candidates))
        p[kept] = d.probabilities
        info = {**d.info, "lookahead": {"dropped_losing": losing, "shown": len(kept)}}
        return Decision(p, kept[d.action], d.usage, info, give_up=d.give_up, planning_s=d.planning_s)
