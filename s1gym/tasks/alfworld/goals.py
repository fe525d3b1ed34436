"""ALFWorld's goals read from what a player sees: the goal's words, its thing, place and count, where the
player left the goal's thing, and :func:`context_tokens` (the situation tokens ALFWorld's pair model and its
progress estimate weigh)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from s1gym.models.words import GOAL_OPENERS, STOPWORDS

if TYPE_CHECKING:
    from s1gym.core.situation import Situation

__all__ = [
    "FILLER",
    "GOAL_OPENERS",
    "INSTANCE",
    "STOPWORDS",
    "Memory",
    "Target",
    "context_tokens",
    "feedback_words",
    "goal_target",
    "goal_words",
    "held_words",
    "memory",
    "words",
]

#: Words that carry no goal (the template around ALFWorld's and TextWorld's goals).
FILLER = STOPWORDS | frozenset("task some them put find".split())

_WORD = re.compile(r"[a-z]+")
_GOAL_LINE = re.compile(rf"^\s*({GOAL_OPENERS})[^\n]*", re.IGNORECASE | re.MULTILINE)
_CARRYING = re.compile(r"You are carrying ([^\n]*?)\.?$", re.MULTILINE)
_AT = re.compile(r"You are at ([^\n.]*)\.", re.MULTILINE)
#: An instance of a thing (``cellphone 2``).
INSTANCE = re.compile(r"\b([a-z]+) (\d+)\b")
_PLACE_WORD = re.compile(r"\b(?:in|on|under|with)\b")
#: The words of ALFWorld's goal templates (alfworld.gen.goal_library) around the thing and the place.
_TEMPLATE = FILLER | frozenset("find look examine heat cool clean hot cold two under".split())
_COUNTS = {"two": 2}


def words(text: str) -> list[str]:
    """Lower-case words without digits (``cabinet 2`` -> ``cabinet``)."""
    return _WORD.findall(text.lower())


def goal_words(state_text: str, notes: Sequence[str] = ()) -> frozenset[str]:
    """Content words of the goal lines (the first line of each goal paragraph) and the notes."""
    lines = [m.group(0).split(":", 1)[-1] for m in _GOAL_LINE.finditer(state_text)]
    return frozenset(w for line in (*lines, *notes) for w in words(line) if w not in FILLER)


@dataclass(frozen=True)
class Target:
    """What the goal line asks for: the ``thing`` it moves, the ``place`` it goes to, how many."""

    thing: str = ""
    place: str = ""
    count: int = 1


def goal_target(state_text: str) -> Target:
    """The thing, place and count of the first goal line (``put two cellphone in desk`` -> cellphone, desk, 2).

    The thing is the first word before the last ``in``/``on``/``under``/``with`` that is not a word of the
    goal templates; the place, the first such word after it. Empty when the line has no such shape.
    """
    m = _GOAL_LINE.search(state_text)
    if not m:
        return Target()
    line = m.group(0).split(":", 1)[-1].lower()
    parts = _PLACE_WORD.split(line)
    if len(parts) < 2:
        return Target()
    thing = next((w for w in words(" ".join(parts[:-1])) if w not in _TEMPLATE), "")
    place = next((w for w in words(parts[-1]) if w not in _TEMPLATE), "")
    count = max([_COUNTS.get(w, 1) for w in words(line)], default=1)
    return Target(thing, place, count)


@dataclass
class Memory:
    """Where the player left the goal's thing, from its moves and the game's answers (:func:`memory`)."""

    #: instances of the thing the player put at the goal's place (and did not take back)
    placed: set[str] = field(default_factory=set)
    #: instances of the thing the player holds
    held: set[str] = field(default_factory=set)
    #: other instances of the thing -> the place where they were last seen
    seen: dict[str, str] = field(default_factory=dict)
    #: places whose contents the player has seen (an answer there said what it holds, or nothing)
    checked: set[str] = field(default_factory=set)

    def searched_places(self, target: Target) -> set[str]:
        """Checked places away from the goal's place where no free instance of the thing lies."""
        return {p for p in self.checked if words(p)[:1] != [target.place]} - self.free_places(target)

    def free_places(self, target: Target) -> set[str]:
        """Places (``shelf 1``) away from the goal's place where an instance neither held nor placed lies."""
        return {where for inst, where in self.seen.items()
                if inst not in self.placed and inst not in self.held and words(where)[:1] != [target.place]}


def memory(history: Sequence[tuple[str, str]], target: Target) -> Memory:
    """Replay the (move, answer) history: which instances of ``target.thing`` are held, placed, seen where."""
    out = Memory()
    if not target.thing:
        return out
    where = ""
    for move, feedback in history:
        if feedback.lstrip().startswith("Nothing happens"):
            continue
        mw = move.split(" ", 1)
        verb = mw[0]
        named = [f"{a} {b}" for a, b in INSTANCE.findall(move)]
        if verb == "go" and len(mw) > 1:
            where = mw[1].removeprefix("to ")
        thing = named[0] if named and named[0].split()[0] == target.thing else ""
        if thing and verb == "take":
            out.held.add(thing)
            out.placed.discard(thing)
            out.seen.pop(thing, None)
        elif thing and verb in ("move", "put") and len(named) > 1:
            out.held.discard(thing)
            if named[-1].split()[0] == target.place:
                out.placed.add(thing)
            else:
                out.seen[thing] = named[-1]
        text = feedback.lower()
        if where and "you see" in text:
            out.checked.add(where)
        for a, b in INSTANCE.findall(text):
            inst = f"{a} {b}"
            if a == target.thing and where and inst not in out.held and inst not in out.placed:
                out.seen[inst] = where
    return out


def held_words(state_text: str) -> list[str]:
    """The content words of what the player carries (``You are carrying ...``); empty when nothing."""
    m = _CARRYING.search(state_text)
    if not m or m.group(1).strip().lower() in ("nothing", ""):
        return []
    return [w for w in words(m.group(1)) if w not in FILLER]


def feedback_words(text: str) -> set[str]:
    """The content words of a game's answer."""
    return {w for w in words(text) if w not in FILLER}


def context_tokens(situation: Situation, goal: frozenset[str] | None = None, target: Target | None = None,
                   mem: Memory | None = None) -> list[str]:
    """The situation's tokens: ``*`` (always), ``g:<goal word>``, ``hold:g|x|-`` (carrying something the goal
    names, something else, nothing), ``at:g|x`` (the place is named by the goal or not), ``did:<verb>`` and
    ``did:<verb>+g`` (verbs played, and those whose move named a goal word), ``seen:g`` (a goal word other
    than the move's showed up in the game's answers); from what the player did with the goal's thing
    (:func:`goal_target`, :func:`memory`): ``two:<k>`` when the goal asks for two of it and ``k`` (0, 1, 2)
    are now at the goal's place, put there by the player, and ``seen:free`` when the player holds none of
    it and one it has not placed was seen somewhere other than the goal's place."""
    state = situation.state_text or ""
    goal = goal_words(state, situation.notes) if goal is None else goal
    target = goal_target(state) if target is None else target
    mem = memory(situation.history, target) if mem is None else mem
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
    if target.count == 2:
        out.append(f"two:{min(2, len(mem.placed))}")
    if not mem.held and mem.free_places(target):
        out.append("seen:free")
    return out
