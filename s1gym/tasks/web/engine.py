"""The web engine: one MiniWoB++ page in the thread's shared Chromium, deterministic and cheap to restore.

A page is a function of (task, seed, moves). Three things make it so:

- **no real time, no free randomness**: ``web_runtime.js`` runs before the page's own scripts and puts
  the page on a fake clock (``Date``, ``performance.now``, timers, animation frames) that moves only
  when the engine lets :data:`SETTLE_MS` of page time pass after a move (a task may say otherwise), and seeds ``Math.random``
  (MiniWoB seeds it again with ``Math.seedrandom(seed)`` at the episode's start); CSS animations are off;
- **clicks land where the move says**: a move's element is found by its path in the document (read at
  the state the move was listed in), scrolled into view when no point of it is visible, pressed at a
  point no other element covers, and only once the element under the pointer is that element and its
  box has settled (hover styles may swap an icon for an image that is still loading: a press at that
  moment hits the container; that race made social-media forks diverge);
- **an episode starts the same way on every page**: ``__s1.start`` clears every timer, sets the clock
  to :data:`EPOCH`, seeds, and calls MiniWoB's ``core.startEpisodeReal()`` (the way MiniWoB's own
  Gymnasium envs reset), on a page that already shows the task when it can: the task's catalogue entry
  says whether an in-document restart is the same page as a fresh load (:mod:`.catalogue`;
  ``bench/web.py --forks`` checks it), else the page is loaded again first.

So restoring a state for a fork costs a restart (a few ms) plus the moves, replayed with the same real
input but without reading the page in between (each move's element path is remembered from the read
at its state, :data:`SPECS`). The env remembers each (state, move) -> answer too
(:class:`~s1gym.engines.base.EngineEnv`'s answer cache), so a fork that steps a move some page already
played gets the answer without a page; on a memoryless task's page, a move some page in the same state
played, by whatever moves it got there (:data:`MEMO`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from s1gym.engines import browser as _browser
from s1gym.engines.base import Engine
from s1gym.tasks.web.answer import WEB_CHARSET, WebAnswer, WebGame, clean, extract_fields, page_text, task_url
from s1gym.tasks.web.memory import MEMO, MOVE_LISTS, SPECS

__all__ = ["EPOCH", "MEMO", "NO_TIME_LIMIT_MS", "SETTLE_MS", "WEB_CHARSET", "WebAnswer", "WebEngine", "WebGame",
           "clean", "extract_fields", "task_url"]

#: The page's clock at the start of every episode: 2017-06-01 12:00 UTC (fixed, so dates and
#: "3h ago" texts are the same every run; the flight date picker opens on its last allowed month).
EPOCH = dt.datetime(2017, 6, 1, 12, tzinfo=dt.timezone.utc)
EPOCH_MS = int(EPOCH.timestamp() * 1000)
#: Page time (ms, fake clock) let pass after each move: jQuery animations (400 ms) and the
#: autocomplete delay (300 ms) finish within it.
SETTLE_MS = 1000
#: MiniWoB's episode timer, set before each episode: the longest delay setTimeout accepts.
NO_TIME_LIMIT_MS = 2**31 - 1
#: Real milliseconds a pressed element may take to settle under the pointer (an image loading).
HOVER_TIMEOUT_MS = 2000
#: A page that restarts in its document is loaded again after this many episodes (memory).
RELOAD_EVERY = 200
VIEWPORT = {"width": 480, "height": 480}
#: Where the pointer rests between moves: a blank corner, away from MiniWoB's 160x210 task area.
REST_POINTER = (VIEWPORT["width"] - 1, VIEWPORT["height"] - 1)
RUNTIME_JS = Path(__file__).with_name("web_runtime.js").read_text()
READ_JS = Path(__file__).with_name("web_page.js").read_text().strip()
#: Pointer moves between pressing and releasing in a drag (jQuery UI needs moves to start dragging).
DRAG_STEPS = 8
#: Where a drag onto an element ends: its centre moved this share of its size onward.
DRAG_PAST = 0.2
#: Moves carried out in the page by web_runtime.js (a select list, a scroll, a text selection, a field's
#: value): no pointer involved.
PAGE_MOVES = frozenset({"select", "toggle", "scroll", "highlight", "fill", "clear"})
#: Months a date pick may page through.
MAX_PICKER_PAGES = 36
#: One evaluate after a move: let page time pass, then read the page (the moves, the reward). The answer
#: comes back as one JSON string: Playwright checks and converts a returned object value by value in
#: Python, which cost 100-300 ms for the 216 moves of a simple-algebra page (the string: a few ms).
SETTLE_AND_READ = (
    f"(args) => {{ if (args.settle) __s1.clock.runFor(args.settle); "
    f"return JSON.stringify(({READ_JS})(args), (k, v) => (v === undefined ? null : v)); }}"
)


class WebEngine(Engine):
    """One page (in its own browser context) of the thread's shared Chromium; see the module docstring."""

    label = "Chromium"

    def __init__(self, headless: bool = True, step_timeout: float = 60.0) -> None:
        self.headless = headless
        self.step_timeout = float(step_timeout)
        self.browser = _browser.browser(headless)
        self.context: Any = None
        self.page: Any = None
        self._targets: dict[str, dict[str, Any]] = {}
        self._values: list[str] = []
        self._opts: dict[str, Any] = {}
        self._hover_layout = True  # until the document says otherwise
        self._key_by_key = False
        self._settle = SETTLE_MS
        self._task = ""
        self._loaded = ""  # the task the page's document shows
        self._starts = 0  # episodes started in this document
        self._game: WebGame | None = None
        self._moves: tuple[str, ...] = ()
        self._closed = False
        #: where the engine last put the pointer (part of a memoryless page's state: :attr:`WebAnswer.memo`)
        self._pointer: tuple[float, float] = REST_POINTER
        #: counters (bench/web.py prints them)
        self.loads = self.restarts = 0

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
        with self._guard("a page load"):
            self._start(game)
            return self._read(snapshot=True, settle=0)  # _start let the page settle

    def step(self, move: str) -> WebAnswer:
        spec = self._targets.get(move)
        if spec is None:
            raise ValueError(f"{self._task}: {move!r} is not a move of this page now")
        with self._guard(f"'{move}'"):
            error = self._act(spec)
            self._moves = (*self._moves, move)
            answer = self._read(snapshot=True)
        return answer._replace(error=error) if error else answer

    def replay(self, game: WebGame, moves: tuple[str, ...]) -> None:
        """Start ``game`` and play ``moves`` again, reading the page only where no spec is remembered
        (at the end too: the next move's elements)."""
        with self._guard("a replay"):
            self._start(game)
            for i, move in enumerate(moves):
                specs = SPECS.get((game, moves[:i]))
                spec = specs.get(move) if specs is not None else None
                if spec is None:
                    self._read(snapshot=False, settle=0)
                    spec = self._targets.get(move)
                    if spec is None:
                        raise RuntimeError(
                            f"{game.task} seed {game.seed}: replaying {moves[: i + 1]} on a new page, {move!r} is not "
                            "a move of the page there: the page is not a function of its seed and moves (a bug)"
                        )
                self._act(spec)
                self._moves = moves[: i + 1]
                self.page.evaluate("(ms) => __s1.clock.runFor(ms)", self._settle) if i + 1 < len(moves) else None
            targets = SPECS.get((game, moves))
            if targets is None:
                self._read(snapshot=False, settle=self._settle if moves else 0)
                return
            if moves:  # the moves of this state were read before: only let the page's time pass
                self.page.evaluate("(ms) => __s1.clock.runFor(ms)", self._settle)
            self._targets = targets

    # ------------------------------------------------------------ internals
    def _point(self, x: float, y: float) -> None:
        """The pointer onto (x, y)."""
        self.page.mouse.move(x, y)
        self._pointer = (x, y)

    def _open_page(self) -> None:
        self.context, self.page = self.browser.new_page(viewport=VIEWPORT, timezone_id="UTC", locale="en-US")
        self.context.add_init_script(RUNTIME_JS)
        self.page.set_default_timeout(self.step_timeout * 1000)  # the watchdog's deadline

    def _start(self, game: WebGame) -> None:
        from s1gym.tasks.web.catalogue import CATALOGUE

        if self.page is None:
            self._open_page()
        spec = CATALOGUE[game.task]
        if self._loaded != game.task or not spec.restarts or self._starts >= RELOAD_EVERY:
            self.page.goto(task_url(game.task), wait_until="load")
            self._hover_layout = bool(self.page.evaluate("() => __s1.prepareDocument()"))
            self._loaded, self._starts = game.task, 0
            self.loads += 1
        else:
            self.restarts += 1
            if spec.restart_js:
                self.page.evaluate(spec.restart_js)
        self._task, self._game, self._moves = game.task, game, ()
        self._starts += 1
        self._point(*REST_POINTER)
        utterance = self.page.evaluate(
            "([seed, maxTime, epoch, settle]) => { const u = __s1.start(seed, maxTime, epoch); __s1.clock.runFor(settle); return u; }",
            [game.seed, NO_TIME_LIMIT_MS, EPOCH_MS, spec.settle_ms],
        )
        fields = extract_fields(game.task, utterance)
        self._values = spec.typed_values(fields, utterance["text"])
        self._opts = spec.page_options(fields)
        self._key_by_key = spec.key_by_key
        self._settle = spec.settle_ms

    def _act(self, spec: dict[str, Any]) -> str:
        """Carry out one move with real input; the error text when it could not be done, else ''."""
        page = self.page
        kind = spec["kind"]
        if kind == "wait":
            return ""  # the page's time passes after every move
        if kind == "press":
            page.keyboard.press(spec["value"])
            return ""
        if kind in PAGE_MOVES:
            return page.evaluate("([kind, path, value]) => __s1[kind](path, value)", [kind, spec["path"], spec["value"]])
        if kind == "drag":
            return self._drag(spec)
        if kind == "pickdate":
            return self._pick_date(spec)
        if kind == "hover":  # the pointer onto the element, and it stays there (a menu opens under it)
            where = self._where(spec["path"], spec)
            if "error" in where:
                return where["error"]
            self._point(where["x"], where["y"])
            return ""
        error = "" if spec.get("focused") else self._press(spec["path"], spec)  # (typing where the focus is)
        if error or kind == "click":
            return error
        if kind == "type":
            if spec.get("inputType") in {"date", "time", "number"}:
                return page.evaluate("([path, value]) => __s1.fill(path, value)",
                                     [spec["path"], _field_value(spec["inputType"], spec["value"])])
            page.evaluate("(path) => __s1.clear(path)", spec["path"])
            value = spec["value"]
            if self._key_by_key:
                page.keyboard.type(value)  # every key's events (a terminal that reads keydown)
            else:  # the text arrives as typed text does (input events), its last key with every key event
                if len(value) > 1:
                    page.keyboard.insert_text(value[:-1])
                page.keyboard.type(value[-1:])
            return ""
        raise RuntimeError(f"unknown move kind {kind!r}")  # pragma: no cover - web_page.js makes only these

    def _where(self, path: list[int], spec: dict[str, Any] | None = None) -> dict[str, Any]:
        """Where to press on the element at ``path`` (``__s1.prepare``: a point nobody covers, scrolled into view
        first when none is visible). A move's spec (the same dict for every page in that state, :data:`SPECS`)
        keeps the answer when the page did not have to scroll (a page in the same state has the element at the
        same place), so a replay presses there without asking the page."""
        where = spec.get("where") if spec is not None else None
        if where is None:
            where = self.page.evaluate("(path) => __s1.prepare(path)", path)
            if spec is not None and "error" not in where and not where["scrolled"]:
                spec["where"] = where
        return where

    def _press(self, path: list[int], spec: dict[str, Any] | None = None) -> str:
        """A left click on the element at ``path`` (scrolled into view, at a point nobody covers).

        On a page where :hover changes the layout, the press waits until what is under the pointer
        settled, and the pointer then rests in a blank corner (no hover state carries over to the next
        move); elsewhere it is one click and the pointer stays where it clicked, as a person's does."""
        if self._hover_layout:
            error = self._grab(path, spec)
            if not error:
                self.page.mouse.up()
            self._point(*REST_POINTER)
            return error
        where = self._where(path, spec)
        if "error" in where:
            return where["error"]
        self.page.mouse.click(where["x"], where["y"])
        self._pointer = (where["x"], where["y"])
        return ""

    def _grab(self, path: list[int], spec: dict[str, Any] | None = None) -> str:
        """Pointer onto the element at ``path`` and the button down; the error text when that cannot be done."""
        page = self.page
        where = self._where(path, spec)
        if "error" in where:
            return where["error"]
        x, y = where["x"], where["y"]
        self._point(x, y)
        if self._hover_layout:
            error = page.evaluate(
                "([path, x, y, box, ms]) => __s1.hovered(path, x, y, box, ms)", [path, x, y, where["box"], HOVER_TIMEOUT_MS]
            )
            if error:
                return error
        page.mouse.down()
        return ""

    def _pick_date(self, spec: dict[str, Any]) -> str:
        """Pick a date in a jQuery UI date picker as a person does: open it, page month by month to the
        date's month, click the day (each click followed by page time passing, as between moves)."""
        error = self._press(spec["path"], spec)
        for _ in range(MAX_PICKER_PAGES):
            if error:
                return error
            self.page.evaluate("(ms) => __s1.clock.runFor(ms)", self._settle)
            where = self.page.evaluate("(value) => __s1.pickerStep(value)", spec["value"])
            if "error" in where:
                return where["error"]
            error = self._press(where["path"])
            if where["day"]:
                return error
        return f"the date picker did not reach {spec['value']} within {MAX_PICKER_PAGES} months"

    def _drag(self, spec: dict[str, Any]) -> str:
        """Press on the element, move in steps onto the target element (or by dx, dy), release."""
        page = self.page
        error = self._grab(spec["path"], spec)
        if error:
            self._point(*REST_POINTER)
            return error
        start = {"x": self._pointer[0], "y": self._pointer[1]}  # where the grab put the pointer
        if spec.get("to"):
            where = page.evaluate("(path) => __s1.rectOf(path)", spec["to"])
            if "error" in where:
                page.mouse.up()
                self._point(*REST_POINTER)
                return where["error"]
            # past the target's middle in the direction of travel (a sortable list moves an item before or
            # after another once the pointer crossed that item's middle the way it travels)
            left, top, width, height = (float(v) for v in where["box"].split(","))
            cx, cy = left + width / 2, top + height / 2
            x = cx + DRAG_PAST * width * ((cx > start["x"]) - (cx < start["x"]))
            y = cy + DRAG_PAST * height * ((cy > start["y"]) - (cy < start["y"]))
        else:
            x, y = start["x"] + spec["dx"], start["y"] + spec["dy"]
        page.mouse.move(x, y, steps=DRAG_STEPS)
        self._pointer = (x, y)
        page.mouse.up()
        self._point(*REST_POINTER)
        return ""

    def _read(self, snapshot: bool = True, settle: int | None = None) -> WebAnswer:
        settle = self._settle if settle is None else settle
        state = json.loads(self.page.evaluate(SETTLE_AND_READ, {"values": self._values, "settle": settle, "opts": self._opts}))
        done = bool(state["done"])
        self._targets = {} if done else {m["text"]: m for m in state["moves"]}
        if self._game is not None:  # (the dict already remembered for this state, where one is: see _where)
            self._targets = SPECS.setdefault((self._game, self._moves), self._targets)
        page = "" if done or not snapshot else page_text(self.page.locator("body").aria_snapshot())
        moves = tuple(clean(m) for m in self._targets)
        moves = MOVE_LISTS.setdefault(moves, moves)
        if page and state["picture"]:
            page += "\nPicture (shapes, size, centre in pixels from its top-left corner):\n" + "\n".join(
                f"- {clean(line)}" for line in state["picture"]
            )
        return WebAnswer(
            utterance=clean(str(state["utterance"]["text"])),
            fields=extract_fields(self._task, state["utterance"]),
            page=page,
            moves=moves,
            done=done,
            raw_reward=float(state["reward"] or 0.0) if done else 0.0,
            reason=clean(state["reason"]),
            form=tuple((clean(k), clean(v)) for k, v in state.get("form", [])),
            hidden="" if done else hashlib.blake2b(str(state["hidden"]).encode(), digest_size=12).hexdigest(),
            memo=() if done or not state["memo"] else tuple(f"{key}@{self._pointer}" for key in state["memo"]),
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


def _field_value(input_type: str, value: str) -> str:
    """What a date, time or number input takes for a value as an instruction writes it:
    ``mm/dd/yyyy`` as ``yyyy-mm-dd``, ``7:55PM`` as ``19:55``; other values unchanged."""
    formats = {"date": ("%m/%d/%Y", "%Y-%m-%d"), "time": ("%I:%M%p", "%H:%M")}.get(input_type)
    if formats is None:
        return value
    try:
        return dt.datetime.strptime(value.strip().replace(" ", "").upper(), formats[0]).strftime(formats[1])
    except ValueError:
        return value
