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
session's directory.

What a session needs from the machine (:func:`missing`, :func:`require`) and the desktop's errors live in
:mod:`.stack`; what /proc tells about its processes (:func:`group_members`, :class:`EventLoopWatch`,
:func:`threads`) in :mod:`.procfs`. Both are re-exported here.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from s1gym.tasks.desktop.procfs import EventLoopWatch, group_members, poll_sleep, threads
from s1gym.tasks.desktop.stack import DesktopError, DesktopUnavailable, missing, require

__all__ = [
    "DesktopError",
    "DesktopSession",
    "DesktopUnavailable",
    "EventLoopWatch",
    "group_members",
    "missing",
    "poll_sleep",
    "require",
    "threads",
]


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
