"""Rule solvers for the MiniWoB++ tasks that can be solved by reading the page (beside :mod:`.expert`'s first ones).

Each reads only what a person sees (the instruction and its fields, the page text with its picture
description, the candidate moves, the moves played so far) and returns one of the candidates. Every
solver here is exact: bench/web.py --rules plays it over seeds chosen in advance and docs/benchmarks.md
records the result (tests/test_web.py plays a sample).
"""

from __future__ import annotations

import colorsys
import datetime as dt
import re
from collections.abc import Callable

from s1gym.tasks.web.view import CLICK as _CLICK
from s1gym.tasks.web.view import View
from s1gym.tasks.web.view import need as _need

__all__ = ["SOLVERS"]

_SHAPE = re.compile(
    r'^- (?P<kind>\w+) "(?P<label>.*)" (?P<size>\d+)px at \((?P<x>-?\d+),(?P<y>-?\d+)\)(?: fill (?P<fill>\S+))?$', re.M
)
_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December"]


def shapes(v: View) -> list[dict]:
    """The picture's shapes: kind, label (text or colour), size and centre."""
    return [{**m.groupdict(), "size": int(m["size"]), "x": int(m["x"]), "y": int(m["y"])} for m in _SHAPE.finditer(v.page)]


def shape_move(v: View, s: dict) -> str:
    move = next((m for m in v.moves if m.startswith(f'click {s["kind"]} "{s["label"]}" at ({s["x"]},{s["y"]})')), None)
    return _need(move, f"click the {s['kind']} at ({s['x']},{s['y']})")


def first(v: View, prefix: str) -> str | None:
    return next((m for m in v.moves if m.startswith(prefix)), None)


def name_of(move: str) -> str:
    m = _CLICK.match(move)
    return m["name"] if m else ""


# ------------------------------------------------------------------------------ one look
def _buy_ticket(v: View) -> str:
    buttons = v.clicks(role="button")
    want = v.field("target")
    if "cost" in want:
        values = [int(re.search(r"\$(\d+)", name_of(b)).group(1)) for b in buttons]
    else:
        values = [int(h) * 60 + int(m) for h, m in re.findall(r"Duration: (\d+)h (\d+)m", v.page)]
    pick = min(values) if want.split()[0] in ("cheapest", "shortest") else max(values)
    return buttons[values.index(pick)]


def _click_color(v: View) -> str:
    return _need(v.click(v.field("target"), "box") or v.click(v.field("target")), f"click the {v.field('target')} box")


def _hue_family(hexcolour: str) -> str:
    r, g, b = (int(hexcolour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    h, _, _ = colorsys.rgb_to_hls(r, g, b)
    deg = h * 360
    return "red" if deg < 60 or deg >= 300 else "green" if deg < 180 else "blue"


def _click_shades(v: View) -> str:
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


def _with_colour(v: View) -> list[dict]:
    out = []
    for s in shapes(v):
        s["colour"] = s["label"] if s["kind"] != "text" else (s["fill"] or "black")
        out.append(s)
    return out


def _click_shape(v: View) -> str:
    want = dict(v.fields)
    for s in _with_colour(v):
        if _matches(s, want):
            return shape_move(v, s)
    raise LookupError(f"no shape matches {want}")


def _count_shape(v: View) -> str:
    want = dict(v.fields)
    n = sum(_matches(s, want) for s in _with_colour(v))
    return _need(v.click(str(n), "button"), f"click the button {n}")


def _identify_shape(v: View) -> str:
    s = shapes(v)[0]
    d = _describe(s)
    word = {"rectangle": "Rectangle", "circle": "Circle", "triangle": "Triangle", "digit": "Number", "letter": "Letter"}[d["kind"]]
    return _need(v.click(word, "button"), f"click {word}")


def _grid_coordinate(v: View) -> str:
    x, y = int(v.field("x")), int(v.field("y"))
    cx, cy = 15 + 30 * (x + 2), 15 + 30 * (2 - y)
    for s in shapes(v):
        if s["kind"] == "circle" and abs(s["x"] - cx) <= 3 and abs(s["y"] - cy) <= 3:
            return shape_move(v, s)
    raise LookupError(f"no point at ({x},{y})")


def _unicode_test(v: View) -> str:
    return _need(v.click(v.field("target"), "button"), f"click button {v.field('target')!r}")


def _click_widget(v: View) -> str:
    role = {"text": "textbox", "textarea": "textarea"}.get(v.field("target"), v.field("target"))
    move = next((m for m in v.moves if m.startswith(f"click {role}")), None)
    return _need(move, f"click a {role}")


def _odd_or_even(v: View) -> str:
    for move in v.moves:
        m = re.match(r'^click button "(Odd|Even)" in "Odd (-?\d+) Even"(?: \(\d+\))?$', move)
        if m and not v.did(move):
            odd = int(m.group(2)) % 2 != 0
            if (m.group(1) == "Odd") == odd:
                return move
    return v.submit()


def _find_greatest(v: View) -> str:
    cards = [m for m in v.moves if re.fullmatch(r'click "(-?\d+)"', m)]
    if not v.played or v.played[-1] not in cards:
        numbers = [int(name_of(m)) for m in cards]
        return cards[numbers.index(max(numbers))]
    return v.submit()


# ------------------------------------------------------------------------------ typing what one reads
def _type_then_submit(v: View, value: str, box: str | None = None) -> str:
    move = v.type_into(value, box)
    if move is None:
        raise LookupError(f"no move to type {value!r}")
    if not v.did(move):
        return move
    return v.submit()


def _enter_text_2(v: View) -> str:
    text = v.field("text")
    return _type_then_submit(v, text.upper() if v.field("case") == "upper" else text.lower())


def _find_word(v: View) -> str:
    k = int(v.field("target"))
    paragraph = re.search(r"- paragraph: (.*)", v.page).group(1)
    words = [w.strip(".,;:!?") for w in paragraph.split()]
    return _type_then_submit(v, words[k - 1])


def _read_table(v: View) -> str:
    label = v.field("target")
    value = re.search(rf'cell "{re.escape(label)}"\n\s*- cell "(.*)"', v.page).group(1)
    return _type_then_submit(v, value)


def _read_table_2(v: View) -> str:
    for box in re.findall(r'text: "(.+?):"\n\s*- textbox', v.page):
        value = re.search(rf'cell "{re.escape(box)}"\n\s*- cell "(.*)"', v.page).group(1)
        move = v.type_into(value, f"{box}:")
        if move is None:
            raise LookupError(f"no move to type {value!r} into {box}")
        if not v.did(move):
            return move
    return v.submit()


def _scroll_text(v: View) -> str:
    text = re.search(r"- textarea[^:]*: (.*)", v.page) or re.search(r"- textbox[^:]*: (.*)", v.page)
    return _type_then_submit(v, text.group(1).split()[-1].strip(".,;:!?"))


def _simple_arithmetic(v: View) -> str:
    a, op, b = re.search(r"(-?\d+) ([-+x]) (-?\d+) =", v.page).groups()
    value = {"+": int(a) + int(b), "-": int(a) - int(b), "x": int(a) * int(b)}[op]
    return _type_then_submit(v, str(value))


def _simple_algebra(v: View) -> str:
    """``x + a = b``, ``x - a = b``, ``a + x = b`` or ``a - x = b``: solve for x."""
    m = re.search(r"(?:x ([-+]) (\d+)|(\d+) ([-+]) x) = (-?\d+)", v.page)
    b = int(m.group(5))
    if m.group(1):
        x = b - int(m.group(2)) if m.group(1) == "+" else b + int(m.group(2))
    else:
        x = b - int(m.group(3)) if m.group(4) == "+" else int(m.group(3)) - b
    return _type_then_submit(v, str(x))


def _text_transform(v: View) -> str:
    shown = re.search(r"- text: (.*)\n\s*- textbox", v.page).group(1)
    return _type_then_submit(v, shown.replace(" ", "").strip('"'))


def _copy_paste(v: View, k: int = 2) -> str:
    """Focus the k-th text field, select all, copy; focus the field to fill, paste; submit."""
    plan = [f"click textarea ({k})" if f"click textarea ({k})" in v.moves else "click textarea", "press Control+A",
            "press Control+C", "click textbox", "press Control+V"]
    for i, move in enumerate(plan):
        if len(v.played) <= i:
            return _need(move if move in v.moves else None, move)
    return v.submit()


def _copy_paste_2(v: View) -> str:
    return _copy_paste(v, int(v.field("target")))


def _enter_time(v: View) -> str:
    return _type_then_submit(v, v.field("target"))


# ------------------------------------------------------------------------------ several steps
def _click_collapsible(v: View) -> str:
    if "[expanded]" not in v.page:
        return _need(next((m for m in v.clicks(role="tab") if name_of(m) != "Submit"), None), "open the section")
    return _need(v.click("Submit", "tab") or v.click("Submit", "button"), "click Submit")


def _click_collapsible_2(v: View) -> str:
    target = v.field("target")
    link = next((m for m in v.clicks(target) if (_CLICK.match(m)["role"] or "") != "tab"), None)
    if link:
        return link
    for tab in v.clicks(role="tab"):
        if not v.did(tab):
            return tab
    raise LookupError(f"no section left to look for {target!r}")


def _click_menu(v: View) -> str:
    """Point at each menu on the path (its submenu opens), click the last item."""
    *menus, last = v.field("target").split(">")
    for name in menus:
        point = next((m for m in v.moves if m.startswith("point at ") and f'"{name}"' in m), None)
        if point is None:
            raise LookupError(f"no menu {name!r} to point at")
        if not v.did(point):
            return point
    return _need(v.click(last, "item") or v.click(last, "menuitem") or v.click(last), f"click {last!r}")


_AT = re.compile(r' at \((-?\d+),(-?\d+)\)')


def _click_pie(v: View) -> str:
    """Open the pie (its centre) until its items show, then click the item's label or, when the label
    cannot be clicked, the clickable slice nearest to it."""
    target = v.field("target")
    label = next((s for s in shapes(v) if s["kind"] == "text" and s["label"] == target and s["size"] > 10), None)
    if label is None:
        centre = next((m for m in v.moves if m.startswith('click text "+"')), None)
        return _need(centre, "open the pie menu")
    move = first(v, f'click text "{target}" at ({label["x"]},{label["y"]})')
    if move:
        return move
    slices = [m for m in v.moves if m.startswith("click shape ")]
    def dist(m: str) -> int:
        x, y = map(int, _AT.search(m).groups())
        return (x - label["x"]) ** 2 + (y - label["y"]) ** 2
    return _need(min(slices, key=dist) if slices else None, f"click the slice of {target!r}")


def _click_scroll_list(v: View) -> str:
    targets = [t.strip() for t in v.field("target").split(",")]
    for t in targets:
        move = next((m for m in v.moves if m.startswith(f'select "{t}" in list')), None)
        if move is None:
            raise LookupError(f"no option {t!r}")
        if not v.did(move):
            return move
    return v.submit()


def _choose_date(v: View) -> str:
    want = dt.date(int(v.field("year")), int(v.field("month")), int(v.field("day")))
    shown = re.search(r"(" + "|".join(_MONTHS) + r")\s*\n?[^\n]*?(\d{4})", v.page)
    if f": {want:%m/%d/%Y}" in v.page:
        return v.submit()
    if shown is None:
        return _need(first(v, "click textbox"), "open the date picker")
    month, year = _MONTHS.index(shown.group(1)) + 1, int(shown.group(2))
    if (year, month) > (want.year, want.month):
        return _need(v.click("Prev") or v.click("Prev", "link"), "previous month")
    if (year, month) < (want.year, want.month):
        return _need(v.click("Next") or v.click("Next", "link"), "next month")
    return _need(v.click(str(want.day)) or v.click(str(want.day), "link") or v.click(str(want.day), "cell"), "the day")


def _generate_number(v: View) -> str:
    shown = re.search(r'- text: "?(-?\d+)"?\n\s*- button "Generate"', v.page)
    criterion, bound = v.field("criterion"), v.field("number")
    if shown and v.played:
        n = int(shown.group(1))
        ok = {"even": n % 2 == 0, "odd": n % 2 == 1, "greater than": bound and n > int(bound),
              "less than": bound and n < int(bound)}.get(criterion)
        if ok:
            return v.submit()
    return _need(v.click("Generate", "button"), "generate")


def _guess_number(v: View) -> str:
    low, high = 0, 9
    for move, feedback in zip(v.played, v.history_feedback, strict=False):
        del move, feedback
    for guess, hint in v.guesses():
        if hint == "higher":
            low = max(low, guess + 1)
        elif hint == "lower":
            high = min(high, guess - 1)
    if v.played and v.played[-1].startswith("type "):
        return v.submit()
    return _need(v.type_into(str((low + high) // 2)), "type a guess")


def _stock_market(v: View) -> str:
    price = float(re.search(r"Stock price: \$(\d+(?:\.\d+)?)", v.page).group(1))
    return _need(v.click("Buy", "button"), "buy") if price <= float(v.field("target")) else "wait"


def _button_delay(v: View) -> str:
    """Each move lets a second of page time pass: after ONE, wait n - 1 times, then TWO."""
    one = v.click("ONE", "button")
    if not v.did(one):
        return one
    seconds = int(re.search(r"wait (\d+) seconds?", v.utterance).group(1))
    waited = len(v.played) - 1 - v.played.index(one)
    return "wait" if waited < seconds - 1 else _need(v.click("TWO", "button"), "click TWO")


def _navigate_tree(v: View) -> str:
    target = v.field("target")
    move = v.click(target, "item") or v.click(target)
    if move:
        return move
    for m in v.moves:
        if m.startswith('click icon "hitarea"') and not v.did(m) and "expandable" not in m:
            return m
    raise LookupError(f"no folder left to open for {target!r}")


def _phone_book(v: View) -> str:
    name, target = v.field("name"), v.field("target")
    heading = re.search(r'- heading "(.*)" \[level=2\]', v.page)
    if heading and heading.group(1) == name:
        label = {"phone number": "Phone", "email": "Email", "address": "Address"}[target]
        value = re.search(rf"{label}: (.+?)(?: Email:| Address:|\"|$)", v.page).group(1).strip()
        return _need(v.click(value), f"click {value!r}")
    return _need(v.click(">", "item") or v.click(">"), "next contact")


def _search_engine(v: View) -> str:
    """Search, then page through the results (three a page) to the rank asked and click it."""
    query, rank = v.field("query"), int(v.field("rank"))
    typed = v.type_into(query)
    if typed and not v.did(typed):
        return typed
    results = v.clicks(role="link")
    if not results or not v.did(v.click("Search", "button")):
        return _need(v.click("Search", "button"), "search")
    pages = {int(name_of(m)): m for m in v.moves if name_of(m).isdigit()}
    shown = re.search(r'link "(\d+)":\s*\n\s*- listitem', v.page)  # the page list; the current page is marked
    current = int(v.played[-1] and name_of(v.played[-1])) if v.played and name_of(v.played[-1]).isdigit() else 1
    del shown
    want = (rank - 1) // 3 + 1
    if want == current:
        return results[(rank - 1) % 3]
    return _need(pages.get(want) or v.click(">", "item") or v.click(">"), f"go to page {want}")


def _social_media_all(v: View) -> str:
    user, button = v.field("user"), v.field("button")
    icon = button.lower() if button in ("Reply", "Retweet", "Like") else {"Share via DM": "share", "Share": "share"}.get(button, button.lower())
    amount = v.field("amount")
    done = sum(1 for m in v.played if m.startswith(f'click icon "{icon}"'))
    if amount and done >= int(amount):
        return v.submit()
    for move in v.clicks(icon, "icon"):
        if re.search(rf"{re.escape(user)}\b", _CLICK.match(move)["context"] or "") and not v.did(move):
            return move
    return v.submit()


_FORM_WORDS = {"genre": ("genre",), "director": ("director",), "year": ("year", "date", "released")}


def _multi_form(v: View) -> str:
    """Type each field into the box its label names (before, after or in the box; "Released Date" is
    the year), then press the form's button."""
    for key, words in _FORM_WORDS.items():
        value = v.field(key)
        prefix = f'type "{value}" into '
        move = next((m for m in v.moves if m.startswith(prefix) and any(w in m[len(prefix):].lower() for w in words)), None)
        if move is None:
            raise LookupError(f"no textbox for {key}")
        if not v.did(move):
            return move
    buttons = v.clicks(role="button") or [m for m in v.moves if re.match(r'click "(Submit|Search)', m)]
    return _need(buttons[0] if buttons else None, "submit")


def _sign_agreement(v: View) -> str:
    bottom = next((m for m in v.moves if m.startswith("scroll ") and m.endswith(" to the bottom")), None)
    if bottom:
        return bottom
    typed = v.type_into(v.field("name"))
    if typed and not v.did(typed):
        return typed
    return _need(v.click(v.field("button"), "button"), f"click {v.field('button')}")


def _scroll_text_2(v: View) -> str:
    end = " to the bottom" if v.field("target") == "bottom" else " to the top"
    move = next((m for m in v.moves if m.startswith("scroll ") and m.endswith(end)), None)
    return move or v.submit()


def _highlight(v: View) -> str:
    k = v.field("target")
    lines = [m for m in v.moves if m.startswith("highlight ")]
    if not any(v.did(m) for m in lines):
        return lines[int(k) - 1 if k else 0]
    return v.submit()


_HUES = {"red": 0, "orange": 36, "yellow": 60, "green": 120, "blue": 210, "purple": 270}


def _swatch(v: View, colour: str) -> str | None:
    """The first swatch (document order: the picker's first, pure row) of the named colour."""
    exact = v.click(colour, "box")
    if exact or colour not in _HUES:
        return exact
    for move in v.clicks(role="box"):
        name = name_of(move)
        if not name.startswith("#"):
            continue
        r, g, b = (int(name[i : i + 2], 16) / 255 for i in (1, 3, 5))
        h, light, sat = colorsys.rgb_to_hls(r, g, b)
        if sat > 0.6 and 0.25 < light < 0.65 and min(abs(h * 360 - _HUES[colour]), 360 - abs(h * 360 - _HUES[colour])) < 20:
            return move
    return None


def _text_editor(v: View) -> str:
    """Select the text (a word, or everything), apply the style or pick the colour, submit."""
    target = v.field("target")
    word = re.search(r"give the text (\S+) the (?:style|color)", target)
    style = re.search(r"the style (\w+)", target)
    colour = re.search(r"the color (\w+)", target)
    if word:
        mark = first(v, f'highlight "{word.group(1)}"')
    else:
        mark = next((m for m in v.moves if m.startswith("highlight ") and m.count(" ") > 1), None) or first(v, "highlight ")
    if not any(m.startswith("highlight ") for m in v.played):
        return _need(mark, "select the text")
    if style:
        button = {"bold": "ql bold", "italics": "ql italic", "italic": "ql italic", "underlined": "ql underline"}[style.group(1)]
        move = v.click(button, "button")
        return v.submit() if v.did(move) else _need(move, f"click {button}")
    swatch = _swatch(v, colour.group(1))
    if any(m.startswith("click box") for m in v.played):
        return v.submit()
    return swatch or _need(first(v, 'click icon "ql picker label"'), "open the colour picker")


def _terminal(v: View) -> str:
    """Focus the terminal, list the files, remove the one with the asked extension (or none)."""
    want = v.field("target")
    ext = re.search(r"extension \.([\w.]+)", want)
    if not any(m.startswith('type "') for m in v.moves):
        return _need(first(v, 'click "terminal'), "focus the terminal")
    if v.played and v.played[-1].startswith("type "):
        return "press Enter"
    if not any(m.startswith('type "ls"') for m in v.played):
        return _need(first(v, 'type "ls"'), "type ls")
    listing = re.search(r"user\$ ls (.*?) user\$", v.page)
    files = listing.group(1).split() if listing else []
    for name in files:
        if name.endswith("." + ext.group(1)) if ext else "." not in name:
            return _need(first(v, f'type "rm {name}"'), f"type rm {name}")
    raise LookupError("no file to delete")


def _values_shown(v: View) -> list[int]:
    return [int(x) for x in re.findall(r'- text: "?(-?\d+(?: -?\d+)*)"?', v.page)[0].split()]


def _toward(shown: int, want: int) -> str:
    """A slider key from ``shown`` toward ``want``: a page (a fifth of the range, at most 20) while
    that cannot overshoot, else one step."""
    if want - shown >= 20:
        return "press PageUp"
    if shown - want >= 20:
        return "press PageDown"
    return "press ArrowRight" if shown < want else "press ArrowLeft"


def _slider(v: View) -> str:
    """Click the slider (its handle takes the focus), key it to the value, submit."""
    want = int(v.field("target"))
    shown = _values_shown(v)[0]
    if not v.played:
        return _need(first(v, 'click box "slider') or first(v, 'click icon "slider'), "focus the slider")
    return v.submit() if shown == want else _toward(shown, want)


def _slider_2(v: View) -> str:
    wants = [int(v.field(k)) for k in ("n1", "n2", "n3")]
    shown = _values_shown(v)
    focused = next((m for m in reversed(v.played) if m.startswith("click ") and "slider" in m), None)
    for i, (s, w) in enumerate(zip(shown, wants, strict=True), start=1):
        if s == w:
            continue
        handle = next((m for m in v.moves if m.startswith("click ") and f"slider {i}" in m), None)
        if focused != handle:
            return _need(handle, f"focus slider {i}")
        return _toward(s, w)
    return v.submit()


def _form_sequence(v: View) -> str:
    want, box = int(v.field("slider target")), int(v.field("checkbox target"))
    shown = _values_shown(v)[0]
    slider = first(v, 'click box "slider') or first(v, 'click icon "slider')
    if not v.did(slider):
        return _need(slider, "focus the slider")
    if shown != want:
        return _toward(shown, want)
    boxes = [m for m in v.moves if m.startswith("click checkbox")]
    if not v.did(boxes[box - 1]):
        return boxes[box - 1]
    return v.submit()


def _form_sequence_2(v: View) -> str:
    radio, text, box = int(v.field("radio target")), v.field("textbox text"), int(v.field("textbox target"))
    radios = [m for m in v.moves if m.startswith("click radio")]
    if not v.did(radios[radio - 1]):
        return radios[radio - 1]
    typed = [m for m in v.moves if m.startswith(f'type "{text}" into textbox')]
    if not v.did(typed[box - 1]):
        return typed[box - 1]
    return v.submit()


def _form_sequence_3(v: View) -> str:
    """Open the styled drop-down (its arrow), click the option, click the button."""
    want = v.field("dropdown target")
    if f'click item "{want}"' in v.played:
        return _need(v.click(v.field("button target"), "button"), "click the button")
    item = v.click(want, "item")
    return item or _need(v.click("▾"), "open the drop-down")


def _spinner(v: View) -> str:
    shown = int(re.search(r'spinbutton.*: "(-?\d+)"$', v.page, re.M).group(1))
    want = int(v.field("target"))
    if shown == want:
        return v.submit()
    return _need(v.click("up" if shown < want else "down", "button"), "spin")


def _guess_number(v: View) -> str:
    """Guess 5; on "higher than g" guess g + 1, on "lower than g" g - 1 (memoryless and exact)."""
    if v.played and v.played[-1].startswith("type "):
        return v.submit()
    hint = re.search(r"The number is (higher|lower) than (\d+)", v.page)
    guess = 5 if hint is None else int(hint.group(2)) + (1 if hint.group(1) == "higher" else -1)
    return _need(v.type_into(str(guess)), f"type {guess}")


# ------------------------------------------------------------------------------ drags
def _drag_onto(v: View, what: str, where: str) -> str | None:
    return next((m for m in v.moves if m.startswith(f"drag {what} onto {where}")), None)


def _drag_box(v: View) -> str:
    move = _drag_onto(v, '"s"', '"L"')
    return move if not v.did(move) else v.submit()


def _drag_direction(v: View) -> str:
    way = v.field("target")
    if any(m.startswith("drag ") and m.endswith(f" {way}") for m in v.played):
        return v.submit()
    return _need(next((m for m in v.moves if m.startswith("drag ") and m.endswith(f" {way}")), None), f"drag {way}")


def _items(v: View) -> list[str]:
    return re.findall(r'- listitem: "?(.+?)"?$', v.page, re.M)


def _drag_to(v: View, name: str, index: int) -> str:
    """Drag ``name`` onto the item now at ``index`` (0-based): it takes that place."""
    items = _items(v)
    if items.index(name) == index:
        raise LookupError(f"{name} is already there")
    return _need(_drag_onto(v, f'item "{name}"', f'item "{items[index]}"'), f"drag {name}")


def _drag_items(v: View) -> str:
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


def _drag_items_grid(v: View) -> str:
    """A 3 x 3 grid in reading order: a spot by name, or one step left, right, up or down."""
    target = v.field("target")
    spot = re.match(r"(.+?) to the (.+)", target)
    if spot:
        return _drag_to(v, spot.group(1), _GRID[spot.group(2)])
    m = re.match(r"(.+?) (left|right|up|down) by one", target)
    at = _items(v).index(m.group(1))
    return _drag_to(v, m.group(1), at + {"left": -1, "right": 1, "up": -3, "down": 3}[m.group(2)])


def _drag_sort_numbers(v: View) -> str:
    """Selection sort: drag the smallest misplaced number onto the first misplaced place."""
    items = [int(x) for x in _items(v)]
    for i, (have, want) in enumerate(zip(items, sorted(items), strict=True)):
        if have != want:
            return _drag_to(v, str(want), i)
    return v.submit()


def _drag_shapes(v: View) -> str:
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


def _resize_textarea(v: View) -> str:
    m = re.match(r"(height|width) is (larger|smaller)", v.field("target"))
    way = {("height", "larger"): "down", ("height", "smaller"): "up", ("width", "larger"): "right",
           ("width", "smaller"): "left"}[(m.group(1), m.group(2))]
    move = first(v, f"drag the textarea's corner {way}")
    return move if not v.did(move) else v.submit()


# ------------------------------------------------------------------------------ email
def _email_task(v: View) -> dict[str, str]:
    """by, task (delete, star, reply, forward), message, to: the instruction's fields (the page gives
    them with its natural-language instructions; a forward-only task names no task)."""
    fields = dict(v.fields)
    if "task" not in fields and "forward" in v.task:
        fields["task"] = "forward"
    return fields


def _email_inbox(v: View) -> str:
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


SOLVERS: dict[str, Callable[[View], str]] = {
    "button-delay": _button_delay,
    "buy-ticket": _buy_ticket,
    "choose-date": _choose_date,
    "choose-date-easy": _choose_date,
    "choose-date-medium": _choose_date,
    "choose-date-nodelay": _choose_date,
    "click-collapsible": _click_collapsible,
    "click-collapsible-nodelay": _click_collapsible,
    "click-collapsible-2": _click_collapsible_2,
    "click-collapsible-2-nodelay": _click_collapsible_2,
    "click-color": _click_color,
    "click-menu": _click_menu,
    "click-pie": _click_pie,
    "click-pie-nodelay": _click_pie,
    "click-scroll-list": _click_scroll_list,
    "click-shades": _click_shades,
    "click-shape": _click_shape,
    "click-widget": _click_widget,
    "copy-paste": _copy_paste,
    "copy-paste-2": _copy_paste_2,
    "count-shape": _count_shape,
    "enter-text-2": _enter_text_2,
    "enter-time": _enter_time,
    "find-greatest": _find_greatest,
    "find-word": _find_word,
    "generate-number": _generate_number,
    "grid-coordinate": _grid_coordinate,
    "highlight-text": _highlight,
    "highlight-text-2": _highlight,
    "identify-shape": _identify_shape,
    "multi-layouts": _multi_form,
    "multi-orderings": _multi_form,
    "navigate-tree": _navigate_tree,
    "odd-or-even": _odd_or_even,
    "phone-book": _phone_book,
    "read-table": _read_table,
    "read-table-2": _read_table_2,
    "scroll-text": _scroll_text,
    "scroll-text-2": _scroll_text_2,
    "search-engine": _search_engine,
    "sign-agreement": _sign_agreement,
    "simple-algebra": _simple_algebra,
    "simple-arithmetic": _simple_arithmetic,
    "social-media-all": _social_media_all,
    "social-media-some": _social_media_all,
    "stock-market": _stock_market,
    "terminal": _terminal,
    "text-editor": _text_editor,
    "text-transform": _text_transform,
    "unicode-test": _unicode_test,
    "use-slider": _slider,
    "use-slider-2": _slider_2,
    "use-spinner": _spinner,
    "form-sequence": _form_sequence,
    "form-sequence-2": _form_sequence_2,
    "form-sequence-3": _form_sequence_3,
    "guess-number": _guess_number,
    "drag-box": _drag_box,
    "drag-circle": _drag_direction,
    "drag-single-shape": _drag_direction,
    "drag-items": _drag_items,
    "drag-items-grid": _drag_items_grid,
    "drag-sort-numbers": _drag_sort_numbers,
    "resize-textarea": _resize_textarea,
    "drag-shapes": _drag_shapes,
    "drag-shapes-2": _drag_shapes,
    "email-inbox": _email_inbox,
    "email-inbox-delete": _email_inbox,
    "email-inbox-forward": _email_inbox,
    "email-inbox-forward-nl": _email_inbox,
    "email-inbox-forward-nl-turk": _email_inbox,
    "email-inbox-important": _email_inbox,
    "email-inbox-nl-turk": _email_inbox,
    "email-inbox-noscroll": _email_inbox,
    "email-inbox-reply": _email_inbox,
    "email-inbox-star-reply": _email_inbox,
}
