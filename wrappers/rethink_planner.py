"""Rethink's offline planner: on a stall, a bounded search over forks for the way to the next score gain.

:class:`ForkPlanner` needs no network and no model of its own: it runs one best-first search (Search's
machinery, :class:`~s1gym.wrappers._search_run.SearchRun`) from the stalled state, guided by Rethink's
inner policy (its probabilities) and the task's progress estimate where its family ships one, and stops at
the first state whose score beats the current one (``until_gain``: enforced hill-climbing). It returns the
moves that reach it (:class:`ForkPlan`); :class:`~s1gym.wrappers.Rethink` then plays them, one a turn, with
no inner-policy call, while each is still a candidate and the score has not changed, and puts the moves
into ``Situation.notes`` as text for policies that read notes (Chat, Jev).

``budget`` bounds the inner-policy calls of one plan exactly as Search's ``budget`` bounds a search (one
call per situation asked); the calls are counted in the usage of the decision that made the plan. A
search that finds no gain within its budget gives no plan: Rethink then does what it does without a
planner (block the moves already tried in that state for the turn).

By name: ``Rethink(p, planner="search", plan_budget=50)``, ``s1 run ... --wrap rethink --wrap-option
planner=search --wrap-option plan_budget=50`` (:data:`PLANNERS` holds the names).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from s1gym.checks import positive_int
from s1gym.core import Decision, S1Env, Situation, Usage
from s1gym.policies.registry import Registry

from ._base import situation_key
from ._search_config import DEFAULT_PRIORITY, SearchConfig
from ._search_run import SearchRun

__all__ = ["DEFAULT_PLAN_BUDGET", "PLANNERS", "ForkPlan", "ForkPlanner"]

#: Inner-policy calls one plan may spend by default.
DEFAULT_PLAN_BUDGET = 50


@dataclass(frozen=True)
class ForkPlan:
    """What one planning search found: ``moves`` from the stalled state to the first score gain (empty when
    it found none), what it cost, and its statistics."""

    moves: tuple[str, ...]
    #: the score the plan reaches (the stalled state's when nothing was found)
    score: float
    #: the score before each move, as the plan's forks had it (Rethink drops the plan where the game differs)
    scores: tuple[float, ...] = ()
    usage: Usage = field(default_factory=Usage)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def found(self) -> bool:
        return bool(self.moves)

    @property
    def text(self) -> str:
        """The plan as a note: the moves in order."""
        return "; ".join(self.moves) if self.moves else ""


class ForkPlanner:
    """A bounded search over forks from the stalled state to the first score gain (see the module docstring).

    ``budget``: inner-policy calls per plan; ``priority``, ``epsilon``, ``heuristic`` and ``novelty`` are
    Search's (:class:`~s1gym.wrappers.SearchConfig`), at Search's defaults; ``width`` too (``None``, the
    default: every move of a node is stepped; ``k``: only the inner policy's ``k`` favourites, for tasks whose
    states offer hundreds of moves, as ``Search(width=k)``).
    """

    name = "search"

    def __init__(
        self,
        budget: int = DEFAULT_PLAN_BUDGET,
        *,
        priority: str = DEFAULT_PRIORITY,
        epsilon: float = 0.1,
        heuristic: Any = "auto",
        novelty: float = 100.0,
        width: int | None = None,
    ) -> None:
        self.budget = positive_int("budget (inner-policy calls per plan)", budget)
        self.width = positive_int("width (moves stepped per node of a plan's search)", width, optional=True)
        # until_gain: stop at the first state that beats the stalled one; no doubling, no reuse: one search,
        # exactly ``budget`` calls at most.
        self.config = SearchConfig(
            budget=self.budget, priority=priority, epsilon=epsilon, heuristic=heuristic, novelty=novelty,
            until_gain=True, commit_partial=False, doubling=False, gain_patience=None, reuse=0, width=self.width,
            policy_answers=False,  # a plan ends at a gain, never at an answer: the rule Rethink was measured with
        )

    def options(self) -> dict[str, Any]:
        """How this planner differs from the default one (what Rethink records)."""
        out: dict[str, Any] = {} if self.budget == DEFAULT_PLAN_BUDGET else {"plan_budget": self.budget}
        if self.width is not None:
            out["plan_width"] = self.width
        return out

    def search(
        self,
        situation: Situation,
        fork: Callable[[Situation], S1Env],
        ask: Callable[[Sequence[Situation]], list[Decision]],
        above: float | None = None,
    ) -> ForkPlan:
        """One search from ``situation`` for a state scoring above ``above`` (default: the situation's score)
        or a win: ``fork`` gives an env in its state, ``ask`` asks the inner policy."""
        t0 = time.monotonic()
        target = situation.score if above is None else max(float(above), situation.score)
        # the search compares every state's score with its root's: the root stands at the target
        root = dataclasses.replace(situation, score=target)
        run = SearchRun(self.config, fork, ask, root, situation_key(situation), self.budget)
        try:
            stop = run.run()
        finally:
            run.close()
        usage = Usage.total(run.usages)
        info: dict[str, Any] = {
            "stop_reason": stop,
            "policy_calls": run.stats.policy_calls,
            "expansions": run.stats.expansions,
            "elapsed_s": round(time.monotonic() - t0, 4),
        }
        goal = run.goal
        if goal is None or (goal.score <= target and not goal.won):
            return ForkPlan((), situation.score, (), usage, info)
        path = []  # (move, the score before it) from the goal back to the root
        node = goal
        while node.parent is not None:
            before = node.parent.score if node.parent.parent is not None else situation.score
            path.append((node.move, before))
            node = node.parent
        path.reverse()
        info["won"] = bool(goal.won)
        return ForkPlan(tuple(m for m, _ in path), goal.score, tuple(s for _, s in path), usage, info)

    def __repr__(self) -> str:
        return f"ForkPlanner(budget={self.budget}{'' if self.width is None else f', width={self.width}'})"


#: planner names -> constructors (``Rethink(p, planner="search")``, ``--wrap-option planner=search``)
PLANNERS: Registry[Callable[..., ForkPlanner]] = Registry("Rethink planner", {"search": ForkPlanner})
