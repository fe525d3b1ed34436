"""Web tasks: the real MiniWoB++ pages in a real Chromium, driven by Playwright.

``s1/MiniWoB-v0`` plays one MiniWoB++ task (option ``task``); ``s1/MiniWoB-<task>-v0`` is the same
with the task fixed (as BrowserGym's ``browsergym/miniwob.<task>``); ``s1/Flights-v0`` is
``book-flight``. The pages are the 130 that Farama's ``miniwob`` package (1.1.0, MIT) ships under
``miniwob/html/miniwob/``, opened as ``file://`` URLs. :mod:`s1gym.tasks.web.catalogue` lists every
one: the :data:`WEB_TASKS` s1gym offers with their formulation, and those it does not offer with the
reason (a reward graded by pixel distances or a moving target, which moves can only approximate).

**Observation**: the task's instruction (MiniWoB's utterance) and the
page as Playwright's ARIA snapshot (the accessibility tree as YAML: roles,
names, text, states, field values), MiniWoB's own reward display and query
hidden from it, link URLs dropped (machine-specific paths), and when the page
draws an SVG picture a ``Picture`` list of its shapes (kind, text or colour,
size, centre), then the moves. Some of what a person sees or remembers is not
in that text: a text selection, what was copied, styling such as a clicked
box's border or a dragged box's place. ``state_key()`` holds a digest of
those, so two states that differ only there are told apart (by Search's
duplicate pruning too); a decision model sees only the text.

**Candidates**: one per thing a person could do now, in document order
(``web_page.js``): click each visible, enabled, uncovered clickable element
(buttons, links, tabs, checkboxes, radios, menu and autocomplete items, date
picker days, the shapes of a clickable picture, elements with click handlers
or a pointer cursor), named by the accessibility role and name (an unnamed
control by its label text, placeholder, colour or icon class);
``select "<option>" in list "<name>"`` for each option of a select;
``type "<value>" into textbox "<name>"`` for each text field and each value
the task types (the instruction's fields, :mod:`miniwob.fields` or the fields
the page gives, and values read off the page); ``press Enter`` in a focused
field; and what the task's formulation adds (drags, pointing, scrolls,
highlights, keys, waiting, date picks; :mod:`~s1gym.tasks.web.catalogue`).
The same text twice is told apart by the nearest ancestor's text, then by
number. More moves than the task's cap N raise ``TooManyCandidatesError``.

**Reward and end**: MiniWoB's JavaScript reward. When the page ends the
episode (``WOB_DONE_GLOBAL``), ``info["raw_reward"]`` is the page's raw reward
(in [-1, 1], no time penalty) and the score is ``max(0, raw)``: 1 on success
(won), partial credit where the page gives it (click-checkboxes pays r/n),
lost otherwise. Before the end the score is 0, except where a task defines
progress (book-flight: the share of its form filled as asked). Wall-clock
never ends an episode: ``core.EPISODE_MAX_TIME`` is set to 2^31-1 ms and the
page runs on s1gym's fake clock (``web_runtime.js``): page time moves only by
the task's settle time after each move (1 s by default: animations, the
autocomplete delay), so a decision model may think for minutes and the page
sees the same timeline every run.

**Seeds and determinism**: ``reset(seed=s)`` seeds the page's ``Math.random``
with ``Math.seedrandom("s")`` (as MiniWoB's own Python does) at a fixed date
(:data:`~s1gym.tasks.web.engine.EPOCH`, UTC, en-US); the page's ``Math.random``
is seeded before its first script too, and clicks land on the element the move
names: the same seed and moves give the same page, on any page
(:mod:`s1gym.tasks.web.engine` says how).

**Fork** stands on the engine seam (:mod:`s1gym.engines.base`): an engine is
one page (with its own browser context) in the thread's shared Chromium
(:mod:`s1gym.engines.browser`). A fork is lazy; stepped, it takes the page of the
env whose state it shares (which restores its own when it steps again) or
restores the state on another page: an in-document restart of the episode and
the moves replayed with the same input, without reading the page in between.
A (state, move) some page already played is answered from memory, with no page
(:data:`ANSWER_CACHE`); on a memoryless task's page (the catalogue says which) so is a move some page in
the same state played, whatever moves led there (:data:`~s1gym.tasks.web.memory.MEMO`). Engines of all
web tasks share a pool
(:data:`ENGINE_CAPACITY` pages per thread); the browser starts with the first
engine and closes when the last web env that ``gym.make`` built (not a fork)
closes, and at exit.

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
from typing import Any, ClassVar

from s1gym.core import Progress
from s1gym.engines import browser as _browser
from s1gym.engines.base import EngineEnv, EnginePool, GameState, close_pools, pool_for
from s1gym.tasks.web import expert as web_expert
from s1gym.tasks.web.catalogue import CATALOGUE, FLIGHTWOB, WebTask, offered
from s1gym.tasks.web.engine import MEMO, WEB_CHARSET, WebAnswer, WebEngine, WebGame, clean

__all__ = ["ANSWER_CACHE", "ENGINE_CAPACITY", "WEB_TASKS", "FlightsEnv", "MiniWoBEnv", "WebTask"]

#: Pages (engines) alive at once per thread; more envs/forks restore on demand.
ENGINE_CAPACITY = 6
#: (state, move) -> answer pairs remembered per thread (a page is a function of its seed and moves).
ANSWER_CACHE = 4096
#: The tasks s1gym offers (the catalogue's entries that are not marked unsupported).
WEB_TASKS: dict[str, WebTask] = offered()


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
    answer_cache = ANSWER_CACHE
    forks_take_engines = True
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
        spec = CATALOGUE.get(str(task))
        if spec is None:
            raise ValueError(f"unknown MiniWoB task {task!r}; the web tasks are: {', '.join(WEB_TASKS)}")
        if spec.unsupported:
            raise ValueError(
                f"MiniWoB task {task!r} is not offered: {spec.unsupported} (`s1 list` shows every task and why)"
            )
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
        self.web_task = spec
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
        return pool_for(self._pool_key(), factory, self.engine_capacity, answer_capacity=self.answer_cache)

    def _choose_game(self, seed: int | None, options: dict[str, Any]) -> WebGame:
        if seed is None:
            seed = int(self.np_random.integers(2**31))
        return WebGame(self.task, str(seed))

    def _play(self, move: str) -> str:
        """A move: on a page, from the answer cache, or (a memoryless task's page) from :data:`MEMO`, the answer
        a page that showed the same gave to the same move, when this env holds no page at its state."""
        if not self.web_task.memoryless:
            return super()._play(move)
        state, pool, answer = self.game_state, self._pool(), self._answer
        key = (state.game, answer.memo[answer.moves.index(move)], move) if answer.memo and move in answer.moves else None
        if key is None:
            return super()._play(move)
        if not (state.owned_by(self) and pool.holds(state.engine, state)):
            raw = MEMO.get(key)
            if raw is not None:
                self._game_state = GameState(state.game, (*state.moves, move), self)
                return self._on_step(move, raw)
        feedback = super()._play(move)
        MEMO.setdefault(key, self._answer)
        return feedback

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

    def state_key(self) -> str:
        """The page text and moves, and a digest of what the page holds that the text leaves out (the
        selection, the clipboard, the task area's classes, styles and scroll; not which element has the
        focus, so states that differ only there share a key): selected text, a copy, a box clicked into
        the selection, a box dragged elsewhere are new states, not the same page again (Search pruned
        them as moves that change nothing)."""
        return super().state_key() + "\n#" + self._answer.hidden

    def _progress(self) -> Progress:
        a = self._answer
        if not a.done:
            progress = self.web_task.progress
            return Progress(progress(a.fields, a.form, a.page) if progress is not None else 0.0)
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

    @classmethod
    def list_tasks(cls) -> tuple[str, list[str], list[tuple[str, ...]]]:
        """Every page of the miniwob package, offered or not and why (``s1 list`` prints it)."""
        rows = [
            (t.name, str(t.max_candidates), str(t.max_steps), "yes" if t.name in web_expert.SOLVERS else "-", t.about)
            if not t.unsupported
            else (t.name, "-", "-", "-", f"[dim]not offered: {t.unsupported}[/dim]")
            for t in CATALOGUE.values()
        ]
        rows += [(name, "-", "-", "-", f"[dim]not offered: {why}[/dim]") for name, why in FLIGHTWOB.items()]
        title = (f"MiniWoB++ tasks: {len(WEB_TASKS)} of the miniwob package's {len(CATALOGUE)} pages offered "
                 "(s1/MiniWoB-v0 with task=<task>, or s1/MiniWoB-<task>-v0)")
        return title, ["task", "N", "steps", "rule", "about"], rows

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
