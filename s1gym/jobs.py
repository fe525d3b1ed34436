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
                             (compact: each distinct text and list once; read it with read_episode)
        agent/frames/        with ``--frames``: NNNN.png, the env's screenshot before tick NNNN and
                             after the last one (tasks with ``env.screenshot()``, e.g. the web tasks)

A trial is finished exactly when its ``result.json`` exists: it is written last
and atomically (temp file + ``os.replace``), so a killed run leaves either a
complete trial or one that ``--resume`` plays again, never half-written JSON.
Counts are always taken from the trials on disk (the job's ``result.json`` is
rewritten from them on resume and at the end; readers such as ``s1 table`` read
the trials, not that file). Files get the permissions the umask allows.
Only the driver process writes files (:class:`JobFolder`); workers (processes
or Ray tasks) return plain dicts (:func:`trial_files`), so a Ray cluster
without a shared file system works too.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import re
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from s1gym.stats import bootstrap_ci, mean, median

__all__ = [
    "REDACTED",
    "JobFolder",
    "JobFolderError",
    "atomic_write_bytes",
    "atomic_write_json",
    "check_job_name",
    "compact_episode",
    "expand_episode",
    "find_jobs",
    "job_result",
    "load_trials",
    "now_iso",
    "read_episode",
    "read_json",
    "scrub",
    "summarize_trials",
    "to_jsonable",
    "trial_files",
    "trial_metadata",
    "trial_name",
    "trial_reward",
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
    separators = (",", ":") if indent is None else None  # compact files (episodes) without padding
    return _scrub_text(
        json.dumps(to_jsonable(value, _scrub_keys=True), indent=indent, separators=separators, ensure_ascii=False)
    )


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
    atomic_write_bytes(path, (_dumps(data, indent) + "\n").encode("utf-8"), fsync=fsync)


def atomic_write_bytes(path: Path | str, data: bytes, *, fsync: bool = False) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same folder, then ``os.replace``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; a plain open() would honour the umask
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    """The process umask, read without changing it (Linux), else by setting and restoring it."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def read_json(path: Path | str) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# --------------------------------------------------------------------------
# Episode files: each distinct text and list stored once
# --------------------------------------------------------------------------

#: The episode file format :func:`compact_episode` writes (files without ``format`` are format 1).
EPISODE_FORMAT = 2
#: Tick fields holding text (stored as lists of paragraph ids) and lists (stored as ids into ``lists``).
_TEXT_FIELDS = ("observation", "feedback")
_LIST_FIELDS = ("candidates", "probabilities")


def compact_episode(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The episode document in format 2: every distinct paragraph and list stored once.

    Format 1 repeated the whole observation, the candidate list and the
    probabilities at every tick (a 100-tick CookingWorld episode of the flat-odds
    policy was 254 KB). Format 2 keeps a ``texts`` table of the distinct
    paragraphs (observations split at blank lines) and a ``lists`` table of the
    distinct candidate and probability lists; a tick's ``observation`` and
    ``feedback`` are lists of paragraph ids, its ``candidates`` and
    ``probabilities`` ids into ``lists``; ``final.observation`` likewise.
    Lossless: :func:`expand_episode` gives back the format-1 document exactly.
    """
    texts: dict[str, int] = {}
    lists: dict[tuple[Any, ...], int] = {}

    def paragraphs(text: str) -> list[int]:
        return [texts.setdefault(p, len(texts)) for p in text.split("\n\n")]

    def compact(record: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(record)
        for key in _TEXT_FIELDS:
            if isinstance(out.get(key), str):
                out[key] = paragraphs(out[key])
        for key in _LIST_FIELDS:
            if isinstance(out.get(key), list):
                out[key] = lists.setdefault(tuple(out[key]), len(lists))
        return out

    ticks = [compact(t) for t in doc.get("ticks") or ()]
    final = compact(doc.get("final") or {})
    head = {k: v for k, v in doc.items() if k not in ("format", "ticks", "final")}
    return {"format": EPISODE_FORMAT, **head, "texts": list(texts), "lists": [list(x) for x in lists],
            "ticks": ticks, "final": final}


def expand_episode(doc: Mapping[str, Any]) -> dict[str, Any]:
    """An episode document with every text and list in place (format 1), from format 1 or 2."""
    version = doc.get("format", 1)
    if version == 1:
        return dict(doc)
    if version != EPISODE_FORMAT:
        raise ValueError(
            f"episode file format {version!r} is not known to this s1gym (it reads 1 and {EPISODE_FORMAT}); "
            "upgrade s1gym to read it"
        )
    texts, lists = doc["texts"], doc["lists"]

    def expand(record: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(record)
        for key in _TEXT_FIELDS:
            if isinstance(out.get(key), list):
                out[key] = "\n\n".join(texts[i] for i in out[key])
        for key in _LIST_FIELDS:
            if isinstance(out.get(key), int):
                out[key] = list(lists[out[key]])
        return out

    head = {k: v for k, v in doc.items() if k not in ("format", "texts", "lists", "ticks", "final")}
    return {**head, "ticks": [expand(t) for t in doc["ticks"]], "final": expand(doc.get("final") or {})}


def read_episode(path: Path | str) -> dict[str, Any]:
    """A trial's episode (``path``: the trial folder or its ``agent/episode.json``), texts and lists in
    place whatever format wrote it; every reader of episode files goes through here."""
    path = Path(path)
    if path.is_dir():
        path = path / "agent" / "episode.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no episode file; pass a trial folder (<job>/<task>__<seed>) or its agent/episode.json")
    return expand_episode(read_json(path))


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


def _fresh_job_path(out: Path) -> Path:
    """A new, empty ``out/<start time>`` folder, made atomically; a job started in the same second (two
    quick runs in a row, or in parallel) gets ``<start time>-2``, ``-3``... instead of failing."""
    base = default_job_name()
    for k in range(1, 10_000):
        path = out / (base if k == 1 else f"{base}-{k}")
        try:
            path.mkdir(parents=True)
            return path
        except FileExistsError:
            continue
        except OSError as exc:
            raise JobFolderError(_unwritable(path, exc)) from exc
    raise JobFolderError(f"{out}: 10,000 jobs started at {base}; pass --job NAME")


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
        if not root.is_dir():
            raise NotADirectoryError(
                f"{root} is a file, not a folder; pass a job folder or a folder of jobs (e.g. ./jobs)"
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
    return sorted(trials, key=lambda t: (seed_of(t), t["trial_name"]))


def seed_of(trial: Mapping[str, Any]) -> int:
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
        reward_stats.setdefault(_fmt_reward(trial_reward(t)), []).append(t["trial_name"])
    exception_stats: dict[str, list[str]] = {}
    for t in errored:
        exception_stats.setdefault(t["exception_info"]["exception_type"], []).append(t["trial_name"])
    usage = _usage_totals(trials)
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


def _usage_totals(trials: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    calls = tin = tout = 0
    cost = 0.0
    for t in trials:
        ar = t.get("agent_result") or {}
        tin += int(ar.get("n_input_tokens") or 0)
        tout += int(ar.get("n_output_tokens") or 0)
        cost += float(ar.get("cost_usd") or 0.0)
        calls += int(trial_metadata(t).get("n_calls") or 0)
    return {"calls": calls, "input_tokens": tin, "output_tokens": tout, "cost_usd": cost}


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
        **_usage_totals(trials),
    }
    if env_cls is not None and scored:
        finals = [trial_metadata(t).get("final_info") or {} for t in scored]
        try:
            summary["task_metrics"] = to_jsonable(env_cls.summarize_episodes(finals))
        except Exception as exc:  # a metrics bug must not lose the job's summary  # noqa: BLE001
            summary["task_metrics"] = {"error": f"{type(exc).__name__}: {exc}"}
    return summary


def iter_job_trials(job_dirs: Iterable[Path]) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    for job_dir in job_dirs:
        yield read_json(job_dir / "config.json"), load_trials(job_dir)


# --------------------------------------------------------------------------
# Harbor records of one trial (built where the episode was played)
# --------------------------------------------------------------------------


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
    agent record (:meth:`s1gym.runner.JobSpec.agent_config`).
    """
    env_id = task["name"]
    name = trial_name(env_id, seed)
    usage = episode.get("usage") or {}
    usage = usage.as_dict() if hasattr(usage, "as_dict") else dict(usage)
    shots = list(episode.get("frames") or ())
    frames = {frame_path(i): png for i, png in enumerate(shots)}
    ticks = [_with_frame_path(t) for t in episode["ticks"]]
    config = {
        "task": {**dict(task), "seed": seed},
        "trial_name": name,
        "trials_dir": job_dir,
        "agent": dict(agent),
        "job_id": job_id,
    }
    searches = [t["info"]["elapsed_s"] for t in ticks if isinstance(t.get("info", {}).get("elapsed_s"), float)]
    metadata = {
        "n_calls": int(usage.get("calls", 0)),
        "n_steps": int(episode.get("steps", len(ticks))),
        "won": bool(episode.get("won", False)),
        "lost": bool(episode.get("lost", False)),
        "gave_up": bool(episode.get("gave_up", False)),
        "truncated": bool(episode.get("truncated", False)),
        "decision_latency_s": [t["latency_s"] for t in ticks],
        "search_time_s": searches,
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
        "final": _with_frame_path({
            k: episode.get(k)
            for k in ("score", "won", "lost", "steps", "terminated", "truncated", "gave_up", "clock_s")
        } | {"observation": episode.get("final_observation"), "frame": episode.get("final_frame")}),
        "usage": usage,
    }
    return {"name": name, "seed": seed, "config": config, "result": result,
            "episode": compact_episode(episode_doc), "frames": frames}


def frame_path(index: int) -> str:
    """Where screenshot ``index`` of a trial lives, relative to its ``agent/`` folder."""
    return f"frames/{index:04d}.png"


def _with_frame_path(record: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(record)
    if isinstance(out.get("frame"), int):
        out["frame"] = frame_path(out["frame"])
    elif "frame" in out and out["frame"] is None:
        del out["frame"]
    return out


def exception_record(exc: BaseException, traceback_text: str) -> dict[str, Any]:
    return {
        "exception_type": type(exc).__name__,
        "exception_message": str(exc),
        "exception_traceback": traceback_text,
        "occurred_at": now_iso(),
    }


# --------------------------------------------------------------------------
# A job folder
# --------------------------------------------------------------------------


class JobFolderError(ValueError):
    """A job folder cannot be used as asked (exists, is a file, ran something else); the message says how."""


#: The parts of a job config that must match to resume it (not the orchestrator).
RESUME_KEYS = ("agents", "tasks", "seeds")


class JobFolder:
    """One job's folder: opened (new or resumed), trials written as they finish, the summary at the end.

    Only the driver process uses it. ``trials`` are the finished trials on disk
    (their ``result.json``), by trial name.
    """

    #: How often a running job rewrites its result.json (it grows with the job).
    RESULT_EVERY_S = 1.0

    def __init__(self, path: Path, config: Mapping[str, Any], job_id: str, started_at: str) -> None:
        self.path = path
        self.config = dict(config)
        self.id = job_id
        self.started_at = started_at
        self.trials: dict[str, dict[str, Any]] = {t["trial_name"]: t for t in load_trials(path)}
        self._last_write = 0.0

    @classmethod
    def open(cls, out: Path, name: str | None, config: Mapping[str, Any], *, resume: bool) -> JobFolder:
        """A new job folder ``out/name`` (default name: the start time), or, with ``resume``, the job of
        that name or the latest job in ``out`` that ran the same task, options, agent and seeds."""
        if name is not None:
            check_job_name(name)
        found = _resumable(out, name, config) if resume else None
        _check_out_dir(out)
        path = found or (out / name if name else _fresh_job_path(out))
        config = {**config, "job_name": path.name, "jobs_dir": str(out)}
        if resume and path.exists():
            if not is_job_dir(path):
                raise JobFolderError(f"--resume: {path} is not a job folder (no config.json with job_name)")
            if _comparable(read_json(path / "config.json")) != _comparable(config):
                raise JobFolderError(
                    f"--resume: {path} ran a different task, options, policy or seed range; "
                    "start a new job (another --job NAME) instead"
                )
            remove_stale_temp_files(path)
            previous = read_json(path / "result.json") if (path / "result.json").exists() else {}
        elif path.exists() and (not path.is_dir() or any(path.iterdir())):
            raise JobFolderError(f"{path} already exists; pass --resume to continue it or another --job NAME")
        else:
            previous = {}
        try:
            atomic_write_json(path / "config.json", config)
        except OSError as exc:
            raise JobFolderError(_unwritable(path, exc)) from exc
        folder = cls(path, config, previous.get("id") or new_id(), previous.get("started_at") or now_iso())
        folder.write_result(None)  # counts from the trials on disk (a killed run may have left more)
        return folder

    def pending(self, seeds: Iterable[int], env_id: str, retry_errors: bool = False) -> list[int]:
        """The seeds without a finished trial (``retry_errors``: errored trials count as not finished)."""
        if retry_errors:
            self.trials = {k: t for k, t in self.trials.items() if not t.get("exception_info")}
        return [s for s in seeds if trial_name(env_id, s) not in self.trials]

    def write_trial(self, files: Mapping[str, Any]) -> None:
        """config first, the screenshots and the episode next, ``result.json`` last: its presence marks
        a finished trial."""
        trial_dir = self.path / files["name"]
        atomic_write_json(trial_dir / "config.json", files["config"])
        frames_dir = trial_dir / "agent" / "frames"
        if frames_dir.is_dir():  # a replayed trial: frames of an earlier attempt must not linger
            for old in frames_dir.glob("*.png"):
                old.unlink()
        for rel, png in (files.get("frames") or {}).items():
            atomic_write_bytes(trial_dir / "agent" / rel, png)
        atomic_write_json(trial_dir / "agent" / "episode.json", files["episode"], indent=None)
        atomic_write_json(trial_dir / "result.json", files["result"])
        self.trials[files["name"]] = dict(files["result"])
        self.write_result(None, every_s=self.RESULT_EVERY_S)

    def write_result(self, finished_at: str | None, every_s: float = 0.0) -> None:
        """The job's result.json from the trials on hand; while running at most once per ``every_s``."""
        if finished_at is None and time.monotonic() - self._last_write < every_s:
            return
        self._last_write = time.monotonic()
        agent = (self.config.get("agents") or [{}])[0]
        task = (self.config.get("tasks") or [{}])[0]
        atomic_write_json(
            self.path / "result.json",
            job_result(
                job_id=self.id,
                started_at=self.started_at,
                finished_at=finished_at,
                n_total_trials=int((self.config.get("seeds") or {}).get("count", len(self.trials))),
                trials=list(self.trials.values()),
                key=eval_key(str(agent.get("name", "?")), str(task.get("name", "?"))),
            ),
        )

    def finish(self, summary: Mapping[str, Any], env_cls: type | None) -> dict[str, Any]:
        """Write the final result.json and summary.json; returns the summary (scrubbed)."""
        self.write_result(now_iso())
        full = {**summary, "job_name": self.path.name, "job_dir": str(self.path),
                **summarize_trials(list(self.trials.values()), env_cls)}
        atomic_write_json(self.path / "summary.json", full)
        return scrub(full)

    def errors(self) -> dict[str, list[str]]:
        """Distinct error messages of the errored trials -> the trials that raised them."""
        out: dict[str, list[str]] = {}
        for name, t in sorted(self.trials.items()):
            info = t.get("exception_info")
            if info:
                out.setdefault(f"{info['exception_type']}: {info['exception_message']}", []).append(name)
        return out


def check_job_name(name: str) -> None:
    """A job name is one folder name inside the jobs folder: not empty, no path separator, not ``.`` or
    ``..`` (so ``--job`` never writes outside ``--out``)."""
    seps = {"/", os.sep, os.altsep} - {None}
    if not isinstance(name, str) or name in ("", ".", "..") or any(sep in name for sep in seps) or "\0" in name:
        raise JobFolderError(
            f"--job {name!r}: a job name is one folder name inside --out (no '/', not '.' or '..', not an "
            "absolute path), e.g. --job cooking-local; choose the parent folder with --out"
        )


def _resumable(out: Path, name: str | None, config: Mapping[str, Any]) -> Path:
    """The job ``--resume`` continues, which must exist: the one named, else the latest that ran the same
    setup."""
    if name is None:
        found = _find_resumable(out, config)
        if found is None:
            raise JobFolderError(
                f"--resume: no job in {out} ran this task, options, policy and seeds; drop --resume to start a "
                "new job, or name the job to continue with --job NAME"
            )
        return found
    if not (out / name).exists():
        jobs = sorted(d.name for d in out.iterdir() if is_job_dir(d)) if out.is_dir() else []
        raise JobFolderError(
            f"--resume: there is no job {name!r} in {out} (its jobs: {', '.join(jobs[:10]) or 'none'}"
            f"{' ...' if len(jobs) > 10 else ''}); drop --resume to start it, or pass the --out and --job of "
            "the job to continue"
        )
    return out / name


def _check_out_dir(out: Path) -> None:
    """A clear error when the jobs folder cannot hold jobs (a file, unwritable, a missing parent we cannot make)."""
    if out.exists() and not out.is_dir():
        raise JobFolderError(f"--out {out} is a file, not a folder; pass a folder for the job folders (e.g. --out jobs)")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise JobFolderError(_unwritable(out, exc)) from exc
    if not os.access(out, os.W_OK | os.X_OK):
        raise JobFolderError(f"--out {out}: no permission to write there; pass a folder you can write (e.g. --out jobs)")


def _unwritable(path: Path, exc: OSError) -> str:
    return (
        f"cannot write the job folder at {path} ({exc.strerror or exc}); "
        "pass --out with a folder you can write (e.g. --out jobs or --out ~/s1gym-jobs)"
    )


def _comparable(config: Mapping[str, Any]) -> dict[str, Any]:
    data = scrub(config)
    return {k: data.get(k) for k in RESUME_KEYS}


def _find_resumable(out: Path, config: Mapping[str, Any]) -> Path | None:
    if not out.is_dir():
        return None
    want = _comparable(config)
    matches = [d for d in out.iterdir() if is_job_dir(d) and _comparable(read_json(d / "config.json")) == want]
    return max(matches, key=lambda d: d.stat().st_mtime, default=None)
