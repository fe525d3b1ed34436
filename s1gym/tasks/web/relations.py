"""What a move would do, set against what the instruction asks, read off the page a player sees.

:func:`tokens` (called by :mod:`s1gym.tasks.web.tokens`) names relations the move's text alone does not
show: a number shown on the page against the number asked (sliders, spinners: which way a key or a
button moves it and how far it is: ``gap:toward|step|1-4``; every asked number shown: ``nums:met``); a
condition the instruction sets (``greater than 4``) met by the number shown now (``cond:met``); feedback
(``higher than 5``) against a typed guess; a typed number that solves the page's sum or equation
(``num:solves``); the calendar's month against the asked date (``cal:prev|earlier``) and a day cell of the
asked date; the item a superlative (``longest``, ``cheapest``, ``greatest``) ranks first among its peers;
a heading that names an instruction word (``head:hit``); the label printed before a clicked value
(``Phone:``) and the instruction word before a name (``by``, ``to``); a table row that pairs a typed value
with its box's label (``row:pair``) or with what the instruction names (``row:asked``); a list of numbers
to sort, sorted or not; an odd/even button against its number; an ``@handle`` in a move's context; and
the picture, colour and drag names of :mod:`s1gym.tasks.web.picture`. :func:`distance` measures how far a
page is from the asked numbers and month, which Lookahead's outcome compares (``out:closer``).

Only the instruction, the page text and the moves are read; never a page's hidden fields.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from s1gym.tasks.web import picture
from s1gym.tasks.web.picture import as_number

__all__ = ["DATE", "PageFacts", "distance", "numbers", "read_facts", "tokens"]

_NUM = re.compile(r"(?<![\w.])-?\$?\d+(?:\.\d+)?(?![\w/])")
DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_HEADER = re.compile(r"\b(" + "|".join(m.capitalize() for m in _MONTHS) + r") (\d{4})\b")
_COND = re.compile(r"\b(greater|more|higher|larger|bigger|above|over|less|lower|smaller|fewer|below|under) than "
                   r"\$?(-?\d+(?:\.\d+)?)")
_FEEDBACK = re.compile(r"\b(higher|lower) than (-?\d+)")
_RANGE = re.compile(r"between (-?\d+)\s*(?:-|and|to)\s*(-?\d+)")
_ITEM = re.compile(r'^\s*- (?:listitem|option): "?(?P<name>[^"\n]*?)"?$', re.MULTILINE)
_ROW = re.compile(r'- row "([^"]*)"')
_UP_KEYS = {"ArrowRight": "step", "ArrowUp": "step", "PageUp": "page", "End": "end"}
_DOWN_KEYS = {"ArrowLeft": "step", "ArrowDown": "step", "PageDown": "page", "Home": "end"}
_UP_NAMES = {"up", "increment", "+", "▲", "more"}
_DOWN_NAMES = {"down", "decrement", "-", "▼", "less"}
_BIG = {"greater", "more", "higher", "larger", "bigger", "above", "over"}
#: superlative -> (which end, the kind of quantity it ranks)
_SUPERLATIVES = {"longest": ("max", "duration"), "shortest": ("min", "duration"), "cheapest": ("min", "money"),
                 "expensive": ("max", "money"), "greatest": ("max", "number"), "largest": ("max", "number"),
                 "biggest": ("max", "number"), "highest": ("max", "number"), "most": ("max", "number"),
                 "smallest": ("min", "number"), "lowest": ("min", "number"), "least": ("min", "number"),
                 "fewest": ("min", "number")}


def numbers(text: str) -> list[float]:
    """The numbers a text shows (``$49.30`` -> 49.3; dates and ordinals like ``2nd`` are not numbers)."""
    return [float(n.replace("$", "")) for n in _NUM.findall(DATE.sub(" ", text))]


def _readout(page: str) -> list[float]:
    """The numbers a page shows as values: its text lines and spin buttons, in order."""
    out: list[float] = []
    for line in page.splitlines():
        s = line.strip()
        if s.startswith("- text:") or s.startswith("- spinbutton"):
            body = s.split(":", 1)[1] if s.startswith("- text:") else s.rsplit(":", 1)[-1]
            out += numbers(body)
    return out


_SUM = re.compile(r"(-?\d+|x) ([-+x*/]) (-?\d+|x) =(?: (-?\d+|x)\b)?")


def _solves(value: float, equation: tuple[str, str, str, str | None] | None) -> bool | None:
    """Whether ``value`` solves the sum (``2 x 6 =``) or the equation in x (``2 + x = 63``) the page
    prints (``equation``: its parts); None when it prints neither."""
    if equation is None:
        return None
    a, op, b, c = equation
    if c is None:  # a sum to work out: 'x' is a times sign
        if "x" in (a, b):
            return None
        return abs(_apply(float(a), "*" if op == "x" else op, float(b)) - value) < 1e-9
    if op == "x" or [a, b, c].count("x") != 1:
        return None

    def val(t: str) -> float:
        return value if t == "x" else float(t)

    return abs(_apply(val(a), op, val(b)) - val(c)) < 1e-9


def _apply(a: float, op: str, b: float) -> float:
    return a + b if op == "+" else a - b if op == "-" else a * b if op == "*" else a / b if b else math.nan


@dataclass
class PageFacts:
    """What a situation's instruction and page say, read once for all its moves."""

    utter: str
    words: set[str]
    page: str
    played: list[str]
    asked: list[float] = field(default_factory=list)
    shown: list[float] = field(default_factory=list)
    focus: int = 0
    date: tuple[int, int, int] | None = None
    month: int | None = None  # the calendar's month as year * 12 + month - 1
    cond: tuple[str, float] | None = None
    feedback: tuple[str, float] | None = None
    span: tuple[float, float] | None = None
    shapes: list[dict] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    rows: list[str] = field(default_factory=list)
    superlative: tuple[str, str] | None = None
    handles: set[str] = field(default_factory=set)
    headings: list[str] = field(default_factory=list)
    equation: tuple[str, str, str, str | None] | None = None
    order: str | None = None  # a list of numbers the instruction asks to sort: 'sorted' or 'unsorted'


def read_facts(utter: str, page: str, played: Sequence[str], words: set[str]) -> PageFacts:
    f = PageFacts(utter, words, page, list(played))
    f.asked = numbers(re.sub(r"\b\d+(?:st|nd|rd|th)\b", " ", utter))
    f.shown = _readout(page)
    f.focus = _focus(played)
    d = DATE.search(utter)
    if d:
        f.date = (int(d[3]), int(d[1]), int(d[2]))
    h = _HEADER.search(page)
    if h:
        f.month = int(h[2]) * 12 + _MONTHS.index(h[1].lower())
    c = _COND.search(utter.lower())
    if c:
        f.cond = ("big" if c[1] in _BIG else "small", float(c[2]))
    fb = _FEEDBACK.search(page.lower())
    if fb:
        f.feedback = (fb[1], float(fb[2]))
    r = _RANGE.search(utter)
    if r:
        f.span = (float(r[1]), float(r[2]))
    f.shapes = picture.read_shapes(page)
    f.items = [m["name"].strip() for m in _ITEM.finditer(page)]
    f.rows = [r.lower() for r in _ROW.findall(page)]
    f.superlative = next((_SUPERLATIVES[w] for w in words if w in _SUPERLATIVES), None)
    f.handles = {h.lower() for h in re.findall(r"@\w+", utter)}
    f.headings = re.findall(r'- heading "([^"]*)"', page)
    nums = [as_number(x) for x in f.items]
    if f.items and all(x is not None for x in nums) and picture.ORDER.search(utter.lower()):
        want = sorted(nums, reverse=bool(re.search(r"decreasing|descending", utter.lower())))
        f.order = "sorted" if nums == want else "unsorted"
    sum_ = _SUM.search(page)
    f.equation = sum_.groups() if sum_ else None  # type: ignore[assignment]
    return f


def _focus(played: Sequence[str]) -> int:
    """Which of several numbered controls the last click named (``slider 2`` -> 1), else 0."""
    for move in reversed(played):
        if move.startswith("click "):
            m = re.search(r'"[^"]*?(\d+)"', move)
            return int(m[1]) - 1 if m and int(m[1]) <= 9 else 0
    return 0


def _bucket(x: float) -> str:
    x = abs(x)
    return "0" if x < 1e-9 else "1-4" if x < 5 else "5-19" if x < 20 else "20+"


def distance(f: PageFacts) -> float | None:
    """How far the page is from what the instruction asks: the asked numbers' gaps (when the page shows as
    many values) plus the calendar's months from the asked date; None when neither is read."""
    total, known = 0.0, False
    if f.asked and len(f.asked) == len(f.shown):
        total += sum(abs(a - s) for a, s in zip(f.asked, f.shown, strict=True))
        known = True
    if f.date and f.month is not None:
        total += abs(f.date[0] * 12 + f.date[1] - 1 - f.month) * 100
        known = True
    return total if known else None


def _direction(verb: str, name: str | None) -> tuple[int, str] | None:
    if verb == "press" and name in _UP_KEYS:
        return 1, _UP_KEYS[name]
    if verb == "press" and name in _DOWN_KEYS:
        return -1, _DOWN_KEYS[name]
    low = (name or "").strip().lower()
    if verb == "click" and low in _UP_NAMES:
        return 1, "step"
    if verb == "click" and low in _DOWN_NAMES:
        return -1, "step"
    return None


def tokens(f: PageFacts, text: str, verb: str, role: str, name: str | None, value: str | None,
           context: str | None, peers: Sequence[tuple[str, str, str | None]], kind: str) -> list[str]:
    """The relation names of one move (see the module docstring). ``peers`` are every move's (verb, role,
    name), for ranks among moves of the same kind; ``kind`` names the move's kind, which what is true of
    the whole page (``nums:met``, ``cond:met``) is joined to."""
    out: list[str] = []
    out += _number_tokens(f, verb, role, name, value, kind)
    out += _date_tokens(f, verb, role, name)
    if f.order is not None:
        out.append(f"list:{f.order}|{kind}")
    if f.headings:
        hit = any(w in f.words for h in f.headings for w in re.findall(r"[a-z]{3,}", h.lower()))
        out.append(f"head:{'hit' if hit else 'miss'}|{kind}")
    out += picture.picture_tokens(f.shapes, f.words, f.utter, text, verb, role, name)
    out += _rank_tokens(f, verb, role, name, peers)
    out += _label_tokens(f, verb, role, name, value, context)
    if verb == "drag":
        out += picture.drag_tokens(f.items, f.shapes, f.words, f.utter, text, name, value)
    return out


def _number_tokens(f: PageFacts, verb: str, role: str, name: str | None, value: str | None,
                   kind: str) -> list[str]:
    out = []
    paired = bool(f.asked) and len(f.asked) == len(f.shown)
    if paired:
        open_ = [abs(a - s) > 1e-9 for a, s in zip(f.asked, f.shown, strict=True)]
        out.append(f"nums:{'open' if any(open_) else 'met'}|{kind}")
        k = min(f.focus, len(f.asked) - 1)
        gap = f.asked[k] - f.shown[k]
        way = _direction(verb, name)
        if way:
            sign, size = way
            toward = "zero" if abs(gap) < 1e-9 else "toward" if gap * sign > 0 else "away"
            out += [f"gap:{toward}|{size}", f"gap:{toward}|{size}|{_bucket(gap)}"]
        m = re.search(r"(\d+)$", name or "")
        if verb == "click" and m and len(f.asked) > 1 and 1 <= int(m[1]) <= len(f.asked):
            i = int(m[1]) - 1
            out.append(f"ctl:{'open' if open_[i] else 'done'}|{'focused' if i == k else 'other'}")
            out.append(f"ctl:first_open:{i == open_.index(True)}" if any(open_) else "ctl:none_open")
    if f.cond is not None:
        now = f.shown[0] if f.shown else None
        met = ("none" if now is None else "equal" if now == f.cond[1]
               else "met" if (now > f.cond[1]) == (f.cond[0] == "big") else "unmet")
        out.append(f"cond:{met}|{kind}")
    v = as_number(value) if verb in ("type", "select") else None
    if v is not None:
        if any(abs(v - a) < 1e-9 for a in f.asked):
            out.append("num:asked")
        solved = _solves(v, f.equation)
        if solved is not None:
            out.append(f"num:{'solves' if solved else 'wrong'}")
        if f.feedback:
            want, g = f.feedback
            fits = v > g if want == "higher" else v < g
            out.append(f"fb:{'fits' if fits else 'violates'}")
            if v == g + (1 if want == "higher" else -1):
                out.append("fb:next")
        elif f.span:
            out.append(f"fb:start|{'mid' if v == math.floor(sum(f.span) / 2 + 0.5) else 'other'}")
    return out


def _date_tokens(f: PageFacts, verb: str, role: str, name: str | None) -> list[str]:
    if f.date is None or f.month is None or verb != "click":
        return []
    year, month, day = f.date
    need = year * 12 + month - 1 - f.month
    where = "same" if need == 0 else "earlier" if need < 0 else "later"
    low = (name or "").strip().lower()
    if low in ("prev", "next", "previous", "<", ">"):
        return [f"cal:{'prev' if low in ('prev', 'previous', '<') else 'next'}|{where}"]
    if name and name.strip().isdigit():
        return [f"cal:day|{'hit' if int(name) == day else 'miss'}|{where}"]
    return []


def _quantities(f: PageFacts, role: str, name: str | None) -> dict[str, float]:
    """A move's quantities by kind: ``money`` (``$857`` in its name), ``number`` (a lone number in its
    name), ``duration`` (``9h 39m`` on the page line before its element, in minutes)."""
    out: dict[str, float] = {}
    money = re.search(r"\$(\d+(?:\.\d+)?)", name or "")
    if money:
        out["money"] = float(money[1])
    else:
        v = numbers(name or "")
        if len(v) == 1:
            out["number"] = v[0]
    lines = f.page.splitlines()
    for i, line in enumerate(lines):
        if i > 0 and f'{role} "{name}"' in line:
            d = re.search(r"(\d+)h (\d+)m", lines[i - 1])
            if d:
                out["duration"] = int(d[1]) * 60 + int(d[2])
            break
    return out


def _rank_tokens(f: PageFacts, verb: str, role: str, name: str | None,
                 peers: Sequence[tuple[str, str, str | None]]) -> list[str]:
    """Whether the move's quantity of the kind the superlative asks (``shortest``: a duration,
    ``cheapest``: money, ``greatest``: a number) is the best among the moves of its verb and role."""
    if f.superlative is None or verb != "click":
        return []
    group = [n for v, r, n in peers if v == verb and r == role]
    if len(group) < 2:
        return []
    how, kind = f.superlative
    mine = _quantities(f, role, name).get(kind)
    values = [q[kind] for q in (_quantities(f, role, n) for n in group) if kind in q]
    if mine is None or len(values) < 2:
        return []
    best = max(values) if how == "max" else min(values)
    return [f"rank:{'best' if mine == best else 'other'}", f"rank:{kind}|{'best' if mine == best else 'other'}"]


def _label_tokens(f: PageFacts, verb: str, role: str, name: str | None, value: str | None,
                  context: str | None) -> list[str]:
    out = []
    if name and verb == "click" and len(name) > 1:
        found = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", f.page)
        at = found.start() if found else -1
        if at > 0:
            before = re.findall(r"([A-Za-z][\w ]*?):\s*$", f.page[max(0, at - 40):at])
            if before:
                label = before[-1].strip().lower().split()[-1]
                out.append(f"lbl:{'hit' if label in f.words else 'miss'}")
    subject = value if verb in ("type", "select") and value else name
    first = re.findall(r"[A-Za-z]{3,}", subject or "")
    if first:
        m = re.search(rf"(\w+)\W+{re.escape(first[0])}\b", f.utter, re.IGNORECASE)
        if m and m[1].lower() not in ("the", "a", "an"):
            out.append(f"pw:{m[1].lower()}")
    if verb == "type" and value and f.rows:
        low = value.lower()
        row = next((r for r in f.rows if r.endswith(f" {low}")), None)
        if name:
            label = name.strip().rstrip(":").lower()
            out.append(f"row:{'pair' if row == f'{label} {low}' else 'no'}")
        key = row[: -len(low) - 1] if row else ""
        said = bool(key) and all(w in f.words for w in re.findall(r"[a-z0-9]+", key))
        out.append(f"row:{'asked' if said else 'not_asked'}")
    if context and f.handles:
        hit = any(re.search(rf"(?<!\w){re.escape(h)}(?!\w)", context.lower()) for h in f.handles)
        out.append(f"ctx:handle_{'hit' if hit else 'miss'}")
    low = (name or "").lower()
    if low in ("odd", "even") and context:
        n = [int(x) for x in re.findall(r"-?\d+", context)]
        if len(n) == 1:
            out.append(f"par:{'hit' if (n[0] % 2 == 0) == (low == 'even') else 'miss'}")
    return out
