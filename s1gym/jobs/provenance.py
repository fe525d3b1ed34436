"""Whether a job's shipped model was fitted on the games it played: the notice summary.json holds and
``s1 run`` and ``s1 table`` print.

A family may default its tasks to the fold its shipped models were fitted on (the TextWorldExpress games
default to ``fold="train"``), so ``s1 run <task> --policy local`` can score a model on its own training
games unless told ``--option fold=test``. The model files carry their provenance (``provenance.fold``, or
``provenance.split``); this module compares it with the options a job ran with and says so plainly.

A shipped model takes part when the policy is ``local`` without a model of its own (``pairs``), or when a
Search wrapper uses the task's learned progress estimate (``heuristic`` ``auto``, its default, or
``progress``), which lives in the same file (both found through :mod:`s1gym.registration`). Not detected: a
split reached through an environment variable with no ``data_dir``/``split`` option (the job config does
not record the variable).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from s1gym import registration

__all__ = ["config_notices", "fitted_on_played", "notice_lines"]

#: Search's heuristics that read the task's learned progress estimate (wrappers/_search_run.py).
ESTIMATE_HEURISTICS = ("auto", "progress")


@cache
def _provenance(model_file: Path) -> dict[str, Any]:
    try:
        data = json.loads(model_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    provenance = data.get("provenance") if isinstance(data, Mapping) else None
    return dict(provenance) if isinstance(provenance, Mapping) else {}


def _models_used(task: str, policy: str, policy_options: Mapping[str, Any],
                 wrappers: Sequence[tuple[str, Mapping[str, Any]]]) -> list[tuple[str, Path]]:
    """(what, model file) for each shipped model of the task that the agent reads."""
    model_file = registration.model_file(task)
    if model_file is None:
        return []
    local = policy == "local" and policy_options.get("pairs") is None
    estimate = registration.progress_estimate(task) is not None and any(
        kind == "search" and options.get("heuristic", "auto") in ESTIMATE_HEURISTICS for kind, options in wrappers)
    if local and estimate:
        return [("Local's shipped model and Search's progress estimate", model_file)]
    if local:
        return [("Local's shipped model", model_file)]
    return [("Search's learned progress estimate", model_file)] if estimate else []


def fitted_on_played(cls: type | None, options: Mapping[str, Any], policy: str,
                     policy_options: Mapping[str, Any] | None = None,
                     wrappers: Sequence[tuple[str, Mapping[str, Any]]] = ()) -> list[str]:
    """One plain sentence per shipped model of task class ``cls`` the agent reads that was fitted on the fold
    or split these ``options`` play (``[]`` when none was: a held-out score)."""
    if cls is None:
        return []
    task = getattr(cls, "task_name", cls.__name__)
    notices = []
    for what, model_file in _models_used(task, policy, dict(policy_options or {}), wrappers):
        provenance = _provenance(model_file)
        fold, split = provenance.get("fold"), provenance.get("split")
        played_split = options.get("split") or ("valid_seen" if options.get("data_dir") else None)
        if fold is not None and options.get("fold") == fold:
            notices.append(
                f"{what} for {task} was fitted on {fold}-fold games, the fold these seeds played: the "
                "score is on its training games, not held-out ones (held out: --option fold=test)"
            )
        elif split is not None and played_split == split:
            notices.append(
                f"{what} for {task} was fitted on the {split} games played here: the score is on its "
                "training games, not held-out ones"
            )
    return notices


def config_notices(config: Mapping[str, Any], cls: type | None) -> list[str]:
    """:func:`fitted_on_played` for a job's config.json (its resolved options and agent description)."""
    task = (config.get("tasks") or [{}])[0]
    agent = (config.get("agents") or [{}])[0].get("s1gym") or {}
    options = task.get("resolved_options") or task.get("options") or {}
    wrappers = [(str(w.get("kind")), dict(w.get("options") or {})) for w in agent.get("wrappers") or ()]
    policy, policy_options = str(agent.get("policy", "?")), agent.get("policy_options") or {}
    return fitted_on_played(cls, options, policy, policy_options, wrappers)


def notice_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The notices of table rows (each row's ``fitted_on_played``), one line each, naming the row."""
    lines = []
    for r in rows:
        for notice in r.get("fitted_on_played") or ():
            lines.append(f"note ({r.get('task', '?')}, {r.get('label', '?')}): {notice}")
        if r.get("repeated_episodes"):
            lines.append(f"note ({r.get('task', '?')}, {r.get('label', '?')}): {r['repeated_episodes']} of its "
                         f"episodes replayed a game already played (the task has a finite list of games): "
                         f"{r['distinct_games']} distinct games; its score and interval are over the games, each "
                         f"game's episodes averaged first")
    return lines
