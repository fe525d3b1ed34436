"""Tiny hand-built S1Env tasks with known costs, for the wrapper tests.

A :class:`GraphTask` is a finite graph: each state names its moves and where
they lead, its score, and whether it wins or loses. Every env keeps a
``played`` list of the moves stepped on *that* env (a fork starts with a fresh
list), so a test can prove a wrapper never stepped the real env.

Also here: small policies with known probabilities (:class:`TablePolicy`) that
record what they were asked, used where the real ``s1gym.policies`` would hide
the numbers a test needs to check, and the runner's loop (:func:`play`, and
:func:`play_checked`, which also proves every decision left the real env alone).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from s1gym.core import BasePolicy, Decision, S1Env, Situation, Usage

#: state -> [(move, next state), ...]; a callable lets a test build huge graphs lazily.
Transitions = Mapping[str, Sequence[tuple[str, str]]] | Callable[[str], Sequence[tuple[str, str]]]


class GraphTask(S1Env):
    """Walk a hand-built graph from ``start``; win or lose by reaching marked states."""

    task_name = "Toy"
    default_max_candidates = 16
    default_max_steps = 40

    def __init__(
        self,
        transitions: Transitions,
        *,
        start: str = "start",
        scores: Mapping[str, float] | Callable[[str], float] | None = None,
        wins: Sequence[str] | Callable[[str], bool] = ("win",),
        losses: Sequence[str] = ("lose",),
        answers: Sequence[str] = (),
        max_steps: int | None = None,
        max_candidates: int | None = None,
    ) -> None:
        """``answers``: prefixes of the answer moves (``S1Env.is_answer_move``), which planning forks do not play."""
        super().__init__(max_steps=max_steps, max_candidates=max_candidates)
        self.answers = tuple(answers)
        self.transitions = transitions
        self.start = start
        self.scores = scores or {}
        self.wins = wins
        self.losses = frozenset(losses)
        self.state = start
        self.played: list[str] = []

    # hooks
    def _new_game(self, seed, options):
        self.state = self.start
        self.played = []
        return "A tiny test world."

    def _edges(self) -> Sequence[tuple[str, str]]:
        t = self.transitions
        return t(self.state) if callable(t) else t.get(self.state, ())

    def _legal_moves(self):
        return [move for move, _ in self._edges()]

    def _play(self, move):
        self.played.append(move)
        self.state = dict(self._edges())[move]
        return f"You {move}."

    def _describe(self):
        return f"You are at {self.state}."

    def is_answer_move(self, move: str) -> bool:
        return move.startswith(self.answers) if self.answers else False

    def _progress(self):
        s = self.scores
        score = s(self.state) if callable(s) else s.get(self.state, 0.0)
        won = self.wins(self.state) if callable(self.wins) else self.state in self.wins
        return score, won, self.state in self.losses

    def _fork_into(self, clone):
        clone.played = []

    def expert_action(self) -> str:
        """The first move of a shortest winning path (breadth-first over the graph; for ``Rule``)."""
        t = self.transitions
        frontier, first = [self.state], {self.state: None}
        while frontier:
            nxt = []
            for state in frontier:
                for move, to in t(state) if callable(t) else t.get(state, ()):
                    if to in first or to in self.losses:
                        continue
                    first[to] = first[state] or move
                    won = self.wins(to) if callable(self.wins) else to in self.wins
                    if won:
                        return first[to]
                    nxt.append(to)
            frontier = nxt
        raise ValueError(f"no winning path from {self.state!r}")


def make(transitions: Transitions, **kwargs: Any) -> GraphTask:
    env = GraphTask(transitions, **kwargs)
    env.reset(seed=0)
    return env


# ---------------------------------------------------------------- tasks
#: Three one-move branches x, y, z with known (π, score): under TABLE_POLICY
#: (x .6, y .3, z .1), epsilon 0 and h_scale 10 (h = 10, 3, 0.5), the
#: priorities of the depth-1 nodes are
#:   levin g/π:                x 1.67  y 3.33  z 10      -> x, y, z
#:   phs_h (g+h)/π:            x 18.3  y 13.3  z 15      -> y, z, x
#:   phs*  (g+h)/π^(1+h/g):    x 3030  y 494   z 47.4    -> z, y, x
PRIORITY_GRAPH = {
    "start": [("x", "X"), ("y", "Y"), ("z", "Z")],
    "X": [("finish x", "win")],
    "Y": [("finish y", "win")],
    "Z": [("finish z", "win")],
}
PRIORITY_SCORES = {"X": 0.0, "Y": 0.7, "Z": 0.95}
PRIORITY_TABLE = {"x": 0.6, "y": 0.3, "z": 0.1}
#: The same branches without a win (each ends one move later in a dead end), so a search
#: expands every node and its trace shows the order.
PRIORITY_DEAD_ENDS = {
    "start": PRIORITY_GRAPH["start"],
    "X": [("wait x", "X2")],
    "Y": [("wait y", "Y2")],
    "Z": [("wait z", "Z2")],
}

#: A losing move, a self-loop, a way back, and a two-move win.
TRAP_GRAPH = {
    "start": [("jump in the pit", "lose"), ("look", "start"), ("go hall", "hall"), ("go yard", "yard")],
    "hall": [("go back", "start"), ("look", "hall"), ("open door", "win"), ("eat poison", "lose")],
    "yard": [("go back", "start"), ("look", "yard"), ("go hall", "hall")],
}


def wide_tree(branching: int = 3) -> Callable[[str], list[tuple[str, str]]]:
    """An endless tree without a goal: every state is new, so a search only stops on its budget."""

    def moves(state: str) -> list[tuple[str, str]]:
        return [(f"m{i}", f"{state}.{i}") for i in range(branching)]

    return moves


def corridor(length: int) -> dict[str, list[tuple[str, str]]]:
    """``length`` rooms in a row ("start", "r1", ...) with a way back, a wait and a side nook; the win is at the end.

    Each room has two new states to go to (forward, the nook), so a search asks the policy there.
    """
    def room(i: int) -> str:
        return f"r{i}" if i else "start"

    graph: dict[str, list[tuple[str, str]]] = {}
    for i in range(length):
        nxt = "win" if i == length - 1 else room(i + 1)
        moves = [("forward", nxt), ("wait", room(i)), ("enter nook", f"nook{i}")]
        if i > 0:
            moves.insert(0, ("back", room(i - 1)))
        graph[room(i)] = moves
        graph[f"nook{i}"] = [("leave nook", room(i))]
    return graph


def stairs(state: str) -> list[tuple[str, str]]:
    """Steps "start", "p1", "p2", "p3" to the win, each with an "aside" into an endless two-way maze.

    With STAIRS_SCORES "p2" is halfway (score 0.5): a search allowed 2 calls from "start"
    stops there without a win.
    """
    if state.startswith("n"):
        return [("wander", state + "w"), ("wander off", state + "x")]
    i = 0 if state == "start" else int(state[1:])
    return [("up", "win" if i == 3 else f"p{i + 1}"), ("aside", f"n{i}")]


STAIRS_SCORES = {"p2": 0.5, "p3": 0.5}

#: Two rooms and a waiting move, no score anywhere: a policy that likes "wait" or pacing stalls.
LOOP_GRAPH = {
    "a": [("go b", "b"), ("wait", "a"), ("push button", "c")],
    "b": [("go a", "a"), ("wait", "b")],
    "c": [("go a", "a"), ("wait", "c"), ("finish", "win")],
}


# ---------------------------------------------------------------- policies
@dataclass
class TablePolicy(BasePolicy):
    """Fixed weights by move text (missing moves get ``default``), normalised over the candidates.

    Records every situation it was asked about, so tests can check what a wrapper sent.
    """

    table: Mapping[str, float] = field(default_factory=dict)
    default: float = 1.0
    name: str = "table"
    calls: int = 0
    asked: list[Situation] = field(default_factory=list)
    batches: list[int] = field(default_factory=list)
    resets: int = 0

    def decide(self, situation: Situation) -> Decision:
        self.calls += 1
        self.asked.append(situation)
        w = np.array([self.table.get(t, self.default) for t in situation.texts], dtype=np.float64)
        w = w / w.sum() if w.sum() > 0 else np.full(len(w), 1.0 / len(w))
        return Decision.from_probabilities(w, Usage(calls=1, input_tokens=10), {"table": True})

    def decide_many(self, situations: Sequence[Situation]) -> list[Decision]:
        self.batches.append(len(situations))
        return [self.decide(s) for s in situations]

    def reset(self) -> None:
        self.resets += 1


def play(env: S1Env, policy: BasePolicy, max_moves: int = 50) -> list[Decision]:
    """Play ``env`` to the end with ``policy`` (the loop a runner does); the decisions made."""
    decisions = []
    for _ in range(max_moves):
        if env.done or not env.candidates:
            break
        situation = env.situation()
        d = policy.decide(situation)
        decisions.append(d)
        if d.give_up:
            break
        env.step_move(situation.texts[d.action])
    return decisions


def play_checked(env, policy, max_moves: int = 40) -> list[Decision]:
    """Play like the runner does, asserting after every decision that the wrapper stepped nothing real."""
    decisions = []
    for _ in range(max_moves):
        if env.done or not env.candidates:
            break
        before = (list(getattr(env, "played", [])), env.history, env.steps, env.situation().state_key)
        d = policy.decide(env.situation())
        after = (list(getattr(env, "played", [])), env.history, env.steps, env.situation().state_key)
        assert after == before, "the real env moved"
        assert math.isclose(float(d.probabilities.sum()), 1.0)
        decisions.append(d)
        if d.give_up:
            break
        env.step(d.action)
    return decisions
