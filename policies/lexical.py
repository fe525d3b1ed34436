"""A lexical pair model: learned weights on (situation token, move token) pairs, for Local.

Local's dense features (policies/local.py) say how a move relates to the goal
text as a whole. On a game whose goal is reached in stages (ALFWorld: find the
object, take it, heat/cool/clean it or find a lamp, then carry it to a place)
that is not enough: which move is right depends on what was already done, on
what the player holds, and on world knowledge (apples lie on countertops, a
"hot" goal means the microwave). This model scores each candidate by the sum
of the learned weights of the pairs ``(c, m)`` where ``c`` is a token of the
situation and ``m`` a token of the move, from what a player sees only:

Situation tokens (:func:`context_tokens`):

- ``*``: always present (so every move token has a base weight);
- ``g:<word>``: the goal's words (the first line of each goal paragraph, e.g.
  ``Your task is to: put a hot egg in diningtable.``), digits dropped;
- ``hold:g`` / ``hold:x`` / ``hold:-``: carrying something the goal names /
  something else / nothing (``You are carrying ...``);
- ``at:g`` / ``at:x``: the place the player is at (``You are at ...``) is / is
  not named by the goal;
- ``did:<verb>``, ``did:<verb>+g``: verbs of the moves played so far, and
  those whose move named a goal word (``did:heat+g`` once the egg was heated);
- ``seen:g``: a goal word other than the verb showed up in the game's answers
  (after the moves), i.e. the object was seen somewhere;
- what the player did with the goal's *thing* (the object the goal line names,
  :func:`goal_target`; instances are ``<thing> <n>``), read from the moves and
  answers (:func:`memory`): ``two:<k>`` when the goal asks for two of them and
  ``k`` (0, 1, 2) are now at the goal's place, put there by the player;
  ``seen:free`` when the player holds none of them and one it has not placed was
  seen somewhere other than the goal's place.

Move tokens (:func:`move_tokens`):

- ``v:<verb>`` and ``v:<verb>+g<k>`` (the move names k goal words, k <= 2),
  ``v:<verb>+held`` (it names what the player carries), ``v:<verb>+again``
  (played before in this episode), ``v:go+seen`` (it goes to where a free
  instance of the thing was last seen, while the player holds none), ``v:go+searched``
  (it goes back to a place, not the goal's, whose contents the player has seen and
  where no free instance of the thing lies),
  ``v:take+placed`` (it takes back an instance the player put at the goal's place);
- ``o:<class>``: the things the move names (``go to countertop 2`` ->
  ``o:countertop``), which pair with the goal's words only (the priors: where an
  apple is found, which appliance a "hot" goal needs);
- with lookahead (the candidate carries an outcome): ``out:seen`` (the game's
  answer repeats one already seen: nothing new there), ``out:g<k>`` (the answer
  names k goal words the move itself does not: the move reveals the object),
  ``out:none`` (it names none), ``out:free`` (it names an instance of the thing
  that the player neither holds nor placed: the second of two, not the first
  again), and for each move it makes available,
  ``new:<verb>`` / ``new:<verb>+g<k>`` (``go to microwave 1`` while holding the
  egg opens ``heat egg 1 with microwave 1``: ``new:heat+g1``).

Goal-word tokens ``g:<word>`` pair with the plain ``v:<verb>``, ``new:<verb>``
and ``o:<class>`` tokens (a "hot" goal and the verb ``heat``, an apple and a
countertop); the other situation tokens pair with every move token except
``o:*``. The weights are
fitted by ``bench/alfworld_local.py`` and shipped as JSON in s1gym/data (with
their provenance); pairs never seen in training weigh 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from s1gym.core import Candidate, Situation
from s1gym.policies.common import GOAL_OPENERS, STOPWORDS

__all__ = ["Memory", "PairModel", "Target", "context_tokens", "goal_target", "goal_words", "memory", "move_tokens",
           "pairs"]

_WORD = re.compile(r"[a-z]+")
#: Words that carry no goal (the template around ALFWorld's and TextWorld's goals).
_FILLER = STOPWORDS | frozenset("task some them put find".split())
_GOAL_LINE = re.compile(rf"^\s*({GOAL_OPENERS})[^\n]*", re.IGNORECASE | re.MULTILINE)
_CARRYING = re.compile(r"You are carrying ([^\n]*?)\.?$", re.MULTILINE)
_AT = re.compile(r"You are at ([^\n.]*)\.", re.MULTILINE)
#: An instance of a thing (``cellphone 2``).
_INSTANCE = re.compile(r"\b([a-z]+) (\d+)\b")
_PLACE_WORD = re.compile(r"\b(?:in|on|under|with)\b")
#: The words of ALFWorld's goal templates (alfworld.gen.goal_library) around the thing and the place.
_TEMPLATE = _FILLER | frozenset("find look examine heat cool clean hot cold two under".split())
_COUNTS = {"two": 2}


def words(text: str) -> list[str]:
    """Lower-case words without digits (``cabinet 2`` -> ``cabinet``)."""
    return _WORD.findall(text.lower())


def goal_words(state_text: str, notes: Sequence[str] = ()) -> frozenset[str]:
    """Content words of the goal lines (the first line of each goal paragraph) and the notes."""
    lines = [m.group(0).split(":", 1)[-1] for m in _GOAL_LINE.finditer(state_text)]
    return frozenset(w for line in (*lines, *notes) for w in words(line) if w not in _FILLER)


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
        named = [f"{a} {b}" for a, b in _INSTANCE.findall(move)]
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
        for a, b in _INSTANCE.findall(text):
            inst = f"{a} {b}"
            if a == target.thing and where and inst not in out.held and inst not in out.placed:
                out.seen[inst] = where
    return out


def _held(state_text: str) -> list[str]:
    m = _CARRYING.search(state_text)
    if not m or m.group(1).strip().lower() in ("nothing", ""):
        return []
    return [w for w in words(m.group(1)) if w not in _FILLER]


def _feedback_words(text: str) -> set[str]:
    return {w for w in words(text) if w not in _FILLER}


def context_tokens(situation: Situation, goal: frozenset[str] | None = None, target: Target | None = None,
                   mem: Memory | None = None) -> list[str]:
    """The situation's tokens (see the module docstring)."""
    state = situation.state_text or ""
    goal = goal_words(state, situation.notes) if goal is None else goal
    target = goal_target(state) if target is None else target
    mem = memory(situation.history, target) if mem is None else mem
    out = ["*", *(f"g:{w}" for w in sorted(goal))]
    held = _held(state)
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
        if not seen and goal & (_feedback_words(feedback) - set(mw)):
            seen = True
    out.extend(sorted(did))
    if seen:
        out.append("seen:g")
    if target.count == 2:
        out.append(f"two:{min(2, len(mem.placed))}")
    if not mem.held and mem.free_places(target):
        out.append("seen:free")
    return out


def move_tokens(candidate: Candidate, situation: Situation, goal: frozenset[str], held: Iterable[str] = (),
                played: Iterable[str] = (), seen_feedback: Iterable[str] = (), target: Target = Target(),
                mem: Memory | None = None) -> list[str]:
    """The move's tokens (see the module docstring); lookahead tokens when it carries an outcome."""
    mw = words(candidate.text)
    if not mw:
        return []
    mem = Memory() if mem is None else mem
    verb, rest = mw[0], [w for w in mw[1:] if w not in _FILLER]
    k = min(2, len(goal & set(rest)))
    out = [f"v:{verb}", f"v:{verb}+g{k}"]
    if set(held) & set(rest):
        out.append(f"v:{verb}+held")
    if candidate.text in set(played):
        out.append(f"v:{verb}+again")
    if verb == "go":
        place = candidate.text.removeprefix("go to ")
        if not mem.held and place in mem.free_places(target):
            out.append("v:go+seen")
        elif place in mem.searched_places(target):
            out.append("v:go+searched")
    if verb == "take" and mem.placed and any(f"{a} {b}" in mem.placed for a, b in _INSTANCE.findall(candidate.text)):
        out.append("v:take+placed")
    out.extend(f"o:{w}" for w in sorted(set(rest)))
    if candidate.outcome is not None:
        answer = candidate.outcome.strip().split("\n\n", 1)[0]
        if answer.strip() in set(seen_feedback):
            out.append("out:seen")
        revealed = min(2, len(goal & (_feedback_words(answer) - set(mw))))
        out.append(f"out:g{revealed}" if revealed else "out:none")
        if target.thing and any(a == target.thing and f"{a} {b}" not in mem.placed and f"{a} {b}" not in mem.held
                                for a, b in _INSTANCE.findall(answer.lower())):
            out.append("out:free")
        for action in candidate.new_actions:
            aw = words(action)
            if aw:
                out.append(f"new:{aw[0]}")
                ka = min(2, len(goal & set(aw[1:])))
                if ka:
                    out.append(f"new:{aw[0]}+g{ka}")
    return list(dict.fromkeys(out))


def pairs(context: Sequence[str], moves: Sequence[str]) -> list[str]:
    """The ``c|m`` pairs scored (goal words pair with verbs and things, the rest with all but things)."""
    out = []
    for c in context:
        if c.startswith("g:"):
            out.extend(f"{c}|{m}" for m in moves if m.startswith(("o:", "v:", "new:")) and "+" not in m)
        else:
            out.extend(f"{c}|{m}" for m in moves if not m.startswith("o:"))
    return out


def situation_pairs(situation: Situation) -> list[list[str]]:
    """Per candidate, the pairs it scores."""
    state = situation.state_text or ""
    goal = goal_words(state, situation.notes)
    target = goal_target(state)
    mem = memory(situation.history, target)
    context = context_tokens(situation, goal, target, mem)
    held = _held(state)
    played = [m for m, _ in situation.history]
    seen_feedback = [f.strip() for _, f in situation.history]
    return [pairs(context, move_tokens(c, situation, goal, held, played, seen_feedback, target, mem))
            for c in situation.candidates]


@dataclass(frozen=True)
class PairModel:
    """Learned pair weights (``c|m`` -> weight) and the dense Local weights fitted with them."""

    pairs: Mapping[str, float]
    dense: Mapping[str, float] = field(default_factory=dict)
    progress: Mapping[str, float] = field(default_factory=dict)
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def scores(self, situation: Situation) -> np.ndarray:
        """One pair score per candidate (the sum of its pairs' weights)."""
        w = self.pairs
        return np.array([sum(w.get(p, 0.0) for p in ps) for ps in situation_pairs(situation)], dtype=np.float64)

    def remaining(self, situation: Situation) -> float:
        """The progress estimate: predicted moves left (>= 0) from the situation's tokens."""
        w = self.progress
        if not w:
            return 0.0
        tokens = context_tokens(situation)
        return max(0.0, w.get("*", 0.0) + sum(w.get(t, 0.0) for t in tokens if t != "*"))

    @classmethod
    def load(cls, path: str | Path) -> PairModel:
        data = json.loads(Path(path).read_text())
        return cls(data["pairs"], data.get("dense", {}), data.get("progress", {}), data.get("provenance", {}))

    def save(self, path: str | Path) -> None:
        data = {"provenance": dict(self.provenance), "dense": dict(self.dense), "progress": dict(self.progress),
                "pairs": {k: round(v, 4) for k, v in sorted(self.pairs.items()) if abs(v) >= 1e-4}}
        Path(path).write_text(json.dumps(data, indent=1) + "\n")
