"""Web tasks: the real MiniWoB++ pages in a real Chromium, driven by Playwright.

``s1/MiniWoB-v0`` plays one MiniWoB++ task (option ``task``, one of
:data:`WEB_TASKS`); ``s1/Flights-v0`` is ``book-flight``. The pages are the
ones Farama's ``miniwob`` package (1.x, MIT) ships under ``miniwob/html/``,
opened as ``file://`` URLs (no server to start or leak: the pages need no
HTTP, only ``flight.*`` tasks, not offered here, do).

**Observation** (Markov): the task's instruction (MiniWoB's utterance) and the
page as Playwright's ARIA snapshot (the accessibility tree as YAML: roles,
names, text, states, field values), MiniWoB's own reward display and query
hidden from it, link URLs dropped (machine-specific paths), then the moves.

**Candidates**: one per thing a person could do now, in document order
(``web_page.js``): click each visible, enabled, uncovered clickable element
(buttons, links, tabs, checkboxes, radios, menu and autocomplete items, date
picker days, elements with click handlers or a pointer cursor), named by
Chromium's accessibility role and name (an unnamed control by its label text,
placeholder or icon class); ``select "<option>" in list "<name>"`` for each
option of a select; ``type "<value>" into textbox "<name>"`` for each text
field and each value of the instruction's fields (MiniWoB's own field
extractors, :mod:`miniwob.fields`); ``press Enter`` in a focused text field.
The same text twice is told apart by the nearest ancestor's text, then by
number. More moves than the task's cap N raise ``TooManyCandidatesError``.

**Reward and end**: MiniWoB's JavaScript reward. When the page ends the
episode (``WOB_DONE_GLOBAL``), ``info["raw_reward"]`` is the page's raw reward
(in [-1, 1], no time penalty) and the score is ``max(0, raw)``: 1 on success
(won), partial credit where the page gives it (click-checkboxes pays r/n),
lost otherwise. Wall-clock never ends an episode: before
``core.startEpisodeReal()`` the env sets ``core.EPISODE_MAX_TIME`` (the knob
MiniWoB's tasks set themselves) to 2^31-1 ms, the longest delay ``setTimeout``
accepts, and the page runs on Playwright's fake clock (``page.clock``): page
time moves only by :data:`SETTLE_MS` after each move (animations, the
autocomplete delay), so a decision model may think for minutes and the page
sees the same timeline every run.

**Seeds**: ``reset(seed=s)`` seeds the page's ``Math.random`` with
``Math.seedrandom("s")`` (as MiniWoB's own Python does) in a fresh browser
document at a fixed date (:data:`EPOCH`, UTC, en-US), so every policy meets
the same instance and a seed plus moves replays the same page. (An engine keeps
its page and context across games and loads a new document for each: MiniWoB
pages keep nothing in storage, and a new context costs a renderer process.)

**Fork** stands on the engine seam (:mod:`s1gym.engines.base`): an engine is
one page (with its own browser context) in the thread's shared Chromium
(:mod:`s1gym.engines.browser`); a fork is lazy and, when first stepped, replays
the move list on a fresh page (a page cannot be copied). Engines of all web
tasks share a pool (:data:`ENGINE_CAPACITY` pages per thread); the browser
starts with the first engine and closes when the last web env that
``gym.make`` built (not a fork) closes, and at exit.

**Failures**: every engine call runs under a watchdog (``step_timeout``
seconds, default 60): a hung page gets its browser killed and the step raises
:class:`~s1gym.engines.browser.BrowserCrashed`, as does a crashed browser; the
runner records the trial as errored and the next trial starts a fresh browser.

``env.screenshot()`` is a PNG of the page at the env's state.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import threading
import unicodedata
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from s1gym.core import BASE_CHARSET, Progress
from s1gym.engines import browser as _browser
from s1gym.engines.base import Engine, EngineEnv, EnginePool, close_pools, pool_for
from s1gym.tasks.web import expert as web_expert

__all__ = ["ENGINE_CAPACITY", "WEB_TASKS", "FlightsEnv", "MiniWoBEnv", "WebAnswer", "WebEngine", "WebTask"]

#: The page's clock at the start of every episode: 2017-06-01 12:00 UTC (fixed, so dates and
#: "3h ago" texts are the same every run; the flight date picker opens on its last allowed month).
EPOCH = dt.datetime(2017, 6, 1, 12, tzinfo=dt.timezone.utc)
#: Page time (ms, fake clock) let pass after each move: jQuery animations (400 ms) and the
#: autocomplete delay (300 ms) finish within it.
SETTLE_MS = 1000
#: MiniWoB's episode timer, set before each episode: the longest delay setTimeout accepts.
NO_TIME_LIMIT_MS = 2**31 - 1
#: Pages (engines) alive at once per thread; more envs/forks replay on demand.
ENGINE_CAPACITY = 6
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


@dataclass(frozen=True)
class WebTask:
    """A curated MiniWoB++ task: its candidate cap N, step limit and one line about it."""

    name: str
    max_candidates: int
    max_steps: int
    about: str


def _tasks(*rows: tuple[str, int, int, str]) -> dict[str, WebTask]:
    return {name: WebTask(name, n, steps, about) for name, n, steps, about in rows}


#: The curated tasks whose moves fit a candidate list (no drawing, dragging or free-form answers).
#: N: the most candidates met along Random and Rule play over seeds 0-9 (bench/web.py --caps), with
#: headroom (at least half again); docs/benchmarks.md has the measured maxima.
WEB_TASKS: dict[str, WebTask] = _tasks(
    ("book-flight", 48, 30, "book the cheapest/shortest flight: autocomplete, date picker, results"),
    ("choose-date", 64, 20, "pick a date in a jQuery UI date picker"),
    ("choose-list", 48, 6, "select an item from a drop-down list and submit"),
    ("click-button", 24, 6, "click the named button"),
    ("click-button-sequence", 8, 6, "click two buttons in order"),
    ("click-checkboxes", 16, 12, "check exactly the named boxes and submit"),
    ("click-collapsible", 8, 6, "expand a section and click submit"),
    ("click-collapsible-2", 24, 10, "expand sections to find and click a link"),
    ("click-dialog", 8, 4, "close the dialog"),
    ("click-dialog-2", 8, 4, "click the named button of a dialog"),
    ("click-link", 32, 6, "click the named link"),
    ("click-option", 16, 6, "choose the named radio option and submit"),
    ("click-tab", 8, 6, "click the named tab"),
    ("click-tab-2", 48, 10, "switch tabs to find and click a link"),
    ("click-test", 4, 4, "click the button"),
    ("click-test-2", 4, 4, "click button ONE or TWO"),
    ("click-widget", 24, 4, "click the named kind of widget"),
    ("email-inbox", 48, 12, "delete, star, reply to or forward an email"),
    ("enter-date", 8, 6, "enter a date and submit"),
    ("enter-password", 16, 8, "enter a password twice and submit"),
    ("enter-text", 8, 6, "type the given text and submit"),
    ("enter-text-dynamic", 8, 6, "type the given text and submit"),
    ("focus-text", 4, 4, "focus the text field"),
    ("focus-text-2", 12, 4, "focus the named text field"),
    ("login-user", 16, 8, "type username and password, log in"),
    ("login-user-popup", 16, 10, "log in; dismiss a popup if it appears"),
    ("multi-layouts", 32, 10, "fill a form in varying layouts"),
    ("multi-orderings", 32, 10, "fill a form in varying field orders"),
    ("navigate-tree", 32, 10, "open folders to click the named file"),
    ("search-engine", 32, 10, "search, page through results, click the n-th"),
    ("social-media", 64, 6, "click an action on a user's post"),
    ("use-autocomplete", 24, 8, "enter an item through the autocomplete"),
)

#: What the observation may contain: printable characters of the Basic Multilingual Plane up to
#: the CJK blocks (pages print accents, middle dots, arrows); anything else becomes "?".
WEB_CHARSET: frozenset[str] = frozenset(BASE_CHARSET) | frozenset(
    c for c in map(chr, range(0xA0, 0x3000)) if c.isprintable() and unicodedata.category(c)[0] != "C"
)


def _clean(text: str) -> str:
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
    return _clean("\n".join(lines))


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
            utterance=_clean(str(state["utterance"])),
            fields=extract_fields(self._task, str(state["utterance"])),
            page=page,
            moves=tuple(_clean(m) for m in self._targets),
            done=done,
            raw_reward=float(state["reward"] or 0.0) if done else 0.0,
            reason=_clean(state["reason"]),
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


def _close_pages(key: tuple[int, bool]) -> None:
    """The browser ``key`` (thread, headless) has no holder left: close the web pages in it."""
    tid, headless = key
    close_pools(lambda k: isinstance(k, tuple) and k[:2] == ("web", headless) and k[-1] == tid)


_browser.on_unheld(_close_pages)


class MiniWoBEnv(EngineEnv):
    """One MiniWoB++ task on its real page in Chromium (see the module docstring)."""

    task_name: ClassVar[str] = "MiniWoB"
    #: the largest cap and step limit of the curated tasks (``s1 list``); each task has its own (WEB_TASKS)
    default_max_candidates = max(t.max_candidates for t in WEB_TASKS.values())
    default_max_steps = max(t.max_steps for t in WEB_TASKS.values())
    engine_capacity = ENGINE_CAPACITY
    stall_patience = 4
    option_help: ClassVar[dict[str, str]] = {
        "task": "the MiniWoB++ task (default click-button): " + ", ".join(WEB_TASKS),
        "headless": "run Chromium headless (default true; false opens a window to watch, needs a display)",
        "step_timeout": "seconds one page load or move may take before the browser is killed (default 60)",
    }

    def __init__(
        self,
        task: str = "click-button",
        headless: bool = True,
        step_timeout: float = 60.0,
        max_candidates: int | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        spec = WEB_TASKS.get(str(task))
        if spec is None:
            raise ValueError(f"unknown MiniWoB task {task!r}; the web tasks are: {', '.join(WEB_TASKS)}")
        if not isinstance(headless, bool):
            raise ValueError(f"headless must be true or false, got {headless!r}")
        if not float(step_timeout) > 0:
            raise ValueError(f"step_timeout must be a positive number of seconds, got {step_timeout!r}")
        _browser.find_chromium()  # a missing browser is an error now, not mid-episode
        try:
            import miniwob.fields  # noqa: F401
            import playwright.sync_api  # noqa: F401
        except ImportError as exc:
            raise _browser.BrowserNotFoundError(
                f"the web tasks need the `web` extra ({exc.name} is missing): pip install 's1gym[web]'"
            ) from exc
        super().__init__(
            max_candidates=max_candidates or spec.max_candidates,
            max_steps=max_steps or spec.max_steps,
            charset=WEB_CHARSET,
            render_mode=render_mode,
        )
        self.task = spec.name
        self.task_name = f"MiniWoB {spec.name}"
        self.headless = headless
        self.step_timeout = float(step_timeout)
        self._answer = WebAnswer("", (), "", (), False, 0.0, "")
        #: the browser this env holds open (forks share the key but not the hold; closing may happen in
        #: another thread than the one that made the env)
        self._browser_key = _browser.hold(self, headless)

    # ------------------------------------------------------- engine seam hooks
    def _pool_key(self) -> Hashable:
        return ("web", self.headless, self.step_timeout, threading.get_ident())

    def _pool(self) -> EnginePool:
        factory = functools.partial(WebEngine, self.headless, self.step_timeout)
        return pool_for(self._pool_key(), factory, self.engine_capacity)

    def _choose_game(self, seed: int | None, options: dict[str, Any]) -> WebGame:
        if seed is None:
            seed = int(self.np_random.integers(2**31))
        return WebGame(self.task, str(seed))

    def _on_start(self, raw: WebAnswer) -> str:
        self._answer = raw
        return f"A new {self.task} page."

    def _on_step(self, move: str, raw: WebAnswer) -> str:
        self._answer = raw
        if raw.error:
            return f"You tried to {move}, but it did not happen: {_clean(raw.error)}"
        if raw.done:
            outcome = "succeeded" if raw.raw_reward >= 1.0 - 1e-9 else "failed"
            return f"You {move}. The task is over: it {outcome} (reward {raw.raw_reward:+.2f})."
        return f"You {move}."

    # ---------------------------------------------------------- the S1Env game
    def _legal_moves(self) -> list[str]:
        return list(self._answer.moves)

    def _describe(self) -> str:
        a = self._answer
        parts = [f"Instruction: {a.utterance}"]
        if a.page:
            parts.append("Page:\n" + a.page)
        return "\n\n".join(parts)

    def _progress(self) -> Progress:
        a = self._answer
        if not a.done:
            return Progress(0.0)
        # success is the page's full reward (1): click-checkboxes pays r/n for r more right than wrong boxes
        won = a.raw_reward >= 1.0 - 1e-9
        return Progress(max(0.0, min(1.0, a.raw_reward)), won=won, lost=not won)

    def _extra_info(self) -> dict[str, Any]:
        return {"raw_reward": float(self._answer.raw_reward), "task": self.task}

    # ------------------------------------------------------------- baselines
    @property
    def fields(self) -> tuple[tuple[str, str], ...]:
        """The instruction's fields (MiniWoB's extractor): public, the instruction says them."""
        return self._answer.fields

    def rule_action(self) -> str:
        return web_expert.rule_move(self)

    def expert_action(self) -> str:
        if self.task not in web_expert.EXACT:
            raise NotImplementedError(f"{self.task_name}: no exact expert (the rule baseline is rule_action())")
        return web_expert.rule_move(self)

    # ------------------------------------------------------------------ more
    def screenshot(self) -> bytes:
        """A PNG of the page at this env's state (replayed on a page first when needed)."""
        engine = self.engine()
        assert isinstance(engine, WebEngine)
        return engine.screenshot()

    def close(self) -> None:
        """Give the page back; when no web env built by ``gym.make`` holds the browser any more, its pages
        and the browser close (:mod:`s1gym.engines.browser` decides)."""
        super().close()
        key = getattr(self, "_browser_key", None)
        if key is not None:
            _browser.let_go(self, key)


class FlightsEnv(MiniWoBEnv):
    """``book-flight``: the flights job of the eval harness (MiniWoB++'s book-flight page)."""

    default_max_candidates = WEB_TASKS["book-flight"].max_candidates
    default_max_steps = WEB_TASKS["book-flight"].max_steps

    option_help: ClassVar[dict[str, str]] = {
        k: v for k, v in MiniWoBEnv.option_help.items() if k != "task"
    }

    def __init__(self, **kwargs: Any) -> None:
        if "task" in kwargs and kwargs["task"] != "book-flight":
            raise ValueError("s1/Flights-v0 is book-flight; use s1/MiniWoB-v0 with task=... for other tasks")
        kwargs.pop("task", None)
        super().__init__(task="book-flight", **kwargs)
