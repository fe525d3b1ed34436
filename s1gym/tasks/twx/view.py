"""What a TextWorldExpress player sees, read as a :class:`TWXView` (the TWX family's reading: Local's TWX
models read their move features from it, and the TWX tasks' progress estimates read it too).

:func:`read_view` turns a :class:`~s1gym.core.Situation` of any TextWorldExpress game into a :class:`TWXView`:
the task, what the player remembers (the recipe, the map, the math problem, the current instruction), the room
and its exits, the inventory, the rooms walked and the way between them (from the history: s1gym's TWX
feedback of a move names the room it led to and that room's exits), the moves played. Nothing else: never
the game's hidden state, the gold path or the expert. The game-specific reading (a map's distances, a math
problem's answer, quantities with units, the book's instruction, Simon's order) is here too;
:mod:`s1gym.tasks.twx.tokens` turns it into feature names.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from s1gym.core.situation import Situation

__all__ = ["COOKS", "CUTS", "DIRECTIONS", "ROOM", "Move", "Recipe", "TWXView", "frontier_moves", "parse_move",
           "quantity", "read_view", "room_in", "words"]

#: Where TWX says the player is (``You are in the kitchen.``): the one definition every TWX module reads.
ROOM = re.compile(r"You are in the ([^.]+)\.")
_EXIT = re.compile(
    r"(?:Through an? (?P<open>open) (?P<door1>[\w -]+?door), to the|To the) (?P<dir>North|South|East|West) you see "
    r"(?:the (?P<room>[\w -]+?)|an? (?P<closed>closed) (?P<door2>[\w -]+?door))\.",
    re.IGNORECASE,
)
_REVEAL = re.compile(r"revealing the ([\w -]+?)\.")
ARTICLE = re.compile(r"^(a|an|the|some)\s+", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+")
CUTS = {"slice": "sliced", "dice": "diced", "chop": "chopped"}
COOKS = {"roast": "roasted", "fry": "fried", "grill": "grilled"}
DIRECTIONS = ("north", "south", "east", "west")
INFO_VERBS = frozenset({"look", "inventory", "examine", "task"})
#: Units of TWX Sorting's quantities (volume, mass, length), in their base unit.
_UNITS = {"ml": Fraction(1, 1000), "l": Fraction(1), "mg": Fraction(1, 1000), "g": Fraction(1), "kg": Fraction(1000),
          "mm": Fraction(1, 1000), "cm": Fraction(1, 100), "m": Fraction(1), "km": Fraction(1000)}
_QUANTITY = re.compile(r"^(\d+)\s*(ml|l|mg|g|kg|mm|cm|m|km)?\b(?:\s+of)?\s*(.*)$")
_OPS = re.compile(r"\b(add|subtract|multiply|divide)\s+(\d+)\s+(?:and|by|from|to)\s+(\d+)")
QUOTED = re.compile(r"Simon says,? '([^']+)'", re.IGNORECASE)
_INSTRUCTION = re.compile(r"current task is to ([^.]+)\.", re.IGNORECASE)
_MAP_LINE = re.compile(r"The ([\w -]+?) connects to (?:the )?([^.]+)\.")
TASK_PLACES = re.compile(r"located in the ([\w -]+?),.*?box found in the ([\w -]+?)\.", re.IGNORECASE)



def room_in(text: str) -> str:
    """The room a TWX text says the player is in (``""`` when it names none)."""
    m = ROOM.search(text)
    return m.group(1) if m else ""

def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def stem_done(verb: str, adjectives: Iterable[str]) -> bool:
    """Whether an adjective says ``verb`` was done (``dice`` -> ``diced``, ``fry`` -> ``fried``)."""
    past = CUTS.get(verb) or COOKS.get(verb)
    return past is not None and past in set(adjectives)


@dataclass
class Recipe:
    ingredients: list[str]
    #: ingredient -> the direction verbs that name it (``dice``, ``roast``...)
    directions: dict[str, list[str]]


@dataclass
class TWXView:
    """A TWX situation as a player reads it."""

    task: str = ""
    memory: list[str] = field(default_factory=list)
    room: str = ""
    look: str = ""
    #: direction -> (room name or "" when a closed door hides it, "open"/"closed"/"" door)
    exits: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: inventory entries without their article (``diced roasted orange bell pepper``, ``10 peaches``)
    inventory: list[str] = field(default_factory=list)
    feedback: str = ""
    #: the observation's first paragraph (the game's answer, or its opening words before any move)
    opening: str = ""
    visited: list[str] = field(default_factory=list)
    seen_rooms: set[str] = field(default_factory=set)
    played: Counter = field(default_factory=Counter)
    history: tuple[tuple[str, str], ...] = ()
    recipe: Recipe | None = None
    score: float = 0.0
    #: the map a player keeps: room -> its exits as last seen, and (room, direction) -> room walked
    room_exits: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)
    edges: dict[tuple[str, str], str] = field(default_factory=dict)
    #: the room the game started in, and whether its exits are unknown (left at once, never re-entered)
    start: str = ""
    start_unknown: bool = False

    def frontier_distance(self) -> dict[str, int]:
        """Per known room, the fewest known moves to a room with an exit not taken yet (0: it has one)."""
        known = set(self.visited)
        frontier = {room for room, exits in self.room_exits.items()
                    if any((room, d) not in self.edges and (not dest or dest not in known)
                           for d, (dest, _) in exits.items())}
        if self.start_unknown and self.start in known:
            frontier.add(self.start)  # its exits were seen before the first move only: worth a look again
        neighbours: dict[str, set[str]] = {}
        for (room, _), dest in self.edges.items():
            neighbours.setdefault(room, set()).add(dest)
        for room, exits in self.room_exits.items():
            for dest, _ in exits.values():
                if dest in known:
                    neighbours.setdefault(room, set()).add(dest)
                    neighbours.setdefault(dest, set()).add(room)
        return distances(neighbours, *frontier)

    # ---------------------------------------------------------------- items
    def held(self, obj: str) -> str | None:
        """The inventory entry holding ``obj`` (word-bounded), or None."""
        pattern = re.compile(rf"(^|\s){re.escape(obj)}$", re.IGNORECASE)
        for entry in self.inventory:
            if pattern.search(entry):
                return entry
        return None

    def adjectives(self, obj: str) -> list[str]:
        entry = self.held(obj) or ""
        return words(entry[: max(0, len(entry) - len(obj))])

    def missing(self) -> list[str]:
        """Recipe ingredients not held."""
        return [i for i in self.recipe.ingredients if self.held(i) is None] if self.recipe else []

    def pending(self) -> list[tuple[str, str]]:
        """(ingredient, direction verb) the recipe asks for and the held ingredient does not show yet."""
        out = []
        if self.recipe:
            for ing, verbs in self.recipe.directions.items():
                adjs = self.adjectives(ing)
                out.extend((ing, v) for v in verbs if not stem_done(v, adjs))
        return out


_OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east"}


def _exits(text: str) -> dict[str, tuple[str, str]]:
    """direction -> (the room seen that way, or "" behind a closed door; the door: open/closed/"")."""
    out = {}
    for e in _EXIT.finditer(text):
        door = "open" if e.group("open") else ("closed" if e.group("closed") else "")
        out[e.group("dir").lower()] = ((e.group("room") or "").strip(), door)
    return out


def _read_map(view: TWXView, history: Sequence[tuple[str, str]]) -> None:
    """The rooms walked, the moves between them and each room's exits as last seen, from the history.

    s1gym's TWX feedback of a move names the room it led to and that room's exits; opening a door names the
    room behind it. The room the game started in is named by the first arrival's way back.
    """
    start = "?start"
    here = start
    visited: list[str] = []
    unknown_start = True
    for move, fb in history:
        view.played[move] += 1
        arrival = ROOM.search(fb)
        d = move.removeprefix("move ").strip().lower()
        if arrival and d in _OPPOSITE:
            room = arrival.group(1)
            exits = _exits(fb)
            if here == "?start":
                came = exits.get(_OPPOSITE[d], ("", ""))[0]
                if came:
                    _rename(view, start, came)
                    start = here = came
            view.edges[(here, d)] = room
            view.edges[(room, _OPPOSITE[d])] = here
            for r in (here, room):
                if r not in visited:
                    visited.append(r)
            merged = dict(view.room_exits.get(room, {}))
            merged.update(exits)
            view.room_exits[room] = merged
            if room == start:
                unknown_start = False
            here = room
        reveal = _REVEAL.search(fb)
        door = re.match(r"open door to (\w+)$", move)
        if reveal and door:
            view.room_exits.setdefault(here, {})[door.group(1)] = (reveal.group(1), "open")
            view.seen_rooms.add(reveal.group(1))
    if here == "?start" and view.room:
        _rename(view, start, view.room)
        start = view.room
        unknown_start = False
    view.visited = [v for v in visited if v != "?start"]
    view.start_unknown = unknown_start and start != view.room
    view.start = start


def _rename(view: TWXView, old: str, new: str) -> None:
    if old == new:
        return
    view.edges = {((new if a == old else a), d): (new if b == old else b) for (a, d), b in view.edges.items()}
    if old in view.room_exits:
        view.room_exits.setdefault(new, {}).update(view.room_exits.pop(old))


def frontier_moves(view: TWXView, candidates: Sequence[str]) -> set[str]:
    """The first moves of the shortest walks (on the map the player knows) to an exit not taken yet:
    take an untaken exit of this room (opening its door first), else step to a known room nearer to one."""
    out: set[str] = set()
    for d, (dest, door) in view.exits.items():
        if (view.room, d) not in view.edges and (not dest or dest not in view.visited):
            out.add(f"open door to {d}" if door == "closed" else f"move {d}")
    if not out:
        dist = view.frontier_distance()
        here = dist.get(view.room)
        for d, (dest, door) in view.exits.items():
            if here is not None and dest in dist and dist[dest] < here:
                out.add(f"open door to {d}" if door == "closed" else f"move {d}")
    return out & set(candidates)


def _paragraphs(text: str) -> list[str]:
    return [p for p in text.split("\n\n") if p.strip()]


def _parse_recipe(memory: Sequence[str]) -> Recipe | None:
    text = "\n\n".join(memory)
    if "Ingredients:" not in text:
        return None
    ing_part = text.split("Ingredients:", 1)[1].split("Directions:", 1)[0]
    ingredients = [line.strip() for line in ing_part.splitlines() if line.strip()]
    directions: dict[str, list[str]] = {i: [] for i in ingredients}
    if "Directions:" in text:
        for line in text.split("Directions:", 1)[1].splitlines():
            line = line.strip()
            verb = line.split(" ", 1)[0] if line else ""
            if verb in CUTS or verb in COOKS:
                obj = ARTICLE.sub("", line.split(" ", 1)[1]) if " " in line else ""
                if obj in directions:
                    directions[obj].append(verb)
    return Recipe(ingredients, directions)


def read_view(situation: Situation) -> TWXView:
    """The situation read as :class:`TWXView` (see the module docstring)."""
    view = TWXView(history=situation.history, score=situation.score)
    paras = _paragraphs(situation.state_text or situation.observation)
    memory_on = False
    view.opening = paras[0].strip() if paras else ""
    for p in paras:
        s = p.strip()
        if s.startswith("Task:"):
            view.task = s[5:].strip()
            memory_on = False
        elif s.startswith("You remember:"):
            view.memory.append(s[len("You remember:"):].strip())
            memory_on = True
        elif s.startswith("You are in the"):
            view.look = s
            memory_on = False
        elif s.startswith("Inventory"):
            memory_on = False
            for line in s.splitlines()[1:]:
                entry = ARTICLE.sub("", line.strip().rstrip("."))
                if entry and not entry.lower().startswith("your inventory is currently empty"):
                    view.inventory.append(entry)
        elif memory_on:
            view.memory.append(s)
    view.room = room_in(view.look)
    view.exits = _exits(view.look)
    view.feedback = situation.history[-1][1].strip() if situation.history else ""
    _read_map(view, situation.history)
    view.seen_rooms |= {r for r, _ in view.exits.values() if r}
    if view.room:
        view.room_exits[view.room] = view.exits
        if view.room not in view.visited:
            view.visited.append(view.room)
    view.recipe = _parse_recipe(view.memory)
    return view


# --------------------------------------------------------------------------
# Game-specific reading: map distances, arithmetic, quantities, instructions
# --------------------------------------------------------------------------


def map_graph(memory: Sequence[str]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for text in memory:
        for a, rest in _MAP_LINE.findall(text):
            for b in re.split(r",\s*|\s+and\s+", rest):
                b = ARTICLE.sub("", b.strip())
                if b:
                    graph.setdefault(a.strip(), set()).add(b)
                    graph.setdefault(b, set()).add(a.strip())
    return graph


def distances(graph: dict[str, set[str]], *goals: str) -> dict[str, int]:
    """Fewest moves from each room of ``graph`` to the nearest of ``goals`` (breadth first)."""
    dist = dict.fromkeys(goals, 0)
    queue = deque(goals)
    while queue:
        room = queue.popleft()
        for nxt in graph.get(room, ()):
            if nxt not in dist:
                dist[nxt] = dist[room] + 1
                queue.append(nxt)
    return dist


def answer(memory: Sequence[str]) -> Fraction | None:
    for text in memory:
        m = _OPS.search(text.lower())
        if m:
            op, a, b = m.group(1), int(m.group(2)), int(m.group(3))
            if op == "add":
                return Fraction(a + b)
            if op == "multiply":
                return Fraction(a * b)
            if op == "subtract":
                return Fraction(b - a) if " from " in m.group(0) else Fraction(a - b)
            return Fraction(a, b) if b else None
    return None


def quantity(obj: str) -> Fraction | None:
    """``18ml of marble`` -> 18/1000; ``6 pineapples`` -> 6; otherwise None."""
    m = _QUANTITY.match(obj)
    if not m:
        return None
    return int(m.group(1)) * _UNITS.get(m.group(2) or "", Fraction(1))


def instruction(memory: Sequence[str]) -> str | None:
    for text in reversed(memory):
        m = _INSTRUCTION.search(text)
        if m:
            return " ".join(w for w in words(m.group(1)) if w not in ("the", "a", "an"))
    return None


# --------------------------------------------------------------------------
# Moves
# --------------------------------------------------------------------------


@dataclass
class Move:
    text: str
    verb: str
    obj: str = ""
    target: str = ""
    direction: str = ""


def parse_move(text: str) -> Move:
    t = text.strip()
    low = t.lower()
    if low.startswith("move ") and low[5:] in DIRECTIONS:
        return Move(t, "move", direction=low[5:])
    m = re.match(r"(open|close) door to (\w+)$", low)
    if m:
        return Move(t, f"{m.group(1)}door", direction=m.group(2))
    m = re.match(r"(cook|put) (.+?) (?:in|on) (.+)$", t)
    if m:
        return Move(t, m.group(1), m.group(2), m.group(3))
    verb, _, rest = t.partition(" ")
    return Move(t, verb.lower(), rest)
