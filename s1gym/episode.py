"""Playing one episode: the loop every runner backend, benchmark and example shares."""

from __future__ import annotations

import time
from typing import Any

from s1gym.core import Decision, Policy, S1Env, Usage

__all__ = ["EpisodeError", "play_episode"]

#: Info keys the trial keeps from the env's final info (task metrics read them); the rest is per step.
_DROP_FINAL_INFO = frozenset({"action_mask", "candidates"})


class EpisodeError(RuntimeError):
    """The policy broke the contract during an episode (e.g. chose an index outside the candidates)."""


def play_episode(env: S1Env, policy: Policy, seed: int) -> dict[str, Any]:
    """Play game ``seed`` to its end and return its record (ticks, final state, usage).

    Every tick holds the observation, candidates, probabilities, chosen move,
    latency, usage and the decision's info. A decision that gives up ends the
    episode there, unsolved. Raises whatever the env or the policy raises,
    with the ticks played so far attached as ``exc.partial_episode``.
    """
    ticks: list[dict[str, Any]] = []
    usage = Usage()
    gave_up = False
    record: dict[str, Any] = {"seed": seed, "ticks": ticks}
    try:
        _, info = env.reset(seed=seed)
        policy.reset()
        terminated = truncated = False
        while not (terminated or truncated) and env.candidates:
            situation = env.situation()
            start = time.perf_counter()
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
                "usage": decision.usage.as_dict(),
                "info": dict(decision.info),
                "reward": None,  # filled after the step; stays None if the step raises
                "score": None,
            }
            ticks.append(tick)
            if decision.give_up:
                gave_up = True
                tick.update(reward=0.0, score=env.score, gave_up=True)
                break
            _, reward, terminated, truncated, info = env.step_move(tick["move"])
            tick.update(reward=float(reward), score=float(info["score"]))
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
    )
    return record
