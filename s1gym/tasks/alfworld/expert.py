"""ALFWorld's experts (privileged: ``expert_action()`` and the ``Rule`` baseline only).

- ``handcoded``: alfworld's ``HandCodedTWAgent``, which reads the game's facts.
  It keeps a memory of the episode, so it is *tracked*: told every move and
  observation as they happen (:class:`HandcodedTracker`), its random draws kept
  apart from the global RNG so the same game gives the same moves, and copied
  with the env on ``fork()``.
- ``planner``: Fast Downward's plan from the current PDDL state (seconds to
  minutes on the largest games), made once and followed while the game follows
  it (PDDL actions are deterministic).

What the engine's expert names may be a move the env does not offer (``look``
and ``examine`` under ``hygiene``); :func:`candidate_action` turns it into the
candidate the expert goes on to, which is what ``env.expert_action()`` returns.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from s1gym.tasks.alfworld.env import ALFWorldEnv
from s1gym.errors import S1GymError

__all__ = ["HIDDEN_MOVES_MAX", "ALFWorldExpertView", "ExpertLost", "HandcodedTracker", "candidate_action",
           "planner_action", "put_wording"]

#: The planner's plan from the state after ``moves``: (moves, plan).
PlanCache = tuple[tuple[str, ...], tuple[str, ...]]

#: Hidden (hygiene-dropped) moves the expert may ask for in a row before it counts as lost.
HIDDEN_MOVES_MAX = 8


class ExpertLost(S1GymError, RuntimeError):
    """The expert names no candidate here: the game is over, or it keeps asking for moves the env does not
    offer (a handcoded expert that lost track of the game says ``look`` on every move)."""


class HandcodedTracker:
    """alfworld's handcoded expert, told every move; ``next`` is its next move ("look" when it is lost)."""

    def __init__(self, gamefile: str, intro: str, game_index: int) -> None:
        from alfworld.agents.expert import HandCodedTWAgent

        self.agent = HandCodedTWAgent(max_steps=200)
        self.agent.reset(gamefile)
        self.agent.observe(intro)
        self.next = "look"
        self.rng = random.Random(game_index).getstate()
        #: why the expert fell back to "look", by reason (diagnostics for bench/alfworld.py --experts-all);
        #: replaced, never mutated, so forks may share it
        self.notes: dict[str, int] = {}

    def observe(self, state: Any, move: str) -> None:
        """Tell the expert the move just played and the state it led to."""
        from alfworld.agents.expert import HandCodedAgentTimeout

        saved = random.getstate()
        random.setstate(self.rng)
        note = ""
        try:
            nxt = self.agent.act(state, 0, state["won"], put_wording(move))
            self.next = nxt if nxt in state["admissible_commands"] else "look"
            note = "" if nxt == self.next else "inadmissible"
        except HandCodedAgentTimeout:
            self.next, note = "look", "timeout"
        except Exception as exc:  # noqa: BLE001 - alfworld's expert raises HandCodedAgentFailed and plain errors when lost
            self.next, note = "look", type(exc).__name__
        finally:
            self.rng = random.getstate()
            random.setstate(saved)
        if note:
            self.notes = {**self.notes, note: self.notes.get(note, 0) + 1}


def put_wording(move: str) -> str:
    """``move X to Y`` in the wording alfworld's expert tracks (``put X in/on Y``); other moves unchanged.

    alfworld 0.4.2's engine names putting down ``move X to Y`` and its handcoded expert plays it so, but the
    expert's bookkeeping still looks for ``put`` in the last move: told ``move``, it goes on believing it
    holds what it put down, and on pick_two_obj_and_place (or after putting back a wrong object) it wanders
    until the step limit. Told the wording it parses, it plays on as designed (docs/benchmarks.md has the
    expert's results before and after).
    """
    if move.startswith("move ") and " to " in move:
        thing, place = move[len("move "):].split(" to ", 1)
        return f"put {thing} in/on {place}"
    return move


@dataclass(frozen=True)
class ALFWorldExpertView:
    """What the experts read beyond an env's public state (``env.expert_view()``; privileged)."""

    #: the handcoded expert, told every move (``expert="handcoded"``)
    tracker: HandcodedTracker | None
    #: the planner's plan from the state after some moves (``expert="planner"``)
    plan: PlanCache | None


def planner_action(env: ALFWorldEnv) -> tuple[str, PlanCache]:
    """The next move of Fast Downward's plan from ``env``'s state (planned once while followed), and the
    plan for the env to keep."""
    moves = env.game_state.moves
    cached = env.expert_view().plan
    if cached is None or cached[0] != moves:
        engine = env.engine()
        plan = engine.replan()
        cached = (moves, tuple(plan) or ("look",))
    return cached[1][0], cached


def candidate_action(env: ALFWorldEnv) -> tuple[str, HandcodedTracker | None]:
    """The engine expert's move turned into a candidate of ``env`` where it can be, and the expert state for
    the env to adopt (``None``: keep its own).

    The handcoded expert asks for ``look`` / ``examine`` now and then, which
    hygiene keeps off the candidates. Those moves only inform the player, so
    they are played on a fork that shows every move, and the expert state
    after them (what it learned) is adopted, until it names a move on offer
    (at most :data:`HIDDEN_MOVES_MAX` of them). The move returned is not a
    candidate when the expert stays lost, or with the planner when its plan
    names a hidden move: the caller says so.
    """
    move = env.engine_expert_action()
    if not env.hygiene or env.expert != "handcoded" or move in env.candidates:
        return move, None
    probe = env.fork_showing_every_move()
    try:
        for _ in range(HIDDEN_MOVES_MAX):
            if probe.game_over or move not in probe.candidates:
                break
            probe.step_move(move)
            tracker = probe.expert_view().tracker
            move = tracker.next
            if move in env.candidates:
                return move, tracker
    finally:
        probe.close()
    return move, None
