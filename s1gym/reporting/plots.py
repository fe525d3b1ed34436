"""Pictures of job folders: solve rate against the call budget, and the score distribution per arm.

``s1 table DIR... --plot OUT.png`` and ``s1 run ... --plot OUT.png`` draw them (:func:`plot_jobs`);
``bench/plot_search.py`` draws the same solve-rate curves (:func:`solve_curve`,
:func:`draw_solve_curves`) from the search benchmark's per-game JSON lines.

An *arm* is one ``s1 table`` row: one setup (task with its options, policy with its options,
wrappers with theirs) pooled over every job that ran it, labelled as the table labels it. Rows of
different tasks are not comparable, so each task gets its own figure. This module lays out and writes
each task's figure and re-exports its parts: the curves (:mod:`s1gym.reporting.curves`), the arms
(:mod:`s1gym.reporting.arms`) and the drawing (:mod:`s1gym.reporting.drawing`: matplotlib is imported
only when a picture is drawn, on the Agg canvas, so it works on a headless machine and inside a worker
process).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from s1gym.reporting import drawing
from s1gym.reporting.arms import Arm, arm_curves, arm_label, arms_by_task
from s1gym.reporting.curves import Curve, solve_curve
from s1gym.reporting.drawing import (  # noqa: F401 (re-exported: __all__ takes drawing's list)
    BUDGET_AXIS,
    DPI,
    MIN_RIGHT,
    SOLVED_AXIS,
    WIDTH_IN,
    check_out_path,
    draw_scores,
    draw_solve_curves,
    figure_size,
    new_figure,
    save,
    wrap,
)
from s1gym.reporting.table import options_text, short_task

__all__ = [
    "Arm",
    "Curve",
    "TaskFigure",
    "arm_curves",
    "arm_label",
    "arms_by_task",
    "figure_paths",
    "plot_jobs",
    "solve_curve",
]
# The drawing's names too (``+=`` is the form type checkers read as a re-export).
__all__ += drawing.__all__


@dataclass(frozen=True)
class TaskFigure:
    """A task's figure as written: where, the arms drawn and their solve-rate curves."""

    path: Path
    env_id: str
    arms: list[Arm]
    curves: list[Curve]


def figure_paths(out: str | Path, env_ids: Sequence[str]) -> dict[str, Path]:
    """Where each task's figure goes: ``out`` itself for one task; for several, ``out`` with the task's
    short name before the suffix (``jobs/table.png`` -> ``jobs/table-CookingWorld.png``,
    ``jobs/table-Blackjack.png``)."""
    out = Path(out)
    if len(env_ids) == 1:
        return {env_ids[0]: out}
    paths: dict[str, Path] = {}
    for env_id in env_ids:
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", short_task(env_id)).strip("_") or "task"
        path = out.with_name(f"{out.stem}-{name}{out.suffix}")
        while path in paths.values():  # two ids with the same short name (another namespace or version)
            name += "_"
            path = out.with_name(f"{out.stem}-{name}{out.suffix}")
        paths[env_id] = path
    return paths


def plot_jobs(dirs: Sequence[str | Path], out: str | Path) -> list[TaskFigure]:
    """Draw every task of the jobs under ``dirs`` (see :func:`figure_paths` for the file names): on the
    left the arms' solve rate against the inner-policy call budget, on the right their score
    distributions. Returns what was drawn; raises FileNotFoundError when there are no jobs."""
    out = check_out_path(out)
    by_task = arms_by_task(dirs)
    if not by_task:
        raise FileNotFoundError(f"no job folders under {', '.join(map(str, dirs))} (run `s1 run ...` first)")
    figures = []
    for env_id, path in figure_paths(out, list(by_task)).items():
        arms = by_task[env_id]
        curves = arm_curves(arms)
        fig, (left, right) = new_figure(*figure_size(len(arms)), ncols=2)
        colors = [{"color": f"C{i % 10}"} for i, a in enumerate(arms) if len(a.scores)]  # as in draw_scores
        draw_solve_curves(left, curves, styles=colors)
        left.set_title("solve rate: a game won with c calls counts for every budget b >= c", fontsize=9)
        draw_scores(right, arms)
        fig.suptitle(
            f"{short_task(env_id)}: {len(arms)} arm{'s' * (len(arms) != 1)}{_shared_text(arms)}", fontsize=11
        )
        save(fig, path)
        figures.append(TaskFigure(path, env_id, arms, curves))
    return figures


def _shared_text(arms: Sequence[Arm]) -> str:
    """The settings every arm shares (task options, wrapper options), as a second title line."""
    parts = [
        options_text(_shared([a.options for a in arms])),
        options_text(_shared([a.wrapper_options for a in arms])),
    ]
    text = "; ".join(p for p in parts if p)
    return "\n" + wrap(f"every arm: {text}", 130) if text else ""


def _shared(dicts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    first = dicts[0]
    return {k: v for k, v in first.items() if v is not None and all(k in d and d[k] == v for d in dicts[1:])}
