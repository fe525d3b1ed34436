"""The machinery of one search (:class:`SearchRun`: pop, expand, ask, result).

A run is made from what it needs and nothing else: the options (:class:`SearchConfig`), a function that
forks a situation's env and a function that asks the inner policy about situations. It knows nothing of
the :class:`~s1gym.wrappers.Search` that made it, which keeps the plan to follow and the episode's calls
between runs. :mod:`s1gym.wrappers.search` holds the algorithm's description."""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from s1gym import registration
from s1gym.core import Decision, S1Env, Situation, Usage
from s1gym.core.lru import LRU

from ._base import favourite_groups, normalised, situation_key
from ._search_config import AUTO, PROGRESS, SearchConfig
from ._search_nodes import Node, Plan, log_priority, one_hot

__all__ = ["Answers", "Ask", "Fork", "SearchRun", "answer_key"]

#: Forks the env behind a situation (an independent env in its state).
Fork = Callable[[Situation], S1Env]
#: Asks the inner policy about situations: one decision each, in order.
Ask = Callable[[Sequence[Situation]], list[Decision]]
#: The inner policy's answers kept between an episode's searches (tree reuse), by :func:`answer_key`.
Answers = LRU[tuple[Any, ...], Decision]


def answer_key(situation: Situation) -> tuple[Any, ...]:
    """What an answer is reused for: the same state reached by the same moves and feedback, with the same
    notes (so a policy that reads the history gets exactly the answer it gave)."""
    return situation_key(situation), situation.history, situation.notes


@dataclass
class _Stats:
    expansions: int = 0
    #: inner-policy calls made (reused answers are not calls)
    policy_calls: int = 0
    #: answers taken from an earlier search of the episode (tree reuse) instead of a call
    reused: int = 0
    generated: int = 0
    duplicates: int = 0
    losing_pruned: int = 0
    dead_ends: int = 0
    noop_reasks: int = 0
    doublings: int = 0
    #: ``width``: groups of the next favourites stepped because pruning (lost, reached before) left none
    refills: int = 0


def _liking(situation: Situation, decision: Decision) -> dict[str, float]:
    """The decision's probability of each of the situation's moves, by text."""
    return dict(zip(situation.texts, np.asarray(decision.probabilities, dtype=np.float64).tolist(), strict=True))


def _task_estimate(task: str, required: bool) -> Callable[[Situation], float] | None:
    """The task's learned progress estimate, as its family declares it; a clear error when ``required``
    (``heuristic="progress"``) and the task ships none."""
    estimate = registration.progress_estimate(task)
    if estimate is None and required:
        raise ValueError(
            f"Search(heuristic='progress'): {task} ships no learned progress estimate (its family declares "
            "none; s1gym.core.estimates says how a family ships one); use the default heuristic or pass a callable"
        )
    return estimate


class SearchRun:
    """One search from one situation: the frontier, what was seen, the best node, the statistics."""

    def __init__(
        self,
        config: SearchConfig,
        fork: Fork,
        ask: Ask,
        situation: Situation,
        key: str,
        budget: int,
        cap: int | None = None,
        answers: Answers | None = None,
    ) -> None:
        """A search from ``situation`` (whose state key is ``key``) with ``budget`` inner calls, which may
        double up to ``cap`` (``config.doubling``); ``fork`` and ``ask`` are the only ways it reaches the
        env and the inner policy; ``answers`` are the answers of the episode's earlier searches, which it
        reuses and adds to (``config.reuse``)."""
        self.config = config
        self.fork = fork
        self.ask_inner = ask
        self.answers = answers if answers is not None else Answers(0)  # capacity 0 keeps nothing
        self.situation = situation
        self.notes = situation.notes
        self.budget = budget
        #: the budget may double up to this while nothing better than the root was found
        self.cap = budget if cap is None else max(budget, cap)
        #: nodes expanded but not yet asked about when the budget ran out (asked first if it grows)
        self.unasked: list[tuple[Node, list[Node]]] = []
        self._stale_log_factor = math.log1p(config.ties.novelty)
        self.t0 = time.monotonic()
        self.stats = _Stats()
        self.usages: list[Usage] = []
        self.trace: list[str] = []
        #: ``config.heuristic`` as a function (``"progress"``/``"auto"``: the task's own estimate, looked up once;
        #: ``None``: ``h_scale * (1 - score)``)
        self.heuristic = config.guidance.heuristic
        if self.heuristic in (PROGRESS, AUTO):
            self.heuristic = _task_estimate(situation.task, required=self.heuristic == PROGRESS)
        root_env = fork(situation)
        self.root = Node(root_env, 0, 0.0, self.h(root_env, situation.score), situation.score, key)
        self.seen: dict[str, int] = {key: 0}
        #: ``avoid_revisits``: how often the episode was in each state (its past states and this one)
        self.been = Counter((*situation.visited, key)) if config.ties.avoid_revisits else Counter()
        #: facts made true so far in this search, per score (BFWS's novelty partitioned by the heuristic:
        #: coming back to a room is new again once the score rose, e.g. with an ingredient in hand)
        self.atoms: dict[float, set[str]] = {}
        if config.ties.novelty:
            self.atoms[situation.score] = set(root_env.state_atoms())
        self._tie = itertools.count()
        self.heap: list[tuple[float, int, Node]] = [(-math.inf, next(self._tie), self.root)]
        self.best: Node | None = None
        #: ``stall_share``: the best partial plan per first move, and the inner policy's odds at the root
        self.best_by_first: dict[str, Node] = {}
        self.root_odds: dict[str, float] | None = None
        #: ``stall_share``: the state each move stepped from the root leads to (siblings may share one: every
        #: ``look at`` of a ScienceWorld room)
        self.root_keys: dict[str, str] = {}
        self.goal: Node | None = None
        self.inner_gave_up = False
        #: nodes whose env is live (closed when the search ends, returning engines to their pools)
        self.live: list[Node] = [self.root]
        #: calls spent when a state scoring above the root was first found (``gain_patience``)
        self.gain_at: int | None = None
        #: ``config.gain_patience`` (``"auto"``: the task's, as its family declares it)
        patience = config.limits.gain_patience
        self.gain_patience = registration.gain_patience(situation.task) if patience == AUTO else patience

    # ---------------------------------------------------------------- loop
    def run(self) -> str:
        """Search until a goal, an empty frontier or a limit; the stop reason (``"commit"``: the frontier
        popped an answer move whose outcome the planning fork kept hidden, see :class:`Node`)."""
        while (self.heap or self.unasked) and self.goal is None:
            limit = self._limit_reached()
            if limit:
                return limit
            pending, self.unasked = self.unasked, []
            out_of_calls = False
            if not pending:
                batch = self.pop_batch()
                for i, node in enumerate(batch):
                    if node.hidden:  # the likeliest plan now ends in an answer no fork can judge: commit to it
                        self.goal = node
                        return "commit"
                    if self.asks >= self.budget and self._asks_first(node):
                        for waiting in batch[i:]:  # it needs a call to be expanded: back to the frontier
                            heapq.heappush(self.heap, (self._log_priority(waiting), next(self._tie), waiting))
                        out_of_calls = True
                        break
                    children = self.expand(node)
                    if self.inner_gave_up:
                        return "inner_give_up"
                    if self.goal is not None:
                        return "won" if self.goal.won else "commit" if self.goal.hidden else "gain"
                    if len(children) == 1:  # a forced move costs no call
                        self.push(children[0])
                    elif children:
                        pending.append((node, children))
            if (pending and not self.ask(pending)) or (out_of_calls and not pending):
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
        limits = self.config.limits
        patience = self.gain_patience
        if (patience is not None and self.gain_at is not None
                and self.asks >= self.gain_at + max(1, math.ceil(patience * self.gain_at))):
            return "gain_patience"
        if limits.max_expansions is not None and self.stats.expansions >= limits.max_expansions:
            return "max_expansions"
        if limits.max_seconds is not None and time.monotonic() - self.t0 >= limits.max_seconds:
            return "time"
        return None

    def h(self, env: S1Env, score: float) -> float:
        if self.heuristic is None:
            return self.config.guidance.h_scale * (1.0 - score)
        return max(0.0, float(self.heuristic(env.situation(self.notes))))

    def _log_priority(self, node: Node) -> float:
        p = log_priority(self.config.guidance.priority, node.g, node.log_pi, node.h)
        if node.stale and not node.endorsed:
            p += self._stale_log_factor
        return p

    def push(self, node: Node) -> None:
        heapq.heappush(self.heap, (self._log_priority(node), next(self._tie), node))
        if node.hidden:  # a commitment is chosen only when the frontier pops it, never as a partial plan
            return
        if self.config.ties.stall_share > 0 and node.first is not None:
            held = self.best_by_first.get(node.first)
            if held is None or self._partial_rank(node) > self._partial_rank(held):
                self.best_by_first[node.first] = node
        if self.best is None or self._partial_rank(node) > self._partial_rank(self.best):
            self.best = node
            if node.score > self.situation.score and self.gain_at is None:
                self.gain_at = self.asks

    def _partial_rank(self, node: Node) -> tuple[float, int, float, int, float]:
        """The best partial plan's order: the highest score, then (``avoid_revisits``) the state the episode
        was in least, then the lowest h (the default h only repeats the score; a learned progress estimate
        tells apart states of equal score), then the shortest, most probable."""
        return node.score, -self.been[node.key], -node.h, -node.g, node.log_pi

    def pop_batch(self) -> list[Node]:
        """Up to ``batch_size`` nodes in priority order (skipping entries reached more cheaply since)."""
        batch: list[Node] = []
        while self.heap and len(batch) < self.config.batch_size:
            _, _, node = heapq.heappop(self.heap)
            if self.seen.get(node.key, node.g) < node.g:
                continue
            batch.append(node)
        return batch

    # -------------------------------------------------------------- expand
    def expand(self, node: Node) -> list[Node]:
        """Step every move of ``node`` on its own fork (all in one engine call where the engine allows it:
        ``S1Env.fork_steps``); the surviving children (sets ``goal`` on a win,
        or with ``until_gain`` on a new state that beats the root's score)."""
        self.stats.expansions += 1
        if self.config.trace:
            self.trace.append(" > ".join(m for _, m in node.plan()))
        if node.env is None:
            node.env = self._materialise(node)
            self.live.append(node)
        texts = self.situation.texts if node is self.root else node.env.candidates
        if self.config.ties.policy_answers:  # hidden answers are never stepped (the root commits to the policy's own)
            texts = [t for t in texts if not node.env.hides_outcome(t)]
        chunks = [texts]
        if self._asks_first(node):
            chunks = self._favourites(node, texts)
            if self.inner_gave_up or (node is self.root and self._commits_at_root(*node.asked)):
                return []
        kids: list[Node] = []
        g = node.g + 1
        for chunk in chunks:  # with ``width``: the next favourites only while none of the last survived
            for text, (env, (_obs, _r, _term, truncated, info)) in zip(chunk, node.env.fork_steps(chunk, keep=True)):
                self.stats.generated += 1
                score = float(info["score"])
                if env.outcome_hidden:  # an answer: kept as a leaf at its parent's score and h
                    kids.append(Node(None, g, node.log_pi, node.h, node.score, "", node, text, hidden=True))
                    env.close()
                    continue
                if info["won"]:
                    self.goal = Node(None, g, node.log_pi, 0.0, score, env.state_key(), node, text, won=True)
                    env.close()
                    return kids
                key = env.state_key() if not (info["lost"] or truncated or not env.candidates) else ""
                child = self._keep(node, text, env, g, score, key, info["lost"], truncated)
                env.close()  # made again from the parent when the child is expanded
                if self.goal is not None:
                    return kids
                if child is not None:
                    kids.append(child)
            if kids:
                break
            self.stats.refills += chunk is not chunks[-1]
        if len(kids) <= 1:
            node.noops = set()
        return kids

    def _keep(
        self, node: Node, text: str, env: S1Env, g: int, score: float, key: str, lost: bool, truncated: bool
    ) -> Node | None:
        """The child worth keeping, or ``None`` when it is pruned (counted in the statistics)."""
        if node is self.root and key:
            self.root_keys[text] = key
        if lost:
            self.stats.losing_pruned += 1
            return None
        if truncated or not env.candidates:
            self.stats.dead_ends += 1
            return None
        if self.config.ties.until_gain and score > self.situation.score and key not in self.seen:
            self.goal = Node(None, g, node.log_pi, 0.0, score, key, node, text)
            return None
        if self.seen.get(key, g + 1) <= g:
            self.stats.duplicates += 1
            if key == node.key:
                node.noops.add(text)
            return None
        self.seen[key] = g
        child = Node(None, g, node.log_pi, self.h(env, score), score, key, node, text)
        child.first = text if node is self.root else node.first
        if self.config.ties.novelty:
            atoms = env.state_atoms()
            seen = self.atoms.setdefault(score, set())
            child.stale = atoms <= seen
            seen |= atoms
        return child

    def _asks_first(self, node: Node) -> bool:
        """Whether ``node`` is asked about before its children are stepped (``width``: it has more moves;
        ``policy_answers``: the root, when an answer is on offer, even with one other move)."""
        width = self.config.limits.width
        if node.asked is not None:
            return False
        if (node is self.root and self.config.ties.policy_answers
                and any(self.root.env.hides_outcome(t) for t in self.situation.texts)):
            return True
        if width is None:
            return False
        if node is self.root:
            return len(self.situation.candidates) > width
        if node.env is None:
            node.env = self._materialise(node)
            self.live.append(node)
        return len(node.env.candidates) > width

    def _favourites(self, node: Node, texts: Sequence[str]) -> list[list[str]]:
        """``texts`` in groups of ``width`` by the inner policy's liking, each group in ``texts``'s order: the
        ``width`` favourites, then the next ``width``... (one call, kept on the node for ``ask``; ties go to
        the earlier move). ``expand`` steps the next group only while pruning left none of the earlier ones."""
        assert node.env is not None
        situation = node.env.situation(self.notes)
        decision = self.answer([situation])[0]
        if node is self.root and decision.give_up:
            self.inner_gave_up = True
            return []
        node.asked = (situation, decision)
        liking = _liking(situation, decision)
        if node is self.root:
            self.root_odds = liking
        ranked = favourite_groups([liking.get(t, 0.0) for t in texts], self.config.limits.width or max(len(texts), 1))
        return [[texts[i] for i in group] for group in ranked]

    def _commits_at_root(self, situation: Situation, decision: Decision) -> bool:
        """``policy_answers``: the inner policy's choice at the real state is an answer move, given at least
        ``answer_confidence``, so the search ends committing to it (the goal: a leaf whose outcome the game
        itself gives)."""
        ties = self.config.ties
        move = situation.texts[decision.action]
        if not (ties.policy_answers and self.root.env.hides_outcome(move)):
            return False
        if float(decision.probabilities[decision.action]) < ties.answer_confidence:
            return False
        root = self.root
        self.goal = Node(None, 1, root.log_pi, root.h, root.score, "", root, move, hidden=True)
        return True

    @staticmethod
    def _materialise(node: Node) -> S1Env:
        """The node's env, replayed from its parent's (which is kept while the search runs): a child of one
        move (on TWX a snapshot stepped in the JVM, as its siblings were, which its own children start from)."""
        assert node.parent is not None and node.parent.env is not None and node.move is not None
        env, _ = next(node.parent.env.fork_steps([node.move]))
        return env

    # ----------------------------------------------------------------- ask
    def ask(self, pending: list[tuple[Node, list[Node]]]) -> bool:
        """Ask the inner policy about the expanded nodes and push their children with their π.

        False when the budget did not cover every node (or the inner policy gave up at the root).
        """
        room = self.budget - self.asks
        fresh = [(node, kids) for node, kids in pending if node.asked is None]
        to_ask = fresh[:room]
        self.unasked = fresh[len(to_ask):]
        skipped = {id(node) for node, _ in self.unasked}
        asked = [(node, kids) for node, kids in pending if id(node) not in skipped]
        if asked:
            situations = [node.env.situation(self.notes) for node, _ in to_ask]
            answers = dict(zip((id(node) for node, _ in to_ask), zip(situations, self.answer(situations),
                                                                     strict=True), strict=True))
            for node, kids in asked:
                sit, d = node.asked if node.asked is not None else answers[id(node)]
                if node is self.root and d.give_up:
                    self.inner_gave_up = True
                    return False
                if node is self.root:
                    self.root_odds = _liking(sit, d)
                p = self._on_survivors(sit, d, kids)
                if p.sum() == 0 and sit.texts[d.action] in node.noops and self.asks < self.budget:
                    p = self._reask_after_noop(node, sit.texts[d.action], kids)
                node.noops = set()
                epsilon = self.config.guidance.epsilon
                p = (1.0 - epsilon) * normalised(p) + epsilon / len(kids)
                with np.errstate(divide="ignore"):
                    logs = np.log(p)
                endorsed = math.log(2.0 / len(kids))
                for child, lp in zip(kids, logs, strict=True):
                    child.log_pi = node.log_pi + float(lp)
                    child.endorsed = bool(lp >= endorsed)
                    self.push(child)
        return not self.unasked

    def _reask_after_noop(self, node: Node, noop: str, kids: list[Node]) -> np.ndarray:
        """The policy only likes a move that changes nothing here ("look around"): ask it once more in
        the state after that move, which has the same moves."""
        after = node.env.fork()
        after.step_move(noop)
        sit = after.situation(self.notes)
        d = self.answer([sit])[0]
        after.close()
        self.stats.noop_reasks += 1
        return self._on_survivors(sit, d, kids)

    @property
    def asks(self) -> int:
        """Answers this search has used, called for or reused: what ``budget`` limits."""
        return self.stats.policy_calls + self.stats.reused

    def answer(self, situations: Sequence[Situation]) -> list[Decision]:
        """The inner policy's decisions on ``situations``: reused from an earlier search of the episode
        where one answered the same situation (no call), else asked for in one ``decide_many``."""
        keys = [answer_key(s) for s in situations]
        found = [self.answers.get(k) for k in keys]
        missing = [i for i, d in enumerate(found) if d is None]
        fresh = iter(self.ask_inner([situations[i] for i in missing]) if missing else ())
        self.stats.policy_calls += len(missing)
        self.stats.reused += len(situations) - len(missing)
        out = []
        for key, d in zip(keys, found, strict=True):
            if d is None:
                d = next(fresh)
                self.usages.append(d.usage)
                self.answers.put(key, d)
            else:
                d = dataclasses.replace(d, usage=Usage())
            out.append(d)
        return out

    @staticmethod
    def _on_survivors(sit: Situation, d: Decision, kids: list[Node]) -> np.ndarray:
        """The decision's probabilities of the surviving moves, by text (not normalised)."""
        index = {t: i for i, t in enumerate(sit.texts)}
        probs = np.asarray(d.probabilities, dtype=np.float64)
        return np.array([probs[index[k.move]] if k.move in index else 0.0 for k in kids])

    # -------------------------------------------------------------- result
    def result(self, stop: str, diverged: bool) -> tuple[Decision, Plan | None]:
        """The decision (first move of the goal's or best partial plan) and the plan to follow next."""
        solved = self.goal is not None and self.goal.won
        stalled, liked_move = self._stalled_pick() if self.goal is None else (None, None)
        end = self.goal or stalled or self.best
        info: dict[str, Any] = {
            "stop_reason": stop,
            "solved": solved,
            "partial": not solved,
            "priority": self.config.guidance.priority,
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
        moves = [m for _, m in steps]
        if liked_move is not None:  # the liked move into the plan's first state
            moves[0] = liked_move
        info.update(plan=moves, plan_length=len(steps), plan_score=end.score,
                    stall_pick=stalled is not None and moves[0] != self.best.plan()[0][1])
        if end.hidden:
            info["note"] = ("the likeliest plan ends in an answer whose outcome forks do not show; playing it on "
                            "the inner policy's odds")
        elif not solved:
            info["note"] = f"search stopped ({stop}) before a win; playing the first move of the best partial plan"
        plan = None
        if solved or end.hidden or (self.config.ties.commit_partial and end.score > self.situation.score):
            plan = Plan(steps, 1, solved)  # followed with no calls from the next decision on
        return one_hot(self.situation, moves[0], usage, info), plan

    def _stalled_pick(self) -> tuple[Node | None, str | None]:
        """``stall_share``: with no plan above the real state's score, the best partial plan whose first state is
        one a move the inner policy likes leads to: a move given at least that share of its favourite's
        probability at the real state, and that liked move, which is played even where the search reached the
        state by a sibling first (ScienceWorld's ``look at X`` all lead to one state: the clock runs on) or saw it
        lead straight back to the real state (then the plan is that move alone). ``(None, None)``: the option is
        off, a plan scores, the root was not asked, or no liked move was stepped."""
        share = self.config.ties.stall_share
        odds = self.root_odds
        if share <= 0 or self.best is None or self.best.score > self.situation.score or not odds:
            return None, None
        floor = share * max(odds.values())
        liked: dict[str, str] = {}  # a state a liked move leads to -> the likeliest move leading there
        for move, key in self.root_keys.items():
            if odds.get(move, 0.0) >= floor and (key not in liked or odds[move] > odds[liked[key]]):
                liked[key] = move
        plans = [node for first, node in self.best_by_first.items() if self.root_keys.get(first) in liked]
        root = self.root
        if plans:
            pick = max(plans, key=self._partial_rank)
            key = self.root_keys[pick.first]
        elif root.key in liked:
            key = root.key
            pick = Node(None, 1, root.log_pi, root.h, root.score, key, root, liked[key], first=liked[key])
        else:
            return None, None
        return pick, liked[key]

    def close(self) -> None:
        for node in self.live:
            if node.env is not None:
                node.env.close()
                node.env = None

    def _safe_moves(self) -> list[int]:
        safe = []
        for i, cand in enumerate(self.situation.candidates):
            env = self.fork(self.situation)
            if not env.step_move(cand.text)[4]["lost"]:
                safe.append(i)
            env.close()
        return safe or list(range(len(self.situation.candidates)))
