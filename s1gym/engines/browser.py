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

Lifetime: this module alone decides when the browser closes. Whoever needs the
thread's browser open holds it (:func:`hold`: a web env built by ``gym.make``, a
replay page) and lets go when done (:func:`let_go`); :func:`browser` starts it
on first use (or after a crash). When the last holder lets go, the
:func:`on_unheld` callbacks close what uses it (the web tasks' pages) and the
browser closes after a short linger (``$S1GYM_BROWSER_LINGER``, default 1 s, 0
closes at once) in which a next holder reuses it; :func:`shutdown_browsers`
closes everything at interpreter exit (:mod:`s1gym.engines.lifecycle`). The
Playwright driver (a Node process, slower to start than Chromium:
docs/benchmarks.md) stays up for the thread until exit: it is not a browser,
and restarting it per env would dominate short runs.
"""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from s1gym.engines import lifecycle
from s1gym.engines.chromium import (
    CHROMIUM_FLAGS,
    DEFAULT_LINGER_S,
    INSTALL_HINT,
    Browser,
    BrowserCrashed,
    BrowserNotFoundError,
    deadline,
    find_chromium,
)

__all__ = [
    "CHROMIUM_FLAGS",
    "Browser",
    "BrowserCrashed",
    "BrowserNotFoundError",
    "browser",
    "chromium_processes",
    "current_browser",
    "deadline",
    "find_chromium",
    "hold",
    "holding",
    "let_go",
    "on_unheld",
    "playwright_driver",
    "shutdown_browsers",
]

# --------------------------------------------------------------------------
# One Playwright driver and one browser per (thread, headless)
# --------------------------------------------------------------------------

_LOCK = threading.Lock()
_DRIVERS: dict[int, Any] = {}  # thread id -> started sync Playwright
_BROWSERS: dict[tuple[int, bool], Browser] = {}
#: Who holds each (thread, headless) browser: the one count that decides when it closes (weakly: a holder
#: that is garbage-collected stops holding).
_HOLDERS: dict[tuple[int, bool], weakref.WeakSet[Any]] = {}
#: Called with the (thread, headless) key when its last holder lets go, before the browser closes
#: (the web tasks close their pages there, in the thread that owns them).
_ON_UNHELD: list[Callable[[tuple[int, bool]], None]] = []


def _key(headless: bool) -> tuple[int, bool]:
    return (threading.get_ident(), bool(headless))


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
            raise BrowserNotFoundError("tasks that run in a browser need Playwright: " + INSTALL_HINT) from exc
        driver = _DRIVERS[tid] = sync_playwright().start()
    return driver


def hold(holder: Any, headless: bool = True) -> tuple[int, bool]:
    """``holder`` (a web env, a replay page) keeps this thread's browser open until it lets go; a browser
    about to close (see :func:`let_go`) stays. Returns the browser's key for :func:`let_go` (which may be
    called from another thread). Holding does not start the browser: :func:`browser` does."""
    key = _key(headless)
    with _LOCK:
        _HOLDERS.setdefault(key, weakref.WeakSet()).add(holder)
        current = _BROWSERS.get(key)
        if current is not None and current.linger is not None:  # it was about to close: keep it
            current.linger.cancel()
            current.linger = None
    return key


class _Holder:
    """A holder for :func:`holding` (any weakly referable object can hold)."""


@contextlib.contextmanager
def holding(headless: bool = True) -> Iterator[Browser]:
    """This thread's browser, held open for the block (e.g. a replay page screenshotted in it)."""
    holder = _Holder()
    key = hold(holder, headless)
    try:
        yield browser(headless)
    finally:
        let_go(holder, key)


def browser(headless: bool = True) -> Browser:
    """This thread's browser, started when missing or dead (a crashed browser is replaced)."""
    key = _key(headless)
    with _LOCK:
        current = _BROWSERS.get(key)
        if current is not None and not current.alive():
            # crashed or killed: its engines are dropped by their pool when next used; start afresh
            del _BROWSERS[key]
            current.close()
            current = None
        if current is None:
            current = _BROWSERS[key] = Browser(playwright_driver(), bool(headless))
        if current.linger is not None:  # it was about to close, and is used again: keep it
            current.linger.cancel()
            current.linger = None
        return current


def current_browser(headless: bool = True) -> Browser | None:
    """This thread's browser if one is running."""
    return _BROWSERS.get(_key(headless))


def on_unheld(callback: Callable[[tuple[int, bool]], None]) -> None:
    """Call ``callback(key)`` when the last holder of a browser lets go, before it closes."""
    if callback not in _ON_UNHELD:
        _ON_UNHELD.append(callback)


def linger_seconds() -> float:
    """How long an unused browser stays up for the next holder (``$S1GYM_BROWSER_LINGER``, default 1 s)."""
    raw = os.environ.get("S1GYM_BROWSER_LINGER", "")
    try:
        return max(0.0, float(raw)) if raw else DEFAULT_LINGER_S
    except ValueError:
        raise ValueError(f"$S1GYM_BROWSER_LINGER must be a number of seconds, got {raw!r}") from None


def let_go(holder: Any, key: tuple[int, bool]) -> None:
    """``holder`` no longer needs the browser ``key`` (what :func:`hold` returned). When nobody holds it
    (``holder`` need not have held it: a fork closing after its env did), the :func:`on_unheld`
    callbacks close what uses it and the browser closes after :func:`linger_seconds`.

    The linger lets the next env of the same thread (a test making envs one after another, a runner
    retrying) reuse the process instead of paying Chromium's start again; the timer only kills the
    process group (no Playwright call, so it is safe from its thread).
    """
    with _LOCK:
        holders = _HOLDERS.get(key)
        if holders is not None:
            holders.discard(holder)
            if holders:
                return
    for callback in list(_ON_UNHELD):
        callback(key)
    with _LOCK:
        if _HOLDERS.get(key):  # held again by a callback's side effect: keep it
            return
        current = _BROWSERS.get(key)
        if current is None:
            return
        linger = linger_seconds()
        if linger > 0 and current.alive():
            if current.linger is None:
                timer = threading.Timer(linger, _close_if_unheld, args=(key, current))
                timer.daemon = True
                current.linger = timer
                timer.start()
            return
        del _BROWSERS[key]
    current.close()


def _close_if_unheld(key: tuple[int, bool], current: Browser) -> None:
    with _LOCK:
        if _HOLDERS.get(key) or current.linger is None:
            return
        current.linger = None
        if _BROWSERS.get(key) is current:
            del _BROWSERS[key]
    current.terminate()


def shutdown_browsers() -> None:
    """Close every browser of this process and this thread's Playwright driver (at exit too)."""
    with _LOCK:
        browsers = list(_BROWSERS.values())
        _BROWSERS.clear()
    for each in browsers:
        each.close()
    driver = _DRIVERS.pop(threading.get_ident(), None)
    if driver is not None:
        with contextlib.suppress(Exception):
            driver.stop()


#: A forked child's copies of its parent's drivers and browsers, kept referenced so that no finalizer
#: of theirs runs in the child (see :mod:`s1gym.engines.lifecycle`).
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
    _HOLDERS.clear()


lifecycle.at_exit("browsers", shutdown_browsers)
lifecycle.at_fork_in_child(_forget_inherited)


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
