"""Robot scenes: what a seed builds (blocks, goal, target) and the MuJoCo model of it.

A :class:`Scene` is drawn from ``(fold, seed)`` alone, so a seed always names the same scene and the three
folds never share one. The model is Gymnasium-Robotics' Fetch pick-and-place scene (its wheel's
``envs/assets/fetch/pick_and_place.xml``: the Fetch arm, its mocap weld and the table) with its one block
replaced by the scene's blocks through ``mujoco.MjSpec``.

Two changes to Fetch's gripper, both physical: the fingers squeeze with at most :data:`GRIP_FORCE` newtons
(Fetch's position actuators with ``kp=30000`` reach ~6 kN, against which no block could ever slip) and move
with a light finger joint (armature 1, damping 100, instead of 100 and 1000) so that they still close in a
fraction of a second. Block geoms carry ``priority=1``, so a contact uses the block's friction (MuJoCo
otherwise takes the larger of the two, the fingers' 1.0).

The hard setting (``hard=True``) draws, for each scene, one or two of the things a careful engineer meets
(:data:`TRAPS`): a heavy low-friction block that slips out of the gripper when lifted fast, a long block
turned across the fingers so that a straight grasp closes on its ends, a block stacked on the one to move,
and a block standing on the target.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import os
import sys
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "COLOURS",
    "FOLDS",
    "GOALS",
    "GRIP_FORCE",
    "TABLE_CENTRE",
    "TABLE_HALF",
    "TABLE_TOP",
    "TRAPS",
    "Block",
    "Scene",
    "build_model",
    "draw_scene",
]

FOLDS = {"train": 1, "dev": 2, "test": 3}
GOALS = ("place", "air", "stack", "clear")
TRAPS = ("slippery", "turned", "buried", "occupied")
COLOURS = ("red", "blue", "green", "yellow")
RGBA = {"red": (0.85, 0.15, 0.15, 1), "blue": (0.15, 0.3, 0.85, 1), "green": (0.15, 0.7, 0.25, 1),
        "yellow": (0.9, 0.8, 0.1, 1)}
#: Fetch's table (``table0``): its top (z), centre (x, y) and half extents (x, y), metres in the world frame
TABLE_TOP = 0.4
TABLE_CENTRE = (1.3, 0.75)
TABLE_HALF = (0.25, 0.35)
#: where blocks and targets are placed, around the table centre (metres): within the arm's reach
AREA = (0.13, 0.2)
#: the fingers' force limit, newtons (see the module docstring)
GRIP_FORCE = 30.0
#: MjData's arena (contacts, constraints, the solver's stack). The most any scene used in 36 episodes of
#: expert and random skills over train/dev, hard and plain, 1-4 blocks: 186 KB; 1 MiB leaves 5x. A fork
#: holds one (Search keeps a fork per expanded node), so it is kept small; when a step runs out of it,
#: :meth:`Arm.control <s1gym.tasks.robot.arm.Arm.control>` raises rather than let MuJoCo drop contacts.
ARENA_BYTES = 1024 * 1024
#: radius of the target area a "clear" goal empties (metres)
CLEAR_RADIUS = 0.1


@dataclass(frozen=True)
class Block:
    colour: str
    half: tuple[float, float, float]   # half sizes x, y, z (metres) in the block's own frame
    mass: float                        # kg (hidden: a camera does not see it)
    friction: float                    # sliding friction (hidden)
    pos: tuple[float, float, float]    # initial centre, world frame
    yaw: float                         # initial turn about the vertical, radians

    @property
    def name(self) -> str:
        return f"{self.colour} block"


@dataclass(frozen=True)
class Scene:
    fold: str
    seed: int
    goal: str                          # one of GOALS
    blocks: tuple[Block, ...]
    subject: str | None                # the block the goal moves (None: clear)
    support: str | None                # stack: the block to stack on
    target: tuple[float, float, float] | None   # place/air/clear: the target point
    traps: tuple[str, ...] = ()
    hard: bool = False
    notes: tuple[str, ...] = field(default=())

    def block(self, colour: str) -> Block:
        return next(b for b in self.blocks if b.colour == colour)

    @property
    def instruction(self) -> str:
        if self.goal == "place":
            return f"Put the {self.subject} block on the target."
        if self.goal == "air":
            return f"Hold the {self.subject} block at the target in the air."
        if self.goal == "stack":
            return f"Stack the {self.subject} block on the {self.support} block."
        return "Clear the target area: no block may stay within 10 cm of the target."


def _uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(rng.uniform(lo, hi))


def _spot(rng: np.random.Generator, taken: list[tuple[float, float, float]]) -> tuple[float, float]:
    """A table point farther than its gap from every ``(x, y, gap)`` in ``taken``."""
    for _ in range(500):
        x = TABLE_CENTRE[0] + _uniform(rng, -AREA[0], AREA[0])
        y = TABLE_CENTRE[1] + _uniform(rng, -AREA[1], AREA[1])
        if all(math.dist((x, y), (tx, ty)) >= gap for tx, ty, gap in taken):
            return x, y
    raise RuntimeError("no free spot on the table (too many blocks for the area)")


def draw_scene(fold: str, seed: int, *, blocks: int | None = None, goal: str = "any", hard: bool = False) -> Scene:
    """The scene of ``(fold, seed)`` with the given options (``blocks=None``: 2-4, drawn; ``goal="any"``:
    drawn). Deterministic: the same arguments give the same scene."""
    if fold not in FOLDS:
        raise ValueError(f"fold must be one of {list(FOLDS)}, got {fold!r}")
    rng = np.random.default_rng([FOLDS[fold], int(seed) & 0xFFFFFFFF, int(hard), 736])
    n = int(rng.integers(2, 5)) if blocks is None else blocks
    kind = GOALS[int(rng.integers(len(GOALS)))] if goal == "any" else goal
    if kind == "stack" and n < 2:
        raise ValueError("goal 'stack' needs at least 2 blocks")
    colours = [str(c) for c in rng.permutation(COLOURS)[:n]]
    subject = colours[0] if kind != "clear" else None
    support = colours[1] if kind == "stack" else None
    # helpers: the blocks a trap may use (neither the subject nor the support), one trap each
    helpers = [c for c in colours if c not in (subject, support)]
    traps: list[str] = []
    if hard:
        possible = ["slippery"] if kind == "clear" else ["slippery", "turned"]
        if helpers or (kind == "clear" and n >= 2):
            possible.append("buried")
        if helpers and kind in ("place", "stack"):
            possible.append("occupied")
        k = 1 if len(possible) == 1 else int(rng.integers(1, 3))
        traps = sorted(str(t) for t in rng.choice(possible, size=k, replace=False))
        if "buried" in traps and "occupied" in traps and len(helpers) < 2:
            traps.remove("occupied")
    # sizes, masses, frictions
    specs: dict[str, dict] = {}
    for c in colours:
        h = _uniform(rng, 0.02, 0.028)
        specs[c] = dict(half=(h, h, h), mass=_uniform(rng, 0.1, 0.4), friction=_uniform(rng, 0.8, 1.0),
                        yaw=_uniform(rng, -0.25, 0.25))
    if hard:
        # the heavy, slippery ones: the subject when that trap was drawn, and any other block one time in four
        for c in colours:
            if (c == subject and "slippery" in traps) or (kind == "clear" and "slippery" in traps) or (
                    c != subject and rng.random() < 0.25):
                specs[c].update(mass=_uniform(rng, 0.62, 0.75), friction=_uniform(rng, 0.19, 0.22))
        if "turned" in traps:
            specs[subject].update(half=(0.065, 0.016, 0.022), yaw=math.pi / 2 + _uniform(rng, -0.35, 0.35))
    # positions: the target first, then blocks at least 9 cm apart and (but for the traps) away from it
    taken: list[tuple[float, float, float]] = []
    pos: dict[str, tuple[float, float, float]] = {}
    target: tuple[float, float, float] | None = None
    on_top: dict[str, str] = {}       # upper -> lower
    if kind in ("place", "clear", "air"):
        tx, ty = _spot(rng, [])
        taken.append((tx, ty, 0.16 if kind == "clear" else 0.13))
        if kind == "air":
            target = (tx, ty, TABLE_TOP + _uniform(rng, 0.1, 0.25))
        elif kind == "place":
            target = (tx, ty, TABLE_TOP + specs[subject]["half"][2])
        else:
            target = (tx, ty, TABLE_TOP)
    if "buried" in traps and kind != "clear":
        on_top[helpers.pop()] = subject
    if "occupied" in traps:
        if kind == "place":
            c = helpers.pop()
            pos[c] = (target[0], target[1], TABLE_TOP + specs[c]["half"][2])
        else:                                         # stack: another block sits on the support
            on_top[helpers.pop()] = support
    if kind == "clear":                               # one or two blocks start inside the target area
        for c in colours[: int(rng.integers(1, 3))]:
            ang, r = _uniform(rng, 0, 2 * math.pi), _uniform(rng, 0.0, 0.05)
            x, y = target[0] + r * math.cos(ang), target[1] + r * math.sin(ang)
            if all(math.dist((x, y), p[:2]) >= 0.07 for p in pos.values()):
                pos[c] = (x, y, TABLE_TOP + specs[c]["half"][2])
        spare = [c for c in colours if c not in pos]
        if "buried" in traps and spare:               # a block stacked on one inside the area
            on_top[spare[0]] = next(iter(pos))
    for x, y, _ in pos.values():
        taken.append((x, y, 0.09))
    for c in colours:
        if c in pos or c in on_top:
            continue
        x, y = _spot(rng, taken)
        pos[c] = (x, y, TABLE_TOP + specs[c]["half"][2])
        taken.append((x, y, 0.09))
    for upper, lower in on_top.items():
        lx, ly, lz = pos[lower]
        pos[upper] = (lx, ly, lz + specs[lower]["half"][2] + specs[upper]["half"][2])
    built = tuple(Block(c, tuple(round(v, 4) for v in specs[c]["half"]), round(specs[c]["mass"], 3),
                        round(specs[c]["friction"], 3), tuple(round(v, 4) for v in pos[c]),
                        round(specs[c]["yaw"], 4)) for c in colours)
    return Scene(fold, int(seed), kind, built, subject, support,
                 None if target is None else tuple(round(v, 4) for v in target), tuple(traps), hard)


@functools.cache
def import_robotics() -> None:
    """Import gymnasium_robotics once, without the notice its ``__init__`` prints on stderr about its Adroit
    hand envs' rewards (from farama_notifications; nothing here uses them); anything else it prints passes."""
    printed = io.StringIO()
    try:
        with contextlib.redirect_stderr(printed):
            import gymnasium_robotics  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the robot extra is missing
        raise ImportError("the robot tasks need the 'robot' extra: pip install 's1gym[robot]' "
                          "(gymnasium-robotics and mujoco)") from exc
    finally:
        rest = [line for line in printed.getvalue().splitlines() if "AdroitHand" not in line]
        if rest:
            print("\n".join(rest), file=sys.stderr)


@functools.cache
def fetch_xml() -> str:
    """The path of Gymnasium-Robotics' Fetch pick-and-place scene (inside its wheel)."""
    import_robotics()
    from gymnasium_robotics.envs.fetch import pick_and_place

    return os.path.abspath(os.path.join(os.path.dirname(pick_and_place.__file__), "..", "assets", "fetch",
                                        "pick_and_place.xml"))


@functools.lru_cache(maxsize=32)
def build_model(scene: Scene):
    """The compiled ``mujoco.MjModel`` of ``scene`` (cached: a scene's model is never changed, only its
    ``MjData``; compiling one takes ~0.3-0.8 s, most of it Fetch's meshes)."""
    import mujoco

    spec = mujoco.MjSpec.from_file(fetch_xml())
    spec.delete(spec.body("object0"))
    spec.memory = ARENA_BYTES
    for actuator in spec.actuators:
        actuator.forcelimited = 1
        actuator.forcerange = [-GRIP_FORCE, GRIP_FORCE]
    for joint in spec.joints:
        if "gripper_finger" in joint.name:
            joint.armature = 1.0
            joint.damping = [100.0, 0.0, 0.0]
    for b in scene.blocks:
        body = spec.worldbody.add_body(name=b.colour, pos=list(b.pos),
                                       quat=[math.cos(b.yaw / 2), 0, 0, math.sin(b.yaw / 2)])
        body.add_freejoint(name=f"{b.colour}:joint")
        body.add_geom(name=b.colour, type=mujoco.mjtGeom.mjGEOM_BOX, size=list(b.half), mass=b.mass,
                      friction=[b.friction, 0.005, 0.0001], rgba=list(RGBA[b.colour]), condim=4, priority=1)
    site = spec.site("target0")
    if scene.target is None:
        site.rgba = [0, 0, 0, 0]
    else:
        site.pos = [scene.target[0] - 0.8, scene.target[1] - 0.75, scene.target[2]]
        if scene.goal == "clear":
            site.type = mujoco.mjtGeom.mjGEOM_CYLINDER
            site.size = [CLEAR_RADIUS, 0.001, 0.0]
            site.rgba = [1, 0.4, 0.4, 0.35]
    return spec.compile()
