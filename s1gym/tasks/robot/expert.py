"""The robot tasks' experts: a privileged one that reads the physics, and the handwritten skill selector.

:func:`expert_skill` looks at the true state and the scene's hidden physics (a block's mass and friction)
and names the next skill of a plan that works: clear what stands on the subject, on the support or on the
target first (to the free spot), turn the gripper to a long block turned across the fingers, lift a heavy
slippery block slowly, then carry, lower and release (or hold, for an air target). It replans from the state
at every call, so it picks up after any move a policy made.

:func:`rule_skill` is the handwritten selector of the lookahead paper's robot experiment: the fixed skill
order for the goal (move above, lower, grasp, lift, carry above the target, lower, release), played in turn
without looking at what happened; where the next skill in its order is not offered it takes the one after.
"""

from __future__ import annotations

import numpy as np

from s1gym.tasks.robot.scene import TABLE_TOP
from s1gym.tasks.robot.skills import SAFE_HEIGHT, Skill, misaligned
from s1gym.tasks.robot.view import SceneView

__all__ = ["expert_skill", "rule_script", "rule_skill", "SLIPPERY"]

#: blocks this heavy for their friction slip out of the 30 N grip when lifted fast (newtons of weight per
#: unit of friction force the fingers can give): mass * g > SLIPPERY * friction * 2 * GRIP_FORCE
SLIPPERY = 0.3


def _slippery(view: SceneView, colour: str) -> bool:
    b = view.scene.block(colour)
    return b.mass * 9.81 > SLIPPERY * b.friction * 2 * 30.0


def _in_the_way(view: SceneView) -> list[str]:
    """Blocks that must move before the goal can be reached, nearest to the goal first."""
    scene, arm = view.scene, view.arm
    poses = arm.blocks()
    out: list[str] = []
    if scene.goal == "clear":
        inside = [p for p in poses if view.inside_area(p)]
        return [p.colour for p in sorted(inside, key=lambda p: -p.pos[2])]   # the top of a stack first
    for p in poses:
        if p.colour == scene.subject:
            continue
        on = view.resting_on(p, poses)
        if on in (scene.subject, scene.support):
            out.append(p.colour)
        elif scene.goal == "place" and np.linalg.norm(p.pos[:2] - np.array(scene.target[:2])) < 0.07:
            out.append(p.colour)
    return out


def _offered(skills: list[Skill], kind: str, block: str | None = None) -> str | None:
    for s in skills:
        if s.kind == kind and (block is None or s.block == block):
            return s.text
    return None


def expert_skill(view: SceneView, skills: list[Skill]) -> str:
    """The next skill of the privileged plan (see the module docstring)."""
    scene, arm = view.scene, view.arm
    held = view.held
    grip = arm.grip_pos()
    blockers = _in_the_way(view)
    if held is not None:
        if held == scene.subject and not blockers:
            pose = arm.block(held)
            bottom = pose.pos[2] - pose.half[2]
            if scene.goal == "air":
                return _offered(skills, "to_target")
            point = view.goal_point()
            over = np.linalg.norm(pose.pos[:2] - point[:2]) < 0.015
            if not over:
                if bottom < TABLE_TOP + 0.05:
                    return _offered(skills, "lift_slowly" if _slippery(view, held) else "lift")
                if scene.goal == "stack":
                    return _offered(skills, "above", scene.support)
                return _offered(skills, "above_target")
            if bottom - (point[2] - pose.half[2]) > 0.012:
                return _offered(skills, "lower")
            return _offered(skills, "release")
        # holding something that is in the way (or the subject while others are): put it on the free spot
        pose = arm.block(held)
        bottom = pose.pos[2] - pose.half[2]
        moved_away = all(np.linalg.norm(pose.pos[:2] - p.pos[:2]) > 0.09 for p in arm.blocks() if p.colour != held)
        if scene.target is not None:
            moved_away = moved_away and np.linalg.norm(pose.pos[:2] - np.array(scene.target[:2])) > 0.13
        if not moved_away:
            if bottom < TABLE_TOP + 0.05 and grip[2] < TABLE_TOP + SAFE_HEIGHT - 0.05:
                return _offered(skills, "lift_slowly" if _slippery(view, held) else "lift")
            return _offered(skills, "free")
        if bottom > TABLE_TOP + 0.012:
            return _offered(skills, "lower")
        return _offered(skills, "release")
    if arm.closed:
        return _offered(skills, "release")
    if scene.goal == "clear" and not blockers:
        return _offered(skills, "retreat")
    pick = blockers[0] if blockers else scene.subject
    pose = arm.block(pick)
    over = np.linalg.norm(pose.pos[:2] - grip[:2]) < 0.012
    if not over:
        return _offered(skills, "above", pick)
    if misaligned(arm, pick) and _offered(skills, "turn", pick):
        return _offered(skills, "turn", pick)
    if grip[2] - pose.pos[2] > 0.01:
        return _offered(skills, "lower")
    return _offered(skills, "grasp")


def rule_script(scene) -> list[tuple[str, str | None]]:
    """The handwritten selector's fixed order for the goal, as (skill kind, block) pairs."""
    if scene.goal == "clear":
        return [("push_away", None)]
    carry = ("above", scene.support) if scene.goal == "stack" else (
        ("to_target", None) if scene.goal == "air" else ("above_target", None))
    script = [("above", scene.subject), ("lower", None), ("grasp", None), ("lift", None), carry]
    if scene.goal != "air":
        script += [("lower", None), ("release", None)]
    return script


def rule_skill(scene, played: int, skills: list[Skill], view: SceneView) -> str:
    """The selector's skill after ``played`` skills (cycling through its order; clear: push each block in the
    the blocks away from the target in turn)."""
    if scene.goal == "clear":
        colours = [b.colour for b in scene.blocks]
        text = _offered(skills, "push_away", colours[played % len(colours)])
        return text or skills[0].text
    script = rule_script(scene)
    for k in range(len(script)):
        kind, block = script[(played + k) % len(script)]
        text = _offered(skills, kind, block)
        if text:
            return text
    return skills[0].text

