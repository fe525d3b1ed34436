"""The eval runner: play seeds S..S+N-1 with one (wrapped) policy and write a Harbor-shaped job folder.

Three layers, each in its own module:

- what to run: :class:`JobSpec` (here) -- the task with its options resolved,
  the policy as built, its description (:mod:`s1gym.runner.agent`);
- where it runs: :mod:`s1gym.runner.backends` -- this process, spawned worker
  processes, or Ray; each yields the finished trials' files;
- where it is written: :mod:`s1gym.jobs` -- the job folder (Harbor's layout,
  atomic writes, resume, the summary).

:func:`evaluate` puts them together. Every policy meets the same games (same
task, options and seeds), so jobs compare.
"""

from __future__ import annotations

import dataclasses
import importlib
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from s1gym import jobs
from s1gym._version import __version__
from s1gym.checks import non_negative_int, positive_int
from s1gym.core import Policy, S1Env
from s1gym.errors import RunError
from s1gym.jobs.pins import job_pins
from s1gym.policies import POLICIES
from s1gym.registration import env_class_or_none, resolve_id
from s1gym.runner import joblog
from s1gym.runner.agent import AgentDescription, describe
from s1gym.runner.backends import Player, make_backend, orchestrator
from s1gym.runner.progress import JobProgress
from s1gym.runner.ray_cluster import connect_ray, disconnect_ray
from s1gym.wrappers import wrap

__all__ = ["JobSpec", "RunError", "evaluate", "make_env", "resolve_task"]

#: Policies whose decisions come from an RNG: seeded per episode from the
#: episode's seed, so results never depend on which worker played what.
SEEDED_POLICIES = frozenset({"random"})


# --------------------------------------------------------------------------
# What to run
# --------------------------------------------------------------------------


def resolve_task(task: str) -> str:
    """A gym id for ``task``: s1gym's short names, or any registered / ``module:id`` env id."""
    if ":" in task and not task.startswith("s1gym:"):
        return task  # gym.make imports the module before looking the id up
    try:
        return resolve_id(task)
    except ValueError as exc:
        if task in gym.registry:
            return task
        raise RunError(f"{exc} (or pass a registered gym id, or 'module:id')") from None


def make_env(env_id: str, options: Mapping[str, Any]) -> S1Env:
    """``gym.make`` the task and check it is an s1gym env (the runner needs ``situation()``)."""
    try:
        env = gym.make(env_id, **dict(options))
    except TypeError as exc:
        raise RunError(f"{env_id}: bad option ({exc}); see `s1 list` for the task's options") from exc
    base = env.unwrapped
    if not isinstance(base, S1Env):
        env.close()
        raise RunError(f"{env_id} is not an s1gym task (S1Env); the runner needs env.situation()")
    return base


@dataclasses.dataclass(frozen=True)
class JobSpec:
    """Everything a worker needs to play a seed; picklable (it crosses process/Ray boundaries)."""

    env_id: str
    options: Mapping[str, Any]
    #: A policy name for ``make_policy`` ("local", "random"...), ``"module:factory"``, or a Policy object.
    policy: Any
    policy_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    wrappers: tuple[str, ...] = ()
    wrapper_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: Every option in force (defaults included): what the job records and ``s1 table`` keys by.
    resolved_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: What the built policy is (filled by :func:`evaluate` after building it once).
    agent: AgentDescription = AgentDescription("?")
    job_id: str = ""
    job_dir: str = ""
    #: Record the env's screenshot per tick (``env.screenshot()``; for replays of web/desktop tasks).
    frames: bool = False
    #: Ask the task's expert after every decision for the agreement columns (``agreement=False``: not asked).
    agreement: bool = True
    #: Times an episode whose engine (or worker) died is played again from its seed on a fresh engine.
    retries: int = 1
    #: Times an episode whose policy failed (a PolicyError: the API down, a bad key) is played again.
    policy_retries: int = 0

    @property
    def label(self) -> str:
        return self.agent.label

    @property
    def seeded(self) -> bool:
        return isinstance(self.policy, str) and self.policy in SEEDED_POLICIES

    def make_env(self) -> S1Env:
        return make_env(self.env_id, self.options)

    def build_policy(self, episode_seed: int | None = None) -> Policy:
        """The (wrapped) policy. ``episode_seed`` seeds RNG-driven policies."""
        options = dict(self.policy_options)
        if episode_seed is not None and self.seeded:
            options["seed"] = int(options.get("seed", 0)) + episode_seed
        policy = _base_policy(self.policy, options)
        if self.wrappers:
            try:
                policy = wrap(policy, list(self.wrappers), **dict(self.wrapper_options))
            except (TypeError, ValueError) as exc:
                raise RunError(f"--wrap {','.join(self.wrappers)}: {exc}") from exc
        if not _is_policy(policy):
            raise RunError(f"{policy!r} is not a Policy: it needs .name, .decide(situation) and .reset()")
        return policy

    def task_config(self) -> dict[str, Any]:
        return {"name": self.env_id, "options": dict(self.options), "resolved_options": dict(self.resolved_options)}

    def agent_config(self) -> dict[str, Any]:
        """Harbor's AgentConfig, plus how the policy was built and what it is (``s1gym``)."""
        return {
            "name": self.label,
            "import_path": self.policy if isinstance(self.policy, str) and ":" in self.policy else None,
            "kwargs": dict(self.policy_options),
            "wrappers": self.agent.wrapper_kinds,
            "wrapper_kwargs": dict(self.wrapper_options),
            "s1gym": self.agent.as_dict(),
        }

    def model_info(self) -> dict[str, Any] | None:
        model = self.agent.policy_options.get("model")
        provider = self.policy if isinstance(self.policy, str) else self.agent.policy
        return {"name": model, "provider": provider} if isinstance(model, str) and model else None


def _base_policy(policy: Any, options: Mapping[str, Any]) -> Policy:
    if not isinstance(policy, str):
        if options:
            raise RunError("policy_options go with a policy given by name; configure a policy object directly")
        return policy
    if ":" in policy:
        module, _, attr = policy.partition(":")
        try:
            factory = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise RunError(f"policy {policy!r}: cannot import {attr!r} from {module!r} ({exc})") from exc
        if not callable(factory) or _is_policy(factory):
            return factory
        return _construct(policy, factory, options)
    try:
        key = POLICIES.key(policy, otherwise="give module:factory")
    except ValueError as exc:
        raise RunError(str(exc)) from None
    return _construct(policy, POLICIES[key], options)


def _construct(name: str, factory: Callable[..., Any], options: Mapping[str, Any], cls: Any = None) -> Policy:
    """``factory(**options)`` with a clear error naming the options that do not fit and the ones that do."""
    import inspect

    try:
        params = inspect.signature(cls or factory).parameters.values()
    except (TypeError, ValueError):
        params = None
    if params is not None and not any(p.kind is p.VAR_KEYWORD for p in params):
        names = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"]
        unknown = sorted(set(options) - set(names))
        if unknown:
            raise RunError(
                f"policy {name!r} has no option {', '.join(map(repr, unknown))}; its options are: "
                f"{', '.join(names) or 'none'} (--policy-option KEY=VALUE)"
            )
    try:
        return factory(**options)
    except TypeError as exc:
        raise RunError(f"policy {name!r}: {exc} (--policy-option KEY=VALUE)") from None


def _is_policy(obj: Any) -> bool:
    return not isinstance(obj, type) and all(hasattr(obj, a) for a in ("name", "decide", "reset"))


# --------------------------------------------------------------------------
# A job
# --------------------------------------------------------------------------


def evaluate(
    task: str,
    policy: str | Policy,
    *,
    episodes: int = 10,
    seed: int = 0,
    wrappers: Sequence[str] | str = (),
    budget: int | None = None,
    options: Mapping[str, Any] | None = None,
    policy_options: Mapping[str, Any] | None = None,
    wrapper_options: Mapping[str, Any] | None = None,
    out: str | Path = "jobs",
    job: str | None = None,
    resume: bool = False,
    retry_errors: bool = False,
    workers: int = 1,
    ray: bool | str | None = None,
    progress: bool | Callable[[dict[str, Any]], None] = False,
    frames: bool = False,
    agreement: bool = True,
    retries: int = 1,
    policy_retries: int = 0,
    report: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Play seeds ``seed..seed+episodes-1`` and write a job folder; returns the summary.

    ``policy`` is a name for :func:`s1gym.policies.make_policy` (``"local"``,
    ``"random"``...), ``"module:factory"``, or a Policy object (with
    ``workers > 1`` or Ray it must be picklable). ``wrappers`` are applied
    outermost first (``["search", "lookahead"]`` is Search(Lookahead(policy))),
    ``budget`` goes to them (with no wrapper it is an error, as are
    ``wrapper_options``). ``ray=True`` starts a local Ray; a string is a
    cluster address, reached before any folder is written (a head that does
    not answer is a :class:`RunError`). ``job`` is one folder name inside
    ``out``. ``resume=True`` continues the job named ``job`` (or the latest job
    in ``out`` with the same task, options, policy and seeds), which must
    exist, skipping finished trials; ``retry_errors`` (with ``resume``) also
    replays errored ones.
    ``progress=True`` shows a live progress bar; a callable gets each trial's
    running totals. ``frames=True`` stores the env's screenshot before every
    decision and at the end (``<trial>/agent/frames/``, for ``s1 replay``) when
    the task has ``env.screenshot()`` (the web and desktop tasks); it costs no
    policy call. ``agreement=False`` never asks the task's expert (the agreement columns show "–"; the
    expert's planning costs nothing then). The summary includes ``job_dir`` and ``errors_by_message``.

    Faults cost one episode: an episode whose engine (a JVM, a browser, a desktop) or worker process died
    is played again from its seed on a fresh engine up to ``retries`` times, one whose policy raised a
    :class:`~s1gym.policies.PolicyError` up to ``policy_retries`` times; each trial's ``retries`` says
    what failed before. Tracebacks go to the trial's ``exception_info`` and ``<job>/job.log``;
    ``report`` gets one line per failed (or retried) trial. A trial file that cannot be written (a full
    disk) stops the job with a :class:`~s1gym.jobs.JobWriteError`; the files written before stay whole
    and ``resume`` continues.
    """
    try:
        episodes = positive_int("episodes", episodes)
        seed = non_negative_int("seed", seed)
        workers = positive_int("workers", workers)
        retries = non_negative_int("retries", retries)
        policy_retries = non_negative_int("policy_retries", policy_retries)
    except ValueError as exc:
        raise RunError(str(exc)) from None
    if retry_errors and not resume:
        raise RunError(
            "--retry-errors replays the errored trials of a job being resumed: add --resume "
            "(with the --job NAME to continue)"
        )
    spec, (env, built) = _job_spec(task, policy, wrappers, budget, options, policy_options, wrapper_options)
    if frames and not callable(getattr(env, "screenshot", None)):
        warnings.warn(
            f"frames=True: {spec.env_id} has no screenshot(); nothing extra is recorded "
            "(s1 replay draws this task from its observations)",
            stacklevel=2,
        )
        frames = False
    spec = dataclasses.replace(spec, frames=bool(frames), agreement=bool(agreement), retries=retries,
                               policy_retries=policy_retries)
    repeats = repeated_games(env, range(seed, seed + episodes))
    if repeats:
        warnings.warn(f"{spec.env_id}: {repeats}", stacklevel=2)
    config = {
        "job_name": job or "",
        "n_attempts": 1,
        "orchestrator": orchestrator(workers, ray),
        "agents": [spec.agent_config()],
        "tasks": [spec.task_config()],
        "seeds": jobs.seed_record(seed, episodes),
        "s1gym": {"version": _version(), "label": spec.label, "frames": spec.frames,
                  "agreement": spec.agreement},
        # what `s1 rerun` replays (the arguments as given) and checks (versions and file hashes)
        "spec": {"task": task, "policy": policy if isinstance(policy, str) else None, "seed": seed,
                 "episodes": episodes, "retries": retries, "policy_retries": policy_retries},
        "pins": job_pins(type(env).task_name, spec.agent.as_dict(), built),
    }
    connected = False
    try:
        connected = bool(ray) and connect_ray(ray if isinstance(ray, str) else None)  # before any folder
        folder = jobs.JobFolder.open(out if jobs.is_remote(out) else Path(out), job, config, resume=resume)
    except (jobs.JobFolderError, jobs.RemoteJobsError, RunError) as exc:
        env.close()
        if connected:
            disconnect_ray()
        raise RunError(str(exc)) from None
    try:
        spec = dataclasses.replace(spec, job_dir=str(folder.path), job_id=folder.id)
        backend = make_backend(spec, workers, ray, env, built)
        seeds = folder.pending(range(seed, seed + episodes), spec.env_id, retry_errors)
        label = f"{spec.env_id.removeprefix('s1/')} · {spec.label}"
        with joblog.capture(folder.path / joblog.LOG_NAME), \
                JobProgress(progress, label, episodes, (t.as_result() for t in folder.trials.values())) as bar:
            for files in backend.play(seeds):
                folder.write_trial(files)
                bar.update(files["result"])
                line = joblog.note_trial(files["result"])
                if line and report is not None:
                    report(line)
        folder.push(folder.path / joblog.LOG_NAME)
        summary = {
            "task": spec.env_id,
            "options": dict(spec.options),
            "resolved_options": dict(spec.resolved_options),
            "policy": spec.agent.policy,
            "wrappers": spec.agent.wrapper_kinds,
            "agent": spec.agent.as_dict(),
            "label": spec.label,
            "seeds": jobs.seed_record(seed, episodes),
            "errors_by_message": folder.errors(),
        }
        return folder.finish(summary, env_class_or_none(spec.env_id))
    finally:
        if connected:
            disconnect_ray()
        folder.close()


def repeated_games(env: S1Env, seeds: range) -> str | None:
    """What a job's seeds repeat, in words (``None`` when every seed plays a game of its own): a task with a
    finite list of games (:meth:`S1Env.game_of`) plays seed s and seed s + len(list) alike."""
    first: dict[str, int] = {}
    again: list[tuple[int, int, str]] = []
    for s in seeds:
        game = env.game_of(s)
        if game is None:
            continue
        if game in first:
            again.append((s, first[game], game))
        else:
            first[game] = s
    if not again:
        return None
    s, earlier, game = again[0]
    return (f"the {len(seeds)} seeds {seeds.start}..{seeds.stop - 1} play {len(seeds) - len(again)} distinct games: "
            f"{len(again)} seed{'s' if len(again) > 1 else ''} replay{'' if len(again) > 1 else 's'} a game already in this job (seed {s} plays {game}, as seed {earlier} does). "
            "summary.json and `s1 table` give both counts and the interval over distinct games; for new games, "
            "choose seeds inside the list or another fold")


def _job_spec(
    task: str,
    policy: str | Policy,
    wrappers: Sequence[str] | str,
    budget: int | None,
    options: Mapping[str, Any] | None,
    policy_options: Mapping[str, Any] | None,
    wrapper_options: Mapping[str, Any] | None,
) -> tuple[JobSpec, tuple[S1Env, Policy]]:
    """The job's spec, with the env and policy built once here so a bad task, option or policy fails
    before any folder is written or worker started."""
    if isinstance(wrappers, str):
        wrappers = [w for w in (s.strip() for s in wrappers.split(",")) if w]
    wrapper_options = dict(wrapper_options or {})
    if budget is not None:
        wrapper_options["budget"] = budget
    if wrapper_options and not wrappers:
        given = ", ".join(f"--budget {v}" if k == "budget" else f"--wrap-option {k}" for k, v in wrapper_options.items())
        raise RunError(
            f"{given}: wrapper options, but no wrapper was given; add the wrapper that takes them "
            "(--budget goes to --wrap search) or drop them"
        )
    spec = JobSpec(
        env_id=resolve_task(task),
        options=dict(options or {}),
        policy=policy,
        policy_options=dict(policy_options or {}),
        wrappers=tuple(w.lower() for w in wrappers),
        wrapper_options=wrapper_options,
    )
    env = spec.make_env()
    try:
        built = spec.build_policy()
    except BaseException:
        env.close()
        raise
    # an alias id (s1/MiniWoB-<task>-v0) carries options of its own: they are in force too
    resolved = type(env).resolve_options({**(env.spec.kwargs if env.spec is not None else {}), **spec.options})
    spec = dataclasses.replace(spec, resolved_options=jobs.to_jsonable(resolved), agent=describe(built))
    return spec, (env, built)


def _version() -> str:
    return __version__


# Re-exported for callers that play episodes themselves.
__all__ += ["Player"]
