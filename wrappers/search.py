"""Search: best-first search over plans, replayed through ``fork()``, guided by any policy.

A node is a plan (a move sequence from the current state) and the forked env
it leads to. Its cost ``g`` is the plan length, ``π`` the product of the inner
policy's probabilities along it (each mixed with ``epsilon`` of flat odds), and
``h`` a heuristic, by default ``h_scale * (1 - score)``. Nodes are expanded in
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

One search (:class:`_SearchRun`) reads like this::

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
import heapq
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from s1gym.checks import fraction, non_negative_float, positive_float, positive_int
from s1gym.core import Decision, Policy, S1Env, Situation, Usage

from ._base import Wrapper, normalised, situation_key

PRIORITIES = ("levin", "phs_h", "phs*")
DEFAULT_PRIORITY = "phs_h"


def log_priority(priority: str, g: int, log_pi: float, h: float) -> float:
    """log of the node's priority (smaller is expanded first); ``g`` >= 1."""
    if log_pi == -math.inf:
        return math.inf
    if priority == "levin":
        return math.log(g) - log_pi
    if priority == "phs_h":
        return math.log(g + h) - log_pi
    return math.log(g + h) - (1.0 + h / g) * log_pi


#: ``SearchConfig(heuristic=PROGRESS)``: the task's learned progress estimate.
PROGRESS = "progress"
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
    """The default heuristic is ``h_scale * (1 - score)``."""
    heuristic: Callable[[Situation], float] | str | None = None
    """``heuristic(situation) -> h >= 0`` replaces the default; ``"progress"`` is the task's learned
    estimate of the moves left (:func:`s1gym.policies.local.progress_heuristic`; ALFWorld has one), the
    form a command line or a job config can name."""
    max_expansions: int | None = None
    """Stop a search after this many expansions (``None``: no limit)."""
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
        if self.heuristic is not None and not callable(self.heuristic) and self.heuristic != PROGRESS:
            raise ValueError(f"heuristic must be a callable(situation) -> float, {PROGRESS!r} for the task's "
                             f"learned progress estimate, or None for h_scale * (1 - score); got {self.heuristic!r}")
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
        self._plan: _Plan | None = None

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
        run = _SearchRun(self, situation, key, budget, cap)
        try:
            decision, plan = run.result(run.run(), diverged)
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


def _one_hot(situation: Situation, move: str, usage: Usage, info: dict[str, Any], give_up: bool = False) -> Decision:
    action = situation.texts.index(move)
    p = np.zeros(len(situation.candidates))
    p[action] = 1.0
    return Decision(p, action, usage, info, give_up)


@dataclass
class _Plan:
    """A plan being followed: ``(state key before, move)`` steps, the next one at ``pos``."""

    steps: list[tuple[str, str]]
    pos: int
    solves: bool

    @property
    def finished(self) -> bool:
        return self.pos >= len(self.steps)

    def follow(self, situation: Situation, key: str) -> Decision | None:
        """The plan's next move, one-hot and free, while the real state matches it; else ``None``."""
        if self.finished:
            return None
        want_key, move = self.steps[self.pos]
        if want_key != key or move not in situation.texts:
            return None
        remaining = [m for _, m in self.steps[self.pos :]]
        info = {
            "stop_reason": "following_plan",
            "plan": remaining,
            "plan_length": len(remaining),
            "plan_step": self.pos,
            "expansions": 0,
            "policy_calls": 0,
            "solved": self.solves,
            "partial": not self.solves,
        }
        self.pos += 1
        return _one_hot(situation, move, Usage(), info)


@dataclass(eq=False)
class _Node:
    #: the env in this node's state: kept for expanded nodes (their children are made from it),
    #: ``None`` for frontier nodes until they are expanded
    env: S1Env | None
    g: int
    log_pi: float
    h: float
    score: float
    key: str
    parent: _Node | None = None
    move: str | None = None
    #: moves from this node that lead straight back to it (only while it is expanded)
    noops: set[str] = field(default_factory=set)
    won: bool = False
    #: made no fact true that no earlier node of the search made true (novelty's width 2)
    stale: bool = False
    #: the inner policy gave this move at least twice its flat share (novelty never overrules that)
    endorsed: bool = True

    def plan(self) -> list[tuple[str, str]]:
        """``(state key before, move)`` pairs from the root to this node."""
        steps = []
        node = self
        while node.parent is not None:
            steps.append((node.parent.key, node.move))
            node = node.parent
        return steps[::-1]


@dataclass
class _Stats:
    expansions: int = 0
    policy_calls: int = 0
    generated: int = 0
    duplicates: int = 0
    losing_pruned: int = 0
    dead_ends: int = 0
    noop_reasks: int = 0
    doublings: int = 0


class _SearchRun:
    """One search from one situation: the frontier, what was seen, the best node, the statistics."""

    def __init__(self, search: Search, situation: Situation, key: str, budget: int, cap: int | None = None) -> None:
        self.search = search
        self.config = search.config
        self.situation = situation
        self.notes = situation.notes
        self.budget = budget
        #: the budget may double up to this while nothing better than the root was found
        self.cap = budget if cap is None else max(budget, cap)
        #: nodes expanded but not yet asked about when the budget ran out (asked first if it grows)
        self.unasked: list[tuple[_Node, list[_Node]]] = []
        self._stale_log_factor = math.log1p(self.config.novelty)
        self.t0 = time.monotonic()
        self.stats = _Stats()
        self.usages: list[Usage] = []
        self.trace: list[str] = []
        #: ``config.heuristic`` as a function (``"progress"`` looked up once, for this situation's task)
        self.heuristic = self.config.heuristic
        if self.heuristic == PROGRESS:
            from s1gym.policies.local import progress_heuristic

            self.heuristic = progress_heuristic(situation.task)
        root_env = search.fork(situation)
        self.root = _Node(root_env, 0, 0.0, self.h(root_env, situation.score), situation.score, key)
        self.seen: dict[str, int] = {key: 0}
        #: facts made true so far in this search, per score (BFWS's novelty partitioned by the heuristic:
        #: coming back to a room is new again once the score rose, e.g. with an ingredient in hand)
        self.atoms: dict[float, set[str]] = {situation.score: set(root_env.state_atoms())} if self.config.novelty else {}
        self._tie = itertools.count()
        self.heap: list[tuple[float, int, _Node]] = [(-math.inf, next(self._tie), self.root)]
        self.best: _Node | None = None
        self.goal: _Node | None = None
        self.inner_gave_up = False
        #: nodes whose env is live (closed when the search ends, returning engines to their pools)
        self.live: list[_Node] = [self.root]
        #: calls spent when a state scoring above the root was first found (``gain_patience``)
        self.gain_at: int | None = None

    # ---------------------------------------------------------------- loop
    def run(self) -> str:
        """Search until a goal, an empty frontier or a limit; the stop reason."""
        while (self.heap or self.unasked) and self.goal is None:
            limit = self._limit_reached()
            if limit:
                return limit
            pending, self.unasked = self.unasked, []
            if not pending:
                for node in self.pop_batch():
                    children = self.expand(node)
                    if self.goal is not None:
                        return "won" if self.goal.won else "gain"
                    if len(children) == 1:  # a forced move costs no call
                        self.push(children[0])
                    elif children:
                        pending.append((node, children))
            if pending and not self.ask(pending):
                if self.inner_gave_up:
                    return "inner_give_up"
                if not self._grow():
                    return "budget"
        return "exhausted"

    def _grow(self) -> bool:
        """Double the budget (up to ``cap``) when nothing better than the root was found yet."""
        found = self.best is not None and self.best.score > self.situation.score
        if found or self.budget >= self.cap:
            return False
        self.budget = min(2 * self.budget, self.cap)
        self.stats.doublings += 1
        return True

    def _limit_reached(self) -> str | None:
        patience = self.config.gain_patience
        if patience is not None and self.gain_at is not None:
            if self.stats.policy_calls >= self.gain_at + max(1, math.ceil(patience * self.gain_at)):
                return "gain_patience"
        if self.config.max_expansions is not None and self.stats.expansions >= self.config.max_expansions:
            return "max_expansions"
        if self.config.max_seconds is not None and time.monotonic() - self.t0 >= self.config.max_seconds:
            return "time"
        return None

    def h(self, env: S1Env, score: float) -> float:
        if self.heuristic is None:
            return self.config.h_scale * (1.0 - score)
        return max(0.0, float(self.heuristic(env.situation(self.notes))))

    def push(self, node: _Node) -> None:
        p = log_priority(self.config.priority, node.g, node.log_pi, node.h)
        if node.stale and not node.endorsed:
            p += self._stale_log_factor
        heapq.heappush(self.heap, (p, next(self._tie), node))
        best = self.best
        # The best partial plan: the highest score, then the lowest h (the default h only repeats the score; a
        # learned progress estimate tells apart states of equal score), then the shortest, most probable.
        if best is None or (node.score, -node.h, -node.g, node.log_pi) > (best.score, -best.h, -best.g, best.log_pi):
            self.best = node
            if node.score > self.situation.score and self.gain_at is None:
                self.gain_at = self.stats.policy_calls

    def pop_batch(self) -> list[_Node]:
        """Up to ``batch_size`` nodes in priority order (skipping entries reached more cheaply since)."""
        batch: list[_Node] = []
        while self.heap and len(batch) < self.config.batch_size:
            _, _, node = heapq.heappop(self.heap)
            if self.seen.get(node.key, node.g) < node.g:
                continue
            batch.append(node)
        return batch

    # -------------------------------------------------------------- expand
    def expand(self, node: _Node) -> list[_Node]:
        """Step every move of ``node`` on its own fork; the surviving children (sets ``goal`` on a win,
        or with ``until_gain`` on a new state that beats the root's score)."""
        self.stats.expansions += 1
        if self.config.trace:
            self.trace.append(" > ".join(m for _, m in node.plan()))
        if node.env is None:
            node.env = self._materialise(node)
            self.live.append(node)
        texts = self.situation.texts if node is self.root else node.env.candidates
        kids: list[_Node] = []
        g = node.g + 1
        for text in texts:
            env = node.env.fork()
            _obs, _r, _term, truncated, info = env.step_move(text)
            self.stats.generated += 1
            score = float(info["score"])
            if info["won"]:
                self.goal = _Node(None, g, node.log_pi, 0.0, score, env.state_key(), node, text, won=True)
                env.close()
                return kids
            key = env.state_key() if not (info["lost"] or truncated or not env.candidates) else ""
            child = self._keep(node, text, env, g, score, key, info["lost"], truncated)
            env.close()  # made again from the parent when the child is expanded
            if self.goal is not None:
                return kids
            if child is not None:
                kids.append(child)
        if len(kids) <= 1:
            node.noops = set()
        return kids

    def _keep(
        self, node: _Node, text: str, env: S1Env, g: int, score: float, key: str, lost: bool, truncated: bool
    ) -> _Node | None:
        """The child worth keeping, or ``None`` when it is pruned (counted in the statistics)."""
        if lost:
            self.stats.losing_pruned += 1
            return None
        if truncated or not env.candidates:
            self.stats.dead_ends += 1
            return None
        if self.config.until_gain and score > self.situation.score and key not in self.seen:
            self.goal = _Node(None, g, node.log_pi, 0.0, score, key, node, text)
            return None
        if self.seen.get(key, g + 1) <= g:
            self.stats.duplicates += 1
            if key == node.key:
                node.noops.add(text)
            return None
        self.seen[key] = g
        child = _Node(None, g, node.log_pi, self.h(env, score), score, key, node, text)
        if self.config.novelty:
            atoms = env.state_atoms()
            seen = self.atoms.setdefault(score, set())
            child.stale = atoms <= seen
            seen |= atoms
        return child

    @staticmethod
    def _materialise(node: _Node) -> S1Env:
        """The node's env, replayed from its parent's (which is kept while the search runs)."""
        assert node.parent is not None and node.parent.env is not None and node.move is not None
        env = node.parent.env.fork()
        env.step_move(node.move)
        return env

    # ----------------------------------------------------------------- ask
    def ask(self, pending: list[tuple[_Node, list[_Node]]]) -> bool:
        """Ask the inner policy about the expanded nodes and push their children with their π.

        False when the budget did not cover every node (or the inner policy gave up at the root).
        """
        room = self.budget - self.stats.policy_calls
        asked = pending[:room]
        self.unasked = pending[len(asked):]
        if asked:
            situations = [node.env.situation(self.notes) for node, _ in asked]
            decisions = self.search._inner_many(situations)
            self.stats.policy_calls += len(asked)
            for (node, kids), sit, d in zip(asked, situations, decisions, strict=True):
                self.usages.append(d.usage)
                if node is self.root and d.give_up:
                    self.inner_gave_up = True
                    return False
                p = self._on_survivors(sit, d, kids)
                if p.sum() == 0 and sit.texts[d.action] in node.noops and self.stats.policy_calls < self.budget:
                    p = self._reask_after_noop(node, sit.texts[d.action], kids)
                node.noops = set()
                p = (1.0 - self.config.epsilon) * normalised(p) + self.config.epsilon / len(kids)
                with np.errstate(divide="ignore"):
                    logs = np.log(p)
                endorsed = math.log(2.0 / len(kids))
                for child, lp in zip(kids, logs, strict=True):
                    child.log_pi = node.log_pi + float(lp)
                    child.endorsed = bool(lp >= endorsed)
                    self.push(child)
        return len(asked) == len(pending)

    def _reask_after_noop(self, node: _Node, noop: str, kids: list[_Node]) -> np.ndarray:
        """The policy only likes a move that changes nothing here ("look around"): ask it once more in
        the state after that move, which has the same moves."""
        after = node.env.fork()
        after.step_move(noop)
        sit = after.situation(self.notes)
        d = self.search._inner_many([sit])[0]
        after.close()
        self.stats.policy_calls += 1
        self.stats.noop_reasks += 1
        self.usages.append(d.usage)
        return self._on_survivors(sit, d, kids)

    @staticmethod
    def _on_survivors(sit: Situation, d: Decision, kids: list[_Node]) -> np.ndarray:
        """The decision's probabilities of the surviving moves, by text (not normalised)."""
        index = {t: i for i, t in enumerate(sit.texts)}
        probs = np.asarray(d.probabilities, dtype=np.float64)
        return np.array([probs[index[k.move]] if k.move in index else 0.0 for k in kids])

    # -------------------------------------------------------------- result
    def result(self, stop: str, diverged: bool) -> tuple[Decision, _Plan | None]:
        """The decision (first move of the goal's or best partial plan) and the plan to follow next."""
        solved = self.goal is not None and self.goal.won
        end = self.goal or self.best
        info: dict[str, Any] = {
            "stop_reason": stop,
            "solved": solved,
            "partial": not solved,
            "priority": self.config.priority,
            **dataclasses.asdict(self.stats),
            "elapsed_s": time.monotonic() - self.t0,
            "diverged": diverged,
        }
        if self.config.trace:
            info["trace"] = self.trace
        usage = Usage.total(self.usages)
        if self.inner_gave_up:
            n = len(self.situation.candidates)
            info.update(plan=[], plan_length=0, note="the inner policy gave up at the root")
            return Decision(np.full(n, 1.0 / n), 0, usage, info, give_up=True), None
        if end is None:
            # Nothing but losing moves, dead ends or the root's own state: no plan to offer.
            safe = self._safe_moves()
            info.update(plan=[], plan_length=0, note="no move leads anywhere new; chose the first safe move")
            p = np.zeros(len(self.situation.candidates))
            p[safe] = 1.0 / len(safe)
            return Decision(p, safe[0], usage, info), None
        steps = end.plan()
        info.update(plan=[m for _, m in steps], plan_length=len(steps), plan_score=end.score)
        if not solved:
            info["note"] = f"search stopped ({stop}) before a win; playing the first move of the best partial plan"
        plan = None
        if solved or (self.config.commit_partial and end.score > self.situation.score):
            plan = _Plan(steps, 1, solved)  # followed with no calls from the next decision on
        return _one_hot(self.situation, steps[0][1], usage, info), plan

    def close(self) -> None:
        for node in self.live:
            if node.env is not None:
                node.env.close()
                node.env = None

    def _safe_moves(self) -> list[int]:
        safe = []
        for i, cand in enumerate(self.situation.candidates):
            env = self.search.fork(self.situation)
            if not env.step_move(cand.text)[4]["lost"]:
                safe.append(i)
            env.close()
        return safe or list(range(len(self.situation.candidates)))
