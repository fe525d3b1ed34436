"""Headless Linux desktops for the desktop tasks: an X server, a session D-Bus, apps, in one process group.

A :class:`DesktopSession` is one private desktop:

- ``Xvfb -displayfd N -noreset`` picks a free display number itself (no guessing, no race with other
  sessions on the machine); ``-noreset`` keeps the server up when its last client goes (without it
  about one parallel launch in seven failed, the app connecting while the server reset);
- a session ``dbus-daemon`` on a socket inside the session's own directory. Apps that ask it for
  ``org.a11y.Bus`` activate ``at-spi-bus-launcher``, which starts the accessibility bus and
  ``at-spi2-registryd``; those are children of the D-Bus daemon, so killing Xvfb alone would leave
  them running;
- a fresh ``HOME`` (and XDG directories) for every app launched, with ``GSETTINGS_BACKEND=memory``:
  no setting survives from one launch to the next; GTK's caret does not blink and its animations are
  off, so a screenshot depends on the app's state only;
- a guard: a tiny ``sh`` that leads the process group and, when this Python process dies (its
  stdin is a pipe from us; end of file means we are gone), deletes the session's directory and
  kills the group, so even a crashed or killed runner leaks no desktop.

Every process of a session is in the guard's process group; :meth:`DesktopSession.close` sends the
group SIGTERM (Xvfb then removes its lock file), then SIGKILL to whatever is left, and deletes the
session's directory. :func:`missing` lists what the machine lacks (``bash scripts/setup.sh``
installs it).
"""

from __future__ import annotations

import contextlib
import io
import os
import platform
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from importlib.util import find_spec
from pathlib import Path

from s1gym.errors import S1GymError

__all__ = [
    "DesktopError",
    "DesktopSession",
    "DesktopUnavailable",
    "EventLoopWatch",
    "missing",
    "poll_sleep",
    "require",
    "threads",
]

#: Programs a session runs, with the Debian package that ships each.
PROGRAMS: dict[str, str] = {"Xvfb": "xvfb", "dbus-daemon": "dbus-daemon"}
#: The accessibility bus launcher the session D-Bus activates (Debian's path).
ATSPI_FILES: dict[str, str] = {
    "/usr/libexec/at-spi-bus-launcher": "at-spi2-core",
    "/usr/share/dbus-1/services/org.a11y.Bus.service": "at-spi2-core",
}
#: Python modules the desktop tasks use (the ``desktop`` extra).
MODULES: dict[str, str] = {"jeepney": "jeepney", "PIL": "Pillow"}
SETUP_HINT = "run `bash scripts/setup.sh` (or: apt-get install {apt}; pip install 's1gym[desktop]')"


class DesktopError(S1GymError, RuntimeError):
    """A desktop process failed to start or died."""


class DesktopUnavailable(DesktopError):
    """The machine lacks the desktop stack (a program, an apt package or a Python module)."""


def missing(programs: Mapping[str, str] | None = None) -> list[str]:
    """What this machine lacks for a desktop session running ``programs`` (name -> apt package), as
    ``"what (package)"`` strings; empty when everything is there."""
    out = []
    for prog, pkg in {**PROGRAMS, **(programs or {})}.items():
        if shutil.which(prog) is None:
            out.append(f"{prog} ({pkg})")
    for path, pkg in ATSPI_FILES.items():
        if not Path(path).exists():
            out.append(f"{path} ({pkg})")
    for module, dist in MODULES.items():
        if find_spec(module) is None:
            out.append(f"Python module {module} ({dist})")
    return out


def require(what: str, programs: Mapping[str, str] | None = None) -> None:
    """Raise :class:`DesktopUnavailable` naming the missing pieces and the setup command."""
    lacking = missing(programs)
    if lacking:
        apt = " ".join(sorted({*PROGRAMS.values(), "at-spi2-core", *(programs or {}).values()}))
        raise DesktopUnavailable(
            f"{what} needs a headless desktop stack; this machine lacks {', '.join(lacking)}. "
            + SETUP_HINT.format(apt=apt)
        )


def _read_line(fd: int, deadline: float, proc: subprocess.Popen, what: str, log: Path) -> str:
    """The first line a starting process writes to ``fd`` (its display number, its bus address)."""
    data = b""
    try:
        while not data.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise DesktopError(f"{what} did not start within the time limit{_tail(log)}")
            ready, _, _ = select.select([fd], [], [], min(left, 0.2))
            if not ready:
                if proc.poll() is not None:
                    code = proc.returncode
                    raise DesktopError(f"{what} exited with code {code} while starting{_tail(log)}")
                continue
            chunk = os.read(fd, 4096)
            if not chunk:
                raise DesktopError(f"{what} closed its pipe while starting (code {proc.poll()}){_tail(log)}")
            data += chunk
    finally:
        os.close(fd)
    return data.decode().strip()


def _tail(log: Path, lines: int = 8) -> str:
    try:
        text = log.read_text(errors="replace").strip().splitlines()[-lines:]
    except OSError:
        return ""
    return (": " + " | ".join(text)) if text else ""


class DesktopSession:
    """One private headless desktop (see the module docstring). ``close()`` ends every process of it."""

    def __init__(self, *, screen: str = "640x480x24", start_timeout: float = 60.0) -> None:
        require("a desktop session")
        self.root = Path(tempfile.mkdtemp(prefix="s1gym-desktop-"))
        self.root.chmod(0o700)
        self._procs: list[subprocess.Popen] = []
        self._apps = 0
        self._lock = threading.Lock()
        self.closed = False
        try:
            self._start(screen, start_timeout)
        except BaseException:
            self.close()
            raise

    def _start(self, screen: str, start_timeout: float) -> None:
        deadline = time.monotonic() + start_timeout
        run = self.root / "run"
        run.mkdir(mode=0o700)
        # The guard leads the process group; when our end of its stdin closes (this process died without
        # closing the session) it deletes the session's files and kills the group.
        self.guard = subprocess.Popen(
            ["sh", "-c", 'read _; rm -rf "$1"; kill -KILL 0', "sh", str(self.root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            process_group=0,
        )
        self._procs.append(self.guard)
        self.pgid = self.guard.pid

        r, w = os.pipe()
        log = self.root / "xvfb.log"
        with open(log, "wb") as err:
            self.xvfb = subprocess.Popen(
                ["Xvfb", "-displayfd", str(w), "-noreset", "-nolisten", "tcp", "-screen", "0", screen],
                pass_fds=(w,),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                process_group=self.pgid,
                env=self._base_env(),
            )
        os.close(w)
        self._procs.append(self.xvfb)
        self.display = ":" + _read_line(r, deadline, self.xvfb, "Xvfb", log)

        self.env = {
            **self._base_env(),
            "DISPLAY": self.display,
            "HOME": str(self.root),
            "XDG_RUNTIME_DIR": str(run),
        }
        r, w = os.pipe()
        log = self.root / "dbus.log"
        with open(log, "wb") as err:
            self.dbus = subprocess.Popen(
                [
                    "dbus-daemon",
                    "--session",
                    "--nofork",
                    "--nopidfile",
                    f"--address=unix:path={self.root / 'bus'}",
                    f"--print-address={w}",
                ],
                pass_fds=(w,),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                process_group=self.pgid,
                env=self.env,
            )
        os.close(w)
        self._procs.append(self.dbus)
        self.bus_address = _read_line(r, deadline, self.dbus, "the session dbus-daemon", log)
        self.env["DBUS_SESSION_BUS_ADDRESS"] = self.bus_address

    @staticmethod
    def _base_env() -> dict[str, str]:
        keep = ("PATH", "LD_LIBRARY_PATH", "TZ")
        env = {k: os.environ[k] for k in keep if k in os.environ}
        env.update(
            LANG="C.UTF-8",
            LC_ALL="C.UTF-8",
            GSETTINGS_BACKEND="memory",
            GIO_USE_VFS="local",
            GDK_BACKEND="x11",
            NO_AT_BRIDGE="0",
        )
        return env

    def launch(self, argv: Sequence[str], *, extra_env: Mapping[str, str] | None = None) -> subprocess.Popen:
        """Start an app on this desktop, in the session's process group, with a fresh HOME."""
        with self._lock:
            if self.closed:
                raise DesktopError("the desktop session is closed")
            self._apps += 1
            home = self.root / f"home-{self._apps}"
        for sub in (".config/gtk-3.0", ".cache", ".local/share"):
            (home / sub).mkdir(parents=True, exist_ok=True)
        # Still pictures: a blinking caret or an animation would make two screenshots of one state differ.
        (home / ".config/gtk-3.0/settings.ini").write_text(
            "[Settings]\ngtk-cursor-blink=false\ngtk-enable-animations=false\n"
        )
        env = {
            **self.env,
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            **(extra_env or {}),
        }
        log = self.root / f"app-{self._apps}.log"
        with open(log, "wb") as err:
            proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                process_group=self.pgid,
                env=env,
                cwd=home,
            )
        proc.log_path = log  # type: ignore[attr-defined]
        with self._lock:
            self._procs.append(proc)
        return proc

    def log_tail(self, proc: subprocess.Popen) -> str:
        """The last lines an app wrote to stderr (for error messages)."""
        log = getattr(proc, "log_path", None)
        return _tail(log) if log is not None else ""

    def stop(self, proc: subprocess.Popen, timeout: float = 2.0) -> None:
        """End one app of this session (SIGTERM, then SIGKILL) and reap it."""
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        with self._lock:
            if proc in self._procs:
                self._procs.remove(proc)

    def alive(self) -> bool:
        """The X server, the session bus and the guard are running."""
        return not self.closed and all(p.poll() is None for p in (self.guard, self.xvfb, self.dbus))

    def screenshot(self, bbox: tuple[int, int, int, int]) -> bytes:
        """PNG bytes of the screen area ``(left, top, right, bottom)``."""
        from PIL import ImageGrab

        image = ImageGrab.grab(bbox=bbox, xdisplay=self.display)
        out = io.BytesIO()
        image.save(out, format="PNG")
        return out.getvalue()

    def close(self) -> None:
        """SIGTERM the process group, SIGKILL what is left after a grace period, reap, delete the files."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            procs = list(self._procs)
        pgid = getattr(self, "pgid", None)
        if pgid is not None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(pgid, sig)
                except (ProcessLookupError, PermissionError):
                    break
                deadline = time.monotonic() + 2.0
                while time.monotonic() < deadline and any(p.poll() is None for p in procs):
                    time.sleep(0.01)
                if sig == signal.SIGTERM and _group_empty(pgid):
                    break
        for p in procs:
            if p.stdin is not None:
                p.stdin.close()
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
        if pgid is not None:  # what we did not start (the AT-SPI launcher, its bus) dies in its own time
            deadline = time.monotonic() + 5.0
            while not _group_empty(pgid) and time.monotonic() < deadline:
                time.sleep(0.01)
        for _ in range(3):
            shutil.rmtree(self.root, ignore_errors=True)
            if not self.root.exists():
                break
            time.sleep(0.05)

    def __del__(self) -> None:  # a session nobody closed still ends its processes
        if not getattr(self, "closed", True):
            with contextlib.suppress(Exception):  # at interpreter shutdown modules may be gone
                self.close()


def _group_empty(pgid: int) -> bool:
    """No live (non-zombie) process is left in process group ``pgid``."""
    return not group_members(pgid)


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
