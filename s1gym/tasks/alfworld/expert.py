"""ALFWorld's experts (privileged: ``expert_action()`` and the ``Rule`` baseline only).

- ``handcoded``: alfworld's ``HandCodedTWAgent``, which reads the game's facts.
  It keeps a memory of the episode, so it is *tracked*: told every move and
  observation as they happen (:class:`HandcodedTracker`), its random draws kept
  apart from the global RNG so the same game gives the same moves, and copied
  with the env on ``fork()``.
- ``planner``: Fast Downward's plan from the current PDDL state (seconds to
  minutes on the largest games), made once and followed while the game follows
  it (PDDL actions are deterministic).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from s1gym.tasks.alfworld.env import ALFWorldEnv

__all__ = ["HIDDEN_MOVES_MAX", "ALFWorldExpertView", "HandcodedTracker", "planner_action", "put_wording",
           "rule_action"]

#: The planner's plan from the state after ``moves``: (moves, plan).
PlanCache = tuple[tuple[str, ...], tuple[str, ...]]

#: Hidden (hygiene-dropped) moves the expert may ask for in a row before Rule gives up on it.
HIDDEN_MOVES_MAX = 8


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


def rule_action(env: ALFWorldEnv) -> tuple[str, HandcodedTracker | None]:
    """The expert's move, also under ``hygiene``, and the expert state for the env to adopt (``None``:
    keep its own).

    The handcoded expert asks for ``look`` / ``examine`` now and then, which
    hygiene keeps off the candidates. Those moves only inform the player, so
    they are played on a fork that shows every move, and the expert state
    after them (what it learned) is adopted, until it names a move on offer.
    """
    move = env.expert_action()
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
