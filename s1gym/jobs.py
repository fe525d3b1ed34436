"""Job folders in Harbor's layout (harbor 0.26): atomic JSON, secret scrubbing, resume, summaries.

Layout of one job (``<out>/<job>/``)::

    config.json          what was run (task, options, policy, wrappers, seeds, orchestrator)
    result.json          Harbor JobResult: id, started_at, finished_at, n_total_trials, stats{...}
    summary.json         ours: mean score with a 95 % bootstrap interval, wins, steps, latency, cost
    <task>__<seed>/      one trial per episode
        config.json      Harbor TrialConfig-like: task{name, options, seed}, trial_name, agent{...}
        result.json      Harbor TrialResult: task_name, trial_name, agent_info, agent_result,
                         verifier_result.rewards.reward, exception_info, started_at, finished_at
        agent/episode.json   every tick: observation, candidates, probabilities, move, latency, tokens

A trial is finished exactly when its ``result.json`` exists: it is written last
and atomically (temp file + ``os.replace``), so a killed run leaves either a
complete trial or one that ``--resume`` plays again, never half-written JSON.
Only the driver process writes files; workers (processes or Ray tasks) return
plain dicts, so a Ray cluster without a shared file system works too.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
import re
import tempfile
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from s1gym.stats import bootstrap_ci, mean, median

__all__ = [
    "REDACTED",
    "atomic_write_json",
    "find_jobs",
    "job_result",
    "load_trials",
    "now_iso",
    "read_json",
    "scrub",
    "summarize_trials",
    "to_jsonable",
    "trial_name",
]

REDACTED = "[REDACTED]"

#: Keys whose (non-numeric) values are never written: API keys, tokens, secrets,
#: auth headers, passwords. ``max_tokens`` or ``n_input_tokens`` do not match.
_SECRET_KEY = re.compile(
    r"(^|[_\-.])(api[_\-]?key|key|token|access[_\-]?token|secret|client[_\-]?secret|authorization|"
    r"password|passwd|cookie|bearer)$|^x[_\-]api[_\-]key$|secret",
    re.IGNORECASE,
)
#: Environment variables whose values count as secrets wherever they appear.
_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|AUTH|COOKIE|CREDENTIAL", re.IGNORECASE)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{8,}")
#: Shortest env value treated as a secret (shorter ones, like "1", would redact noise).
_MIN_SECRET_LEN = 8


# --------------------------------------------------------------------------
# JSON helpers
# --------------------------------------------------------------------------


def now_iso() -> str:
    """An aware UTC timestamp, ISO 8601 (what Harbor's pydantic models serialize)."""
    return datetime.now(UTC).isoformat()


def to_jsonable(value: Any, _scrub_keys: bool = False) -> Any:
    """Plain JSON types from numpy arrays/scalars, dataclasses, tuples, sets, paths.

    Anything else becomes its ``repr`` so an unexpected object in a wrapper's
    info never aborts a trial. With ``_scrub_keys`` the same walk also redacts
    values under secret-looking keys (one pass: this runs on every tick).
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            k = str(k)
            if _scrub_keys and _is_secret_key(k) and not isinstance(v, (bool, int, float, type(None))):
                out[k] = REDACTED
            else:
                out[k] = to_jsonable(v, _scrub_keys)
        return out
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_jsonable(v, _scrub_keys) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist(), _scrub_keys)
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, _scrub_keys)
    if isinstance(value, Path):
        return str(value)
    return repr(value)


@functools.lru_cache(maxsize=4096)
def _is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key))


def _secret_values() -> list[str]:
    values = {v for k, v in os.environ.items() if _SECRET_ENV.search(k) and len(v.strip()) >= _MIN_SECRET_LEN}
    return sorted(values, key=len, reverse=True)


def scrub(value: Any) -> Any:
    """A JSON-able copy with secrets removed.

    Three layers, because a secret can hide anywhere: values under secret-looking
    keys (``api_key``, ``Authorization``...) become ``[REDACTED]``; ``Bearer``/``Basic``
    credentials inside any string are cut; and the value of every secret-looking
    environment variable (``TYPESAFE_API_KEY``...) is replaced wherever it occurs.
    """
    return json.loads(_dumps(value, indent=None))


def _dumps(value: Any, indent: int | None) -> str:
    return _scrub_text(json.dumps(to_jsonable(value, _scrub_keys=True), indent=indent, ensure_ascii=False))


def _scrub_text(text: str) -> str:
    for secret in _secret_values():
        for form in {secret, json.dumps(secret, ensure_ascii=False)[1:-1]}:
            if form in text:
                text = text.replace(form, REDACTED)
    return _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)


def atomic_write_json(path: Path | str, data: Any, *, indent: int | None = 2, fsync: bool = False) -> None:
    """Write scrubbed JSON to ``path`` via a temp file in the same folder and ``os.replace``.

    ``os.replace`` is atomic on POSIX and Windows within one file system, so a
    reader (or a resumed run after SIGKILL) sees the old file or the new one.
    That covers killed runs without ``fsync`` (5-10 ms a file here, more than a
    whole Blackjack hand); pass ``fsync=True`` to also survive power loss.
    ``indent=None`` writes compact JSON with the C encoder (episode logs).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = _dumps(data, indent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.write("\n")
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: Path | str) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def remove_stale_temp_files(folder: Path) -> int:
    """Delete ``.*.tmp`` files a killed run left behind; returns how many."""
    n = 0
    for tmp in folder.rglob(".*.tmp"):
        tmp.unlink(missing_ok=True)
        n += 1
    return n


# --------------------------------------------------------------------------
# Layout
# --------------------------------------------------------------------------


def trial_name(env_id: str, seed: int) -> str:
    """A stable trial folder name, so ``--resume`` finds the trial of a seed."""
    short = env_id.split(":")[-1].split("/")[-1]
    short = re.sub(r"-v\d+$", "", short)
    short = re.sub(r"[^A-Za-z0-9_.-]", "_", short)[:32]
    return f"{short}__{seed}"


def default_job_name() -> str:
    """Harbor's default job name: the local start time."""
    return datetime.now().strftime("%Y-%m-%d__%H-%M-%S")


def is_job_dir(folder: Path) -> bool:
    config = folder / "config.json"
    if not config.is_file():
        return False
    try:
        data = read_json(config)
    except (OSError, json.JSONDecodeError):
        return False
    return isinstance(data, dict) and "job_name" in data and "s1gym" in data


def find_jobs(roots: Iterable[Path | str]) -> list[Path]:
    """Every s1gym job folder at or under ``roots`` (not descending into jobs), sorted."""
    found: list[Path] = []
    for root in roots:
        root = Path(root)
        if not root.exists():
            raise FileNotFoundError(
                f"{root}: no such folder; pass a job folder or a folder of jobs (e.g. ./jobs)"
            )
        if is_job_dir(root):
            found.append(root)
            continue
        for dirpath, dirnames, _ in os.walk(root):
            here = Path(dirpath)
            if here != root and is_job_dir(here):
                found.append(here)
                dirnames[:] = []
            else:
                dirnames.sort()
    return sorted(set(found))


def load_trials(job_dir: Path) -> list[dict[str, Any]]:
    """The finished trials of a job (their ``result.json``), sorted by seed."""
    trials = []
    for result in job_dir.glob("*/result.json"):
        try:
            data = read_json(result)
        except (OSError, json.JSONDecodeError):
            continue  # cannot happen with atomic writes; a hand-edited file is skipped, not fatal
        if isinstance(data, dict) and "trial_name" in data:
            trials.append(data)
    return sorted(trials, key=lambda t: (_seed_of(t), t["trial_name"]))


def _seed_of(trial: Mapping[str, Any]) -> int:
    seed = (trial.get("config") or {}).get("task", {}).get("seed")
    return seed if isinstance(seed, int) else 0


# --------------------------------------------------------------------------
# Harbor records
# --------------------------------------------------------------------------


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
        reward_stats.setdefault(_fmt_reward(_reward(t)), []).append(t["trial_name"])
    exception_stats: dict[str, list[str]] = {}
    for t in errored:
        exception_stats.setdefault(t["exception_info"]["exception_type"], []).append(t["trial_name"])
    usage = _usage_totals(trials)
    rewards = [_reward(t) for t in scored]
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


def _reward(trial: Mapping[str, Any]) -> float:
    vr = trial.get("verifier_result") or {}
    return float((vr.get("rewards") or {}).get("reward", 0.0))


def _meta(trial: Mapping[str, Any]) -> Mapping[str, Any]:
    return ((trial.get("agent_result") or {}).get("metadata")) or {}


def _usage_totals(trials: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    calls = tin = tout = 0
    cost = 0.0
    for t in trials:
        ar = t.get("agent_result") or {}
        tin += int(ar.get("n_input_tokens") or 0)
        tout += int(ar.get("n_output_tokens") or 0)
        cost += float(ar.get("cost_usd") or 0.0)
        calls += int(_meta(t).get("n_calls") or 0)
    return {"calls": calls, "input_tokens": tin, "output_tokens": tout, "cost_usd": cost}


def summarize_trials(trials: Sequence[Mapping[str, Any]], env_cls: type | None = None) -> dict[str, Any]:
    """Our summary over a set of trials: scores over scored episodes, errors counted apart.

    ``env_cls.summarize_episodes`` (when given) adds the task's own metrics
    (accuracy, confusion matrix, winnings...) from the stored final infos.
    """
    trials = sorted(trials, key=lambda t: (_seed_of(t), t["trial_name"]))
    scored = [t for t in trials if not t.get("exception_info")]
    scores = [_reward(t) for t in scored]
    low, high = bootstrap_ci(scores)
    latencies = [x for t in scored for x in _meta(t).get("decision_latency_s", [])]
    steps = [int(_meta(t).get("n_steps") or 0) for t in scored]
    wins = sum(1 for t in scored if _meta(t).get("won"))
    summary: dict[str, Any] = {
        "episodes": len(trials),
        "scored": len(scored),
        "errors": len(trials) - len(scored),
        "mean_score": mean(scores),
        "ci95": [low, high],
        "wins": wins,
        "win_rate": wins / len(scored) if scored else None,
        "gave_up": sum(1 for t in scored if _meta(t).get("gave_up")),
        "mean_steps": mean(steps),
        "median_latency_s": median(latencies),
        # Search plans once and then follows its plan, so the median can hide the planning cost.
        "mean_latency_s": mean(latencies),
        "decision_time_s": float(sum(latencies)),
        "decisions": len(latencies),
        **_usage_totals(trials),
    }
    if env_cls is not None and scored:
        finals = [_meta(t).get("final_info") or {} for t in scored]
        try:
            summary["task_metrics"] = to_jsonable(env_cls.summarize_episodes(finals))
        except Exception as exc:  # a metrics bug must not lose the job's summary  # noqa: BLE001
            summary["task_metrics"] = {"error": f"{type(exc).__name__}: {exc}"}
    return summary


def iter_job_trials(job_dirs: Iterable[Path]) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    for job_dir in job_dirs:
        yield read_json(job_dir / "config.json"), load_trials(job_dir)
