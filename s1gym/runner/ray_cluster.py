"""Episodes on Ray: a local Ray (``--ray``) or a user's cluster (``--ray HOST:PORT``, reached within seconds
or a clear error), one actor per concurrent slot, each holding a :class:`~s1gym.runner.backends.Player`.

An actor whose process dies costs the episode it was playing: it is replaced, and the episode is played
again (``--retries``) or recorded with a :class:`~s1gym.runner.backends.WorkerCrashed` naming the process,
its node and Ray's reason. Ray's own note of the death goes to the job's log, not the terminal.
"""

from __future__ import annotations

import contextlib
import re
import socket
import sys
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from s1gym import jobs
from s1gym.errors import RunError
from s1gym.runner import joblog
from s1gym.runner.backends import Job, LostEpisodes, Player, check_picklable

__all__ = ["RAY_HINT", "RAY_PROBE_S", "RayBackend", "connect_ray", "disconnect_ray"]


class RayBackend:
    """One Ray actor per concurrent slot, each holding a Player; a local Ray without an address. An actor
    that dies costs the episode it was playing (retried on a new actor, like a dead engine)."""

    def __init__(self, spec: Job, address: str | None, workers: int | None) -> None:
        check_picklable(spec, "ray")
        self.spec, self.address, self.workers = spec, address, workers

    def play(self, seeds: Sequence[int]) -> Iterator[dict[str, Any]]:
        if not seeds:
            return
        started_here = connect_ray(self.address)
        import ray
        from ray.exceptions import RayActorError, WorkerCrashedError

        queue: deque[tuple[int, list[dict[str, Any]]]] = deque((s, []) for s in seeds)
        lost = LostEpisodes(self.spec, queue)
        actor_cls = ray.remote(num_cpus=1, max_restarts=0)(_RayPlayer)
        try:
            n = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
            idle = [actor_cls.remote(self.spec) for _ in range(min(n, len(seeds)))]
            running: dict[Any, tuple[Any, int, list[dict[str, Any]], str]] = {}
            while queue or running:
                while idle and queue:
                    actor, (seed, earlier) = idle.pop(), queue.popleft()
                    running[actor.play.remote(seed, earlier)] = (actor, seed, earlier, jobs.now_iso())
                (ref,), _ = ray.wait(list(running), num_returns=1)
                actor, seed, earlier, started = running.pop(ref)
                try:
                    files = ray.get(ref)
                except (RayActorError, WorkerCrashedError) as exc:
                    with contextlib.suppress(Exception):
                        ray.kill(actor)
                    idle.append(actor_cls.remote(self.spec))
                    record = lost(seed, earlier, started, _actor_death(seed, exc), "Ray actor",
                                  f"{type(exc).__module__}.{type(exc).__name__}: {exc}")
                    if record is not None:
                        yield record
                    continue
                idle.append(actor)
                yield files
        finally:
            if started_here:
                disconnect_ray()


def _actor_death(seed: int, exc: BaseException) -> str:
    """One line from Ray's report of a dead actor: which process, on which node, and why it ended, e.g.
    ``the Ray actor (pid 3763 on 10.0.0.5) playing seed 3 died (SYSTEM_ERROR: Worker unexpectedly exits
    with a connection error code 2. End of file.)``."""
    text = str(exc)
    pid, ip = re.search(r"(?m)^\s*pid: (\d+)$", text), re.search(r"(?m)^\s*ip: (\S+)$", text)
    where = " on ".join(m.group(1) for m in (pid, ip) if m)
    how = re.search(r"(?m)Worker exit type: (\S+) Worker exit detail: (.+?)(?: Some common causes|$)", text)
    if how:
        reason = f"{how.group(1)}: {how.group(2).strip()}"
    else:  # the report's first line that is not a field
        lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("\t")]
        reason = lines[-1] if lines else type(exc).__name__
    pid_text = f" ({'pid ' if pid else ''}{where})" if where else ""
    return f"the Ray actor{pid_text} playing seed {seed} died ({reason[:300]})"


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
        # A Ray of its own (address="local"), whatever the machine remembers: a cluster this machine ran
        # before may have left its address (/tmp/ray/ray_current_cluster, $RAY_ADDRESS) after it went away,
        # and ray.init() would try to join it. A local Ray sees this interpreter's import path, so
        # 'module:id' tasks and policies resolve.
        ray.init(
            address="local",
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"PYTHONPATH": ":".join(p for p in sys.path if p)}},
        )
    else:
        _probe_ray_head(address)
        try:
            ray.init(address=address, log_to_driver=False)
        except (ConnectionError, TimeoutError) as exc:
            if _auth_refused(exc):
                raise RunError(f"--ray {address}: the Ray head there refused this driver's token; {RAY_AUTH_HINT}"
                               ) from None
            raise RunError(f"--ray {address}: could not connect to a Ray head there ({exc}); {RAY_HINT}") from None
    _divert_ray_errors()
    return True


RAY_AUTH_HINT = (
    "the head uses Ray's token authentication (its default where ~/.ray/auth_token exists): set "
    "RAY_AUTH_MODE=token and give the cluster's token here (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or "
    "~/.ray/auth_token), or start the head with RAY_AUTH_MODE=disabled"
)


def _auth_refused(exc: BaseException) -> bool:
    """Whether Ray's failure to connect was its token authentication saying no (the cause's text)."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if "InvalidAuthToken" in str(seen) or type(seen).__name__ == "AuthenticationError":
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def disconnect_ray() -> None:
    import ray

    ray.shutdown()
    _restore_ray_errors()


_ray_printer: list[Any] = []


def _divert_ray_errors() -> None:
    """Ray's driver prints what the raylets push to it (one long line per dead worker: "A worker died or was
    killed while executing a task ...") to the terminal, with no option to turn it off, ``log_to_driver``
    included. While connected, those go to the job's log instead: the trial that met the death records it
    (:func:`_actor_death`), the terminal gets the runner's one line. Ray's own output otherwise is unchanged."""
    try:
        from ray._private import worker as ray_worker

        real = ray_worker.print_to_stdstream
    except (ImportError, AttributeError):  # another Ray: its messages stay where Ray puts them
        return

    def to_log(data: Mapping[str, Any], ignore_prefix: bool) -> None:
        if data.get("pid") != "raylet":
            real(data, ignore_prefix)
            return
        for line in data.get("lines") or ():
            joblog.log.warning("Ray: %s", line)

    if not _ray_printer:
        _ray_printer.append(real)
        ray_worker.print_to_stdstream = to_log


def _restore_ray_errors() -> None:
    if _ray_printer:
        from ray._private import worker as ray_worker

        ray_worker.print_to_stdstream = _ray_printer.pop()


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
    def __init__(self, spec: Job) -> None:
        import s1gym  # noqa: F401  registers the tasks in the Ray worker

        self.player = Player(spec)

    def pid(self) -> int:
        import os

        return os.getpid()

    def play(self, seed: int, earlier: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
        return self.player.play(seed, earlier)
