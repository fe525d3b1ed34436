"""Rule solvers that drag (shapes, items, corners) and the email inbox's."""

from __future__ import annotations

import re

from s1gym.tasks.web.rules.common import first, shapes
from s1gym.tasks.web.view import PageView
from s1gym.tasks.web.view import need as _need


# ------------------------------------------------------------------------------ drags
def _drag_onto(v: PageView, what: str, where: str) -> str | None:
    return next((m for m in v.moves if m.startswith(f"drag {what} onto {where}")), None)


def drag_box(v: PageView) -> str:
    move = _drag_onto(v, '"s"', '"L"')
    return move if not v.did(move) else v.submit()


def drag_direction(v: PageView) -> str:
    way = v.field("target")
    if any(m.startswith("drag ") and m.endswith(f" {way}") for m in v.played):
        return v.submit()
    return _need(next((m for m in v.moves if m.startswith("drag ") and m.endswith(f" {way}")), None), f"drag {way}")


def _items(v: PageView) -> list[str]:
    return re.findall(r'- listitem: "?(.+?)"?$', v.page, re.MULTILINE)


def _drag_to(v: PageView, name: str, index: int) -> str:
    """Drag ``name`` onto the item now at ``index`` (0-based): it takes that place."""
    items = _items(v)
    if items.index(name) == index:
        raise LookupError(f"{name} is already there")
    return _need(_drag_onto(v, f'item "{name}"', f'item "{items[index]}"'), f"drag {name}")


def drag_items(v: PageView) -> str:
    target = v.field("target")
    name = re.match(r"(.+?) (?:to the|up by|down by)", target).group(1)
    items = _items(v)
    at = items.index(name)
    pos = re.search(r"to the (\d+)\w\w position", target)
    index = (int(pos.group(1)) - 1 if pos else 0 if "to the top" in target else len(items) - 1 if "to the bottom" in target
             else at - 1 if " up by" in target else at + 1)
    return _drag_to(v, name, index)


_GRID = {"top left": 0, "top center": 1, "top right": 2, "middle left": 3, "center": 4, "middle right": 5,
         "bottom left": 6, "bottom center": 7, "bottom right": 8}


def drag_items_grid(v: PageView) -> str:
    """A 3 x 3 grid in reading order: a spot by name, or one step left, right, up or down."""
    target = v.field("target")
    spot = re.match(r"(.+?) to the (.+)", target)
    if spot:
        return _drag_to(v, spot.group(1), _GRID[spot.group(2)])
    m = re.match(r"(.+?) (left|right|up|down) by one", target)
    at = _items(v).index(m.group(1))
    return _drag_to(v, m.group(1), at + {"left": -1, "right": 1, "up": -3, "down": 3}[m.group(2)])


def drag_sort_numbers(v: PageView) -> str:
    """Selection sort: drag the smallest misplaced number onto the first misplaced place."""
    items = [int(x) for x in _items(v)]
    for i, (have, want) in enumerate(zip(items, sorted(items), strict=True)):
        if have != want:
            return _drag_to(v, str(want), i)
    return v.submit()


def drag_shapes(v: PageView) -> str:
    """Drag every shape that belongs in a box (by kind, or by colour) onto it; submit. The boxes are the
    picture's large outlined rectangles (left and right when there are two); a shape is in a box when its
    centre is."""
    want = v.field("target")
    items = shapes(v)
    boxes = sorted((s for s in items if s["kind"] == "rectangle" and s["size"] >= 40), key=lambda s: s["x"])
    def inside(s: dict, box: dict) -> bool:
        return abs(s["x"] - box["x"]) < box["size"] / 2 - 4 and abs(s["y"] - box["y"]) < 25 - 4
    def belongs(s: dict) -> bool:
        kind = {"circles": "circle", "rectangles": "rectangle", "triangles": "triangle"}.get(want)
        return s["kind"] == kind if kind else s["label"] == want.removesuffix(" shapes")
    for s in items:
        if s in boxes or s["kind"] == "text":
            continue
        box = boxes[0] if belongs(s) else (boxes[1] if len(boxes) > 1 else None)
        if box is None or inside(s, box):
            continue
        move = _drag_onto(v, f'{s["kind"]} "{s["label"]}" at ({s["x"]},{s["y"]})', f'rectangle "{box["label"]}" at ({box["x"]},{box["y"]})')
        return _need(move, f"drag the {s['kind']} at ({s['x']},{s['y']})")
    return v.submit()


def resize_textarea(v: PageView) -> str:
    m = re.match(r"(height|width) is (larger|smaller)", v.field("target"))
    way = {("height", "larger"): "down", ("height", "smaller"): "up", ("width", "larger"): "right",
           ("width", "smaller"): "left"}[(m.group(1), m.group(2))]
    move = first(v, f"drag the textarea's corner {way}")
    return move if not v.did(move) else v.submit()


# ------------------------------------------------------------------------------ email
def _email_task(v: PageView) -> dict[str, str]:
    """by, task (delete, star, reply, forward), message, to: the instruction's fields (the page gives
    them with its natural-language instructions; a forward-only task names no task)."""
    fields = dict(v.fields)
    if "task" not in fields and "forward" in v.task:
        fields["task"] = "forward"
    return fields


def email_inbox(v: PageView) -> str:
    t = _email_task(v)
    sender, task = t["by"], t["task"]
    opened = any(m.startswith('click icon "close email"') for m in v.moves)
    writing = any(m.startswith(('click icon "send reply"', 'click icon "send forward"')) for m in v.moves)
    if writing:
        value = t.get("message") if task == "reply" else t.get("to")
        typed = v.type_into(value, "to:") if task == "forward" else v.type_into(value)
        if typed and not v.did(typed):
            return typed
        return _need(first(v, 'click icon "send '), "send")
    if not opened:
        for m in v.moves:
            if m.startswith(f'click "{sender} '):
                return m
        raise LookupError(f"no email by {sender}")
    if task == "delete":
        return _need(v.click("trash", "icon"), "trash")
    star = v.click("star", "icon")
    if task == "star" or (task == "reply" and "star" in v.utterance and not v.did(star)):
        return _need(star, "star")
    return _need(v.click("Reply" if task == "reply" else "Forward"), task)


