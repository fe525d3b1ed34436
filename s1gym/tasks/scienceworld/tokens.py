"""What Local's fitted ScienceWorld model reads: the observation parsed back (:func:`read_state`) and, per
candidate move, feature names (:func:`candidate_tokens`); the situation's tokens of the progress estimate
(:func:`progress_tokens`).

Everything is read from what a player sees: the observation (``Task Description:`` and the task, the room
as ``look around`` shows it, the inventory), the candidates and the moves played so far with their
feedback (``Situation.history``); never from the env. A variation changes the substance, the object, the
room, so the features are the ones that carry across variations of a task type:

- the task type, read off the description's wording (:func:`task_type`: 30 patterns, ``?`` when none
  matches) and the move's verb (:func:`.candidates.verb_of`);
- for each object the move names (one, or two for ``move X to Y``, ``pour X in Y``, ``use X on Y``, ``dunk X
  in Y``, ``connect X to Y``): whether the task names it (its head, the words before ``containing``, as a
  phrase of the description, all its words, some, none), whether it is in the inventory;
- the previous move's verb (a bigram), whether this move was played before and whether it was the last,
  whether it names the last move's object, how many ``focus on`` moves were made (a wrong focus fails most
  tasks), whether its objects were the objects of earlier moves (with this verb, another, never: the
  flower pot not watered yet), a ``go to``/``teleport to`` the room one is in, a device the room shows
  switched on or off (``a sink, which is turned on``), a door;
- the object's head words with the task type and verb (``thermometer``, ``stove``, ``pot``, ``seed``...):
  the reader names all of them, the fit keeps the words of gold moves seen in several train variations
  and those of any candidate in many (doors, the agent, the air);
- with lookahead (a candidate that carries an ``outcome``: ``Lookahead`` stepped it on a fork), names that
  open with ``la:`` (:func:`outcome_tokens`): the feedback's template (its first four words other than
  stop words, the move's own words as ``*``, numbers as ``#``: ``no known action matches``, ``* now open``),
  the score change (sign and size), the revisits (0, 1, 2, 3+; with the verb), an outcome that shows the
  same room and inventory as now (``same``) or a state the episode was in before (``back``), a changed
  inventory or room, the new moves (how many, how
  many of them name what the task names) and task words the outcome shows that the state does not,
  several of them crossed with the task type or the verb. A candidate without an outcome gets none of
  them: plain decisions read exactly the names of features version 1.

Beside the names, what the model's rule reads (:mod:`.model`): the task's own "focus on" instructions in order
(:func:`focus_steps`, :func:`focus_order`), and per candidate where they put it (:func:`focus_places`: a focus
they do not put next, a focus on one of several objects they offer at the next step).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from s1gym.core import Candidate, Situation
from s1gym.tasks.scienceworld.candidates import room_of, verb_of

__all__ = [
    "FocusPlaces",
    "State",
    "candidate_tokens",
    "feedback_template",
    "focus_order",
    "focus_places",
    "focus_steps",
    "move_objects",
    "outcome_tokens",
    "progress_tokens",
    "read_state",
    "split_feedback",
    "task_type",
]

#: the task type by the description's wording, first match wins (ScienceWorld's task names; ``?``: none)
_TYPES: tuple[tuple[str, str], ...] = (
    (r"\bto boil\b", "boil"),
    (r"\bto melt\b", "melt"),
    (r"\bto freeze\b", "freeze"),
    (r"change the state of matter of", "change-the-state-of-matter-of"),
    (r"measure the temperature of", "use-thermometer"),
    (r"measure the melting point of (?:solid |liquid |gaseous )?unknown substance", "measure-melting-point-unknown-substance"),
    (r"measure the melting point of", "measure-melting-point-known-substance"),
    (r"turn on the .*renewable", "power-component-renewable-vs-nonrenewable-energy"),
    (r"turn on the", "power-component"),
    (r"determine if unknown substance .* conductive", "test-conductivity-of-unknown-substances"),
    (r"determine if .* conductive", "test-conductivity"),
    (r"find a\(n\) living thing", "find-living-thing"),
    (r"find a\(n\) non-living thing", "find-non-living-thing"),
    (r"find a\(n\) plant", "find-plant"),
    (r"find a\(n\) animal", "find-animal"),
    (r"grow a .*from seed", "grow-plant"),
    (r"\bgrow a", "grow-fruit"),
    (r"use chemistry to create .*part-way", "chemistry-mix-paint-tertiary-color"),
    (r"use chemistry to create the substance", "chemistry-mix"),
    (r"use chemistry to create .*paint", "chemistry-mix-paint-secondary-color"),
    (r"longest life span, then the shortest", "lifespan-longest-lived-then-shortest-lived"),
    (r"longest life span", "lifespan-longest-lived"),
    (r"shortest life span", "lifespan-shortest-lived"),
    (r"life stages of the .*plant", "identify-life-stages-2"),
    (r"life stages of", "identify-life-stages-1"),
    (r"inclined planes .* angle", "inclined-plane-determine-angle"),
    (r"inclined planes \(unknown material", "inclined-plane-friction-unnamed-surfaces"),
    (r"inclined planes .* friction", "inclined-plane-friction-named-surfaces"),
    (r"dominant or recessive trait in the unknown", "mendelian-genetics-unknown-plant"),
    (r"dominant or recessive", "mendelian-genetics-known-plant"),
)
_TYPE_RES = tuple((re.compile(p), name) for p, name in _TYPES)
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")
_STOP = frozenset({"a", "an", "the", "in", "on", "to", "into", "of", "called", "substance", "containing", "is",
                   "it", "and", "you", "your", "see", "this", "that"})
#: the separators between a two-object move's objects, per verb (ScienceWorld's templates)
_PAIRS = {"move": " to ", "pour": " in ", "use": " on ", "dunk": " in ", "connect": " to "}
_SWITCH = re.compile(r"\b(?:an?|the) ([a-z0-9 ]+?), which is (turned on|turned off|activated|deactivated)")
_ON = {"turned on": "on", "activated": "on", "turned off": "off", "deactivated": "off"}


def task_type(description: str) -> str:
    """ScienceWorld's name of the task type a description states (``boil``, ...), ``?`` when none matches."""
    text = " ".join(description.lower().split())
    for pattern, name in _TYPE_RES:
        if pattern.search(text):
            return name
    return "?"


def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.lower()) if w not in _STOP)


@dataclass(frozen=True)
class State:
    """A ScienceWorld observation read back."""

    kind: str  # the task type (:func:`task_type`)
    description: str  # the task, lower case, one space between words
    task_words: frozenset[str]
    inventory: str  # the inventory paragraph, lower case
    room: str  # the room one is in ("" when not read)
    #: what the room's devices say of themselves (``sink`` -> ``on``; ``stove`` -> ``off``)
    switches: dict[str, str] = field(default_factory=dict)


def read_state(text: str) -> State:
    """The task type and description, the inventory and the room of an observation (its ``Moves:`` list
    left out or not)."""
    description, inventory, room = "", "", ""
    switches: dict[str, str] = {}
    for para in text.split("\n\n"):
        head = para.lstrip()
        if head.startswith("Task Description:"):
            description = " ".join(head[len("Task Description:"):].lower().split())
        elif head.startswith("In your inventory"):
            inventory = head.lower()
        elif head.startswith("This room is called"):
            room = room_of(head)
            switches = {name: _ON[how] for name, how in _SWITCH.findall(head)}
    return State(task_type(description), description, _words(description), inventory, room, switches)


def move_objects(text: str, verb: str) -> tuple[str, ...]:
    """The object phrases a move names after its verb: one, two for a two-object template, none for ``look
    around``, ``wait``..."""
    body = text[len(verb):].strip()
    if not body:
        return ()
    sep = _PAIRS.get(verb)
    if sep is not None:
        if verb == "pour" and " into " in body:
            sep = " into "
        if verb == "pour" or verb == "dunk":
            i = body.rfind(sep)
        else:
            i = body.find(sep)
        if i > 0:
            return body[:i], body[i + len(sep):]
    return (body,)


def _head(phrase: str) -> str:
    """An object phrase without its ``containing ...`` clause (``cup`` of ``cup containing orange juice``)."""
    i = phrase.find(" containing ")
    return phrase if i < 0 else phrase[:i]


def _in_task(phrase: str, state: State) -> str:
    """How the task names an object: ``p`` its head as a phrase, ``a`` all its words, ``s`` some, ``n`` none."""
    head = _head(phrase)
    if f" {head} " in f" {state.description} ".replace(".", " ").replace(",", " ").replace("'", " "):
        return "p"
    words = _words(head)
    if not words:
        return "n"
    shared = len(words & state.task_words)
    return "a" if shared == len(words) else "s" if shared else "n"


def _focuses(history: Sequence[tuple[str, str]]) -> int:
    return sum(1 for move, _ in history if move.startswith("focus on "))


_SENTENCE = re.compile(r"(?<=[a-z)'])\. ")
_FOCUS_OBJECT = re.compile(r"\bfocus on (?:the |an? )?([^,.]+)")


@lru_cache(maxsize=256)
def focus_steps(description: str) -> tuple[tuple[str, int], ...]:
    """The objects of a task's "focus on" instructions in the order it states them, each with its step: one step
    per sentence, the alternatives of consecutive ``if ...`` sentences sharing one (``thermometer`` 0, ``solid
    unknown substance c`` 1, ``orange box`` 2, ``yellow box`` 2)."""
    out: list[tuple[str, int]] = []
    step, was_if = -1, False
    for sentence in _SENTENCE.split(description):
        m = _FOCUS_OBJECT.search(sentence)
        if m is None:
            continue
        is_if = sentence.startswith("if ")
        if not (is_if and was_if):
            step += 1
        was_if = is_if
        out.append((m.group(1).strip(), step))
    return tuple(out)


def focus_order(head: str, description: str, done: int) -> str:
    """Where the task's "focus on" instructions (:func:`focus_steps`) put an object (``head``: one names the other
    as a phrase) once ``done`` focuses are made: ``next`` (the step after them), ``later``, ``earlier``, ``none``
    (not named by any)."""
    steps = {j for obj, j in focus_steps(description) if f" {head} " in f" {obj} " or f" {obj} " in f" {head} "}
    if not steps:
        return "none"
    if done in steps:
        return "next"
    return "later" if max(steps) > done else "earlier"


@dataclass(frozen=True)
class FocusPlaces:
    """Where the task's "focus on" instructions put each candidate of a state (:func:`focus_places`)."""

    #: per candidate, :func:`focus_order` of its object when it is a ``focus on``, else ``None``
    places: tuple[str | None, ...]
    #: how many objects the instructions offer at the next step (0: no step is to come)
    offered: int

    @property
    def out_of_order(self) -> list[bool]:
        """Per candidate, whether it is a ``focus on`` the instructions do not put next (:func:`focus_order` other
        than ``next``) while a step of them is still to come: a focus the task states in another place or never
        (first the thermometer, not the substance; the unknown substance, not the metal pot it is in)."""
        return [bool(self.offered) and place is not None and place != "next" for place in self.places]

    @property
    def alternatives(self) -> list[int]:
        """Per candidate, how many objects the instructions offer at the next step when it is a ``focus on`` one
        of them and they are more than one (``if ... above, focus on the orange box. if ... below, focus on the
        yellow box``: 2), else 0."""
        return [self.offered if self.offered > 1 and place == "next" else 0 for place in self.places]


def focus_places(situation: Situation, state: State | None = None) -> FocusPlaces:
    """The candidates' places in the task's "focus on" instructions (``state``: the situation's, when the caller
    has read it already). Read for the task types whose stated order binds (``ScienceWorldModel.ordered``)."""
    description = (state or read_state(situation.state_text or "")).description
    done = _focuses(situation.history)
    offered = sum(1 for _o, j in focus_steps(description) if j == done)
    return FocusPlaces(tuple(focus_order((_parsed(c.text)[2] or ("",))[0], description, done)
                             if c.text.startswith("focus on ") else None for c in situation.candidates), offered)


@lru_cache(maxsize=1 << 16)
def _parsed(text: str) -> tuple[str, tuple[str, ...], tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """A move's verb, object phrases, their heads and the heads' words (cached: moves recur across states)."""
    v = verb_of(text)
    objects = move_objects(text, v)
    heads = tuple(_head(o) for o in objects)
    return v, objects, heads, tuple(tuple(sorted(_words(h))) for h in heads)


def candidate_tokens(situation: Situation) -> list[list[str]]:
    """Per candidate, the feature names of Local's fitted ScienceWorld model (see the module docstring)."""
    state = read_state(situation.state_text or "")
    kind = state.kind
    history = situation.history
    last_move = history[-1][0] if history else ""
    pv = _parsed(last_move)[0] if history else "^"
    last_heads = frozenset(_parsed(last_move)[2]) if history else frozenset()
    played = {m for m, _ in history}
    foci = f"foci:{min(_focuses(history), 3)}"
    inventory = state.inventory
    room = state.room
    switches = state.switches
    # per object head of the moves so far: the verbs it was moved with
    before: dict[str, set[str]] = {}
    for move, _ in history:
        mv, _o, mheads, _w = _parsed(move)
        for h in mheads:
            before.setdefault(h, set()).add(mv)
    memo: dict[str, str] = {}
    now: _Now | None = None
    out = []
    for c in situation.candidates:
        text = c.text
        v, objects, heads, words = _parsed(text)
        tv = f"{kind}|v:{v}"
        toks = [f"v:{v}", tv, f"pv:{pv}|v:{v}", f"{kind}|pv:{pv}|v:{v}", f"{tv}|{foci}"]
        if objects:
            marks = []
            for phrase, head in zip(objects, heads):
                mark = memo.get(phrase)
                if mark is None:
                    mark = memo[phrase] = _in_task(phrase, state) + ("i" if head in inventory else "")
                marks.append(mark)
            tag = ",".join(marks)
            toks += [f"v:{v}|task:{tag}", f"{tv}|task:{tag}", f"{tv}|task:{tag}|{foci}"]
            for w in words[0]:
                toks += [f"v:{v}|w:{w}", f"{tv}|w:{w}"]
            if len(words) > 1:
                for w in words[1]:
                    toks += [f"v:{v}|w2:{w}", f"{tv}|w2:{w}"]
            seen = "".join("n" if h not in before else "v" if v in before[h] else "o" for h in heads)
            toks.append(f"{tv}|before:{seen}")
            if heads[0] in switches:
                toks.append(f"{tv}|switch:{switches[heads[0]]}")
            if "door" in words[0]:
                toks.append(f"{tv}|door")
            if heads[0] in last_heads:
                toks += [f"pv:{pv}|v:{v}|same", f"{kind}|pv:{pv}|v:{v}|same"]
            if objects[0] == room and (v == "go to" or v == "teleport to"):
                toks.append(f"v:{v}|here")
        if text in played:
            toks += [f"v:{v}|played", f"{tv}|played"]
            if text == last_move:
                toks += [f"v:{v}|last", f"{tv}|last"]
        if c.outcome is not None:
            if now is None:
                now = _Now.of(situation.state_text or "")
            toks += outcome_tokens(c, v, kind, now, state, memo)
        out.append(toks)
    return out


#: the start of the state description in an observation (the feedback, when there is one, comes before it)
_DESCRIPTION = "Task Description:"
_FB_WORD = re.compile(r"[a-z]+|[0-9]+")


def split_feedback(text: str) -> tuple[str, str]:
    """An observation's feedback (``""`` when none) and the rest (task, room, inventory)."""
    i = text.find(_DESCRIPTION)
    if i < 0:
        return text.strip(), ""
    return text[:i].strip(), text[i:].strip()


def feedback_template(feedback: str, move: str) -> str:
    """The feedback's first four words other than stop words, lower case, the move's own words as ``*`` (a run
    of them as one), numbers as ``#``; ``-`` for no feedback (``look around``)."""
    mine = _words(move)
    out: list[str] = []
    for w in _FB_WORD.findall(feedback.lower()):
        if w in _STOP:
            continue
        t = "#" if w.isdigit() else "*" if w in mine else w
        if t == "*" and out and out[-1] == "*":
            continue
        out.append(t)
        if len(out) == 4:
            break
    return " ".join(out) or "-"


@dataclass(frozen=True)
class _Now:
    """What the outcomes are compared with: the state's observation after its feedback (task, room,
    inventory) and that text's words."""

    rest: str
    words: frozenset[str]

    @staticmethod
    def of(state_text: str) -> _Now:
        rest = split_feedback(state_text)[1]
        return _Now(rest, _words(rest))


def _bucket(n: int, edges: tuple[int, ...]) -> str:
    """``n`` as the bucket its ``edges`` (ascending lower bounds after 0) put it in: ``0``, ``1-2``, ``30+``."""
    if n <= 0:
        return "0"
    for lo, hi in zip(edges, (*edges[1:], None)):
        if hi is None or n < hi:
            return f"{lo}+" if hi is None else (f"{lo}" if hi - lo == 1 else f"{lo}-{hi - 1}")
    return "0"  # pragma: no cover - edges start at 1


def outcome_tokens(candidate: Candidate, v: str, kind: str, now: _Now, state: State,
                   memo: dict[str, str] | None = None) -> list[str]:
    """The ``la:`` names of a candidate Lookahead stepped (see the module docstring): its outcome read against
    the state now (``now``), ``v`` its verb, ``kind`` the task type."""
    memo = {} if memo is None else memo
    feedback, rest = split_feedback(candidate.outcome or "")
    template = feedback_template(feedback, candidate.text)
    toks = [f"la:fb:{template}", f"la:{kind}|fb:{template}", f"la:v:{v}|fb:{template}"]
    r = candidate.reward or 0.0
    if r > 0:
        size = "s" if r <= 0.05 else "m" if r <= 0.15 else "l"
        toks += ["la:r:+", f"la:r:+{size}", f"la:{kind}|r:+", f"la:v:{v}|r:+"]
    elif r < 0:
        toks += ["la:r:-", f"la:{kind}|r:-"]
    if candidate.revisits is not None:
        rv = min(candidate.revisits, 3)
        b = f"{rv}+" if rv == 3 else str(rv)
        toks += [f"la:rev:{b}", f"la:{kind}|rev:{b}", f"la:v:{v}|rev:{min(rv, 1)}"]
    if rest and rest == now.rest:
        toks += ["la:same", f"la:v:{v}|same"]
    elif rest:
        if candidate.revisits:  # back in a state this episode was in before (not this one)
            toks += ["la:back", f"la:{kind}|back"]
        after = read_state(rest)
        if after.inventory != state.inventory:
            toks += ["la:inv", f"la:{kind}|inv"]
        if after.room != state.room:
            toks += ["la:room", f"la:room|rev:{min(candidate.revisits or 0, 1)}"]
        shown = len((_words(rest) - now.words) & state.task_words)
        if shown:
            toks += [f"la:show:{min(shown, 2)}", f"la:{kind}|show"]
    n = len(candidate.new_actions)
    nb = _bucket(n, (1, 3, 10, 30))
    toks += [f"la:new:{nb}", f"la:{kind}|new:{nb}"]
    if n:
        named = 0
        for a in candidate.new_actions:
            objects = _parsed(a)[1]
            if objects:
                mark = memo.get(objects[0])
                if mark is None:
                    inventory = "i" if _head(objects[0]) in state.inventory else ""
                    mark = memo[objects[0]] = _in_task(objects[0], state) + inventory
                named += mark[0] == "p"
        if named:
            toks += [f"la:newtask:{min(named, 2)}", f"la:{kind}|newtask"]
    return toks


def progress_tokens(situation: Situation) -> list[str]:
    """The situation's tokens of the moves-left estimate: the task type, alone and with the score (tenths),
    the moves made (in fives, up to 100), the focuses made and each verb played so far."""
    kind = read_state(situation.state_text or "").kind
    history = situation.history
    verbs = sorted({verb_of(m) for m, _ in history} - {""})
    return ["*", kind, f"{kind}|score:{min(10, int(situation.score * 10))}",
            f"{kind}|moves:{min(len(history) // 5, 20)}", f"{kind}|foci:{min(_focuses(history), 3)}",
            *(f"{kind}|did:{v}" for v in verbs)]
