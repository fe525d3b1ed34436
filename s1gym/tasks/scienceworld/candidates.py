"""The short candidate list of a ScienceWorld state, and the map from ScienceWorld's gold strings to it.

ScienceWorld lists every valid action-object combination of a state: hundreds to thousands (median about
1,000 along gold paths under the ``easy`` preset), most of them two-object moves nobody needs (``move
painting to banana``, both orders of every ``connect``). :func:`narrow` keeps the moves that apply to what
is in view and in hand:

- the one-object moves on what is in view (open, close, activate, deactivate, look at, look in, read,
  focus on, pick up, put down, eat, flush, disconnect), the ways out (go to, teleport to) and look around,
  wait, wait1; ``mix`` only on a container holding something;
- ``move X to Y``: X something one can pick up or put down and Y a container (``move X to inventory`` is ``pick up X``: ScienceWorld
  sometimes lists only that form, so the pick up is added); ``pour X in Y``: X in hand or a container
  holding something, Y a container; ``use X on Y`` and ``dunk X in Y``: X in hand;
- ``connect X to Y`` between electrical parts (terminals, anodes, cathodes, wires), one order of each pair;
- never ``inventory``, ``task`` or ``reset task`` (the observation shows the inventory and the task).

What is in hand are the objects ScienceWorld offers to ``put down``; containers are the objects it offers
to ``look in``. Moves are deduplicated by (template, objects) and ordered by kind (:data:`ORDER`), then
alphabetically: a deterministic list.

:func:`gold_candidate` maps a gold string (``examine substance in metal pot``, ``connect battery anode
to black wire terminal 1``) to the candidate that names the same action: the exact text, else the candidate
with the same verb whose object phrases share the most words with the gold's (``look at substance in metal
pot``, ``connect anode in battery to black wire terminal 1``). Gold steps that are no-ops under the easy
preset (``open door to kitchen``: doors start open) and answers to ScienceWorld's ambiguity prompt (``0``)
map to ``look around``, a move that changes nothing and takes one tick as they do.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

__all__ = ["ORDER", "gold_candidate", "narrow", "verb_of"]

#: verbs (longest first, so ``look around`` wins over ``look``), in the order their moves are listed
ORDER = ("look around", "focus on", "pick up", "put down", "look at", "look in", "read", "open", "close",
         "activate", "deactivate", "go to", "teleport to", "move", "pour", "use", "mix", "connect",
         "disconnect", "eat", "flush", "dunk", "wait1", "wait")
_RANK = {verb: i for i, verb in enumerate(ORDER)}
_VERBS = sorted([*ORDER, "inventory", "task", "reset task"], key=len, reverse=True)
_DROP = {"inventory", "task", "reset task"}
_HELD_ONLY = {"use", "dunk"}
_ELECTRICAL = ("terminal", "anode", "cathode", "wire")
#: ScienceWorld's two-object templates: the separators between their objects
_PAIRS = {"move": (" to ",), "pour": (" into ", " in "), "use": (" on ",), "dunk": (" into ", " in "),
          "connect": (" to ",)}
#: other words the gold paths use for a verb
_ALIASES = {"examine": "look at", "drop": "put down", "take": "pick up", "get": "pick up", "go": "go to"}
_CONTAINING = re.compile(r" containing .*?(?= in | on |$)")
_STAGE = re.compile(r" in the [a-z]+ stage")
#: the least similarity a mapped gold move needs; a wrong focus fails the task, so focus needs more
THRESHOLD, FOCUS_THRESHOLD = 0.5, 0.75
_STOP = frozenset({"a", "an", "the", "in", "on", "to", "into", "inventory", "containing", "called", "of"})
ALWAYS = ("look around", "wait", "wait1")
#: object classes (prefixes under ``scienceworld.objects.``) that never move: rooms, doors, furniture, the agent
FIXED = tuple("scienceworld.objects." + p for p in (
    "containers.furniture.", "location.", "portal.", "agent.", "environmentoutside.", "substance.Air"))
#: devices and task items that stay where they are (the targets of a move from the room)
FIXED_DEVICES = frozenset({"Bathtub", "BlastFurnace", "Freezer", "Fridge", "Oven", "Sink", "Stove", "Toilet",
                           "UltraColdFreezer", "InclinedPlane", "AnswerBox"})
_fixed: frozenset[int] | None = None
_place_ids: frozenset[int] | None = None
_FILLED = re.compile(r"(?:\ban? |\bthe |\t)([a-z0-9][a-z0-9 ]*?) \(containing ([^()]*)\)")
PLACES = tuple("scienceworld.objects." + p for p in ("location.", "portal.", "environmentoutside."))


def verb_of(text: str) -> str:
    """The template verb a move starts with (``""`` when none does)."""
    for verb in _VERBS:
        if text == verb or text.startswith(verb + " "):
            return verb
    return ""


def fixed_types() -> frozenset[int]:
    """ScienceWorld's object type ids of what stays where it is (:data:`FIXED`), read from the package."""
    global _fixed
    if _fixed is None:
        from scienceworld.constants import BASEPATH

        out = set()
        with open(os.path.join(BASEPATH, "object_type_ids.tsv"), encoding="utf-8") as f:
            for line in f:
                name, _, type_id = line.strip().partition("\t")
                if name.startswith(FIXED) or name.rpartition(".")[2] in FIXED_DEVICES:
                    out.add(int(type_id))
        _fixed = frozenset(out)
    return _fixed


def _places() -> frozenset[int]:
    """Type ids of rooms, the outside and doors (never the container of a move)."""
    global _place_ids
    if _place_ids is None:
        from scienceworld.constants import BASEPATH

        with open(os.path.join(BASEPATH, "object_type_ids.tsv"), encoding="utf-8") as f:
            rows = [line.strip().partition("\t") for line in f]
        _place_ids = frozenset(int(t) for name, _, t in rows if name.startswith(PLACES))
    return _place_ids


def filled_names(look: str, inventory: str = "") -> frozenset[str]:
    """The names of the containers in view or in hand that hold something (``a jug (containing a substance
    called water)``), read from ScienceWorld's look and inventory texts."""
    return frozenset(m.group(1) for m in _FILLED.finditer(look + "\n" + inventory)
                     if not m.group(2).startswith("nothing"))


def carried_names(inventory: str) -> frozenset[str]:
    """The names of what the containers in hand hold (``a seed jar (containing a apple seed, ...)``)."""
    out = set()
    for m in _FILLED.finditer(inventory):
        for item in m.group(2).split(", "):
            out.add(re.sub(r"^(?:an? |the |a substance called )", "", item.strip()))
    return frozenset(out - {"nothing"})


def _filled(text: str, filled: frozenset[str]) -> bool:
    """Whether a pour's source (the text between ``pour`` and `` in``/`` into``) is a filled container."""
    body = text[len("pour "):]
    if any(body.startswith(name + " in") for name in filled):
        return True
    source = re.split(r" in(?:to)? ", body)[0]  # ScienceWorld names some by their contents ("cup containing juice")
    return " containing " in f" {source} " and "containing nothing" not in source


def narrow(valid: Iterable[tuple[str, int, Sequence[int], Sequence[int]]], look: str = "",
           inventory: str = "") -> list[str]:
    """The candidate moves of a state from ScienceWorld's valid combinations ``(text, template id, object
    ids, type ids)`` (the rules are in the module docstring)."""
    fixed = fixed_types()
    filled = filled_names(look, inventory)
    carried = carried_names(inventory)
    entries = [(text, verb_of(text), tuple(ids)) for text, _, ids, _ in valid]
    places = {i for _, _, ids, types in valid for i, t in zip(ids, types) if t in _places()}
    stays = {i for _, _, ids, types in valid for i, t in zip(ids, types) if t in fixed}
    held = {ids[0] for _, verb, ids in entries if verb == "put down" and ids}
    containers = {ids[0] for _, verb, ids in entries if verb == "look in" and ids} - places
    picked = {ids[0] for _, verb, ids in entries if verb == "pick up" and ids}
    portable = (held | picked) - stays
    inside = {ids[0] for text, verb, ids in entries if verb in ("focus on", "look at", "pick up") and ids
              and any(text[len(verb) + 1:].startswith(name) for name in carried)}
    chosen: dict[tuple[str, tuple[int, ...]], str] = {}

    def keep(verb: str, ids: tuple[int, ...], text: str) -> None:
        key = (verb, ids)
        if key not in chosen or (len(text), text) < (len(chosen[key]), chosen[key]):
            chosen[key] = text

    for text, verb, ids in entries:
        if not verb or verb in _DROP:
            continue
        if verb == "move":
            if text.endswith(" to inventory") and len(ids) == 2:
                if ids[0] not in picked and ids[0] not in held:
                    keep("pick up", ids[:1], "pick up " + text[len("move "):-len(" to inventory")])
                continue
            if len(ids) == 2 and ids[1] in containers and ids[0] != ids[1] and (
                    ids[0] in held or ids[0] in inside
                    or (ids[0] in portable and ids[1] in stays)):
                keep(verb, ids, text)
        elif verb == "pour":
            if len(ids) == 2 and ids[0] in portable and ids[0] in containers and ids[1] in containers and (
                    ids[0] in held or _filled(text, filled)) and ids[0] != ids[1]:
                keep(verb, ids, text)
        elif verb in _HELD_ONLY:
            if ids and ids[0] in held:
                keep(verb, ids, text)
        elif verb == "connect":
            if len(ids) == 2 and _electrical(text):
                keep(verb, tuple(sorted(ids)), text)  # one order of each pair (whichever ScienceWorld lists)
        elif verb == "mix":
            if ids and ids[0] in portable:
                keep(verb, ids, text)
        else:
            keep(verb, ids, text)
    moves = set(chosen.values()) | set(ALWAYS)
    return sorted(moves, key=lambda m: (_RANK.get(verb_of(m), len(ORDER)), m))


def _electrical(text: str) -> bool:
    body = text[len("connect "):]
    parts = body.split(" to ")
    return len(parts) >= 2 and any(w in parts[0] for w in _ELECTRICAL) and any(w in " ".join(parts[1:]) for w in _ELECTRICAL)


# ------------------------------------------------------------------------------------------ gold strings
def _words(phrase: str) -> frozenset[str]:
    return frozenset(w for w in re.split(r"\s+", phrase.strip()) if w and w not in _STOP)


def _parse(text: str) -> list[tuple[str, tuple[str, ...]]]:
    """Every reading of ``text`` as (verb, object phrases): one per split of a two-object template."""
    first, _, rest = text.partition(" ")
    if first in _ALIASES and verb_of(text) not in ("go to",):
        text = _ALIASES[first] + (" " + rest if rest else "")
        if text.startswith("go to to "):
            text = text[3:]
    verb = verb_of(text)
    if not verb:
        return []
    body = text[len(verb):].strip()
    if verb not in _PAIRS:
        return [(verb, (body,) if body else ())]
    readings = []
    for sep in _PAIRS[verb]:
        start = 0
        while (i := body.find(sep, start)) >= 0:
            readings.append((verb, (body[:i], body[i + len(sep):])))
            start = i + 1
    return readings


def _similarity(a: str, b: str) -> float:
    """Shared words over all words of two object phrases; the gold's ``containing ...`` clause may go."""
    bare = _STAGE.sub("", _CONTAINING.sub("", a))
    if bare != a:
        return max(_overlap(a, b), _overlap(bare, b))
    return _overlap(a, b)


def _overlap(a: str, b: str) -> float:
    wa, wb = _words(a), _words(b)
    if {w for w in wa if w.isdigit()} != {w for w in wb if w.isdigit()}:
        return 0.0  # flower pot 4 is not flower pot 5
    if not wa or not wb:
        return 1.0 if a.strip() == b.strip() else 0.0
    return len(wa & wb) / len(wa | wb) + (0.01 if a.strip() == b.strip() else 0.0)


def gold_candidate(gold: str, candidates: Sequence[str]) -> str | None:
    """The candidate naming the action of ScienceWorld's gold string ``gold`` (``None``: none does)."""
    gold = gold.strip()
    if gold in candidates:
        return gold
    best, best_score = None, 0.0
    readings = _parse(gold)
    for cand in candidates:
        for verb, phrases in readings:
            if verb_of(cand) != verb:
                continue
            for cverb, cphrases in _parse(cand):
                if cverb != verb or len(cphrases) != len(phrases):
                    continue
                score = min((_similarity(g, c) for g, c in zip(phrases, cphrases)), default=1.0)
                if verb == "connect":  # a connection has no direction: the candidate keeps one order
                    score = max(score, min(_similarity(g, c) for g, c in zip(phrases, cphrases[::-1])))
                if score > best_score:
                    best, best_score = cand, score
    if best is not None and best_score >= (FOCUS_THRESHOLD if verb_of(best) == "focus on" else THRESHOLD):
        return best
    same = [p for v, p in readings if len(p) == 2 and p[0] == p[1]]
    if gold.isdigit() or verb_of(gold) in ("open", "close", "pick up") or same:
        return "look around" if "look around" in candidates else None
    return None
