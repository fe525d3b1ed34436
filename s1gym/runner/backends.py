"""Where episodes run: in this process, in spawned worker processes, or on Ray (:mod:`s1gym.runner.ray_cluster`).

Every backend has one method, ``play(seeds)``, yielding each trial's files (as
dicts, :func:`s1gym.jobs.trial_files`) in completion order; the driver writes
them. Workers hold a :class:`Player` (one env and one policy, reused across the
seeds they play), so results are the same whatever runs them.

Faults cost one episode. An episode whose engine died (:class:`~s1gym.errors.EngineCrashed`) is played
again from its seed on a fresh engine up to ``retries`` times (``policy_retries`` for a
:class:`~s1gym.policies.PolicyError`); a worker process or Ray actor that dies takes only the episode it
was playing (:class:`WorkerCrashed`, retried the same way) and is replaced; an episode whose Ray node was
lost is played again on another node whatever ``retries`` says (an attempt of kind ``"node"``). Each
trial's ``retries`` lists the attempts that failed before it, with their tracebacks.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import pickle
import signal
import sys
import traceback
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from multiprocessing.connection import wait as wait_for
from typing import Any, Protocol

from s1gym import jobs
from s1gym._version import __version__
from s1gym.core import Policy, S1Env
from s1gym.errors import EngineCrashed, RunError
from s1gym.policies.errors import PolicyError
from s1gym.runner import joblog
from s1gym.runner.agent import AgentDescription
from s1gym.runner.episode import play_episode

__all__ = [
    "Backend",
    "Job",
    "LostEpisodes",
    "Player",
    "ProcessBackend",
    "SerialBackend",
    "WorkerCrashed",
    "failure_kind",
    "make_backend",
]


class WorkerCrashed(EngineCrashed):
    """The process playing an episode (a ``--workers`` process, a Ray actor) died; it is replaced."""


class Job(Protocol):
    """What a backend needs of a job (:class:`s1gym.runner.spec.JobSpec` is one): backends never import
    the spec module, which imports them."""

    agent: AgentDescription
    job_id: str
    job_dir: str
    frames: bool
    agreement: bool
    retries: int
    policy_retries: int

    @property
    def label(self) -> str: ...
    @property
    def seeded(self) -> bool: ...
    @property
    def policy(self) -> Any: ...
    def make_env(self) -> S1Env: ...
    def build_policy(self, episode_seed: int | None = None) -> Policy: ...
    def task_config(self) -> dict[str, Any]: ...
    def agent_config(self) -> dict[str, Any]: ...
    def model_info(self) -> dict[str, Any] | None: ...


class Backend(Protocol):
    def play(self, seeds: Sequence[int]) -> Iterator[dict[str, Any]]: ...


def failure_kind(exc: BaseException) -> str | None:
    """``"engine"`` (an engine or worker died), ``"policy"`` (a decision model failed) or ``None`` (anything
    else: a bug or a broken contract, never retried)."""
    if isinstance(exc, EngineCrashed):
        return "engine"
    if isinstance(exc, PolicyError):
        return "policy"
    return None


def _may_retry(spec: Job, kind: str | None, earlier: Sequence[Mapping[str, Any]]) -> bool:
    limit = {"engine": spec.retries, "policy": spec.policy_retries}.get(kind or "", 0)
    return sum(1 for a in earlier if a.get("kind") == kind) < limit


def _attempt_record(exc: BaseException, traceback_text: str, kind: str | None, n: int) -> dict[str, Any]:
    return {**jobs.exception_record(exc, traceback_text), "kind": kind, "attempt": n}


def trial_record(spec: Job, seed: int, started: str, episode: Mapping[str, Any],
                 exception_info: Mapping[str, Any] | None,
                 retries: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The trial's files; ``retries`` (the failed attempts before this one) go into its result."""
    agent_info = {
        "name": spec.label,
        "version": __version__,
        "model_info": spec.model_info(),
        "policy": spec.agent.policy,
        "wrappers": spec.agent.wrapper_kinds,
    }
    files = jobs.trial_files(
        task=spec.task_config(),
        agent=spec.agent_config(),
        job_id=spec.job_id,
        job_dir=spec.job_dir,
        seed=seed,
        started=started,
        finished=jobs.now_iso(),
        agent_info=agent_info,
        episode=episode,
        exception_info=exception_info,
    )
    files["result"]["retries"] = [dict(r) for r in retries]
    return files


class Player:
    """One env and one policy, reused across the episodes a process (or Ray actor) plays."""

    def __init__(self, spec: Job, env: S1Env | None = None, policy: Policy | None = None) -> None:
        self.spec = spec
        self.env = env
        self.policy = None if spec.seeded else (policy or spec.build_policy())

    def _env(self) -> S1Env:
        if self.env is None:
            self.env = self.spec.make_env()
        return self.env

    def play(self, seed: int, earlier: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
        """Play ``seed``; the trial's files. An episode that raises is recorded as errored (with the
        ticks played so far) and the next one starts with a fresh env; one whose engine crashed (or whose
        policy failed, with ``policy_retries``) is first played again from its seed on a fresh env.
        ``earlier``: attempts that failed elsewhere (a worker that died)."""
        spec = self.spec
        attempts = list(earlier)
        started = jobs.now_iso()
        while True:
            exception_info = None
            try:
                policy = spec.build_policy(seed) if spec.seeded else self.policy
                assert policy is not None
                episode = play_episode(self._env(), policy, seed, frames=spec.frames, agreement=spec.agreement)
            except Exception as exc:  # noqa: BLE001
                if isinstance(exc, EngineCrashed):
                    ticks = (getattr(exc, "partial_episode", None) or {}).get("ticks") or ()
                    exc.locate(seed=seed, step=len(ticks) or None)
                kind = failure_kind(exc)
                exception_info = {**jobs.exception_record(exc, traceback.format_exc()), "kind": kind}
                episode = getattr(exc, "partial_episode", None) or {"seed": seed, "ticks": []}
                self._discard_env()  # an engine that raised may be broken: start the next episode fresh
                if _may_retry(spec, kind, attempts):
                    attempts.append(_attempt_record(exc, traceback.format_exc(), kind, len(attempts) + 1))
                    continue
            return trial_record(spec, seed, started, episode, exception_info, attempts)

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


class SerialBackend:
    """Episodes one after another in this process, with the env and policy the driver already built."""

    def __init__(self, player: Player) -> None:
        self.player = player

    def play(self, seeds: Sequence[int]) -> Iterator[dict[str, Any]]:
        try:
            for seed in seeds:
                yield self.player.play(seed)
        finally:
            self.player.close()


class LostEpisodes:
    """The driver's side of an episode whose worker died: replayed elsewhere, or recorded as errored."""

    def __init__(self, spec: Job, queue: deque[tuple[int, list[dict[str, Any]]]]) -> None:
        self.spec, self.queue = spec, queue

    def __call__(self, seed: int, earlier: list[dict[str, Any]], started: str, detail: str,
                 engine: str = "worker process", cause: str = "", kind: str = "engine") -> dict[str, Any] | None:
        """``detail``: one line on what died; ``cause``: the full report of it (Ray's), kept for the log.
        ``kind="node"``: the episode's Ray node was lost, no fault of the episode: it is played again
        elsewhere whatever ``retries`` says (the attempt is listed, and counts towards no limit)."""
        exc = WorkerCrashed(detail, engine=engine, seed=seed)
        text = f"{type(exc).__module__}.{type(exc).__name__}: {exc}\n" + (f"caused by:\n{cause}\n" if cause else "")
        if kind == "node" or _may_retry(self.spec, "engine", earlier):
            self.queue.appendleft((seed, [*earlier, _attempt_record(exc, text, kind, len(earlier) + 1)]))
            return None
        info = {**jobs.exception_record(exc, text), "kind": "engine"}
        return trial_record(self.spec, seed, started, {"seed": seed, "ticks": []}, info, earlier)


def _worker_main(conn: Any, spec: Job, log_path: str | None) -> None:
    """A worker process: plays the seeds the driver sends (``None``: stop) with one Player."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's: it ends the workers
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # so the engines' exit hooks run
    if log_path:
        joblog.redirect_stderr(log_path)
    import s1gym  # noqa: F401  registers the tasks

    player = Player(spec)
    try:
        while True:
            message = conn.recv()
            if message is None:
                break
            seed, earlier = message
            conn.send(player.play(seed, earlier))
    except (EOFError, OSError):
        pass  # the driver went away
    finally:
        player.close()


class _Worker:
    def __init__(self, ctx: Any, spec: Job, log_path: str | None) -> None:
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker_main, args=(child, spec, log_path), daemon=True)
        self.process.start()
        child.close()
        self.task: tuple[int, list[dict[str, Any]], str] | None = None

    def stop(self, wait_s: float) -> None:
        with contextlib.suppress(OSError, ValueError):
            if self.task is None:
                self.conn.send(None)
        self.process.join(wait_s if self.task is None else 0)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(5)
        self.conn.close()


class ProcessBackend:
    """K spawned processes (spawn: no forked JVM, browser or thread state), each with its own Player.

    The driver talks to each worker over its own pipe (no queue, lock or semaphore, so nothing for
    multiprocessing's resource tracker to track) and watches each process: one that dies costs only the
    episode it was playing, and a new worker takes its place."""

    def __init__(self, spec: Job, workers: int) -> None:
        check_picklable(spec, f"workers={workers}")
        self.spec, self.workers = spec, workers

    def play(self, seeds: Sequence[int]) -> Iterator[dict[str, Any]]:
        if not seeds:
            return
        ctx = mp.get_context("spawn")
        log_path = str(_log_path(self.spec))
        queue: deque[tuple[int, list[dict[str, Any]]]] = deque((s, []) for s in seeds)
        lost = LostEpisodes(self.spec, queue)
        workers = [_Worker(ctx, self.spec, log_path) for _ in range(min(self.workers, len(seeds)))]

        def feed(w: _Worker) -> None:
            if w.task is None and queue:
                seed, earlier = queue.popleft()
                w.task = (seed, earlier, jobs.now_iso())
                w.conn.send((seed, earlier))

        try:
            while True:
                for w in workers:
                    feed(w)
                busy = [w for w in workers if w.task is not None]
                if not busy:
                    return
                ready = set(wait_for([w.conn for w in busy] + [w.process.sentinel for w in busy]))
                for i, w in enumerate(workers):
                    if w.task is None or (w.conn not in ready and w.process.sentinel not in ready):
                        continue
                    files = None
                    with contextlib.suppress(EOFError, OSError):
                        if w.conn.poll():
                            files = w.conn.recv()
                    if files is not None:
                        w.task = None
                        feed(w)  # its next episode starts while the driver writes this one's files
                        yield files
                        continue
                    seed, earlier, started = w.task
                    w.process.join(5)
                    w.task = None
                    w.stop(0)
                    workers[i] = _Worker(ctx, self.spec, log_path)
                    record = lost(seed, earlier, started, f"the worker process (pid {w.process.pid}) playing "
                                  f"seed {seed} died ({_exit_text(w.process.exitcode)})")
                    if record is not None:
                        yield record
        finally:
            for w in workers:
                w.stop(10)


def _exit_text(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


def _log_path(spec: Job) -> Any:
    from pathlib import Path

    return Path(spec.job_dir) / joblog.LOG_NAME if spec.job_dir else None


def check_picklable(spec: Job, where: str) -> None:
    try:
        pickle.dumps(spec)
    except Exception as exc:
        raise RunError(
            f"{where} sends the policy to other processes, but {spec.policy!r} cannot be pickled "
            f"({type(exc).__name__}: {exc}). Pass the policy by name (e.g. 'random', 'local') or as "
            f"'module:factory', make the object picklable, or run with workers=1."
        ) from exc


def make_backend(
    spec: Job, workers: int, ray: bool | str | None, env: S1Env | None = None, policy: Policy | None = None
) -> Backend:
    """Serial (workers=1, no Ray: reuses the driver's ``env`` and ``policy`` when given), processes, or Ray
    (which close them: each worker builds its own)."""
    if ray or workers > 1:
        if env is not None:
            env.close()
        if ray:
            from s1gym.runner.ray_cluster import RayBackend

            return RayBackend(spec, ray if isinstance(ray, str) else None, workers if workers > 1 else None)
        return ProcessBackend(spec, workers)
    return SerialBackend(Player(spec, env=env, policy=policy))


def orchestrator(workers: int, ray: bool | str | None) -> dict[str, Any]:
    """Harbor's orchestrator record of where the trials run."""
    if ray:
        return {"type": "ray", "address": ray if isinstance(ray, str) else None,
                "n_concurrent_trials": workers if workers > 1 else None}
    return {"type": "local" if workers == 1 else "multiprocessing", "n_concurrent_trials": workers}
