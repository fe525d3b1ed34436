"""The shared headless Chromium of the web tasks, driven by Playwright.

One Chromium per (process, thread, headless) serves every web env and fork of
that thread: each engine is a page in its own browser context. Playwright's
sync API is bound to the thread that started it (it runs on a greenlet of that
thread's event loop), so a thread never touches another thread's browser; the
web env's pool key carries the thread id for the same reason.

Why s1gym starts Chromium itself (``subprocess``) and attaches Playwright over
the DevTools protocol (``connect_over_cdp``) instead of ``chromium.launch``:
the process is ours, so a hung page can be killed from a watchdog thread
(Playwright's ``evaluate`` has no timeout and the sync API cannot be called
from another thread), its whole process group dies with it, and the kernel
kills it if Python dies (``PR_SET_PDEATHSIG``). Playwright's own browser
download cannot run on machines without internet; Debian's ``chromium``
package is used (``scripts/setup.sh`` installs it), or ``$S1GYM_CHROMIUM``.

Lifetime: :func:`acquire_browser` starts the thread's browser on first use
(about 0.4 s on a quiet machine) and counts its users (pages); :func:`release_browser`
closes it when the count drops to zero (the web env closes its pages when its
last env closes) after a short linger (``$S1GYM_BROWSER_LINGER``, default 1 s,
0 closes at once) in which a next env reuses it; :func:`shutdown_browsers`
closes everything at interpreter exit. The
Playwright driver (a Node process, about 1.2 s to start) stays up for the
thread until exit: it is not a browser, and restarting it per env would
dominate short runs.
"""

from __future__ import annotations

import atexit
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

__all__ = [
    "CHROMIUM_FLAGS",
    "Browser",
    "BrowserCrashed",
    "BrowserNotFoundError",
    "acquire_browser",
    "chromium_processes",
    "deadline",
    "find_chromium",
    "playwright_driver",
    "release_browser",
    "shutdown_browsers",
]

#: Flags that make Chromium work on a machine without a GPU, a sandbox or an outside network (without
#: the background-networking flags Chromium's own connections are refused and it stalls), and answer
#: pointer moves without waiting for the next 60 Hz frame (--disable-frame-rate-limit: a mouse move
#: took a frame, 12-14 ms, 5-9 ms without; the web pages run no real-time animation to pay for it).
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


class BrowserNotFoundError(FileNotFoundError):
    """No Chromium binary (or no Playwright) on this machine, or Chromium would not start."""


class BrowserCrashed(RuntimeError):
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
    raise BrowserNotFoundError("the web tasks need Chromium but none was found on PATH; " + INSTALL_HINT)


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
        self.users = 0
        self.killed = False
        #: the pending close of an unused browser (see release_browser)
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


# --------------------------------------------------------------------------
# One Playwright driver and one browser per (thread, headless)
# --------------------------------------------------------------------------

_LOCK = threading.Lock()
_DRIVERS: dict[int, Any] = {}  # thread id -> started sync Playwright
_BROWSERS: dict[tuple[int, bool], Browser] = {}


def playwright_driver() -> Any:
    """This thread's started sync Playwright (started on first use, stopped at exit).

    Everything in s1gym that drives a browser from a thread shares it: a second ``sync_playwright()``
    in a thread whose driver is running fails ("using Playwright Sync API inside the asyncio loop").
    """
    tid = threading.get_ident()
    driver = _DRIVERS.get(tid)
    if driver is None:
        try:
            from playwright.sync_api import sync_playwright
        except ImportError as exc:
            raise BrowserNotFoundError("the web tasks need Playwright: " + INSTALL_HINT) from exc
        driver = _DRIVERS[tid] = sync_playwright().start()
    return driver


def acquire_browser(headless: bool = True) -> Browser:
    """This thread's browser (started when missing or dead), with one more user counted."""
    key = (threading.get_ident(), bool(headless))
    with _LOCK:
        browser = _BROWSERS.get(key)
        if browser is not None and not browser.alive():
            # crashed or killed: its engines release it when the pool drops them; start afresh
            del _BROWSERS[key]
            browser.close()
            browser = None
        if browser is None:
            browser = _BROWSERS[key] = Browser(playwright_driver(), bool(headless))
        if browser.linger is not None:  # it was about to close: keep it
            browser.linger.cancel()
            browser.linger = None
        browser.users += 1
        return browser


def current_browser(headless: bool = True) -> Browser | None:
    """This thread's browser if one is running."""
    return _BROWSERS.get((threading.get_ident(), bool(headless)))


def linger_seconds() -> float:
    """How long an unused browser stays up for the next env (``$S1GYM_BROWSER_LINGER``, default 1 s)."""
    raw = os.environ.get("S1GYM_BROWSER_LINGER", "")
    try:
        return max(0.0, float(raw)) if raw else DEFAULT_LINGER_S
    except ValueError:
        raise ValueError(f"$S1GYM_BROWSER_LINGER must be a number of seconds, got {raw!r}") from None


def release_browser(browser: Browser) -> None:
    """One user fewer; when none is left the browser closes after :func:`linger_seconds`.

    The linger lets the next env of the same thread (a test making envs one after another, a runner
    retrying) reuse the process instead of paying Chromium's start again; the timer only kills the
    process group (no Playwright call, so it is safe from its thread).
    """
    with _LOCK:
        browser.users -= 1
        if browser.users > 0:
            return
        linger = linger_seconds()
        if linger > 0 and browser.alive() and any(b is browser for b in _BROWSERS.values()):
            timer = threading.Timer(linger, _close_if_unused, args=(browser,))
            timer.daemon = True
            browser.linger = timer
            timer.start()
            return
        _forget(browser)
    browser.close()


def _forget(browser: Browser) -> None:
    for key, b in list(_BROWSERS.items()):
        if b is browser:
            del _BROWSERS[key]


def _close_if_unused(browser: Browser) -> None:
    with _LOCK:
        if browser.users > 0 or browser.linger is None:
            return
        browser.linger = None
        _forget(browser)
    browser.terminate()


def shutdown_browsers() -> None:
    """Close every browser of this process and this thread's Playwright driver (at exit too)."""
    with _LOCK:
        browsers = list(_BROWSERS.values())
        _BROWSERS.clear()
    for browser in browsers:
        browser.close()
    driver = _DRIVERS.pop(threading.get_ident(), None)
    if driver is not None:
        with contextlib.suppress(Exception):
            driver.stop()


#: A forked child's copies of its parent's drivers and browsers, kept referenced so that no finalizer
#: of theirs runs in the child (see engine._INHERITED_POOLS).
_INHERITED: list[tuple[dict[int, Any], dict[tuple[int, bool], Browser]]] = []


def _forget_inherited() -> None:
    """In a forked child (an async vector env's worker) the parent's driver and browsers are the
    parent's: talking to them from the child interleaves two processes on one pipe. The child starts
    with none of its own and never uses, closes or frees the parent's."""
    global _LOCK
    _LOCK = threading.Lock()
    _INHERITED.append((dict(_DRIVERS), dict(_BROWSERS)))
    _DRIVERS.clear()
    _BROWSERS.clear()


atexit.register(shutdown_browsers)
os.register_at_fork(after_in_child=_forget_inherited)


def chromium_processes(owner: int | None = None) -> list[int]:
    """Pids of the live Chromium processes s1gym started from process ``owner`` (default: this one)
    and their children (renderers, zygotes), found through /proc (for tests and leak checks)."""
    owner = os.getpid() if owner is None else owner
    parents: dict[int, int] = {}
    chromium: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] == "Z":
            continue
        parents[int(entry.name)] = int(fields[1])
        if b"chromium" in cmdline or b"chrome" in cmdline:
            chromium.add(int(entry.name))

    def descends(pid: int) -> bool:
        seen = 0
        while pid > 1 and seen < 64:
            pid = parents.get(pid, 0)
            if pid == owner:
                return True
            seen += 1
        return False

    return sorted(pid for pid in chromium if descends(pid))
