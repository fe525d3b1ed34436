"""Arithmetic goals for the calculator task: read a goal, compute its value, plan the button presses.

A goal is English or symbols: ``"compute 12 times 7"``, ``"subtract 19 from 64"``,
``"divide 84 by 7"``, ``"what is (3 + 4) × 5?"``, ``"the square root of 81"``. :func:`parse`
turns it into tokens (numbers and ``+ − × ÷ ( ) ² √``), :func:`evaluate` computes it exactly
(fractions; the usual precedence, which mate-calc follows), :func:`plan` lists the buttons that
type it and ``result``. :func:`generate` draws goals with exact answers for ``reset(seed)``.
:func:`same_value` compares what the display shows with the expected answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from math import isqrt

import numpy as np

from s1gym.errors import S1GymError

__all__ = ["Goal", "GoalError", "evaluate", "generate", "glyphs", "parse", "plan", "same_value"]

#: The button that types each glyph (mate-calc's accessible names).
BUTTON_OF = {
    **{str(d): str(d) for d in range(10)},
    ".": "numeric_point",
    "+": "add",
    "−": "subtract",
    "×": "multiply",
    "÷": "divide",
    "(": "start_group",
    ")": "end_group",
    "²": "x_squared",
    "√": "square_root",
    "%": "percentage",
}
#: The glyph each button types (what the display shows for it).
GLYPH_OF = {b: g for g, b in BUTTON_OF.items()}

_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


class GoalError(S1GymError, ValueError):
    """A goal this task cannot read (or whose value it cannot compute exactly)."""


@dataclass(frozen=True)
class Goal:
    """What an episode asks: the goal as the player reads it and the value the display must show."""

    text: str
    expect: str


# Verb forms first (their operand order differs from the infix reading), then infix words.
_NUM = r"(-?\d+(?:\.\d+)?)"
_VERBS = [
    (re.compile(rf"^add {_NUM} (?:and|to) {_NUM}$"), "{0} + {1}"),
    (re.compile(rf"^subtract {_NUM} from {_NUM}$"), "{1} − {0}"),
    (re.compile(rf"^multiply {_NUM} (?:by|and) {_NUM}$"), "{0} × {1}"),
    (re.compile(rf"^divide {_NUM} by {_NUM}$"), "{0} ÷ {1}"),
    (re.compile(rf"^(?:the )?square root of {_NUM}$"), "√{0}"),
    (re.compile(rf"^(?:the )?square of {_NUM}$"), "{0}²"),
]
_WORDS = [
    (r"\bmultiplied by\b|\btimes\b|\*|(?<=\d)\s*x\s*(?=\d)", " × "),
    (r"\bdivided by\b|\bover\b|/", " ÷ "),
    (r"\bplus\b", " + "),
    (r"\bminus\b|-|\u2013", " − "),
    (r"\bsquared\b|\^\s*2\b", "²"),
    (r"\b(?:the )?square root of\b|\bsqrt\b", "√"),
]
_LEAD = re.compile(r"^(?:please\s+)?(?:compute|calculate|evaluate|work out|what is|what's|find)\s*:?\s*")
_TOKEN = re.compile(r"\s*(\d+(?:\.\d+)?|[+−×÷()²√])")


def parse(goal: str) -> list[str]:
    """The tokens of ``goal``: numbers (as typed) and the operators ``+ − × ÷ ( ) ² √``."""
    text = _LEAD.sub("", goal.strip().lower()).rstrip(" .?!=").strip()
    for pattern, form in _VERBS:
        m = pattern.match(text)
        if m:
            text = form.format(*m.groups())
            break
    for pattern, replacement in _WORDS:
        text = re.sub(pattern, replacement, text)
    tokens, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise GoalError(
                f"cannot read the goal {goal!r} at {text[pos:]!r}: use numbers with plus/minus/times/"
                "divided by (or + − × ÷ * /), parentheses, 'squared', 'square root of', or 'add A and B', "
                "'subtract A from B', 'multiply A by B', 'divide A by B'"
            )
        tokens.append(m.group(1))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    if not tokens:
        raise GoalError(f"the goal {goal!r} names no computation")
    return tokens


def evaluate(tokens: list[str]) -> Fraction:
    """The exact value of ``tokens``: ``×``/``÷`` before ``+``/``−``, unary minus, ``²``, ``√`` of squares."""
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        if pos >= len(tokens):
            raise GoalError(f"the expression {' '.join(tokens)!r} ends too early")
        pos += 1
        return tokens[pos - 1]

    def expr() -> Fraction:
        value = term()
        while peek() in ("+", "−"):
            value = value + term() if take() == "+" else value - term()
        return value

    def term() -> Fraction:
        value = factor()
        while peek() in ("×", "÷"):
            op, right = take(), factor()
            if op == "÷" and right == 0:
                raise GoalError(f"the expression {' '.join(tokens)!r} divides by zero")
            value = value * right if op == "×" else value / right
        return value

    def factor() -> Fraction:
        if peek() == "−":
            take()
            return -factor()
        if peek() == "√":
            take()
            value = factor()
            root = _exact_sqrt(value)
            if root is None:
                raise GoalError(f"√{value} is not exact: give the expected display as expect=")
            return root
        value = primary()
        while peek() == "²":
            take()
            value = value * value
        return value

    def primary() -> Fraction:
        tok = take()
        if tok == "(":
            value = expr()
            if take() != ")":
                raise GoalError(f"unbalanced parentheses in {' '.join(tokens)!r}")
            return value
        if tok[0].isdigit():
            return Fraction(tok)
        raise GoalError(f"unexpected {tok!r} in {' '.join(tokens)!r}")

    value = expr()
    if pos != len(tokens):
        raise GoalError(f"unexpected {tokens[pos]!r} in {' '.join(tokens)!r}")
    return value


def _exact_sqrt(value: Fraction) -> Fraction | None:
    if value < 0:
        return None
    n, d = isqrt(value.numerator), isqrt(value.denominator)
    return Fraction(n, d) if n * n == value.numerator and d * d == value.denominator else None


def format_value(value: Fraction) -> str:
    """``value`` as the display writes it when it is exact in decimals ("84", "-12", "2.5")."""
    d = value.denominator
    while d % 2 == 0:
        d //= 2
    while d % 5 == 0:
        d //= 5
    if d != 1:
        raise GoalError(f"{value} has no exact decimal form: give the expected display as expect=")
    text = format(Decimal(value.numerator) / Decimal(value.denominator), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def glyphs(tokens: list[str]) -> list[str]:
    """One glyph per button press: the characters of the numbers and the operators."""
    return [ch for tok in tokens for ch in tok]


def plan(tokens: list[str]) -> list[str]:
    """The buttons that type ``tokens`` and then ``result``."""
    return [BUTTON_OF[g] for g in glyphs(tokens)] + ["result"]


def display_number(text: str) -> Decimal | None:
    """The number a display text shows ("84", "−12", "2.5", "1.2×10⁵"), or ``None``."""
    t = text.replace("−", "-").replace(" ", "").replace(",", "")
    m = re.fullmatch(r"(-?\d+(?:\.\d*)?)(?:×10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+))?", t)
    if m is None:
        return None
    try:
        mantissa = Decimal(m.group(1))
        return mantissa.scaleb(int(m.group(2).translate(_SUPERSCRIPT))) if m.group(2) else mantissa
    except (InvalidOperation, ValueError):
        return None


def same_value(display: str, expect: str) -> bool:
    """The display shows ``expect``: equal numbers when both read as numbers, else equal text."""
    shown, wanted = display_number(display), display_number(expect.strip())
    if shown is not None and wanted is not None:
        return shown == wanted
    return display.strip() == expect.strip()


# Goals for reset(seed): two operands, an exact integer answer, one of a few phrasings each.
_PHRASES = {
    "×": ("compute {a} times {b}", "multiply {a} by {b}", "what is {a} × {b}?"),
    "+": ("compute {a} plus {b}", "add {a} and {b}", "what is {a} + {b}?"),
    "−": ("compute {a} minus {b}", "subtract {b} from {a}", "what is {a} − {b}?"),
    "÷": ("compute {a} divided by {b}", "divide {a} by {b}", "what is {a} ÷ {b}?"),
}


def generate(rng: np.random.Generator) -> Goal:
    """A goal drawn from ``rng``: ``a op b`` with operands up to 3 digits and an exact integer answer."""
    op = ("×", "+", "−", "÷")[int(rng.integers(4))]
    if op == "×":
        a, b = int(rng.integers(2, 100)), int(rng.integers(2, 20))
    elif op == "÷":
        b, q = int(rng.integers(2, 13)), int(rng.integers(2, 100))
        a = b * q
    else:
        a, b = int(rng.integers(2, 1000)), int(rng.integers(2, 1000))
    forms = _PHRASES[op]
    text = forms[int(rng.integers(len(forms)))].format(a=a, b=b)
    return Goal(text, format_value(evaluate(parse(text))))


def goal_from(text: str, expect: str | None) -> Goal:
    """The goal of the ``goal``/``expect`` options (``expect`` computed from the goal when not given)."""
    if not isinstance(text, str) or not text.strip():
        raise GoalError(f"goal must be a non-empty string, got {text!r}")
    if expect is None:
        try:
            expect = format_value(evaluate(parse(text)))
        except GoalError as exc:
            raise GoalError(f"{exc}; or pass expect='...' with the value the display must show") from None
    elif not isinstance(expect, (str, int)) or not str(expect).strip():
        raise GoalError(f"expect must be the value the display must show, e.g. '84'; got {expect!r}")
    return Goal(text.strip(), str(expect).strip())
