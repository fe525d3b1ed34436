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
levin trusts the policy, phs* trusts the score most.

The default is ``phs_h``, from the CookingWorld benchmark (bench/search_cooking.py,
docs/benchmarks.md: 30 test-fold games, 100 calls a search, 1000 a game, the
other defaults as they are). phs_h and levin solved the most with both inner
policies -- ``Uniform`` 26/30 each against 21/30 for phs*, ``Local`` 30/30
each -- and phs_h needed fewer calls with ``Local`` (median 302 on large games
against 368 for levin). phs* is the greediest: its exponent 1 + h/g makes an
unlikely first move (a policy that puts 0.1 % on walking back to the room with
the barbecue) cost more than ten likely moves deep into a side room, so with a
confident model it can miss a two-move gain for hundreds of calls; with flat
odds it searches like A* on g + h (π = b^-g, so log phs* is about
(g + h) log b), which made it the best choice for one 1000-call search
(before the receding horizon) and still the fastest when it does solve.

Pruning, all free because each child is stepped on its own fork when its parent
is expanded (before the policy is asked about the parent):

- a child whose move loses the game is dropped;
- a child whose state (the task's ``state_key``) was already reached by a plan
  no longer than its own is dropped (so "look", "inventory" and walking in
  circles cost nothing); a stale heap entry reached again more cheaply is
  skipped when popped. Two different states share a key only when the task's
  ``state_key`` leaves part of the state out; the default key is the full
  description plus the candidates, and tasks with hidden state (RNG, step
  counters that matter) override it. The step counter is deliberately not
  part of any key, so two plans of different lengths to one state merge;
- a child that truncates (the step limit) or has no moves left is dropped.

A child's env is dropped after this check and replayed from its parent's when
the child is expanded, so a search keeps one live env per expanded node, not
one per frontier node (a TWX env holds a JVM game object).

The policy is then asked about the parent as the task shows it (all its
candidates, so a policy such as ``Rule`` that names a pruned move still works),
and its probabilities are renormalised over the surviving moves (flat odds if
it gave them no mass). One exception: when all its mass is on a move that
leads straight back to the same state (TWX's gold paths start with "look
around"), it is asked once more in the state after that move (same moves, one
more call, counted in the budget), so ``Search(Rule())`` follows the gold path.
A parent with a single surviving move costs no call. A
winning child ends the search at once (goal test at generation), so the last
move of a plan never costs a call.

Budget: ``budget`` inner-policy calls (one per situation asked; exactly
respected), optionally ``max_expansions`` and ``max_seconds``. A search that
runs out plays the first move of its best partial plan (highest score, then
shortest, then most probable) and says so (``stop_reason``, ``partial``).
When that plan raises the score (``commit_partial``, on by default), later
``decide`` calls follow it to its end with no calls, as they would a winning
plan, and then search again from there: with a budget smaller than the
episode's allowance this is a receding-horizon search that banks each gain
instead of re-finding it (on CookingWorld, 100 calls a search within 1000 a
game solved far more games than one 1000-call search; docs/benchmarks.md).
``until_gain=True`` goes further: each search stops at the first state whose
score beats the current one (a goal test at generation, like the win) and
commits to it -- enforced hill-climbing (Hoffmann & Nebel 2001) on the score.
On CookingWorld it won as many games with a fifth of the calls (``Local``
30/30, median 59 calls on large games; ``Uniform`` 27/30); it is not the
default because on a task whose score can rise into a dead end, committing to
the first gain is a gamble a search for the win does not take.

``episode_budget`` caps the calls of a whole episode (all its searches;
``reset()`` starts a new count): each search gets at most what is left, and
once it is spent with no plan to follow, the decision says ``give_up`` (the
runner ends the episode there, unsolved). ``Search(policy, budget=100,
episode_budget=1000)`` is the CookingWorld benchmark's protocol.

``batch_size`` > 1 pops that many nodes at once and asks the policy about them
in one ``decide_many`` (Jev/Chat run them concurrently); the nodes are still
taken in priority order, but children of the first are only pushed after the
whole batch, so the expansion order can differ slightly from batch_size 1.

Once a winning plan is found, later ``decide`` calls follow it with no policy
calls while the real situation's state key matches the plan's; on divergence
(e.g. a random event) it searches again (``info["diverged"]``). ``reset()``
forgets the plan.
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from s1gym.core import Decision, Policy, S1Env, Situation, Usage

from ._base import Wrapper, normalised, situation_key, step_text

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


class Search(Wrapper):
    """Best-first search over plans guided by ``policy``; see the module docstring.

    ``decide_many`` (inherited) decides situations one after another: each search
    already batches its own inner calls through the inner policy's ``decide_many``.
    """

    kind = "search"

    def __init__(
        self,
        policy: Policy,
        budget: int = 1000,
        priority: str = DEFAULT_PRIORITY,
        epsilon: float = 0.1,
        h_scale: float = 10.0,
        heuristic: Callable[[Situation], float] | None = None,
        max_expansions: int | None = None,
        max_seconds: float | None = None,
        batch_size: int = 1,
        trace: bool = False,
        allow_oracle: bool = False,
        commit_partial: bool = True,
        until_gain: bool = False,
        episode_budget: int | None = None,
    ) -> None:
        super().__init__(policy, allow_oracle)
        if priority not in PRIORITIES:
            raise ValueError(f"unknown search priority {priority!r}; use one of {', '.join(PRIORITIES)}")
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise ValueError(f"budget (inner-policy calls per search) must be a positive integer, got {budget!r}")
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon (share of flat odds mixed into the policy) must be in [0, 1], got {epsilon}")
        if h_scale < 0:
            raise ValueError(f"h_scale must be >= 0, got {h_scale}")
        if heuristic is not None and not callable(heuristic):
            raise ValueError("heuristic must be a callable(situation) -> float, or None for h_scale * (1 - score)")
        if max_expansions is not None and max_expansions < 1:
            raise ValueError(f"max_expansions must be >= 1 or None, got {max_expansions}")
        if max_seconds is not None and max_seconds <= 0:
            raise ValueError(f"max_seconds must be > 0 or None, got {max_seconds}")
        if episode_budget is not None and (isinstance(episode_budget, bool) or not isinstance(episode_budget, int)
                                           or episode_budget < 1):
            raise ValueError(f"episode_budget (inner-policy calls per episode) must be a positive integer or None, "
                             f"got {episode_budget!r}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.budget = budget
        self.priority = priority
        self.epsilon = float(epsilon)
        self.h_scale = float(h_scale)
        self.heuristic = heuristic
        self.max_expansions = max_expansions
        self.max_seconds = max_seconds
        self.batch_size = batch_size
        self.trace = trace
        self.commit_partial = bool(commit_partial)
        self.until_gain = bool(until_gain)
        self.episode_budget = episode_budget
        #: Inner-policy calls spent in this episode (``reset()`` zeroes it).
        self.episode_calls = 0
        self._plan: list[tuple[str, str]] | None = None
        self._plan_pos = 0
        self._plan_solves = False

    def reset(self) -> None:
        self._plan, self._plan_pos, self._plan_solves = None, 0, False
        self.episode_calls = 0
        super().reset()

    # ------------------------------------------------------------- decide
    def decide(self, situation: Situation) -> Decision:
        if not situation.candidates:
            raise ValueError(f"{self.name}: the situation has no candidate moves (is the game over?)")
        key = situation_key(situation)
        diverged = False
        if self._plan is not None:
            followed = self._follow(situation, key)
            if followed is not None:
                return followed
            # A partial plan played to its end is done, not diverged.
            diverged = self._plan_pos < len(self._plan)
            self._plan, self._plan_pos = None, 0
        budget = self.budget
        if self.episode_budget is not None:
            budget = min(budget, self.episode_budget - self.episode_calls)
            if budget <= 0:
                return self._give_up(situation)
        decision = self._search(situation, key, diverged, budget)
        self.episode_calls += decision.info["policy_calls"]
        return decision

    def _give_up(self, situation: Situation) -> Decision:
        """The episode's calls are spent and no plan is left: end it (the runner honours ``give_up``)."""
        n = len(situation.candidates)
        info = {
            "stop_reason": "episode_budget",
            "give_up": True,
            "solved": False,
            "partial": True,
            "plan": [],
            "plan_length": 0,
            "expansions": 0,
            "policy_calls": 0,
            "note": f"the episode's {self.episode_budget} inner-policy calls are spent without a winning plan",
        }
        return Decision(np.full(n, 1.0 / n), 0, Usage(), info)

    def _follow(self, situation: Situation, key: str) -> Decision | None:
        assert self._plan is not None
        pos = self._plan_pos
        if pos >= len(self._plan):
            return None
        want_key, move = self._plan[pos]
        if want_key != key or move not in situation.texts:
            return None
        self._plan_pos += 1
        remaining = [m for _, m in self._plan[pos:]]
        info = {
            "stop_reason": "following_plan",
            "plan": remaining,
            "plan_length": len(remaining),
            "plan_step": pos,
            "expansions": 0,
            "policy_calls": 0,
            "solved": self._plan_solves,
            "partial": not self._plan_solves,
        }
        return self._one_hot(situation, move, Usage(), info)

    # ------------------------------------------------------------- search
    def _h(self, env: S1Env, score: float, notes: tuple[str, ...]) -> float:
        if self.heuristic is None:
            return self.h_scale * (1.0 - score)
        return max(0.0, float(self.heuristic(env.situation(notes))))

    def _search(self, situation: Situation, key: str, diverged: bool, budget: int) -> Decision:
        t0 = time.monotonic()
        stats = _Stats()
        usages: list[Usage] = []
        trace: list[str] = []
        notes = situation.notes
        root_env = self.fork(situation)
        root = _Node(root_env, 0, 0.0, self._h(root_env, situation.score, notes), situation.score, key)
        seen: dict[str, int] = {key: 0}
        tie = itertools.count()
        heap: list[tuple[float, int, _Node]] = [(-math.inf, next(tie), root)]
        best: _Node | None = None
        goal: _Node | None = None
        stop = "exhausted"

        def better(node: _Node) -> bool:
            return best is None or (node.score, -node.g, node.log_pi) > (best.score, -best.g, best.log_pi)

        def push(node: _Node) -> None:
            nonlocal best
            heapq.heappush(heap, (log_priority(self.priority, node.g, node.log_pi, node.h), next(tie), node))
            if better(node):
                best = node

        while heap and goal is None:
            if self.max_expansions is not None and stats.expansions >= self.max_expansions:
                stop = "max_expansions"
                break
            if self.max_seconds is not None and time.monotonic() - t0 >= self.max_seconds:
                stop = "time"
                break
            batch: list[_Node] = []
            while heap and len(batch) < self.batch_size:
                _, _, node = heapq.heappop(heap)
                if seen.get(node.key, node.g) < node.g:  # reached more cheaply since it was pushed
                    continue
                batch.append(node)
            pending: list[tuple[_Node, list[tuple[str, _Node]]]] = []
            for node in batch:
                stats.expansions += 1
                if self.trace:
                    trace.append(" > ".join(m for _, m in node.plan()))
                if node.env is None:
                    node.env = self._materialise(node)
                texts = situation.texts if node is root else node.env.candidates
                children, goal = self._children(node, texts, seen, stats, notes, situation.score)
                if goal is not None:
                    stop = "won" if goal.won else "gain"
                    break
                if len(children) <= 1:
                    node.noops = set()
                if len(children) == 1:  # a forced move costs no call
                    push(children[0][1])
                elif children:
                    pending.append((node, children))
            if goal is not None or not pending:
                continue
            room = budget - stats.policy_calls
            asked = pending[:room]
            if asked:
                sits = [n.env.situation(notes) for n, _ in asked]
                decisions = self._inner_many(sits)
                stats.policy_calls += len(asked)
                for (node, kids), sit, d in zip(asked, sits, decisions, strict=True):
                    usages.append(d.usage)
                    p = self._on_survivors(sit, d, kids)
                    noop = sit.texts[d.action]
                    if p.sum() == 0 and noop in node.noops and stats.policy_calls < budget:
                        # The policy only likes a move that changes nothing here ("look around"):
                        # ask it once more in the state after that move, which has the same moves.
                        after = node.env.fork()
                        step_text(after, noop)
                        sit2 = after.situation(notes)
                        d2 = self._inner_many([sit2])[0]
                        stats.policy_calls += 1
                        stats.noop_reasks += 1
                        usages.append(d2.usage)
                        p = self._on_survivors(sit2, d2, kids)
                    node.noops = set()
                    p = (1.0 - self.epsilon) * normalised(p) + self.epsilon / len(kids)
                    with np.errstate(divide="ignore"):
                        logs = np.log(p)
                    for (_, child), lp in zip(kids, logs, strict=True):
                        child.log_pi = node.log_pi + float(lp)
                        push(child)
            if len(asked) < len(pending):
                stop = "budget"
                break

        solved = goal is not None and goal.won
        end = goal or best
        elapsed = time.monotonic() - t0
        info: dict[str, Any] = {
            "stop_reason": stop,
            "solved": solved,
            "partial": not solved,
            "priority": self.priority,
            "expansions": stats.expansions,
            "policy_calls": stats.policy_calls,
            "generated": stats.generated,
            "duplicates": stats.duplicates,
            "losing_pruned": stats.losing_pruned,
            "dead_ends": stats.dead_ends,
            "noop_reasks": stats.noop_reasks,
            "elapsed_s": elapsed,
            "diverged": diverged,
        }
        if self.trace:
            info["trace"] = trace
        usage = Usage.total(usages)
        if end is None:
            # Nothing but losing moves, dead ends or the root's own state: no plan to offer.
            safe = self._safe_moves(situation)
            info.update(plan=[], plan_length=0, note="no move leads anywhere new; chose the first safe move")
            p = np.zeros(len(situation.candidates))
            p[safe] = 1.0 / len(safe)
            return Decision(p, safe[0], usage, info)
        steps = end.plan()
        info.update(plan=[m for _, m in steps], plan_length=len(steps), plan_score=end.score)
        if not solved:
            info["note"] = f"search stopped ({stop}) before a win; playing the first move of the best partial plan"
        if solved or (self.commit_partial and end.score > situation.score):
            # A winning plan, or a partial one that raises the score, is followed with no calls.
            self._plan, self._plan_pos, self._plan_solves = steps, 1, solved
        return self._one_hot(situation, steps[0][1], usage, info)

    def _children(
        self,
        node: _Node,
        texts: tuple[str, ...],
        seen: dict[str, int],
        stats: _Stats,
        notes: tuple[str, ...],
        root_score: float,
    ) -> tuple[list[tuple[str, _Node]], _Node | None]:
        """Step every move on its own fork; the surviving children, or a winning one (or, with
        ``until_gain``, one that raises the score above the root's)."""
        assert node.env is not None
        kids: list[tuple[str, _Node]] = []
        g = node.g + 1
        for text in texts:
            env = node.env.fork()
            _obs, _r, _term, truncated, info = step_text(env, text)
            stats.generated += 1
            score = float(info["score"])
            if info["won"]:
                return kids, _Node(None, g, node.log_pi, 0.0, score, env.state_key(), node, text, won=True)
            if info["lost"]:
                stats.losing_pruned += 1
                continue
            if truncated or not info["candidates"]:
                stats.dead_ends += 1
                continue
            key = env.state_key()
            if self.until_gain and score > root_score and key not in seen:
                return kids, _Node(None, g, node.log_pi, 0.0, score, key, node, text)
            if seen.get(key, g + 1) <= g:
                stats.duplicates += 1
                if key == node.key:
                    node.noops.add(text)
                continue
            seen[key] = g
            # The child's env is dropped here (engines such as TWX hold a game object per stepped env)
            # and made again from its parent when the child is expanded: one more fork and step per
            # expansion instead of one live env per frontier node.
            kids.append((text, _Node(None, g, node.log_pi, self._h(env, score, notes), score, key, node, text)))
        return kids, None

    @staticmethod
    def _materialise(node: _Node) -> S1Env:
        """The node's env, replayed from its parent's (which is kept while the search runs)."""
        assert node.parent is not None and node.parent.env is not None and node.move is not None
        env = node.parent.env.fork()
        step_text(env, node.move)
        return env

    def _safe_moves(self, situation: Situation) -> list[int]:
        safe = []
        for i, cand in enumerate(situation.candidates):
            env = self.fork(situation)
            if not step_text(env, cand.text)[4]["lost"]:
                safe.append(i)
        return safe or list(range(len(situation.candidates)))

    @staticmethod
    def _on_survivors(sit: Situation, d: Decision, kids: list[tuple[str, _Node]]) -> np.ndarray:
        """The decision's probabilities of the surviving moves, by text (not normalised)."""
        index = {t: i for i, t in enumerate(sit.texts)}
        probs = np.asarray(d.probabilities, dtype=np.float64)
        return np.array([probs[index[t]] if t in index else 0.0 for t, _ in kids])

    @staticmethod
    def _one_hot(situation: Situation, move: str, usage: Usage, info: dict[str, Any]) -> Decision:
        action = situation.texts.index(move)
        p = np.zeros(len(situation.candidates))
        p[action] = 1.0
        return Decision(p, action, usage, info)
