"""Rule solvers over several steps: menus, dates, forms, searches, editors, spinners, sliders."""

from __future__ import annotations

import colorsys
import datetime as dt
import re

from s1gym.tasks.web.rules.common import MONTHS, first, name_of, next_of, shapes
from s1gym.tasks.web.view import CLICK as _CLICK
from s1gym.tasks.web.view import PageView
from s1gym.tasks.web.view import need as _need


# ------------------------------------------------------------------------------ several steps
def click_collapsible(v: PageView) -> str:
    if "[expanded]" not in v.page:
        return _need(next((m for m in v.clicks(role="tab") if name_of(m) != "Submit"), None), "open the section")
    return _need(v.click("Submit", "tab") or v.click("Submit", "button"), "click Submit")


def click_collapsible_2(v: PageView) -> str:
    target = v.field("target")
    link = next((m for m in v.clicks(target) if (_CLICK.match(m)["role"] or "") != "tab"), None)
    if link:
        return link
    for tab in v.clicks(role="tab"):
        if not v.did(tab):
            return tab
    raise LookupError(f"no section left to look for {target!r}")


def click_menu(v: PageView) -> str:
    """Point at each menu on the path (its submenu opens), click the last item."""
    *menus, last = v.field("target").split(">")

    def point_at(name: str) -> tuple[str | None, str]:
        move = next((m for m in v.moves if m.startswith("point at ") and f'"{name}"' in m), None)
        return move, f"no menu {name!r} to point at"

    return next_of(v, map(point_at, menus)) or _need(v.click(last, "item") or v.click(last, "menuitem") or v.click(last),
                                       f"click {last!r}")


_AT = re.compile(r' at \((-?\d+),(-?\d+)\)')


def click_pie(v: PageView) -> str:
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


def click_scroll_list(v: PageView) -> str:
    targets = [t.strip() for t in v.field("target").split(",")]
    return next_of(v, ((first(v, f'select "{t}" in list'), f"no option {t!r}") for t in targets)) or v.submit()


def choose_date(v: PageView) -> str:
    want = dt.date(int(v.field("year")), int(v.field("month")), int(v.field("day")))
    shown = re.search(r"(" + "|".join(MONTHS) + r")\s*\n?[^\n]*?(\d{4})", v.page)
    if f": {want:%m/%d/%Y}" in v.page:
        return v.submit()
    if shown is None:
        return _need(first(v, "click textbox"), "open the date picker")
    month, year = MONTHS.index(shown.group(1)) + 1, int(shown.group(2))
    if (year, month) > (want.year, want.month):
        return _need(v.click("Prev") or v.click("Prev", "link"), "previous month")
    if (year, month) < (want.year, want.month):
        return _need(v.click("Next") or v.click("Next", "link"), "next month")
    return _need(v.click(str(want.day)) or v.click(str(want.day), "link") or v.click(str(want.day), "cell"), "the day")


def generate_number(v: PageView) -> str:
    shown = re.search(r'- text: "?(-?\d+)"?\n\s*- button "Generate"', v.page)
    criterion, bound = v.field("criterion"), v.field("number")
    if shown and v.played:
        n = int(shown.group(1))
        ok = {"even": n % 2 == 0, "odd": n % 2 == 1, "greater than": bound and n > int(bound),
              "less than": bound and n < int(bound)}.get(criterion)
        if ok:
            return v.submit()
    return _need(v.click("Generate", "button"), "generate")


def stock_market(v: PageView) -> str:
    price = float(re.search(r"Stock price: \$(\d+(?:\.\d+)?)", v.page).group(1))
    return _need(v.click("Buy", "button"), "buy") if price <= float(v.field("target")) else "wait"


def button_delay(v: PageView) -> str:
    """Each move lets a second of page time pass: after ONE, wait n - 1 times, then TWO."""
    one = v.click("ONE", "button")
    if not v.did(one):
        return one
    seconds = int(re.search(r"wait (\d+) seconds?", v.utterance).group(1))
    waited = len(v.played) - 1 - v.played.index(one)
    return "wait" if waited < seconds - 1 else _need(v.click("TWO", "button"), "click TWO")


def moving_items(v: PageView) -> str:
    """Click a circle while one is in the picture (the first offered: the earliest to enter, the first to
    leave), else let page time pass (a move lets 0.2 s pass: ten clicks fit before the page ends)."""
    circles = [m for m in v.moves if m.startswith("click circle")]
    return circles[0] if circles else _need("wait" if "wait" in v.moves else None, "wait for a circle")


def navigate_tree(v: PageView) -> str:
    target = v.field("target")
    move = v.click(target, "item") or v.click(target)
    if move:
        return move
    for m in v.moves:
        if m.startswith('click icon "hitarea"') and not v.did(m) and "expandable" not in m:
            return m
    raise LookupError(f"no folder left to open for {target!r}")


def phone_book(v: PageView) -> str:
    name, target = v.field("name"), v.field("target")
    heading = re.search(r'- heading "(.*)" \[level=2\]', v.page)
    if heading and heading.group(1) == name:
        label = {"phone number": "Phone", "email": "Email", "address": "Address"}[target]
        value = re.search(rf"{label}: (.+?)(?: Email:| Address:|\"|$)", v.page).group(1).strip()
        return _need(v.click(value), f"click {value!r}")
    return _need(v.click(">", "item") or v.click(">"), "next contact")


def search_engine(v: PageView) -> str:
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


def social_media_all(v: PageView) -> str:
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


def multi_form(v: PageView) -> str:
    """Type each field into the box its label names (before, after or in the box; "Released Date" is
    the year), then press the form's button."""
    def typing(key: str, words: tuple[str, ...]) -> tuple[str | None, str]:
        prefix = f'type "{v.field(key)}" into '
        move = next((m for m in v.moves if m.startswith(prefix) and any(w in m[len(prefix):].lower() for w in words)), None)
        return move, f"no textbox for {key}"

    move = next_of(v, (typing(key, words) for key, words in _FORM_WORDS.items()))
    if move is not None:
        return move
    buttons = v.clicks(role="button") or [m for m in v.moves if re.match(r'click "(Submit|Search)', m)]
    return _need(buttons[0] if buttons else None, "submit")


def sign_agreement(v: PageView) -> str:
    bottom = next((m for m in v.moves if m.startswith("scroll ") and m.endswith(" to the bottom")), None)
    if bottom:
        return bottom
    typed = v.type_into(v.field("name"))
    if typed and not v.did(typed):
        return typed
    return _need(v.click(v.field("button"), "button"), f"click {v.field('button')}")


def scroll_text_2(v: PageView) -> str:
    end = " to the bottom" if v.field("target") == "bottom" else " to the top"
    move = next((m for m in v.moves if m.startswith("scroll ") and m.endswith(end)), None)
    return move or v.submit()


def highlight(v: PageView) -> str:
    k = v.field("target")
    lines = [m for m in v.moves if m.startswith("highlight ")]
    if not any(v.did(m) for m in lines):
        return lines[int(k) - 1 if k else 0]
    return v.submit()


_HUES = {"red": 0, "orange": 36, "yellow": 60, "green": 120, "blue": 210, "purple": 270}


def _swatch(v: PageView, colour: str) -> str | None:
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


def text_editor(v: PageView) -> str:
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


def terminal(v: PageView) -> str:
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


def _values_shown(v: PageView) -> list[int]:
    return [int(x) for x in re.findall(r'- text: "?(-?\d+(?: -?\d+)*)"?', v.page)[0].split()]


def _toward(shown: int, want: int) -> str:
    """A slider key from ``shown`` toward ``want``: a page (a fifth of the range, at most 20) while
    that cannot overshoot, else one step."""
    if want - shown >= 20:
        return "press PageUp"
    if shown - want >= 20:
        return "press PageDown"
    return "press ArrowRight" if shown < want else "press ArrowLeft"


def slider(v: PageView) -> str:
    """Click the slider (its handle takes the focus), key it to the value, submit."""
    want = int(v.field("target"))
    shown = _values_shown(v)[0]
    if not v.played:
        return _need(first(v, 'click box "slider') or first(v, 'click icon "slider'), "focus the slider")
    return v.submit() if shown == want else _toward(shown, want)


def slider_2(v: PageView) -> str:
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


def form_sequence(v: PageView) -> str:
    want, box = int(v.field("slider target")), int(v.field("checkbox target"))
    shown = _values_shown(v)[0]
    handle = first(v, 'click box "slider') or first(v, 'click icon "slider')
    if not v.did(handle):
        return _need(handle, "focus the slider")
    if shown != want:
        return _toward(shown, want)
    boxes = [m for m in v.moves if m.startswith("click checkbox")]
    if not v.did(boxes[box - 1]):
        return boxes[box - 1]
    return v.submit()


def form_sequence_2(v: PageView) -> str:
    radio, text, box = int(v.field("radio target")), v.field("textbox text"), int(v.field("textbox target"))
    radios = [m for m in v.moves if m.startswith("click radio")]
    if not v.did(radios[radio - 1]):
        return radios[radio - 1]
    typed = [m for m in v.moves if m.startswith(f'type "{text}" into textbox')]
    if not v.did(typed[box - 1]):
        return typed[box - 1]
    return v.submit()


def form_sequence_3(v: PageView) -> str:
    """Open the styled drop-down (its arrow), click the option, click the button."""
    want = v.field("dropdown target")
    if f'click item "{want}"' in v.played:
        return _need(v.click(v.field("button target"), "button"), "click the button")
    item = v.click(want, "item")
    return item or _need(v.click("▾"), "open the drop-down")


def spinner(v: PageView) -> str:
    shown = int(re.search(r'spinbutton.*: "(-?\d+)"$', v.page, re.MULTILINE).group(1))
    want = int(v.field("target"))
    if shown == want:
        return v.submit()
    return _need(v.click("up" if shown < want else "down", "button"), "spin")


def guess_number(v: PageView) -> str:
    """Guess 5; on "higher than g" guess g + 1, on "lower than g" g - 1 (memoryless and exact)."""
    if v.played and v.played[-1].startswith("type "):
        return v.submit()
    hint = re.search(r"The number is (higher|lower) than (\d+)", v.page)
    guess = 5 if hint is None else int(hint.group(2)) + (1 if hint.group(1) == "higher" else -1)
    return _need(v.type_into(str(guess)), f"type {guess}")


