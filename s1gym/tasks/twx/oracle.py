"""Privileged oracles for the TextWorldExpress games: the good moves from ANY state (labels for fitting).

TWX knows the gold path from the start of a game only; the DAgger/DART data of
:mod:`s1gym.tasks.twx.fit` needs labels in states off it. Each oracle here reads the
game's privileged facts (the gold path replayed once per game: where the coin
lies, which item goes where, the order Simon or the book will ask for; on
CookingWorld the object tree through s1gym's planner) and answers, for the
current state, the set of moves that make progress. Information moves a player
needs and a privileged planner does not (read the cookbook, the map, the
instructions book) are labelled where a player needs them.

Used by the fitting (``python -m s1gym.tasks.twx.fit collect``) only; never by a policy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from s1gym.tasks.twx import expert as twx_expert
from s1gym.tasks.twx.env import TWXEnv
from s1gym.tasks.twx.view import CUTS, frontier_moves, parse_move, read_view

_ROOM = re.compile(r"You are in the ([^.]+)\.")


@dataclass
class GoldFacts:
    """What replaying a game's gold path shows (per game, cached)."""

    moves: list[str]
    #: the room each gold move was played in
    rooms: list[str]
    #: the gold moves that raised the score, in order
    gains: list[str]
    start_room: str = ""
    extra: dict = field(default_factory=dict)


_FACTS: dict[tuple[str, str, int, str], GoldFacts] = {}


def gold_facts(env: TWXEnv) -> GoldFacts:
    key = (env.game, env._param_str, env._seed, env.fold)
    facts = _FACTS.get(key)
    return facts if facts is not None else _replay(env, env.gold_path())


def _replay(env: TWXEnv, gold: tuple[str, ...]) -> GoldFacts:
    key = (env.game, env._param_str, env._seed, env.fold)
    probe = env.fork()
    try:
        probe.reset(seed=env.game_index)
        facts = GoldFacts([], [], [], _room(probe))
        for move in gold:
            if not probe.candidates or move not in probe.candidates:
                break
            facts.rooms.append(_room(probe))
            facts.moves.append(move)
            _obs, reward, _term, _trunc, _info = probe.step_move(move)
            if reward > 0:
                facts.gains.append(move)
    finally:
        probe.close()
    _FACTS[key] = facts
    return facts


def _room(env: TWXEnv) -> str:
    m = _ROOM.search(env._r.get("look", ""))
    return m.group(1) if m else ""


def _rooms_so_far(env: TWXEnv, facts: GoldFacts) -> list[str]:
    """The room the player was in before each move of the history (from s1gym's move feedback)."""
    here = facts.start_room
    out = []
    for move, feedback in env.situation().history:
        out.append(here)
        m = _ROOM.search(feedback)
        if m:
            here = m.group(1)
    return out


def navigate(env: TWXEnv, goal: str) -> str | None:
    """The next move towards room ``goal`` (opening a closed door first); None when already there."""
    here = _room(env)
    if here == goal:
        return None
    graph = twx_expert.room_graph(env)
    path = twx_expert._path(graph, here, goal)
    direction = path[0].removeprefix("move ")
    door = f"open door to {direction}"
    if door in env.candidates and re.search(rf"To the {direction} you see a closed", env._r["look"], re.I):
        return door
    return path[0]


# --------------------------------------------------------------------------
# Per game
# --------------------------------------------------------------------------


def _cooking(env: TWXEnv) -> set[str]:
    cands = set(env.candidates)
    if "You remember:" not in env.state_text:
        if "read cookbook" in cands:
            return {"read cookbook"}
        move = navigate(env, "kitchen")
        return {move} if move else set()
    try:
        plan = twx_expert.plan_cookingworld(env)
    except (KeyError, RuntimeError):  # an ingredient was eaten or thrown away: no winning plan is left
        return set()
    move = twx_expert._next_in_plan(env, env.expert_view(), plan, 0)[0] if plan else None
    if move is None:
        return set()
    good = {move}
    # equally good: other needed ingredients to take here, other required cuts (planner order is arbitrary)
    view = read_view(env.situation())
    missing = set(view.missing())
    pending = set(view.pending())
    first = parse_move(move)
    # Information a player lacks: the planner walks straight to the room and opens the container that holds
    # what it fetches. Where that room was never visited, a player explores instead (the first steps towards
    # the nearest exit not taken); where it opens a container, any closed container here not opened yet is as
    # good a guess.
    if first.verb in ("move", "opendoor"):
        room = _room_after(env, plan)
        if room and room not in view.visited:
            good = frontier_moves(view, env.candidates) or good
    elif first.verb == "open":
        good |= {c for c in cands if c.startswith("open ") and not c.startswith("open door")
                 and re.search(rf"{re.escape(c[5:])}\s+that is closed", view.look) and c not in view.played}
    for c in cands:
        m = parse_move(c)
        if first.verb == "take" and first.obj in missing and m.verb == "take" and m.obj in missing:
            good.add(c)
        if first.verb in CUTS and m.verb in CUTS and (m.obj, m.verb) in pending and view.held("knife"):
            good.add(c)
    return good


def _room_after(env: TWXEnv, plan: tuple[str, ...]) -> str:
    """The room the plan's first run of moves leads to (on the game's room graph)."""
    graph = twx_expert.room_graph(env)
    room = _room(env)
    for move in plan:
        if move.startswith("move "):
            room = graph.get(room, {}).get(move[5:], room)
        elif not move.startswith("open door"):
            break
    return room


def _coin(env: TWXEnv) -> set[str]:
    """Take the coin when it is here; else explore as a player must: the first steps towards the nearest
    exit not taken yet (the privileged path to the coin would teach the model to guess where it lies)."""
    if "take coin" in env.candidates:
        return {"take coin"}
    explore = frontier_moves(read_view(env.situation()), env.candidates)
    if explore:
        return explore
    facts = gold_facts(env)
    target = facts.rooms[facts.moves.index("take coin")] if "take coin" in facts.moves else None
    move = navigate(env, target) if target else None
    return {move} if move else set()


def _mapreader(env: TWXEnv) -> set[str]:
    cands = set(env.candidates)
    if "The map reads" not in env.state_text and "read map" in cands:
        return {"read map"}
    facts = gold_facts(env)
    holding = "coin" in env._r.get("inventory", "")
    if holding:
        if "put coin in box" in cands:
            return {"put coin in box"}
        target = facts.rooms[facts.moves.index("put coin in box")]
    else:
        if "take coin" in cands:
            return {"take coin"}
        target = facts.rooms[facts.moves.index("take coin")]
    move = navigate(env, target)
    return {move} if move else set()


def _twc(env: TWXEnv) -> set[str]:
    facts = gold_facts(env)
    cands = set(env.candidates)
    puts = [m for m in facts.gains if m.startswith("put ")]
    targets = {}
    for m in puts:
        obj, _, place = m[4:].partition(" in ")
        targets[obj] = (place, facts.rooms[facts.moves.index(m)])
    pickup = {m[5:]: facts.rooms[facts.moves.index(m)] for m in facts.moves if m.startswith("take ")}
    # where each item is now, from the history
    history = env.situation().history
    rooms = _rooms_so_far(env, facts)
    placed, where = set(), {}
    for (move, _), room in zip(history, rooms, strict=True):
        if move.startswith("take "):
            placed.discard(move[5:])
            where.pop(move[5:], None)
        elif move.startswith("put "):
            obj, _, place = move[4:].partition(" in ")
            where[obj] = room
            if targets.get(obj, (None,))[0] == place:
                placed.add(obj)
    inventory = env._r.get("inventory", "")
    held = [o for o in targets if o not in placed and re.search(rf"\b{re.escape(o)}\b", inventory)]
    loose = [o for o in targets if o not in placed and o not in held]
    good = {f"put {o} in {targets[o][0]}" for o in held} & cands
    good |= {f"take {o}" for o in loose} & cands
    if good:
        return good
    here = _room(env)
    graph = twx_expert.room_graph(env)
    view = read_view(env.situation())
    goals = []
    for o in held:
        place, room = targets[o]
        if room == here and f"open {place}" in cands:
            # a player does not know which container takes it: any closed one here not opened yet
            good |= {c for c in cands if c.startswith("open ") and not c.startswith("open door")
                     and c not in view.played and re.search(rf"{re.escape(c[5:])}\s+that is closed", view.look)}
            good.add(f"open {place}")
        goals.append(room)
    goals += [where.get(o, pickup.get(o, "")) for o in loose]
    if good:
        return good
    goals = [g for g in goals if g and g != here]
    if not goals:
        return set()
    nearest = min(goals, key=lambda g: len(twx_expert._path(graph, here, g)))
    if nearest not in view.visited:  # explore as a player must
        explore = frontier_moves(view, env.candidates)
        if explore:
            return explore
    move = navigate(env, nearest)
    return {move} if move else set()


def _arithmetic(env: TWXEnv) -> set[str]:
    facts = gold_facts(env)
    cands = set(env.candidates)
    answer = next(m[5:] for m in facts.moves if m.startswith("take ") and m != "take math problem")
    if "math problem" not in env.state_text.split("Inventory", 1)[-1] and "You remember:" not in env.state_text:
        return {"take math problem"} & cands
    if "You remember:" not in env.state_text:
        return {"read math problem"} & cands
    if f"put {answer} in box" in cands:
        return {f"put {answer} in box"}
    return {f"take {answer}"} & cands


def _sorting(env: TWXEnv) -> set[str]:
    facts = gold_facts(env)
    cands = set(env.candidates)
    order = [m[5:] for m in facts.moves if m.startswith("take ")]
    box = re.search(r"box, that contains ([^.]+)\.", env._r.get("look", ""))
    in_box = box.group(1) if box else ""
    for item in order:
        if not re.search(rf"(^|, |and ){re.escape(item)}(,|$| and)", in_box):
            return ({f"put {item} in box"} & cands) or ({f"take {item}"} & cands)
    return set()


def _simon(env: TWXEnv) -> set[str]:
    facts = gold_facts(env)
    k = round(env.situation().score * len(facts.gains))
    return {facts.gains[k]} & set(env.candidates) if k < len(facts.gains) else set()


def _pecking(env: TWXEnv) -> set[str]:
    facts = gold_facts(env)
    cands = set(env.candidates)
    k = round(env.situation().score * len(facts.gains))
    if k >= len(facts.gains):
        return set()
    want = facts.gains[k]
    norm = " ".join(w for w in want.lower().split() if w not in ("the", "a", "an"))
    known = re.search(r"current task is to ([^.]+)\.", env.state_text)
    told = " ".join(w for w in known.group(1).lower().split() if w not in ("the", "a", "an")) if known else None
    if told != norm and "read instructions book" in cands:
        return {"read instructions book"}
    return {want} & cands


ORACLES = {
    "cookingworld": _cooking,
    "coin": _coin,
    "mapreader": _mapreader,
    "twc": _twc,
    "arithmetic": _arithmetic,
    "sorting": _sorting,
    "simonsays": _simon,
    "peckingorder": _pecking,
}


def good_moves(env: TWXEnv) -> set[str]:
    """The moves that make progress from ``env``'s state (empty when the oracle is lost)."""
    if not env.candidates:
        return set()
    return ORACLES[env.game](env) & set(env.candidates)
