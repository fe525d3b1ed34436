"""``s1 rerun JOB``: play a finished job again from its folder and say whether it came out the same.

The job's config.json holds what it ran (the task and its options as given, the policy and its options,
the wrappers and theirs, the seeds: ``spec``, ``tasks``, ``agents``, ``seeds``) and what it ran on
(``pins``: :mod:`s1gym.jobs.pins`). A rerun first lists every pin that differs from this install (a
package version, a model or data file's hash, s1gym's commit), then plays the same seeds into a new job
folder and compares the two trial by trial (:mod:`s1gym.jobs.compare`): are the decisions identical tick by
tick, is the reward identical. Offline policies (local, rule, uniform, random, and the wrappers around them)
reproduce bit for bit on an unchanged install; a hosted or chat model's replies may differ, so for those the
share of ticks with the same move (agreement) is the number to read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from s1gym.errors import RunError
from s1gym.jobs import is_job_dir, read_json
from s1gym.jobs.compare import TrialComparison, compare_jobs
from s1gym.jobs.pins import differences, job_pins

__all__ = ["RerunReport", "pinned_differences", "rerun", "rerun_arguments"]


@dataclass
class RerunReport:
    """What a rerun found: the pins that differ, the new job folder, and each trial compared."""

    job: Path
    new_job: Path
    differences: list[str] = field(default_factory=list)
    trials: list[TrialComparison] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return bool(self.trials) and all(t.identical for t in self.trials)

    def lines(self) -> list[str]:
        """One line per trial and a total, plain text."""
        out = []
        for t in self.trials:
            if t.only_in is not None:
                out.append(f"{t.name}: finished only in the {'original' if t.only_in == 'before' else 'rerun'}")
                continue
            what = "identical" if t.identical else (
                f"decisions {'identical' if t.decisions_identical else 'differ'}, "
                f"reward {'identical' if t.reward_identical else 'differs'}, "
                f"same move at {t.agreement:.0%} of ticks")
            out.append(f"{t.name}: {what}" + (f" ({t.difference})" if t.difference and not t.identical else ""))
        same = sum(1 for t in self.trials if t.identical)
        out.append(f"{same} of {len(self.trials)} trials identical (decisions and reward); rerun in {self.new_job}")
        return out


def _config(job: Path) -> dict[str, Any]:
    if not job.is_dir() or not is_job_dir(job):
        raise RunError(f"{job}: not a job folder (no config.json with job_name); pass one job's folder, "
                       "e.g. jobs/2026-01-01__12-00-00")
    return read_json(job / "config.json")


def rerun_arguments(config: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of :func:`s1gym.runner.spec.evaluate` that replay the job of ``config``."""
    spec = config.get("spec") or {}
    task = (config.get("tasks") or [{}])[0]
    agent = (config.get("agents") or [{}])[0]
    described = agent.get("s1gym") or {}
    if spec:  # recorded as given; None: a Policy object
        policy = spec.get("policy")
    else:  # a job written before ``spec`` was recorded: the factory or the built policy's name
        policy = agent.get("import_path") or described.get("policy")
    if not policy:
        raise RunError("this job's policy was a Python object, not a name: rerun it from Python with "
                       "s1gym.evaluate and the same object")
    seeds = config.get("seeds") or {}
    settings = config.get("s1gym") or {}
    return {
        "task": spec.get("task") or task.get("name"),
        "policy": policy,
        "episodes": int(spec.get("episodes") or seeds.get("count") or len(seeds.get("list") or ())),
        "seed": int(spec.get("seed", seeds.get("start", 0))),
        "wrappers": list(agent.get("wrappers") or ()),
        "options": dict(task.get("options") or {}),
        "policy_options": dict(agent.get("kwargs") or {}),
        "wrapper_options": dict(agent.get("wrapper_kwargs") or {}),
        "frames": bool(settings.get("frames", False)),
        "agreement": bool(settings.get("agreement", True)),
        "retries": int(spec.get("retries", 1)),
        "policy_retries": int(spec.get("policy_retries", 0)),
    }


def pinned_differences(config: Mapping[str, Any]) -> list[str]:
    """Every pin of the job's config that differs from this install (a job written before pins were
    recorded says so instead)."""
    recorded = config.get("pins")
    if not recorded:
        return ["the job records no pins (written before jobs recorded them): versions and files cannot be checked"]
    task = (config.get("tasks") or [{}])[0].get("name", "")
    agent = (config.get("agents") or [{}])[0].get("s1gym") or {}
    policy = None
    if recorded.get("policy"):  # the sampling settings come from the built policy: build it (no call is made)
        from s1gym.runner.spec import _base_policy

        args = rerun_arguments(config)
        try:
            policy = _base_policy(args["policy"], args["policy_options"])
        except Exception:  # noqa: BLE001 - a policy that cannot be built here: the run itself will say why
            policy = None
    return differences(recorded, job_pins(_task_name(task), agent, policy))


def _task_name(env_id: str) -> str:
    from s1gym.registration import env_class_or_none

    cls = env_class_or_none(env_id)
    return getattr(cls, "task_name", env_id) if cls is not None else env_id


def rerun(job: Path | str, *, out: Path | str | None = None, name: str | None = None, workers: int = 1,
          progress: bool = False, report: Callable[[str], None] | None = None) -> RerunReport:
    """Replay job ``job`` into a new folder in ``out`` (default: beside it) named ``name`` (default:
    ``<job>-rerun``, ``-rerun-2``...) and compare it with the original, trial by trial. ``report`` gets
    each differing pin, one line each, before the run starts."""
    from s1gym.runner.spec import evaluate

    job = Path(job)
    config = _config(job)
    arguments = rerun_arguments(config)
    found = pinned_differences(config)
    if report is not None:
        report(f"{len(found)} pinned version(s) or file(s) differ from this install" if found
               else "every pinned version and file matches this install")
        for line in found:
            report(f"  {line}")
    out = Path(out) if out is not None else job.parent
    name = name or _free_name(out, f"{job.name}-rerun")
    summary = evaluate(**arguments, out=out, job=name, workers=workers, progress=progress)
    new_job = Path(summary["job_dir"])
    return RerunReport(job, new_job, found, compare_jobs(job, new_job))


def _free_name(out: Path, base: str) -> str:
    for k in range(1, 10_000):
        candidate = base if k == 1 else f"{base}-{k}"
        if not (out / candidate).exists():
            return candidate
    raise RunError(f"{out}: 10,000 reruns named {base}; pass --job NAME")
