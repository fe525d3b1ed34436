"""minigrid's BabyAI levels as s1gym's BabyAI family drives them: the levels, silent resets, a compact exact
copy of a level's state, and which of the seven actions can change anything.

Nothing here is a text: :mod:`.view` reads a world into the text the player sees. A *world* is the unwrapped
minigrid ``RoomGridLevel`` that holds one game's state (grid, agent, carried object, the mission's verifier,
the RNG); :func:`copy_world` copies exactly that state and shares everything a step never changes (walls,
the level's spaces and settings), so a fork costs a fraction of ``copy.deepcopy(env)``.
"""

from __future__ import annotations

import contextlib
import copy
import io
from functools import cache
from typing import Any

from s1gym.core.helpers import copy_generator

__all__ = ["ACTIONS", "DEFAULT_LEVELS", "STATIC_TYPES", "copy_world", "done_finishes", "legal_actions",
           "level_names", "make_level", "reset_world"]

#: the seven actions in minigrid's order (index i is ``Actions(i)``), named as the player reads them
ACTIONS = ("turn left", "turn right", "move forward", "pick up", "drop", "toggle", "done")
#: the levels the default draws from, a seed's level being ``DEFAULT_LEVELS[seed % 7]``
DEFAULT_LEVELS = ("GoToLocal", "PickupLoc", "PutNextLocal", "Open", "UnlockPickup", "GoToSeq", "SynthSeq")
#: world objects no action ever changes: a copy shares them
STATIC_TYPES = frozenset({"wall", "floor", "goal", "lava"})

LEFT, RIGHT, FORWARD, PICKUP, DROP, TOGGLE, DONE = range(7)


@cache
def level_names() -> tuple[str, ...]:
    """Every BabyAI level minigrid registers (``GoToLocal`` for ``BabyAI-GoToLocal-v0``), sorted."""
    import gymnasium as gym
    import minigrid  # noqa: F401  (registers the BabyAI ids with Gymnasium)

    names = []
    for env_id in gym.envs.registry:
        if env_id.startswith("BabyAI-") and env_id.endswith("-v0"):
            names.append(env_id[len("BabyAI-"):-len("-v0")])
    return tuple(sorted(names))


def check_level(level: str) -> str:
    """``level`` when minigrid registers it; a clear error listing the levels otherwise."""
    names = level_names()
    if level not in names:
        raise ValueError(f"BabyAI: unknown level {level!r}; minigrid {_minigrid_version()} registers "
                         f"{len(names)} levels: {', '.join(names)}")
    return level


def _minigrid_version() -> str:
    from importlib.metadata import version

    return version("minigrid")


def _no_observation() -> None:
    """Stands in for minigrid's ``gen_obs`` (the image observation, which the text view never reads)."""
    return


def make_level(level: str) -> Any:
    """A fresh world of ``level`` (not reset): the unwrapped minigrid env, without Gymnasium's checkers and
    without the image observation a minigrid step computes (the text view reads ``gen_obs_grid`` itself);
    its ``reset`` and ``step`` return ``None`` as the observation."""
    import gymnasium as gym

    check_level(level)
    world = gym.make(f"BabyAI-{level}-v0", disable_env_checker=True).unwrapped
    world.gen_obs = _no_observation
    return world


def reset_world(world: Any, seed: int) -> None:
    """``world.reset(seed=seed)`` without minigrid's "Sampling rejected: ..." prints."""
    with contextlib.redirect_stdout(io.StringIO()):
        world.reset(seed=seed)


def _copy_object(obj: Any, memo: dict[int, Any]) -> Any:
    """A copy of a key, ball, box or door (a box's content copied too), recorded in ``memo``. Positions are
    shared: minigrid replaces an object's ``cur_pos`` and never changes it in place."""
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    memo[id(obj)] = new
    inside = getattr(obj, "contains", None)
    if inside is not None:
        new.contains = memo.get(id(inside)) or _copy_object(inside, memo)
    return new


def _object_memo(world: Any, new: Any) -> tuple[dict[int, Any], list[Any]]:
    """The copy's cells, with a memo mapping each original mutable object to its copy (walls shared)."""
    memo: dict[int, Any] = {id(world): new}
    cells = list(world.grid.grid)
    for i, obj in enumerate(cells):
        if obj is not None and obj.type not in STATIC_TYPES:
            cells[i] = _copy_object(obj, memo)
    return memo, cells


def copy_world(world: Any) -> Any:
    """An independent world in exactly ``world``'s state: the grid's movable objects and doors, the agent,
    the carried object, the mission's verifier (which points at those objects) and the RNG are copied;
    walls, the spaces and the level's settings are shared (no step changes them)."""
    new = object.__new__(type(world))
    new.__dict__.update(world.__dict__)
    memo, cells = _object_memo(world, new)
    grid = object.__new__(type(world.grid))
    grid.__dict__.update(world.grid.__dict__)
    grid.grid = cells
    new.grid = grid
    carrying = world.carrying
    new.carrying = None if carrying is None else memo.get(id(carrying)) or _copy_object(carrying, memo)
    new.instrs = copy.deepcopy(world.instrs, memo)
    if world._np_random is not None:
        new._np_random = copy_generator(world._np_random)
    return new


def done_finishes(world: Any) -> bool:
    """Whether the ``done`` action would end the mission now (it changes nothing else): true only when a
    "go to" clause's object is right in front as the clause before it completes. Checked on a copy of the
    verifier, so the world is untouched."""
    front = world.grid.get(*world.front_pos)
    if front is None or front.type == "wall":
        return False
    memo: dict[int, Any] = {id(world): world}
    for obj in world.grid.grid:
        if obj is not None:
            memo[id(obj)] = obj
    if world.carrying is not None:
        memo[id(world.carrying)] = world.carrying
    instrs = copy.deepcopy(world.instrs, memo)
    return instrs.verify(world.actions.done) != "continue"


def legal_actions(world: Any) -> list[int]:
    """The actions that can change anything now, in minigrid's order: turning always; moving forward
    onto an empty cell or through an open door; picking up a key, ball or box in front with empty hands;
    dropping onto the empty cell in front; toggling a door (a locked one only with its key) or a box;
    ``done`` only when it completes the mission (:func:`done_finishes`)."""
    front = world.grid.get(*world.front_pos)
    carrying = world.carrying
    out = [LEFT, RIGHT]
    if front is None or front.can_overlap():
        out.append(FORWARD)
    if front is not None and carrying is None and front.can_pickup():
        out.append(PICKUP)
    if front is None and carrying is not None:
        out.append(DROP)
    if front is not None and (front.type == "box" or (front.type == "door" and (
            not front.is_locked or (carrying is not None and carrying.type == "key"
                                    and carrying.color == front.color)))):
        out.append(TOGGLE)
    if done_finishes(world):
        out.append(DONE)
    return out
