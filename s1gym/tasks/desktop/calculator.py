"""s1/Calculator-v0: a real calculator window on Linux, read and pressed through its accessibility tree.

The app is MATE's calculator (``mate-calc``, GTK 3) in Basic mode, on a private headless desktop
(:mod:`.session`: Xvfb, a session D-Bus and the AT-SPI bus, one process group). The
env reads the window's accessibility tree and presses its buttons over D-Bus
(:mod:`.atspi`); nothing is simulated.

Episode: a goal (``"compute 12 times 7"``; the ``goal`` option or ``reset(options={"goal": ...})``,
else drawn for ``reset(seed)`` by :func:`s1gym.tasks.desktop.goals.generate`). The episode is
won (score 1, terminated) when ``=`` computed the goal: the expression it evaluated has the goal's
numbers and operations (:func:`~s1gym.tasks.desktop.goals.computes`; typing the answer and
pressing ``=`` is not a win) and the display shows the expected value as a result (mate-calc shows a
result in bold: the text attributes say so); else it runs to ``max_steps`` (score 0).

Observation: the goal and a text view of the window's tree: the display (role *edit bar*) and
whether it shows a result, the status line (errors such as "Malformed expression"), and the push
buttons row by row with their names and tooltips. Moves are the buttons' accessible names
(``7``, ``multiply``, ``result``, ...); the 23 buttons of Basic mode are fixed action slots and the
mask marks the sensitive, showing ones.

Engine: :mod:`.engine` (:class:`~.engine.CalculatorEngine`: the app on the engine seam, how a press
settles, how games reuse an app, what a crash does).

``env.screenshot()`` gives PNG bytes of the app window at the env's state (for replay pages).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from s1gym.core import BASE_CHARSET, Progress, charset_for
from s1gym.engines.base import EngineEnv
from s1gym.tasks.desktop import goals
from s1gym.tasks.desktop.engine import APP, SLOTS, CalcView, CalculatorCrashed, CalculatorEngine, unavailable
from s1gym.tasks.desktop.goals import Goal, GoalError
from s1gym.tasks.desktop.session import DesktopUnavailable

__all__ = [
    "SLOTS",
    "CalcView",
    "CalculatorCrashed",
    "CalculatorEngine",
    "CalculatorEnv",
    "GoalError",
    "unavailable",
]

#: Characters the display and status may show beyond ASCII; anything else is written as <U+XXXX>.
CHARSET = charset_for(["×÷−√²%⁰¹²³⁴⁵⁶⁷⁸⁹⁻…"])


class CalculatorEnv(EngineEnv):
    """s1/Calculator-v0 (see the module docstring)."""

    task_name = "Calculator"
    default_max_candidates = len(SLOTS)
    default_max_steps = 30
    engine_capacity = 8
    close_engines_with_last_env = True  # a desktop per engine: closing the env and its forks ends them
    option_help: ClassVar[Mapping[str, str]] = {
        "goal": "what to compute, e.g. 'compute 12 times 7' (default: a goal drawn for each reset seed)",
        "expect": "the value the display must show after '=' (default: computed from the goal)",
        "max_steps": "button presses per episode (truncation), default 30",
    }

    def __init__(self, *, goal: str | None = None, expect: str | None = None, **kwargs: Any) -> None:
        reason = unavailable()
        if reason:
            raise DesktopUnavailable(reason)
        super().__init__(action_slots=SLOTS, charset=CHARSET, **kwargs)
        self._goal_option = None if goal is None else goals.goal_from(goal, expect)
        if goal is None and expect is not None:
            raise GoalError("expect= needs goal= (the generated goals compute their own answers)")
        self.goal: Goal | None = None
        self.view: CalcView | None = None
        self._layout: tuple[tuple[tuple[str, str], ...], ...] = ()

    # the engine seam's hooks
    def _open_engine(self) -> CalculatorEngine:
        return CalculatorEngine()

    def _choose_game(self, seed: int | None, options: dict[str, Any]) -> Goal:
        if "goal" in options:
            return goals.goal_from(options["goal"], options.get("expect"))
        return self._goal_option or goals.generate(self.np_random)

    def _on_start(self, raw: CalcView) -> str:
        self.goal = self.game_state.game
        self.view = raw
        window = self.game_state.engine.window
        self._layout = tuple(tuple((name, window.buttons[name][1]) for name in row) for row in window.rows)
        return f"A calculator window is open. Goal: {self.goal.text}"

    def _on_step(self, move: str, raw: CalcView) -> str:
        self.view = raw
        return f"You press {move}."

    # the game as every S1Env describes it
    def _legal_moves(self) -> list[str]:
        return [m for m in SLOTS if m in self.view.sensitive]

    def _describe(self) -> str:
        v = self.view
        display = f'"{_printable(v.display)}"'
        if v.is_result:
            display += " (bold: a result)"
        elif v.bold:
            display += (
                " (bold: the previous result "
                + ", ".join(f'"{_printable(v.display[a:b])}"' for a, b in v.bold)
                + ")"
            )
        lines = [
            f"Goal: {self.goal.text}",
            "",
            f"Calculator window ({APP}), its accessibility tree:",
            f"  edit bar (the display): {display}",
            f'  text (the status line): "{_printable(v.status)}"',
            "  push buttons, row by row:",
        ]
        for row in self._layout:
            cells = []
            for name, description in row:
                cell = f"{name}: {description}" if description else name
                cells.append(cell if name in v.sensitive else f"{cell} (insensitive)")
            lines.append("    " + " | ".join(cells))
        return "\n".join(lines)

    def _progress(self) -> Progress:
        v = self.view
        won = v.is_result and goals.same_value(v.display, self.goal.expect) and goals.computes(v.expression, self.goal)
        return Progress(1.0 if won else 0.0, won=won)

    def _extra_info(self) -> dict[str, Any]:
        return {"display": self.view.display}

    def expert_action(self) -> str:
        """Type the goal's expression and press ``result``, after ``clear`` when the display holds anything
        else (a result, or text that is not the start of the expression)."""
        plan = goals.plan(goals.parse(self.goal.text))
        typed = [goals.GLYPH_OF[b] for b in plan[:-1]]
        v = self.view
        if v.bold:
            return "clear"
        for i in range(len(typed), -1, -1):
            if v.display == "".join(typed[:i]):
                return plan[i]
        return "clear"

    def screenshot(self) -> bytes:
        """PNG bytes of the calculator window at this env's state (for replay pages)."""
        return self.engine().screenshot()


def _printable(text: str) -> str:
    return "".join(ch if ch in CHARSET else f"<U+{ord(ch):04X}>" for ch in text)


assert BASE_CHARSET <= CHARSET
