"""``s1 table``: one row per distinct setup over any number of job folders.

A setup is the task with every option in force (defaults resolved), the policy
with its options (model, base URL...) and the wrappers with theirs
(:mod:`s1gym.runner.agent`). Jobs of one setup pool their trials; a seed played more
than once under one setup counts once (its newest trial), and the row says how
many repeats it left out. The rows show the options that tell them apart.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from s1gym import jobs
from s1gym.jobs.provenance import fitted_on_played, notice_lines
from s1gym.registration import env_class_or_none
from s1gym.runner.agent import AgentDescription

__all__ = [
    "COLUMNS", "options_text", "policy_text", "print_rows", "row_cells", "rows_for", "setup_groups", "table_rows",
]


def _setup_of(config: Mapping[str, Any]) -> tuple[str, dict[str, Any], AgentDescription]:
    """(task id, options in force, agent) of a job config; older configs lack the resolved parts."""
    task = (config.get("tasks") or [{}])[0]
    agent = (config.get("agents") or [{}])[0]
    options = task.get("resolved_options") or task.get("options") or {}
    if isinstance(agent.get("s1gym"), Mapping):
        description = AgentDescription.from_dict(agent["s1gym"])
    else:  # written before agents were described: name and wrapper names only
        wrappers = tuple((w, {}) for w in agent.get("wrappers") or ())
        description = AgentDescription(str(agent.get("name", "?")).split("+")[0], dict(agent.get("kwargs") or {}), wrappers)
    return str(task.get("name", "?")), dict(options), description


def table_rows(dirs: Sequence[str | Path]) -> list[dict[str, Any]]:
    """One row per setup over every job under ``dirs``."""
    return rows_for(setup_groups(dirs))


def setup_groups(dirs: Sequence[str | Path]) -> list[dict[str, Any]]:
    """The setups over every job under ``dirs``, in row order: ``env_id``, ``options``, ``agent`` and
    ``by_seed`` (seed -> the trial's result.json). ``rows_for`` of this list gives the rows in the
    same order, so row i summarizes ``by_seed`` of group i (``s1gym.reporting.plots`` draws the trials)."""
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    for config, trials in jobs.iter_job_trials(jobs.find_jobs(dirs), jobs.summary_digest):
        env_id, options, agent = _setup_of(config)
        key = (env_id, json.dumps(options, sort_keys=True, default=repr), agent.key())
        group = groups.setdefault(key, {"env_id": env_id, "options": options, "agent": agent, "by_seed": {}, "repeats": 0})
        for t in trials:
            seed = jobs.seed_of(t)
            old = group["by_seed"].get(seed)
            if old is not None:
                group["repeats"] += 1
                if str(old.get("finished_at") or "") >= str(t.get("finished_at") or ""):
                    continue
            group["by_seed"][seed] = t
    return sorted(groups.values(), key=_row_order)


def _row_order(group: Mapping[str, Any]) -> tuple[str, str, str]:
    return group["env_id"], group["agent"].label, json.dumps(group["options"], sort_keys=True, default=repr)


def rows_for(groups: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for g in sorted(groups, key=_row_order):
        trials = list(g["by_seed"].values())
        cls = env_class_or_none(g["env_id"])
        s = jobs.summarize_trials(trials, cls)
        agent = g["agent"]
        rows.append(
            {
                "task": short_task(g["env_id"]),
                "env_id": g["env_id"],
                "options": g["options"],
                "policy": g["agent"].policy,
                "policy_options": dict(g["agent"].policy_options),
                "wrappers": [{"kind": k, "options": dict(o)} for k, o in g["agent"].wrappers],
                "label": g["agent"].label,
                "repeated_seeds": g["repeats"],
                **{k: s[k] for k in SUMMARY_KEYS},
                # a shipped model fitted on the games this row played (issue 40): said under the table
                "fitted_on_played": fitted_on_played(cls, g["options"], agent.policy, agent.policy_options,
                                                     agent.wrappers),
            }
        )
    _mark_distinguishing(rows)
    return rows


SUMMARY_KEYS = (
    "episodes", "mean_score", "ci95", "wins", "mean_steps", "mean_latency_s", "median_latency_s",
    "mean_search_s", "calls", "input_tokens", "output_tokens", "cost_usd", "errors", "failures", "agreement_at_1",
    "mean_expert_p", "distinct_games", "repeated_episodes", "games_mean_score", "games_ci95",
)


def short_task(env_id: str) -> str:
    return env_id.split(":")[-1].removeprefix("s1/").removesuffix("-v0")


def _differing(dicts: Sequence[Mapping[str, Any]]) -> set[str]:
    keys = {k for d in dicts for k in d}
    return {k for k in keys if len({json.dumps(d.get(k), sort_keys=True, default=repr) for d in dicts}) > 1}


def _mark_distinguishing(rows: list[dict[str, Any]]) -> None:
    """Fill ``setup``: the task options, policy options and wrapper options that differ between rows
    of the same task (everything else is the same for all of them)."""
    by_task: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_task.setdefault(r["env_id"], []).append(r)
    for same_task in by_task.values():
        task_keys = _differing([r["options"] for r in same_task])
        policy_keys = _differing([r["policy_options"] for r in same_task])
        flat = [{f"{w['kind']}.{k}": v for w in r["wrappers"] for k, v in w["options"].items()} for r in same_task]
        wrapper_keys = _differing(flat)
        for r, f in zip(same_task, flat, strict=True):
            r["task_setup"] = options_text({k: r["options"][k] for k in sorted(task_keys) if k in r["options"]})
            r["policy_setup"] = options_text({k: r["policy_options"][k] for k in sorted(policy_keys) if k in r["policy_options"]})
            r["wrapper_setup"] = ",".join(_wrapper_text(w, wrapper_keys) for w in r["wrappers"]) or "-"


def _wrapper_text(wrapper: Mapping[str, Any], shown: set[str]) -> str:
    kind = wrapper["kind"]
    opts = {k: v for k, v in wrapper["options"].items() if f"{kind}.{k}" in shown}
    return f"{kind}({options_text(opts)})" if opts else kind


def options_text(d: Mapping[str, Any]) -> str:
    """``k=v k=v`` in the mapping's order (how the table and the plots name options)."""
    return " ".join(f"{k}={v}" for k, v in d.items())


COLUMNS = (
    "task", "policy", "wrappers", "episodes", "score [95% CI]", "wins", "steps",
    "latency mean / median", "search s", "calls", "tokens in/out", "cost $", "not won", "invalid", "errors",
    "agree@1", "p(expert)",
)


def _seconds(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x * 1000:.2f} ms" if x < 1 else f"{x:.2f} s"


def policy_text(r: Mapping[str, Any]) -> str:
    """The policy cell: its name and the policy options that tell the rows of its task apart."""
    return r["policy"] + (f" ({r['policy_setup']})" if r.get("policy_setup") else "")


def row_cells(r: Mapping[str, Any]) -> list[str]:
    # seeds that replayed a game of a finite list: the score and its interval are over distinct games
    by_game = bool(r.get("repeated_episodes"))
    mean_score, (lo, hi) = (r["games_mean_score"], r["games_ci95"]) if by_game else (r["mean_score"], r["ci95"])
    score = "-" if mean_score is None else f"{mean_score:.3f} [{lo:.3f}, {hi:.3f}]"
    task = r["task"] + (f" {r['task_setup']}" if r.get("task_setup") else "")
    policy = policy_text(r)
    episodes = str(r["episodes"]) + (f" ({r['distinct_games']} games)" if by_game else "")
    episodes += f" (+{r['repeated_seeds']} repeats left out)" if r["repeated_seeds"] else ""
    return [
        task,
        policy,
        r.get("wrapper_setup") or "-",
        episodes,
        score,
        str(r["wins"]),
        "-" if r["mean_steps"] is None else f"{r['mean_steps']:.1f}",
        f"{_seconds(r['mean_latency_s'])} / {_seconds(r['median_latency_s'])}",
        _seconds(r["mean_search_s"]),
        str(r["calls"]),
        f"{r['input_tokens']}/{r['output_tokens']}",
        f"{r['cost_usd']:.4f}",
        *_failure_cells(r),
        _share(r.get("agreement_at_1")),
        _share(r.get("mean_expert_p")),
    ]


def _failure_cells(r: Mapping[str, Any]) -> list[str]:
    """The failures by kind: episodes played out without a win, invalid decisions (in how many episodes),
    and the errored episodes split into policy, engine and other errors."""
    f = r.get("failures") or {}
    invalid = f.get("invalid_decisions", 0)
    kinds = [f"{f[k]} {k.removesuffix('_errors')}" for k in ("policy_errors", "engine_errors", "other_errors")
             if f.get(k)]
    return [str(f.get("task", "-")), f"{invalid} in {f.get('invalid_episodes', 0)} ep" if invalid else "0",
            str(r["errors"]) + (f" ({', '.join(kinds)})" if kinds else "")]


def _share(x: float | None) -> str:
    """A share in [0, 1] as a cell; "–" where the task has no expert (agreement columns)."""
    return "–" if x is None else f"{x:.3f}"


def print_rows(rows: Sequence[Mapping[str, Any]], fmt: str, title: str | None = None) -> None:
    """Print ``rows`` as a rich table, markdown, csv or json."""
    if fmt == "json":
        print(json.dumps(jobs.to_jsonable(list(rows)), indent=2))
    elif fmt == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow(COLUMNS)
        for r in rows:
            writer.writerow(row_cells(r))
    elif fmt == "markdown":
        print("| " + " | ".join(COLUMNS) + " |")
        print("|" + "|".join("---" for _ in COLUMNS) + "|")
        for r in rows:
            print("| " + " | ".join(row_cells(r)) + " |")
        for line in notice_lines(rows):
            print(f"\n{line}")
    else:
        from rich.table import Table

        table = Table(title=title)
        for i, col in enumerate(COLUMNS):
            table.add_column(col, justify="left" if i < 3 else "right")
        for r in rows:
            table.add_row(*row_cells(r))
        console().print(table)
        for line in notice_lines(rows):
            console().print(line, style="bold yellow", markup=False, highlight=False)


def console() -> Any:
    """A rich console; wide when output is piped (rich's 80 columns would crush the table)."""
    from rich.console import Console

    c = Console()
    return c if c.is_terminal else Console(width=250)
