"""The live progress of a job: a rich bar with the running mean score, calls and cost, or a callback."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Self

from s1gym.jobs import trial_metadata, trial_reward

__all__ = ["JobProgress"]


class JobProgress:
    """``progress=True``: a rich progress bar; a callable: called with the running totals; else nothing."""

    def __init__(self, progress: Any, label: str, total: int, done: Iterable[Mapping[str, Any]]) -> None:
        self.callback = progress if callable(progress) else None
        self.enabled = bool(progress) and self.callback is None
        self.total = total
        self.scores: list[float] = []
        self.n = self.errors = self.calls = 0
        self.cost = 0.0
        for t in done:
            self._add(t)
        self.bar: Any = None
        self.label = label

    def _add(self, trial: Mapping[str, Any]) -> None:
        self.n += 1
        if trial.get("exception_info"):
            self.errors += 1
        else:
            self.scores.append(trial_reward(trial))
        self.calls += int(trial_metadata(trial).get("n_calls") or 0)
        self.cost += float((trial.get("agent_result") or {}).get("cost_usd") or 0.0)

    def fields(self) -> dict[str, Any]:
        mean = sum(self.scores) / len(self.scores) if self.scores else float("nan")
        return {
            "done": self.n,
            "total": self.total,
            "mean_score": mean,
            "errors": self.errors,
            "calls": self.calls,
            "cost_usd": self.cost,
        }

    def __enter__(self) -> Self:
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("score {task.fields[score]}"),
                TextColumn("calls {task.fields[calls]}"),
                TextColumn("${task.fields[cost]}"),
                TextColumn("{task.fields[errors]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=self.total, completed=self.n, **self._fmt())
        return self

    def _fmt(self) -> dict[str, str]:
        f = self.fields()
        score = "-" if not self.scores else f"{f['mean_score']:.3f}"
        errors = f"[red]{self.errors} errors[/red]" if self.errors else ""
        return {"score": score, "calls": str(self.calls), "cost": f"{self.cost:.4f}", "errors": errors}

    def update(self, trial: Mapping[str, Any]) -> None:
        self._add(trial)
        if self.callback is not None:
            self.callback(self.fields())
        if self.bar is not None:
            self.bar.update(self.task, completed=self.n, **self._fmt())

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
