"""The eval runner: play seeds S..S+N-1 with one policy and write a Harbor-shaped job folder.

Every policy meets the same games (same task, options and seeds), so jobs
compare. Episodes run in this process, in K spawned worker processes
(``workers=K``, each with its own env and engine), or as Ray tasks
(``ray=True`` or an address). Workers only *play*; the driver writes every
file (see :mod:`s1gym.jobs`), so results are the same whatever runs them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib
import multiprocessing as mp
import pickle
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Self

import gymnasium as gym

from s1gym import jobs
from s1gym.core import Decision, Policy, S1Env, Usage

__all__ = ["JobSpec", "RunError", "evaluate", "make_env", "play_episode", "resolve_task"]

#: Policies whose decisions come from an RNG: seeded per episode from the
#: episode's seed, so results never depend on which worker played what.
SEEDED_POLICIES = frozenset({"random"})
#: Info keys the trial keeps from the env's final info (task metrics read them).
_DROP_FINAL_INFO = frozenset({"action_mask", "candidates"})
#: How often a running job rewrites its result.json (the trials' own files are written at once).
JOB_RESULT_EVERY_S = 1.0


class RunError(RuntimeError):
    """A job cannot start (bad task, policy, options, folder); the message says how to fix it."""


# --------------------------------------------------------------------------
# What to run
# --------------------------------------------------------------------------


def resolve_task(task: str) -> str:
    """A gym id for ``task``: s1gym's short names, or any registered / ``module:id`` env id."""
    from s1gym.registration import resolve_id

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


def env_class_of(env_id: str) -> type | None:
    """The env class behind an id without making an env (for ``summarize_episodes``)."""
    module, sep, short = env_id.partition(":")
    try:
        if sep:  # 'module:id': the module registers the id when imported
            importlib.import_module(module)
        spec = gym.spec(short if sep else env_id)
    except Exception:  # noqa: BLE001
        return None
    entry = spec.entry_point
    if isinstance(entry, str):
        module, _, name = entry.partition(":")
        try:
            return getattr(importlib.import_module(module), name)
        except Exception:  # noqa: BLE001
            return None
    return entry if isinstance(entry, type) else None


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
    job_id: str = ""
    job_dir: str = ""

    @property
    def policy_name(self) -> str:
        if isinstance(self.policy, str):
            return self.policy
        return str(getattr(self.policy, "name", type(self.policy).__name__))

    @property
    def label(self) -> str:
        """``policy`` or ``policy+search+lookahead``: the table's and Harbor ``evals`` key's name."""
        return "+".join((self.policy_name, *self.wrappers))

    @property
    def seeded(self) -> bool:
        return self.policy_name in SEEDED_POLICIES


def build_policy(spec: JobSpec, episode_seed: int | None = None) -> Policy:
    """The (wrapped) policy of a spec. ``episode_seed`` seeds RNG-driven policies."""
    options = dict(spec.policy_options)
    if episode_seed is not None and spec.seeded:
        options["seed"] = int(options.get("seed", 0)) + episode_seed
    policy = spec.policy
    if isinstance(policy, str):
        if ":" in policy:
            module, _, attr = policy.partition(":")
            try:
                factory = getattr(importlib.import_module(module), attr)
            except (ImportError, AttributeError) as exc:
                raise RunError(f"policy {policy!r}: cannot import {attr!r} from {module!r} ({exc})") from exc
            policy = factory(**options) if callable(factory) and not _is_policy(factory) else factory
        else:
            try:
                from s1gym.policies import make_policy
            except ImportError as exc:
                raise RunError(f"s1gym.policies.make_policy is unavailable ({exc})") from exc
            policy = make_policy(policy, **options)
    elif episode_seed is not None and spec.seeded and hasattr(policy, "seed"):
        policy.seed = options["seed"]
    if spec.wrappers:
        try:
            from s1gym.wrappers import wrap
        except ImportError as exc:
            raise RunError(f"s1gym.wrappers.wrap is unavailable ({exc})") from exc
        policy = wrap(policy, list(spec.wrappers), **dict(spec.wrapper_options))
    if not _is_policy(policy):
        raise RunError(f"{policy!r} is not a Policy: it needs .name, .decide(situation) and .reset()")
    return policy


def _is_policy(obj: Any) -> bool:
    return not isinstance(obj, type) and all(hasattr(obj, a) for a in ("name", "decide", "reset"))


# --------------------------------------------------------------------------
# Playing one episode
# --------------------------------------------------------------------------


def play_episode(env: S1Env, policy: Policy, seed: int) -> dict[str, Any]:
    """Play one game to its end and return its record (ticks, final state, usage).

    Raises whatever the env or the policy raises; :class:`Player` turns that
    into the trial's ``exception_info`` while keeping the ticks played so far
    (attached to the exception as ``partial_episode``).
    """
    ticks: list[dict[str, Any]] = []
    usage = Usage()
    gave_up = False
    record: dict[str, Any] = {"seed": seed, "ticks": ticks}
    try:
        _, info = env.reset(seed=seed)
        policy.reset()
        terminated = truncated = False
        while not (terminated or truncated) and env.candidates:
            situation = env.situation()
            start = time.perf_counter()
            decision: Decision = policy.decide(situation)
            latency = time.perf_counter() - start
            n = len(situation.candidates)
            if not 0 <= decision.action < n:
                raise RunError(
                    f"{getattr(policy, 'name', policy)!r} chose index {decision.action} but this state has "
                    f"{n} candidates (0..{n - 1})"
                )
            usage = usage + decision.usage
            tick = {
                "t": len(ticks),
                "observation": situation.observation,
                "candidates": list(situation.texts),
                "probabilities": decision.probabilities.tolist(),
                "action": decision.action,
                "move": situation.candidates[decision.action].text,
                "latency_s": latency,
                "usage": decision.usage.as_dict(),
                "info": dict(decision.info),
                "reward": None,  # filled after the step; stays None if the step raises
                "score": None,
            }
            ticks.append(tick)
            if decision.give_up:
                gave_up = True
                tick.update(reward=0.0, score=env.score, gave_up=True)
                break
            _, reward, terminated, truncated, info = env.step_move(tick["move"])
            tick.update(reward=float(reward), score=float(info["score"]))
    except BaseException as exc:
        record.update(usage=usage)
        exc.partial_episode = record  # type: ignore[attr-defined]
        raise
    final = {k: v for k, v in info.items() if k not in _DROP_FINAL_INFO}
    record.update(
        usage=usage,
        score=float(info["score"]),
        won=bool(info["won"]),
        lost=bool(info["lost"]),
        steps=int(env.steps),
        terminated=bool(terminated),
        truncated=bool(truncated),
        gave_up=gave_up,
        final_info=final,
    )
    return record


class Player:
    """One env and one policy, reused across the episodes a process (or Ray actor) plays."""

    def __init__(self, spec: JobSpec) -> None:
        self.spec = spec
        self.env: S1Env | None = None
        self.policy: Policy | None = None if spec.seeded else build_policy(spec)

    def _env(self) -> S1Env:
        if self.env is None:
            self.env = make_env(self.spec.env_id, self.spec.options)
        return self.env

    def play(self, seed: int) -> dict[str, Any]:
        """Play ``seed``; return the trial's files as dicts (``config``, ``result``, ``episode``)."""
        spec = self.spec
        name = jobs.trial_name(spec.env_id, seed)
        started = jobs.now_iso()
        exception_info = None
        try:
            policy = build_policy(spec, seed) if spec.seeded else self.policy
            assert policy is not None
            agent_info = _agent_info(spec, policy)
            episode = play_episode(self._env(), policy, seed)
        except Exception as exc:  # noqa: BLE001
            exception_info = {
                "exception_type": type(exc).__name__,
                "exception_message": str(exc),
                "exception_traceback": traceback.format_exc(),
                "occurred_at": jobs.now_iso(),
            }
            episode = getattr(exc, "partial_episode", None) or {"seed": seed, "ticks": [], "usage": Usage()}
            agent_info = _agent_info(spec, self.policy)
            self._discard_env()  # an engine that raised may be broken: start the next episode fresh
        finished = jobs.now_iso()
        return _trial_files(spec, seed, name, started, finished, agent_info, episode, exception_info)

    def _discard_env(self) -> None:
        if self.env is not None:
            with contextlib.suppress(Exception):  # a crashed engine may fail to close; it is dropped anyway
                self.env.close()
            self.env = None

    def close(self) -> None:
        self._discard_env()
        close = getattr(self.policy, "close", None)
        if callable(close):
            close()


def _agent_info(spec: JobSpec, policy: Policy | None) -> dict[str, Any]:
    from s1gym import __version__

    model, inner = None, policy
    for _ in range(8):  # through the wrappers (each holds the next policy as .policy) to the model
        if inner is None or model:
            break
        model, inner = getattr(inner, "model", None), getattr(inner, "policy", None)
    model_info = {"name": model, "provider": spec.policy_name} if isinstance(model, str) and model else None
    return {
        "name": spec.label,
        "version": __version__,
        "model_info": model_info,
        "policy": spec.policy_name,
        "wrappers": list(spec.wrappers),
    }


def _task_checksum(spec: JobSpec, seed: int) -> str:
    blob = jobs.to_jsonable({"env_id": spec.env_id, "options": spec.options, "seed": seed})
    return hashlib.sha256(repr(sorted(blob.items())).encode()).hexdigest()


def _trial_files(
    spec: JobSpec,
    seed: int,
    name: str,
    started: str,
    finished: str,
    agent_info: Mapping[str, Any],
    episode: Mapping[str, Any],
    exception_info: Mapping[str, Any] | None,
) -> dict[str, Any]:
    usage: Usage = episode.get("usage") or Usage()
    ticks = episode["ticks"]
    config = {
        "task": {"name": spec.env_id, "options": dict(spec.options), "seed": seed},
        "trial_name": name,
        "trials_dir": spec.job_dir,
        "agent": _agent_config(spec),
        "job_id": spec.job_id,
    }
    metadata = {
        "n_calls": usage.calls,
        "n_steps": int(episode.get("steps", len(ticks))),
        "won": bool(episode.get("won", False)),
        "lost": bool(episode.get("lost", False)),
        "gave_up": bool(episode.get("gave_up", False)),
        "truncated": bool(episode.get("truncated", False)),
        "decision_latency_s": [t["latency_s"] for t in ticks],
        "final_info": episode.get("final_info"),
    }
    result = {
        "id": jobs.new_id(),
        "task_name": spec.env_id,
        "trial_name": name,
        "trial_uri": (Path(spec.job_dir) / name).resolve().as_uri() if spec.job_dir else name,
        "task_id": {"path": spec.env_id},
        "source": "s1gym",
        "task_checksum": _task_checksum(spec, seed),
        "config": config,
        "agent_info": dict(agent_info),
        "agent_result": {
            "n_input_tokens": usage.input_tokens,
            "n_cache_tokens": 0,
            "n_output_tokens": usage.output_tokens,
            "cost_usd": usage.cost_usd,
            "rollout_details": None,
            "metadata": metadata,
        },
        "verifier_result": None
        if exception_info
        else {"rewards": {"reward": float(episode["score"]), "won": int(bool(episode["won"]))}},
        "exception_info": exception_info,
        "started_at": started,
        "finished_at": finished,
        "agent_execution": {"started_at": started, "finished_at": finished},
    }
    episode_doc = {
        "task": spec.env_id,
        "options": dict(spec.options),
        "seed": seed,
        "policy": spec.label,
        "ticks": ticks,
        "final": {
            k: episode.get(k) for k in ("score", "won", "lost", "steps", "terminated", "truncated", "gave_up")
        },
        "usage": usage.as_dict(),
    }
    return {"name": name, "seed": seed, "config": config, "result": result, "episode": episode_doc}


def _agent_config(spec: JobSpec) -> dict[str, Any]:
    return {
        "name": spec.policy_name,
        "import_path": spec.policy if isinstance(spec.policy, str) and ":" in spec.policy else None,
        "kwargs": dict(spec.policy_options),
        "wrappers": list(spec.wrappers),
        "wrapper_kwargs": dict(spec.wrapper_options),
    }


# --------------------------------------------------------------------------
# Backends: in-process, spawned processes, Ray
# --------------------------------------------------------------------------

_WORKER: Player | None = None


def _init_worker(spec: JobSpec) -> None:
    global _WORKER
    _WORKER = Player(spec)


def _worker_play(seed: int) -> dict[str, Any]:
    assert _WORKER is not None, "worker not initialised"
    return _WORKER.play(seed)


def _run_serial(player: Player, seeds: Sequence[int]) -> Iterator[dict[str, Any]]:
    try:
        for seed in seeds:
            yield player.play(seed)
    finally:
        player.close()


def _run_processes(spec: JobSpec, seeds: Sequence[int], workers: int) -> Iterator[dict[str, Any]]:
    """K spawned processes (spawn: no forked JVM/browser/thread state), each with its own Player."""
    ctx = mp.get_context("spawn")
    with ctx.Pool(min(workers, len(seeds)), initializer=_init_worker, initargs=(spec,)) as pool:
        yield from pool.imap_unordered(_worker_play, seeds)


def _run_ray(
    spec: JobSpec, seeds: Sequence[int], address: str | None, workers: int | None
) -> Iterator[dict[str, Any]]:
    """One Ray actor per concurrent slot, each holding a Player; results come back as dicts."""
    try:
        import ray
        from ray.util import ActorPool
    except ImportError as exc:
        raise RunError("--ray needs Ray: pip install 's1gym[ray]' (or pip install ray)") from exc
    started_here = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            import sys

            # A local Ray sees this interpreter's import path, so 'module:id' tasks and policies resolve.
            ray.init(
                num_cpus=2,
                include_dashboard=False,
                log_to_driver=False,
                runtime_env={"env_vars": {"PYTHONPATH": ":".join(p for p in sys.path if p)}},
            )
        started_here = True
    try:
        n = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        actor_cls = ray.remote(num_cpus=1)(_RayPlayer)
        actors = [actor_cls.remote(spec) for _ in range(min(n, len(seeds)))]
        yield from ActorPool(actors).map_unordered(lambda a, s: a.play.remote(s), list(seeds))
    finally:
        if started_here:
            ray.shutdown()


class _RayPlayer:
    def __init__(self, spec: JobSpec) -> None:
        import s1gym  # noqa: F401  registers the tasks in the Ray worker

        self.player = Player(spec)

    def play(self, seed: int) -> dict[str, Any]:
        return self.player.play(seed)


# --------------------------------------------------------------------------
# Jobs
# --------------------------------------------------------------------------


def _job_config(
    spec: JobSpec, name: str, out: Path, seed: int, episodes: int, backend: dict
) -> dict[str, Any]:
    from s1gym import __version__

    return {
        "job_name": name,
        "jobs_dir": str(out),
        "n_attempts": 1,
        "orchestrator": backend,
        "agents": [_agent_config(spec)],
        "tasks": [{"name": spec.env_id, "options": dict(spec.options)}],
        "seeds": {"start": seed, "count": episodes},
        "s1gym": {"version": __version__, "label": spec.label},
    }


def _comparable(config: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a job config that must match to resume it (not the orchestrator)."""
    data = jobs.scrub(config)
    return {k: data.get(k) for k in ("agents", "tasks", "seeds")}


def _find_resumable(out: Path, config: Mapping[str, Any]) -> Path | None:
    if not out.is_dir():
        return None
    want = _comparable(config)
    candidates = [
        d
        for d in out.iterdir()
        if jobs.is_job_dir(d) and _comparable(jobs.read_json(d / "config.json")) == want
    ]
    return max(candidates, key=lambda d: d.stat().st_mtime, default=None)


def _check_picklable(spec: JobSpec, where: str) -> None:
    try:
        pickle.dumps(spec)
    except Exception as exc:
        raise RunError(
            f"{where} sends the policy to other processes, but {spec.policy!r} cannot be pickled "
            f"({type(exc).__name__}: {exc}). Pass the policy by name (e.g. 'random', 'local') or as "
            f"'module:factory', make the object picklable, or run with workers=1."
        ) from exc


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
) -> dict[str, Any]:
    """Play seeds ``seed..seed+episodes-1`` and write a job folder; returns the summary.

    ``policy`` is a name for :func:`s1gym.policies.make_policy` (``"local"``,
    ``"random"``...), ``"module:factory"``, or a Policy object (with
    ``workers > 1`` or Ray it must be picklable). ``wrappers`` are applied
    outermost first (``["search", "lookahead"]`` is Search(Lookahead(policy))),
    ``budget`` goes to them. ``ray=True`` starts a local Ray; a string is a
    cluster address. ``resume=True`` continues the job named ``job`` (or the
    latest job in ``out`` with the same task, options, policy and seeds),
    skipping finished trials; ``retry_errors`` also replays errored ones.
    ``progress=True`` shows a live progress bar; a callable gets each trial's
    running totals. The summary includes ``job_dir``.
    """
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise RunError(f"episodes must be a positive integer, got {episodes!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise RunError(f"seed must be a non-negative integer, got {seed!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise RunError(f"workers must be a positive integer, got {workers!r}")
    if isinstance(wrappers, str):
        wrappers = [w for w in (s.strip() for s in wrappers.split(",")) if w]
    wrapper_options = dict(wrapper_options or {})
    if budget is not None:
        wrapper_options["budget"] = budget
    env_id = resolve_task(task)
    out = Path(out)
    spec = JobSpec(
        env_id=env_id,
        options=dict(options or {}),
        policy=policy,
        policy_options=dict(policy_options or {}),
        wrappers=tuple(w.lower() for w in wrappers),
        wrapper_options=wrapper_options,
    )
    backend = (
        {
            "type": "ray",
            "address": ray if isinstance(ray, str) else None,
            "n_concurrent_trials": workers if workers > 1 else None,
        }
        if ray
        else {"type": "local" if workers == 1 else "multiprocessing", "n_concurrent_trials": workers}
    )
    job_name = job or jobs.default_job_name()
    config = _job_config(spec, job_name, out, seed, episodes, backend)
    job_dir = out / job_name
    if resume and job is None:  # the latest job with the same task, options, policy and seeds, if any
        found = _find_resumable(out, config)
        if found is not None:
            job_dir, job_name = found, found.name
            config = _job_config(spec, job_name, out, seed, episodes, backend)
    if resume and job_dir.exists():  # --resume on a job that does not exist yet simply starts it
        if not jobs.is_job_dir(job_dir):
            raise RunError(f"--resume: {job_dir} is not a job folder (no config.json with job_name)")
        old = jobs.read_json(job_dir / "config.json")
        if _comparable(old) != _comparable(config):
            raise RunError(
                f"--resume: {job_dir} ran a different task, options, policy or seed range; "
                f"start a new job (another --job NAME) instead"
            )
        jobs.remove_stale_temp_files(job_dir)
    elif job_dir.exists() and any(job_dir.iterdir()):
        raise RunError(f"{job_dir} already exists; pass --resume to continue it or another --job NAME")
    previous = (
        jobs.read_json(job_dir / "result.json") if resume and (job_dir / "result.json").exists() else {}
    )
    job_id = previous.get("id") or jobs.new_id()
    started_at = previous.get("started_at") or jobs.now_iso()
    spec = dataclasses.replace(spec, job_dir=str(job_dir), job_id=job_id)

    # Fail fast in the driver on a bad task, option or policy, before any worker starts.
    player = Player(spec) if workers == 1 and not ray else None
    if player is not None:
        player.env = make_env(spec.env_id, spec.options)
    else:
        _check_picklable(spec, "ray" if ray else f"workers={workers}")
        _probe(spec)
    jobs.atomic_write_json(job_dir / "config.json", config)

    done = {t["trial_name"]: t for t in jobs.load_trials(job_dir)}
    if retry_errors:
        done = {k: t for k, t in done.items() if not t.get("exception_info")}
    seeds = [s for s in range(seed, seed + episodes) if jobs.trial_name(env_id, s) not in done]
    trials = list(done.values())
    key = jobs.eval_key(spec.label, env_id)

    last_write = [0.0]

    def write_job(finished_at: str | None, every_s: float = 0.0) -> None:
        """The job's result.json; while running at most once per ``every_s`` (it grows with the job)."""
        if finished_at is None and time.monotonic() - last_write[0] < every_s:
            return
        last_write[0] = time.monotonic()
        jobs.atomic_write_json(
            job_dir / "result.json",
            jobs.job_result(
                job_id=job_id,
                started_at=started_at,
                finished_at=finished_at,
                n_total_trials=episodes,
                trials=trials,
                key=key,
            ),
        )

    write_job(None)
    if player is not None:
        stream: Iterator[dict[str, Any]] = _run_serial(player, seeds)
    elif not seeds:
        stream = iter(())
    elif ray:
        stream = _run_ray(
            spec, seeds, ray if isinstance(ray, str) else None, workers if workers > 1 else None
        )
    else:
        stream = _run_processes(spec, seeds, workers)
    with _Progress(progress, spec.label, env_id, episodes, trials) as reporter:
        for files in stream:
            _write_trial(job_dir, files)
            trials = [t for t in trials if t["trial_name"] != files["name"]] + [files["result"]]
            write_job(None, every_s=JOB_RESULT_EVERY_S)
            reporter.update(files["result"])
    write_job(jobs.now_iso())
    summary = {
        "job_name": job_name,
        "job_dir": str(job_dir),
        "task": env_id,
        "options": dict(spec.options),
        "policy": spec.policy_name,
        "wrappers": list(spec.wrappers),
        "label": spec.label,
        "seeds": [seed, seed + episodes - 1],
        **jobs.summarize_trials(trials, env_class_of(env_id)),
    }
    jobs.atomic_write_json(job_dir / "summary.json", summary)
    return jobs.scrub(summary)


def _probe(spec: JobSpec) -> None:
    """Build the env and policy once in the driver so errors surface before workers start."""
    make_env(spec.env_id, spec.options).close()
    if not spec.seeded:
        build_policy(spec)


def _write_trial(job_dir: Path, files: Mapping[str, Any]) -> None:
    """config first, the episode next, ``result.json`` last: its presence marks a finished trial."""
    trial_dir = job_dir / files["name"]
    jobs.atomic_write_json(trial_dir / "config.json", files["config"])
    jobs.atomic_write_json(trial_dir / "agent" / "episode.json", files["episode"], indent=None)
    jobs.atomic_write_json(trial_dir / "result.json", files["result"])


class _Progress:
    """A rich progress bar with the running mean score, calls and cost (or a callback, or nothing)."""

    def __init__(self, progress: Any, label: str, env_id: str, total: int, done: Iterable[Mapping[str, Any]]):
        self.callback = progress if callable(progress) else None
        self.enabled = bool(progress) and self.callback is None
        self.total = total
        self.scores: list[float] = []
        self.n = self.errors = self.calls = 0
        self.cost = 0.0
        for t in done:
            self._add(t)
        self.bar = None
        self.label = f"{env_id.removeprefix('s1/')} · {label}"

    def _add(self, trial: Mapping[str, Any]) -> None:
        self.n += 1
        if trial.get("exception_info"):
            self.errors += 1
        else:
            self.scores.append(float(trial["verifier_result"]["rewards"]["reward"]))
        ar = trial.get("agent_result") or {}
        self.calls += int((ar.get("metadata") or {}).get("n_calls") or 0)
        self.cost += float(ar.get("cost_usd") or 0.0)

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
