"""A policy that kills a real process at a chosen decision (tests/test_faults.py).

``killer`` plays like Uniform (always the first candidate) and, between two moves, at its ``at``-th decision (over the episodes it plays)
and then every ``every`` decisions, sends SIGKILL to ``target``: ``jvm`` (the TextWorldExpress java
process), ``xvfb`` (the desktop's X server), ``chromium``, each found among this process's descendants
through /proc, or ``self`` (the process playing, e.g. a --workers process). Each kill is appended to the
file ``log`` (``target pid``), so a test can tell which processes died; with ``once`` only the first kill
of all processes happens (a replacement worker counts its decisions from 0 again).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from s1gym.core import BasePolicy, Decision, Situation
from s1gym.policies.basic import Uniform

NAMES = {"jvm": (b"java",), "xvfb": (b"Xvfb",), "chromium": (b"chromium", b"chrome")}


def descendants(root: int, names: tuple[bytes, ...]) -> list[int]:
    """Live processes below ``root`` whose command line's first word ends with one of ``names``."""
    parents: dict[int, int] = {}
    commands: dict[int, bytes] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
            commands[int(entry.name)] = cmd

    def below(pid: int) -> bool:
        for _ in range(64):
            pid = parents.get(pid, 0)
            if pid == root:
                return True
            if pid <= 1:
                return False
        return False

    return sorted(p for p, cmd in commands.items() if below(p) and os.path.basename(cmd).endswith(names))


class Killer(BasePolicy):
    name = "killer"

    def __init__(self, target: str = "jvm", at: int = 3, every: int = 0, log: str = "",
                 once: bool = False) -> None:
        if target not in (*NAMES, "self"):
            raise ValueError(f"killer: target must be one of {[*NAMES, 'self']}, got {target!r}")
        self.target, self.at, self.every, self.log = target, int(at), int(every), log
        self.once = once in (True, "1", "true", "yes")
        if self.once and not log:
            raise ValueError("killer: once needs a log file (it counts the kills of every process)")
        self.inner = Uniform()
        self.decisions = 0  # over every episode this policy plays (a retried one counts on)

    def options(self) -> dict[str, object]:
        return {"target": self.target, "at": self.at, "every": self.every}

    def decide(self, situation: Situation) -> Decision:
        self.decisions += 1
        n = self.decisions
        due = n == self.at or (self.every and n > self.at and (n - self.at) % self.every == 0)
        if due and (not self.once or self._claim()):
            self._kill()
        return self.inner.decide(situation)

    def _claim(self) -> bool:
        """True for the first process to ask, once over the job: an exclusive create, since two workers can
        reach their due decision at the same moment (a check of the log before writing it let both kill)."""
        try:
            os.close(os.open(f"{self.log}.claimed", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False
        return True

    def _kill(self) -> None:
        pids = [os.getpid()] if self.target == "self" else descendants(os.getpid(), NAMES[self.target])
        if self.target == "jvm":  # the TextWorldExpress JVM only: other families may run JVMs of their own
            from s1gym.engines import jvm

            pids = [pid for pid in pids if jvm.current_jvm() is not None and pid == jvm.current_jvm().process.pid]
        if not pids:
            raise RuntimeError(f"killer: no {self.target} process below pid {os.getpid()}")
        if self.log:
            with open(self.log, "a") as f:
                f.write("".join(f"{self.target} {pid}\n" for pid in pids))
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        for pid in pids:  # dead before the next move: what the env meets is a dead engine, never a dying one
            wait_dead(pid)
        if self.target == "jvm":  # and reapable: the JVM counts as dead only once its parent can reap it
            from s1gym.engines import jvm

            deadline = time.monotonic() + 10
            while jvm.current_jvm() is not None and jvm.current_jvm().process.pid in pids:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the killed JVM {pids} still counts as alive after 10 s")
                time.sleep(0.01)


def wait_dead(pid: int, timeout: float = 10.0) -> None:
    """Until ``pid`` has exited: every thread of it gone or a zombie (a killed JVM's main thread is a zombie
    while its other threads still exit, and its parent cannot reap it until they have)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            tasks = list(Path(f"/proc/{pid}/task").iterdir())
        except OSError:
            return
        states = []
        for task in tasks:
            with contextlib.suppress(OSError):  # a thread that ended meanwhile
                states.append((task / "stat").read_text())
        if all(s[s.rindex(")") + 2] in "ZX" for s in states):
            return
        time.sleep(0.01)
    raise TimeoutError(f"pid {pid} still runs {timeout} s after SIGKILL")


def killer(**options: object) -> Killer:
    return Killer(**options)  # type: ignore[arg-type]


class Flaky(BasePolicy):
    """Uniform, except that its decisions in the episodes listed in ``fail_on`` (counted in this process
    from 0) raise a PolicyServerError the first time that episode is played."""

    name = "flaky"

    def __init__(self, fail_on: int = 0) -> None:
        self.fail_on, self.episode, self.failed = int(fail_on), -1, set()
        self.inner = Uniform()

    def reset(self) -> None:
        self.episode += 1

    def decide(self, situation: Situation) -> Decision:
        from s1gym.policies.errors import PolicyServerError

        if self.episode == self.fail_on and self.fail_on not in self.failed:
            self.failed.add(self.fail_on)
            raise PolicyServerError("the service answered 503 (test)")
        return self.inner.decide(situation)


def flaky(**options: object) -> Flaky:
    return Flaky(**options)  # type: ignore[arg-type]
