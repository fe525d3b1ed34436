"""Pictures of job folders: solve rate against the call budget, and the score distribution per arm.

``s1 table DIR... --plot OUT.png`` and ``s1 run ... --plot OUT.png`` draw them (:func:`plot_jobs`);
``bench/plot_search.py`` draws the same solve-rate curves (:func:`solve_curve`,
:func:`draw_solve_curves`) from the search benchmark's per-game JSON lines.

An *arm* is one ``s1 table`` row: one setup (task with its options, policy with its options,
wrappers with theirs) pooled over every job that ran it, labelled as the table labels it. Rows of
different tasks are not comparable, so each task gets its own figure. matplotlib is imported only
when a picture is drawn (``import s1gym`` stays light) and always renders with the Agg canvas (no
display, no pyplot state), so it works on a headless machine and inside a worker process.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from s1gym import jobs
from s1gym.reporting.table import options_text, policy_text, rows_for, setup_groups, short_task

__all__ = [
    "Arm",
    "Curve",
    "TaskFigure",
    "check_out_path",
    "draw_solve_curves",
    "figure_paths",
    "figure_size",
    "plot_jobs",
    "save",
    "solve_curve",
]

#: Inches and dots per inch of every figure: a PNG of WIDTH*DPI pixels across.
WIDTH_IN = 13.0
DPI = 100
#: The budget axis runs to at least this many calls (a log axis needs a decade to read).
MIN_RIGHT = 10
BUDGET_AXIS = "inner-policy call budget b per game (calls to the decision model, log scale)"
SOLVED_AXIS = "games solved within b calls"


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Curve:
    """The share of an arm's games won within b inner-policy calls, for b from 1 on.

    A step function kept at its steps: ``solve_rate[i]`` holds for ``budgets[i] <= b <
    budgets[i+1]`` (and past the last step); ``budgets`` starts at 1 and, for capped games, ends
    at the cap. Use :meth:`at` for any b.
    """

    label: str
    budgets: np.ndarray
    solve_rate: np.ndarray
    games: int
    won: int
    #: the call cap the games were played under: the curve says nothing past it; ``None`` when they
    #: had none (more calls would not change them, so the curve holds for every budget)
    cap: int | None

    def at(self, budget: int | Sequence[int] | np.ndarray) -> np.ndarray:
        """The solve rate within ``budget`` calls (0 below 1 call; past the cap unknown: ValueError)."""
        b = np.asarray(budget)
        if self.cap is not None and np.any(b > self.cap):
            raise ValueError(f"{self.label}: the curve ends at {self.cap} calls (its games' call cap)")
        i = np.searchsorted(self.budgets, b, side="right") - 1
        return np.where(i >= 0, self.solve_rate[np.maximum(i, 0)], 0.0)


def solve_curve(calls: Sequence[int], won: Sequence[bool], cap: int | None = None, label: str = "") -> Curve:
    """The solve-rate curve of games that used ``calls[i]`` inner-policy calls and were ``won[i]``.

    A game won with c calls counts as solved for every budget b >= c (one with 0 calls, from b = 1),
    over all the games: the curve rises from the share won within 1 call to the share won in the
    end. Why one run at the largest cap gives the whole curve, rather than one run per cap: Search
    is deterministic and its expansion order does not depend on the call cap, only where it stops.
    A cap below the cap it ran under cuts the same sequence of calls short (each search's budget is
    ``min(budget, calls left)`` and grows by doubling only up to what is left), so a game won with c
    calls under a 1000-call cap is won, move for move, under any cap >= c, and a game not won within
    c calls is not won under a cap of c. A policy without Search is the same: a cap only ends its
    episode early. This holds for deterministic (or seeded) policies and without ``max_seconds``,
    whose stop depends on the machine's speed. ``cap`` is the call cap the games were played under
    (``None``: none, so the curve holds for every budget).
    """
    name = f"solve_curve ({label})" if label else "solve_curve"
    calls_a = np.asarray(calls, dtype=np.int64)
    won_a = np.asarray(won, dtype=bool)
    if calls_a.shape != won_a.shape or calls_a.ndim != 1:
        raise ValueError(
            f"{name}: calls and won must be equal-length lists, got {calls_a.shape} and {won_a.shape}"
        )
    if len(calls_a) == 0:
        raise ValueError(f"{name}: no games to draw a curve from")
    wins = np.sort(np.maximum(calls_a[won_a], 1))
    if cap is not None:
        cap = int(cap)
        if cap < 1:
            raise ValueError(f"{name}: the call cap must be at least 1, got {cap}")
        if wins.size and wins[-1] > cap:
            raise ValueError(
                f"{name}: a game was won with {wins[-1]} calls, past the call cap {cap}; "
                "give the call cap the games were played under"
            )
    budgets = np.unique(np.concatenate([[1], wins, [cap] if cap is not None else []]))
    rate = np.searchsorted(wins, budgets, side="right") / len(calls_a)
    return Curve(label, budgets, rate, len(calls_a), int(wins.size), cap)


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


# --------------------------------------------------------------------------
# Drawing
# --------------------------------------------------------------------------


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "pictures need matplotlib: pip install 's1gym[plot]' (scripts/setup.sh installs it)"
        ) from None
    return matplotlib


def check_out_path(path: str | Path) -> Path:
    """``path`` as a picture file name, or a ValueError naming the problem (checked before a job runs)."""
    _matplotlib()
    from matplotlib.backend_bases import FigureCanvasBase

    path = Path(path)
    kinds = FigureCanvasBase.get_supported_filetypes()
    suffix = path.suffix.lower().lstrip(".")
    if path.is_dir() or suffix not in kinds:
        raise ValueError(
            f"--plot {path}: give a picture file name ending in .png (or another type matplotlib "
            "writes: .svg, .pdf, .jpg...), e.g. jobs/table.png"
        )
    return path


def figure_size(n_arms: int) -> tuple[float, float]:
    """(width, height) in inches of a task's figure with ``n_arms`` arms: taller with more arms."""
    return WIDTH_IN, max(5.0, 1.8 + 0.45 * n_arms)


def new_figure(width_in: float, height_in: float, nrows: int = 1, ncols: int = 1) -> tuple[Any, list[Any]]:
    """A figure of exactly that size (no tight bbox: the PNG is width*DPI by height*DPI pixels) on the Agg
    canvas, and its axes row by row."""
    _matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, list(fig.subplots(nrows, ncols, squeeze=False).flat)


def save(fig: Any, path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    return path


def draw_solve_curves(
    ax: Any,
    curves: Sequence[Curve],
    right: int | None = None,
    styles: Sequence[Mapping[str, Any]] | None = None,
) -> None:
    """Step curves of ``curves`` on a log budget axis from 1 to past ``right`` (default: the last step).

    A capped curve ends at its cap with a bar (past it nothing is known); an uncapped one runs on to the
    axis's end. The legend gives each curve's games won of games played.
    """
    from matplotlib.ticker import PercentFormatter

    right = max([right or 0, MIN_RIGHT] + [int(c.budgets[-1]) for c in curves])
    x_max = right * 1.3  # room after the last step, so a rise at `right` shows
    for i, c in enumerate(curves):
        style = {"color": f"C{i % 10}", "linewidth": 2.0, **(styles[i] if styles else {})}
        xs, ys = c.budgets, c.solve_rate
        if c.cap is None:
            xs, ys = np.append(xs, x_max), np.append(ys, ys[-1])
        (line,) = ax.step(xs, ys, where="post", label=f"{c.label}: {c.won}/{c.games}", **style)
        if c.cap is not None:
            ax.plot([c.cap], [ys[-1]], marker="|", markersize=12, markeredgewidth=2, color=line.get_color())
    ax.set_xscale("log")
    ax.set_xlim(0.8, x_max)
    ax.set_ylim(-0.02, 1.02)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel(BUDGET_AXIS)
    ax.set_ylabel(SOLVED_AXIS)
    ax.grid(True, which="major", alpha=0.4)
    ax.grid(True, which="minor", axis="x", alpha=0.15)
    if curves:  # below the axes: long arm labels never hide a curve
        ax.legend(
            loc="upper left",
            bbox_to_anchor=(0.0, -0.13),
            fontsize=8,
            title="games won / played",
            title_fontsize=8,
            alignment="left",
            frameon=False,
        )


def draw_scores(ax: Any, arms: Sequence[Arm]) -> None:
    """Per arm (top to bottom, in table order): its episodes' scores as jittered points over a box plot
    (quartiles, whiskers at 1.5 IQR), and a black diamond at the mean with its 95 % bootstrap interval."""
    rng = np.random.default_rng(0)  # fixed jitter: the same jobs give the same picture
    ys = np.arange(len(arms))[::-1]
    for i, (arm, y) in enumerate(zip(arms, ys, strict=True)):
        color = f"C{i % 10}"
        if not len(arm.scores):
            ax.text(0.5, y, "no scored episodes", ha="center", va="center", fontsize=8, color="0.4")
            continue
        ax.boxplot(
            [arm.scores],
            positions=[y],
            orientation="horizontal",
            widths=0.5,
            showfliers=False,
            medianprops={"color": color},
            boxprops={"color": color},
            whiskerprops={"color": color},
            capprops={"color": color},
        )
        jitter = rng.uniform(-0.18, 0.18, size=len(arm.scores))
        ax.scatter(arm.scores, y + jitter, s=14, alpha=0.55, color=color, edgecolors="none", zorder=3)
        if arm.mean_score is not None and arm.ci95[0] is not None:
            lo, hi = arm.ci95
            ax.errorbar(
                [arm.mean_score],
                [y],
                xerr=[[arm.mean_score - lo], [hi - arm.mean_score]],
                fmt="D",
                color="black",
                markersize=6,
                capsize=5,
                elinewidth=1.5,
                zorder=4,
            )
    ax.set_yticks(ys, [_wrap(_with_errors(a), 42) for a in arms], fontsize=8)
    ax.set_ylim(-0.6, len(arms) - 0.4)
    ax.set_xlim(-0.05, 1.05)
    ax.set_xlabel("score per episode (the task's own score, 0 to 1)")
    ax.set_title("score: points = episodes, box = quartiles, ◆ = mean [95 % bootstrap CI]", fontsize=9)
    ax.grid(True, axis="x", alpha=0.4)


def _shared_text(arms: Sequence[Arm]) -> str:
    """The settings every arm shares (task options, wrapper options), as a second title line."""
    parts = [
        options_text(_shared([a.options for a in arms])),
        options_text(_shared([a.wrapper_options for a in arms])),
    ]
    text = "; ".join(p for p in parts if p)
    return "\n" + _wrap(f"every arm: {text}", 130) if text else ""


def _shared(dicts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    first = dicts[0]
    return {k: v for k, v in first.items() if v is not None and all(k in d and d[k] == v for d in dicts[1:])}


def _with_errors(arm: Arm) -> str:
    n = len(arm.scores)
    text = f"{arm.label} (n={n}"
    return text + (f", {arm.errors} errored, left out)" if arm.errors else ")")


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False)) or text


# --------------------------------------------------------------------------
# Job folders
# --------------------------------------------------------------------------


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
