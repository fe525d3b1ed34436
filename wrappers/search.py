"""Search: best-first search over plans, replayed through ``fork()``, guided by any policy.

A node is a plan (a move sequence from the current state) and the forked env
it leads to. Its cost ``g`` is the plan length, ``π`` the product of the inner
policy's probabilities along it (each mixed with ``epsilon`` of flat odds), and
``h`` a heuristic: by default the task's learned estimate of the moves left where
the task ships one (ALFWorld, the TextWorldExpress games), else
``h_scale * (1 - score)``. Nodes are expanded in
order of one of three priorities, all computed in log space (π of a 40-move
plan underflows a float):

==========  ========================  =========================================
``levin``   g / π                     LevinTS (Orseau et al. 2018): ignores h
``phs_h``   (g + h) / π               what the CookingWorld write-up used
``phs*``    (g + h) / π^(1 + h/g)     PHS* (Orseau & Lelis 2021)
==========  ========================  =========================================

On ``tests/toy_tasks.PRIORITY_GRAPH`` (three depth-1 nodes with π = .6/.3/.1
and h = 10/3/0.5) they expand x,y,z (levin), y,z,x (phs_h) and z,y,x (phs*):
levin trusts the policy, phs* trusts the score most. The default, ``phs_h``, is
the search benchmark's pick; docs/benchmarks.md has the numbers and the
reasons (phs*'s exponent makes one unlikely move near the root dearer than ten
likely moves deep in a side room when the policy is confident).

One search (:class:`SearchRun`, in ``_search_run.py``) reads like this::

    while the frontier is not empty and no goal is found:
        pop the best nodes (a batch)
        expand each: step every move on its own fork, prune, test for the goal
        ask the inner policy about the expanded nodes, push their children
    return the first move of the winning plan, or of the best partial one

Pruning, all free because each child is stepped on its own fork when its parent
is expanded (before the policy is asked about the parent):

- a child whose move loses the game is dropped;
- a child whose state (the task's ``state_key``) was already reached by a plan
  no longer than its own is dropped (so "look", "inventory" and walking in
  circles cost nothing); a stale heap entry reached again more cheaply is
  skipped when popped. The step counter is deliberately not part of any key,
  so two plans of different lengths to one state merge;
- a child that truncates (the step limit) or has no moves left is dropped.

A child's env is dropped after this check and replayed from its parent's when
the child is expanded, so a search keeps one live env per expanded node, not
one per frontier node (an engine-backed env holds an engine).

The policy is then asked about the parent as the task shows it (all its
candidates, so a policy such as ``Rule`` that names a pruned move still works),
and its probabilities are renormalised over the surviving moves (flat odds if
it gave them no mass). One exception: when all its mass is on a move that
leads straight back to the same state (TWX's gold paths start with "look
around"), it is asked once more in the state after that move (same moves, one
more call, counted in the budget), so ``Search(Rule())`` follows the gold path.
A parent with a single surviving move costs no call. A winning child ends the
search at once (goal test at generation), so the last move of a plan never
costs a call.

Options: :class:`SearchConfig` (in ``_search_config.py``), in three groups: what a search may
spend (``budget``, ``episode_budget``, ``gain_patience``...), what guides it (``priority``,
``epsilon``, ``heuristic``...), and ties and reuse (``novelty``, ``commit_partial``, ``until_gain``,
``reuse``).

Tree reuse: the inner policy's answers are kept between the searches of an episode, keyed by the state
and the history that reached it (``reuse`` of them, least recently used out). After a move is played the
next search starts below it, where every node the last search asked about is reached again by the same
history: it gets those answers without a call, and the forks it steps again cost about a step each. A
reused answer counts in the search's ``budget`` (so it expands what a search without reuse would) but not
in the calls spent: ``info["reused"]`` counts them, ``info["policy_calls"]`` the calls.
A winning plan, or a partial one that raised the score, is followed by later ``decide`` calls with
no policy calls while the real situation's state key matches the plan's; on divergence it searches
again (``info["diverged"]``). ``reset()`` forgets the plan and the episode's call count.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from s1gym.core import Decision, Policy, Situation, Usage

from ._base import Wrapper, situation_key
from ._search_config import (
    AUTO,
    DEFAULT_PRIORITY,
    FALLBACKS,
    GREEDY,
    PRIORITIES,
    PROGRESS,
    SearchConfig,
    SearchGuidance,
    SearchLimits,
    SearchTies,
)
from ._search_nodes import Plan, log_priority
from ._search_run import Answers, SearchRun

__all__ = [
    "AUTO",
    "DEFAULT_PRIORITY",
    "FALLBACKS",
    "GREEDY",
    "PRIORITIES",
    "PROGRESS",
    "Search",
    "SearchConfig",
    "SearchGuidance",
    "SearchLimits",
    "SearchTies",
    "log_priority",
]


class Search(Wrapper):
    """Best-first search over plans guided by ``policy``; see the module docstring.

    ``Search(policy, budget=100, episode_budget=1000)`` or
    ``Search(policy, SearchConfig(...))``; the options are :class:`SearchConfig`'s.
    ``decide_many`` (inherited) decides situations one after another: each search
    already batches its own inner calls through the inner policy's ``decide_many``.
    """

    kind = "search"
    asks_hypothetical = True

    def __init__(
        self, policy: Policy, config: SearchConfig | None = None, *, allow_oracle: bool = False, **options: Any
    ) -> None:
        super().__init__(policy, allow_oracle)
        if config is not None and options:
            raise ValueError("Search takes a SearchConfig or keyword options, not both")
        unknown = sorted(set(options) - set(SearchConfig.option_names()))
        if unknown:
            raise ValueError(
                f"Search: unknown option(s) {unknown}; options are {', '.join(SearchConfig.option_names())}"
            )
        self.config = config if config is not None else SearchConfig(**options)
        #: Inner-policy calls spent in this episode (``reset()`` zeroes it).
        self.episode_calls = 0
        self._plan: Plan | None = None
        #: the inner policy's answers kept between this episode's searches (``reuse``; ``reset()`` clears it)
        self._answers = Answers(self.config.ties.reuse)

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        return (*SearchConfig.option_names(), "allow_oracle")

    def options(self) -> dict[str, Any]:
        """The options that differ from the defaults, flat (``trace`` only records; it is left out)."""
        default = SearchConfig().flat()
        flat = self.config.flat()
        changed = {name: value for name, value in flat.items() if name != "trace" and value != default[name]}
        return {**changed, **super().options()}

    def reset(self) -> None:
        self._plan = None
        self.episode_calls = 0
        self._answers.clear()
        super().reset()

    # ------------------------------------------------------------- decide
    def decide(self, situation: Situation) -> Decision:
        if not situation.candidates:
            raise ValueError(f"{self.name}: the situation has no candidate moves (is the game over?)")
        key = situation_key(situation)
        diverged = False
        if self._plan is not None:
            followed = self._plan.follow(situation, key)
            if followed is not None:
                return followed
            diverged = not self._plan.finished  # a partial plan played to its end is done, not diverged
            self._plan = None
        limits = self.config.limits
        budget = limits.budget
        if limits.episode_budget is not None:
            budget = min(budget, limits.episode_budget - self.episode_calls)
            if budget <= 0:
                return self._spent(situation)
        cap = budget
        if limits.doubling and limits.episode_budget is not None:
            cap = limits.episode_budget - self.episode_calls
            if limits.search_cap is not None:
                cap = min(cap, max(budget, limits.search_cap))
        run = SearchRun(self.config, self.fork, self.inner_many, situation, key, budget, cap, self._answers)
        try:
            decision, plan = run.result(run.run(), diverged)
            decision = dataclasses.replace(decision, planning_s=decision.info["elapsed_s"])
        finally:
            run.close()
        self._plan = plan
        self.episode_calls += run.stats.policy_calls
        return decision

    def _spent(self, situation: Situation) -> Decision:
        """The episode's calls are spent and no plan is left: play greedily (``fallback="greedy"``) or end
        the episode (the runner honours ``give_up``)."""
        if self.config.limits.fallback == GREEDY:
            d = self.policy.decide(situation)
            self.episode_calls += d.usage.calls
            info = {**d.info, "fallback": GREEDY, "stop_reason": "episode_budget", "solved": False,
                    "partial": True, "plan": [], "plan_length": 0, "expansions": 0, "policy_calls": 1, "reused": 0}
            return dataclasses.replace(d, info=info)
        n = len(situation.candidates)
        info = {
            "stop_reason": "episode_budget",
            "solved": False,
            "partial": True,
            "plan": [],
            "plan_length": 0,
            "expansions": 0,
            "policy_calls": 0,
            "reused": 0,
            "note": f"the episode's {self.config.limits.episode_budget} inner-policy calls are spent without a winning plan",
        }
        return Decision(np.full(n, 1.0 / n), 0, Usage(), info, give_up=True)
