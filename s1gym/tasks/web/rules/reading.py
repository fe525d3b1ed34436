"""Rule solvers that read the page once: what to click, or what to type, is on it."""

from __future__ import annotations

import colorsys
import re

from s1gym.tasks.web.rules.common import name_of, next_of, shape_move, shapes
from s1gym.tasks.web.view import PageView
from s1gym.tasks.web.view import need as _need


# ------------------------------------------------------------------------------ one look
def buy_ticket(v: PageView) -> str:
    buttons = v.clicks(role="button")
    want = v.field("target")
    if "cost" in want:
        values = [int(re.search(r"\$(\d+)", name_of(b)).group(1)) for b in buttons]
    else:
        values = [int(h) * 60 + int(m) for h, m in re.findall(r"Duration: (\d+)h (\d+)m", v.page)]
    pick = min(values) if want.split()[0] in ("cheapest", "shortest") else max(values)
    return buttons[values.index(pick)]


def click_color(v: PageView) -> str:
    return _need(v.click(v.field("target"), "box") or v.click(v.field("target")), f"click the {v.field('target')} box")


def _hue_family(hexcolour: str) -> str:
    r, g, b = (int(hexcolour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    h, _, _ = colorsys.rgb_to_hls(r, g, b)
    deg = h * 360
    return "red" if deg < 60 or deg >= 300 else "green" if deg < 180 else "blue"


def click_shades(v: PageView) -> str:
    want = v.field("target")
    boxes = [m for m in v.clicks(role="box")]
    for move in boxes:
        if v.did(move):
            continue
        colour = name_of(move)
        if colour.startswith("#") and _hue_family(colour) == want:
            return move
    return v.submit()


def _describe(s: dict) -> dict:
    kind = s["kind"]
    label = s["label"]
    if kind == "text":
        kind = "digit" if label.isdigit() else "letter"
    return {"kind": kind, "text": label if s["kind"] == "text" else kind, "size": "large" if s["size"] >= 15 else "small"}


def _matches(s: dict, want: dict[str, str]) -> bool:
    """The shape fits the instruction's description (size, colour, kind or text; "item": any)."""
    d = _describe(s)
    if want.get("size") and d["size"] != want["size"]:
        return False
    if want.get("color") and want["color"] != s["colour"]:
        return False
    target, kind = want.get("target"), want.get("type")
    if kind in ("digit", "letter") and d["kind"] != kind:
        return False
    if kind == "shape" and d["kind"] in ("digit", "letter"):
        return False
    if target and target not in (d["text"], d["kind"]):
        return False
    return True


def _with_colour(v: PageView) -> list[dict]:
    out = []
    for s in shapes(v):
        s["colour"] = s["label"] if s["kind"] != "text" else (s["fill"] or "black")
        out.append(s)
    return out


def click_shape(v: PageView) -> str:
    want = dict(v.fields)
    for s in _with_colour(v):
        if _matches(s, want):
            return shape_move(v, s)
    raise LookupError(f"no shape matches {want}")


def count_shape(v: PageView) -> str:
    want = dict(v.fields)
    n = sum(_matches(s, want) for s in _with_colour(v))
    return _need(v.click(str(n), "button"), f"click the button {n}")


def identify_shape(v: PageView) -> str:
    s = shapes(v)[0]
    d = _describe(s)
    word = {"rectangle": "Rectangle", "circle": "Circle", "triangle": "Triangle", "digit": "Number", "letter": "Letter"}[d["kind"]]
    return _need(v.click(word, "button"), f"click {word}")


def grid_coordinate(v: PageView) -> str:
    x, y = int(v.field("x")), int(v.field("y"))
    cx, cy = 15 + 30 * (x + 2), 15 + 30 * (2 - y)
    for s in shapes(v):
        if s["kind"] == "circle" and abs(s["x"] - cx) <= 3 and abs(s["y"] - cy) <= 3:
            return shape_move(v, s)
    raise LookupError(f"no point at ({x},{y})")


def unicode_test(v: PageView) -> str:
    return _need(v.click(v.field("target"), "button"), f"click button {v.field('target')!r}")


def click_widget(v: PageView) -> str:
    role = {"text": "textbox", "textarea": "textarea"}.get(v.field("target"), v.field("target"))
    move = next((m for m in v.moves if m.startswith(f"click {role}")), None)
    return _need(move, f"click a {role}")


def odd_or_even(v: PageView) -> str:
    for move in v.moves:
        m = re.match(r'^click button "(Odd|Even)" in "Odd (-?\d+) Even"(?: \(\d+\))?$', move)
        if m and not v.did(move):
            odd = int(m.group(2)) % 2 != 0
            if (m.group(1) == "Odd") == odd:
                return move
    return v.submit()


def find_greatest(v: PageView) -> str:
    cards = [m for m in v.moves if re.fullmatch(r'click "(-?\d+)"', m)]
    if not v.played or v.played[-1] not in cards:
        numbers = [int(name_of(m)) for m in cards]
        return cards[numbers.index(max(numbers))]
    return v.submit()


# ------------------------------------------------------------------------------ typing what one reads
def _type_then_submit(v: PageView, value: str, box: str | None = None) -> str:
    return next_of(v, [(v.type_into(value, box), f"no move to type {value!r}")]) or v.submit()


def enter_text_2(v: PageView) -> str:
    text = v.field("text")
    return _type_then_submit(v, text.upper() if v.field("case") == "upper" else text.lower())


def find_word(v: PageView) -> str:
    k = int(v.field("target"))
    paragraph = re.search(r"- paragraph: (.*)", v.page).group(1)
    words = [w.strip(".,;:!?") for w in paragraph.split()]
    return _type_then_submit(v, words[k - 1])


def read_table(v: PageView) -> str:
    label = v.field("target")
    value = re.search(rf'cell "{re.escape(label)}"\n\s*- cell "(.*)"', v.page).group(1)
    return _type_then_submit(v, value)


def read_table_2(v: PageView) -> str:
    def typing(box: str) -> tuple[str | None, str]:
        value = re.search(rf'cell "{re.escape(box)}"\n\s*- cell "(.*)"', v.page).group(1)
        return v.type_into(value, f"{box}:"), f"no move to type {value!r} into {box}"

    boxes = re.findall(r'text: "(.+?):"\n\s*- textbox', v.page)
    return next_of(v, map(typing, boxes)) or v.submit()


def scroll_text(v: PageView) -> str:
    text = re.search(r"- textarea[^:]*: (.*)", v.page) or re.search(r"- textbox[^:]*: (.*)", v.page)
    return _type_then_submit(v, text.group(1).split()[-1].strip(".,;:!?"))


def simple_arithmetic(v: PageView) -> str:
    a, op, b = re.search(r"(-?\d+) ([-+x]) (-?\d+) =", v.page).groups()
    value = {"+": int(a) + int(b), "-": int(a) - int(b), "x": int(a) * int(b)}[op]
    return _type_then_submit(v, str(value))


def simple_algebra(v: PageView) -> str:
    """``x + a = b``, ``x - a = b``, ``a + x = b`` or ``a - x = b``: solve for x."""
    m = re.search(r"(?:x ([-+]) (\d+)|(\d+) ([-+]) x) = (-?\d+)", v.page)
    b = int(m.group(5))
    if m.group(1):
        x = b - int(m.group(2)) if m.group(1) == "+" else b + int(m.group(2))
    else:
        x = b - int(m.group(3)) if m.group(4) == "+" else int(m.group(3)) - b
    return _type_then_submit(v, str(x))


def text_transform(v: PageView) -> str:
    shown = re.search(r"- text: (.*)\n\s*- textbox", v.page).group(1)
    return _type_then_submit(v, shown.replace(" ", "").strip('"'))


def copy_paste(v: PageView, k: int = 2) -> str:
    """Focus the k-th text field, select all, copy; focus the field to fill, paste; submit."""
    plan = [f"click textarea ({k})" if f"click textarea ({k})" in v.moves else "click textarea", "press Control+A",
            "press Control+C", "click textbox", "press Control+V"]
    for i, move in enumerate(plan):
        if len(v.played) <= i:
            return _need(move if move in v.moves else None, move)
    return v.submit()


def copy_paste_2(v: PageView) -> str:
    return copy_paste(v, int(v.field("target")))


def enter_time(v: PageView) -> str:
    return _type_then_submit(v, v.field("target"))


