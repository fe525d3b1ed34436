"""The calculator's engine: one mate-calc window on its own headless desktop (:mod:`.session`), on the
engine seam (:class:`s1gym.engines.base.Engine`), read and pressed over AT-SPI (:mod:`.atspi`).

One :class:`CalculatorEngine` is one desktop session with one mate-calc.
A button press is a ``DoAction`` call (GTK 3 clicks before replying); then the engine waits until
mate-calc's main loop sleeps in its top-level poll (it finishes a deletion in an idle callback, and a
press before that would merge into the deletion's undo step: :class:`~.session.EventLoopWatch`).
After ``result`` it first waits for the solve: mate-calc solves in a thread and shows the answer from a
50 ms timer, so the engine polls the display until the answer (bold text) or an error status shows. A new game
presses ``clear`` (the app is launched again when it died, every :data:`RECYCLE_GAMES` games, or
when ``clear`` does not give an empty display); ``replay`` (a fork's first step) is ``clear`` plus
the moves again. ``clear`` keeps mate-calc's undo history: nothing but ``undo`` can reach what
came before the clear (``=`` on a result undoes one step, never past the episode's first press), so
``undo`` in an app that holds an older game relaunches it and replays the episode's moves first;
the same moves thus give the same windows whether the engine was fresh or reused
(tests/test_calculator.py checks it).

Failures: an engine whose app or desktop died between moves is dropped by the pool (its desktop closed)
and the env replays its moves on another, so the game goes on unchanged. A move during which the app dies,
hangs or misbehaves raises :class:`CalculatorCrashed` (the runner records the trial as errored) and that
engine is never used again, so the next game starts on a fresh one.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

from s1gym.engines.base import Engine
from s1gym.errors import EngineCrashed
from s1gym.tasks.desktop.goals import Goal
from s1gym.tasks.desktop.session import (
    DesktopError,
    DesktopSession,
    DesktopUnavailable,
    EventLoopWatch,
    require,
    threads,
)

try:  # jeepney, the desktop extra: where it is absent, unavailable() says so and no engine starts
    from s1gym.tasks.desktop.atspi import ACCESSIBLE, STATE, Atspi, AtspiError, Call, Node, states_of
except ImportError:  # pragma: no cover - exercised on machines without the extra
    pass

__all__ = ["APP", "SLOTS", "CalcView", "CalculatorCrashed", "CalculatorEngine", "Window", "unavailable"]

APP = "mate-calc"
#: The buttons of mate-calc's Basic mode (accessible names), row by row as the window shows them.
SLOTS: tuple[str, ...] = (
    "7", "8", "9", "divide", "undo", "clear",
    "4", "5", "6", "multiply", "start_group", "end_group",
    "1", "2", "3", "subtract", "x_squared", "square_root",
    "0", "numeric_point", "percentage", "add", "result",
)  # fmt: skip
#: Relaunch the app after this many games in it (its undo history grows with every press).
RECYCLE_GAMES = 100
#: Longest wait for mate-calc's answer after ``result`` (seconds); a hung solve errors the trial.
SOLVE_TIMEOUT = 60.0
#: mate-calc looks for a solver thread's answer every this many seconds (``g_timeout_add(50, ...)``).
ANSWER_TICK = 0.05


def unavailable() -> str | None:
    """Why this machine cannot run the task (the missing programs and the setup command), or ``None``."""
    try:
        require("s1/Calculator-v0", {APP: "mate-calc"})
    except DesktopUnavailable as exc:
        return str(exc)
    return None


class CalculatorCrashed(DesktopError, EngineCrashed):
    """The calculator app or its desktop died, or stopped answering, during a move."""


@dataclass(frozen=True)
class CalcView:
    """What the window shows: the display text, its bold (result) spans, the status line, the live buttons;
    and ``expression``, what the display showed when the last press, ``result``, evaluated it ("" after any
    other press)."""

    display: str
    bold: tuple[tuple[int, int], ...]
    status: str
    sensitive: frozenset[str]
    expression: str = ""

    @property
    def is_result(self) -> bool:
        """The whole display is a result (mate-calc's bold answer)."""
        return bool(self.display) and self.bold == ((0, len(self.display)),)


@dataclass(frozen=True)
class Window:
    """Where mate-calc's window keeps what the env reads, found once per launch."""

    frame: Node
    display: Node  # role "edit bar"
    status: Node  # role "text"
    buttons: dict[str, tuple[Node, str]]  # name -> (object, tooltip)
    rows: tuple[tuple[str, ...], ...]  # the button names row by row, as on screen


class CalculatorEngine(Engine):
    """One mate-calc window on its own headless desktop (see the module docstring)."""

    label = "desktop session (Xvfb, D-Bus, mate-calc)"

    def __init__(self) -> None:
        self.session = DesktopSession()
        self.app = None
        self.atspi = None
        self.games = 0  # games started in this app
        self.moves: list[str] = []  # pressed since the game started
        self.evaluated = ""  # the display that the last press, `result`, evaluated ("" after other presses)
        self.clean = False  # the app's undo history holds only this game's presses
        self.failed = False  # a move failed (the app died, hung or misbehaved): never used again
        try:
            self.atspi = Atspi(self.session.bus_address)
            self._launch()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------- the app
    def _launch(self, timeout: float = 60.0) -> None:
        """Start a fresh mate-calc (ending the old one) and find its display, status line and buttons."""
        if self.app is not None:
            self.session.stop(self.app)
        self.app = self.session.launch([APP])
        self.loop = EventLoopWatch(self.app)
        deadline = time.monotonic() + timeout
        found = None
        while found is None:
            log = self.session.log_tail(self.app)
            if self.app.poll() is not None:
                raise self._broken(f"{APP} exited with code {self.app.returncode} while starting{log}")
            if time.monotonic() > deadline:
                raise self._broken(f"{APP}'s window did not appear within {timeout} s{log}")
            found = self._find_window()
            if found is None:
                time.sleep(0.02)
        self.window = found
        self.games, self.moves, self.clean, self.evaluated = 0, [], True, ""
        self._await_idle()  # the end of its start-up work

    def _find_window(self) -> Window | None:
        try:
            root = self.atspi.application_of(self.app.pid)
            if root is None:
                return None
            items = self.atspi.walk(root, prune=("menu bar", "menu", "combo box"))
        except AtspiError:
            return None  # the app is still starting
        showing = [i for i in items if STATE["showing"] in i["states"]]
        frames = [i for i in showing if i["role"] == "frame"]
        displays = [i for i in showing if i["role"] == "edit bar"]
        statuses = [i for i in items if i["role"] == "text" and i["parent"] is not None]
        buttons = {i["name"]: i for i in showing if i["role"] == "push button" and i["name"] in SLOTS}
        if not frames or not displays or not statuses or len(buttons) < len(SLOTS):
            return None
        where = [Call(buttons[n]["node"], "org.a11y.atspi.Component", "GetExtents", "u", (0,)) for n in SLOTS]
        extents = self.atspi.calls(where)
        rows: dict[int, list[tuple[int, str]]] = {}
        for name, (x, y, _w, _h) in zip(SLOTS, (e[0] for e in extents)):
            rows.setdefault(y, []).append((x, name))
        return Window(
            frame=frames[0]["node"],
            display=displays[0]["node"],
            status=statuses[0]["node"],
            buttons={name: (buttons[name]["node"], buttons[name]["description"]) for name in SLOTS},
            rows=tuple(tuple(name for _, name in sorted(rows[y])) for y in sorted(rows)),
        )

    def _broken(self, message: str) -> CalculatorCrashed:
        """The error that ends this engine's use: the pool drops it (``alive()`` is false from now on)."""
        self.failed = True
        return CalculatorCrashed(message)

    def _app_failure(self, exc: Exception) -> CalculatorCrashed:
        if not self.session.alive():
            return self._broken(f"the desktop of {APP} died (X server or session bus): {exc}")
        if self.app is None or self.app.poll() is not None:
            code = None if self.app is None else self.app.returncode
            return self._broken(f"{APP} exited (code {code}): {exc}{self.session.log_tail(self.app)}")
        return self._broken(f"{APP} stopped answering: {exc}")

    # ------------------------------------------------------------ reading
    def view(self) -> CalcView:
        """The display, its bold spans, the status line and the sensitive buttons (one round trip, more when
        the display holds several text runs). mate-calc may change the display between two calls (its answer
        timer); a read whose display text differs at its end from its start is read again."""
        w, text = self.window, "org.a11y.atspi.Text"
        get_display = Call(w.display, text, "GetText", "ii", (0, -1))
        batch = [
            get_display,
            Call(w.status, text, "GetText", "ii", (0, -1)),
            Call(w.display, text, "GetAttributeRun", "ib", (0, False)),
            *(Call(w.buttons[name][0], ACCESSIBLE, "GetState") for name in SLOTS),
            get_display,
        ]
        try:
            for _ in range(50):
                replies = self.atspi.calls(batch)
                display, status = replies[0][0], replies[1][0]
                if replies[-1][0] != display:
                    continue
                bold, run, more = [], replies[2], False
                for _ in range(len(display) + 1):  # the runs of non-default attributes; a result is bold
                    attrs, start, end = run
                    if dict(attrs).get("weight") == "700" and end > start:
                        bold.append((start, end))
                    if end <= start or end >= len(display):
                        break
                    run, more = self.atspi.attribute_run(w.display, end), True
                    if run[2] <= end:
                        break
                if more and self.atspi.calls([get_display])[0][0] != display:
                    continue
                break
            else:
                raise self._broken(f"{APP}'s display kept changing while it was read")
        except AtspiError as exc:
            raise self._app_failure(exc) from None
        sensitive = frozenset(
            name
            for name, reply in zip(SLOTS, replies[3:-1])
            if {STATE["sensitive"], STATE["showing"]} <= states_of(reply[0])
        )
        return CalcView(display, tuple(bold), status, sensitive, self.evaluated)

    # ------------------------------------------------------------ pressing
    def press(self, move: str) -> None:
        """Click ``move``'s button and wait until the window has settled."""
        if self.app is None or self.app.poll() is not None or not self.session.alive():
            raise self._app_failure(RuntimeError("the app is not running"))
        before = self.view() if move == "result" else None
        baseline = threads(self.app.pid, APP) if move == "result" else frozenset()
        try:
            done = self.atspi.do_action(self.window.buttons[move][0])
        except AtspiError as exc:
            raise self._app_failure(exc) from None
        if not done:
            raise self._broken(f"{APP} refused to click {move!r} (insensitive or hidden)")
        self.moves.append(move)
        self.evaluated = ""
        if before is not None:
            self._await_solve(before, baseline)
            self.evaluated = before.display
        self._await_idle()

    def _await_idle(self) -> None:
        """Let mate-calc run the idle callbacks a press queued: after a deletion it treats the next insertion
        as part of a replacement (no undo step) until its idle callback runs, so the next press must wait."""
        try:
            self.loop.wait()
        except DesktopError as exc:
            raise self._broken(f"{APP} stayed busy after a press: {exc}") from None

    def _await_solve(self, before: CalcView, baseline: frozenset[int]) -> None:
        """After ``result``: mate-calc solves in a thread, and a 50 ms timer shows the answer (or the error)
        and ends the solve; until then it ignores ``result`` and the answer would overwrite later presses."""
        if not before.display or before.is_result:
            return  # empty: nothing to solve; a result: '=' undoes to its expression, synchronously
        deadline = time.monotonic() + SOLVE_TIMEOUT
        if not before.status:
            while time.monotonic() < deadline:  # the answer or an error shows when the solve ends
                now = self.view()
                if now.is_result or now.display != before.display or now.status not in ("", "Calculating"):
                    return
                time.sleep(0.003)
        else:
            # The expression is unchanged since it gave this error (any edit clears the status), so it gives
            # the same error again and the window ends as it was ("Calculating" may show meanwhile). The end
            # of the solve is seen in the process instead: its solver thread exits, then the timer's next tick
            # (due within one tick) takes the answer; a main loop asleep after that has run it.
            while time.monotonic() < deadline:
                if not threads(self.app.pid, APP) - baseline:  # the solver thread (unnamed) has ended
                    time.sleep(ANSWER_TICK + 0.01)
                    self._await_idle()
                    if self.view().status != "Calculating":
                        return
                time.sleep(0.002)
        raise self._broken(f"{APP} was still calculating {before.display!r} after {SOLVE_TIMEOUT} s")

    # -------------------------------------------------------- the seam
    def _fresh_start(self, fresh: bool) -> None:
        """An empty display for a new game: ``clear`` in the running app, or a new app."""
        if fresh or self.app is None or self.app.poll() is not None or self.games >= RECYCLE_GAMES:
            self._launch()
        elif self.moves or not self.clean:
            self.press("clear")
            v = self.view()
            self.clean = False
            if v.display or v.status or v.bold:
                self._launch()
        self.moves, self.evaluated = [], ""
        self.games += 1

    def restart(self) -> CalcView:
        """A new app (an empty undo history) with an empty display."""
        self._fresh_start(fresh=True)
        return self.view()

    def new_game(self, game: Goal) -> CalcView:
        self._fresh_start(fresh=False)
        return self.view()

    def step(self, move: str) -> CalcView:
        if move == "undo" and not self.clean:
            # undo could reach the previous game's presses: go on in a new app that holds only this game's
            moves = list(self.moves)
            self._fresh_start(fresh=True)
            for m in moves:
                self.press(m)
        self.press(move)
        return self.view()

    def replay(self, game: Goal, moves: tuple[str, ...]) -> None:
        self._fresh_start(fresh="undo" in moves)
        for move in moves:
            self.press(move)

    def alive(self) -> bool:
        """The desktop and the app run and no move failed; else the pool drops this engine (closing its
        desktop) and the env brings its state to another one."""
        return not self.failed and self.session.alive() and self.app is not None and self.app.poll() is None

    def screenshot(self) -> bytes:
        """PNG bytes of the app window as it is now (after it has repainted)."""
        try:
            x, y, w, h = self.atspi.extents(self.window.frame)
        except AtspiError as exc:
            raise self._app_failure(exc) from None
        # GTK paints on its frame clock after the state changed: let the loop run that frame, then take the
        # picture once two grabs 50 ms apart agree.
        self._await_idle()
        time.sleep(0.05)
        self._await_idle()
        shot = self.session.screenshot((x, y, x + w, y + h))
        for _ in range(40):
            time.sleep(0.05)
            again = self.session.screenshot((x, y, x + w, y + h))
            if again == shot:
                break
            shot = again
        return shot

    def close(self) -> None:
        if self.atspi is not None:
            with contextlib.suppress(Exception):  # the bus may be gone
                self.atspi.close()
        self.session.close()
