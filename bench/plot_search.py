"""Solve rate against the call budget from the search benchmark's per-game JSON lines.

    python bench/search_cooking.py --protocol held-out --policies local,uniform \\
        --priorities phs_h,levin,phs* --json search.jsonl
    python bench/plot_search.py search.jsonl --out docs/search_budget.png

One panel per size (small, medium, large, hard, as present), one step curve per policy x priority: the
share of the panel's games won within b inner-policy calls, for b from 1 to the call cap the games were
played under (``--budget``; default: the most calls any game used, which is the cap when some game spent
it all). One run at the cap gives the whole curve because Search's expansion order does not depend on
the cap, only where it stops (see :func:`s1gym.reporting.plots.solve_curve`). Colour tells the policy, line style
the priority. A game (policy, priority, size, seed) that the file holds more than once counts once, its
last line; the script says how many repeats it left out. One file should hold one protocol: the lines
do not record the fold or the Search options they were played with.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from s1gym.reporting.plots import WIDTH_IN, Curve, check_out_path, draw_solve_curves, new_figure, save, solve_curve
from s1gym.datasets import read_rows

KEYS = ("policy", "priority", "size", "seed", "solved", "calls")
#: the benchmark's sizes in their order; others follow alphabetically
SIZE_ORDER = ("small", "medium", "large", "hard")
PRIORITY_STYLES = {"phs_h": "-", "levin": "--", "phs*": ":"}


def read_games(path: str | Path) -> tuple[list[dict[str, Any]], int]:
    """The games of a JSON-lines file (last line per game) and how many repeated lines were left out."""
    rows, _ = read_rows(path, what="plot_search")  # the project's JSONL reader: clear errors on bad lines
    games: dict[tuple, dict[str, Any]] = {}
    for n, g in enumerate(rows, 1):
        missing = [k for k in KEYS if k not in g]
        if missing:
            raise SystemExit(
                f"{path}: game {n} lacks {', '.join(missing)}; expected bench/search_cooking.py --json lines "
                f"with {', '.join(KEYS)}"
            )
        games[(g["policy"], g["priority"], g["size"], g["seed"])] = g
    return list(games.values()), len(rows) - len(games)


def _ordered(values: Iterable[str], order: Sequence[str]) -> list[str]:
    values = set(values)
    return [v for v in order if v in values] + sorted(values - set(order))


def size_curves(games: Sequence[dict[str, Any]], budget: int) -> dict[str, list[Curve]]:
    """Per size, one solve-rate curve per (policy, priority), policies in order of first appearance."""
    policies = list(dict.fromkeys(g["policy"] for g in games))
    priorities = _ordered((g["priority"] for g in games), tuple(PRIORITY_STYLES))
    out: dict[str, list[Curve]] = {}
    for size in _ordered((g["size"] for g in games), SIZE_ORDER):
        curves = []
        for policy in policies:
            for priority in priorities:
                mine = [
                    g for g in games if (g["size"], g["policy"], g["priority"]) == (size, policy, priority)
                ]
                if mine:
                    curves.append(
                        solve_curve(
                            [g["calls"] for g in mine],
                            [g["solved"] for g in mine],
                            budget,
                            f"{policy} {priority}",
                        )
                    )
        out[size] = curves
    return out


def plot(path: str | Path, out: str | Path, budget: int | None = None) -> dict[str, list[Curve]]:
    """Draw the file's curves to ``out``; returns them by size."""
    out = check_out_path(out)
    games, repeats = read_games(path)
    if repeats:
        print(
            f"plot_search: {repeats} repeated game line(s) left out (the last line of each game counts)",
            file=sys.stderr,
        )
    budget = budget or max(max(int(g["calls"]) for g in games), 1)
    by_size = size_curves(games, budget)
    policies = list(dict.fromkeys(g["policy"] for g in games))
    ncols = min(2, len(by_size))
    nrows = math.ceil(len(by_size) / ncols)
    n_curves = max(len(c) for c in by_size.values())
    fig, axes = new_figure(WIDTH_IN, nrows * (4.2 + 0.17 * n_curves), nrows, ncols)
    for ax, (size, curves) in zip(axes, by_size.items(), strict=False):
        styles = [
            {
                "color": f"C{policies.index(c.label.split(' ')[0]) % 10}",
                "linestyle": PRIORITY_STYLES.get(c.label.split(" ")[1], "-."),
            }
            for c in curves
        ]
        draw_solve_curves(ax, curves, budget, styles)
        games_per_curve = sorted({c.games for c in curves})
        ax.set_title(f"CookingWorld {size}: {'/'.join(map(str, games_per_curve))} games a curve", fontsize=10)
    for ax in axes[len(by_size) :]:
        ax.set_visible(False)
    fig.suptitle(
        f"Search on CookingWorld: games solved within b inner-policy calls (cap {budget} a game; "
        f"{Path(path).name})",
        fontsize=11,
    )
    save(fig, out)
    return by_size


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jsonl", help="bench/search_cooking.py --json output (one object per game)")
    ap.add_argument(
        "--out", default="docs/search_budget.png", help="the picture (default docs/search_budget.png)"
    )
    ap.add_argument(
        "--budget", type=int, help="the call cap the games were played under (default: most calls used)"
    )
    args = ap.parse_args(argv)
    if args.budget is not None and args.budget < 1:
        raise SystemExit(f"--budget {args.budget}: give the positive call cap the games were played under")
    try:
        by_size = plot(args.jsonl, args.out, args.budget)
    except (ValueError, OSError) as exc:
        raise SystemExit(f"plot_search: {exc}") from None
    for size, curves in by_size.items():
        print(f"{size}: " + ", ".join(f"{c.label} {c.won}/{c.games}" for c in curves))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
