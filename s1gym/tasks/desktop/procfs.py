"""What Linux's /proc tells about a desktop's processes: the members of a process group
(:func:`group_members`), a process's threads (:func:`threads`), and whether an app's main event loop has
nothing left to run (:func:`poll_sleep`, :class:`EventLoopWatch`).
"""

from __future__ import annotations

import os
import platform
import subprocess
import time
from pathlib import Path

from s1gym.tasks.desktop.stack import DesktopError

__all__ = ["EventLoopWatch", "group_members", "poll_sleep", "threads"]


def group_members(pgid: int) -> list[tuple[int, str]]:
    """``(pid, name)`` of the live (non-zombie) processes in process group ``pgid``."""
    out = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after the last ')'
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            out.append((int(entry.name), name))
    return out


#: The syscalls an event loop sleeps in (GLib's g_poll is poll(); glibc makes it ppoll where poll is absent).
POLL_SYSCALLS = {"x86_64": {"7", "271"}, "aarch64": {"73"}}.get(platform.machine(), set())


def poll_sleep(pid: int) -> int | None:
    """The stack pointer at which the main thread of ``pid`` sleeps in a poll() over several descriptors, 0
    when it does not; ``None`` where /proc cannot tell (another architecture, no access)."""
    if not POLL_SYSCALLS:
        return None
    task = f"/proc/{pid}/task/{pid}"
    try:
        with open(f"{task}/syscall") as f:
            first = f.read().split()
        # nr, six arguments (fds, nfds, ...), stack pointer, program counter; "running" while it runs
        if len(first) < 9 or first[0] not in POLL_SYSCALLS or int(first[2], 16) < 2:
            return 0
        stat = Path(f"{task}/stat").read_text()
        with open(f"{task}/syscall") as f:
            again = f.read().split()
    except (FileNotFoundError, ProcessLookupError):
        return 0  # the process is gone: the caller notices it exited
    except OSError:
        return None
    asleep = stat[stat.rindex(")") + 2] == "S" and again == first
    return int(first[-2], 16) if asleep else 0


class EventLoopWatch:
    """Tells when an app's main event loop has nothing left to run: its main thread asleep in the poll() of
    the top-level loop.

    A GLib loop polls with a zero timeout (and never sleeps) while an idle callback or any other source is
    ready, so a main thread asleep in that poll has run everything queued before. Xlib and libdbus also
    sleep in poll() while they wait for a reply (over one descriptor: not counted), and a nested loop polls
    deeper in the stack; the top-level loop's poll is the one at the highest stack address seen.
    """

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.top = 0  # the highest stack pointer of a loop poll seen: the top-level loop's

    def idle(self) -> bool | None:
        sp = poll_sleep(self.proc.pid)
        if sp is None:
            return None
        self.top = max(self.top, sp)
        return sp != 0 and sp == self.top

    def wait(self, timeout: float = 30.0) -> None:
        """Return once the loop is idle (where /proc cannot tell, after 30 ms) or the process has exited;
        :class:`DesktopError` when it stays busy for ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None:
            idle = self.idle()
            if idle is None:
                time.sleep(0.03)
                return
            if idle:
                return
            if time.monotonic() > deadline:
                raise DesktopError(f"pid {self.proc.pid} stayed busy for {timeout} s")
            time.sleep(0.0005)


def threads(pid: int, name: str | None = None) -> frozenset[int]:
    """The thread ids of process ``pid`` (named ``name``, when given; empty when the process is gone).

    Threads started without a name carry the process's name; GLib's workers are named (``gmain``,
    ``gdbus``, ``pool-...``).
    """
    out = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return frozenset()
    for tid in tids:
        try:
            if name is None or Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip() == name:
                out.append(int(tid))
        except OSError:
            continue  # the thread just ended
    return frozenset(out)
