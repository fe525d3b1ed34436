"""A MiniWoB++ page in the thread's shared Chromium as an engine (:class:`WebEngine`): the page's clock, seed
and episode timer set for every game, moves played as real input under a watchdog, and the page read back
(``web_page.js``: what a person could do now; Playwright's ARIA snapshot: what the page shows). The env
(:mod:`s1gym.tasks.web.env`) says what the observation, candidates and rewards are."""

from __future__ import annotations

import contextlib
import datetime as dt
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from s1gym.core import BASE_CHARSET
from s1gym.engines import browser as _browser
from s1gym.engines.base import Engine

__all__ = ["NO_TIME_LIMIT_MS", "WEB_CHARSET", "WebAnswer", "WebEngine", "WebGame", "clean", "extract_fields", "task_url"]

#: The page's clock at the start of every episode: 2017-06-01 12:00 UTC (fixed, so dates and
#: "3h ago" texts are the same every run; the flight date picker opens on its last allowed month).
EPOCH = dt.datetime(2017, 6, 1, 12, tzinfo=dt.timezone.utc)
#: Page time (ms, fake clock) let pass after each move: jQuery animations (400 ms) and the
#: autocomplete delay (300 ms) finish within it.
SETTLE_MS = 1000
#: MiniWoB's episode timer, set before each episode: the longest delay setTimeout accepts.
NO_TIME_LIMIT_MS = 2**31 - 1
#: Playwright's timeout for one action (click, type, select), ms: an element that stays covered or
#: detached this long makes the move fail (the feedback says so) instead of waiting for the watchdog.
ACTION_TIMEOUT_MS = 10_000
VIEWPORT = {"width": 480, "height": 480}
#: Where the pointer rests between moves: a blank corner, away from MiniWoB's 160x210 task area.
REST_POINTER = (VIEWPORT["width"] - 1, VIEWPORT["height"] - 1)
JS_MOVES = (Path(__file__).with_name("web_page.js")).read_text()
#: Load every image the page's stylesheets name before the first move: icons swapped on :hover
#: (social-media, email-inbox) would otherwise change size when their file arrives, at a moment
#: that depends on the machine, and a click could land on a different element.
PRELOAD_IMAGES = """async () => {
  const urls = new Set();
  for (const sheet of document.styleSheets) {
    let rules = [];
    try { rules = sheet.cssRules; } catch (e) { continue; }
    for (const rule of rules) for (const m of rule.cssText.matchAll(/url\\(["']?([^"')]+)["']?\\)/g)) urls.add(new URL(m[1], sheet.href || document.baseURI).href);
  }
  await Promise.all([...urls].filter((u) => !u.startsWith("data:")).map((u) => { const img = new Image(); img.src = u; return img.decode().catch(() => null); }));
  return urls.size;
}"""
#: What the observation may contain: printable characters of the Basic Multilingual Plane up to
#: the CJK blocks (pages print accents, middle dots, arrows); anything else becomes "?".
WEB_CHARSET: frozenset[str] = frozenset(BASE_CHARSET) | frozenset(
    c for c in map(chr, range(0xA0, 0x3000)) if c.isprintable() and unicodedata.category(c)[0] != "C"
)


def clean(text: str) -> str:
    return "".join(c if c in WEB_CHARSET else "?" for c in text)


class WebGame(NamedTuple):
    """What ``reset`` starts: a MiniWoB task and the page's random seed (a string, as MiniWoB's)."""

    task: str
    seed: str


class WebAnswer(NamedTuple):
    """What the page shows after a start or a move (the engine's answer; immutable)."""

    utterance: str
    fields: tuple[tuple[str, str], ...]
    page: str
    moves: tuple[str, ...]
    done: bool
    raw_reward: float
    reason: str
    error: str = ""


def task_url(task: str) -> str:
    from miniwob.selenium_instance import HTML_DIR

    return (Path(HTML_DIR) / "miniwob" / f"{task}.html").as_uri()


def extract_fields(task: str, utterance: str) -> tuple[tuple[str, str], ...]:
    """The instruction's fields by MiniWoB's own extractor for the task (``()`` when it has none)."""
    from miniwob.fields import get_field_extractor

    try:
        return tuple((str(k), str(v)) for k, v in get_field_extractor(task)(utterance))
    except (KeyError, ValueError):
        return ()


def _page_text(snapshot: str) -> str:
    """Playwright's ARIA snapshot without link URLs (machine-specific file paths)."""
    lines = [line for line in snapshot.splitlines() if not line.lstrip().startswith("- /url:")]
    return clean("\n".join(lines))


def _iso_date(value: str) -> str | None:
    """``mm/dd/yyyy`` as ``yyyy-mm-dd`` (what a date input's ``fill`` takes), else None."""
    try:
        return dt.datetime.strptime(value.strip(), "%m/%d/%Y").date().isoformat()
    except ValueError:
        return None


class WebEngine(Engine):
    """One page (in its own browser context) of the thread's shared Chromium."""

    def __init__(self, headless: bool = True, step_timeout: float = 60.0) -> None:
        self.headless = headless
        self.step_timeout = float(step_timeout)
        self.browser = _browser.browser(headless)
        self.context: Any = None
        self.page: Any = None
        self._targets: dict[str, dict[str, Any]] = {}
        self._values: list[str] = []
        self._task = ""
        self._closed = False

    # -------------------------------------------------------------- watchdog
    @contextlib.contextmanager
    def _guard(self, what: str) -> Iterator[None]:
        """Run Playwright calls with a deadline; a hung page gets the browser killed (BrowserCrashed)."""
        from playwright.sync_api import Error as PlaywrightError

        if not self.alive():
            raise _browser.BrowserCrashed(f"the browser behind this {self._task or 'web'} page is gone ({what})")
        with _browser.deadline(self.step_timeout, self.browser.kill) as fired:
            try:
                yield
            except PlaywrightError as exc:
                if fired.is_set() or not self.alive():
                    raise _browser.BrowserCrashed(
                        f"{self._task}: the browser died during {what}"
                        + (f" (no answer within step_timeout={self.step_timeout:g} s; killed)" if fired.is_set() else "")
                        + f": {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
                    ) from exc
                raise

    def alive(self) -> bool:
        return not self._closed and self.browser.alive() and (self.page is None or not self.page.is_closed())

    # ------------------------------------------------------------ the game
    def new_game(self, game: WebGame) -> WebAnswer:
        return self._start(game, snapshot=True)

    def replay(self, game: WebGame, moves: tuple[str, ...]) -> None:
        """A new document, then the moves, reading only what the next move needs (its target),
        not the ARIA snapshot nobody looks at in between."""
        self._start(game, snapshot=False)
        for move in moves:
            self._move(move, snapshot=False)

    def _start(self, game: WebGame, snapshot: bool) -> WebAnswer:
        with self._guard("a page load"):
            if self.page is None:
                self.context, self.page = self.browser.new_page(
                    viewport=VIEWPORT, timezone_id="UTC", locale="en-US"
                )
                self.page.set_default_timeout(self.step_timeout * 1000)  # the watchdog's deadline
                # Playwright's fake clock, paused: page time moves only when run_for moves it.
                # (installed a day early: pause_at cannot go back, and a loaded machine may take seconds here)
                self.page.clock.install(time=EPOCH - dt.timedelta(days=1))
                self.page.clock.pause_at(EPOCH)
            else:
                self.page.clock.set_system_time(EPOCH)
            # A new document per game (MiniWoB pages keep nothing in storage): no widget, handler or
            # timer of an earlier game survives, and Date.now() starts at EPOCH again.
            self._task = game.task
            self.page.goto(task_url(game.task), wait_until="load")
            utterance = self.page.evaluate(
                """([seed, maxTime]) => {
                    for (const id of ["reward-display", "click-canvas", "query", "sync-task-cover"]) {
                      const el = document.getElementById(id); if (el) el.setAttribute("aria-hidden", "true");
                    }
                    core.EPISODE_MAX_TIME = maxTime;
                    core.setDataMode("train");
                    Math.seedrandom(seed);
                    core.startEpisodeReal();
                    const u = core.getUtterance();
                    return typeof u === "string" ? u : u.utterance;
                }""",
                [game.seed, NO_TIME_LIMIT_MS],
            )
            self.page.evaluate(PRELOAD_IMAGES)
            self.page.clock.run_for(SETTLE_MS)
            self._values = [v for _, v in extract_fields(game.task, utterance)]
            return self._read(snapshot)

    def step(self, move: str) -> WebAnswer:
        return self._move(move, snapshot=True)

    def _move(self, move: str, snapshot: bool) -> WebAnswer:
        target = self._targets.get(move)
        if target is None:
            raise ValueError(f"{self._task}: {move!r} is not a move of this page now")
        from playwright.sync_api import Error as PlaywrightError

        error = ""
        with self._guard(f"'{move}'"):
            try:
                self._act(target)
            except PlaywrightError as exc:
                if not self.alive():
                    raise
                error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            # The pointer leaves the task after each move: :hover styles (cursors, icons swapped for
            # images that load asynchronously) would otherwise make the page depend on timing.
            self.page.mouse.move(*REST_POINTER)
            self.page.clock.run_for(SETTLE_MS)
            answer = self._read(snapshot)
        return answer._replace(error=error) if error else answer

    def _act(self, target: dict[str, Any]) -> None:
        # force=True: web_page.js already checked that the element is visible, enabled and not covered;
        # Playwright's own wait for a "stable" element counts animation frames, which a busy machine
        # (or a page whose frames are throttled) can delay past any timeout. The events are the same
        # real mouse and keyboard input at the element.
        kind = target["kind"]
        if kind == "press":
            self.page.keyboard.press(target["value"])
            return
        locator = self.page.locator(f'[data-s1-target="{target["target"]}"]')
        point = target.get("point")  # a point of the element no other element covers (web_page.js)
        where = {"position": {"x": point["x"], "y": point["y"]}} if point else {}
        if kind == "click":
            locator.click(timeout=ACTION_TIMEOUT_MS, force=True, **where)
        elif kind == "select":
            locator.select_option(value=target["value"], timeout=ACTION_TIMEOUT_MS, force=True)
        elif kind == "type":
            value = target["value"]
            iso = _iso_date(value) if target.get("inputType") == "date" else None
            if iso is not None or target.get("inputType") in {"date", "time", "number"}:
                locator.fill(iso or value, timeout=ACTION_TIMEOUT_MS, force=True)
            else:
                locator.click(timeout=ACTION_TIMEOUT_MS, force=True, **where)
                locator.fill("", timeout=ACTION_TIMEOUT_MS, force=True)
                locator.press_sequentially(value, timeout=ACTION_TIMEOUT_MS)  # key by key, as a person types (autocomplete listens)
        else:  # pragma: no cover - web_page.js makes only these kinds
            raise RuntimeError(f"unknown move kind {kind!r}")

    def _read(self, snapshot: bool = True) -> WebAnswer:
        state = self.page.evaluate(JS_MOVES, {"values": self._values})
        done = bool(state["done"])
        self._targets = {} if done else {m["text"]: m for m in state["moves"]}
        page = "" if done or not snapshot else _page_text(self.page.locator("body").aria_snapshot())
        return WebAnswer(
            utterance=clean(str(state["utterance"])),
            fields=extract_fields(self._task, str(state["utterance"])),
            page=page,
            moves=tuple(clean(m) for m in self._targets),
            done=done,
            raw_reward=float(state["reward"] or 0.0) if done else 0.0,
            reason=clean(state["reason"]),
        )

    def screenshot(self) -> bytes:
        with self._guard("a screenshot"):
            return self.page.screenshot(type="png")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.context is not None and self.browser.alive():
            with contextlib.suppress(Exception), _browser.deadline(self.step_timeout, self.browser.kill):
                self.context.close()
