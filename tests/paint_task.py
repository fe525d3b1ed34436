"""A tiny task with ``env.screenshot()``, as the web and desktop tasks have: for ``--frames`` and replay tests.

``PaintEnv`` paints a 4x4 grid of cells: ``paint N`` colours cell N, and the
game is won when ``target`` cells are painted. ``screenshot()`` draws the grid
with Pillow (painted cells red, the rest white) and returns PNG bytes, so a
test can read the state back from the picture.
"""

from __future__ import annotations

import io
from typing import Any, ClassVar

import gymnasium as gym

from s1gym.core import Progress, S1Env

TASK = "paint_task:s1test/Paint-v0"
CELL = 24
PAINTED = (220, 40, 40)


class PaintEnv(S1Env):
    task_name = "Paint"
    default_max_candidates = 16
    default_max_steps = 10
    option_help: ClassVar[dict[str, str]] = {"target": "cells to paint to win"}

    def __init__(self, target: int = 3, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target = target
        self.painted: frozenset[int] = frozenset()
        self.screenshots = 0

    def _new_game(self, seed, options):
        self.painted = frozenset()
        return "Paint the grid."

    def _legal_moves(self):
        return [f"paint {i}" for i in range(16) if i not in self.painted]

    def _play(self, move):
        self.painted = self.painted | {int(move.split()[1])}
        return f"You {move}."

    def _describe(self):
        return f"Painted: {sorted(self.painted)} of {self.target} needed."

    def _progress(self):
        return Progress(min(1.0, len(self.painted) / self.target), won=len(self.painted) >= self.target)

    def _fork_into(self, clone):
        pass

    def screenshot(self) -> bytes:
        from PIL import Image, ImageDraw

        self.screenshots += 1
        im = Image.new("RGB", (4 * CELL, 4 * CELL), "white")
        draw = ImageDraw.Draw(im)
        for i in range(16):
            x, y = (i % 4) * CELL, (i // 4) * CELL
            draw.rectangle([x, y, x + CELL - 1, y + CELL - 1], fill=PAINTED if i in self.painted else "white", outline="black")
        buf = io.BytesIO()
        im.save(buf, format="PNG")
        return buf.getvalue()


def painted_cells(png: bytes) -> set[int]:
    """The cells a screenshot shows painted (read from the picture's pixels)."""
    from PIL import Image

    im = Image.open(io.BytesIO(png)).convert("RGB")
    return {i for i in range(16) if im.getpixel(((i % 4) * CELL + CELL // 2, (i // 4) * CELL + CELL // 2)) == PAINTED}


if "s1test/Paint-v0" not in gym.registry:
    gym.register("s1test/Paint-v0", entry_point=PaintEnv, order_enforce=False, disable_env_checker=True)
