"""Playing one episode: the loop every runner backend, benchmark and example shares."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from s1gym.core import Decision, Policy, S1Env, Usage
from s1gym.errors import S1GymError

__all__ = ["EpisodeError", "agreement", "play_episode"]

#: Info keys the trial keeps from the env's final info (task metrics read them); the rest is per step.
_DROP_FINAL_INFO = frozenset({"action_mask", "candidates"})


class EpisodeError(S1GymError, RuntimeError):
    """The policy broke the contract during an episode (e.g. chose an index outside the candidates)."""


class _Clock:
    """Seconds of play since the reset: policy and env time, without the time spent on screenshots."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.paused = 0.0

    def now(self) -> float:
        return time.perf_counter() - self.t0 - self.paused

    def aside(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` with its time left out of the clock (work that is not play: the expert's move)."""
        start = time.perf_counter()
        try:
            return fn()
        finally:
            self.paused += time.perf_counter() - start

    def shoot(self, screenshot: Callable[[], bytes] | None, shots: list[bytes]) -> int | None:
        """Append ``screenshot()`` to ``shots`` (its time is not play time); its index, or ``None``."""
        if screenshot is None:
            return None
        start = time.perf_counter()
        shots.append(bytes(screenshot()))
        self.paused += time.perf_counter() - start
        return len(shots) - 1


def agreement(probabilities: Any, expert: int) -> dict[str, float]:
    """The policy's agreement with the expert's move (index ``expert``) in one decision: ``expert_p``, the
    probability it gave that move, and ``expert_top``, 1 when that move is its most probable, shared evenly
    when k moves tie for the top (1/k, what a tie broken at random would give)."""
    p = np.asarray(probabilities, dtype=np.float64).tolist()  # plain floats: a few candidates, no numpy calls
    best = max(p)
    top = [i for i, x in enumerate(p) if x >= best]
    return {"expert_p": p[expert], "expert_top": 1.0 / len(top) if expert in top else 0.0}


_agreement = agreement  # play_episode's ``agreement`` flag shadows the name


def _expert_move(env: S1Env) -> tuple[str | None, str | None]:
    """The expert's move for the agreement columns, and the error an expert raised instead: measuring a
    policy must never end its episode, so a failing expert is recorded in the tick (``expert_error``)
    and the episode goes on."""
    try:
        return env.expert_move(), None
    except Exception as exc:  # noqa: BLE001 - any expert bug; the tick names it
        return None, f"{type(exc).__name__}: {exc}"


def play_episode(env: S1Env, policy: Policy, seed: int, *, frames: bool = False,
                 agreement: bool = True) -> dict[str, Any]:
    """Play game ``seed`` to its end and return its record (ticks, final state, usage).

    Every tick holds the observation, candidates, probabilities, chosen move,
    latency, usage and the decision's info, ``clock_s`` (seconds of play since
    the reset when the decision was asked), ``planning_s`` when the decision
    planned (:attr:`Decision.planning_s`) and, once stepped, the move's
    ``feedback``. Where the task has an expert (``env.expert_move()``, read after the
    decision and before the step, off the clock, never shown to the policy) the tick
    also holds the ``expert`` move, ``expert_p`` (the probability the policy gave it)
    and ``expert_top`` (:func:`agreement`); an expert that raises instead leaves ``expert_error``
    and the episode goes on (``agreement=False``: the expert is never asked). The record ends with the
    ``final_observation`` and the total ``clock_s``. A decision that gives up ends the
    episode there, unsolved.

    ``frames=True`` with an env that has ``screenshot() -> bytes`` (a PNG of its
    state, e.g. the web tasks) adds ``record["frames"]``: one PNG before every
    decision (``tick["frame"]`` is its index) and one of the final state
    (``record["final_frame"]``); screenshots are env calls, never policy calls,
    and their time is left out of the clock. Raises whatever the env or the
    policy raises, with the ticks played so far attached as ``exc.partial_episode``.
    """
    ticks: list[dict[str, Any]] = []
    usage = Usage()
    gave_up = False
    record: dict[str, Any] = {"seed": seed, "ticks": ticks}
    shots: list[bytes] = []
    screenshot = getattr(env, "screenshot", None) if frames else None
    if frames and callable(screenshot):
        record["frames"] = shots
    else:
        screenshot = None
    try:
        observation, info = env.reset(seed=seed)
        record["game"] = env.game_of(seed)  # which of a finite list of games this seed played (or None)
        policy.reset()
        clock = _Clock()
        terminated = truncated = False
        while not (terminated or truncated) and env.candidates:
            frame = clock.shoot(screenshot, shots)
            situation = env.situation()
            start = time.perf_counter()
            asked_at = clock.now()
            decision: Decision = policy.decide(situation)
            latency = time.perf_counter() - start
            n = len(situation.candidates)
            if not 0 <= decision.action < n:
                raise EpisodeError(
                    f"{getattr(policy, 'name', policy)!r} chose index {decision.action} but this state has "
                    f"{n} candidates (0..{n - 1})"
                )
            usage = usage + decision.usage
            tick = {
                "t": len(ticks),
                "observation": situation.observation,
                "candidates": list(situation.texts),
                "probabilities": decision.probabilities.tolist(),
                "action": decision.action,
                "move": situation.candidates[decision.action].text,
                "latency_s": latency,
                "clock_s": asked_at,
                "usage": decision.usage.as_dict(),
                "info": dict(decision.info),
                "reward": None,  # filled after the step; stays None if the step raises
                "score": None,
            }
            if decision.planning_s is not None:
                tick["planning_s"] = float(decision.planning_s)
            # after the decision, never seen by it
            expert, expert_error = clock.aside(lambda: _expert_move(env)) if agreement else (None, None)
            if expert is not None:
                tick.update(_agreement(decision.probabilities, situation.texts.index(expert)), expert=expert)
            elif expert_error:
                tick["expert_error"] = expert_error
            if frame is not None:
                tick["frame"] = frame
            ticks.append(tick)
            if decision.give_up:
                gave_up = True
                tick.update(reward=0.0, score=env.score, gave_up=True)
                break
            observation, reward, terminated, truncated, info = env.step_move(tick["move"])
            feedback = env.history[-1][1] if env.history else ""
            tick.update(reward=float(reward), score=float(info["score"]), feedback=feedback)
        record["clock_s"] = clock.now()
        final_frame = clock.shoot(screenshot, shots)
    except BaseException as exc:
        record.update(usage=usage)
        exc.partial_episode = record  # type: ignore[attr-defined]
        raise
    record.update(
        usage=usage,
        score=float(info["score"]),
        won=bool(info["won"]),
        lost=bool(info["lost"]),
        steps=int(env.steps),
        terminated=bool(terminated),
        truncated=bool(truncated),
        gave_up=gave_up,
        final_info={k: v for k, v in info.items() if k not in _DROP_FINAL_INFO},
        final_observation=observation,
    )
    if final_frame is not None:
        record["final_frame"] = final_frame
    return record
