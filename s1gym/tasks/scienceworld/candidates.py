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
  holding something, Y a container; ``use X on Y`` and ``dunk X in Y``: X in hand; widened: X portable
  and Y a portable vessel (ScienceWorld's ``containers`` classes: pots, cups, jars, flower pots), and
  anything but rooms, doors, the agent and air into an answer box (a task's answer);
- ``connect X to Y`` between electrical parts (terminals, anodes, cathodes, wires), one order of each pair;
  widened: a pole (terminal, anode, cathode) to a portable thing (``aluminum foil``: its terminals are not
  listed);
- the widened moves are cut from the end of the list while it holds more than the cap (:func:`narrow_ids`);
- never ``inventory``, ``task`` or ``reset task`` (the observation shows the inventory and the task);
- after ScienceWorld's ambiguity prompt (a move named several objects alike), the numbers it offers
  (:func:`ambiguity_answers`) come first.

What is in hand are the objects ScienceWorld offers to ``put down``; containers are the objects it offers
to ``look in``. Moves are deduplicated by (template, objects) and ordered by kind (:data:`ORDER`), then
alphabetically: a deterministic list.

:func:`gold_candidate` maps a gold string (``examine substance in metal pot``, ``connect battery anode
to black wire terminal 1``) to the candidate that names the same action: the exact text, else the candidate
with the same verb whose object phrases share the most words with the gold's (``look at substance in metal
pot``, ``connect anode in battery to black wire terminal 1``). Gold steps that are no-ops under the easy
preset (``open door to kitchen``: doors start open) map to ``wait1``, a move that changes nothing and takes
one tick as they do (``look around`` takes none: a life stage then comes a tick late); answers to
ScienceWorld's ambiguity prompt (``0``) are candidates after the prompt, and map to ``look around`` where
the mapped move was not ambiguous (the move they answer was played already).
With the object ids of the candidates and ScienceWorld's names of each object (the expert reads them from
the JVM), a gold phrase that is one of an object's names maps to that object's candidate first
(``read recipe`` is ``read instructions to make salt water``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["ORDER", "ambiguity_answers", "gold_candidate", "narrow", "narrow_ids", "verb_of"]

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
#: the room a ``look around`` text names (:func:`room_of`)
_ROOM = re.compile(r"This room is called the ([a-z ]+?)\.")
#: ScienceWorld's answer boxes (a task's answer is moved into one), what is never moved, the electrical poles
_ANSWER = (".AnswerBox",)
_NEVER_MOVED = (".agent.Agent", ".agent.InventoryContainer", ".substance.Air")
_POLES = (".Terminal", ".Anode", ".Cathode")
PLACES = tuple("scienceworld.objects." + p for p in ("location.", "portal.", "environmentoutside."))


_AMBIGUOUS = "Ambiguous request:"
_ANSWER_LINE = re.compile(r"^(\d+):\t", re.MULTILINE)


def ambiguity_answers(observation: str) -> list[str]:
    """The numbers ScienceWorld offers when it asks which of several same-named objects a move meant
    (``Ambiguous request: Please enter the number ...`` then ``0:\tmove apple seed (in seed jar, ...) ...``):
    the answers a player can give, in its order (none for any other observation)."""
    if not observation.lstrip().startswith(_AMBIGUOUS):
        return []
    return list(dict.fromkeys(_ANSWER_LINE.findall(observation)))


#: the verbs by their first word, longest first (a verb can only start a text that starts with its first word)
_BY_FIRST: dict[str, tuple[str, ...]] = {}
for _verb in _VERBS:
    _BY_FIRST[_verb.split(" ")[0]] = (*_BY_FIRST.get(_verb.split(" ")[0], ()), _verb)


def verb_of(text: str) -> str:
    """The template verb a move starts with (``""`` when none does). Called on every row of every valid list
    (a thousand or more a state, each child of a search too): looked up by the first word."""
    for verb in _BY_FIRST.get(text.split(" ", 1)[0], ()):
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


def room_of(look: str) -> str:
    """The room a ``look around`` text is in (``""``: it names none)."""
    found = _ROOM.search(look)
    return found.group(1) if found else ""


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


def _type_ids(suffixes: tuple[str, ...]) -> frozenset[int]:
    """ScienceWorld's type ids of the classes whose names end with one of ``suffixes`` (``.AnswerBox``)."""
    if suffixes not in _by_suffix:
        from scienceworld.constants import BASEPATH

        with open(os.path.join(BASEPATH, "object_type_ids.tsv"), encoding="utf-8") as f:
            rows = [line.strip().partition("\t") for line in f]
        _by_suffix[suffixes] = frozenset(int(t) for name, _, t in rows if name.endswith(suffixes))
    return _by_suffix[suffixes]


_by_suffix: dict[tuple[str, ...], frozenset[int]] = {}
_vessel_ids: frozenset[int] | None = None


def _vessels() -> frozenset[int]:
    """Type ids of ScienceWorld's portable vessels (``scienceworld.objects.containers.*`` but furniture: pots,
    cups, jars, flower pots), the containers a thing in view may be moved into from anywhere in view."""
    global _vessel_ids
    if _vessel_ids is None:
        from scienceworld.constants import BASEPATH

        with open(os.path.join(BASEPATH, "object_type_ids.tsv"), encoding="utf-8") as f:
            rows = [line.strip().partition("\t") for line in f]
        prefix = "scienceworld.objects.containers."
        _vessel_ids = frozenset(int(t) for name, _, t in rows
                                if name.startswith(prefix) and "." not in name[len(prefix):])
    return _vessel_ids


_kinds: dict[int, tuple[int, ...]] | None = None


def _kinds_of_types() -> dict[int, tuple[int, ...]]:
    """Per type id the kinds it is, as indices of (places, fixed, answer boxes, never moved, poles, vessels):
    :func:`narrow_ids` sorts a row's objects by them (types of none are left out)."""
    global _kinds
    if _kinds is None:
        sets = (_places(), fixed_types(), _type_ids(_ANSWER), _type_ids(_NEVER_MOVED), _type_ids(_POLES), _vessels())
        _kinds = {t: tuple(k for k, ts in enumerate(sets) if t in ts) for t in frozenset().union(*sets)}
    return _kinds


def narrow(valid: Iterable[tuple[str, int, Sequence[int], Sequence[int]]], look: str = "",
           inventory: str = "", cap: int | None = None) -> list[str]:
    """The candidate moves of a state from ScienceWorld's valid combinations ``(text, template id, object
    ids, type ids)`` (the rules are in the module docstring); at most ``cap`` of them when the widened moves
    alone overflow it (:func:`narrow_ids`)."""
    return list(narrow_ids(valid, look, inventory, cap))


def narrow_ids(valid: Iterable[tuple[str, int, Sequence[int], Sequence[int]]], look: str = "",
               inventory: str = "", cap: int | None = None) -> dict[str, tuple[int, ...]]:
    """:func:`narrow`'s moves, in its order, each with the object ids it names (in the text's order).

    The widened moves (a portable thing into a vessel in view, a fixed thing into an answer box, a portable
    thing connected to a pole) are dropped from the end of the list, in its order, while it holds more than
    ``cap`` moves (never the others: a state that still overflows is the env's error)."""
    valid = list(valid)
    filled = filled_names(look, inventory)
    carried = carried_names(inventory)
    entries = [(text, verb_of(text), tuple(ids)) for text, _, ids, _ in valid]
    # the objects of each kind the rows name (rooms, what stays, answer boxes, ...): one pass over the rows
    places: set[int] = set()
    stays: set[int] = set()
    boxes: set[int] = set()
    never: set[int] = set()
    poles: set[int] = set()
    vessels: set[int] = set()
    kinds, groups = _kinds_of_types(), (places, stays, boxes, never, poles, vessels)
    for _, _, ids, types in valid:
        for i, t in zip(ids, types):
            kind = kinds.get(t)
            if kind is not None:
                for k in kind:
                    groups[k].add(i)
    held = {ids[0] for _, verb, ids in entries if verb == "put down" and ids}
    containers = {ids[0] for _, verb, ids in entries if verb == "look in" and ids} - places
    picked = {ids[0] for _, verb, ids in entries if verb == "pick up" and ids}
    portable = (held | picked) - stays
    inside = {ids[0] for text, verb, ids in entries if verb in ("focus on", "look at", "pick up") and ids
              and any(text[len(verb) + 1:].startswith(name) for name in carried)}
    chosen: dict[tuple[str, tuple[int, ...]], tuple[str, tuple[int, ...]]] = {}
    wide: set[tuple[str, tuple[int, ...]]] = set()  # the keys of the widened moves

    def keep(verb: str, key_ids: tuple[int, ...], text: str, ids: tuple[int, ...]) -> None:
        key = (verb, key_ids)
        if key not in chosen or (len(text), text) < (len(chosen[key][0]), chosen[key][0]):
            chosen[key] = (text, ids)

    for text, verb, ids in entries:
        if not verb or verb in _DROP:
            continue
        if verb == "move":
            if text.endswith(" to inventory") and len(ids) == 2:
                if ids[0] not in picked and ids[0] not in held:
                    keep("pick up", ids[:1], "pick up " + text[len("move "):-len(" to inventory")], ids[:1])
                continue
            if len(ids) != 2 or ids[0] == ids[1]:
                continue
            if ids[1] in containers and (ids[0] in held or ids[0] in inside or (ids[0] in portable and ids[1] in stays)):
                keep(verb, ids, text, ids)
            elif (ids[1] in boxes and ids[0] not in places | never | boxes) or (
                    ids[1] in containers and ids[0] in portable and ids[1] in portable and ids[1] in vessels):
                keep(verb, ids, text, ids)
                wide.add((verb, ids))
        elif verb == "pour":
            if len(ids) == 2 and ids[0] in portable and ids[0] in containers and ids[1] in containers and (
                    ids[0] in held or _filled(text, filled)) and ids[0] != ids[1]:
                keep(verb, ids, text, ids)
        elif verb in _HELD_ONLY:
            if ids and ids[0] in held:
                keep(verb, ids, text, ids)
        elif verb == "connect":
            if len(ids) == 2 and ids[0] != ids[1] and _electrical(text):
                keep(verb, tuple(sorted(ids)), text, ids)  # one order of each pair (whichever ScienceWorld lists)
            elif len(ids) == 2 and ids[0] != ids[1] and (
                    (ids[0] in poles and ids[1] in portable) or (ids[1] in poles and ids[0] in portable)):
                keep(verb, tuple(sorted(ids)), text, ids)
                wide.add((verb, tuple(sorted(ids))))
        elif verb == "mix":
            if ids and ids[0] in portable:
                keep(verb, ids, text, ids)
        else:
            keep(verb, ids, text, ids)
    moves = {text: ids for text, ids in chosen.values()}
    for move in ALWAYS:
        moves.setdefault(move, ())
    order = sorted(moves, key=lambda m: (_RANK.get(verb_of(m), len(ORDER)), m))
    if cap is not None and len(order) > cap:
        widened = {chosen[key][0] for key in wide if key in chosen}
        drop = set([m for m in reversed(order) if m in widened][:len(order) - cap])
        order = [m for m in order if m not in drop]
    return {m: moves[m] for m in order}


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


def _overlap(a: str, b: str, loose: bool = False) -> float:
    wa, wb = _words(a), _words(b)
    da, db = {w for w in wa if w.isdigit()}, {w for w in wb if w.isdigit()}
    if da != db and not (loose and not (da and db)):
        return 0.0  # flower pot 4 is not flower pot 5
    if not wa or not wb:
        return 1.0 if a.strip() == b.strip() else 0.0
    return len(wa & wb) / len(wa | wb) + (0.01 if a.strip() == b.strip() else 0.0)


def _names_of(cand: str, cphrases: Sequence[str], ids: Mapping[str, Sequence[int]] | None,
              referents: Mapping[int, Iterable[str]] | None) -> list[frozenset[str]]:
    """Per object phrase of a candidate, the names ScienceWorld accepts for its object (empty when unknown)."""
    if not ids or not referents:
        return [frozenset()] * len(cphrases)
    objs = list(ids.get(cand, ()))
    if len(objs) != len(cphrases):
        return [frozenset()] * len(cphrases)
    return [frozenset(referents.get(int(o), ())) for o in objs]


def _score(gold: str, cand: str, names: frozenset[str]) -> float:
    """How well a gold object phrase names a candidate's object: above 1 when it is one of the object's names
    alone (2), or one followed by where it is (``... in <place>``: 1.5, more the longer the name, so
    ``apple tree in the seedling stage in pot 9`` takes the seedling over every apple tree), or a part or a
    stage named with it (1.2); shared words decide between like objects. Else the word overlap (at most
    about 1)."""
    words = _similarity(gold, cand)
    if names:  # the object is known by name: where it is decides between like objects (digits only if both say)
        words = max(words, _overlap(gold, cand, loose=True))
        if gold in names:
            return 2.0 + 0.01 * words
        for sep in (" in ", " on "):
            i = len(gold)
            while (i := gold.rfind(sep, 0, i)) > 0:  # the longest name first
                if gold[:i] in names:
                    return 1.5 + 0.4 * i / len(gold) + 0.01 * words
        # a part the valid list leaves out, named after its object (``aluminum foil terminal 1``): the object;
        # one word before a name (a life stage the gold path expected: ``adult apple tree``): the object
        for name in names:
            head, _, rest = gold.partition(" ")
            if rest == name and head not in _STOP:
                return 1.2 + 0.01 * words
            if gold.startswith(name + " ") and gold[len(name) + 1:].split(" ")[0] in _ELECTRICAL:
                return 1.2 + 0.01 * words
    return words


def gold_candidate(gold: str, candidates: Sequence[str], ids: Mapping[str, Sequence[int]] | None = None,
                   referents: Mapping[int, Iterable[str]] | None = None) -> str | None:
    """The candidate naming the action of ScienceWorld's gold string ``gold`` (``None``: none does).

    With ``ids`` (a candidate's object ids, :func:`narrow_ids`) and ``referents`` (every name ScienceWorld's
    parser accepts for an object id), an object phrase of the gold that is one of the names of the
    candidate's object (``seed jar`` for the object the valid list calls ``ceramic cup containing apple
    seed``), or is one followed by where it is (``egg turtle in outside``), matches it before any word
    overlap does; among such matches the most shared words win."""
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
                names = _names_of(cand, cphrases, ids, referents)
                score = min((_score(g, c, n) for g, c, n in zip(phrases, cphrases, names)), default=1.0)
                if verb == "connect":  # a connection has no direction: the candidate keeps one order
                    score = max(score, min(_score(g, c, n) for g, c, n in
                                           zip(phrases, cphrases[::-1], names[::-1])))
                if score > best_score:
                    best, best_score = cand, score
    if best is not None and best_score >= (FOCUS_THRESHOLD if verb_of(best) == "focus on" else THRESHOLD):
        return best
    same = [p for v, p in readings if len(p) == 2 and p[0] == p[1]]
    if gold.isdigit() or same:  # an answer to the ambiguity prompt: the move it answers was played already
        return "look around" if "look around" in candidates else None
    if verb_of(gold) in ("open", "close", "pick up"):  # a no-op that still takes its tick (look around takes none)
        return "wait1" if "wait1" in candidates else None
    return None
