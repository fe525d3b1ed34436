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

import functools
import threading
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, ClassVar

from s1gym.core import Progress
from s1gym.engines import browser as _browser
from s1gym.engines.base import EngineEnv, EnginePool, close_pools, pool_for
from s1gym.tasks.web import expert as web_expert
from s1gym.tasks.web.engine import WEB_CHARSET, WebAnswer, WebEngine, WebGame, clean

__all__ = ["ENGINE_CAPACITY", "WEB_TASKS", "FlightsEnv", "MiniWoBEnv", "WebTask"]

#: Pages (engines) alive at once per thread; more envs/forks replay on demand.
ENGINE_CAPACITY = 6


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
            return f"You tried to {move}, but it did not happen: {clean(raw.error)}"
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

    @property
    def instruction(self) -> str:
        """The task's instruction (MiniWoB's utterance), as the observation shows it."""
        return self._answer.utterance

    @property
    def page_text(self) -> str:
        """The page as the observation shows it (the ARIA snapshot; empty once the episode is over)."""
        return self._answer.page

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
