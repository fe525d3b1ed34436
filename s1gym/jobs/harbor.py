"""Harbor's records (harbor 0.26): a trial's config, result and episode as dicts, the job's result, and
the accessors every reader of trial results uses."""

from __future__ import annotations

import hashlib
import json
import math
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from s1gym.jobs.episodes import with_frame_path, compact_episode, frame_path
from s1gym.jobs.files import now_iso, to_jsonable
from s1gym.stats import mean

__all__ = ["eval_key", "exception_record", "job_result", "seed_of", "seed_record", "trial_files", "trial_metadata",
           "trial_name", "trial_reward", "usage_totals"]


def trial_name(env_id: str, seed: int) -> str:
    """A stable trial folder name, so ``--resume`` finds the trial of a seed."""
    short = env_id.split(":")[-1].split("/")[-1]
    short = re.sub(r"-v\d+$", "", short)
    short = re.sub(r"[^A-Za-z0-9_.-]", "_", short)[:32]
    return f"{short}__{seed}"


def seed_of(trial: Mapping[str, Any]) -> int:
    seed = (trial.get("config") or {}).get("task", {}).get("seed")
    return seed if isinstance(seed, int) else 0


def new_id() -> str:
    return str(uuid.uuid4())


def eval_key(policy_label: str, env_id: str) -> str:
    """Harbor's ``evals`` key is ``agent__model__dataset``; ours is ``policy__task``."""
    return f"{policy_label}__{env_id}"


def job_result(
    *,
    job_id: str,
    started_at: str,
    finished_at: str | None,
    n_total_trials: int,
    trials: Sequence[Mapping[str, Any]],
    key: str,
) -> dict[str, Any]:
    """Harbor's JobResult with JobStats (``n_trials``/``n_errors`` and the 0.26 counters)."""
    errored = [t for t in trials if t.get("exception_info")]
    scored = [t for t in trials if not t.get("exception_info")]
    reward_stats: dict[str, list[str]] = {}
    for t in scored:
        reward_stats.setdefault(_fmt_reward(trial_reward(t)), []).append(t["trial_name"])
    exception_stats: dict[str, list[str]] = {}
    for t in errored:
        exception_stats.setdefault(t["exception_info"]["exception_type"], []).append(t["trial_name"])
    usage = usage_totals(trials)
    rewards = [trial_reward(t) for t in scored]
    return {
        "id": job_id,
        "started_at": started_at,
        "finished_at": finished_at,
        "n_total_trials": n_total_trials,
        "stats": {
            "n_trials": len(trials),
            "n_errors": len(errored),
            "n_completed_trials": len(scored),
            "n_errored_trials": len(errored),
            "n_running_trials": 0,
            "n_pending_trials": max(n_total_trials - len(trials), 0),
            "n_cancelled_trials": 0,
            "n_retries": 0,
            "n_input_tokens": usage["input_tokens"],
            "n_cache_tokens": 0,
            "n_output_tokens": usage["output_tokens"],
            "cost_usd": usage["cost_usd"],
            "evals": {
                key: {
                    "n_trials": len(trials),
                    "n_errors": len(errored),
                    "metrics": [{"mean": mean(rewards)}],
                    "reward_stats": {"reward": reward_stats},
                    "exception_stats": exception_stats,
                }
            },
        },
    }


def _fmt_reward(r: float) -> str:
    return repr(round(float(r), 6))


def trial_reward(trial: Mapping[str, Any]) -> float:
    """A trial result's reward (``verifier_result.rewards.reward``; 0 when it has none)."""
    vr = trial.get("verifier_result") or {}
    return float((vr.get("rewards") or {}).get("reward", 0.0))


def trial_metadata(trial: Mapping[str, Any]) -> Mapping[str, Any]:
    """A trial result's ``agent_result.metadata`` (steps, won, latencies, calls...; empty when absent)."""
    return ((trial.get("agent_result") or {}).get("metadata")) or {}


def usage_totals(trials: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The decision-model calls, tokens and cost summed over the trials' records."""
    calls = tin = tout = 0
    cost = 0.0
    for t in trials:
        ar = t.get("agent_result") or {}
        tin += int(ar.get("n_input_tokens") or 0)
        tout += int(ar.get("n_output_tokens") or 0)
        cost += float(ar.get("cost_usd") or 0.0)
        calls += int(trial_metadata(t).get("n_calls") or 0)
    return {"calls": calls, "input_tokens": tin, "output_tokens": tout, "cost_usd": cost}


def seed_record(start: int, count: int) -> dict[str, Any]:
    """The seeds of a job, labelled: first, count and every seed."""
    return {"start": start, "count": count, "list": list(range(start, start + count))}


def task_checksum(env_id: str, resolved_options: Mapping[str, Any], seed: int) -> str:
    blob = to_jsonable({"env_id": env_id, "options": dict(resolved_options), "seed": seed})
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()


def trial_files(
    *,
    task: Mapping[str, Any],
    agent: Mapping[str, Any],
    job_id: str,
    job_dir: str,
    seed: int,
    started: str,
    finished: str,
    agent_info: Mapping[str, Any],
    episode: Mapping[str, Any],
    exception_info: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """A trial's three files as dicts (``config``, ``result``, ``episode``: compact, see
    :func:`compact_episode`) plus its ``name``, ``seed`` and ``frames`` (PNG bytes by file name under
    ``agent/``, when the episode recorded screenshots).

    ``task`` is the job's task record (``name``, ``options``, ``resolved_options``), ``agent`` its
    agent record (:meth:`s1gym.runner.spec.JobSpec.agent_config`).
    """
    env_id = task["name"]
    name = trial_name(env_id, seed)
    usage = episode.get("usage") or {}
    usage = usage.as_dict() if hasattr(usage, "as_dict") else dict(usage)
    shots = list(episode.get("frames") or ())
    frames = {frame_path(i): png for i, png in enumerate(shots)}
    ticks = [with_frame_path(t) for t in episode["ticks"]]
    config = {
        "task": {**dict(task), "seed": seed},
        "trial_name": name,
        "trials_dir": job_dir,
        "agent": dict(agent),
        "job_id": job_id,
    }
    searches = [t["planning_s"] for t in ticks if isinstance(t.get("planning_s"), float)]
    metadata = {
        "n_calls": int(usage.get("calls", 0)),
        "n_steps": int(episode.get("steps", len(ticks))),
        "won": bool(episode.get("won", False)),
        "lost": bool(episode.get("lost", False)),
        "gave_up": bool(episode.get("gave_up", False)),
        "truncated": bool(episode.get("truncated", False)),
        # the game of a finite list this seed played (S1Env.game_of; None: a game of its own)
        "game": episode.get("game"),
        "decision_latency_s": [t["latency_s"] for t in ticks],
        "search_time_s": searches,
        # agreement with the task's expert (ticks where it named a move on offer; s1gym.runner.episode.agreement)
        "expert_decisions": sum(1 for t in ticks if "expert" in t),
        "expert_top": math.fsum(t["expert_top"] for t in ticks if "expert" in t),
        "expert_p": math.fsum(t["expert_p"] for t in ticks if "expert" in t),
        # moves Search played greedily once its episode's calls were spent (fallback="greedy")
        "fallback_moves": sum(1 for t in ticks if (t.get("info") or {}).get("fallback")),
        # decisions where the model's reply named no candidate at first (Chat's invalid_replies; the failures table)
        "invalid_decisions": sum(1 for t in ticks if (t.get("info") or {}).get("invalid_replies")),
        "final_info": episode.get("final_info"),
    }
    result = {
        "id": new_id(),
        "task_name": env_id,
        "trial_name": name,
        "trial_uri": (Path(job_dir) / name).resolve().as_uri() if job_dir else name,
        "task_id": {"path": env_id},
        "source": "s1gym",
        "task_checksum": task_checksum(env_id, task.get("resolved_options") or task.get("options") or {}, seed),
        "config": config,
        "agent_info": dict(agent_info),
        "agent_result": {
            "n_input_tokens": int(usage.get("input_tokens", 0)),
            "n_cache_tokens": 0,
            "n_output_tokens": int(usage.get("output_tokens", 0)),
            "cost_usd": float(usage.get("cost_usd", 0.0)),
            "rollout_details": None,
            "metadata": metadata,
        },
        "verifier_result": None
        if exception_info
        else {"rewards": {"reward": float(episode["score"]), "won": int(bool(episode["won"]))}},
        "exception_info": dict(exception_info) if exception_info else None,
        "started_at": started,
        "finished_at": finished,
        "agent_execution": {"started_at": started, "finished_at": finished},
    }
    episode_doc = {
        "task": env_id,
        "options": dict(task.get("options") or {}),
        "seed": seed,
        "policy": agent.get("name"),
        "ticks": ticks,
        "final": with_frame_path({
            k: episode.get(k)
            for k in ("score", "won", "lost", "steps", "terminated", "truncated", "gave_up", "clock_s")
        } | {"observation": episode.get("final_observation"), "frame": episode.get("final_frame")}),
        "usage": usage,
    }
    return {"name": name, "seed": seed, "config": config, "result": result,
            "episode": compact_episode(episode_doc), "frames": frames}


def exception_record(exc: BaseException, traceback_text: str) -> dict[str, Any]:
    return {
        "exception_type": type(exc).__name__,
        "exception_message": str(exc),
        "exception_traceback": traceback_text,
        "occurred_at": now_iso(),
    }
