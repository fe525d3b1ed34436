"""What a web page's picture, colours and draggable lists say against the instruction (for the web model's
features, :mod:`s1gym.tasks.web.relations`).

:func:`picture_tokens`: a colour code's colour family named by the instruction (``col:hit``); a clicked
shape that fits the instruction's description (size, colour, kind or the text it shows: ``pic:fits``); the
grid point the instruction names (``pic:coord_hit``); a button whose number is how many shapes fit
(``pic:count_hit``) or whose word names the one shape's kind (``pic:kind_hit``). :func:`drag_tokens`:
where a drag puts a list item (the asked place, one step in the asked direction on a square grid, the
asked cell, a list of numbers that ends more sorted) or a shape (already in the box, the box on the side
the instruction names first or second, for a shape it describes or any other).

Only what the page prints is read: the ``Picture`` lines, the list items and the moves.
"""

from __future__ import annotations

import colorsys
import math
import re

__all__ = ["ORDER", "as_number", "colour_family", "drag_tokens", "fits", "picture_tokens", "read_shapes"]

_SHAPE = re.compile(r'^- (?P<kind>\w+) "(?P<label>.*)" (?P<size>\d+)px at \((?P<x>-?\d+),(?P<y>-?\d+)\)'
                    r'(?: fill (?P<fill>\S+))?$', re.MULTILINE)
_AT = re.compile(r"(?:^|\s)at \((?P<x>-?\d+),(?P<y>-?\d+)\)$")
_DRAG_SHAPE = re.compile(r'^drag (\w+) "([^"]*)" at \((-?\d+),(-?\d+)\) onto (\w+) "([^"]*)" at \((-?\d+),(-?\d+)\)')
#: the words asking for a list in order
ORDER = re.compile(r"increasing|ascending|decreasing|descending")
_HUES = (("red", 0), ("yellow", 60), ("green", 120), ("cyan", 180), ("blue", 240), ("magenta", 300))
_COLOUR_ALIASES = {"aqua": "cyan", "purple": "magenta", "pink": "magenta"}
_KINDS = {"circle": "circle", "circles": "circle", "rectangle": "rectangle", "rectangles": "rectangle",
          "square": "rectangle", "squares": "rectangle", "triangle": "triangle", "triangles": "triangle",
          "digit": "digit", "digits": "digit", "number": "digit", "numbers": "digit", "letter": "letter",
          "letters": "letter"}
_COLOURS = {"red", "green", "blue", "yellow", "aqua", "cyan", "magenta", "purple", "black", "white", "orange",
            "pink", "grey", "gray", "brown"}
_DIRECTIONS = {"left": (0, -1), "right": (0, 1), "up": (-1, 0), "down": (1, 0)}
_GRID_ROWS = {"top": 0, "middle": 1, "center": 1, "centre": 1, "bottom": 2}
_GRID_COLS = {"left": 0, "center": 1, "centre": 1, "middle": 1, "right": 2}


def as_number(text: str | None) -> float | None:
    """The number a text is (``$49.30`` -> 49.3), None when it is not one."""
    if text is None:
        return None
    try:
        return float(text.strip().replace("$", ""))
    except ValueError:
        return None


def read_shapes(page: str) -> list[dict]:
    """The picture's shapes: kind, label (text or colour), size, centre, fill."""
    return [{**m.groupdict(), "size": int(m["size"]), "x": int(m["x"]), "y": int(m["y"])}
            for m in _SHAPE.finditer(page)]


def colour_family(code: str) -> str | None:
    """The basic colour (red, yellow, green, cyan, blue, magenta; grey when unsaturated) of a ``#rrggbb``."""
    if not code.startswith("#") or not re.fullmatch(r"#[0-9a-fA-F]{6}", code):
        return None
    r, g, b = (int(code[i:i + 2], 16) / 255 for i in (1, 3, 5))
    h, light, sat = colorsys.rgb_to_hls(r, g, b)
    if sat < 0.12 or light < 0.08 or light > 0.95:
        return "grey"
    deg = h * 360
    return min(_HUES, key=lambda kv: min(abs(deg - kv[1]), 360 - abs(deg - kv[1])))[0]


def fits(shape: dict, words: set[str]) -> bool:
    """The shape fits the instruction's description: size, colour, kind (or the text it shows)."""
    kind = shape["kind"]
    label = shape["label"]
    if kind == "text":
        kind = "digit" if label.isdigit() else "letter"
    colour = shape["fill"] if shape["kind"] == "text" else label
    size = "large" if shape["size"] >= 15 else "small"
    if ("small" in words or "large" in words) and size not in words:
        return False
    asked_colours = {_COLOUR_ALIASES.get(w, w) for w in words & _COLOURS}
    if asked_colours and _COLOUR_ALIASES.get(colour or "", colour) not in asked_colours:
        return False
    asked_kinds = {_KINDS[w] for w in words if w in _KINDS}
    if asked_kinds and kind not in asked_kinds:
        return False
    texts = {w for w in words if len(w) == 1}
    if len(texts) > 1:
        texts.discard("a")  # the article, when another one-letter word is the asked text
    return not (texts and shape["kind"] == "text" and label.lower() not in texts and not asked_kinds)


def _shape_of(shapes: list[dict], name: str | None, role: str, rest: str | None) -> dict | None:
    at = _AT.search(rest or "")
    if not at:
        return None
    x, y = int(at["x"]), int(at["y"])
    return next((s for s in shapes if s["x"] == x and s["y"] == y and s["kind"] == role
                 and s["label"] == (name or "")), None)


def picture_tokens(shapes: list[dict], words: set[str], utter: str, text: str, verb: str, role: str,
                   name: str | None) -> list[str]:
    """A move's colour and picture names (see the module docstring)."""
    out = []
    family = colour_family(name or "")
    if family:
        asked = {_COLOUR_ALIASES.get(w, w) for w in words & (_COLOURS | {"cyan"})}
        out.append(f"col:{'hit' if family in asked else 'miss' if asked else 'none'}")
    if not shapes:
        return out
    _, _, rest = text.partition(f'"{name}" ') if name is not None else ("", "", "")
    shape = _shape_of(shapes, name, role, rest) if verb == "click" else None
    if shape is not None:
        out.append(f"pic:{'fits' if fits(shape, words) else 'misfits'}")
        coord = re.search(r"\((-?\d+),\s*(-?\d+)\)", utter)
        if coord and len(shapes) >= 9:
            xs = sorted({s["x"] for s in shapes})
            ys = sorted({s["y"] for s in shapes})
            cx, cy = xs[len(xs) // 2], ys[len(ys) // 2]
            dx = (xs[1] - xs[0]) if len(xs) > 1 else 1
            dy = (ys[1] - ys[0]) if len(ys) > 1 else 1
            want = (int(coord[1]), int(coord[2]))
            got = (round((shape["x"] - cx) / dx), round((cy - shape["y"]) / dy))
            out.append(f"pic:coord_{'hit' if got == want else 'miss'}")
    low = (name or "").strip().lower()
    if verb == "click" and role == "button":
        count = sum(fits(s, words) for s in shapes)
        if low.isdigit():
            out.append(f"pic:count_{'hit' if int(low) == count else 'miss'}")
        if len(shapes) == 1:
            s = shapes[0]
            kind = ("number" if s["label"].isdigit() else "letter") if s["kind"] == "text" else s["kind"]
            out.append(f"pic:kind_{'hit' if low in (kind, kind + 's') else 'miss'}")
    return out


def drag_tokens(items: list[str], shapes: list[dict], words: set[str], utter: str, text: str,
                name: str | None, value: str | None) -> list[str]:
    """A drag's names: where it puts a list item or a shape (see the module docstring)."""
    if name in items and value in items and len(set(items)) == len(items):
        return _list_drag(items, utter.lower(), items.index(name), items.index(value))
    src = _DRAG_SHAPE.match(text)
    if not (src and shapes):
        return []
    sx, sy, tx, ty = (int(src[k]) for k in (3, 4, 7, 8))
    box = next((s for s in shapes if s["x"] == tx and s["y"] == ty), None)
    shape = next((s for s in shapes if s["x"] == sx and s["y"] == sy), None)
    if not (box and shape):
        return []
    half = box["size"] / 2
    out = ["drag:in_box" if abs(sx - tx) <= half and abs(sy - ty) <= half else "drag:out_box"]
    named = fits(shape, words - {"box", "black"}) and bool((words & set(_KINDS)) | (words & _COLOURS - {"black"}))
    twins = sorted(s["x"] for s in shapes if s["kind"] == box["kind"] and s["label"] == box["label"])
    if len(twins) == 2:
        side = "left" if tx == twins[0] else "right"
        said = re.findall(r"\b(left|right)\b", utter.lower())
        order = said.index(side) if side in said else -1
        out.append(f"drag:side{order}|{'named' if named else 'other'}")
    else:
        out.append(f"drag:src_{'named' if named else 'other'}")
    return out


def _list_drag(items: list[str], low: str, i: int, j: int) -> list[str]:
    """Item ``i`` dropped onto item ``j`` (it takes ``j``'s place) against the instruction ``low``."""
    out = []
    places = [int(x) for x in re.findall(r"\b(\d+)(?:st|nd|rd|th)\b", low)]
    if places:
        out.append(f"drag:place_{'hit' if j + 1 in places else 'miss'}")
    step = re.search(r"\b(left|right|up|down) by one\b", low)
    cols = max(1, round(math.sqrt(len(items))))
    if step:
        dr, dc = _DIRECTIONS[step[1]]
        out.append(f"drag:step_{'hit' if j == i + dr * cols + dc else 'miss'}")
    cell = re.search(r"\b(?:(top|middle|bottom) (left|center|centre|right)|(center|centre))\b", low)
    if cell and not step:
        row = _GRID_ROWS[cell[1] or "center"]
        col = _GRID_COLS[cell[2] or "center"]
        out.append(f"drag:cell_{'hit' if j == row * cols + col else 'miss'}")
    nums = [as_number(x) for x in items]
    if all(x is not None for x in nums) and ORDER.search(low):
        after = list(nums)
        after.insert(j, after.pop(i))
        target = sorted(nums, reverse=bool(re.search(r"decreasing|descending", low)))  # type: ignore[type-var]
        score = sum(a == b for a, b in zip(nums, target, strict=True))
        new = sum(a == b for a, b in zip(after, target, strict=True))
        out.append(f"drag:sort_{'better' if new > score else 'worse' if new < score else 'same'}")
    return out
