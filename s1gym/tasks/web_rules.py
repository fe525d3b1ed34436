"""Rule solvers for the MiniWoB++ tasks that can be solved by reading the page (beside web_expert's first ones).

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

from s1gym.tasks.web_expert import _CLICK, View, _need

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


def _matches(s: dict, want: dict[str, str], colours: dict[str, str]) -> bool:
    d = _describe(s)
    if want.get("size") and d["size"] != want["size"]:
        return False
    if want.get("color") and colours.get(want["color"], want["color"]) != s["colour"]:
        return False
    target, kind = want.get("target"), want.get("type")
    if kind in ("digit", "letter") and d["kind"] != kind:
        return False
    if kind == "shape" and d["kind"] in ("digit", "letter"):
        return False
    if target and target not in (d["text"], d["kind"]):
        return False
    return True


_COLOURS = {"aqua": "cyan", "magenta": "magenta"}


def _with_colour(v: View) -> list[dict]:
    out = []
    for s in shapes(v):
        s["colour"] = s["label"] if s["kind"] != "text" else (s["fill"] or "black")
        out.append(s)
    return out


def _click_shape(v: View) -> str:
    want = dict(v.fields)
    for s in _with_colour(v):
        if _matches(s, want, _COLOURS):
            return shape_move(v, s)
    raise LookupError(f"no shape matches {want}")


def _count_shape(v: View) -> str:
    want = dict(v.fields)
    n = sum(_matches(s, want, _COLOURS) for s in _with_colour(v))
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


def _click_menu_2(v: View) -> str:
    """Open the menu, point at each submenu not looked into yet until the item shows, click it."""
    want = re.sub(r'^labeled "|"$', "", v.field("target"))
    move = v.click(want, "item") or v.click(want, "menuitem")
    if move:
        return move
    if not any(m.startswith("click item") for m in v.moves):
        return _need(v.click("Menu", "button"), "open the menu")
    for point in (m for m in v.moves if m.startswith("point at ")):
        if not v.did(point):
            return point
    raise LookupError(f"no submenu left to look for {want!r}")


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


def _text_editor(v: View) -> str:
    m = re.search(r"give the text (.+?) the style (\w+)", v.field("target"))
    word, style = m.group(1), m.group(2)
    mark = next((x for x in v.moves if x == f'highlight "{word}"'), None) or next(
        (x for x in v.moves if x.startswith(f'highlight "{word}')), None)
    if not v.did(mark):
        return _need(mark, f"highlight {word!r}")
    button = {"bold": "ql bold", "italics": "ql italic", "italic": "ql italic", "underlined": "ql underline"}.get(style)
    styled = v.click(button, "button") if button else None
    if styled and not v.did(styled):
        return styled
    return v.submit()


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


def _slider(v: View) -> str:
    want = int(v.field("target"))
    shown = int(re.search(r'- text: "?(-?\d+)"?', v.page).group(1))
    handle = first(v, 'click icon "slider')
    if not v.played:
        return _need(handle, "focus the slider")
    if shown == want:
        return v.submit()
    return "press ArrowRight" if shown < want else "press ArrowLeft"


def _spinner(v: View) -> str:
    return _type_then_submit(v, v.field("target"))


def _email_inbox(v: View) -> str:
    sender, task = v.field("by"), v.field("task")
    opened = "Reply" in {name_of(m) for m in v.moves} and 'icon "close email"' in " ".join(v.moves)
    if not opened:
        for m in v.moves:
            if m.startswith(f'click "{sender} '):
                return m
        raise LookupError(f"no email by {sender}")
    if task == "delete":
        return _need(v.click("trash", "icon"), "trash")
    if task == "star":
        return _need(v.click("star", "icon"), "star")
    raise LookupError(f"no rule for {task!r}")


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
    "use-spinner": _spinner,
    "email-inbox-delete": _email_inbox,
    "email-inbox-important": _email_inbox,
}
