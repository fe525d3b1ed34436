"""Rethink: notice when a policy goes round in circles, and do something about it.

Three mechanisms, all driven only by what the Situation shows (score,
``state_key``, the task's stall patience as its family declares it, :func:`s1gym.registration.stall_patience`,
unless ``patience=`` says otherwise) and by this wrapper's own memory
of the episode (so call ``reset()`` between episodes):

1. **Repeat block.** A move chosen ``repeat_limit`` (3) times in a row with no
   score change is blocked for one turn: it gets probability 0, the rest is
   renormalised, and if the inner policy had chosen it the next most likely
   move is played instead. (Candidate hygiene, e.g. 2048 dropping moves that
   change nothing, is the task's job.)
2. **Stall.** ``k`` (the patience) acts without a score change
   while revisiting a state seen before this episode is a stall (tasks
   whose patience is ``None`` never stall). On a stall the planner is asked for
   a plan of at most ``plan_words`` (60) words, which goes into
   ``Situation.notes`` for the following decisions (the newest plan replaces
   the older one). The act counter restarts after each stall.
   Without a planner, a stall instead blocks, for that one turn, every move
   already tried from the current state since the last score change (so the
   policy must try something new there), and still counts toward giving up.
3. **Give up.** A stall after ``max_plans`` (3) plans (or planner-less stalls)
   with no score change in between sets ``Decision.give_up``; the runner ends
   the episode. A score change resets the count. An inner decision that gives
   up is forwarded.

The planner is either a callable ``planner(situation) -> str`` or an object
with ``.plan(situation, prompt) -> str`` (the ``Chat`` policy has one). Every
block, stall, plan and give-up is in ``Decision.info["rethink"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from s1gym import registration
from s1gym.checks import positive_int
from s1gym.core import Decision, Policy, Situation

from ._base import Wrapper, normalised, situation_key

PLAN_PROMPT = (
    "You are playing {task} and seem to be going in circles: no progress for {acts} moves, "
    "and you are back in a state you have seen before. Recent moves: {recent}. "
    "Current situation:\n{observation}\n\n"
    "Write a short plan (at most {words} words) to make progress from here. Answer with the plan only."
)


class Rethink(Wrapper):
    """Blocks repeated moves, asks a planner on stalls, gives up on hopeless episodes."""

    kind = "rethink"
    episodic = True

    def __init__(
        self,
        policy: Policy,
        planner: Callable[[Situation], str] | Any | None = None,
        repeat_limit: int = 3,
        max_plans: int = 3,
        plan_words: int = 60,
        patience: int | None = None,
    ) -> None:
        """``patience``: acts without a score change (while revisiting a state) that make a stall on every
        task; ``None``: each task's own, as its family declares it."""
        super().__init__(policy)
        if planner is not None and not (callable(planner) or callable(getattr(planner, "plan", None))):
            raise ValueError(
                "planner must be a callable(situation) -> str or an object with .plan(situation, prompt) -> str"
            )
        self.planner = planner
        self.repeat_limit = positive_int("repeat_limit", repeat_limit)
        self.max_plans = positive_int("max_plans", max_plans)
        self.plan_words = positive_int("plan_words", plan_words)
        self.patience = None if patience is None else positive_int("patience", patience)
        self._clear()

    def options(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.planner is not None:
            out["planner"] = getattr(self.planner, "name", None) or getattr(self.planner, "__name__", "planner")
        for name, default in (("repeat_limit", 3), ("max_plans", 3), ("plan_words", 60), ("patience", None)):
            if getattr(self, name) != default:
                out[name] = getattr(self, name)
        return out

    def _clear(self) -> None:
        self._last_score: float | None = None
        self._quiet_acts = 0  # decisions since the score last changed
        self._seen: set[str] = set()
        self._tried: dict[str, set[str]] = {}  # state key -> moves chosen there since the score changed
        self._run_move: str | None = None
        self._run_length = 0
        self._plans_or_stalls = 0  # since the score last changed
        self._plan: str | None = None
        self.log: list[dict[str, Any]] = []  # every event this episode

    def reset(self) -> None:
        self._clear()
        super().reset()

    def stall_patience(self, task: str) -> int | None:
        """The patience on ``task``: this wrapper's own, else the task's as its family declares it."""
        return self.patience if self.patience is not None else registration.stall_patience(task)

    # ------------------------------------------------------------- decide
    def decide(self, situation: Situation) -> Decision:
        events: dict[str, Any] = {}
        key = situation_key(situation)
        if self._last_score is None or situation.score != self._last_score:
            if self._last_score is not None:
                self._quiet_acts, self._plans_or_stalls = 0, 0
                self._tried.clear()
                self._run_move, self._run_length = None, 0
            self._last_score = situation.score
        else:
            self._quiet_acts += 1
        revisit = key in self._seen
        self._seen.add(key)

        blocked: set[str] = set()
        if self._run_move is not None and self._run_length >= self.repeat_limit:
            blocked.add(self._run_move)
            events["blocked_repeat"] = self._run_move

        k = self.stall_patience(situation.task)
        if k is not None and self._quiet_acts >= k and revisit:
            self._quiet_acts = 0
            events["stall"] = True
            if self._plans_or_stalls >= self.max_plans:
                events["give_up"] = True
            else:
                self._plans_or_stalls += 1
                if self.planner is None:
                    tried = self._tried.get(key, set())
                    blocked |= tried
                    events["blocked_tried"] = sorted(tried)
                else:
                    self._plan = self._ask_planner(situation, events)
                    events["plan"] = self._plan

        inner_sit = situation
        if self._plan:
            inner_sit = situation.with_notes((*situation.notes, f"Plan: {self._plan}"))
        d = self.policy.decide(inner_sit)
        p, action, applied = self._apply_blocks(situation, d, blocked)
        if applied:
            events["blocked"] = applied
        move = situation.texts[action]
        self._tried.setdefault(key, set()).add(move)
        if move == self._run_move:
            self._run_length += 1
        else:
            self._run_move, self._run_length = move, 1
        if events:
            self.log.append({"step": len(situation.history), **events})
        info = {**d.info, "rethink": {**events, "plans": self._plans_or_stalls, "quiet_acts": self._quiet_acts}}
        return Decision(
            p, action, d.usage, info, give_up=d.give_up or bool(events.get("give_up")), planning_s=d.planning_s
        )

    def _apply_blocks(
        self, situation: Situation, d: Decision, blocked: set[str]
    ) -> tuple[np.ndarray, int, list[str]]:
        """Zero the blocked moves, renormalise, keep the inner choice unless it is blocked."""
        texts = situation.texts
        mask = np.array([t in blocked for t in texts])
        if not mask.any() or mask.all():  # nothing to block, or blocking would leave no move
            return d.probabilities, d.action, []
        p = np.where(mask, 0.0, d.probabilities)
        p = normalised(p) if p.sum() > 0 else normalised(~mask)
        action = d.action if not mask[d.action] else int(np.argmax(p))
        return p, action, [t for t, m in zip(texts, mask, strict=True) if m]

    def _ask_planner(self, situation: Situation, events: dict[str, Any]) -> str | None:
        recent = ", ".join(m for m, _ in situation.history[-8:]) or "none"
        prompt = PLAN_PROMPT.format(
            task=situation.task,
            acts=self.stall_patience(situation.task),
            recent=recent,
            observation=situation.observation,
            words=self.plan_words,
        )
        try:
            if callable(getattr(self.planner, "plan", None)):
                text = self.planner.plan(situation, prompt)
            else:
                text = self.planner(situation)
        except Exception as exc:  # a planner outage must not end the episode; it is logged
            events["planner_error"] = f"{type(exc).__name__}: {exc}"
            return self._plan
        words = str(text).split()
        if len(words) > self.plan_words:
            events["plan_truncated"] = len(words)
        return " ".join(words[: self.plan_words]) or None

    def decide_many(self, situations: Sequence[Situation]) -> list[Decision]:
        """In order: Rethink keeps one episode's memory, so situations are taken as consecutive turns."""
        return [self.decide(s) for s in situations]
