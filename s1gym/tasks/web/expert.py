"""Scripted solvers for the web tasks: the ``rule`` baseline (and ``expert_action`` where exact).

Each solver reads only what a person sees: the instruction's fields (MiniWoB's
extractor), the page text (the ARIA snapshot), the candidate moves and the
moves played so far; it returns one of the candidates. :data:`EXACT` lists the
tasks whose script wins every instance by construction (tests/test_web_pages.py
plays it over seeds to hold it to that); on the other tasks with a solver it is
a baseline only; tasks without one raise ``NotImplementedError``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from s1gym.tasks.web.rules import SOLVERS as MORE_SOLVERS
from s1gym.tasks.web.rules.common import MONTHS
from s1gym.tasks.web.view import BARE_CLICK as _BARE_CLICK
from s1gym.tasks.web.view import CLICK as _CLICK
from s1gym.tasks.web.view import PageView
from s1gym.tasks.web.view import need as _need

if TYPE_CHECKING:
    from s1gym.tasks.web.env import MiniWoBEnv

__all__ = ["EXACT", "SOLVERS", "rule_move"]

# ---------------------------------------------------------------- one-click tasks
def _click_button(v: PageView) -> str:
    return _need(v.click(v.field("target"), "button"), f"click button {v.field('target')!r}")


def _click_test(v: PageView) -> str:
    return _need(v.clicks(role="button")[0] if v.clicks(role="button") else None, "click the button")


def _click_test_2(v: PageView) -> str:
    return _need(v.click(v.field("target"), "button"), "click the named button")


def _click_button_sequence(v: PageView) -> str:
    one = v.click("ONE", "button")
    return _need(one if not v.did(one) else v.click("TWO", "button"), "click ONE then TWO")


def _click_link(v: PageView) -> str:
    return _need(v.click(v.field("target")), f"click link {v.field('target')!r}")


def _click_dialog(v: PageView) -> str:
    return _need(v.click("Close") or v.click("Close", "button") or v.click("x"), "close the dialog")


def _click_dialog_2(v: PageView) -> str:
    target = v.field("target")
    if target == "x":
        return _click_dialog(v)
    return _need(v.click(target, "button"), f"click {target!r} in the dialog")


def _click_tab(v: PageView) -> str:
    return _need(v.click(f"Tab #{v.field('target')}", "tab"), "click the tab")


def _click_tab_2(v: PageView) -> str:
    target = v.field("target")
    link = [m for m in v.clicks(target) if _CLICK.match(m)["role"] != "tab"]
    if link:
        return link[0]
    for tab in v.clicks(role="tab"):  # the first tab not looked at yet (the open one was seen at the start)
        name = _CLICK.match(tab)["name"]
        if not v.did(tab) and f'tab "{name}" [selected]' not in v.page:
            return tab
    raise LookupError(f"no tab left to look for {target!r}")


def _focus_text(v: PageView) -> str:
    boxes = [m for m in v.moves if _BARE_CLICK.match(m) and m.startswith("click textbox")] or [
        m for m in v.moves if m.startswith("click textbox")
    ]
    k = int(v.field("target") or 1)
    return _need(boxes[k - 1] if len(boxes) >= k else None, f"focus textbox {k}")


# ---------------------------------------------------------------- forms
def _check_then_submit(v: PageView, targets: list[str], role: str) -> str:
    for target in targets:
        move = v.click(target, role)
        if move is None:
            raise LookupError(f"no {role} {target!r}")
        if f'{role} "{target}" [checked]' not in v.page:
            return move
    return v.submit()


def _click_checkboxes(v: PageView) -> str:
    targets = [val for key, val in v.fields.items() if key.startswith("target")]
    return _check_then_submit(v, targets, "checkbox")


def _click_option(v: PageView) -> str:
    return _check_then_submit(v, [v.field("target")], "radio")


def _choose_list(v: PageView) -> str:
    target = v.field("target")
    if f'option "{target}" [selected]' not in v.page:
        for move in v.moves:
            if move.startswith(f'select "{target}" in list'):
                return move
        raise LookupError(f"no option {target!r}")
    return v.submit()


def _fill_then_submit(v: PageView, pairs: list[tuple[str, str | None]], button: str = "Submit") -> str:
    """Type each (value, textbox name) once, then press the button."""
    for value, box in pairs:
        move = v.type_into(value, box)
        if move is None:
            raise LookupError(f"no textbox {box!r} to type {value!r} into")
        if not v.did(move):
            return move
    return v.submit(button)


def _enter_text(v: PageView) -> str:
    return _fill_then_submit(v, [(v.field("target"), None)])


def _enter_password(v: PageView) -> str:
    pw = v.field("password") or v.field("target")
    return _fill_then_submit(v, [(pw, "Password"), (pw, "Verify password")])


def _login_user(v: PageView) -> str:
    cancel = v.click("Cancel", "button")
    if cancel is not None:  # login-user-popup: a popup (OK leaves the page) blocks the form; dismiss it
        return cancel
    # what was typed before the popup may be lost: type again what came before the last dismissal
    dismissed = [i for i, m in enumerate(v.played) if m == 'click button "Cancel"']
    if dismissed:
        v.played = v.played[dismissed[-1] + 1 :]
    return _fill_then_submit(v, [(v.field("username"), "Username"), (v.field("password"), "Password")], "Login")


def _use_autocomplete(v: PageView) -> str:
    start, end = v.field("start"), v.field("end")
    typed = v.type_into(start)
    if typed is None:
        raise LookupError("no textbox for the autocomplete")
    if not v.did(typed):
        return typed
    picked = [m for m in v.played if m.startswith("click ") and "textbox" not in m]
    if not picked:
        for move in v.clicks():
            name = _CLICK.match(move)["name"]
            if name.startswith(start) and name.endswith(end) and _CLICK.match(move)["role"] != "button":
                return move
    return v.submit()


# ---------------------------------------------------------------- social media
_SOCIAL_ICONS = {"Reply": "reply", "Retweet": "retweet", "Like": "like"}


def _social_media(v: PageView) -> str:
    user, button = v.field("user"), v.field("button")
    icon = _SOCIAL_ICONS.get(button)
    if icon is not None:
        for move in v.clicks(icon, "icon"):
            if re.search(rf"{re.escape(user)}\b", _CLICK.match(move)["context"] or ""):
                return move
        raise LookupError(f"no {icon} icon on a post of {user}")
    # a "more" menu item ("Mute @user", "Share via DM"): open the menu of the user's post, then click it
    if v.played and v.played[-1].startswith('click icon "more"'):
        for move in v.clicks(role="item"):
            if _CLICK.match(move)["name"].startswith(button):
                return move
    for move in v.clicks("more", "icon"):
        if re.search(rf"{re.escape(user)}\b", _CLICK.match(move)["context"] or ""):
            return move
    raise LookupError(f"no menu on a post of {user}")


# ---------------------------------------------------------------- book-flight
_MONTHS = {m: i for i, m in enumerate(MONTHS, start=1)}


def _pick_suggestion(v: PageView, value: str) -> str | None:
    for move in v.clicks():
        m = _CLICK.match(move)
        if m["role"] in (None, "item", "menuitem", "option") and re.fullmatch(r".*\(\w+\)", m["name"]) and (
            m["name"].startswith(value) or f"({value})" in m["name"]
        ):
            return move
    return None


def _book_flight(v: PageView) -> str:
    criterion, origin, dest, date = (v.field(k) for k in ("criterion", "from", "to", "date"))
    if "Book flight for" in v.page:  # the results: the cheapest or the shortest
        return _choose_flight(v, criterion)
    for value, box in ((origin, "From:"), (dest, "To:")):
        chosen = re.search(rf'textbox "{re.escape(box)}": (.*\(\w+\))$', v.page, re.M)
        if chosen and (chosen.group(1).startswith(value) or f"({value})" in chosen.group(1)):
            continue  # a full airport from the suggestions is in the box
        suggestion = _pick_suggestion(v, value)
        if suggestion is not None:
            return suggestion
        return _need(v.type_into(value, box), f"type {value!r} into {box}")
    want = dt.datetime.strptime(date, "%m/%d/%Y").date()
    if not re.search(rf"textbox[^\n]*: {re.escape(date)}", v.page):
        pick = next((m for m in v.moves if m.startswith(f'pick date "{date}"')), None)
        if pick is not None:
            return pick
        shown = re.search(r"(January|February|March|April|May|June|July|August|September|October|November|December)\s*\n?[^\n]*?(\d{4})", v.page)
        if shown is None:  # the date picker is closed: open it
            return _need(next((m for m in v.moves if m.startswith("click textbox") and "From:" not in m and "To:" not in m), None), "open the date picker")
        month, year = _MONTHS[shown.group(1)], int(shown.group(2))
        if (year, month) > (want.year, want.month):
            return _need(v.click("Prev") or v.click("Prev", "link"), "go to the previous month")
        if (year, month) < (want.year, want.month):
            return _need(v.click("Next") or v.click("Next", "link"), "go to the next month")
        return _need(v.click(str(want.day)) or v.click(str(want.day), "link") or v.click(str(want.day), "cell"), f"click day {want.day}")
    return v.submit("Search")


def _choose_flight(v: PageView, criterion: str) -> str:
    buttons = [m for m in v.clicks(role="button") if _CLICK.match(m)["name"].startswith("Book flight for")]
    if not buttons:
        raise LookupError("no flight to book")
    if criterion == "cheapest":
        return min(buttons, key=lambda m: int(re.search(r"\$(\d+)", m).group(1)))
    durations = [int(h) * 60 + int(mi) for h, mi in re.findall(r"(\d+)h (\d+)m", v.page)]
    if len(durations) != len(buttons):
        raise LookupError(f"{len(durations)} durations for {len(buttons)} flights")
    return buttons[min(range(len(buttons)), key=durations.__getitem__)]


SOLVERS: dict[str, Callable[[PageView], str]] = {
    "book-flight": _book_flight,
    "book-flight-nodelay": _book_flight,
    "choose-list": _choose_list,
    "click-button": _click_button,
    "click-button-sequence": _click_button_sequence,
    "click-checkboxes": _click_checkboxes,
    "click-checkboxes-large": _click_checkboxes,
    "click-checkboxes-transfer": _click_checkboxes,
    "click-dialog": _click_dialog,
    "click-dialog-2": _click_dialog_2,
    "click-link": _click_link,
    "click-option": _click_option,
    "click-tab": _click_tab,
    "click-tab-2": _click_tab_2,
    "click-tab-2-easy": _click_tab_2,
    "click-tab-2-hard": _click_tab_2,
    "click-tab-2-medium": _click_tab_2,
    "click-test": _click_test,
    "click-test-2": _click_test_2,
    "click-test-transfer": _click_test_2,
    "enter-date": _enter_text,
    "enter-password": _enter_password,
    "enter-text": _enter_text,
    "enter-text-dynamic": _enter_text,
    "focus-text": _focus_text,
    "focus-text-2": _focus_text,
    "login-user": _login_user,
    "login-user-popup": _login_user,
    "social-media": _social_media,
    "use-autocomplete": _use_autocomplete,
    "use-autocomplete-nodelay": _use_autocomplete,
}

SOLVERS.update(MORE_SOLVERS)

#: Tasks whose script wins every instance (checked over seeds by tests/test_web_pages.py).
EXACT: frozenset[str] = frozenset(SOLVERS)


def rule_move(env: MiniWoBEnv) -> str:
    """The scripted move for the env's task now (one of its candidates)."""
    solver = SOLVERS.get(env.task)
    if solver is None:
        raise NotImplementedError(f"{env.task_name}: no scripted solver (tasks with one: {', '.join(SOLVERS)})")
    move = solver(PageView(env))
    if move not in env.candidates:
        raise RuntimeError(f"{env.task_name}: the solver chose {move!r}, which is not a candidate")
    return move
