"""What Local's TextWorld model reads off a situation: per candidate move, feature names from the text a
player sees (the goal, the recipe once read, the room, the inventory, the moves played and their feedback).

Per candidate (``verb`` its first word, ``obj`` the words naming what it acts on):

- ``v:<verb>``;
- ``<verb>|goal``: the goal names the object (or, for ``go``, the direction); ``<verb>|next``: the move is the
  goal's next instruction (the goal's sentences matched in order against the moves played);
- ``<verb>|held``: the inventory names the object;
- cooking, once the recipe is read: ``<verb>|recipe`` (an ingredient), ``prep|wanted`` / ``prep|unwanted``
  (a cut or a cook the recipe does or does not ask for), ``take|tool`` (a knife when the recipe cuts),
  ``prepare|ready`` / ``prepare|missing`` (the inventory does / does not yet hold every ingredient cut and
  cooked as the directions say);
- ``go|new`` / ``go|known``: the exit leads to a room not yet seen, or back to one (a map read off the
  moves played and the room headers their feedback printed);
- with Lookahead: ``out:reward`` (the move raises the score), ``out:same`` (the outcome shows the same room,
  inventory, score and recipe as now: the move changes nothing), ``out:revisit`` / ``out:revisit2`` /
  ``out:revisit3`` (the episode was in the move's outcome state at least once / twice / three times),
  ``out:fewest`` (no other candidate leads to a state visited fewer times), ``out:lost``.

:func:`progress_tokens` names what the progress estimate reads: the score, the recipe read, how many goal
instructions are done and rooms seen.
"""

from __future__ import annotations

import re

from s1gym.core import Situation

__all__ = ["candidate_tokens", "progress_tokens"]

DIRECTIONS = ("north", "south", "east", "west")
OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east"}
_ROOM = re.compile(r"-= (.+?) =-")
_SPLIT = re.compile(r" (?:from|with|in|into|on) ")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[a-z]+")
CUTS = ("chop", "slice", "dice")
COOKS = {"stove": "fry", "oven": "roast", "bbq": "grill"}
#: What a direction's verb leaves on the ingredient, as the inventory names it.
DONE = {"chop": "chopped", "slice": "sliced", "dice": "diced", "fry": "fried", "roast": "roasted",
        "grill": "grilled"}
_MOVES = re.compile(r"\bMoves: \d+\.")
_RECIPE_PART = re.compile(r"ingredients:\s*(.*?)\s*directions:\s*(.*)", re.DOTALL)
_STOP = {"the", "a", "an", "of", "to", "and"}


_HEADS = ("Goal: ", "Recipe (from the cookbook): ", "Room: ", "Inventory: ", "Score: ")


def _section(text: str, head: str) -> str:
    """The text after ``head`` up to the next section's head (lowercase)."""
    start = text.find("\n\n" + head) if not text.startswith(head) else -2
    if start == -1:
        return ""
    start += 2 + len(head)
    ends = [i for h in _HEADS if h != head and (i := text.find("\n\n" + h, start)) != -1]
    return text[start:min(ends, default=len(text))].lower()


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - _STOP


def _parts(move: str) -> tuple[str, str, str]:
    verb, _, rest = move.partition(" ")
    pieces = _SPLIT.split(rest, maxsplit=1)
    return verb, pieces[0], pieces[1] if len(pieces) > 1 else ""


def _matches(move: str, sentence: str) -> bool:
    verb, obj, _ = _parts(move)
    words = _words(sentence)
    if verb == "go":
        return obj in words and not any(d in words for d in DIRECTIONS if d != obj)
    return bool(_words(obj)) and _words(obj) <= words


class _View:
    """One reading of a situation's text, shared by its candidates."""

    def __init__(self, situation: Situation) -> None:
        text = situation.state_text
        self.goal = _section(text, "Goal: ")
        self.recipe = _section(text, "Recipe (from the cookbook): ")
        self.inventory = _section(text, "Inventory: ")
        room = _ROOM.search(_section(text, "Room: ") or "")
        self.room = room.group(1).lower() if room else ""
        self.goal_words = _words(self.goal)
        sentences = [s for s in _SENTENCE.split(self.goal) if s]
        done = 0
        for move, _ in situation.history:  # the instructions followed, in order (a deviation skips none)
            hit = next((i for i in range(done, min(done + 3, len(sentences))) if _matches(move, sentences[i])), None)
            if hit is not None:
                done = hit + 1
        self.done = done
        texts = [c.text for c in situation.candidates]
        self.next = next((s for s in sentences[done:] if any(_matches(t, s) for t in texts)), "")
        self.seen, self.edges = self._map(situation)

    def _map(self, situation: Situation) -> tuple[set[str], dict[tuple[str, str], str]]:
        """Rooms seen and the exits known, from the moves played (the start room is "start" until a
        header names it)."""
        moved = [(m, _ROOM.search(f)) for m, f in situation.history]
        room = "start" if any(m.startswith("go ") and h for m, h in moved) else self.room
        edges: dict[tuple[str, str], str] = {}
        seen = {self.room, room}
        for move, header in moved:
            if move.startswith("go ") and header:
                d, there = move[3:], header.group(1).lower()
                edges[(room, d)] = there
                edges[(there, OPPOSITE.get(d, d))] = room
                room = there
                seen.add(room)
        return seen, edges


def _items(inventory: str) -> list[str]:
    """The inventory's items ("you are carrying: a knife and a sliced red apple." -> their names)."""
    _, _, listed = inventory.partition(":")
    items = re.split(r",\s*|\s+and\s+", listed.strip().rstrip("."))
    return [re.sub(r"^(a|an|some|the)\s+", "", i.strip()) for i in items if i.strip()]


def _ready(recipe: str, inventory: str) -> bool:
    """Whether the inventory holds every ingredient of the recipe, cut and cooked as its directions say."""
    found = _RECIPE_PART.search(recipe)
    if not found:
        return False
    items = _items(inventory)
    for line in found.group(1).splitlines():
        name = line.strip()
        if name and not any(i.endswith(name) for i in items):
            return False
    for line in found.group(2).splitlines():
        verb, _, rest = line.strip().partition(" ")
        name = rest.removeprefix("the ").strip()
        if verb in DONE and not any(i.endswith(name) and DONE[verb] in i.split() for i in items):
            return False
    return True


def _body(state_text: str) -> str:
    """A state text without its feedback and its move count: what the world shows."""
    start = state_text.find("Goal: ")
    return _MOVES.sub("", state_text[max(start, 0):])


def _cook_tokens(view: _View, verb: str, obj: str, tool: str) -> list[str]:
    if not view.recipe:
        return []
    out = []
    if obj and obj in view.recipe:
        out.append(f"{verb}|recipe")
    want = None
    if verb in CUTS:
        want = f"{verb} the {obj}"
    elif verb == "cook" and tool in COOKS:
        want = f"{COOKS[tool]} the {obj}"
    if want is not None:
        out.append("prep|wanted" if want in view.recipe else "prep|unwanted")
    if verb == "take" and obj == "knife" and any(c in view.recipe for c in CUTS):
        out.append("take|tool")
    if verb == "prepare":
        out.append("prepare|ready" if _ready(view.recipe, view.inventory) else "prepare|missing")
    return out


def candidate_tokens(situation: Situation) -> list[list[str]]:
    """Per candidate, the feature names above."""
    view = _View(situation)
    now = _body(situation.state_text)
    counts = [c.revisits for c in situation.candidates if c.revisits is not None]
    fewest = min(counts, default=None)
    rows = []
    for c in situation.candidates:
        verb, obj, tool = _parts(c.text)
        row = [f"v:{verb}"]
        if verb == "go":
            if obj in view.goal_words:
                row.append("go|goal")
            row.append("go|known" if (view.room, obj) in view.edges else "go|new")
        elif _words(obj) and _words(obj) <= view.goal_words:
            row.append(f"{verb}|goal")
        if view.next and _matches(c.text, view.next):
            row += ["next", f"{verb}|next"]
        if obj and obj in view.inventory:
            row.append(f"{verb}|held")
        row += _cook_tokens(view, verb, obj, tool)
        if c.reward is not None and c.reward > 0:
            row.append("out:reward")
        if c.outcome is not None and _body(c.outcome) == now:
            row.append("out:same")
        if c.revisits:
            row += [name for n, name in ((1, "out:revisit"), (2, "out:revisit2"), (3, "out:revisit3"))
                    if c.revisits >= n]
        if c.revisits is not None and len(counts) > 1 and c.revisits == fewest:
            row.append("out:fewest")
        if c.outcome is not None and "*** You lost! ***" in c.outcome:
            row.append("out:lost")
        rows.append(row)
    return rows


def progress_tokens(situation: Situation) -> list[str]:
    """What the progress estimate reads: the score, whether the recipe is read, goal instructions done,
    rooms seen (one-hot, capped)."""
    view = _View(situation)
    return [f"score:{round(situation.score * 10)}", f"recipe:{int(bool(view.recipe))}",
            f"done:{min(view.done, 20)}", f"rooms:{min(len(view.seen), 12)}",
            f"held:{min(view.inventory.count(','), 5)}"]
