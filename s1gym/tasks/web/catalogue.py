"""Every MiniWoB++ task the ``miniwob`` package ships, and how s1gym offers it.

The package (Farama's ``miniwob`` 1.1.0) ships 130 task pages under ``miniwob/html/miniwob/`` (its
Gymnasium registry names 125 of them, ``miniwob/<task>-v1``, plus three FlightWoB sites,
``miniwob/flight.*``). :data:`CATALOGUE` has one :class:`WebTask` per page, enumerated from the
package, so a page the package adds cannot go missing silently (tests/test_web_pages.py compares them).

A task is either **offered** (``s1/MiniWoB-v0`` with ``task=<name>``, also ``s1/MiniWoB-<name>-v0``)
with a candidate-move formulation drawn from its page, or **listed as not offered** with the reason
(:attr:`WebTask.unsupported`): the pages whose reward is a graded function of pixel distances or of a
continuously moving target, which a list of moves can only approximate. ``s1 list`` shows both.

**The formulation.** Every task gets the generic moves of ``web_page.js``: click each visible,
enabled, uncovered clickable element (buttons, links, tabs, checkboxes, radios, menu and autocomplete
items, date picker days, elements with click handlers or a pointer cursor, the shapes of a clickable
picture), select each option of a list, type each of the task's values into each text field, press
Enter in a focused field. On top of that a task may add (the fields of :class:`WebTask`):

- ``dates``: the instruction's dates offered as ``pick date "<mm/dd/yyyy>" in textbox`` in a jQuery UI
  date picker (a person opens it, pages to the month and clicks the day: one move, real clicks);
- ``typed``: which of the instruction's fields are typed (the fields the page gives with its
  instruction, else MiniWoB's field extractors, as the miniwob package reads them; default none,
  so a click task does not offer "type 'No' into textbox"); ``derived``: values the instruction
  names in another form (``enter-text-2``'s upper case, ``terminal``'s commands);
- ``page``: page values a person types after reading them (a table's cells, a paragraph's words),
  ``numbers``: a range of numbers to type (an arithmetic answer), both bounded;
- ``keys`` (offered in a focused field) and ``any_keys`` (always): keys to press (a slider's arrows);
- ``drags``: drag elements onto others or a step in a direction; ``hover``: point at an element
  (the pointer stays there: a menu opens under it); ``scroll``: scroll an element by
  its height; ``highlight``: select a paragraph's text or one word of it; ``wait``: let a second pass.

A task may also say that its page is **memoryless** (``memoryless``): its scripts keep nothing that a
move changes and a read of the page does not show (simple-algebra's handler reads the typed answer when
Submit is pressed, and nothing else happens), so a move's answer depends only on the page as read, not on
the moves that led there; Search's children of such a page are then answered from pages that showed the
same (:data:`~s1gym.tasks.web.engine.MEMO`; ``bench/web.py --memo-check`` steps them on real pages too and
compares).

N (``max_candidates``) is the task's stated cap: the most candidates met over seeded random and rule
play (``bench/web.py --caps``), with headroom; a state with more raises ``TooManyCandidatesError``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CATALOGUE", "FLIGHTWOB", "WebTask", "offered", "package_pages"]

Fields = Sequence[tuple[str, str]]


@dataclass(frozen=True)
class WebTask:
    """One MiniWoB++ page: whether and how s1gym offers it (see the module docstring)."""

    name: str
    about: str
    max_candidates: int = 16
    max_steps: int = 10
    #: why the task is not offered ("" when it is)
    unsupported: str = ""
    #: an episode restarted in the page's document is the same page as on a fresh load (else: reload;
    #: False where a restart was seen to differ: a widget's or d3's state outlives the episode)
    restarts: bool = True
    #: JavaScript (a function of no argument) run before an episode restarts in the page's document: it undoes
    #: what the task's script keeps between episodes and a fresh load does not have
    restart_js: str = ""
    typed: tuple[str, ...] = ()
    #: the instruction's date fields offered as "pick date" moves in a jQuery UI date picker
    dates: tuple[str, ...] = ()
    derived: Callable[[Fields, str], list[str]] | None = None
    #: web_page.js options: page values, numbers, keys, drags, scroll, highlight, wait
    page: tuple[dict[str, Any], ...] = ()
    numbers: tuple[int, int] | None = None
    keys: tuple[str, ...] = ()
    any_keys: tuple[str, ...] = ()
    drags: tuple[dict[str, Any], ...] = ()
    scroll: str = ""
    highlight: dict[str, Any] = field(default_factory=dict)
    wait: bool = False
    #: page time (ms) let pass after each move (default 1 s: animations and delays finish within it)
    settle_ms: int = 1000
    #: elements offered as "point at" moves: the pointer moves onto them and stays (a CSS selector)
    hover: str = ""
    #: the text fields typed values go into (a CSS selector; default every text field)
    type_into: str = ""
    #: type every key with its keydown/keyup (a terminal reads keydown); default: the text arrives as
    #: typed text does (input events, as Playwright's and BrowserGym's fill), its last key as a key press
    key_by_key: bool = False
    #: the score before the page's reward: progress(fields, form values, page text) in [0, 1)
    progress: Callable[[Fields, Sequence[tuple[str, str]], str], float] | None = None
    #: the page's scripts keep nothing a move changes that a read of the page does not show (see the module
    #: docstring): a move's answer is a function of the page as read, whatever moves led there
    memoryless: bool = False

    def typed_values(self, fields: Fields, utterance: str) -> list[str]:
        """The texts this task types, from its instruction."""
        values = [v for k, v in fields if k in self.typed]
        if self.derived is not None:
            values += self.derived(fields, utterance)
        return list(dict.fromkeys(v for v in values if v))

    def page_options(self, fields: Fields = ()) -> dict[str, Any]:
        """The options ``web_page.js`` reads (``fields``: the instruction's, for the dates to pick)."""
        opts: dict[str, Any] = {}
        if self.dates:
            opts["dates"] = [v for k, v in fields if k in self.dates]
        if self.page:
            opts["pageValues"] = list(self.page)
        if self.numbers:
            opts["numbers"] = list(self.numbers)
        if self.keys:
            opts["keys"] = list(self.keys)
        if self.any_keys:
            opts["anyKeys"] = list(self.any_keys)
        if self.drags:
            opts["drags"] = list(self.drags)
        if self.scroll:
            opts["scroll"] = self.scroll
        if self.highlight:
            opts["highlight"] = dict(self.highlight)
        if self.wait:
            opts["wait"] = True
        if self.type_into:
            opts["typeInto"] = self.type_into
        if self.hover:
            opts["hover"] = self.hover
        if self.memoryless:
            opts["memo"] = True
        return opts


def package_pages() -> list[str]:
    """The task pages the installed ``miniwob`` package ships (``miniwob/html/miniwob/*.html``)."""
    from miniwob.selenium_instance import HTML_DIR

    return sorted(p.stem for p in (Path(HTML_DIR) / "miniwob").glob("*.html"))


# ------------------------------------------------------------------------------ derived values
def _cases(fields: Fields, utterance: str) -> list[str]:
    text = dict(fields).get("text", "")
    return [text.upper(), text.lower()]


def _terminal(fields: Fields, utterance: str) -> list[str]:
    return ["ls"]


def _flight_progress(fields: Fields, form: Sequence[tuple[str, str]], page: str) -> float:
    """book-flight before its reward: a fifth for each of From, To and the date holding what the
    instruction asks (an airport from the suggestions that contains the asked city or code), and a
    fifth when the results of that search show. (MiniWoB pays only the booking: this is s1gym's
    progress, the share of the form that is done, read from the page and the instruction.)"""
    want = dict(fields)
    values = dict(form)
    done = 0
    for key, box in (("from", "flight-from"), ("to", "flight-to")):
        got = values.get(box, "")
        if re.fullmatch(r".+\(\w{3}\)", got) and want.get(key, "\0") in got:
            done += 1
    if values.get("datepicker", "") == want.get("date"):
        done += 1
    if done == 3 and "Book flight for" in page:
        done += 1
    return done / 5


# -------------------------------------------------------------------------------- the catalogue
_CONTINUOUS = "its reward is a graded function of {what}; a list of moves can only approximate it"

_ENTRIES: list[WebTask] = [
    WebTask("ascending-numbers", "click the numbers in ascending order (they hide after the first)", 12, 8),
    WebTask("bisect-angle", "draw a line that bisects an angle",
            unsupported=_CONTINUOUS.format(what="the angle between a line the mouse draws and the bisector")),
    WebTask("book-flight", "book the cheapest/shortest flight: autocomplete, date picker, results", 48, 30,
            typed=("from", "to"), dates=("date",), progress=_flight_progress),
    WebTask("book-flight-nodelay", "book-flight without the autocomplete delay", 48, 30,
            typed=("from", "to"), dates=("date",), progress=_flight_progress),
    WebTask("button-delay", "click ONE, wait 3 seconds, click TWO", 4, 10, wait=True),
    WebTask("buy-ticket", "buy the cheapest/shortest ticket", 8, 4),
    WebTask("chase-circle", "keep the mouse inside a moving circle",
            unsupported=_CONTINUOUS.format(what="the time the pointer stays inside a circle that keeps moving")),
    WebTask("choose-date", "pick a date in a jQuery UI date picker and submit", 64, 20),
    WebTask("choose-date-easy", "choose-date within one month", 64, 10),
    WebTask("choose-date-medium", "choose-date within two months", 64, 12),
    WebTask("choose-date-nodelay", "choose-date without the picker's animation", 64, 20),
    WebTask("choose-list", "select an item from a drop-down list and submit", 48, 6),
    WebTask("circle-center", "click the centre of a circle",
            unsupported=_CONTINUOUS.format(what="the pixel distance between the click and the circle's centre")),
    WebTask("click-button", "click the named button", 24, 6),
    WebTask("click-button-sequence", "click two buttons in order", 8, 6),
    WebTask("click-checkboxes", "check exactly the named boxes and submit", 16, 12),
    WebTask("click-checkboxes-large", "click-checkboxes with up to 12 targets", 32, 20),
    WebTask("click-checkboxes-soft", "check the boxes with words similar to the named ones", 16, 12),
    WebTask("click-checkboxes-transfer", "click-checkboxes, other layouts", 16, 12),
    WebTask("click-collapsible", "expand a section and click submit", 8, 6),
    WebTask("click-collapsible-2", "expand sections to find and click a link", 24, 10),
    WebTask("click-collapsible-2-nodelay", "click-collapsible-2 without the animation", 24, 10),
    WebTask("click-collapsible-nodelay", "click-collapsible without the animation", 8, 6),
    WebTask("click-color", "click the box of the named colour", 8, 4),
    WebTask("click-dialog", "close the dialog", 8, 4),
    WebTask("click-dialog-2", "click the named button of a dialog", 8, 4),
    WebTask("click-link", "click the named link", 32, 6),
    WebTask("click-menu", "point at nested menu items to open them, click the named one", 24, 8,
            hover="#menu li:has(> ul) > div"),
    WebTask("click-menu-2", "open the menu, point at submenus, click the named item", 24, 8,
            hover="#menu li:has(> ul) > div"),
    WebTask("click-option", "choose the named radio option and submit", 16, 6),
    WebTask("click-pie", "open a pie menu and click the named item", 24, 6, restarts=False),
    WebTask("click-pie-nodelay", "click-pie without the animation", 24, 6, restarts=False),
    WebTask("click-scroll-list", "select the named items of a scrolling list and submit", 48, 10),
    WebTask("click-shades", "select every shade of the named colour and submit", 16, 16),
    WebTask("click-shape", "click the described shape", 40, 4),
    WebTask("click-tab", "click the named tab", 8, 6),
    WebTask("click-tab-2", "switch tabs to find and click a link", 48, 10),
    WebTask("click-tab-2-easy", "click-tab-2 with one tab", 48, 10),
    WebTask("click-tab-2-hard", "click-tab-2 with up to six tabs", 64, 12),
    WebTask("click-tab-2-medium", "click-tab-2 with two tabs", 48, 10),
    WebTask("click-test", "click the button", 4, 4),
    WebTask("click-test-2", "click button ONE or TWO", 4, 4),
    WebTask("click-test-transfer", "click-test-2, other layouts", 4, 4),
    WebTask("click-widget", "click the named kind of widget", 24, 4),
    WebTask("copy-paste", "copy a textarea's text into a field and submit", 16, 10,
            keys=("Control+A", "Control+C", "Control+V")),
    WebTask("copy-paste-2", "copy the n-th textarea's text into a field and submit", 24, 10,
            keys=("Control+A", "Control+C", "Control+V")),
    WebTask("count-shape", "count the described shapes and click the number", 48, 4),
    WebTask("count-sides", "click the number of sides of a drawn shape (a canvas)", 8, 4),
    WebTask("daily-calendar", "create an event by dragging over a day's hours, name it",
            unsupported=("the event is drawn by dragging over a scrolling grid of 48 half hours, and the "
                         "reward needs its start, end and name exact: the start/end pairs alone are 1,128 moves")),
    WebTask("drag-box", "drag the small box into the large one and submit", 16, 6,
            drags=({"from": "#draggableSmall", "to": "#draggableLarge"},)),
    WebTask("drag-circle", "drag a circle in the named direction and submit", 8, 6,
            drags=({"from": "svg circle", "directions": ["up", "down", "left", "right"], "by": 30},)),
    WebTask("drag-cube", "rotate a 3D cube by dragging until the named face shows",
            unsupported=_CONTINUOUS.format(what="a cube's rotation, which follows the drag's length and speed")),
    WebTask("drag-items", "drag a list item to the named position", 32, 6,
            drags=({"from": "#sortable li", "to": "#sortable li"},)),
    WebTask("drag-items-grid", "drag a grid item to the named position", 96, 6,
            drags=({"from": "#sortable li", "to": "#sortable li"},)),
    WebTask("drag-shapes", "drag the named shapes into a box and submit", 32, 12,
            drags=({"from": "#area_svg rect:not(#shape-container), #area_svg circle, #area_svg polygon",
                    "to": "#area_svg #shape-container"},)),
    WebTask("drag-shapes-2", "drag shapes into the left or right box and submit", 32, 16,
            drags=({"from": "#area_svg rect:not([id=shape-container]), #area_svg circle, #area_svg polygon",
                    "to": "#area_svg [id=shape-container]"},)),
    WebTask("drag-single-shape", "drag a shape in the named direction and submit", 8, 6,
            drags=({"from": "svg > *", "directions": ["up", "down", "left", "right"], "by": 30},)),
    WebTask("drag-sort-numbers", "sort a list of numbers by dragging and submit", 48, 20,
            drags=({"from": "#sortable li", "to": "#sortable li"},)),
    WebTask("draw-circle", "draw a circle around a point",
            unsupported=_CONTINUOUS.format(what="how round a drawn path is around a point")),
    WebTask("draw-line", "draw a line through a dot",
            unsupported=_CONTINUOUS.format(what="how straight a drawn path is and its distance to a dot")),
    WebTask("email-inbox", "delete, star, reply to or forward an email", 64, 12, typed=("message", "to")),
    WebTask("email-inbox-delete", "delete the named sender's email", 64, 8),
    WebTask("email-inbox-forward", "forward the named sender's email", 64, 12, typed=("to",)),
    WebTask("email-inbox-forward-nl", "email-inbox-forward, instructions in words", 64, 12, typed=("to",)),
    WebTask("email-inbox-forward-nl-turk", "email-inbox-forward, instructions written by people", 64, 12,
            typed=("to",)),
    WebTask("email-inbox-important", "star the named sender's email", 64, 8),
    WebTask("email-inbox-nl-turk", "email-inbox, instructions written by people", 64, 12, typed=("to", "message")),
    WebTask("email-inbox-noscroll", "email-inbox with a short inbox", 64, 12, typed=("message", "to")),
    WebTask("email-inbox-reply", "reply to the named sender's email", 64, 12, typed=("message",)),
    WebTask("email-inbox-star-reply", "star the email and reply", 64, 12, typed=("message",)),
    WebTask("enter-date", "enter a date and submit", 8, 6, typed=("target",)),
    WebTask("enter-password", "enter a password twice and submit", 16, 8, typed=("target",)),
    WebTask("enter-text", "type the given text and submit", 8, 6, typed=("target",)),
    WebTask("enter-text-2", "type the given text in upper/lower case and submit", 8, 6, derived=_cases),
    WebTask("enter-text-dynamic", "type the given text and submit", 8, 6, typed=("target",)),
    WebTask("enter-time", "enter a time and submit", 8, 6, typed=("target",)),
    WebTask("find-greatest", "find the card with the greatest number", 16, 8),
    WebTask("find-midpoint", "click the midpoint between two points",
            unsupported=_CONTINUOUS.format(what="the pixel distance between the click and the midpoint")),
    WebTask("find-word", "type the n-th word of a paragraph and submit", 48, 6,
            page=({"selector": "#area p", "words": True},), type_into="input"),
    WebTask("focus-text", "focus the text field", 4, 4),
    WebTask("focus-text-2", "focus the named text field", 12, 4),
    WebTask("form-sequence", "set a slider, check a box, submit", 24, 30,
            any_keys=("ArrowLeft", "ArrowRight", "PageUp", "PageDown", "Home", "End")),
    WebTask("form-sequence-2", "check a radio, type a number into the named field, submit", 24, 8,
            typed=("textbox text",)),
    # each episode makes the jQuery selectric drop-down again on the same select, which keeps the last one's
    # object (its saved tab index, its state): a restart first destroys it, as a fresh page has none
    WebTask("form-sequence-3", "choose from a drop-down, click the named button", 24, 6,
            restart_js="() => { $('select').selectric('destroy'); }"),
    WebTask("generate-number", "generate numbers until one fits, submit", 8, 20),
    WebTask("grid-coordinate", "click the named coordinate of a grid", 32, 4),
    WebTask("guess-number", "guess a number from higher/lower feedback", 16, 20, numbers=(0, 9)),
    WebTask("highlight-text", "select a paragraph's text and submit", 8, 4,
            highlight={"selector": "#area #randomText, #area p", "whole": True}),
    WebTask("highlight-text-2", "select the n-th paragraph's text and submit", 8, 4,
            highlight={"selector": "#area p", "whole": True}),
    WebTask("hot-cold", "find a hidden spot by hot/cold hover feedback",
            unsupported=_CONTINUOUS.format(what="the pixel distance to a hidden spot found by moving the mouse")),
    WebTask("hover-shape", "keep the pointer on a square that moves",
            unsupported=_CONTINUOUS.format(what="the time the pointer stays on a square that keeps moving")),
    WebTask("identify-shape", "click the word that names the drawn shape", 8, 4),
    WebTask("login-user", "type username and password, log in", 16, 8, typed=("username", "password")),
    WebTask("login-user-popup", "log in; dismiss a popup if it appears", 16, 10, typed=("username", "password")),
    # the circles enter the picture from its sides one after another (about every 0.8 s) and cross it in
    # 3.5 s; a click on a circle where it is now counts (+0.2), and the page ends at 9.9 s with -1 + 0.2 per
    # circle hit: a move lets 0.2 s pass (1 s would leave time for 9 clicks, and 10 are needed), and "wait"
    # lets it pass while no circle is in the picture yet (at the start none is)
    WebTask("moving-items", "click circles that move across a picture (a move lets 0.2 s pass)", 16, 50,
            restarts=False, wait=True, settle_ms=200),
    WebTask("multi-layouts", "fill a form in varying layouts", 32, 10, typed=("genre", "director", "year")),
    WebTask("multi-orderings", "fill a form in varying field orders", 32, 10, typed=("genre", "director", "year")),
    WebTask("navigate-tree", "open folders to click the named file", 48, 12),
    WebTask("number-checkboxes", "draw a digit in a grid of checkboxes after a picture", 40, 30),
    WebTask("odd-or-even", "mark numbers odd or even and submit", 24, 12),
    WebTask("order-food", "order the named number of dishes of a kind", 64, 12),
    WebTask("phone-book", "page through contacts to click a person's detail", 32, 16),
    WebTask("read-table", "type the value of a table row and submit", 24, 6, page=({"selector": "#area td"},)),
    WebTask("read-table-2", "type two values of a table and submit", 48, 8, page=({"selector": "#area td"},)),
    WebTask("resize-textarea", "resize a textarea by its corner and submit", 16, 10,
            drags=({"from": "#area .ui-resizable-se", "label": "the textarea's corner",
                    "directions": ["up", "down", "left", "right"], "by": 20},)),
    WebTask("right-angle", "add a point that makes a right angle",
            unsupported=_CONTINUOUS.format(what="the angle a clicked point makes with two others")),
    # memoryless (simple-algebra, simple-arithmetic, scroll-text): genProblem draws the problem and binds one
    # Submit handler that reads the field; nothing else of the page's own reacts to a move
    WebTask("scroll-text", "type the last word of a scrolling text and submit", 128, 6,
            page=({"selector": "#area textarea", "words": True},), type_into="input", memoryless=True),
    WebTask("scroll-text-2", "scroll a textarea to its top or bottom and submit", 8, 12, scroll="#area textarea"),
    WebTask("search-engine", "search, page through results, click the n-th", 32, 12, typed=("query",)),
    WebTask("sign-agreement", "scroll an agreement to its end, type a name, answer", 16, 20, typed=("name",),
            scroll="#area textarea"),
    # each episode binds another click handler to the same four buttons (genProblem's
    # $('#area button').on('click')), so in a restarted document the earlier episodes' handlers would count
    # the presses too and end the episode by their own sequence (the fork checks of docs/benchmarks.md
    # diverged): a restart first takes them off, and a blink's class cut short. A move lets 0.1 s pass: a
    # button is lit (a lighter colour, in its name) for a fraction of each sequence step, so with a second a
    # move most of the sequence was never on the page when it was read (the page's timings:
    # docs/benchmarks.md, "Figures behind the code")
    WebTask("simon-says", "repeat the order in which buttons light up (a move lets 0.1 s pass)", 8, 40, wait=True,
            restart_js="() => { $('#area button').off('click').removeClass('push'); }", settle_ms=100),
    WebTask("simple-algebra", "solve for x and type the answer", 216, 6, numbers=(-99, 108), memoryless=True),
    WebTask("simple-arithmetic", "compute a sum, difference or product and type it", 104, 6, numbers=(-9, 81),
            memoryless=True),
    WebTask("social-media", "click an action on a user's post", 64, 6),
    WebTask("social-media-all", "click an action on every post of a user, submit", 96, 20),
    WebTask("social-media-some", "click an action on n posts of a user, submit", 96, 20),
    WebTask("stock-market", "buy when the price falls below a bound (a move lets 0.1 s pass: a price tick)", 4, 100,
            wait=True, settle_ms=100),
    WebTask("terminal", "delete a file through a shell: ls, then rm", 48, 10, derived=_terminal, key_by_key=True,
            page=({"selector": ".terminal-output", "words": True, "prefix": "rm ", "strip": False},)),
    WebTask("text-editor", "give a word a style in a rich-text editor and submit", 48, 10,
            highlight={"selector": "#editor .ql-editor", "words": True, "whole": True}),
    WebTask("text-transform", "type the text a picture shows and submit", 8, 6,
            page=({"selector": "#captcha, #area .text"},)),
    WebTask("tic-tac-toe", "win tic-tac-toe as X", 16, 8),
    WebTask("unicode-test", "click the button named in another script", 24, 6),
    WebTask("use-autocomplete", "enter an item through the autocomplete", 24, 8, typed=("start", "end")),
    WebTask("use-autocomplete-nodelay", "use-autocomplete without the delay", 24, 8, typed=("start", "end")),
    WebTask("use-colorwheel", "pick the named colour on a colour wheel",
            unsupported=_CONTINUOUS.format(what="the distance between a colour picked on a wheel and the asked one")),
    WebTask("use-colorwheel-2", "pick the shown colour on a colour wheel",
            unsupported=_CONTINUOUS.format(what="the distance between a colour picked on a wheel and the shown one")),
    WebTask("use-slider", "set a slider to a value and submit", 16, 30,
            any_keys=("ArrowLeft", "ArrowRight", "PageUp", "PageDown", "Home", "End")),
    WebTask("use-slider-2", "set three sliders to values and submit", 24, 40,
            any_keys=("ArrowLeft", "ArrowRight", "PageUp", "PageDown", "Home", "End")),
    WebTask("use-spinner", "set a spinner to a value and submit", 16, 12, typed=("target",)),
    WebTask("visual-addition", "count blocks in a picture and type the total", 32, 6, numbers=(0, 20)),
]

#: The FlightWoB sites the package registers beside the pages (``miniwob/flight.*``).
FLIGHTWOB: dict[str, str] = {
    name: ("a FlightWoB site (a real airline's booking pages in an iframe) served by the package's HTTP "
           "server, not a MiniWoB page: its many-page forms and their reward are a different benchmark")
    for name in ("flight.AA", "flight.Alaska", "flight.Alaska-auto")
}

CATALOGUE: dict[str, WebTask] = {t.name: t for t in _ENTRIES}


def offered() -> dict[str, WebTask]:
    """The tasks s1gym offers (not marked unsupported), by name."""
    return {name: t for name, t in CATALOGUE.items() if not t.unsupported}
