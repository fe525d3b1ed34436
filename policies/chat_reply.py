"""Reading a chat completion: the reply text, its finish reason, and option probabilities from logprobs.

What OpenAI-compatible servers really send differs: ``content: null``, ``finish_reason: "length"``, no
``usage``, numbers as one token, with a leading space, or a token per digit (tests/test_chat_server.py
plays a real llama.cpp server; tests/test_chat.py the rest on a scripted one).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from s1gym.policies.errors import PolicyResponseError

__all__ = ["parse_option", "probabilities_from_logprobs", "reply_of", "token_count"]


def reply_of(data: Mapping[str, Any]) -> tuple[str, list[Mapping[str, Any]], str | None]:
    """The reply text (``""`` for ``content: null``), its per-token logprobs (``[]`` when absent) and
    ``finish_reason`` (``"length"``: cut by ``max_tokens``)."""
    try:
        choice = data["choices"][0]
        content = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        raise PolicyResponseError(f"Chat: the response has no choices[0].message: {str(data)[:200]}") from None
    logprobs = choice.get("logprobs") or {}
    tokens = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    finish = choice.get("finish_reason")
    return str(content), [t for t in tokens or [] if isinstance(t, Mapping)], finish if isinstance(finish, str) else None


def token_count(value: Any) -> int:
    """A token count as the server reported it (0 when absent or not a count)."""
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


_NUMBER = re.compile(r"\d+")


def parse_option(reply: str, texts: Sequence[str]) -> int | None:
    """The 0-based option a reply names: its first number (1..n), else an exact candidate text."""
    match = _NUMBER.search(reply)
    if match:
        k = int(match.group())
        return k - 1 if 1 <= k <= len(texts) else None
    cleaned = reply.strip().strip(".!\"'`").strip().lower()
    lowered = [t.lower() for t in texts]
    return lowered.index(cleaned) if cleaned and cleaned in lowered else None


def _logprob_entries(token: Mapping[str, Any]) -> list[tuple[str, float]]:
    """(text, probability) of a token position's listed alternatives (the token itself when none are)."""
    out = []
    for entry in token.get("top_logprobs") or [token]:
        try:
            out.append((str(entry.get("token", "")), math.exp(float(entry["logprob"]))))
        except (KeyError, TypeError, ValueError, OverflowError, AttributeError):
            continue
    return out


def _digits(text: str, depth: int) -> str:
    """A token's text as part of the answer's number: the first may carry a leading space."""
    return text.strip() if depth == 0 else text


def _own_probability(token: Mapping[str, Any]) -> float:
    """The probability of the token the server chose (when its alternatives do not list it)."""
    try:
        return math.exp(float(token["logprob"]))
    except (KeyError, TypeError, ValueError, OverflowError):
        return 0.0


def probabilities_from_logprobs(
    tokens: Sequence[Mapping[str, Any]], reply: str, index: int, n: int
) -> tuple[np.ndarray, str]:
    """Option probabilities read off the answer's number tokens, else one-hot on ``index``.

    Tokenizers differ in how they write a number: one token (``"12"``), a leading space (``" 12"``) or
    a token per digit (``"1"``, ``"2"``, as Llama and Gemma do). The reply's digit tokens are followed as
    a path through the options' decimal strings: at each position the listed alternatives send their
    mass to the options they begin (a digit), or end the number there (anything else); mass a position
    did not list, and an alternative digit whose continuation the server never showed, is shared by the
    options that prefix could still become. After the last digit token the number ends (the next token,
    when the reply has one, says how often it would have gone on). Mass the first position did not list
    goes to the options that got none, each at most the least probable token listed there (an unlisted
    token is no likelier than a listed one): a model that would rather have written words, whose
    alternatives are mostly not numbers, does not hand that mass to the options it never named.
    The result is normalised over the options: the odds of each, given that the answer is one.
    """
    one_hot = np.zeros(n)
    one_hot[index] = 1.0
    number = _NUMBER.search(reply)
    steps = [t for t in tokens if isinstance(t, Mapping)]
    while steps and not str(steps[0].get("token", "")).strip():
        steps = steps[1:]  # whitespace the server sent before the answer
    if number is None:
        return one_hot, "reply"
    path: list[str] = []
    for t in steps:
        text = str(t.get("token", ""))
        text = text.strip() if not path else text
        if not text.isdigit() or not number.group().startswith("".join(path) + text):
            break
        path.append(text)
    if "".join(path) != number.group():
        return one_hot, "reply"
    labels = [str(k) for k in range(1, n + 1)]
    mass = np.zeros(n)

    def spread(prefix: str, p: float, cap: float = math.inf) -> None:
        """``p`` shared by the options whose number begins with ``prefix`` (lost when none does), at most
        ``cap`` each."""
        hits = [i for i, label in enumerate(labels) if label.startswith(prefix)]
        for i in hits:
            mass[i] += min(p / len(hits), cap)

    reach, prefix, first_listed, first_floor = 1.0, "", 0.0, math.inf
    for depth, position in enumerate(steps[: len(path) + 1]):
        entries = _logprob_entries(position)
        on_path = path[depth] if depth < len(path) else None
        if on_path is not None and not any(_digits(text, depth) == on_path for text, _ in entries):
            entries.append((str(position.get("token", "")), _own_probability(position)))  # forced, unlisted
        listed = sum(p for _, p in entries)
        others = [p for text, p in entries if _digits(text, depth) != on_path]
        floor = min(others) if others else (entries[0][1] if entries else 0.0)
        if depth == 0:
            first_listed, first_floor = listed, floor
        for text, p in entries:
            digits = _digits(text, depth)
            if digits.isdigit():
                if digits != on_path:
                    spread(prefix + digits, reach * p)
            elif depth > 0 and prefix in labels:
                mass[labels.index(prefix)] += reach * p  # the number ends after the prefix
        if depth > 0:
            spread(prefix, reach * max(0.0, 1.0 - listed), cap=reach * floor)
        if on_path is None:
            break
        reach *= next(p for text, p in entries if _digits(text, depth) == on_path)
        prefix += on_path
    else:
        if prefix in labels:  # the reply ended after its number: the number ends there
            mass[labels.index(prefix)] += reach
    if mass.sum() <= 0:
        return one_hot, "reply"
    unseen = mass == 0
    leftover = max(0.0, 1.0 - first_listed)
    if unseen.any() and leftover > 0:
        mass[unseen] += min(leftover / unseen.sum(), first_floor)
    return mass / mass.sum(), "logprobs"
