"""Episodes on Ray: a local Ray (``--ray``) or a user's cluster (``--ray HOST:PORT``, reached within seconds
or a clear error), one actor per concurrent slot, each holding a :class:`~s1gym.runner.backends.Player`.

An actor whose process dies costs the episode it was playing: it is replaced, and the episode is played
again (``--retries``) or recorded with a :class:`~s1gym.runner.backends.WorkerCrashed` naming the process,
its node and Ray's reason. Ray's own note of the death goes to the job's log, not the terminal. A worker
node lost mid-job costs no retry: its unfinished episodes are played again on the other nodes. A head that
stops answering ends the job with :class:`RayHeadLost` (``--resume`` continues). :class:`LoopbackCluster`
starts a cluster of several nodes on this machine's loopback interface (tests, benches, docs/cluster.md).
"""

from __future__ import annotations

import contextlib
import re
import socket
import sys
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from s1gym import jobs
from s1gym.errors import RunError
from s1gym.runner import joblog
from s1gym.runner.backends import Job, LostEpisodes, Player, check_picklable

__all__ = ["RAY_HINT", "RAY_PROBE_S", "LoopbackCluster", "RayBackend", "RayHeadLost", "connect_ray", "disconnect_ray"]


class RayBackend:
    """One Ray actor per concurrent slot, each holding a Player, spread over the cluster's nodes; a local Ray
    without an address.

    An actor gets seeds only once it has started (it says on which node), so an actor Ray cannot place
    (no free CPU left after a node was lost, more ``workers`` than the cluster has CPUs) holds no episode:
    the others play them. An actor that dies costs the episode it was playing (played again on a new actor,
    like a dead engine, up to ``retries``); an actor lost with its node costs no retry: the node's unfinished
    episodes are played again on the other nodes, and the job's log names the node. A head that stops
    answering ends the job with :class:`RayHeadLost` (the trials written so far stay; ``--resume``
    continues). ``placements``: the episodes each node played (``'IP (node ID)'`` -> count), after :meth:`play`."""

    def __init__(self, spec: Job, address: str | None, workers: int | None) -> None:
        check_picklable(spec, "ray")
        self.spec, self.address, self.workers = spec, address, workers
        self.placements: dict[str, int] = {}
        self.lost_nodes: dict[str, str] = {}  # node id -> its address, for each node lost mid-job

    def play(self, seeds: Sequence[int]) -> Iterator[dict[str, Any]]:
        if not seeds:
            return
        started_here = connect_ray(self.address)
        import ray
        from ray.exceptions import RayActorError, WorkerCrashedError

        queue: deque[tuple[int, list[dict[str, Any]]]] = deque((s, []) for s in seeds)
        lost = LostEpisodes(self.spec, queue)
        actor_cls = ray.remote(num_cpus=1, max_restarts=0, scheduling_strategy="SPREAD")(_RayPlayer)
        head: _HeadWatch | None = None
        starting: dict[Any, Any] = {}  # an actor's where() call -> the actor, until it answers
        idle: list[tuple[Any, _Place]] = []
        running: dict[Any, tuple[Any, _Place, int, list[dict[str, Any]], str]] = {}

        def dispatch() -> None:
            while opened and idle and queue:
                (actor, place), (seed, earlier) = idle.pop(), queue.popleft()
                running[actor.play.remote(seed, earlier)] = (actor, place, seed, earlier, jobs.now_iso())

        def spawn() -> None:
            actor = actor_cls.remote(self.spec)
            starting[actor.where.remote()] = actor

        try:
            head = _HeadWatch(self.address)
            n = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
            for _ in range(min(n, len(seeds))):
                spawn()
            opened, first_ready, busy_since = False, None, time.monotonic()
            while queue or running:
                now = time.monotonic()
                # the first seeds wait until every actor asked for has started (or RAY_START_WAIT_S after the
                # first did), so a fast actor does not take every short episode while the others start
                opened = opened or not starting or (first_ready is not None and now - first_ready >= RAY_START_WAIT_S)
                dispatch()
                if running or idle:
                    busy_since = now
                elif now - busy_since > RAY_STARVED_S:
                    raise RunError(
                        f"--ray: no Ray actor has started in {RAY_STARVED_S:.0f} s (the cluster has "
                        f"{ray.available_resources().get('CPU', 0):g} CPU free of "
                        f"{ray.cluster_resources().get('CPU', 0):g}); give the cluster a node with a free CPU, or "
                        "fewer --ray-workers; the trials finished so far are saved (--resume)")
                ready, _ = ray.wait([*running, *starting], num_returns=1, timeout=RAY_HEAD_CHECK_S)
                head.check()
                if not ready:
                    continue
                (ref,) = ready
                if ref in starting:
                    actor = starting.pop(ref)
                    try:
                        idle.append((actor, _Place(*ray.get(ref))))
                        first_ready = first_ready or time.monotonic()
                    except (RayActorError, WorkerCrashedError) as exc:
                        head.check(now=True)
                        _kill(ray, actor)
                        if _creation_failed(exc):  # the spec cannot be built there: not a node's fault
                            raise RunError(f"a Ray actor could not start: {_first_lines(exc)}") from None
                        spawn()  # its node went away before it started
                    continue
                actor, place, seed, earlier, started = running.pop(ref)
                try:
                    files = ray.get(ref)
                except (RayActorError, WorkerCrashedError) as exc:
                    head.check(now=True)  # an actor lost with the head: the job ends here
                    _kill(ray, actor)
                    spawn()
                    cause = f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
                    if _node_lost(ray, place.node_id):
                        self._note_lost_node(place, queue, running)
                        record = lost(seed, earlier, started, f"the Ray node {place} playing seed {seed} was "
                                      "lost", "Ray node", cause, kind="node")
                    else:
                        record = lost(seed, earlier, started, _actor_death(seed, exc), "Ray actor", cause)
                    if record is not None:
                        yield record
                    continue
                idle.append((actor, place))
                dispatch()  # its next episode starts while the driver writes this one's files
                self.placements[str(place)] = self.placements.get(str(place), 0) + 1
                yield files
            if self.placements:
                joblog.log.info("episodes per Ray node: %s", ", ".join(
                    f"{node}: {count}" for node, count in sorted(self.placements.items())))
        finally:
            if head is not None and not head.lost:  # (with the head gone, Ray would wait a minute for each)
                for actor in [*starting.values(), *(a for a, _ in idle), *(v[0] for v in running.values())]:
                    _kill(ray, actor)
            if started_here:
                disconnect_ray()

    def _note_lost_node(self, place: _Place, queue: deque[tuple[int, list[dict[str, Any]]]],
                        running: Mapping[Any, tuple[Any, _Place, int, list[dict[str, Any]], str]]) -> None:
        if place.node_id in self.lost_nodes:
            return
        self.lost_nodes[place.node_id] = place.ip
        also = sorted(v[2] for v in running.values() if v[1].node_id == place.node_id)
        joblog.log.warning("Ray node %s was lost mid-job; the episodes it was playing are played again on the "
                           "other nodes%s", place, f" (also seeds {also})" if also else "")


class _Place:
    """Where an actor runs: its node's id and address, and its process."""

    def __init__(self, node_id: str, ip: str, pid: int) -> None:
        self.node_id, self.ip, self.pid = node_id, ip, pid

    def __str__(self) -> str:
        return f"{self.ip} (node {self.node_id[:12]})"


def _kill(ray: Any, actor: Any) -> None:
    with contextlib.suppress(Exception):
        ray.kill(actor, no_restart=True)


def _node_lost(ray: Any, node_id: str) -> bool:
    """Whether Ray holds the node dead (an actor lost with its node) rather than only the actor's process."""
    try:
        return any(n.get("NodeID") == node_id and not n.get("Alive") for n in ray.nodes())
    except Exception:  # noqa: BLE001  the head is gone too: the next wait says so
        return False


def _creation_failed(exc: BaseException) -> bool:
    """An actor whose constructor raised (Ray: "The actor died because of an error raised in its creation
    task"), as opposed to one whose process or node died."""
    return "creation task" in str(exc)


def _first_lines(exc: BaseException, n: int = 6) -> str:
    return " ".join(ln.strip() for ln in str(exc).strip().splitlines()[:n] if ln.strip())


#: Seconds between checks that the head still answers; and how long it may not before the job ends.
RAY_HEAD_CHECK_S = 2.0
RAY_HEAD_LOST_S = 10.0
#: Seconds the first seeds wait, after the first actor started, for the others to start.
RAY_START_WAIT_S = 10.0
#: Seconds with episodes left and no actor started (none can be placed) before the job ends.
RAY_STARVED_S = 300.0


class RayHeadLost(RunError):
    """The Ray head stopped answering mid-job: the job ends; the trials written so far stay (``--resume``)."""


class _HeadWatch:
    """A TCP connection to the head's GCS every few seconds (and at once when an actor dies: Ray's own calls,
    ``ray.nodes()`` among them, wait a minute for a head that is gone, then end this process): a head that
    refuses them for :data:`RAY_HEAD_LOST_S`, or as an actor dies, ends the job with :class:`RayHeadLost`."""

    def __init__(self, address: str | None) -> None:
        import ray

        self.address = address
        gcs = ray.get_runtime_context().gcs_address
        self.host, _, port = gcs.rpartition(":")
        self.port = int(port)
        self.since: float | None = None
        self.last = time.monotonic()
        self.lost = False

    def check(self, now: bool = False) -> None:
        """Probe the head if the last probe is :data:`RAY_HEAD_CHECK_S` old (``now``: at once); raise once it
        has not answered for :data:`RAY_HEAD_LOST_S` (``now``: if it does not answer)."""
        if not now and time.monotonic() - self.last < RAY_HEAD_CHECK_S:
            return
        self.last = time.monotonic()
        try:
            socket.create_connection((self.host.strip("[]"), self.port), timeout=RAY_PROBE_S).close()
            self.since = None
            return
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
        self.since = self.since or self.last
        if not now and self.last - self.since < RAY_HEAD_LOST_S:
            return
        self.lost = True
        where = self.address or f"{self.host}:{self.port}"
        raise RayHeadLost(
            f"--ray {where}: the Ray head stopped answering mid-job ({reason} at {self.host}:{self.port}); "
            "the trials finished so far are saved: start the head again (or another cluster) and rerun the "
            "same command with --resume to play the rest")


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

    def where(self) -> tuple[str, str, int]:
        """This actor's node id, node address and process id (its first answer: it has started)."""
        import os

        import ray

        return ray.get_runtime_context().get_node_id(), ray.util.get_node_ip_address(), os.getpid()

    def play(self, seed: int, earlier: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
        return self.player.play(seed, earlier)


class LoopbackCluster:
    """A Ray cluster of ``nodes`` nodes on this machine, started with Ray's own ``ray start`` (a head, then
    one ``ray start --address`` a worker node, each with ``cpus`` CPUs), every one of them on the loopback
    interface: the head on 127.0.0.2, worker node ``i`` on 127.0.0.(3+i). For trying a job on several
    nodes without a second machine (the tests and ``bench/ray_cluster.py`` do), and for killing a node.

    Why not 127.0.0.1: Ray replaces ``127.0.0.1`` and ``localhost`` by the machine's routable address
    wherever it is given (``--node-ip-address``, ``--address``: ``resolve_ip_for_localhost``), so a cluster
    started "on 127.0.0.1" advertises and dials the ethernet address. Any other 127.x address is taken as
    given, and Linux answers on all of 127.0.0.0/8; each node binds its servers to its own address.

    ``env``: the environment for the nodes and for a driver (``PYTHONPATH`` so the nodes' workers import
    what the driver does; Ray's token authentication off unless the caller's environment sets it; Ray's
    node health checks every 0.5 s, a node missing 4 in a row is dead). Use as a context manager:
    :meth:`stop` ends every process the cluster started (SIGTERM to each ``ray start``, then SIGKILL to
    what is left of each one's process group); if this process dies first, each ``ray start`` gets SIGTERM
    from the kernel (``setpriv --pdeathsig``, where util-linux is installed) and stops its node."""

    HEAD_IP = "127.0.0.2"

    def __init__(self, nodes: int = 3, cpus: int = 1, env: Mapping[str, str] | None = None,
                 start_timeout_s: float = 180.0) -> None:
        import os
        import tempfile
        from pathlib import Path

        if nodes < 1 or cpus < 1:
            raise ValueError(f"LoopbackCluster(nodes={nodes}, cpus={cpus}): give at least one node and one CPU")
        self.nodes, self.cpus, self.start_timeout_s = nodes, cpus, start_timeout_s
        #: set by :meth:`kill_head`: the other nodes' ``ray start`` then have no head to say goodbye to
        self.head_lost = False
        path = os.pathsep.join(p for p in [*sys.path, os.environ.get("PYTHONPATH", "")] if p)
        self.env = {"RAY_AUTH_MODE": "disabled", **os.environ, "PYTHONPATH": path,
                    "RAY_health_check_period_ms": "500", "RAY_health_check_timeout_ms": "1000",
                    "RAY_health_check_failure_threshold": "4", "RAY_USAGE_STATS_ENABLED": "0", **(env or {})}
        self.temp = Path(tempfile.mkdtemp(prefix="s1ray", dir="/tmp"))  # short: Ray's socket paths are limited
        self.port = _free_port()
        self.address = f"{self.HEAD_IP}:{self.port}"
        self.procs: list[Any] = []  # the `ray start --block` processes: head first

    def ips(self) -> list[str]:
        return [self.HEAD_IP] + [f"127.0.0.{3 + i}" for i in range(self.nodes - 1)]

    def __enter__(self) -> LoopbackCluster:  # noqa: PYI034
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        ray_cli = str(__import__("pathlib").Path(sys.executable).with_name("ray"))
        common = ["--block", f"--num-cpus={self.cpus}", "--num-gpus=0", "--disable-usage-stats",
                  "--object-store-memory=100000000"]
        for i, ip in enumerate(self.ips()):
            where = [f"--node-ip-address={ip}", f"--node-manager-port={_free_port()}",
                     f"--object-manager-port={_free_port()}", f"--dashboard-agent-listen-port={_free_port()}",
                     f"--dashboard-agent-grpc-port={_free_port()}", f"--metrics-export-port={_free_port()}",
                     f"--runtime-env-agent-port={_free_port()}"]
            if i == 0:
                role = ["--head", f"--port={self.port}", f"--temp-dir={self.temp}", "--include-dashboard=false",
                        f"--dashboard-port={_free_port()}"]
            else:
                role = [f"--address={self.address}"]
            self._start([ray_cli, "start", *role, *where, *common], f"node{i}")

    def _start(self, args: list[str], name: str) -> None:
        import subprocess

        log_path = self.temp / f"{name}.log"
        import shutil

        setpriv = shutil.which("setpriv")  # util-linux: SIGTERM to the node when this process dies, however it
        if setpriv:  # dies (a test runner killed), so a node never outlives its cluster's owner
            args = [setpriv, "--pdeathsig", "TERM", *args]
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(args, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        self.procs.append(proc)
        deadline = time.monotonic() + self.start_timeout_s
        while b"Ray runtime started" not in log_path.read_bytes():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RunError(f"ray start ({name}) did not start:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.2)

    def raylet_pid(self, node: int) -> int:
        """The pid of node ``node``'s raylet (0 is the head)."""
        (pid,) = _descendants(self.procs[node].pid, "raylet")
        return pid

    def kill_node(self, node: int) -> int:
        """SIGKILL node ``node``'s raylet (its workers follow it); its pid."""
        import os
        import signal

        pid = self.raylet_pid(node)
        os.kill(pid, signal.SIGKILL)
        return pid

    def kill_head(self) -> None:
        """SIGKILL the head's whole process group (GCS, raylet, monitors): a head that vanishes."""
        import os
        import signal

        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.procs[0].pid, signal.SIGKILL)
        self.head_lost = True

    def stop(self) -> None:
        import os
        import shutil
        import signal
        import subprocess

        everything = {pid for p in self.procs for pid in _descendants(p.pid)}
        for proc in reversed(self.procs):
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
        # one grace period for all nodes, not one each; short once the head is gone: a worker node's
        # ``ray start`` then waits on a head that will not answer, and SIGKILL is all that is left to do
        deadline = time.monotonic() + (3.0 if self.head_lost else 15.0)
        for proc in reversed(self.procs):
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(max(0.0, deadline - time.monotonic()))
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
        for pid in everything:  # any that left the groups: still ours if still below a node's process
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.procs.clear()
        shutil.rmtree(self.temp, ignore_errors=True)

    def leftovers(self) -> list[int]:
        """Live processes whose command line names this cluster's folder (after :meth:`stop`: none)."""
        return _processes_naming(str(self.temp))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _proc_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) for every live (non-zombie) process."""
    from pathlib import Path

    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if fields[0] != "Z":
            table[int(entry.name)] = (int(fields[1]), cmd)
    return table


def _descendants(root: int, name: str = "") -> list[int]:
    """Live processes below ``root`` whose command's first word ends with ``name`` (any, if empty)."""
    table = _proc_table()
    out = []
    for pid, (_, cmd) in table.items():
        first = cmd.split(" ", 1)[0]
        if name and not first.endswith(name):
            continue
        parent = pid
        for _ in range(64):
            parent = table.get(parent, (0, ""))[0]
            if parent == root:
                out.append(pid)
                break
            if parent <= 1:
                break
    return out


def _processes_naming(text: str) -> list[int]:
    return [pid for pid, (_, cmd) in _proc_table().items() if text in cmd]
