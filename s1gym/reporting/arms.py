"""Arms: the ``s1 table`` rows of job folders with their scored episodes, what the pictures draw.

An *arm* is one ``s1 table`` row: one setup (task with its options, policy with its options, wrappers
with theirs) pooled over every job that ran it, labelled as the table labels it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from s1gym import jobs
from s1gym.reporting.curves import Curve, solve_curve
from s1gym.reporting.table import policy_text, rows_for, setup_groups

__all__ = ["Arm", "arm_curves", "arm_label", "arms_by_task"]


@dataclass(frozen=True)
class Arm:
    """One ``s1 table`` row with its episodes: what the pictures draw."""

    label: str
    #: per scored episode (errored ones are left out, as in the table's score and wins)
    scores: np.ndarray
    calls: np.ndarray
    won: np.ndarray
    errors: int
    #: the table's mean score and its 95 % bootstrap interval (:func:`s1gym.stats.bootstrap_ci`)
    mean_score: float | None
    ci95: tuple[float | None, float | None]
    #: the episode's call cap (Search's ``episode_budget``), ``None`` when it had none
    call_cap: int | None
    #: the task options in force and the wrappers' options as ``kind.option`` (the figure's title
    #: names those every arm shares; the labels name those that differ, as ``s1 table`` does)
    options: Mapping[str, Any]
    wrapper_options: Mapping[str, Any]


def arm_label(row: Mapping[str, Any]) -> str:
    """``policy (its distinguishing options) + wrappers``, after the task options that tell rows apart."""
    label = policy_text(row)
    wrappers = row.get("wrapper_setup") or "-"
    if wrappers != "-":
        label += f" + {wrappers}"
    return f"{row['task_setup']}: {label}" if row.get("task_setup") else label


def _call_cap(row: Mapping[str, Any]) -> int | None:
    """The outermost Search's ``episode_budget``: the calls a whole episode may use."""
    for wrapper in row.get("wrappers") or ():
        if wrapper.get("kind") == "search":
            cap = (wrapper.get("options") or {}).get("episode_budget")
            return int(cap) if isinstance(cap, int) and not isinstance(cap, bool) else None
    return None


def _arm(row: Mapping[str, Any], group: Mapping[str, Any]) -> Arm:
    trials = sorted(group["by_seed"].values(), key=lambda t: (jobs.seed_of(t), t["trial_name"]))
    scored = [t for t in trials if not t.get("exception_info")]
    meta = [jobs.trial_metadata(t) for t in scored]
    low, high = row["ci95"]
    return Arm(
        label=arm_label(row),
        scores=np.array([jobs.trial_reward(t) for t in scored], dtype=np.float64),
        calls=np.array([int(m.get("n_calls") or 0) for m in meta], dtype=np.int64),
        won=np.array([bool(m.get("won")) for m in meta], dtype=bool),
        errors=len(trials) - len(scored),
        mean_score=row["mean_score"],
        ci95=(low, high),
        call_cap=_call_cap(row),
        options=dict(row["options"]),
        wrapper_options={f"{w['kind']}.{k}": v for w in row["wrappers"] for k, v in w["options"].items()},
    )


def arms_by_task(dirs: Sequence[str | Path]) -> dict[str, list[Arm]]:
    """The arms (``s1 table`` rows, in the table's order) of every job under ``dirs``, by task id."""
    groups = setup_groups(dirs)
    out: dict[str, list[Arm]] = {}
    for row, group in zip(rows_for(groups), groups, strict=True):
        out.setdefault(row["env_id"], []).append(_arm(row, group))
    return out


def arm_curves(arms: Sequence[Arm]) -> list[Curve]:
    """One solve-rate curve per arm with scored episodes; an arm with a call cap ends at it."""
    return [solve_curve(a.calls, a.won, a.call_cap, a.label) for a in arms if len(a.scores)]
