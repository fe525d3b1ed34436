"""The calculator read as feature names, for Local's fitted model of s1/Calculator-v0.

Read off what a player sees: the goal line and the display (and whether it shows a result). The goal is
parsed as the env's own goals module reads it (:func:`s1gym.tasks.desktop.goals.parse`), giving the glyphs
that type it; per button, the names say whether it types the next glyph of the goal while the display is
on the way there, whether it is ``result`` once the display holds the whole expression, and, when the
display is off that way (a result, or other text), the button itself (so ``clear`` can learn to weigh).
"""

from __future__ import annotations

import re

from s1gym.core import Situation
from s1gym.tasks.desktop.goals import GLYPH_OF, GoalError, glyphs, parse

__all__ = ["button_tokens", "read_window"]

_GOAL = re.compile(r"^Goal: (.*)$", re.MULTILINE)
_DISPLAY = re.compile(r'^\s*edit bar \(the display\): "(.*?)"( \(bold: .*\))?$', re.MULTILINE)


def read_window(text: str) -> tuple[list[str] | None, str, bool] | None:
    """``(the goal's glyphs or None when unreadable, the display, it shows bold text: a result or the previous
    one)``; ``None`` when
    ``text`` is not a calculator window."""
    goal, display = _GOAL.search(text), _DISPLAY.search(text)
    if goal is None or display is None:
        return None
    try:
        typed = glyphs(parse(goal[1]))
    except GoalError:
        typed = None
    return typed, display[1], display[2] is not None


def button_tokens(situation: Situation) -> list[list[str]]:
    """Per button: ``b:<name>``, and ``next`` / ``complete`` / ``off|<name>`` / ``in_goal`` as the module
    docstring says; ``empty|<name>`` on an empty display."""
    read = read_window(situation.state_text or "")
    rows = []
    for c in situation.candidates:
        b = c.text
        row = [f"b:{b}"]
        if read is not None:
            typed, display, bold = read
            glyph = GLYPH_OF.get(b)
            if not display:
                row.append(f"empty|{b}")
            if typed is not None:
                whole = "".join(typed)
                on_way = not bold and whole.startswith(display)
                if on_way and len(display) < len(whole) and glyph is not None and whole[len(display):].startswith(glyph):
                    row.append("next")
                if on_way and display == whole and b == "result":
                    row.append("complete")
                if not on_way:
                    row.append(f"off|{b}")
                if glyph is not None and glyph in typed:
                    row.append("in_goal")
        rows.append(row)
    return rows
