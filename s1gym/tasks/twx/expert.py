"""The TextWorldExpress experts (privileged: ``expert_action()`` and the ``Rule`` baseline only).

On TWX's gold path the expert plays the gold path's next move. Off it, a game
may have a planner (:data:`PLANNERS`: CookingWorld's reads the full game state,
TWX's object tree, and plans fetch, cut, cook, prepare, eat); its plan is
followed while the game follows it (moves that only read the game, :data:`READ_ONLY`, leave it on the
plan) and made again when the game leaves it.
Games without a planner raise a clear error off the gold path.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from s1gym.tasks.twx.view import CUTS, DIRECTIONS, room_in

if TYPE_CHECKING:
    from s1gym.tasks.twx.env import TWXEnv

__all__ = ["PLANNERS", "READ_ONLY", "TWXExpertView", "expert_action", "leaves_state", "plan_cookingworld"]

#: A plan being followed: (moves played when it was made, the plan).
Plan = tuple[int, tuple[str, ...]]


@dataclass(frozen=True)
class TWXExpertView:
    """What the experts read beyond an env's public state (``env.expert_view()``; privileged: for
    ``expert_action`` and ``Rule`` only, never in observations)."""

    #: the TWX game seed being played
    seed: int
    #: TWX's ``look`` text of this state
    look: str
    #: the plan the expert follows off the gold path (the env keeps what :func:`expert_action` returns)
    plan: Plan | None
    #: per (seed, fold), the room graph explored once per game (the generator's cache, shared by envs)
    rooms: dict[tuple[int, str], dict[str, dict[str, str]]]

#: The recipe's cut -> the move that makes it (``chopped`` -> ``chop``).
_CUTS = {done: verb for verb, done in CUTS.items()}
#: Cooking -> the devices that do it (a one-room game grills with the toaster; there is no barbeque).
_COOKS = {"fried": ("stove",), "roasted": ("oven",), "grilled": ("barbeque", "toaster")}
_CUT_FLAGS = {"chopped": "isChopped", "sliced": "isSliced", "diced": "isDiced"}
_COOK_FLAGS = {"fried": "isFried", "roasted": "isRoasted", "grilled": "isGrilled"}


def expert_action(env: TWXEnv) -> tuple[str, Plan | None]:
    """The next move of a winning plan from ``env``'s state, and the plan for the env to keep (what
    ``env.expert_view().plan`` gives the next call).

    Where the game has a planner, the env's engine is told that any other move than this one (and the
    read-only ones) will make the next call plan again, so that step brings the planner's tree back with it
    (``TWXEngine.tree_after``)."""
    move, plan = _expert_action(env)
    if env.game in PLANNERS:
        env.engine().tree_after = lambda taken: taken != move and not leaves_state(taken)
    return move, plan


def _expert_action(env: TWXEnv) -> tuple[str, Plan | None]:
    if not env.candidates:
        raise RuntimeError(f"{env.task_name}: the game is over; there is no expert move")
    view = env.expert_view()
    gold = env.gold_path()
    moves = env.moves
    n = len(moves)
    if moves == gold[:n] and n < len(gold) and gold[n] in env.candidates:
        return gold[n], view.plan
    if view.plan is not None:
        start, plan = view.plan
        done = [m for m in moves[start:] if not leaves_state(m)]  # a random player examines a lot
        k = len(done)
        if n >= start and k < len(plan) and done == list(plan[:k]):
            move, plan = _next_in_plan(env, view, plan, k)
            if move is not None:
                return move, (start, plan)
    planner = PLANNERS.get(env.game)
    if planner is None:
        raise RuntimeError(
            f"{env.task_name}: the expert knows TWX's gold path only; this state is off it. "
            "Use another policy than Rule from off-path states."
        )
    plan = planner(env)
    move, plan = _next_in_plan(env, view, plan, 0) if plan else (None, plan)
    if move is None:
        raise RuntimeError(
            f"{env.task_name}: the expert found no winning plan from this state (game seed {view.seed}, "
            f"moves so far {list(moves)})"
        )
    return move, (n, plan)


#: The first words of TWX moves that only read the game (what a player sees, holds, or a text): the game is
#: the same after them (its object tree unchanged, tests/test_twx_snapshots.py), so a plan stays valid.
READ_ONLY = frozenset({"examine", "look", "inventory", "read"})


def leaves_state(move: str) -> bool:
    """Whether ``move`` leaves the game as it was (:data:`READ_ONLY`)."""
    return move.split(" ", 1)[0] in READ_ONLY


def _next_in_plan(
    env: TWXEnv, view: TWXExpertView, plan: tuple[str, ...], k: int
) -> tuple[str | None, tuple[str, ...]]:
    """The plan's move ``k`` if it is on offer (a closed door on the way is opened first: the plan then
    holds that move too), and the plan."""
    move = plan[k]
    if move.startswith("move "):  # a closed door on the way ("move" is listed anyway): open it first
        direction = move.removeprefix("move ")
        door = "open door to " + direction
        if door in env.candidates and re.search(
            rf"To the {direction} you see a closed [^.]*door", view.look, re.IGNORECASE
        ):
            return door, plan[:k] + (door,) + plan[k:]
    return (move if move in env.candidates else None), plan


# --------------------------------------------------------------------------
# CookingWorld's planner
# --------------------------------------------------------------------------


def plan_cookingworld(env: TWXEnv) -> tuple[str, ...]:
    """A winning plan from the current state, read off TWX's object tree (the fields it reads only:
    ``TWXEngine.cooking_tree``; a flag left out is false, contents left out are empty)."""
    tree = orjson.loads(env.engine().cooking_tree())
    graph = room_graph(env)
    here = tree["player_location"]
    held = tree["inventory"]
    plan: list[str] = []
    if "meal" in held:
        return ("eat meal",)

    where: dict[str, tuple[str, list[tuple[str, bool]]]] = {}
    objects: dict[str, Mapping[str, Any]] = dict(held)

    def index(node: Mapping[str, Any], room: str, chain: list[tuple[str, bool]]) -> None:
        for name, obj in node.get("contents", {}).items():
            where.setdefault(name, (room, chain))
            objects.setdefault(name, obj)
            index(obj, room, chain + [(name, obj.get("isOpen", False) or not obj.get("isOpenable", False))])

    for room, node in tree["locations"].items():
        index(node, room, [])
    opened: set[str] = set()

    def go(room: str) -> None:
        nonlocal here
        if room != here:
            plan.extend(_path(graph, here, room))
            here = room

    def fetch(item: str) -> None:
        if item not in where:  # eaten, or cooked into something else: nothing can win from here
            raise RuntimeError(f"{env.task_name}: the expert found no winning plan: the {item} the recipe "
                               "needs is gone from the game")
        room, chain = where[item]
        go(room)
        for container, is_open in chain:
            if not is_open and f"{room}/{container}" not in opened:
                plan.append(f"open {container}")
                opened.add(f"{room}/{container}")
        plan.append(f"take {item}")

    recipe = [(i["name"], [p.strip() for p in i["preparation"].split(",")]) for i in tree["recipe"]]
    needs_knife = any(p in _CUTS for _, preps in recipe for p in preps)
    if needs_knife and "knife" not in held:
        fetch("knife")
    for name, _ in recipe:
        if name not in held:
            fetch(name)
    for name, preps in recipe:
        obj = objects.get(name, {})
        for p in preps:
            if p in _CUTS and not obj.get(_CUT_FLAGS[p]):
                plan.append(f"{_CUTS[p]} {name}")
    for name, preps in recipe:
        obj = objects.get(name, {})
        for p in preps:
            if p in _COOKS and not obj.get(_COOK_FLAGS[p]):
                device = min(
                    (d for d in _COOKS[p] if d in where), key=lambda d: len(_path(graph, here, where[d][0]))
                )
                go(where[device][0])
                plan.append(f"cook {name} in {device}")
    go("kitchen")
    plan += ["prepare meal", "eat meal"]
    return tuple(plan)


def room_graph(env: TWXEnv) -> dict[str, dict[str, str]]:
    """room -> {direction: neighbour}, explored once per game with forks (the map never changes)."""
    view = env.expert_view()
    cache = view.rooms
    key = (view.seed, env.fold)
    graph = cache.get(key)
    if graph is not None:
        return graph
    probe = env.fork()
    try:
        probe.reset(seed=env.game_index)  # the same game, from its start
        graph = {}
        frontier: deque[tuple[str, TWXEnv]] = deque([(_room_of(probe), probe)])
        while frontier:
            room, here = frontier.popleft()
            if room in graph:
                continue
            graph[room] = {}
            for d in DIRECTIONS:
                moves = set(here.candidates)
                if f"move {d}" not in moves and f"open door to {d}" not in moves:
                    continue
                child = here.fork()
                if f"open door to {d}" in moves:
                    child.step_move(f"open door to {d}")
                child.step_move(f"move {d}")
                graph[room][d] = _room_of(child)
                frontier.append((graph[room][d], child))
    finally:
        probe.close()
    cache[key] = graph
    return graph


def _room_of(env: TWXEnv) -> str:
    return room_in(env.expert_view().look)


def _path(graph: Mapping[str, Mapping[str, str]], start: str, goal: str) -> list[str]:
    prev: dict[str, tuple[str, str] | None] = {start: None}
    queue = deque([start])
    while queue:
        room = queue.popleft()
        if room == goal:
            break
        for d, nxt in graph.get(room, {}).items():
            if nxt not in prev:
                prev[nxt] = (room, d)
                queue.append(nxt)
    if goal not in prev:
        raise RuntimeError(f"CookingWorld expert: no path from {start} to {goal}")
    moves = []
    node = goal
    while prev[node] is not None:
        room, d = prev[node]
        moves.append(f"move {d}")
        node = room
    return moves[::-1]


#: TWX game name -> its planner off the gold path.
PLANNERS: dict[str, Callable[[TWXEnv], tuple[str, ...]]] = {"cookingworld": plan_cookingworld}
