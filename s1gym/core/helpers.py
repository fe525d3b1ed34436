"""Small helpers every task shares: the observation charset, a text's facts, a copy of an RNG, the index an
action names."""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["BASE_CHARSET", "action_index", "charset_for", "copy_generator", "text_atoms"]

#: Characters every task may print: printable ASCII (letters, digits,
#: punctuation, space, tab, newline). Tasks that show arbitrary text (trivia,
#: tickets, injection texts) extend it with :func:`charset_for`.
BASE_CHARSET: frozenset[str] = frozenset(string.printable)


def charset_for(texts: Iterable[str]) -> frozenset[str]:
    """The base charset plus every character that occurs in ``texts``."""
    chars = set(BASE_CHARSET)
    for text in texts:
        chars.update(text)
    return frozenset(chars)


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\s*\n+\s*")


def text_atoms(text: str) -> frozenset[str]:
    """The sentences and lines of ``text``, as facts for :meth:`S1Env.state_atoms`."""
    return frozenset(p for p in _SENTENCE.split(text) if p.strip())


def copy_generator(rng: np.random.Generator) -> np.random.Generator:
    """A generator that continues exactly where ``rng`` is (cheaper than ``deepcopy``: docs/benchmarks.md)."""
    bit_generator = type(rng.bit_generator)(0)
    bit_generator.state = rng.bit_generator.state
    return np.random.Generator(bit_generator)


def action_index(action: Any) -> int | None:
    """The index ``action`` names (an ``int`` or a NumPy integer scalar), ``None`` for anything else: what
    :meth:`S1Env.step` accepts as a move (``None`` makes it an invalid no-op, never an exception)."""
    if type(action) is int:
        return action
    try:
        arr = np.asarray(action)
    except Exception:
        return None
    if arr.shape != () or not np.issubdtype(arr.dtype, np.integer):
        return None
    return int(arr)
