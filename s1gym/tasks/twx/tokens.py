"""A TextWorldExpress situation as feature names: what each move means given what the player sees.

:func:`candidate_tokens` gives each move a handful of tokens that say how the move relates to the
:class:`~s1gym.tasks.twx.view.TWXView`, e.g. ``take+ingr+need`` (take a recipe ingredient not held yet),
``cut+req`` (a cut the recipe asks for and that is not done), ``cook:roast|dev:oven`` (the recipe roasts it,
the move cooks it in the oven), ``move+new`` / ``move+tofrontier`` (an exit not taken yet, or a step
towards the nearest one on the map walked), ``move+closer`` (MapReader: one room nearer to where the task
says to go, on the map read), ``take+answer`` (Arithmetic), ``take+smallest`` (Sorting), ``+instructed``
(PeckingOrder), ``+ordered`` (SimonSays), ``put|<word>|<word>`` (TWC: the object's and the place's words).
Global :func:`context_tokens` (``recipe:unread``, ``missing:1``, ``ready``, ``held:2``...) pair with each
move's verb-level tokens. With Lookahead, ``out:*`` (the score change, a new room, an ingredient revealed) and
``new:*`` tokens say what the move's outcome shows and which moves it opens. :func:`progress_tokens` is what
the tasks' progress estimates read. Weights are learned (:mod:`s1gym.tasks.twx.fit`); this module only reads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from s1gym.core.situation import Candidate, Situation
from s1gym.tasks.twx.view import (
    ARTICLE,
    COOKS,
    CUTS,
    INFO_VERBS,
    QUOTED,
    ROOM,
    TASK_PLACES,
    Move,
    TWXView,
    answer,
    distances,
    instruction,
    map_graph,
    parse_move,
    quantity,
    read_view,
    stem_done,
    words,
)

__all__ = ["candidate_tokens", "context_tokens", "progress_tokens"]

_CLOSED = re.compile(r"([\w -]+?) that is closed")


class _Game:
    """Per-situation facts that several moves' tokens read (computed once per situation)."""

    def __init__(self, view: TWXView, candidates: Sequence[str]) -> None:
        self.view = view
        self.texts = list(candidates)
        self.goal_words = set(words(view.task)) | {w for m in view.memory for w in words(m)}
        graph = map_graph(view.memory)
        self.map_dist: dict[str, int] = {}
        places = TASK_PLACES.search(view.task)
        if graph and places:
            coin_room, box_room = places.group(1).strip(), places.group(2).strip()
            target = box_room if view.held("coin") else coin_room
            self.map_dist = distances(graph, target)
        self.answer = answer(view.memory)
        self.instruction = instruction(view.memory)
        order = QUOTED.search(view.feedback) or QUOTED.search(view.opening)
        self.order = order.group(1).strip().lower() if order else None
        # Sorting: the quantities of the items that can be taken now (not those in the box)
        box = re.search(r"box, that contains ([^.]+)\.", view.look)
        in_box = {ARTICLE.sub("", x.strip()) for x in re.split(r",\s*(?:and\s+)?|\s+and\s+", box.group(1))} if box else set()
        out = [quantity(parse_move(t).obj) for t in self.texts if t.startswith("take ")
               and parse_move(t).obj not in in_box]
        held = [quantity(e) for e in view.inventory]
        self.smallest = min((q for q in out + held if q is not None), default=None)
        self.frontier = view.frontier_distance()
        self.missing = view.missing()
        self.pending = view.pending()
        previous = [r for _, fb in view.history[:-1] for r in ROOM.findall(fb)]
        self.came_from = previous[-1] if previous else ""
        if len(view.history) >= 1 and not ROOM.search(view.history[-1][1]):
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


def context_tokens(view: TWXView, game: _Game, candidates: Sequence[Candidate] = ()) -> list[str]:
    out = ["*", f"held:{min(2, len(view.inventory))}"]
    rewards = [c.reward for c in candidates if c.reward is not None]
    if rewards:  # with Lookahead: whether any move here earns something
        out.append("ahead:gain" if max(rewards) > 0 else "ahead:nogain")
    if view.recipe is None:
        if "cookbook" in view.task.lower():
            out.append("recipe:unread")
    else:
        out.append(f"missing:{min(2, len(game.missing))}")
        cuts = [v for _, v in game.pending if v in CUTS]
        cooks = [v for _, v in game.pending if v in COOKS]
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


def _move_tokens(move: Move, view: TWXView, game: _Game) -> list[str]:
    v = move.verb
    base = "cut" if v in CUTS else v
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
    if v in INFO_VERBS:
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
        if v in CUTS:
            wanted = recipe.directions.get(obj, [])
            if stem_done(v, view.adjectives(obj)):
                out.append("cut+done")
            elif v in wanted:
                out.append("cut+req")
            elif any(w in CUTS for w in wanted):
                out.append("cut+wrong")
            else:
                out.append("cut+notreq")
        if v == "cook":
            device = move.target.split()[-1] if move.target else ""
            wanted = [w for w in recipe.directions.get(obj, []) if w in COOKS]
            for w in wanted:
                out.append(f"cook:{'done' if stem_done(w, view.adjectives(obj)) else w}|dev:{device}")
            if not wanted:
                out.append(f"cook:none|dev:{device}")
            if any(stem_done(w, view.adjectives(obj)) for w in COOKS if w not in wanted):
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


def _lookahead_tokens(candidate: Candidate, view: TWXView, game: _Game) -> list[str]:
    if candidate.outcome is None:
        return []
    out = []
    if candidate.reward is not None:
        out.append("out:gain" if candidate.reward > 0 else "out:loss" if candidate.reward < 0 else "out:nogain")
    outcome = candidate.outcome
    first = outcome.strip().split("\n\n", 1)[0]
    r = ROOM.search(first) or ROOM.search(outcome)
    if r and r.group(1) != view.room:
        out.append("out:newroom" if r.group(1) not in view.visited else "out:oldroom")
        if any("door" not in c for c in _CLOSED.findall(outcome)):
            out.append("out:room_closed")  # the room it leads to has a container still closed
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
        tag = mv.verb if mv.verb not in CUTS else "cut"
        out.append(f"new:{tag}")
        if mv.verb == "take" and view.recipe and mv.obj in game.missing:
            out.append("new:take+ingr")
        if mv.verb == "take" and mv.obj == "coin":
            out.append("new:take+coin")
    return list(dict.fromkeys(out))


def candidate_tokens(situation: Situation, view: TWXView | None = None) -> list[list[str]]:
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


def progress_tokens(situation: Situation) -> list[str]:
    """What a TWX task's progress estimate reads: the context tokens and a few counts, one-hot."""
    view = read_view(situation)
    game = _Game(view, situation.texts)
    out = context_tokens(view, game)
    out.append(f"score:{round(situation.score * 20)}")
    if view.recipe is not None:
        out.append(f"n_missing:{min(5, len(game.missing))}")
        out.append(f"n_pending:{min(6, len(game.pending))}")
        out.append(f"n_ingredients:{min(5, len(view.recipe.ingredients))}")
    unvisited = sum(1 for r, _ in view.exits.values() if not r or r not in view.visited)
    out.append(f"unvisited_exits:{min(3, unvisited)}")
    out.append(f"visited:{min(11, len(view.visited))}")
    return out
