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

Budget and plans: see :class:`SearchConfig` (``budget``, ``episode_budget``,
``commit_partial``, ``until_gain``...). A winning plan, or a partial one that
raised the score, is followed by later ``decide`` calls with no policy calls
while the real situation's state key matches the plan's; on divergence it
searches again (``info["diverged"]``). ``reset()`` forgets the plan and the
episode's call count.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from s1gym.checks import fraction, non_negative_float, positive_float, positive_int
from s1gym.core import Decision, Policy, Situation, Usage

from ._base import Wrapper, situation_key
from ._search_run import AUTO, PROGRESS, Plan, SearchRun, log_priority

__all__ = ["AUTO", "DEFAULT_PRIORITY", "PRIORITIES", "PROGRESS", "Search", "SearchConfig", "log_priority"]

PRIORITIES = ("levin", "phs_h", "phs*")
DEFAULT_PRIORITY = "phs_h"


#: ``SearchConfig(fallback=GREEDY)``: play the inner policy's choice once the episode's calls are spent.
GREEDY = "greedy"
FALLBACKS = (None, GREEDY)


@dataclass(frozen=True)
class SearchConfig:
    """Every option of :class:`Search`, checked once when it is made."""

    budget: int = 1000
    """Inner-policy calls per search (one per situation asked; exactly respected)."""
    priority: str = DEFAULT_PRIORITY
    """Node order: ``levin``, ``phs_h`` or ``phs*`` (see the module docstring)."""
    epsilon: float = 0.1
    """Share of flat odds mixed into the inner policy's probabilities (so no move has π = 0)."""
    h_scale: float = 10.0
    """Without a learned estimate the heuristic is ``h_scale * (1 - score)``."""
    heuristic: Callable[[Situation], float] | str | None = AUTO
    """``"auto"`` (default): the task's learned estimate of the moves left where the task ships one
    (``env.progress_estimate()``, see :mod:`s1gym.core.estimates`: ALFWorld and the TextWorldExpress games),
    else ``h_scale * (1 - score)``; ``"progress"``: the task's estimate, an error where it has none;
    ``None``: always ``h_scale * (1 - score)``; or any ``heuristic(situation) -> h >= 0``. Where a task
    ships an estimate, Search with it was measured better than with the score alone (docs/benchmarks.md)."""
    max_expansions: int | None = None
    """Stop a search after this many expansions (``None``: no limit). ``budget`` counts inner-policy calls
    only, and a node left with one move after pruning is a forced move that costs no call, so where
    forced moves chain into wide states (a web date picker: pick a date, reopen the picker, ~33 children
    each time) a search can expand without end at no call; there a cap of about ``budget`` bounds its
    work (bench/web.py uses ``max_expansions=20`` with ``budget=20``)."""
    max_seconds: float | None = None
    """Stop a search after this many seconds (``None``: no limit)."""
    batch_size: int = 1
    """Nodes popped at once and asked about in one ``decide_many`` (Jev/Chat run them concurrently).
    Children of the first are pushed after the whole batch, so the order can differ slightly."""
    trace: bool = False
    """Record every expanded plan in ``info["trace"]``."""
    commit_partial: bool = True
    """Follow a partial plan that raised the score to its end with no calls, then search again from
    there: with a budget smaller than the episode's allowance, a receding-horizon search that banks
    each gain instead of re-finding it."""
    until_gain: bool = False
    """Stop each search at the first state whose score beats the current one and commit to it
    (enforced hill-climbing, Hoffmann & Nebel 2001). Off by default: on a task whose score can rise
    into a dead end, committing to the first gain is a gamble a search for the win does not take."""
    episode_budget: int | None = None
    """Inner-policy calls for a whole episode (all its searches); once spent with no plan to follow,
    the decision gives up (``Decision.give_up``) and the runner ends the episode unsolved, or with
    ``fallback="greedy"`` plays on greedily."""
    fallback: str | None = None
    """What a decision does once ``episode_budget`` is spent and no plan is left: ``None`` gives up;
    ``"greedy"`` asks the inner policy once a move and plays its choice (``info["fallback"] =
    "greedy"``), so a game whose searches found nothing is still played to its end (these calls
    are counted in the usage, beyond ``episode_budget``)."""
    search_cap: int | None = None
    """With ``doubling``: the most calls one search may double up to (``None``: what is left of the
    episode's), so that one search cannot spend the whole ``episode_budget`` on a single move."""
    novelty: float = 100.0
    """Width-based novelty (Lipovetzky & Geffner's IW(1) and BFWS): a node that makes no fact true
    (``env.state_atoms()``) that no node generated before it in this search with the same score made
    true has its priority multiplied by ``1 + novelty``, so states that show something new are expanded
    first; the others wait, but are not pruned (the search stays complete). Novelty breaks the policy's
    indifference, never its preference: a move the inner policy gave at least twice its flat share is
    exempt. 0 turns it off. The default was chosen on the CookingWorld train fold (docs/benchmarks.md)."""
    gain_patience: float | None = 1.0
    """Once a search has found a state scoring above the current one after ``c`` calls, it goes on for at
    most ``gain_patience * c`` more calls looking for something better (a win, a bigger gain), then
    plays its best plan: a gain found early costs little, and a task with many small gains is not
    charged a whole budget for each. ``None`` spends the whole budget every time."""
    doubling: bool = True
    """With ``episode_budget``: a search whose budget ends before it found anything better than the
    current score doubles its budget and goes on from the same tree (LevinTS-style), within what is
    left of the episode's calls, instead of playing a move that leads nowhere and searching again from
    scratch (which walks back and forth when the next gain lies beyond one search's horizon)."""

    def __post_init__(self) -> None:
        if self.priority not in PRIORITIES:
            raise ValueError(f"unknown search priority {self.priority!r}; use one of {', '.join(PRIORITIES)}")
        positive_int("budget (inner-policy calls per search)", self.budget)
        fraction("epsilon (share of flat odds mixed into the policy)", self.epsilon)
        non_negative_float("h_scale", self.h_scale)
        non_negative_float("novelty", self.novelty)
        if self.heuristic is not None and not callable(self.heuristic) and self.heuristic not in (PROGRESS, AUTO):
            raise ValueError(f"heuristic must be a callable(situation) -> float, {PROGRESS!r} for the task's "
                             f"learned progress estimate, {AUTO!r} for that estimate where the task ships one, or "
                             f"None for h_scale * (1 - score); got {self.heuristic!r}")
        positive_int("max_expansions", self.max_expansions, optional=True)
        positive_float("max_seconds", self.max_seconds, optional=True)
        positive_int("batch_size", self.batch_size)
        positive_int("episode_budget (inner-policy calls per episode)", self.episode_budget, optional=True)
        if self.fallback not in FALLBACKS:
            raise ValueError(f"fallback must be one of {FALLBACKS} (None gives up once the episode's calls are "
                             f"spent); got {self.fallback!r}")
        positive_int("search_cap (inner-policy calls one search may double up to)", self.search_cap, optional=True)
        if self.gain_patience is not None:
            non_negative_float("gain_patience", self.gain_patience)
        object.__setattr__(self, "epsilon", float(self.epsilon))
        object.__setattr__(self, "h_scale", float(self.h_scale))

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))


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

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        return (*SearchConfig.option_names(), "allow_oracle")

    def options(self) -> dict[str, Any]:
        """The config fields that differ from the defaults (``trace`` only records; it is left out)."""
        default = SearchConfig()
        changed = {
            f.name: getattr(self.config, f.name)
            for f in dataclasses.fields(SearchConfig)
            if f.name != "trace" and getattr(self.config, f.name) != getattr(default, f.name)
        }
        return {**changed, **super().options()}

    def reset(self) -> None:
        self._plan = None
        self.episode_calls = 0
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
        budget = self.config.budget
        if self.config.episode_budget is not None:
            budget = min(budget, self.config.episode_budget - self.episode_calls)
            if budget <= 0:
                return self._spent(situation)
        cap = budget
        if self.config.doubling and self.config.episode_budget is not None:
            cap = self.config.episode_budget - self.episode_calls
            if self.config.search_cap is not None:
                cap = min(cap, max(budget, self.config.search_cap))
        run = SearchRun(self, situation, key, budget, cap)
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
        if self.config.fallback == GREEDY:
            d = self.policy.decide(situation)
            self.episode_calls += d.usage.calls
            info = {**d.info, "fallback": GREEDY, "stop_reason": "episode_budget", "solved": False,
                    "partial": True, "plan": [], "plan_length": 0, "expansions": 0, "policy_calls": 1}
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
            "note": f"the episode's {self.config.episode_budget} inner-policy calls are spent without a winning plan",
        }
        return Decision(np.full(n, 1.0 / n), 0, Usage(), info, give_up=True)
