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
with ``.plan(situation, prompt) -> str`` (the ``Chat`` policy has one), or a
fork planner that needs no network: ``planner="search"`` (or a
:class:`~s1gym.wrappers.rethink_planner.ForkPlanner`), a bounded search over
forks from the stalled state, guided by the inner policy, to the first score
gain (``plan_budget`` inner calls at most, counted in that decision's usage).
Rethink then **follows** its moves, one a turn and with no inner call, while
the next one is a candidate and the score is the one the plan's fork had there
(``info["rethink"]["following"]``); otherwise it drops the plan
(``"plan_dropped"``). The moves also go into the notes as the plan's text. A
search that finds no gain gives no plan, and the stall is handled as without a
planner. With a fork planner, "a score change" above means a score above the
episode's best so far (``progress="best"``; ``progress="change"`` keeps any
change), and the planner looks for a state above that best. Every block, stall,
plan and give-up is in ``Decision.info["rethink"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from s1gym import registration
from s1gym.checks import positive_int
from s1gym.core import Decision, Policy, Situation, Usage

from ._base import Wrapper, WrapperOrderError, inner_wrappers, normalised, situation_key
from ._search_nodes import one_hot
from .rethink_planner import PLANNERS, ForkPlan, ForkPlanner

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
        plan_budget: int | None = None,
        progress: str | None = None,
        plan_width: int | None = None,
        allow_oracle: bool = False,
    ) -> None:
        """``patience``: acts without a score change (while revisiting a state) that make a stall on every
        task; ``None``: each task's own, as its family declares it. ``planner="search"`` (or a
        :class:`ForkPlanner`): the offline fork planner, ``plan_budget`` inner calls a plan (default 50),
        ``plan_width`` the moves its search steps a node (default every move; ``k``: the inner policy's ``k``
        favourites, for states of hundreds of moves).
        ``progress``: what resets the stall and give-up counts: ``"change"``, any score change (the default
        without a fork planner), or ``"best"``, only a score above the episode's best so far (the default with
        one: a score that goes up and down, a thing put in place and taken out again, is a loop, and the fork
        planner then looks for a state above that best). ``allow_oracle``: the fork planner steps answers too (see
        :func:`~s1gym.wrappers._base.fork_of`)."""
        super().__init__(policy, allow_oracle)
        if isinstance(planner, str):
            try:
                planner = PLANNERS.make(planner, **({} if plan_budget is None else {"budget": plan_budget}),
                                        **({} if plan_width is None else {"width": plan_width}))
            except ValueError as exc:
                raise ValueError(
                    "planner must be a callable(situation) -> str or an object with .plan(situation, prompt) -> str, "
                    f"or the name of an offline planner: {exc}"
                ) from None
        else:
            for option, value, field in (("plan_budget", plan_budget, "budget"), ("plan_width", plan_width, "width")):
                if value is None:
                    continue
                if not isinstance(planner, ForkPlanner):
                    raise ValueError(
                        f"{option} is the fork planner's {field}: give it with planner='search' "
                        f"(or ForkPlanner({field}=...)), not with a text planner or none"
                    )
                if value != getattr(planner, field):
                    raise ValueError(f"{option}={value} disagrees with the planner's {field}={getattr(planner, field)}")
        if planner is not None and not (
            isinstance(planner, ForkPlanner) or callable(planner) or callable(getattr(planner, "plan", None))
        ):
            raise ValueError(
                "planner must be a callable(situation) -> str or an object with .plan(situation, prompt) -> str, "
                "or 'search' (the offline fork planner)"
            )
        if isinstance(planner, ForkPlanner):
            for inner in inner_wrappers(self):
                if inner.episodic:
                    raise WrapperOrderError(
                        f"Rethink's fork planner asks its inner policy about states the game never reaches, which "
                        f"would corrupt {type(inner).__name__}'s memory of the real episode; put "
                        f"{type(inner).__name__} outside or use a text planner"
                    )
        self.planner = planner
        if progress is None:
            progress = "best" if isinstance(planner, ForkPlanner) else "change"
        if progress not in ("change", "best"):
            raise ValueError(f"progress must be 'change' (any score change) or 'best' (a new best score), got {progress!r}")
        self.progress = progress
        self.repeat_limit = positive_int("repeat_limit", repeat_limit)
        self.max_plans = positive_int("max_plans", max_plans)
        self.plan_words = positive_int("plan_words", plan_words)
        self.patience = None if patience is None else positive_int("patience", patience)
        self._clear()

    def options(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.planner is not None:
            out["planner"] = getattr(self.planner, "name", None) or getattr(self.planner, "__name__", "planner")
        if isinstance(self.planner, ForkPlanner):
            out.update(self.planner.options())
        if self.progress != ("best" if isinstance(self.planner, ForkPlanner) else "change"):
            out["progress"] = self.progress
        for name, default in (("repeat_limit", 3), ("max_plans", 3), ("plan_words", 60), ("patience", None)):
            if getattr(self, name) != default:
                out[name] = getattr(self, name)
        return {**out, **super().options()}

    def _clear(self) -> None:
        self._last_score: float | None = None
        self._best = 0.0  # the best score of the episode so far (``progress="best"``)
        self._quiet_acts = 0  # decisions since the score last changed
        self._seen: set[str] = set()
        self._tried: dict[str, set[str]] = {}  # state key -> moves chosen there since the score changed
        self._run_move: str | None = None
        self._run_length = 0
        self._plans_or_stalls = 0  # since the score last changed
        self._plan: str | None = None
        #: the fork plan being followed and the index of its next move
        self._moves: tuple[ForkPlan, int] | None = None
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
        score = situation.score
        if self._last_score is None:
            self._last_score = self._best = score
        else:
            progressed = score > self._best if self.progress == "best" else score != self._last_score
            self._last_score, self._best = score, max(self._best, score)
            if progressed:
                self._quiet_acts, self._plans_or_stalls = 0, 0
                self._tried.clear()
                self._run_move, self._run_length = None, 0
            else:
                self._quiet_acts += 1
        revisit = key in self._seen
        self._seen.add(key)

        if self._moves is not None:
            followed = self._follow(situation, key, events)
            if followed is not None:
                return followed

        blocked: set[str] = set()
        planned: ForkPlan | None = None
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
                if isinstance(self.planner, ForkPlanner):
                    planned = self._search_plan(situation, events)
                if self.planner is None or (planned is not None and not planned.found):
                    tried = self._tried.get(key, set())
                    blocked |= tried
                    events["blocked_tried"] = sorted(tried)
                elif planned is None:
                    self._plan = self._ask_planner(situation, events)
                    events["plan"] = self._plan
                else:
                    self._plan = planned.text
                    events["plan"] = self._plan
                    self._moves = (planned, 0)
                    followed = self._follow(situation, key, events, planned)
                    if followed is not None:
                        return followed

        inner_sit = situation
        if self._plan:
            inner_sit = situation.with_notes((*situation.notes, f"Plan: {self._plan}"))
        d = self.policy.decide(inner_sit)
        p, action, applied = self._apply_blocks(situation, d, blocked)
        if applied:
            events["blocked"] = applied
        self._remember(key, situation.texts[action])
        if events:
            self.log.append({"step": len(situation.history), **events})
        info = {**d.info, "rethink": {**events, "plans": self._plans_or_stalls, "quiet_acts": self._quiet_acts}}
        usage, planning_s = d.usage, d.planning_s
        if planned is not None:  # a search that found nothing still cost its calls
            usage = planned.usage + usage
            planning_s = (planning_s or 0.0) + planned.info["elapsed_s"]
        return Decision(
            p, action, usage, info, give_up=d.give_up or bool(events.get("give_up")), planning_s=planning_s
        )

    def _remember(self, key: str, move: str) -> None:
        self._tried.setdefault(key, set()).add(move)
        if move == self._run_move:
            self._run_length += 1
        else:
            self._run_move, self._run_length = move, 1

    def _follow(
        self, situation: Situation, key: str, events: dict[str, Any], planned: ForkPlan | None = None
    ) -> Decision | None:
        """The fork plan's next move, one-hot and with no inner call, while it is a candidate and the score is
        the one the plan's fork had there; else the plan is dropped (``None``)."""
        assert self._moves is not None
        plan, pos = self._moves
        moves = plan.moves
        move, want = moves[pos], plan.scores[pos]
        if situation.score != want or move not in situation.texts:
            why = (f"the score is {situation.score:g}, the plan's fork had {want:g}" if situation.score != want
                   else f"{move!r} is not a move here")
            events["plan_dropped"] = f"step {pos + 1} of {len(moves)}: {why}"
            self._moves = None
            return None
        self._moves = (plan, pos + 1)
        if pos + 1 >= len(moves):
            self._moves = None
        events["following"] = {"move": move, "step": pos + 1, "of": len(moves)}
        self._remember(key, move)
        self.log.append({"step": len(situation.history), **events})
        usage, planning_s = Usage(), None
        if planned is not None:
            usage, planning_s = planned.usage, planned.info["elapsed_s"]
        d = one_hot(situation, move, usage, {})
        info = {"rethink": {**events, "plans": self._plans_or_stalls, "quiet_acts": self._quiet_acts}}
        return Decision(d.probabilities, d.action, usage, info, planning_s=planning_s)

    def _search_plan(self, situation: Situation, events: dict[str, Any]) -> ForkPlan:
        """The fork planner's search from ``situation`` (its statistics in ``events["planner"]``)."""
        assert isinstance(self.planner, ForkPlanner)
        above = self._best if self.progress == "best" else situation.score
        planned = self.planner.search(situation, self.fork, self.inner_many, above=above)
        events["planner"] = {**planned.info, "found": planned.found, "plan_length": len(planned.moves)}
        return planned

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
