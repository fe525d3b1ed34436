"""Skills: scripted controllers the robot tasks offer as candidate moves, each run until done or its cap.

A skill is a name (the move's text) and a controller over :class:`Arm` control steps. Which skills a state
offers, and in which order, is :func:`skills_now` (deterministic: skill kind first, then the blocks in
:data:`COLOURS` order). What a skill does is written out in :data:`SKILL_HELP`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from s1gym.tasks.robot.arm import Arm
from s1gym.tasks.robot.scene import AREA, COLOURS, TABLE_CENTRE, TABLE_TOP

__all__ = ["SAFE_HEIGHT", "SKILL_HELP", "Skill", "free_spot", "run_skill", "skills_now"]

#: the height (above the table top) the gripper travels at between places, metres
SAFE_HEIGHT = 0.2
#: how close a move must come to its goal point, metres
TOLERANCE = 0.006
#: control steps a skill may take at most
SKILL_CAP = 40
#: the least drop (metres) that makes ``lower`` a move: closer than this to where it stops, it is not offered
LOWER_MIN = 0.005
#: speeds (metres per control step)
FAST, NORMAL, SLOW = 0.05, 0.03, 0.01
#: how much a ramped move speeds up or slows down a step (metres per step per step)
ACCEL = 0.008

SKILL_HELP = {
    "move above the X block": "rise to travel height, go over X, hover 10 cm above its top (gripper empty)",
    "carry the H block above the X block": "the same with H held: hover so that H is 3 cm above X's top",
    "move above the target / carry the H block above the target": "the same over the target",
    "carry the H block to the target": "air targets: bring H's centre to the target point",
    "move to the free spot / carry the H block to the free spot": "over the table point farthest from "
                                                                  "every block and the target",
    "lower": "go down at 2 cm a step: to grasp height of the block below, or until the held block is "
             "5 mm above what is below it",
    "grasp": "close the fingers (30 N)", "release": "open the fingers",
    "lift": "rise 15 cm at 5 cm a step", "lift slowly": "rise 15 cm at 1 cm a step",
    "turn the gripper to the X block": "turn the fingers about the vertical to close across X's narrow side",
    "push the X block toward the target": "from behind X, fingers closed, low, push it to the target",
    "push the X block away from the target": "from the target's side, push X out of the target area",
    "retreat": "rise and go back to the start pose",
}


@dataclass(frozen=True)
class Skill:
    text: str
    kind: str
    block: str | None = None        # the block the skill names


def _colours(arm: Arm) -> list[str]:
    present = {b.colour for b in arm.scene.blocks}
    return [c for c in COLOURS if c in present]


def _top(arm: Arm, colour: str) -> float:
    pose = arm.block(colour)
    return float(pose.pos[2] + pose.half[2])


def free_spot(arm: Arm) -> np.ndarray:
    """The table point (on a 5 cm grid of the placing area) farthest from every block and the target."""
    points = [b.pos[:2] for b in arm.blocks()]
    if arm.scene.target is not None:
        points.append(np.array(arm.scene.target[:2]))
    best, best_d = None, -1.0
    for x in np.linspace(-AREA[0], AREA[0], 6):
        for y in np.linspace(-AREA[1], AREA[1], 9):
            p = np.array([TABLE_CENTRE[0] + x, TABLE_CENTRE[1] + y])
            d = min(float(np.linalg.norm(p - q)) for q in points)
            if d > best_d + 1e-9:
                best, best_d = p, d
    return best


def misaligned(arm: Arm, colour: str) -> bool:
    pose = arm.block(colour)
    if abs(pose.half[0] - pose.half[1]) < 0.005:     # square footprint: any turn of 90 degrees fits
        diff = (pose.yaw - arm.yaw + math.pi / 4) % (math.pi / 2) - math.pi / 4
    else:
        diff = (pose.yaw - arm.yaw + math.pi / 2) % math.pi - math.pi / 2
    return abs(diff) > math.radians(12)


def skills_now(arm: Arm, held: str | None) -> list[Skill]:
    """The skills this state offers, in their fixed order."""
    scene = arm.scene
    colours = _colours(arm)
    out: list[Skill] = []
    if held is None:
        out += [Skill(f"move above the {c} block", "above", c) for c in colours]
        if scene.target is not None:
            out.append(Skill("move above the target", "above_target"))
        out.append(Skill("move to the free spot", "free"))
    else:
        out += [Skill(f"carry the {held} block above the {c} block", "above", c) for c in colours if c != held]
        if scene.target is not None:
            if scene.goal == "air":
                out.append(Skill(f"carry the {held} block to the target", "to_target"))
            out.append(Skill(f"carry the {held} block above the target", "above_target"))
        out.append(Skill(f"carry the {held} block to the free spot", "free"))
    if arm.grip_pos()[2] - _lower_point(arm, held)[2] > LOWER_MIN:   # a lower that would not move is no move
        out.append(Skill("lower", "lower"))
    out.append(Skill("release", "release") if arm.closed else Skill("grasp", "grasp"))
    out += [Skill("lift", "lift"), Skill("lift slowly", "lift_slowly")]
    if held is None:
        out += [Skill(f"turn the gripper to the {c} block", "turn", c) for c in colours if misaligned(arm, c)]
        if scene.goal == "place":
            out += [Skill(f"push the {c} block toward the target", "push_to", c) for c in colours]
        if scene.goal == "clear":
            out += [Skill(f"push the {c} block away from the target", "push_away", c) for c in colours]
    out.append(Skill("retreat", "retreat"))
    return out


# ---------------------------------------------------------------------- controllers
def _go(arm: Arm, point: np.ndarray, speed: float, budget: list[int], ramp: bool = True) -> bool:
    """Move the grip point to ``point`` in steps of at most ``speed``, speeding up and slowing down by
    :data:`ACCEL` a step unless ``ramp`` is false; False when the budget ran out."""
    point = np.asarray(point, dtype=np.float64)
    v, stalled, last = 0.0, 0, None
    while budget[0] > 0:
        here = arm.grip_pos()
        delta = point - here
        dist = float(np.linalg.norm(delta))
        if dist < TOLERANCE:
            return True
        if last is not None and float(np.linalg.norm(here - last)) < 0.0015:
            stalled += 1
            if stalled >= 2:         # blocked (the fingers stand on something): stop pressing
                return False
        else:
            stalled = 0
        last = here
        v = min(speed, v + ACCEL, math.sqrt(2 * ACCEL * dist) + ACCEL / 2) if ramp else speed
        arm.control(delta if dist <= v else delta * (v / dist))
        budget[0] -= 1
    return False


def _hold(arm: Arm, steps: int, budget: list[int], close: bool | None = None) -> None:
    for _ in range(min(steps, budget[0])):
        arm.control(np.zeros(3), close=close)
        budget[0] -= 1


def _travel(arm: Arm, xy: np.ndarray, z: float, budget: list[int]) -> None:
    """Rise to travel height (if below it), go over ``xy``, then to height ``z``."""
    here = arm.grip_pos()
    safe = TABLE_TOP + SAFE_HEIGHT
    if here[2] < safe - TOLERANCE:
        _go(arm, np.array([here[0], here[1], safe]), NORMAL, budget)
    _go(arm, np.array([xy[0], xy[1], safe]), NORMAL, budget)
    _go(arm, np.array([xy[0], xy[1], z]), NORMAL, budget)


def _held_drop(arm: Arm, held: str | None) -> float:
    """How far below the grip point the held block's bottom hangs (0 when nothing is held)."""
    if held is None:
        return 0.0
    pose = arm.block(held)
    return float(arm.grip_pos()[2] - (pose.pos[2] - pose.half[2]))


def _surface_below(arm: Arm, xy: np.ndarray, skip: str | None) -> float:
    """The height of the highest thing under ``xy`` (a block's top within its footprint, or the table)."""
    best = TABLE_TOP
    for pose in arm.blocks():
        if pose.colour == skip:
            continue
        reach = max(pose.half[0], pose.half[1]) + 0.01
        if float(np.linalg.norm(pose.pos[:2] - xy)) < reach:
            best = max(best, float(pose.pos[2] + pose.half[2]))
    return best


def _lower_point(arm: Arm, held: str | None) -> np.ndarray:
    """Where ``lower`` stops: empty, at the middle of the highest block below (or just above the table);
    holding, with the held block just above what is under it. Never above the grip point."""
    here = arm.grip_pos()
    if held is None:
        below = [p for p in arm.blocks()
                 if float(np.linalg.norm(p.pos[:2] - here[:2])) < max(p.half[0], p.half[1]) + 0.01
                 and p.pos[2] < here[2]]
        z = max(p.pos[2] for p in below) if below else TABLE_TOP + 0.02
        z = max(z, TABLE_TOP + 0.015)
    else:
        z = _surface_below(arm, here[:2], held) + _held_drop(arm, held) + 0.005
    return np.array([here[0], here[1], min(z, here[2])])


def _push(arm: Arm, colour: str, toward: bool, budget: list[int]) -> None:
    scene = arm.scene
    pose = arm.block(colour)
    target = np.array(scene.target[:2])
    u = target - pose.pos[:2] if toward else pose.pos[:2] - target
    dist = float(np.linalg.norm(u))
    u = u / dist if dist > 1e-6 else np.array([1.0, 0.0])
    back = max(pose.half[0], pose.half[1]) + 0.03
    start = pose.pos[:2] - u * back
    low = TABLE_TOP + 0.02
    _travel(arm, start, low + 0.06, budget)
    _hold(arm, 5, budget, close=True)
    _go(arm, np.array([start[0], start[1], low]), NORMAL, budget)
    travel = dist if toward else max(0.0, 0.15 - dist)
    end = start + u * (travel + 0.01)
    _go(arm, np.array([end[0], end[1], low]), 0.02, budget)
    here = arm.grip_pos()
    _go(arm, np.array([here[0], here[1], low + 0.08]), NORMAL, budget)
    _hold(arm, 5, budget, close=False)


def run_skill(arm: Arm, skill: Skill, held: str | None) -> None:
    """Run ``skill`` on ``arm`` (at most :data:`SKILL_CAP` control steps)."""
    budget = [SKILL_CAP]
    scene = arm.scene
    kind = skill.kind
    drop = _held_drop(arm, held)
    if kind == "above":
        pose = arm.block(skill.block)
        gap = 0.1 if held is None else drop + 0.03
        _travel(arm, pose.pos[:2], _top(arm, skill.block) + gap, budget)
    elif kind in ("above_target", "to_target"):
        tx, ty, tz = scene.target
        if kind == "to_target":
            grip_to_centre = drop - arm.block(held).half[2]
            _travel(arm, np.array([tx, ty]), tz + grip_to_centre, budget)
        else:
            z = (TABLE_TOP + 0.1) if held is None else max(tz - arm.block(held).half[2], TABLE_TOP) + drop + 0.03
            _travel(arm, np.array([tx, ty]), z, budget)
    elif kind == "free":
        spot = free_spot(arm)
        _travel(arm, spot, TABLE_TOP + (0.1 if held is None else drop + 0.03), budget)
    elif kind == "lower":
        _go(arm, _lower_point(arm, held), 0.02, budget)
    elif kind == "grasp":
        _hold(arm, 6, budget, close=True)
    elif kind == "release":
        _hold(arm, 6, budget, close=False)
    elif kind in ("lift", "lift_slowly"):
        here = arm.grip_pos()
        _go(arm, here + np.array([0.0, 0.0, 0.15]), FAST if kind == "lift" else SLOW, budget, ramp=False)
        _hold(arm, 2, budget)
    elif kind == "turn":
        arm.yaw = float(arm.block(skill.block).yaw)
        _hold(arm, 8, budget)
    elif kind in ("push_to", "push_away"):
        _push(arm, skill.block, kind == "push_to", budget)
    elif kind == "retreat":
        _travel(arm, arm.home[:2], float(arm.home[2]), budget)
    else:  # pragma: no cover - skills_now names only the kinds above
        raise ValueError(f"unknown skill kind {kind!r}")
