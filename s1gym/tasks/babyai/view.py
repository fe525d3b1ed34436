"""The text view of a BabyAI world: what the agent sees, written for a reader (minigrid has no text view).

The agent sees a 7x7 square ahead of it (walls and closed doors hide what is behind them). The view
names the mission, every object in sight with its colour (doors with their state: locked, closed or open)
and where it is relative to the agent in steps ("2 steps ahead, 1 to the left"), what is right in front,
how far the nearest wall is straight ahead, to the left and to the right, and what the agent carries; the
env adds the objects seen before and out of view now, from where the agent stands (:mod:`.memory`)::

    Mission: pick up the blue key
    In view:
    - a blue key 2 steps ahead, 1 to the left (3 moves away, first move forward)
    - a closed red door 3 steps ahead, 3 to the right (6 moves away, first move forward)
    Seen before, out of view now:
    - a grey ball 2 steps behind, 1 to the right (4 moves away, first turn right)
    Cells seen so far: 31.
    Nearest unseen cell: 2 moves away, first move forward.
    In front of you: nothing (the cell is free).
    Walls: ahead 4 steps away, left 2 steps away, right none in view.
    You carry nothing.

A position reads "F steps ahead, S to the left/right": F cells forward, then S cells sideways (F = 0: in
the agent's row). With a memory, each object's note counts the moves to stand facing it by the shortest way
over the cells seen and names the first (:meth:`.memory.Memory.walk`), "Nearest unseen cell" does the same
for the nearest cell not seen yet, and a mission that places objects from the start ("the key on your
left") adds where each object lay seen from there ("; at the start: behind, on your left"). :func:`describe_world` writes it; :func:`objects_in_view` gives the same facts as tuples
(what the fitted model's reader and the replay's view parse back from the text).
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["MISSION_PLACES", "Seen", "describe_world", "object_name", "objects_in_view", "place"]

#: how a mission places an object from the agent's start (minigrid's ``ObjDesc.loc``)
MISSION_PLACES = ("in front of you", "behind you", "on your left", "on your right")


class Seen(NamedTuple):
    """One object in view: its name ("closed red door"), steps ahead, steps to the right (left < 0)."""

    name: str
    ahead: int
    right: int


def object_name(obj: Any) -> str:
    """``"red ball"``; doors with their state: ``"locked yellow door"``, ``"closed red door"``, ``"open ..."``."""
    if obj.type == "door":
        state = "open" if obj.is_open else "locked" if obj.is_locked else "closed"
        return f"{state} {obj.color} door"
    return f"{obj.color} {obj.type}"


def _article(name: str) -> str:
    return ("an " if name[0] in "aeiou" else "a ") + name


def place(ahead: int, right: int) -> str:
    """``"2 steps ahead, 1 to the left"``; ``"1 step ahead"``; ``"in your row, 2 to the right"``; ``"3 steps
    behind, 1 to the right"`` (a remembered object)."""
    parts = []
    if ahead:
        way = "ahead" if ahead > 0 else "behind"
        parts.append(f"{abs(ahead)} step{'s' if abs(ahead) != 1 else ''} {way}")
    else:
        parts.append("in your row")
    if right:
        parts.append(f"{abs(right)} to the {'right' if right > 0 else 'left'}")
    return ", ".join(parts)


def _view(world: Any) -> tuple[Any, Any, int]:
    grid, vis = world.gen_obs_grid()
    return grid, vis, world.agent_view_size


def objects_in_view(world: Any, seen: tuple[Any, Any, int] | None = None) -> list[Seen]:
    """The objects the agent sees (not walls, not what it carries), nearest first (``seen``: the agent's
    view, ``gen_obs_grid``'s grid and mask with the view's size, when already computed)."""
    grid, vis, size = seen or _view(world)
    me_i, me_j = size // 2, size - 1
    out = []
    for j in range(size):
        for i in range(size):
            if (i, j) == (me_i, me_j) or not vis[i, j]:
                continue
            obj = grid.get(i, j)
            if obj is None or obj.type == "wall":
                continue
            out.append(Seen(object_name(obj), me_j - j, i - me_i))
    out.sort(key=lambda s: (s.ahead + abs(s.right), s.ahead, s.right, s.name))
    return out


def _wall_distances(seen: tuple[Any, Any, int]) -> tuple[int | None, int | None, int | None]:
    """Steps to the nearest wall straight ahead, left and right within view (``None``: none in view)."""
    grid, vis, size = seen
    me_i, me_j = size // 2, size - 1

    def first_wall(cells: list[tuple[int, int]]) -> int | None:
        for k, (i, j) in enumerate(cells, start=1):
            if not vis[i, j]:
                return None
            obj = grid.get(i, j)
            if obj is not None and obj.type == "wall":
                return k
        return None

    ahead = first_wall([(me_i, me_j - k) for k in range(1, size)])
    left = first_wall([(me_i - k, me_j) for k in range(1, me_i + 1)])
    right = first_wall([(me_i + k, me_j) for k in range(1, size - me_i)])
    return ahead, left, right


def _distance(k: int | None) -> str:
    return "none in view" if k is None else f"{k} step{'s' if k != 1 else ''} away"


def describe_world(world: Any, memory: Any = None, view: tuple[Any, Any, int] | None = None) -> str:
    """The text view (see the module docstring); with ``memory`` (a :class:`.memory.Memory`), also the
    objects seen before and out of view now, and how many cells have been seen (``view``: the agent's view
    when already computed)."""
    lines = [f"Mission: {world.mission}"]
    view = view or _view(world)
    seen = objects_in_view(world, view)
    walk = memory.walk(world) if memory is not None else None
    located = any(f" {phrase}" in str(world.mission) for phrase in MISSION_PLACES)

    def notes(ahead: int, right: int) -> str:
        """`` (9 moves away, first turn left; at the start: behind, on your left)`` (with a memory)."""
        if walk is None:
            return ""
        (fx, fy), (rx, ry) = world.dir_vec, world.right_vec
        x = int(world.agent_pos[0] + fx * ahead + rx * right)
        y = int(world.agent_pos[1] + fy * ahead + ry * right)
        way = walk.to_face(x, y)
        text = "no known way" if way is None else (
            f"{way[0]} move{'s' if way[0] != 1 else ''} away" + (f", first {way[1]}" if way[0] else ""))
        if located:
            places = memory.start_places(x, y)
            text += "; at the start: " + (", ".join(places) if places else "another room")
        return f" ({text})"

    if seen:
        lines.append("In view:")
        lines.extend(f"- {_article(s.name)} {place(s.ahead, s.right)}{notes(s.ahead, s.right)}" for s in seen)
    else:
        lines.append("In view: no objects.")
    if memory is not None:
        away = memory.out_of_view(world, view)
        if away:
            lines.append("Seen before, out of view now:")
            lines.extend(f"- {_article(name)} {place(ahead, right)}{notes(ahead, right)}" for name, ahead, right in away)
        lines.append(f"Cells seen so far: {int(memory.seen.sum())}.")
        unseen = memory.frontier(walk)
        lines.append("Nearest unseen cell: " + ("none within reach." if unseen is None else
                     f"{unseen[0]} move{'s' if unseen[0] != 1 else ''} away"
                     + (f", first {unseen[1]}." if unseen[0] else ".")))
    front = world.grid.get(*world.front_pos)
    if front is None:
        lines.append("In front of you: nothing (the cell is free).")
    elif front.type == "wall":
        lines.append("In front of you: a wall.")
    else:
        lines.append(f"In front of you: {_article(object_name(front))}.")
    ahead, left, right = _wall_distances(view)
    lines.append(f"Walls: ahead {_distance(ahead)}, left {_distance(left)}, right {_distance(right)}.")
    carrying = world.carrying
    lines.append("You carry nothing." if carrying is None else f"You carry {_article(object_name(carrying))}.")
    return "\n".join(lines)
