"""The pieces a search is made of: its nodes (:class:`Node`), their priority (:func:`log_priority`) and
the plan Search follows afterwards (:class:`Plan`). :mod:`s1gym.wrappers._search_run` runs one search
with them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from s1gym.core import Decision, S1Env, Situation, Usage

__all__ = ["Node", "Plan", "log_priority", "one_hot"]


def log_priority(priority: str, g: int, log_pi: float, h: float) -> float:
    """log of the node's priority (smaller is expanded first); ``g`` >= 1."""
    if log_pi == -math.inf:
        return math.inf
    if priority == "levin":
        return math.log(g) - log_pi
    if priority == "phs_h":
        return math.log(g + h) - log_pi
    return math.log(g + h) - (1.0 + h / g) * log_pi


def one_hot(
    situation: Situation, move: str, usage: Usage, info: dict[str, Any], give_up: bool = False
) -> Decision:
    """A decision for ``move`` with all the probability on it (a plan's move is certain)."""
    action = situation.texts.index(move)
    p = np.zeros(len(situation.candidates))
    p[action] = 1.0
    return Decision(p, action, usage, info, give_up)


@dataclass
class Plan:
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
            "reused": 0,
            "solved": self.solves,
            "partial": not self.solves,
        }
        self.pos += 1
        return one_hot(situation, move, Usage(), info)


@dataclass(eq=False)
class Node:
    """A plan from the search's root: its length ``g``, log π, ``h``, score and state key; ``parent`` and
    ``move`` link it to the node it extends."""

    #: the env in this node's state: kept for expanded nodes (their children are made from it),
    #: ``None`` for frontier nodes until they are expanded
    env: S1Env | None
    g: int
    log_pi: float
    h: float
    score: float
    key: str
    parent: Node | None = None
    move: str | None = None
    #: moves from this node that lead straight back to it (only while it is expanded)
    noops: set[str] = field(default_factory=set)
    won: bool = False
    #: the move is an answer whose outcome the planning fork kept hidden (``S1Env.outcome_hidden``): a leaf
    #: that is never expanded; popped from the frontier, it ends the search with a plan that commits to it
    hidden: bool = False
    #: made no fact true that no earlier node of the search made true (novelty's width 2)
    stale: bool = False
    #: the inner policy gave this move at least twice its flat share (novelty never overrules that)
    endorsed: bool = True
    #: the node's situation and the inner policy's answer, when it was asked before its children were
    #: stepped (``width``); ``ask`` takes that answer instead of asking again
    asked: tuple[Situation, Decision] | None = None
    #: the plan's first move (``None`` at the root)
    first: str | None = None

    def plan(self) -> list[tuple[str, str]]:
        """``(state key before, move)`` pairs from the root to this node."""
        steps = []
        node = self
        while node.parent is not None:
            steps.append((node.parent.key, node.move))
            node = node.parent
        return steps[::-1]
