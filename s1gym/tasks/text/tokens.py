"""The labelled-text tasks read as feature names, for Local's fitted models of TicketRouter and InjectionGuard.

The text being labelled is read off the observation (the lines after ``Text 1 of 1:``, whatever the noun);
its words and word pairs (lower case, numbers read as ``<num>``) are paired with each candidate label, so a
fitted model is a multinomial logistic regression over the labels. ``names_label`` marks a label whose
name's words start a word of the text (``refund`` in "I want my money refunded"), which carries over to
label sets a model was not fitted on.
"""

from __future__ import annotations

import re

from s1gym.core import Situation

__all__ = ["label_tokens", "labelled_text", "text_features"]

_HEADER = re.compile(r"^\w+ \d+ of \d+:\n", re.MULTILINE)
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


def labelled_text(state_text: str) -> str:
    """The text being labelled (after the ``Ticket 1 of 1:`` line); the whole text when there is none."""
    m = None
    for m in _HEADER.finditer(state_text):
        pass
    return state_text[m.end():] if m else state_text


def text_features(text: str) -> list[str]:
    """The distinct words and adjacent word pairs of ``text`` (lower case, digit runs as ``<num>``)."""
    words = ["<num>" if any(ch.isdigit() for ch in w) else w for w in _WORD.findall(text.lower())]
    pairs = [f"{a} {b}" for a, b in zip(words, words[1:])]
    return list(dict.fromkeys(words + pairs))


def _names_label(label: str, words: set[str]) -> bool:
    parts = [p for p in re.split(r"[\W_]+", label.lower()) if len(p) >= 3]
    return any(w.startswith(p[:5]) for p in parts for w in words)


def label_tokens(situation: Situation) -> list[list[str]]:
    """Per candidate label: ``label`` (its prior), ``label|feature`` for every feature of the text, and
    ``names_label`` when the text names it."""
    features = text_features(labelled_text(situation.state_text or ""))
    words = {f for f in features if " " not in f}
    rows = []
    for c in situation.candidates:
        label = c.text.lower()
        row = [f"label:{label}", *(f"{label}|{f}" for f in features)]
        if _names_label(label, words):
            row.append("names_label")
        rows.append(row)
    return rows
