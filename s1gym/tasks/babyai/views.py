"""The replay's view of a BabyAI game (declared as ``Task.view`` in :mod:`.family`): the map of the grid as
the player has seen it, drawn for every position of a replay.

An episode file holds the text the player saw at every tick, not minigrid's grid, so the map is rebuilt
from those texts the way a player who counts their own steps would draw it: the agent starts at cell
(0, 0) facing up (the map is in the agent's starting frame, not minigrid's), every ``turn left``/``turn
right`` turns it and every ``move forward`` moves it one cell (the env offers only moves that change
something, so a move forward always moves). Each text places every object seen so far, in view or
remembered ("a closed red door 2 steps ahead, 1 to the left"), relative to the agent; the ``Walls:``
line places the nearest wall ahead, to the left and to the right; walls never move, so the walls found
along the way are kept. The view::

    {"kind": "babyai", "x0": -3, "y0": -5, "width": 8, "height": 9,
     "agent": [0, -2, "up"], "carrying": "yellow key",
     "objects": [[-1, -3, "door", "yellow", "open"], [1, 0, "box", "red", ""], ...],   # x, y, type, colour, state
     "walls": [[-3, -2], ...], "trail": [[0, 0], [0, -1], ...],   # cells the agent stood on
     "mission": "pick up the red box", "parts": "", "note": "You move forward."}

``x`` grows to the right and ``y`` downwards (screen order); ``x0``/``y0``/``width``/``height`` bound
every cell known so far. :data:`SCRIPT` and :data:`STYLE` name the files beside this module that draw it
as an SVG grid (``window.S1Views.babyai``). A text that does not read as a BabyAI view gives ``None`` (the
replay shows the transcript there).
"""

from __future__ import annotations

import re
from typing import Any

from s1gym.core.position import Position
from s1gym.tasks.babyai.tokens import read_view

__all__ = ["SCRIPT", "STYLE", "view_babyai"]

#: The page's drawer of this view (it registers ``window.S1Views.babyai``).
SCRIPT = "views.js"
#: Its style.
STYLE = "views.css"

_WALLS = re.compile(r"^Walls: ahead (?:(\d+) steps? away|none in view), left (?:(\d+) steps? away|none in view), "
                    r"right (?:(\d+) steps? away|none in view)\.$", re.MULTILINE)
_PARTS_LINE = re.compile(r"^(Parts of the mission done: .*)$", re.MULTILINE)
#: facing -> (dx, dy) in screen order (y down)
_HEADINGS = {"up": (0, -1), "right": (1, 0), "down": (0, 1), "left": (-1, 0)}
_ORDER = ("up", "right", "down", "left")


def _turned(facing: str, way: int) -> str:
    return _ORDER[(_ORDER.index(facing) + way) % 4]


def _cell(x: int, y: int, facing: str, ahead: int, right: int) -> tuple[int, int]:
    fx, fy = _HEADINGS[facing]
    rx, ry = -fy, fx  # the agent's right: its heading turned clockwise
    return x + ahead * fx + right * rx, y + ahead * fy + right * ry


def view_babyai(pos: Position, memory: dict[str, Any]) -> dict[str, Any] | None:
    """The map at ``pos`` (see the module doc); ``memory`` carries the agent's pose, its trail and the walls
    found between the positions of one episode (``memory["last_move"]``: the move played before ``pos``)."""
    seen = read_view(pos.state)
    walls_line = _WALLS.search(pos.state)
    if seen is None or walls_line is None:
        return None
    x, y, facing = memory.get("babyai_pose", (0, 0, "up"))
    trail: list[tuple[int, int]] = memory.setdefault("babyai_trail", [(0, 0)])
    walls: set[tuple[int, int]] = memory.setdefault("babyai_walls", set())
    if pos.t > 0 and memory.get("babyai_t") == pos.t - 1:  # apply the move played since the last position
        move = memory.get("last_move")
        if move == "turn left":
            facing = _turned(facing, -1)
        elif move == "turn right":
            facing = _turned(facing, 1)
        elif move == "move forward":
            x, y = _cell(x, y, facing, 1, 0)
            if (x, y) not in trail:
                trail.append((x, y))
    memory["babyai_pose"], memory["babyai_t"] = (x, y, facing), pos.t
    ahead, left, right = (None if g is None else int(g) for g in walls_line.groups())
    for k, (a, r) in ((ahead, (1, 0)), (left, (0, -1)), (right, (0, 1))):
        if k is not None:
            walls.add(_cell(x, y, facing, k * a, k * r))
    objects = []
    for s in seen.seen:
        ox, oy = _cell(x, y, facing, s.ahead, s.right)
        objects.append([ox, oy, s.kind, s.color, s.state])
    objects.sort()
    cells = [(x, y), *trail, *walls, *((o[0], o[1]) for o in objects)]
    x0, y0 = min(c[0] for c in cells), min(c[1] for c in cells)
    parts = _PARTS_LINE.search(pos.state)
    note = pos.state.split("\n\n", 1)[0] if not pos.state.startswith("Level:") else ""
    return {
        "kind": "babyai",
        "x0": x0,
        "y0": y0,
        "width": max(c[0] for c in cells) - x0 + 1,
        "height": max(c[1] for c in cells) - y0 + 1,
        "agent": [x, y, facing],
        "carrying": "" if seen.carrying == "nothing" else seen.carrying,
        "objects": objects,
        "walls": sorted([list(w) for w in walls]),
        "trail": [list(c) for c in trail],
        "mission": seen.mission,
        "parts": parts[1] if parts else "",
        "note": note,
    }
