"""Learned progress estimates: how many moves a task expects are left from a situation.

``Search(heuristic="progress")`` (``--wrap-option heuristic=progress``) uses the task's estimate as its h.
The estimate belongs to the task, not to a decision model, so any task can ship one and Search finds it
through the task. How a task ships one (this is the one place it is described):

1. **Fit it** on what a player sees. :class:`TokenProgress` is the shipped form: a linear model of the moves
   left on the situation's tokens (:data:`TOKENS`: ALFWorld's :func:`context_tokens` -- the goal's words,
   what is held, where the player is, the verbs played, whether a goal word was seen -- or the
   TextWorldExpress games' ``progress_tokens``), ``max(0, w["*"] + sum of the weights of the tokens
   present)``. ``bench/alfworld_local.py`` and ``bench/twx_local.py`` fit them by ridge regression of the
   moves left along expert games.
2. **Store it** as the ``"progress"`` object (token -> weight) of a JSON file in ``s1gym/data``, with
   ``"progress_tokens"`` naming its tokens when they are not ALFWorld's (the file may hold other things too:
   Local's model of the task).
3. **Name it on the env class**: ``progress_model = "local_alfworld.json"``. The default
   :meth:`S1Env.progress_estimate <s1gym.core.S1Env.progress_estimate>` loads it once per process and
   returns it. A task whose estimate is something else overrides ``progress_estimate()`` (a classmethod)
   and returns any ``callable(situation) -> float`` (moves left, >= 0), or ``None`` when it has none.

Search asks the env at the root of each search (``env.progress_estimate()``); a task without an estimate
is a clear ``ValueError`` naming the task.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from s1gym.datasets import packaged
from s1gym.reading.twx_tokens import progress_tokens as twx_progress_tokens

if TYPE_CHECKING:
    from s1gym.core.situation import Situation

__all__ = [
    "FILLER",
    "GOAL_OPENERS",
    "STOPWORDS",
    "TokenProgress",
    "context_tokens",
    "feedback_words",
    "goal_words",
    "held_words",
    "load_progress",
    "words",
]

#: How a goal line or paragraph opens (``Your task is to: ...``, ``Goal: ...``), as a regex alternation.
GOAL_OPENERS = r"task\b|goal\b|your task\b|objective\b"
#: Function words that carry no goal.
STOPWORDS = frozenset("a an the in on of to with into from at and or is it this that you your".split())
#: Words that carry no goal (the template around ALFWorld's and TextWorld's goals).
FILLER = STOPWORDS | frozenset("task some them put find".split())

_WORD = re.compile(r"[a-z]+")
_GOAL_LINE = re.compile(rf"^\s*({GOAL_OPENERS})[^\n]*", re.IGNORECASE | re.MULTILINE)
_CARRYING = re.compile(r"You are carrying ([^\n]*?)\.?$", re.MULTILINE)
_AT = re.compile(r"You are at ([^\n.]*)\.", re.MULTILINE)


def words(text: str) -> list[str]:
    """Lower-case words without digits (``cabinet 2`` -> ``cabinet``)."""
    return _WORD.findall(text.lower())


def goal_words(state_text: str, notes: Sequence[str] = ()) -> frozenset[str]:
    """Content words of the goal lines (the first line of each goal paragraph) and the notes."""
    lines = [m.group(0).split(":", 1)[-1] for m in _GOAL_LINE.finditer(state_text)]
    return frozenset(w for line in (*lines, *notes) for w in words(line) if w not in FILLER)


def held_words(state_text: str) -> list[str]:
    """The content words of what the player carries (``You are carrying ...``); empty when nothing."""
    m = _CARRYING.search(state_text)
    if not m or m.group(1).strip().lower() in ("nothing", ""):
        return []
    return [w for w in words(m.group(1)) if w not in FILLER]


def feedback_words(text: str) -> set[str]:
    """The content words of a game's answer."""
    return {w for w in words(text) if w not in FILLER}


def context_tokens(situation: Situation, goal: frozenset[str] | None = None) -> list[str]:
    """The situation's tokens: ``*`` (always), ``g:<goal word>``, ``hold:g|x|-`` (carrying something the goal
    names, something else, nothing), ``at:g|x`` (the place is named by the goal or not), ``did:<verb>`` and
    ``did:<verb>+g`` (verbs played, and those whose move named a goal word), ``seen:g`` (a goal word other
    than the move's showed up in the game's answers)."""
    state = situation.state_text or ""
    goal = goal_words(state, situation.notes) if goal is None else goal
    out = ["*", *(f"g:{w}" for w in sorted(goal))]
    held = held_words(state)
    out.append("hold:-" if not held else ("hold:g" if goal & set(held) else "hold:x"))
    at = _AT.search(state)
    if at:
        out.append("at:g" if goal & set(words(at.group(1))) else "at:x")
    did = set()
    seen = False
    for move, feedback in situation.history:
        mw = words(move)
        if not mw:
            continue
        did.add(f"did:{mw[0]}")
        if goal & set(mw[1:]):
            did.add(f"did:{mw[0]}+g")
        if not seen and goal & (feedback_words(feedback) - set(mw)):
            seen = True
    out.extend(sorted(did))
    if seen:
        out.append("seen:g")
    return out


#: How a progress estimate reads a situation, by the name its data file gives (``"progress_tokens"``; default
#: ``alfworld``): ALFWorld's :func:`context_tokens`, or the TextWorldExpress games' tokens
#: (:func:`s1gym.reading.twx_tokens.progress_tokens`: what is held, missing, still to cut or cook, the map walked).
TOKENS = {"alfworld": context_tokens, "twx": twx_progress_tokens}


@dataclass(frozen=True)
class TokenProgress:
    """A learned estimate of the moves left: a weight per situation token (see the module docstring)."""

    weights: Mapping[str, float] = field(default_factory=dict)
    #: which of :data:`TOKENS` reads the situation
    tokens: str = "alfworld"

    def __post_init__(self) -> None:
        if self.tokens not in TOKENS:
            raise ValueError(f"unknown progress tokens {self.tokens!r}; known: {sorted(TOKENS)}")

    def __call__(self, situation: Situation) -> float:
        """Predicted moves left (>= 0) from the situation's tokens; 0 without weights."""
        w = self.weights
        if not w:
            return 0.0
        tokens = TOKENS[self.tokens](situation)
        return max(0.0, w.get("*", 0.0) + sum(w.get(t, 0.0) for t in tokens if t != "*"))


@lru_cache(maxsize=None)
def load_progress(name: str) -> TokenProgress:
    """The estimate in the ``"progress"`` object of the packaged data file ``name`` (loaded once)."""
    data = json.loads(packaged(name).read_text())
    if not data.get("progress"):
        raise ValueError(f"s1gym/data/{name} holds no progress estimate (no \"progress\" weights)")
    return TokenProgress(dict(data["progress"]), data.get("progress_tokens", "alfworld"))
