"""Job folders as training data: one row a decision, as Parquet and as chat-format JSONL.

``decisions.parquet`` has one row per decision of every finished trial (errored trials are left out: their
episodes stop where the engine or the policy failed), with the columns of :data:`COLUMNS`:

    job, task, trial, seed, step, observation, candidates, chosen, move, expert, probabilities, reward, done,
    policy

``chosen`` is the index of the move taken among ``candidates``, ``expert`` the index of the task's expert
move where the job asked it (``None`` where the family has no expert or the job ran with
``agreement=False``), ``probabilities`` what the policy gave each candidate, ``reward`` the step's reward and
``done`` whether the episode ended after this decision. It loads with Hugging Face ``datasets``::

    load_dataset("parquet", data_files="DIR/decisions.parquet")["train"]

and with pandas or pyarrow directly. ``chat.jsonl`` holds the same decisions for supervised fine-tuning: a
``messages`` list (system: the task; user: the observation and the numbered candidates; assistant: the
chosen candidate's text) beside ``task``, ``seed`` and ``step``. A job played by the task's expert
(``s1 run TASK --policy rule``) exported this way is an expert dataset.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from s1gym.errors import S1GymError
from s1gym.jobs.episodes import read_episode
from s1gym.jobs.files import read_json
from s1gym.jobs.folder import find_jobs, load_trials

__all__ = ["COLUMNS", "ExportError", "chat_record", "decision_rows", "export_jobs"]

#: The Parquet file's columns, in order.
COLUMNS = ("job", "task", "trial", "seed", "step", "observation", "candidates", "chosen", "move", "expert",
           "probabilities", "reward", "done", "policy")

#: The system turn of the chat records.
SYSTEM = "You are playing {task}. Each turn you read the situation and choose one of the numbered options."


class ExportError(S1GymError, ValueError):
    """The export cannot be written as asked (no pyarrow for Parquet, nothing to export)."""


def _expert_index(tick: Mapping[str, Any]) -> int | None:
    expert = tick.get("expert")
    candidates = tick.get("candidates") or []
    return candidates.index(expert) if isinstance(expert, str) and expert in candidates else None


def decision_rows(job_dir: Path) -> Iterator[dict[str, Any]]:
    """The decisions of one job's finished trials, by seed, as rows with the columns of :data:`COLUMNS`."""
    config = read_json(job_dir / "config.json")
    task = (config.get("tasks") or [{}])[0].get("name", "?")
    policy = ((config.get("agents") or [{}])[0].get("s1gym") or {}).get("label", "?")
    for trial in load_trials(job_dir):
        if trial.get("exception_info"):
            continue
        episode = read_episode(job_dir / trial["trial_name"])
        ticks = episode["ticks"]
        for i, tick in enumerate(ticks):
            yield {
                "job": job_dir.name,
                "task": task,
                "trial": trial["trial_name"],
                "seed": int(episode.get("seed", (trial.get("config") or {}).get("task", {}).get("seed", -1))),
                "step": int(tick.get("t", i)),
                "observation": tick.get("observation") or "",
                "candidates": list(tick.get("candidates") or ()),
                "chosen": int(tick["action"]) if tick.get("action") is not None
                else list(tick.get("candidates") or ()).index(tick["move"]),
                "move": tick.get("move"),
                "expert": _expert_index(tick),
                "probabilities": [float(p) for p in tick.get("probabilities") or ()],
                "reward": None if tick.get("reward") is None else float(tick["reward"]),
                "done": i == len(ticks) - 1,
                "policy": policy,
            }


def chat_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """One decision as a chat for supervised fine-tuning: the situation and options asked, the chosen
    candidate's text answered."""
    options = "\n".join(f"{k}. {text}" for k, text in enumerate(row["candidates"], 1))
    user = f"{row['observation'].strip()}\n\nOptions:\n{options}\n\nReply with the option you choose."
    return {
        "messages": [
            {"role": "system", "content": SYSTEM.format(task=_short(row["task"]))},
            {"role": "user", "content": user},
            {"role": "assistant", "content": row["candidates"][row["chosen"]]},
        ],
        "task": row["task"], "seed": row["seed"], "step": row["step"],
    }


def _short(env_id: str) -> str:
    """A gym id without its namespace and version (``s1/Blackjack-v0`` -> ``Blackjack``)."""
    return re.sub(r"-v\d+$", "", env_id.rsplit("/", 1)[-1])


def _parquet_schema() -> Any:
    import pyarrow as pa

    return pa.schema([
        ("job", pa.string()), ("task", pa.string()), ("trial", pa.string()), ("seed", pa.int64()),
        ("step", pa.int64()), ("observation", pa.string()), ("candidates", pa.list_(pa.string())),
        ("chosen", pa.int64()), ("move", pa.string()), ("expert", pa.int64()),
        ("probabilities", pa.list_(pa.float64())), ("reward", pa.float64()), ("done", pa.bool_()),
        ("policy", pa.string()),
    ])


def _pyarrow() -> Any:
    try:
        import pyarrow.parquet as pq
    except ModuleNotFoundError as exc:
        raise ExportError("writing Parquet needs pyarrow: pip install 's1gym[export]' (or pyarrow), or pass "
                          "--format chat for the JSONL alone") from exc
    return pq


def export_jobs(dirs: Iterable[Path | str], to: Path | str,
                formats: Sequence[str] = ("parquet", "chat")) -> dict[Path, int]:
    """Write the decisions of every job at or under ``dirs`` into folder ``to`` (``decisions.parquet`` and
    ``chat.jsonl``, as ``formats`` asks); returns each file written with its number of rows."""
    unknown = set(formats) - {"parquet", "chat"}
    if unknown or not formats:
        raise ExportError(f"export formats are 'parquet' and 'chat', got {sorted(formats)}")
    pq = _pyarrow() if "parquet" in formats else None  # before any file is written
    jobs = find_jobs(dirs)
    if not jobs:
        raise ExportError(f"no job folders under {', '.join(map(str, dirs))} (run `s1 run ...` first)")
    rows = [row for job in jobs for row in decision_rows(job)]
    to = Path(to)
    to.mkdir(parents=True, exist_ok=True)
    written: dict[Path, int] = {}
    if pq is not None:
        import pyarrow as pa

        path = to / "decisions.parquet"
        pq.write_table(pa.Table.from_pylist(rows, schema=_parquet_schema()), path)
        written[path] = len(rows)
    if "chat" in formats:
        path = to / "chat.jsonl"
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(chat_record(row), ensure_ascii=False) + "\n" for row in rows)
        written[path] = len(rows)
    return written
