"""Where episodes run: in this process, in spawned worker processes, or on Ray.

Every backend has one method, ``play(seeds)``, yielding each trial's files (as
dicts, :func:`s1gym.jobs.trial_files`) in completion order; the driver writes
them. Workers hold a :class:`Player` (one env and one policy, reused across the
seeds they play), so results are the same whatever runs them.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import pickle
import socket
import sys
import traceback
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from s1gym import jobs
from s1gym._version import __version__
from s1gym.core import Policy, S1Env
from s1gym.errors import RunError
from s1gym.runner.episode import play_episode

if TYPE_CHECKING:
    from s1gym.runner.spec import JobSpec

__all__ = [
    "Backend",
    "Player",
    "ProcessBackend",
    "RayBackend",
    "SerialBackend",
    "connect_ray",
    "disconnect_ray",
    "make_backend",
]


class Backend(Protocol):
    def play(self, seeds: Sequence[int]) -> Iterator[dict[str, Any]]: ...


class Player:
    """One env and one policy, reused across the episodes a process (or Ray actor) plays."""

    def __init__(self, spec: JobSpec, env: S1Env | None = None, policy: Policy | None = None) -> None:
        self.spec = spec
        self.env = env
        self.policy = None if spec.seeded else (policy or spec.build_policy())

    def _env(self) -> S1Env:
        if self.env is None:
            self.env = self.spec.make_env()
        return self.env

    def play(self, seed: int) -> dict[str, Any]:
        """Play ``seed``; the trial's files. An episode that raises is recorded as errored (with the
        ticks played so far) and the next one starts with a fresh env."""
        spec = self.spec
        started = jobs.now_iso()
        exception_info = None
        try:
            policy = spec.build_policy(seed) if spec.seeded else self.policy
            assert policy is not None
            episode = play_episode(self._env(), policy, seed, frames=spec.frames, agreement=spec.agreement)
        except Exception as exc:  # noqa: BLE001
            exception_info = jobs.exception_record(exc, traceback.format_exc())
            episode = getattr(exc, "partial_episode", None) or {"seed": seed, "ticks": []}
            self._discard_env()  # an engine that raised may be broken: start the next episode fresh
        agent_info = {
            "name": spec.label,
            "version": __version__,
            "model_info": spec.model_info(),
            "policy": spec.agent.policy,
            "wrappers": spec.agent.wrapper_kinds,
        }
        return jobs.trial_files(
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


_WORKER: Player | None = None


def _init_worker(spec: JobSpec) -> None:
    global _WORKER
    _WORKER = Player(spec)


def _worker_play(seed: int) -> dict[str, Any]:
    assert _WORKER is not None, "worker not initialised"
    return _WORKER.play(seed)


class ProcessBackend:
    """K spawned processes (spawn: no forked JVM, browser or thread state), each with its own Player."""

    def __init__(self, spec: JobSpec, workers: int) -> None:
        check_picklable(spec, f"workers={workers}")
        self.spec, self.workers = spec, workers

    def play(self, seeds: Sequence[int]) -> Iterator[dict[str, Any]]:
        if not seeds:
            return
        ctx = mp.get_context("spawn")
        with ctx.Pool(min(self.workers, len(seeds)), initializer=_init_worker, initargs=(self.spec,)) as pool:
            yield from pool.imap_unordered(_worker_play, seeds)


class RayBackend:
    """One Ray actor per concurrent slot, each holding a Player; a local Ray without an address."""

    def __init__(self, spec: JobSpec, address: str | None, workers: int | None) -> None:
        check_picklable(spec, "ray")
        self.spec, self.address, self.workers = spec, address, workers

    def play(self, seeds: Sequence[int]) -> Iterator[dict[str, Any]]:
        if not seeds:
            return
        started_here = connect_ray(self.address)
        import ray
        from ray.util import ActorPool

        try:
            n = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
            actor_cls = ray.remote(num_cpus=1)(_RayPlayer)
            actors = [actor_cls.remote(self.spec) for _ in range(min(n, len(seeds)))]
            yield from ActorPool(actors).map_unordered(lambda a, s: a.play.remote(s), list(seeds))
        finally:
            if started_here:
                disconnect_ray()


#: Seconds to wait for a Ray head's port to accept a connection.
RAY_PROBE_S = 5.0
RAY_HINT = (
    "start a head there (`ray start --head --port=PORT` on that machine prints the address to pass), check "
    "the address and that the port is reachable from here, or pass --ray without an address for a local Ray"
)


def connect_ray(address: str | None) -> bool:
    """Start a local Ray (``address`` None) or connect to the cluster at ``address``, unless Ray is already
    initialised; True when this call did (the caller ends it with :func:`disconnect_ray`).

    An address whose head does not answer is a :class:`~s1gym.errors.RunError` naming the address and how
    to reach a head, within seconds (Ray itself retries for minutes)."""
    try:
        import ray
    except ImportError as exc:
        raise RunError("--ray needs Ray: pip install 's1gym[ray]' (or pip install ray)") from exc
    if ray.is_initialized():
        return False
    if not address:
        # A local Ray sees this interpreter's import path, so 'module:id' tasks and policies resolve.
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"PYTHONPATH": ":".join(p for p in sys.path if p)}},
        )
        return True
    _probe_ray_head(address)
    try:
        ray.init(address=address, log_to_driver=False)
    except (ConnectionError, TimeoutError) as exc:
        raise RunError(f"--ray {address}: could not connect to a Ray head there ({exc}); {RAY_HINT}") from None
    return True


def disconnect_ray() -> None:
    import ray

    ray.shutdown()


def _probe_ray_head(address: str) -> None:
    """A TCP connection to ``HOST:PORT`` (or ``ray://HOST:PORT``) within a few seconds, else a RunError."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        if address in ("auto", "local"):
            return  # Ray looks for a cluster started on this machine and says when there is none
        raise RunError(f"--ray {address!r}: give the head's address as HOST:PORT (e.g. 10.0.0.5:6379); {RAY_HINT}")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=RAY_PROBE_S).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise RunError(f"--ray {address}: no Ray head answers at {host}:{port} ({reason}); {RAY_HINT}") from None


class _RayPlayer:
    def __init__(self, spec: JobSpec) -> None:
        import s1gym  # noqa: F401  registers the tasks in the Ray worker

        self.player = Player(spec)

    def play(self, seed: int) -> dict[str, Any]:
        return self.player.play(seed)


def check_picklable(spec: JobSpec, where: str) -> None:
    try:
        pickle.dumps(spec)
    except Exception as exc:
        raise RunError(
            f"{where} sends the policy to other processes, but {spec.policy!r} cannot be pickled "
            f"({type(exc).__name__}: {exc}). Pass the policy by name (e.g. 'random', 'local') or as "
            f"'module:factory', make the object picklable, or run with workers=1."
        ) from exc


def make_backend(
    spec: JobSpec, workers: int, ray: bool | str | None, env: S1Env | None = None, policy: Policy | None = None
) -> Backend:
    """Serial (workers=1, no Ray: reuses the driver's ``env`` and ``policy`` when given), processes, or Ray
    (which close them: each worker builds its own)."""
    if ray or workers > 1:
        if env is not None:
            env.close()
        if ray:
            return RayBackend(spec, ray if isinstance(ray, str) else None, workers if workers > 1 else None)
        return ProcessBackend(spec, workers)
    return SerialBackend(Player(spec, env=env, policy=policy))


def orchestrator(workers: int, ray: bool | str | None) -> dict[str, Any]:
    """Harbor's orchestrator record of where the trials run."""
    if ray:
        return {"type": "ray", "address": ray if isinstance(ray, str) else None,
                "n_concurrent_trials": workers if workers > 1 else None}
    return {"type": "local" if workers == 1 else "multiprocessing", "n_concurrent_trials": workers}
