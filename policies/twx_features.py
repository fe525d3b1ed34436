"""What a TextWorldExpress player sees, read into tokens for Local's TWX models.

:func:`read_view` turns a :class:`~s1gym.core.Situation` of any TextWorldExpress
game into a :class:`View`: the task, what the player remembers (the recipe, the
map, the math problem, the current instruction), the room and its exits, the
inventory, the rooms visited (from the history: s1gym's TWX feedback names the
room a move led to), the moves played. Nothing else: never the game's hidden
state, the gold path or the expert.

:func:`candidate_tokens` gives each move a handful of tokens that say how the
move relates to that view, e.g. ``take+ingr+need`` (take a recipe ingredient
not held yet), ``cut+req`` (a cut the recipe asks for and that is not done),
``cook:roast|dev:oven`` (the recipe roasts it, the move cooks it in the oven),
``move+new`` (an exit to a room not visited yet), ``move+closer`` (MapReader:
one room nearer to where the task says to go), ``take+answer`` (Arithmetic: the
quantity that answers the math problem), ``take+smallest`` (Sorting),
``+instructed`` (PeckingOrder), ``+ordered`` (SimonSays), ``put|<word>|<word>``
(TWC: the words of the object and of the place, for commonsense placement).
Global :func:`context_tokens` (``recipe:unread``, ``missing:1``, ``ready``...)
pair with each move's verb-level tokens. With Lookahead, ``out:*`` and
``new:*`` tokens say what the move's outcome reveals and which moves it opens.

The weights are learned (``bench/twx_local.py``); this module only reads.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from s1gym.core import Candidate, Situation

__all__ = ["View", "candidate_tokens", "context_tokens", "features", "read_view"]

_ROOM = re.compile(r"You are in the ([^.]+)\.")
_EXIT = re.compile(
    r"(?:Through an? (?P<open>open) (?P<door1>[\w -]+?door), to the|To the) (?P<dir>North|South|East|West) you see "
    r"(?:the (?P<room>[\w -]+?)|an? (?P<closed>closed) (?P<door2>[\w -]+?door))\.",
    re.IGNORECASE,
)
_REVEAL = re.compile(r"revealing the ([\w -]+?)\.")
_ARTICLE = re.compile(r"^(a|an|the|some)\s+", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9]+")
_CUTS = {"slice": "sliced", "dice": "diced", "chop": "chopped"}
_COOKS = {"roast": "roasted", "fry": "fried", "grill": "grilled"}
_DIRECTIONS = ("north", "south", "east", "west")
_INFO_VERBS = frozenset({"look", "inventory", "examine", "task"})
#: Units of TWX Sorting's quantities (volume, mass, length), in their base unit.
_UNITS = {"ml": Fraction(1, 1000), "l": Fraction(1), "mg": Fraction(1, 1000), "g": Fraction(1), "kg": Fraction(1000),
          "mm": Fraction(1, 1000), "cm": Fraction(1, 100), "m": Fraction(1), "km": Fraction(1000)}
_QUANTITY = re.compile(r"^(\d+)\s*(ml|l|mg|g|kg|mm|cm|m|km)?\b(?:\s+of)?\s*(.*)$")
_OPS = re.compile(r"\b(add|subtract|multiply|divide)\s+(\d+)\s+(?:and|by|from|to)\s+(\d+)")
_QUOTED = re.compile(r"Simon says,? '([^']+)'", re.IGNORECASE)
_INSTRUCTION = re.compile(r"current task is to ([^.]+)\.", re.IGNORECASE)
_MAP_LINE = re.compile(r"The ([\w -]+?) connects to (?:the )?([^.]+)\.")
_TASK_PLACES = re.compile(r"located in the ([\w -]+?),.*?box found in the ([\w -]+?)\.", re.IGNORECASE)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _stem_done(verb: str, adjectives: Iterable[str]) -> bool:
    """Whether an adjective says ``verb`` was done (``dice`` -> ``diced``, ``fry`` -> ``fried``)."""
    past = _CUTS.get(verb) or _COOKS.get(verb)
    return past is not None and past in set(adjectives)


@dataclass
class Recipe:
    ingredients: list[str]
    #: ingredient -> the direction verbs that name it (``dice``, ``roast``...)
    directions: dict[str, list[str]]


@dataclass
class View:
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
        dist = {room: 0 for room in frontier}
        queue = deque(frontier)
        while queue:
            room = queue.popleft()
            for nxt in neighbours.get(room, ()):
                if nxt not in dist:
                    dist[nxt] = dist[room] + 1
                    queue.append(nxt)
        return dist

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
                out.extend((ing, v) for v in verbs if not _stem_done(v, adjs))
        return out


_OPPOSITE = {"north": "south", "south": "north", "east": "west", "west": "east"}


def _exits(text: str) -> dict[str, tuple[str, str]]:
    """direction -> (the room seen that way, or "" behind a closed door; the door: open/closed/"")."""
    out = {}
    for e in _EXIT.finditer(text):
        door = "open" if e.group("open") else ("closed" if e.group("closed") else "")
        out[e.group("dir").lower()] = ((e.group("room") or "").strip(), door)
    return out


def _read_map(view: View, history: Sequence[tuple[str, str]]) -> None:
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
        arrival = _ROOM.search(fb)
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


def _rename(view: View, old: str, new: str) -> None:
    if old == new:
        return
    view.edges = {((new if a == old else a), d): (new if b == old else b) for (a, d), b in view.edges.items()}
    if old in view.room_exits:
        view.room_exits.setdefault(new, {}).update(view.room_exits.pop(old))


def frontier_moves(view: View, candidates: Sequence[str]) -> set[str]:
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
            if verb in _CUTS or verb in _COOKS:
                obj = _ARTICLE.sub("", line.split(" ", 1)[1]) if " " in line else ""
                if obj in directions:
                    directions[obj].append(verb)
    return Recipe(ingredients, directions)


def read_view(situation: Situation) -> View:
    """The situation read as :class:`View` (see the module docstring)."""
    view = View(history=situation.history, score=situation.score)
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
                entry = _ARTICLE.sub("", line.strip().rstrip("."))
                if entry and not entry.lower().startswith("your inventory is currently empty"):
                    view.inventory.append(entry)
        elif memory_on:
            view.memory.append(s)
    m = _ROOM.search(view.look)
    view.room = m.group(1) if m else ""
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


def _map_graph(memory: Sequence[str]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for text in memory:
        for a, rest in _MAP_LINE.findall(text):
            for b in re.split(r",\s*|\s+and\s+", rest):
                b = _ARTICLE.sub("", b.strip())
                if b:
                    graph.setdefault(a.strip(), set()).add(b)
                    graph.setdefault(b, set()).add(a.strip())
    return graph


def _distances(graph: dict[str, set[str]], goal: str) -> dict[str, int]:
    dist = {goal: 0}
    queue = deque([goal])
    while queue:
        room = queue.popleft()
        for nxt in graph.get(room, ()):
            if nxt not in dist:
                dist[nxt] = dist[room] + 1
                queue.append(nxt)
    return dist


def _answer(memory: Sequence[str]) -> Fraction | None:
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


def _instruction(memory: Sequence[str]) -> str | None:
    for text in reversed(memory):
        m = _INSTRUCTION.search(text)
        if m:
            return " ".join(w for w in words(m.group(1)) if w not in ("the", "a", "an"))
    return None


# --------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------


@dataclass
class _Move:
    text: str
    verb: str
    obj: str = ""
    target: str = ""
    direction: str = ""


def parse_move(text: str) -> _Move:
    t = text.strip()
    low = t.lower()
    if low.startswith("move ") and low[5:] in _DIRECTIONS:
        return _Move(t, "move", direction=low[5:])
    m = re.match(r"(open|close) door to (\w+)$", low)
    if m:
        return _Move(t, f"{m.group(1)}door", direction=m.group(2))
    m = re.match(r"(cook|put) (.+?) (?:in|on) (.+)$", t)
    if m:
        return _Move(t, m.group(1), m.group(2), m.group(3))
    verb, _, rest = t.partition(" ")
    return _Move(t, verb.lower(), rest)


class _Game:
    """Per-situation facts that several moves' tokens read (computed once per situation)."""

    def __init__(self, view: View, candidates: Sequence[str]) -> None:
        self.view = view
        self.texts = list(candidates)
        self.goal_words = set(words(view.task)) | {w for m in view.memory for w in words(m)}
        graph = _map_graph(view.memory)
        self.map_dist: dict[str, int] = {}
        places = _TASK_PLACES.search(view.task)
        if graph and places:
            coin_room, box_room = places.group(1).strip(), places.group(2).strip()
            target = box_room if view.held("coin") else coin_room
            self.map_dist = _distances(graph, target)
        self.answer = _answer(view.memory)
        self.instruction = _instruction(view.memory)
        order = _QUOTED.search(view.feedback) or _QUOTED.search(view.opening)
        self.order = order.group(1).strip().lower() if order else None
        # Sorting: the quantities of the items that can be taken now (not those in the box)
        box = re.search(r"box, that contains ([^.]+)\.", view.look)
        in_box = {_ARTICLE.sub("", x.strip()) for x in re.split(r",\s*(?:and\s+)?|\s+and\s+", box.group(1))} if box else set()
        out = [quantity(parse_move(t).obj) for t in self.texts if t.startswith("take ")
               and parse_move(t).obj not in in_box]
        held = [quantity(e) for e in view.inventory]
        self.smallest = min((q for q in out + held if q is not None), default=None)
        self.frontier = view.frontier_distance()
        self.missing = view.missing()
        self.pending = view.pending()
        previous = [r for _, fb in view.history[:-1] for r in _ROOM.findall(fb)]
        self.came_from = previous[-1] if previous else ""
        if len(view.history) >= 1 and not _ROOM.search(view.history[-1][1]):
            self.came_from = ""

    def instruction_done(self) -> bool:
        """The instruction read last was carried out since it was read."""
        if self.instruction is None:
            return False
        for move, _ in reversed(self.view.history):
            norm = " ".join(w for w in words(move) if w not in ("the", "a", "an"))
            if norm == self.instruction:
                return True
            if move.startswith("read "):
                return False
        return False


def context_tokens(view: View, game: _Game, candidates: Sequence[Candidate] = ()) -> list[str]:
    out = ["*", f"held:{min(2, len(view.inventory))}"]
    rewards = [c.reward for c in candidates if c.reward is not None]
    if rewards:  # with Lookahead: whether any move here earns something
        out.append("ahead:gain" if max(rewards) > 0 else "ahead:nogain")
    if view.recipe is None:
        if "cookbook" in view.task.lower():
            out.append("recipe:unread")
    else:
        out.append(f"missing:{min(2, len(game.missing))}")
        cuts = [v for _, v in game.pending if v in _CUTS]
        cooks = [v for _, v in game.pending if v in _COOKS]
        if not game.missing and not game.pending:
            out.append("ready")
        if cuts:
            out.append("need:cut")
            out.append("knife:" + ("held" if view.held("knife") else "not"))
        out.extend(sorted({f"need:{v}" for v in cooks}))
    if view.held("meal"):
        out.append("meal:held")
    if view.room:
        out.append("room:kitchen" if view.room == "kitchen" else "room:other")
    unvisited = [d for d, (r, door) in view.exits.items() if not r or r not in view.visited]
    out.append("exits:new" if unvisited else "exits:old")
    if game.instruction is not None:
        out.append("instr:done" if game.instruction_done() else "instr:pending")
    elif "instructions" in view.task.lower():
        out.append("instr:none")
    if game.map_dist:
        out.append("map:read")
        out.append("coin:held" if view.held("coin") else "coin:not")
    elif "map" in view.task.lower():
        out.append("map:unread")
    if "math problem" in view.task.lower():
        out.append("math:" + ("read" if game.answer is not None else "unread"))
    return out


def _move_tokens(move: _Move, view: View, game: _Game) -> list[str]:
    v = move.verb
    base = "cut" if v in _CUTS else v
    out = [f"v:{base}"]
    if view.played[move.text]:
        out.append(f"v:{base}+again")
    if game.view.history and game.view.history[-1][0] == move.text:
        out.append(f"v:{base}+last")
    if game.instruction is not None:
        norm = " ".join(w for w in words(move.text) if w not in ("the", "a", "an"))
        if norm == game.instruction:
            out.append(f"v:{base}+instructed")
    if game.order is not None and move.text.lower() == game.order:
        out.append(f"v:{base}+ordered")
    if v in _INFO_VERBS:
        return out
    obj = move.obj
    ow = set(words(obj))
    if obj:
        if view.held(obj):
            out.append(f"v:{base}+held")
        elif obj.lower() in view.look.lower():
            out.append(f"v:{base}+vis")
        if ow and ow <= game.goal_words:
            out.append(f"v:{base}+goal")
    recipe = view.recipe
    if recipe is not None and obj:
        ingr = obj in recipe.ingredients
        out.append(f"v:{base}+{'ingr' if ingr else 'other'}")
        if v in _CUTS:
            wanted = recipe.directions.get(obj, [])
            if _stem_done(v, view.adjectives(obj)):
                out.append("cut+done")
            elif v in wanted:
                out.append("cut+req")
            elif any(w in _CUTS for w in wanted):
                out.append("cut+wrong")
            else:
                out.append("cut+notreq")
        if v == "cook":
            device = move.target.split()[-1] if move.target else ""
            wanted = [w for w in recipe.directions.get(obj, []) if w in _COOKS]
            for w in wanted:
                out.append(f"cook:{'done' if _stem_done(w, view.adjectives(obj)) else w}|dev:{device}")
            if not wanted:
                out.append(f"cook:none|dev:{device}")
            if any(_stem_done(w, view.adjectives(obj)) for w in _COOKS if w not in wanted):
                out.append("cook+overdone")
        if v == "take" and ingr and not view.held(obj):
            out.append("take+ingr+need")
    if obj == "knife":
        out.append(f"v:{base}+knife")
    if obj in ("cookbook", "meal", "coin", "map", "math problem", "instructions book"):
        out.append(f"v:{base}+{obj.replace(' ', '_')}")
    if v == "open":
        if re.search(rf"{re.escape(obj)}\s+that is closed", view.look, re.IGNORECASE):
            out.append("v:open+closed")
    if v in ("move", "opendoor", "closedoor"):
        room, door = view.exits.get(move.direction, ("", ""))
        if not room:
            out.append(f"v:{base}+hidden")
        elif room not in view.visited:
            out.append(f"v:{base}+new")
        else:
            out.append(f"v:{base}+visited")
        if room and room in view.visited:
            here_d = game.frontier.get(view.room)
            there_d = game.frontier.get(room)
            if there_d is None or here_d is None:
                out.append(f"v:{base}+nofrontier")
            else:
                out.append(f"v:{base}+{'tofrontier' if there_d < here_d else 'fromfrontier' if there_d > here_d else 'level'}")
        if room and room == game.came_from:
            out.append(f"v:{base}+back")
        if door:
            out.append(f"v:{base}+door:{door}")
        if room == "kitchen":
            out.append(f"v:{base}+kitchen")
        if room:
            out.append(f"dest:{room}")
        if game.map_dist and room in game.map_dist and view.room in game.map_dist:
            delta = game.map_dist[room] - game.map_dist[view.room]
            out.append(f"v:{base}+{'closer' if delta < 0 else 'farther' if delta > 0 else 'level'}")
    # Arithmetic and Sorting: the quantity the move names
    q = quantity(obj) if obj else None
    if q is not None:
        if game.answer is not None:
            out.append(f"v:{base}+{'answer' if q == game.answer else 'notanswer'}")
        if game.smallest is not None:
            out.append(f"v:{base}+{'smallest' if q == game.smallest else 'larger'}")
    if v == "put" and move.target:
        out.append(f"v:put+tgt:{words(move.target)[-1] if words(move.target) else ''}")
        # commonsense placement: the object's words against the place's words (TWC)
        tw = [w for w in words(move.target)]
        for a in ow:
            for b in tw:
                out.append(f"put|{a}|{b}")
        if any(m.startswith(f"put {obj} ") for m in view.played):
            out.append("put+placed_before")
    if v == "take" and any(m.startswith(f"put {obj} ") for m in view.played):
        out.append("take+placed_before")
    return out


def _lookahead_tokens(candidate: Candidate, view: View, game: _Game) -> list[str]:
    if candidate.outcome is None:
        return []
    out = []
    if candidate.reward is not None:
        out.append("out:gain" if candidate.reward > 0 else "out:loss" if candidate.reward < 0 else "out:nogain")
    outcome = candidate.outcome
    first = outcome.strip().split("\n\n", 1)[0]
    r = _ROOM.search(first) or _ROOM.search(outcome)
    if r and r.group(1) != view.room:
        out.append("out:newroom" if r.group(1) not in view.visited else "out:oldroom")
    seen = {fb.strip() for _, fb in view.history}
    if first.strip() and first.strip() in seen:
        out.append("out:seen")
    reveals = {i for i in game.missing if i.lower() in outcome.lower() and i.lower() not in view.look.lower()}
    if reveals:
        out.append("out:ingr")
    if "coin" in outcome.lower() and "coin" not in view.look.lower() and not view.held("coin"):
        out.append("out:coin")
    for action in candidate.new_actions:
        mv = parse_move(action)
        tag = mv.verb if mv.verb not in _CUTS else "cut"
        out.append(f"new:{tag}")
        if mv.verb == "take" and view.recipe and mv.obj in game.missing:
            out.append("new:take+ingr")
        if mv.verb == "take" and mv.obj == "coin":
            out.append("new:take+coin")
    return list(dict.fromkeys(out))


def candidate_tokens(situation: Situation, view: View | None = None) -> list[list[str]]:
    """Per candidate, its feature names: move tokens, lookahead tokens, and context x verb-level pairs."""
    view = read_view(situation) if view is None else view
    game = _Game(view, situation.texts)
    context = context_tokens(view, game, situation.candidates)
    rows = []
    for cand in situation.candidates:
        move = parse_move(cand.text)
        tokens = _move_tokens(move, view, game)
        ahead = _lookahead_tokens(cand, view, game)
        verb_level = [t for t in tokens if t.startswith("v:")]
        feats = tokens + ahead
        feats += [f"{c}|{t}" for c in context if c != "*" for t in verb_level]
        rows.append(list(dict.fromkeys(feats)))
    return rows


def features(situation: Situation) -> list[list[str]]:
    """Alias of :func:`candidate_tokens` (the model's feature names per candidate)."""
    return candidate_tokens(situation)
