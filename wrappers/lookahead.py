"""Lookahead: show the policy what each move would do before it chooses."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from s1gym.checks import positive_int
from s1gym.core import Candidate, Decision, Policy, Situation, Usage

from ._base import Wrapper, favourite_groups


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

    ``width=k``: where a state has more than k moves, the inner policy is first asked about the plain
    situation and only its k favourite moves are stepped and shown (the others get probability 0): two
    calls a decision instead of one, and k steps instead of one per move, for tasks whose states offer
    hundreds of moves (ScienceWorld). When every one of the k loses, the next k favourites are stepped,
    and so on: only a state where every move loses shows losing moves. ``None`` (the default) shows every
    move.

    An answer move (``S1Env.is_answer_move``: ScienceWorld's ``focus on``) is not played on the planning
    fork: its outcome says so, with no new actions and no revisit count, so the choice of an answer stays
    the inner policy's (``allow_oracle=True`` plays it and shows its verdict: an oracle, measured on purpose).
    """

    kind = "lookahead"
    refuses_inside = {
        "search": "Lookahead's outcomes would only reach Search's root, which plans from forks anyway; "
        "look ahead inside the search instead: Search(Lookahead(policy)) (wrap(p, ['search', 'lookahead']))"
    }

    def __init__(self, policy: Policy, allow_oracle: bool = False, width: int | None = None) -> None:
        super().__init__(policy, allow_oracle)
        self.width = positive_int("Lookahead width (moves shown)", width, optional=True)

    def options(self) -> dict[str, Any]:
        return {**super().options(), **({"width": self.width} if self.width is not None else {})}

    def annotate(self, situation: Situation, shown: Sequence[Sequence[int]] | None = None
                 ) -> tuple[Situation, list[int], list[str]]:
        """The annotated situation the inner policy sees, the root indices it keeps, and the dropped moves;
        ``shown``: the indices of the moves to step and show, in groups (``width``'s favourites, the next
        ones, ...): the next group is stepped only while every move stepped so far loses (default: every
        move, one group)."""
        annotated: list[Candidate] = []
        kept: list[int] = []
        losing: list[str] = []
        all_annotated: list[Candidate] = []
        all_kept: list[int] = []
        parent = self.fork(situation)
        before = frozenset(parent.candidates)
        been = Counter((*situation.visited, situation.state_key))
        groups = [range(len(situation.candidates))] if shown is None else shown
        for indices in groups:
            # Search keeps the children it steps: asked about a node it expanded, this steps nothing.
            stepped = parent.fork_steps([situation.texts[i] for i in indices])
            for i, (env, (_obs, reward, _terminated, _truncated, info)) in zip(indices, stepped, strict=True):
                cand = situation.candidates[i]
                new = tuple(a for a in env.candidates if a not in before)
                # an answer the planning fork did not play (``outcome_hidden``) reached no state to count
                revisits = been[env.state_key()] if situation.state_key and not env.outcome_hidden else None
                c = Candidate(cand.text, outcome=env.state_text, new_actions=new, reward=float(reward),
                              revisits=revisits)
                env.close()
                all_annotated.append(c)
                all_kept.append(i)
                if info["lost"]:
                    losing.append(cand.text)
                else:
                    annotated.append(c)
                    kept.append(i)
            if kept:
                break
        parent.close()
        if not kept:  # every move loses: show them all rather than nothing
            annotated, kept = all_annotated, all_kept
            losing = []
        return situation.with_candidates(annotated), kept, losing

    def decide(self, situation: Situation) -> Decision:
        return self.decide_many([situation])[0]

    def decide_many(self, situations: Sequence[Situation]) -> list[Decision]:
        shortlists = self._shortlists(situations)
        prepared = [self.annotate(s, shown) for s, (shown, _) in zip(situations, shortlists, strict=True)]
        inner = self.inner_many([p[0] for p in prepared])
        return [
            self._map_back(s, kept, losing, d, first)
            for s, (_, kept, losing), d, (_, first) in zip(situations, prepared, inner, shortlists, strict=True)
        ]

    def _shortlists(self, situations: Sequence[Situation]
                    ) -> list[tuple[list[list[int]] | None, Decision | None]]:
        """Per situation, the indices of the moves to show in groups (:meth:`annotate`) and the plain decision
        that chose them (``width``: the inner policy's favourites, then the next ones, where a situation has
        more moves than that; else all, no call)."""
        out: list[tuple[list[list[int]] | None, Decision | None]] = [(None, None)] * len(situations)
        wide = [i for i, s in enumerate(situations) if self.width is not None and len(s.candidates) > self.width]
        if wide:
            assert self.width is not None
            for i, d in zip(wide, self.inner_many([situations[i] for i in wide]), strict=True):
                out[i] = (favourite_groups(d.probabilities, self.width), d)
        return out

    def _map_back(self, situation: Situation, kept: list[int], losing: list[str], d: Decision,
                  first: Decision | None = None) -> Decision:
        p = np.zeros(len(situation.candidates))
        p[kept] = d.probabilities
        info = {**d.info, "lookahead": {"dropped_losing": losing, "shown": len(kept)}}
        usage = d.usage if first is None else Usage.total([first.usage, d.usage])
        give_up = d.give_up or (first is not None and first.give_up)
        return Decision(p, kept[d.action], usage, info, give_up=give_up, planning_s=d.planning_s)
