"""Words read off what a player sees, shared by Local's features and the families' readers: how a goal
paragraph opens, the function words that carry no goal, and the longest shared phrase."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["GOAL_OPENERS", "STOPWORDS", "content_words", "phrase_haystack", "phrase_share", "phrase_share_in"]

#: How a goal line or paragraph opens (``Your task is to: ...``, ``Goal: ...``), as a regex alternation.
GOAL_OPENERS = r"task\b|goal\b|your task\b|objective\b"
#: Function words that carry no goal.
STOPWORDS = frozenset("a an the in on of to with into from at and or is it this that you your".split())

_WORD = re.compile(r"[a-z0-9]+")


def content_words(text: str) -> list[str]:
    """Lower-case words of ``text`` without the few function words that carry no goal."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def phrase_share(words: Sequence[str], text_words: Sequence[str]) -> float:
    """Longest run of consecutive ``words`` that also appears consecutively in ``text_words``, over len(words)."""
    return phrase_share_in(words, phrase_haystack(text_words))


def phrase_haystack(text_words: Sequence[str]) -> str:
    """``text_words`` joined for :func:`phrase_share_in` (build it once per text, not once per move)."""
    return f" {' '.join(text_words)} "


def phrase_share_in(words: Sequence[str], haystack: str) -> float:
    """:func:`phrase_share` against a prepared :func:`phrase_haystack`."""
    if not words:
        return 0.0
    best = 0
    for i in range(len(words)):
        for j in range(i + best + 1, len(words) + 1):
            if f" {' '.join(words[i:j])} " not in haystack:
                break
            best = j - i
    return best / len(words)
