"""Where a thing belongs, from the packaged sentence embedder: feature names for TWC's moves.

TWC (TextWorld Commonsense) asks the player to put things where they usually go, and its test fold
brings things its train fold never shows, so word pairs learned in training cannot know them. This
module reads that knowledge off all-MiniLM-L6-v2 (:mod:`s1gym.models.minilm`, the packaged model,
offline): the fit of a thing ``X`` to a place ``Y`` is the cosine of the sentences
:data:`THING` and :data:`PLACE` filled with them (chosen on TWC train and dev games against the bare
names and three other wordings). What a move is given is the *rank* of a place among the places the room
shows, not the cosine itself (cosines of different things are not on one scale):

- ``cs:put+r0`` / ``r1`` / ``r2+``: ``put X in Y`` puts X in the room's best-fitting place for it, its
  second, or a worse one;
- ``cs:open+r0`` / ``r1`` / ``r2+`` / ``noheld``: ``open Y`` opens the best-fitting place for some held
  thing (its best rank over what is held), or nothing is held;
- ``cs:take+from_r0`` / ``from_r1+``: ``take X`` takes X out of the place that fits it best, or out of a
  worse one (a thing put in the wrong place is worth taking again; one in its best place is not).

Weights on these names are learned with the rest of the game's model (``python -m s1gym.tasks.twx.fit fit
--commonsense``); this module only reads. Fits are cached per process (a decision embeds only the
sentences it has not met), so after the first decisions of a game a move costs a dictionary look-up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from s1gym.core import Situation
from s1gym.models.minilm import embed
from s1gym.tasks.twx.view import parse_move, read_view

__all__ = ["PLACE", "THING", "commonsense_tokens", "fit", "places_in", "ranks", "room_places"]

THING = "Put the {} away."
PLACE = "It is kept in the {}."

#: a place the room shows: "you see a bench, that has ...", "a clothes drier that is closed", "An open
#: bathroom cabinet, that contains ...", "a desk that has a clean black bra on it"
_PLACE = re.compile(r"\b(?:a|an)\s+(?:open\s+)?([A-Za-z][A-Za-z -]*?)(?:,\s*that\b|\s+that\s+(?:is|has|contains)\b)",
                    re.IGNORECASE)
#: what sits in or on a place: "<place>, that contains a X, and a Y." / "<place> that has a X on it."
_HOLDS = re.compile(r"\b(?:a|an)\s+(?:open\s+)?([A-Za-z][A-Za-z -]*?),?\s+that\s+(?:has|contains)\s+([^.]+?)"
                    r"(?:\s+on it)?\.", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:a|an|the|some)\s+", re.IGNORECASE)


@lru_cache(maxsize=65536)
def fit(thing: str, place: str) -> float:
    """How well ``thing`` fits ``place``: the cosine of :data:`THING` and :data:`PLACE` filled with them."""
    a, b = embed([THING.format(thing), PLACE.format(place)])
    return round(float(a @ b), 5)


def ranks(thing: str, places: list[str]) -> dict[str, int]:
    """Each place's rank for ``thing`` (0: fits best; ties broken by name, so the order is deterministic)."""
    order = sorted(places, key=lambda p: (-fit(thing, p), p))
    return {p: i for i, p in enumerate(order)}


def places_in(look: str) -> list[str]:
    """The places (containers and surfaces) a room's description names, in order, lower-case, once each."""
    found = [m.group(1).strip().lower() for m in _PLACE.finditer(look)]
    return [p for p in dict.fromkeys(found) if p and not p.startswith("door")]


def _contents(look: str) -> dict[str, str]:
    """Thing -> the place it sits in or on, from the room's description."""
    out: dict[str, str] = {}
    for m in _HOLDS.finditer(look):
        place = m.group(1).strip().lower()
        for part in re.split(r",\s*(?:and\s+)?|\s+and\s+", m.group(2)):
            thing = _ARTICLE.sub("", part.strip()).lower()
            if thing and thing != "nothing":
                out[thing] = place
    return out


def _bucket(rank: int, last: int) -> str:
    return f"r{rank}" if rank < last else f"r{last}+"


def room_places(look: str, moves: Iterable[str]) -> list[str]:
    """The places of a room: those its description ``look`` names, then the targets ``moves`` name (a place
    the description's pattern missed)."""
    places = places_in(look)
    for text in moves:
        move = parse_move(text)
        if move.verb == "put" and move.target and move.target.lower() not in places:
            places.append(move.target.lower())
    return places


def commonsense_tokens(situation: Situation) -> list[list[str]]:
    """Per candidate, its ``cs:*`` feature names (see the module docstring); ``[]`` for other moves."""
    view = read_view(situation)
    places = room_places(view.look, situation.texts)
    held = [_ARTICLE.sub("", e).lower() for e in view.inventory]
    contents = _contents(view.look)
    rows: list[list[str]] = []
    for text in situation.texts:
        move = parse_move(text)
        out: list[str] = []
        if places and move.verb == "put" and move.target:
            out.append("cs:put+" + _bucket(ranks(move.obj.lower(), places)[move.target.lower()], 2))
        elif places and move.verb == "open" and move.obj.lower() in places:
            if held:
                best = min(ranks(t, places)[move.obj.lower()] for t in held)
                out.append("cs:open+" + _bucket(best, 2))
            else:
                out.append("cs:open+noheld")
        elif places and move.verb == "take" and move.obj.lower() in contents:
            where = contents[move.obj.lower()]
            if where in places:
                out.append("cs:take+from_" + _bucket(ranks(move.obj.lower(), places)[where], 1))
        rows.append(out)
    return rows
