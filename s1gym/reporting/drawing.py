"""Drawing on matplotlib: the figure canvas and the two panels the pictures are made of.

:func:`draw_solve_curves` draws solve-rate curves (:mod:`s1gym.reporting.curves`) against the call
budget, :func:`draw_scores` the score distribution of each arm (:mod:`s1gym.reporting.arms`).
matplotlib is imported only when a picture is drawn (``import s1gym`` stays light) and always renders
with the Agg canvas (no display, no pyplot state), so it works on a headless machine and inside a
worker process.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from s1gym.reporting.arms import Arm
from s1gym.reporting.curves import Curve

__all__ = [
    "BUDGET_AXIS",
    "DPI",
    "MIN_RIGHT",
    "SOLVED_AXIS",
    "WIDTH_IN",
    "check_out_path",
    "draw_scores",
    "draw_solve_curves",
    "figure_size",
    "new_figure",
    "save",
    "wrap",
]

#: Inches and dots per inch of every figure: a PNG of WIDTH*DPI pixels across.
WIDTH_IN = 13.0
DPI = 100
#: The budget axis runs to at least this many calls (a log axis needs a decade to read).
MIN_RIGHT = 10
BUDGET_AXIS = "inner-policy call budget b per game (calls to the decision model, log scale)"
SOLVED_AXIS = "games solved within b calls"


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
    ax.set_yticks(ys, [wrap(_with_errors(a), 42) for a in arms], fontsize=8)
    ax.set_ylim(-0.6, len(arms) - 0.4)
    ax.set_xlim(-0.05, 1.05)
    ax.set_xlabel("score per episode (the task's own score, 0 to 1)")
    ax.set_title("score: points = episodes, box = quartiles, ◆ = mean [95 % bootstrap CI]", fontsize=9)
    ax.grid(True, axis="x", alpha=0.4)


def _with_errors(arm: Arm) -> str:
    n = len(arm.scores)
    text = f"{arm.label} (n={n}"
    return text + (f", {arm.errors} errored, left out)" if arm.errors else ")")


def wrap(text: str, width: int) -> str:
    """``text`` in lines of at most ``width`` characters (long words broken, not hyphens)."""
    return "\n".join(textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False)) or text
