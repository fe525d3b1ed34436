"""What a MiniWoB++ page answers, apart from the browser: the engine's games and answers (:class:`WebGame`,
:class:`WebAnswer`), the characters an observation may hold (:data:`WEB_CHARSET`, :func:`clean`), and what
is read off a page or the miniwob package (:func:`page_text`, :func:`extract_fields`, :func:`task_url`).

:mod:`.engine` drives the page and gives these back; the env and the tests read them without Chromium.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any, NamedTuple

from s1gym.core import BASE_CHARSET

__all__ = ["WEB_CHARSET", "WebAnswer", "WebGame", "clean", "extract_fields", "page_text", "task_url"]

#: What the observation may contain: the printable characters of the Basic Multilingual Plane (pages
#: print accents, middle dots, arrows; unicode-test's buttons are Chinese, Japanese, Korean...);
#: anything else becomes "?".
WEB_CHARSET: frozenset[str] = frozenset(BASE_CHARSET) | frozenset(
    c for c in map(chr, range(0xA0, 0x10000)) if c.isprintable() and unicodedata.category(c)[0] != "C"
)


#: The ASCII characters outside :data:`WEB_CHARSET` (control characters).
_ASCII_OUTSIDE = re.compile(r"[^\t\n\r\x0b\x0c -~]")


def clean(text: str) -> str:
    """``text`` with every character outside :data:`WEB_CHARSET` as ``?``."""
    if text.isascii():  # most text: one regex pass instead of a set lookup per character
        return _ASCII_OUTSIDE.sub("?", text)
    return "".join(c if c in WEB_CHARSET else "?" for c in text)


class WebGame(NamedTuple):
    """What ``reset`` starts: a MiniWoB task and the page's random seed (a string, as MiniWoB's)."""

    task: str
    seed: str


class WebAnswer(NamedTuple):
    """What the page shows after a start or a move (the engine's answer; immutable)."""

    utterance: str
    fields: tuple[tuple[str, str], ...]
    page: str
    moves: tuple[str, ...]
    done: bool
    raw_reward: float
    reason: str
    error: str = ""
    #: the values of the page's visible form fields, (name, value) in document order (progress reads them)
    form: tuple[tuple[str, str], ...] = ()
    #: a digest of what the page holds that the text leaves out (selection, clipboard, the task area's
    #: classes, styles and scroll): part of the state key, never of the observation
    hidden: str = ""
    #: a memoryless task's page: for each move, the digest of the page's state it is remembered under in
    #: :data:`MEMO` (``web_page.js``: the document, focus, selection, clipboard, scroll; a move typing into a
    #: field leaves that field's value out) and where the pointer rests; ``()`` for other tasks
    memo: tuple[str, ...] = ()


def task_url(task: str) -> str:
    from miniwob.selenium_instance import HTML_DIR

    return (Path(HTML_DIR) / "miniwob" / f"{task}.html").as_uri()


def extract_fields(task: str, utterance: str | dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The instruction's fields: those the page gives with it (``{"text", "fields"}`` from
    ``__s1.utterance()``: MiniWoB's natural-language tasks), else MiniWoB's own extractor for the task
    (``()`` when it has none), as the miniwob package does."""
    from miniwob.fields import get_field_extractor

    if isinstance(utterance, dict):
        if utterance.get("fields") is not None:
            return tuple((str(k), str(v)) for k, v in utterance["fields"])
        utterance = str(utterance["text"])
    try:
        return tuple((str(k), str(v)) for k, v in get_field_extractor(task)(utterance))
    except (KeyError, ValueError):
        return ()


def page_text(snapshot: str) -> str:
    """Playwright's ARIA snapshot without link URLs (machine-specific file paths)."""
    lines = [line for line in snapshot.splitlines() if not line.lstrip().startswith("- /url:")]
    return clean("\n".join(lines))
