"""A job's ``index.html``: the ``s1 table`` rows of one or two jobs and a link to every seed's replay.

Each seed gets one replay page showing that seed's trial from every given job
side by side (two jobs: the usual "policy A vs policy B on the same game").
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from s1gym.jobs import trial_metadata, trial_outcome, trial_verdict
from s1gym.reporting.replay.page import ReplayError, Trial, load_trial, trials_of_job, write_page
from s1gym.reporting.table import COLUMNS, row_cells, table_rows

__all__ = ["write_index"]

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; font-size: 14px;
  margin: 16px; color: #222; background: #f6f5f1; }
h1 { font-size: 18px; } h2 { font-size: 15px; margin-top: 22px; }
table { border-collapse: collapse; background: #fff; }
th, td { border: 1px solid #dddad2; padding: 4px 8px; text-align: right; font-variant-numeric: tabular-nums; }
th { background: #efede7; } td.l, th.l { text-align: left; }
td.won { color: #1d8a4e; font-weight: 600; } td.task { color: #8a5a1d; }
td.policy_error, td.engine_error, td.other_error { color: #c23b2b; font-weight: 600; }
a { color: #2f6fde; }
"""


def _cell(text: Any, cls: str = "") -> str:
    return f"<td class=\"{cls}\">{html.escape(str(text))}</td>"


def _trial_cells(trial: Trial | None) -> str:
    if trial is None:
        return _cell("-") * 4
    end = trial.episode.get("final") or {}
    score = end.get("score")
    latencies = trial_metadata(trial.result).get("decision_latency_s") or []
    return (
        _cell("-" if score is None else f"{score:.3f}")
        + _cell(trial_verdict(trial.result), f"outcome {trial_outcome(trial.result)}")
        + _cell(end.get("steps", len(trial.episode.get("ticks") or ())))
        + _cell(f"{sum(latencies):.2f} s")
    )


def write_index(job_dirs: Sequence[Path], out: Path, *, gif: Any = None, **page_options: Any) -> tuple[Path, list[Path]]:
    """Write ``out/index.html`` and one replay page per seed of ``job_dirs`` (one or two jobs); returns
    the index and the pages. ``gif`` (a callable taking a page path) is called on every page written."""
    if not 1 <= len(job_dirs) <= 2:
        raise ReplayError(f"an index compares one or two jobs side by side, not {len(job_dirs)}")
    by_job = [trials_of_job(j) for j in job_dirs]
    seeds = sorted(set().union(*by_job))
    if not seeds:
        raise ReplayError(f"{', '.join(map(str, job_dirs))}: no finished trials to replay")
    out.mkdir(parents=True, exist_ok=True)
    pages: list[Path] = []
    rows = []
    for seed in seeds:
        trials = [load_trial(trials[seed]) if seed in trials else None for trials in by_job]
        page = write_page([t for t in trials if t is not None], out, **page_options)
        if gif is not None:
            gif(page)
        pages.append(page)
        link = f"<a href=\"{html.escape(page.name)}\">replay</a>"
        rows.append(f"<tr>{_cell(seed)}{''.join(_trial_cells(t) for t in trials)}<td class=\"l\">{link}</td></tr>")

    setups = table_rows(job_dirs)
    head = "".join(f"<th class=\"{'l' if i < 3 else ''}\">{html.escape(c)}</th>" for i, c in enumerate(COLUMNS))
    body = "".join(
        "<tr>" + "".join(_cell(c, "l" if i < 3 else "") for i, c in enumerate(row_cells(r))) + "</tr>" for r in setups
    )
    names = [html.escape(Path(j).name) for j in job_dirs]
    per_job = "".join(f"<th colspan=\"4\">{n}</th>" for n in names)
    sub = "<th>score</th><th>result</th><th>steps</th><th>decision time</th>" * len(job_dirs)
    doc = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{' vs '.join(names)}</title><style>{_CSS}</style></head>
<body><h1>{' vs '.join(names)}</h1>
<table class="setups"><tr>{head}</tr>{body}</table>
<h2>Trials: one replay page per seed{' (both jobs side by side)' if len(job_dirs) == 2 else ''}</h2>
<table class="trials"><tr><th rowspan="2">seed</th>{per_job}<th rowspan="2" class="l">page</th></tr><tr>{sub}</tr>
{''.join(rows)}</table>
</body></html>
"""
    index = out / "index.html"
    index.write_text(doc, encoding="utf-8")
    return index, pages
