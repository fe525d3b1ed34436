"""What the rule solvers share: the picture's shapes, the first move with a prefix, the next of a series of
moves, a click's name, the month names."""

from __future__ import annotations

import re
from collections.abc import Iterable

from s1gym.tasks.web.view import CLICK as _CLICK
from s1gym.tasks.web.view import PageView
from s1gym.tasks.web.view import need as _need

_SHAPE = re.compile(
    r'^- (?P<kind>\w+) "(?P<label>.*)" (?P<size>\d+)px at \((?P<x>-?\d+),(?P<y>-?\d+)\)(?: fill (?P<fill>\S+))?$', re.MULTILINE
)
#: The month names as the pages print them (the date pickers, the flight form).
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]


def shapes(v: PageView) -> list[dict]:
    """The picture's shapes: kind, label (text or colour), size and centre."""
    return [{**m.groupdict(), "size": int(m["size"]), "x": int(m["x"]), "y": int(m["y"])} for m in _SHAPE.finditer(v.page)]


def shape_move(v: PageView, s: dict) -> str:
    move = next((m for m in v.moves if m.startswith(f'click {s["kind"]} "{s["label"]}" at ({s["x"]},{s["y"]})')), None)
    return _need(move, f"click the {s['kind']} at ({s['x']},{s['y']})")


def first(v: PageView, prefix: str) -> str | None:
    return next((m for m in v.moves if m.startswith(prefix)), None)


def next_of(v: PageView, steps: Iterable[tuple[str | None, str]]) -> str | None:
    """The first move of ``steps`` (``(move, error)`` pairs, in the order they are played) not played yet;
    ``None`` once every one is. A step without a move raises ``LookupError(error)``, where the series gets
    to it (``steps`` may be a generator, read only that far)."""
    for move, error in steps:
        if move is None:
            raise LookupError(error)
        if not v.did(move):
            return move
    return None


def name_of(move: str) -> str:
    m = _CLICK.match(move)
    return m["name"] if m else ""


