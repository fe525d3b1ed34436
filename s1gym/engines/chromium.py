"""One headless Chromium process that s1gym starts itself and Playwright attaches to over the DevTools
protocol (:class:`Browser`), and how to find the executable. :mod:`s1gym.engines.browser` decides who
shares a browser and when it closes; why the process is s1gym's own rather than ``chromium.launch``'s is
said there.
"""


from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from s1gym.errors import EngineCrashed, S1GymError

__all__ = ["CHROMIUM_FLAGS", "INSTALL_HINT", "Browser", "BrowserCrashed", "BrowserNotFoundError", "deadline",
           "find_chromium"]

#: Flags that make Chromium work on a machine without a GPU, a sandbox or an outside network (without
#: the background-networking flags Chromium's own connections are refused and it stalls), and answer
#: pointer moves without waiting for the next 60 Hz frame (--disable-frame-rate-limit: a mouse move
#: waited for a frame; docs/benchmarks.md, "Figures behind the code"; the web pages run no real-time
#: animation to pay for it).
CHROMIUM_FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--mute-audio",
    "--disable-frame-rate-limit",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
)
INSTALL_HINT = (
    "install Debian's Chromium with `sudo apt-get install chromium` (scripts/setup.sh does it), "
    "or point $S1GYM_CHROMIUM at a Chromium/Chrome binary; and the Python side with "
    "`pip install 's1gym[web]'`"
)
#: Seconds Chromium may take to open its DevTools port.
START_TIMEOUT_S = 60.0
#: Seconds a polite close may take before the process group is killed.
CLOSE_TIMEOUT_S = 10.0
#: Seconds an unused browser stays up for the next env (see release_browser).
DEFAULT_LINGER_S = 1.0


class BrowserNotFoundError(S1GymError, FileNotFoundError):
    """No Chromium binary (or no Playwright) on this machine, or Chromium would not start."""


class BrowserCrashed(EngineCrashed):
    """The browser died or hung (killed by the step watchdog); the env's engines are gone."""


def find_chromium() -> str:
    """The Chromium binary to run: ``$S1GYM_CHROMIUM``, else ``chromium`` / ``chromium-browser`` /
    ``google-chrome`` on PATH; :class:`BrowserNotFoundError` naming the install command otherwise."""
    wanted = os.environ.get("S1GYM_CHROMIUM")
    if wanted:
        path = shutil.which(wanted) or (wanted if os.access(wanted, os.X_OK) else None)
        if not path:
            raise BrowserNotFoundError(f"$S1GYM_CHROMIUM={wanted!r} is not an executable file; " + INSTALL_HINT)
        return path
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    raise BrowserNotFoundError("tasks that run in a browser need Chromium but none was found on PATH; "
                               + INSTALL_HINT)


@contextlib.contextmanager
def deadline(seconds: float, on_timeout: Callable[[], None]) -> Iterator[threading.Event]:
    """Call ``on_timeout`` from a timer thread if the block runs longer than ``seconds``; yields an
    event that is set once it fired (Playwright's sync calls cannot be interrupted, but they fail
    as soon as the browser they wait on is killed)."""
    fired = threading.Event()

    def fire() -> None:
        fired.set()
        on_timeout()

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield fired
    finally:
        timer.cancel()


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Browser:
    """One Chromium process with Playwright attached over CDP."""

    def __init__(self, playwright: Any, headless: bool) -> None:
        self.headless = headless
        self.killed = False
        #: the pending close of an unused browser (see let_go)
        self.linger: threading.Timer | None = None
        self._profile = tempfile.mkdtemp(prefix="s1gym-chromium-")
        binary = find_chromium()
        args = [binary, *CHROMIUM_FLAGS, f"--user-data-dir={self._profile}"]
        if headless:
            args.insert(1, "--headless")
        args.append("about:blank")
        self._log = open(Path(self._profile).with_suffix(".log"), "w+b")  # noqa: SIM115 - closed in close()
        self.process = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
            start_new_session=True,  # its own process group: renderers die with it
            preexec_fn=_die_with_parent if os.name == "posix" else None,  # noqa: PLW1509
        )
        try:
            port = self._wait_for_port()
            self.browser = playwright.chromium.connect_over_cdp(f"http://127.0.0.1:{port}", timeout=START_TIMEOUT_S * 1000)
        except BaseException:
            self.close()
            raise

    def _wait_for_port(self) -> int:
        marker = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BrowserNotFoundError(
                    f"Chromium ({self.process.args[0]}) exited with code {self.process.returncode} at start: "
                    f"{self._log_tail()}"
                )
            with contextlib.suppress(OSError, ValueError, IndexError):
                lines = marker.read_text().split()
                if len(lines) >= 2:
                    return int(lines[0])
            time.sleep(0.01)
        raise BrowserNotFoundError(f"Chromium did not open its DevTools port within {START_TIMEOUT_S:.0f} s: {self._log_tail()}")

    def _log_tail(self) -> str:
        with contextlib.suppress(Exception):
            self._log.flush()
            self._log.seek(0)
            return self._log.read().decode(errors="replace")[-800:].strip() or "(no output)"
        return "(no output)"

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return not self.killed and self.process.poll() is None and self.browser.is_connected()

    def new_page(self, **context_options: Any) -> tuple[Any, Any]:
        """A fresh browser context and its page."""
        context = self.browser.new_context(**context_options)
        return context, context.new_page()

    def kill(self) -> None:
        """Kill the whole process group now (safe from any thread: no Playwright call)."""
        self.killed = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def terminate(self) -> None:
        """End the process group and remove the profile without a Playwright call (any thread)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        self._cleanup()

    def _cleanup(self) -> None:
        with contextlib.suppress(Exception):
            self._log.close()
        shutil.rmtree(self._profile, ignore_errors=True)
        with contextlib.suppress(OSError):
            Path(self._profile).with_suffix(".log").unlink()

    def close(self) -> None:
        """Close through Playwright, then make sure the whole process group is gone (owning thread)."""
        if self.linger is not None:
            self.linger.cancel()
            self.linger = None
        browser = getattr(self, "browser", None)
        if browser is not None and self.process.poll() is None and not self.killed:
            with contextlib.suppress(Exception), deadline(CLOSE_TIMEOUT_S, self.kill):
                browser.close()
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()
                self.process.wait(timeout=5)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)  # stragglers of the group (renderers, zygote)
        self.killed = True
        self._cleanup()
