"""Two job folders compared trial by trial and tick by tick: did anything change a decision or a reward?

``s1 rerun`` compares a job with its replay; ``bench/ab_jobs.py`` compares two runs of the same jobs before
and after a change. A tick counts as the same when the move, the probabilities (exactly, as stored), the
move's feedback and the score are equal, and so is what a search counted for it (calls, expansions,
children generated, duplicates, why it stopped); an episode's end (won, score, steps, calls) must match too.
Latencies and clocks are never compared. For policies that cannot reproduce bit for bit (a hosted or chat
model) :attr:`TrialComparison.agreement` gives the share of ticks, aligned by index, whose move was the same.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from s1gym.jobs.episodes import read_episode
from s1gym.jobs.files import read_json
from s1gym.jobs.harbor import trial_reward

__all__ = ["SEARCH_COUNTS", "TrialComparison", "compare_jobs", "job_key", "jobs_by_setup", "ticks"]

#: what a search decision counted (its info), compared too
SEARCH_COUNTS = ("policy_calls", "expansions", "generated", "duplicates", "stop_reason")


def ticks(trial: Path) -> tuple[list[tuple[Any, ...]], tuple[Any, ...]]:
    """A trial's ticks as comparable rows (move, probabilities, feedback, score, search counts) and its end
    (won, score, steps, calls)."""
    ep = read_episode(trial)
    rows = [(t["move"], list(t["probabilities"]), t.get("feedback"), t.get("score"),
             *((t.get("info") or {}).get(k) for k in SEARCH_COUNTS)) for t in ep["ticks"]]
    final = ep["final"]
    return rows, (final.get("won"), final.get("score"), final.get("steps"), (ep.get("usage") or {}).get("calls"))


@dataclass(frozen=True)
class TrialComparison:
    """One trial of two jobs compared."""

    name: str
    #: every tick and the episode's end identical
    decisions_identical: bool
    #: the trial's reward (``verifier_result.rewards.reward``) identical
    reward_identical: bool
    #: ticks whose move was the same, aligned by index, over the longer episode's ticks (1.0: all)
    agreement: float
    #: the first difference in words (``None`` when identical)
    difference: str | None = None
    #: ``"before"`` or ``"after"`` when the trial finished in one job only
    only_in: str | None = None

    @property
    def identical(self) -> bool:
        return self.decisions_identical and self.reward_identical and self.only_in is None


def _trials(job: Path) -> dict[str, Path]:
    return {p.name: p for p in job.iterdir() if (p / "agent" / "episode.json").is_file()}


def _reward(trial: Path) -> float | None:
    try:
        return trial_reward(read_json(trial / "result.json"))
    except (OSError, ValueError):
        return None


def compare_trial(name: str, before: Path, after: Path) -> TrialComparison:
    (ra, fa), (rb, fb) = ticks(before), ticks(after)
    longest = max(len(ra), len(rb))
    same_moves = sum(1 for x, y in zip(ra, rb) if x[0] == y[0])
    agreement = same_moves / longest if longest else 1.0
    reward_same = _reward(before) == _reward(after)
    diff = next((i for i, (x, y) in enumerate(zip(ra, rb)) if x != y), None)
    if diff is None and len(ra) == len(rb) and fa == fb:
        note = None if reward_same else f"reward {_reward(before)} vs {_reward(after)}"
        return TrialComparison(name, True, reward_same, agreement, note)
    if diff is not None:
        note = f"tick {diff} differs: before {ra[diff]} / after {rb[diff]}"
    else:
        note = f"{len(ra)} vs {len(rb)} ticks, end {fa} vs {fb}"
    return TrialComparison(name, False, reward_same, agreement, note)


def compare_jobs(before: Path, after: Path) -> list[TrialComparison]:
    """Every trial of two job folders compared (matched by trial name: task and seed), sorted by name; a
    trial finished in one job only is reported with ``only_in``."""
    a, b = _trials(Path(before)), _trials(Path(after))
    out = [TrialComparison(name, False, False, 0.0, f"only in {'before' if name in a else 'after'}",
                           "before" if name in a else "after") for name in set(a) ^ set(b)]
    out += [compare_trial(name, a[name], b[name]) for name in set(a) & set(b)]
    return sorted(out, key=lambda c: c.name)


def job_key(config: Mapping[str, Any]) -> str:
    """A job's setup as text: its task, its agent's description and its task options (equal setups, equal
    keys; two jobs of one agent on different tasks are different setups)."""
    agent = (config.get("agents") or [{}])[0]
    task = (config.get("tasks") or [{}])[0]
    return json.dumps([task.get("name"), agent.get("s1gym", agent), task.get("options")], sort_keys=True)


def jobs_by_setup(root: Path) -> dict[str, Path]:
    """The job folders directly under ``root`` by :func:`job_key`."""
    out = {}
    for config in sorted(Path(root).glob("*/config.json")):
        out[job_key(read_json(config))] = config.parent
    return out
