"""What the agent has seen so far: the cells it has looked at and the objects it saw there, kept in the
world's coordinates and written relative to where the agent is now (what a player who remembers what they
saw, and counts their own steps, knows).

minigrid's view is only the 7x7 square ahead; a policy reading it alone forgets the key it turned away
from. :class:`Memory` is updated after every step from the same view (:meth:`Memory.look`); the text view
writes the objects out of view as "a green key 2 steps behind, 3 to the left", with the moves to reach each
by the shortest way over the cells seen (:meth:`Memory.walk`, :class:`Walk`), the nearest cell not seen yet
(:meth:`Memory.frontier`) and where an object lay seen from the agent's start (:meth:`Memory.start_places`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from s1gym.tasks.babyai.view import object_name

__all__ = ["LOCATIONS", "Memory", "Walk"]

#: minigrid's headings (``agent_dir`` 0-3) as cell steps
_HEADINGS = ((1, 0), (0, 1), (-1, 0), (0, -1))
#: the start-relative places a mission may name, as minigrid's verifier tests them
LOCATIONS = ("in front", "behind", "on your left", "on your right")


class Walk:
    """The moves needed to reach every pose (cell and heading) over the cells seen so far, from the agent's
    pose: turns and forward moves cost one each, a closed door (or a locked one whose key the agent carries)
    one more (opening it), a key, ball or box :data:`MOVE_AWAY` (picking it up, with empty hands, to clear
    the way: a detour is nearly always shorter); unseen cells, walls, other locked doors and, with full hands,
    objects block. ``first`` is the move that starts a shortest way (one of :data:`MOVES`)."""

    MOVES = ("turn left", "turn right", "move forward", "toggle", "pick up")
    #: what passing a key, ball or box costs (the agent must pick it up and put it somewhere else)
    MOVE_AWAY = 12

    def __init__(self, width: int, height: int, cost: list[int], x: int, y: int, d: int) -> None:
        self.width, self.height = width, height
        n = width * height * 4
        dist = [-1] * n
        first = [-1] * n
        start = (x * height + y) * 4 + d
        dist[start] = 0
        buckets: list[list[int]] = [[start]]
        k = 0
        while k < len(buckets):
            for s in buckets[k]:
                if dist[s] != k:
                    continue
                cell, h = divmod(s, 4)
                cx, cy = divmod(cell, height)
                f = first[s]
                steps = [(cell * 4 + (h - 1) % 4, 1, 0), (cell * 4 + (h + 1) % 4, 1, 1)]
                dx, dy = _HEADINGS[h]
                nx, ny = cx + dx, cy + dy
                if 0 <= nx < width and 0 <= ny < height:
                    c = cost[nx * height + ny]
                    if c:
                        steps.append(((nx * height + ny) * 4 + h, c, 2 if c == 1 else 3 if c == 2 else 4))
                for t, c, move in steps:
                    nd = k + c
                    if dist[t] == -1 or nd < dist[t]:
                        dist[t] = nd
                        first[t] = move if f == -1 else f
                        while len(buckets) <= nd:
                            buckets.append([])
                        buckets[nd].append(t)
            k += 1
        self.dist, self.first = dist, first

    def to_face(self, x: int, y: int) -> tuple[int, str] | None:
        """The fewest moves to stand next to cell (x, y) facing it, and the first of them (``None``: no
        known way; 0 moves: it is in front)."""
        best: tuple[int, int] | None = None
        for h, (dx, dy) in enumerate(_HEADINGS):
            nx, ny = x - dx, y - dy
            if 0 <= nx < self.width and 0 <= ny < self.height:
                s = (nx * self.height + ny) * 4 + h
                if self.dist[s] >= 0 and (best is None or self.dist[s] < best[0]):
                    best = (self.dist[s], self.first[s])
        if best is None:
            return None
        return best[0], "" if best[1] < 0 else self.MOVES[best[1]]


class Memory:
    """The cells seen (a bool array over the grid) and the object last seen in each (its name)."""

    def __init__(self, width: int, height: int) -> None:
        self.seen = np.zeros((width, height), dtype=bool)
        self.objects: dict[tuple[int, int], str] = {}
        #: where the agent started: its cell, its heading and its room's bounds (x0, y0, x1, y1), which a
        #: mission's "in front of you" / "on your left" refer to (:meth:`start_places`)
        self.origin: tuple[tuple[int, int], int, tuple[int, int, int, int]] | None = None

    def copy(self) -> Memory:
        new = object.__new__(Memory)
        new.seen = self.seen.copy()
        new.objects = dict(self.objects)
        new.origin = self.origin
        return new

    def set_origin(self, world: Any) -> None:
        """Record the agent's start (cell, heading, room) in ``world`` (a BabyAI level at its reset)."""
        x, y = (int(v) for v in world.agent_pos)
        room = world.room_from_pos(x, y) if hasattr(world, "room_from_pos") else None
        bounds = (0, 0, self.seen.shape[0], self.seen.shape[1]) if room is None else (
            room.top[0], room.top[1], room.top[0] + room.size[0], room.top[1] + room.size[1])
        self.origin = ((x, y), int(world.agent_dir), bounds)

    def start_places(self, x: int, y: int) -> list[str]:
        """Where cell (x, y) lies seen from the agent's start, as minigrid's missions say it ("in front",
        "behind", "on your left", "on your right"; several or none): only cells of the start room have one."""
        if self.origin is None:
            return []
        (sx, sy), d, (x0, y0, x1, y1) = self.origin
        if not (x0 <= x < x1 and y0 <= y < y1):
            return []
        fx, fy = _HEADINGS[d]
        vx, vy = x - sx, y - sy
        ahead, right = vx * fx + vy * fy, -vx * fy + vy * fx
        out = []
        if ahead > 0:
            out.append("in front")
        if ahead < 0:
            out.append("behind")
        if right < 0:
            out.append("on your left")
        if right > 0:
            out.append("on your right")
        return out

    def walk(self, world: Any) -> Walk:
        """The shortest ways from the agent's pose over the cells seen (:class:`Walk`): walls are read off the
        world's grid at seen cells only (they never move), everything else from what was seen there."""
        width, height = self.seen.shape
        cells = world.grid.grid  # row-major: index y * width + x
        carried = world.carrying
        key_colour = carried.color if carried is not None and carried.type == "key" else None
        cost = [0] * (width * height)
        seen = self.seen
        for x in range(width):
            col = seen[x]
            for y in range(height):
                if not col[y]:
                    continue
                name = self.objects.get((x, y))
                if name is None:
                    obj = cells[y * width + x]
                    cost[x * height + y] = 0 if obj is not None and obj.type == "wall" else 1
                elif not name.endswith(" door"):
                    cost[x * height + y] = 0 if carried is not None else Walk.MOVE_AWAY
                else:
                    state, colour = name.split(" ")[:2]
                    cost[x * height + y] = (1 if state == "open" else 2 if state == "closed"
                                            else 2 if colour == key_colour else 0)
        ax, ay = (int(v) for v in world.agent_pos)
        cost[ax * height + ay] = 1
        return Walk(width, height, cost, ax, ay, int(world.agent_dir))

    def frontier(self, walk: Walk) -> tuple[int, str] | None:
        """The fewest moves to face a cell not seen yet (inside the grid), and the first of them (``None``:
        none reachable over the cells seen)."""
        width, height = self.seen.shape
        best: tuple[int, int] | None = None
        dist, first = walk.dist, walk.first
        seen = self.seen
        for s, k in enumerate(dist):
            if k < 0 or (best is not None and k >= best[0]):
                continue
            cell, h = divmod(s, 4)
            x, y = divmod(cell, height)
            dx, dy = _HEADINGS[h]
            nx, ny = x + dx, y + dy
            if 0 <= nx < width and 0 <= ny < height and not seen[nx, ny]:
                best = (k, first[s])
        if best is None:
            return None
        return best[0], "" if best[1] < 0 else Walk.MOVES[best[1]]

    def look(self, world: Any, view: tuple[Any, Any, int]) -> None:
        """Record what the agent sees now (``view``: ``gen_obs_grid``'s grid and mask, and the view size)."""
        grid, vis, size = view
        pos = np.asarray(world.agent_pos)
        f_vec, r_vec = np.asarray(world.dir_vec), np.asarray(world.right_vec)
        top_left = pos + f_vec * (size - 1) - r_vec * (size // 2)
        for i, j in zip(*np.nonzero(vis), strict=True):
            x, y = top_left - f_vec * j + r_vec * i
            if not (0 <= x < self.seen.shape[0] and 0 <= y < self.seen.shape[1]):
                continue
            self.seen[x, y] = True
            if (i, j) == (size // 2, size - 1):
                continue  # the agent's own cell (its view puts what it carries there)
            obj = grid.get(int(i), int(j))
            if obj is None or obj.type == "wall":
                self.objects.pop((int(x), int(y)), None)
            else:
                self.objects[(int(x), int(y))] = object_name(obj)

    def out_of_view(self, world: Any, view: tuple[Any, Any, int]) -> list[tuple[str, int, int]]:
        """The remembered objects not in view now: ``(name, ahead, right)`` relative to the agent (ahead < 0:
        behind), nearest first."""
        return [(name, ahead, right) for name, ahead, right, _x, _y in self.out_of_view_cells(world, view)]

    def out_of_view_cells(self, world: Any, view: tuple[Any, Any, int]) -> list[tuple[str, int, int, int, int]]:
        """:meth:`out_of_view` with each object's cell: ``(name, ahead, right, x, y)``."""
        _grid, vis, size = view
        pos = np.asarray(world.agent_pos)
        f_vec, r_vec = np.asarray(world.dir_vec), np.asarray(world.right_vec)
        top_left = pos + f_vec * (size - 1) - r_vec * (size // 2)
        visible = set()
        for i, j in zip(*np.nonzero(vis), strict=True):
            x, y = top_left - f_vec * j + r_vec * i
            visible.add((int(x), int(y)))
        out = []
        for (x, y), name in self.objects.items():
            if (x, y) in visible:
                continue
            d = np.array([x, y]) - pos
            out.append((name, int(d @ f_vec), int(d @ r_vec), x, y))
        out.sort(key=lambda t: (abs(t[1]) + abs(t[2]), -t[1], t[2], t[0]))
        return out
