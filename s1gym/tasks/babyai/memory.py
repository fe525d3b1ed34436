"""What the agent has seen so far: the cells it has looked at and the objects it saw there, kept in the
world's coordinates and written relative to where the agent is now (what a player who remembers what they
saw, and counts their own steps, knows).

minigrid's view is only the 7x7 square ahead; a policy reading it alone forgets the key it turned away
from. :class:`Memory` is updated after every step from the same view (:meth:`Memory.look`) and
:func:`remembered_lines` writes the objects out of view as "a green key 2 steps behind, 3 to the left".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from s1gym.tasks.babyai.view import object_name

__all__ = ["Memory"]


class Memory:
    """The cells seen (a bool array over the grid) and the object last seen in each (its name)."""

    def __init__(self, width: int, height: int) -> None:
        self.seen = np.zeros((width, height), dtype=bool)
        self.objects: dict[tuple[int, int], str] = {}

    def copy(self) -> Memory:
        new = object.__new__(Memory)
        new.seen = self.seen.copy()
        new.objects = dict(self.objects)
        return new

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
            out.append((name, int(d @ f_vec), int(d @ r_vec)))
        out.sort(key=lambda t: (abs(t[1]) + abs(t[2]), -t[1], t[2], t[0]))
        return out
