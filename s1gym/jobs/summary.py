"""Our ``summary.json``: the mean score with a 95 % bootstrap interval, wins, steps, latency, calls, tokens
and cost over a set of trials, plus the task's own metrics."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from s1gym.jobs.files import to_jsonable
from s1gym.jobs.harbor import usage_totals, seed_of, trial_metadata, trial_reward
from s1gym.stats import bootstrap_ci, mean, median

__all__ = ["OUTCOMES", "distinct_games", "failures", "summarize_trials", "trial_outcome", "trial_verdict"]


def _agreement(trials: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Agreement with the task's expert over every decision where it named a move on offer: ``agreement_at_1``
    (the share whose top move was the expert's, ties shared) and ``mean_expert_p`` (the mean probability given
    to the expert's move); ``None`` when no decision had an expert move."""
    meta = [trial_metadata(t) for t in trials]
    n = sum(int(m.get("expert_decisions") or 0) for m in meta)
    top = math.fsum(float(m.get("expert_top") or 0.0) for m in meta)
    p = math.fsum(float(m.get("expert_p") or 0.0) for m in meta)
    return {"expert_decisions": n, "agreement_at_1": top / n if n else None, "mean_expert_p": p / n if n else None}


#: ``exception_info.kind`` (s1gym.runner.backends.failure_kind) -> the outcome it is
ERROR_KINDS = {"engine": "engine_error", "policy": "policy_error"}

#: every outcome a trial can have, and what a table, summary or replay page calls it
OUTCOMES = {"won": "won", "task": "task failure", "policy_error": "policy error", "engine_error": "engine error",
            "other_error": "error"}


def trial_outcome(trial: Mapping[str, Any]) -> str:
    """What became of one trial (its ``result.json``), a key of :data:`OUTCOMES`: ``won``, ``task`` (played to
    the end without winning: lost, out of moves, gave up), ``policy_error`` (the decision model failed: API down,
    bad key), ``engine_error`` (an engine, browser or worker died) or ``other_error`` (any other exception: a
    bug or a broken contract)."""
    info = trial.get("exception_info")
    if info:
        return ERROR_KINDS.get(str(info.get("kind")), "other_error")
    return "won" if trial_metadata(trial).get("won") else "task"


def trial_verdict(trial: Mapping[str, Any]) -> str:
    """One trial's outcome in words, as a replay page and its index mark it: ``won``, ``task failure: lost``
    (or ``out of moves``, ``gave up``, ``step limit``), ``engine error: EngineCrashed``..., then ``; 3 invalid
    decisions`` when the model's replies named no candidate."""
    outcome = trial_outcome(trial)
    meta = trial_metadata(trial)
    text = OUTCOMES[outcome]
    if outcome == "task":
        how = ("gave up" if meta.get("gave_up") else "lost" if meta.get("lost")
               else "step limit" if meta.get("truncated") else "out of moves")
        text += f": {how}"
    elif outcome != "won":
        text += f": {(trial.get('exception_info') or {}).get('exception_type') or 'unknown'}"
    invalid = int(meta.get("invalid_decisions") or 0)
    if invalid:
        text += f"; {invalid} invalid decision{'s' if invalid > 1 else ''}"
    return text


def failures(trials: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """What went wrong, by kind (:func:`trial_outcome`), so a low score can be told apart from a broken run:
    ``task``, ``policy_errors``, ``engine_errors`` and ``other_errors`` count trials; ``invalid_decisions``
    counts decisions where the model's reply named no candidate, ``invalid_episodes`` the trials that had
    one."""
    out = {"task": 0, "invalid_decisions": 0, "invalid_episodes": 0, "policy_errors": 0, "engine_errors": 0,
           "other_errors": 0}
    for t in trials:
        outcome = trial_outcome(t)
        if outcome == "task":
            out["task"] += 1
        elif outcome != "won":
            out[outcome + "s"] += 1
            continue
        invalid = int(trial_metadata(t).get("invalid_decisions") or 0)
        out["invalid_decisions"] += invalid
        out["invalid_episodes"] += invalid > 0
    return out


def distinct_games(trials: Sequence[Mapping[str, Any]],
                   ci95: tuple[float | None, float | None] | None = None) -> dict[str, Any]:
    """The sample counted by games, for jobs whose seeds repeat a game of a finite list (a trial's ``game``,
    from :meth:`S1Env.game_of`; a trial without one is a game of its own): ``distinct_games``,
    ``repeated_episodes`` (the trials that played a game again), and the mean score with its 95 % bootstrap
    interval over games (each game's trials averaged first), so a repeated game is not counted as new
    evidence. ``ci95``: the interval over the trials, when known; with no game repeated the games are the
    trials in the same order, so it is the games' interval too and is not drawn again."""
    by_game: dict[Any, list[float]] = {}
    for t in trials:
        game = trial_metadata(t).get("game")
        by_game.setdefault(("seed", seed_of(t)) if game is None else game, []).append(trial_reward(t))
    per_game = [mean(scores) for scores in by_game.values()]
    low, high = ci95 if ci95 is not None and len(by_game) == len(trials) else bootstrap_ci(per_game)
    return {"distinct_games": len(by_game), "repeated_episodes": len(trials) - len(by_game),
            "games_mean_score": mean(per_game), "games_ci95": [low, high]}


def summarize_trials(trials: Sequence[Mapping[str, Any]], env_cls: type | None = None) -> dict[str, Any]:
    """Our summary over a set of trials: scores over scored episodes, errors counted apart.

    ``env_cls.summarize_episodes`` (when given) adds the task's own metrics
    (accuracy, confusion matrix, winnings...) from the stored final infos.
    """
    trials = sorted(trials, key=lambda t: (seed_of(t), t["trial_name"]))
    scored = [t for t in trials if not t.get("exception_info")]
    scores = [trial_reward(t) for t in scored]
    low, high = bootstrap_ci(scores)
    latencies = [x for t in scored for x in trial_metadata(t).get("decision_latency_s", [])]
    steps = [int(trial_metadata(t).get("n_steps") or 0) for t in scored]
    wins = sum(1 for t in scored if trial_metadata(t).get("won"))
    summary: dict[str, Any] = {
        "episodes": len(trials),
        "scored": len(scored),
        "errors": len(trials) - len(scored),
        # trials played more than once (an engine or worker died, --retries; the trial's "retries" says why)
        "retried": sum(1 for t in trials if t.get("retries")),
        "mean_score": mean(scores),
        "ci95": [low, high],
        "wins": wins,
        "win_rate": wins / len(scored) if scored else None,
        "gave_up": sum(1 for t in scored if trial_metadata(t).get("gave_up")),
        "mean_steps": mean(steps),
        "median_latency_s": median(latencies),
        # Search plans once and then follows its plan, so the median can hide the planning cost.
        "mean_latency_s": mean(latencies),
        "decision_time_s": float(sum(latencies)),
        # Search's own time per search (the decisions that searched, not the ones following a plan).
        "mean_search_s": mean([x for t in scored for x in trial_metadata(t).get("search_time_s") or []]),
        "decisions": len(latencies),
        **_agreement(scored),
        "fallback_moves": sum(int(trial_metadata(t).get("fallback_moves") or 0) for t in scored),
        "failures": failures(trials),
        **distinct_games(scored, (low, high)),
        **usage_totals(trials),
    }
    if env_cls is not None and scored:
        finals = [trial_metadata(t).get("final_info") or {} for t in scored]
        try:
            summary["task_metrics"] = to_jsonable(env_cls.summarize_episodes(finals))
        except Exception as exc:  # a metrics bug must not lose the job's summary  # noqa: BLE001
            summary["task_metrics"] = {"error": f"{type(exc).__name__}: {exc}"}
    return summary
