"""The replay's view of Race (declared as ``Task.view`` in :mod:`s1race.family`): the track from 0 to the
goal with who added each step so far, what the last moves brought and, at the end, the result.

``s1 replay`` calls :func:`view_race` once per position of an episode, in order, with the position (its
``state`` is the observation the player saw, without the ``Moves:`` paragraph) and a dict the replay keeps
for the episode (here: the steps read so far, since each observation tells only its own last moves); it
returns the view, a JSON-able dict whose ``"kind"`` names the drawer, or ``None`` when the text does not
parse (the page then shows the transcript there). :data:`SCRIPT` and :data:`STYLE` name the files beside
this module that draw the view in the page (``window.S1Views.race``); the page inlines them when it shows a
Race trial.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from s1gym.core.position import Position

__all__ = ["SCRIPT", "STYLE", "view_race"]

#: The drawer of the view (it registers ``window.S1Views.race``).
SCRIPT = "views.js"
#: Its style.
STYLE = "views.css"

_RULES = re.compile(r"^Race to (\d+) against the house\.", re.MULTILINE)
_TOTAL = re.compile(r"^Total: (\d+) of \d+ \(\d+ to go\)\.$", re.MULTILINE)
_RESULT = re.compile(r"^(You|The house) reach(?:es)? (\d+): (?:you win|the house wins)\.$", re.MULTILINE)
_ADDS = re.compile(r"(You|The house) adds? ([123]): total \d+\.")


def view_race(pos: Position, memory: dict[str, Any]) -> dict[str, Any] | None:
    """The view of a Race position (see the module doc), or ``None`` when its text is not Race's."""
    rules = _RULES.search(pos.state)
    total, result = _TOTAL.search(pos.state), _RESULT.search(pos.state)
    if rules is None or (total is None and result is None):
        return None
    said = [p for p in pos.state.split("\n\n") if not p.startswith("Race to ")]
    new = [["you" if who == "You" else "house", int(k)] for who, k in _ADDS.findall("\n".join(said))]
    steps = memory.setdefault("race_steps", [])
    steps.extend(new)
    return {
        "kind": "race",
        "goal": int(rules[1]),
        "total": int(total[1]) if total else int(result[2]),
        "steps": [list(s) for s in steps],
        "last": len(new),
        "said": "\n".join(said),
        "result": ("won" if result[1] == "You" else "lost") if result else "",
    }
