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

With the score change of each move played (``Situation.rewards``, aligned with ``Situation.history``; what
any RL agent sees), a put tells whether it was right: TWC raises the score when a thing goes where it
belongs and lowers it when it goes elsewhere (a put that earns nothing or less was wrong). So, per thing, the places a put of it earned nothing are *tried*, and:

- the ranks above leave a thing's tried places out (after a wrong first choice, the next best is ``r0``);
- ``sc:put+tried``: ``put X in Y`` where a put of X in Y already earned nothing;
- ``sc:take+scored`` / ``unscored``: ``take X`` where X's last put raised the score (it is in place: leave
  it) or earned nothing (take it back to move it elsewhere);
- ``sc:put+r0+stalled``: ``put X in Y``, Y the room's best untried place for X, when the score has not passed
  its best so far for :data:`STALL` moves or more (taking back a thing put wrong only restores it): walking
  on has stopped paying, try the best guess here. The oracle's games never stall, so this weight, like
  ``sc:put+tried``'s, is chosen on dev games (``--set``).

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

__all__ = ["PLACE", "THING", "commonsense_tokens", "fit", "places_in", "put_outcomes", "ranks", "room_places"]

#: moves without a new best score after which ``sc:put+r0+stalled`` is given (chosen on TWC dev games)
STALL = 4
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


def put_outcomes(situation: Situation) -> tuple[dict[str, set[str]], dict[str, bool]]:
    """From the moves played and their rewards: per thing, the places a put of it earned nothing in
    (*tried*), and whether its last put (not taken back since) raised the score. Both empty when the
    situation carries no rewards (``len(rewards) != len(history)``, e.g. a situation made by hand)."""
    tried: dict[str, set[str]] = {}
    last: dict[str, bool] = {}
    if len(situation.rewards) != len(situation.history):
        return tried, last
    for (text, _), reward in zip(situation.history, situation.rewards, strict=True):
        move = parse_move(text)
        if move.verb == "put" and move.target:
            thing = move.obj.lower()
            last[thing] = reward > 0
            if reward <= 0:
                tried.setdefault(thing, set()).add(move.target.lower())
        elif move.verb == "take":
            last.pop(move.obj.lower(), None)
    return tried, last


def commonsense_tokens(situation: Situation) -> list[list[str]]:
    """Per candidate, its ``cs:*`` and ``sc:*`` feature names (see the module docstring); ``[]`` for other
    moves."""
    view = read_view(situation)
    places = room_places(view.look, situation.texts)
    held = [_ARTICLE.sub("", e).lower() for e in view.inventory]
    contents = _contents(view.look)
    tried, last = put_outcomes(situation)
    stalled = False
    if situation.rewards and len(situation.rewards) == len(situation.history):
        total, best, since = 0.0, 0.0, 0  # moves since the score last passed its best so far
        for r in situation.rewards:
            total += r
            since = 0 if total > best + 1e-9 else since + 1
            best = max(best, total)
        stalled = since >= STALL

    def untried(thing: str, place: str) -> dict[str, int]:
        """``thing``'s ranks over the room's places it was not put in for nothing (``place`` kept)."""
        out = tried.get(thing, set())
        return ranks(thing, [p for p in places if p == place or p not in out])

    rows: list[list[str]] = []
    for text in situation.texts:
        move = parse_move(text)
        out: list[str] = []
        thing = move.obj.lower()
        if places and move.verb == "put" and move.target:
            place = move.target.lower()
            if place in tried.get(thing, ()):
                out.append("sc:put+tried")
            else:
                rank = untried(thing, place)[place]
                out.append("cs:put+" + _bucket(rank, 2))
                if stalled and rank == 0:
                    out.append("sc:put+r0+stalled")
        elif places and move.verb == "open" and thing in places:
            if held:
                best = min(untried(t, thing)[thing] for t in held)
                out.append("cs:open+" + _bucket(best, 2))
            else:
                out.append("cs:open+noheld")
        elif places and move.verb == "take" and thing in contents:
            where = contents[thing]
            if where in places:
                out.append("cs:take+from_" + _bucket(ranks(thing, places)[where], 1))
        if move.verb == "take" and thing in last:
            out.append("sc:take+scored" if last[thing] else "sc:take+unscored")
        rows.append(out)
    return rows
