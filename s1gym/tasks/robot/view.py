"""What a camera tells of a robot scene, in words and centimetres, and how a goal stands.

:class:`SceneView` reads an :class:`Arm` (block poses, the gripper, what it holds) into the facts the text
observation, the score and the experts share. Nothing here reads a block's mass or friction: those stay
hidden from the player (the expert reads them from the scene, :mod:`.expert`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from s1gym.tasks.robot.arm import Arm, BlockPose
from s1gym.tasks.robot.scene import CLEAR_RADIUS, TABLE_CENTRE, TABLE_HALF, TABLE_TOP

__all__ = ["DISTANCE_THRESHOLD", "SceneView", "goal_distance"]

#: FetchPickAndPlace's success distance (metres): a block within it of its goal point has reached it
DISTANCE_THRESHOLD = 0.05


def goal_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Gymnasium-Robotics' own ``goal_distance`` (Euclidean), as the Fetch envs' success check uses it."""
    from gymnasium_robotics.envs.fetch.fetch_env import goal_distance as fetch_goal_distance

    return float(fetch_goal_distance(np.asarray(a), np.asarray(b)))


def _cm(v: float) -> str:
    return f"{v * 100:+.0f}"


def _where(p: np.ndarray) -> str:
    return f"x={_cm(p[0] - TABLE_CENTRE[0])} y={_cm(p[1] - TABLE_CENTRE[1])}"


@dataclass(frozen=True)
class SceneView:
    arm: Arm
    held: str | None

    @property
    def scene(self):
        return self.arm.scene

    # ---------------------------------------------------------------- relations
    def resting_on(self, pose: BlockPose, poses: list[BlockPose]) -> str | None:
        """``"table"``, a block's colour (resting on its top), or ``None`` (held or in the air)."""
        bottom = pose.pos[2] - pose.half[2]
        if bottom < TABLE_TOP + 0.012:
            return "table"
        for other in poses:
            if other.colour == pose.colour:
                continue
            reach = max(other.half[0], other.half[1]) + 0.01
            if abs(bottom - (other.pos[2] + other.half[2])) < 0.015 and np.linalg.norm(
                    pose.pos[:2] - other.pos[:2]) < reach:
                return other.colour
        return None

    def goal_point(self) -> np.ndarray | None:
        """Where the subject's centre must be: the target, or the support's top (stack); ``None``: clear."""
        scene = self.scene
        if scene.goal == "clear":
            return None
        if scene.goal == "stack":
            support = self.arm.block(scene.support)
            subject_half = scene.block(scene.subject).half[2]
            return support.pos + np.array([0.0, 0.0, support.half[2] + subject_half])
        return np.array(scene.target)

    def inside_area(self, pose: BlockPose) -> bool:
        """A block within :data:`CLEAR_RADIUS` of the target (clear goals), measured on the table."""
        return float(np.linalg.norm(pose.pos[:2] - np.array(self.scene.target[:2]))) < CLEAR_RADIUS

    def off_table(self) -> list[str]:
        """Blocks lost off the table: below its top, or not held with their centre beyond its edge.

        A block whose centre of mass is past the edge it rests on has no support under it and tips off
        within a few control steps (a push that ends there leaves it still on the edge for a moment);
        nothing the skills do can bring it back, so it counts as fallen at once. The arm cannot reach the
        floor, so a fallen block is lost to every goal, a clear goal included (the area is to be cleared
        onto the table, not onto the floor)."""
        out = []
        for p in self.arm.blocks():
            beyond = (abs(p.pos[0] - TABLE_CENTRE[0]) > TABLE_HALF[0]
                      or abs(p.pos[1] - TABLE_CENTRE[1]) > TABLE_HALF[1])
            if p.pos[2] < TABLE_TOP - 0.03 or (beyond and p.colour != self.held):
                out.append(p.colour)
        return out

    def subject_distance(self) -> float | None:
        point = self.goal_point()
        if point is None:
            return None
        return goal_distance(self.arm.block(self.scene.subject).pos, point)

    def won(self) -> bool:
        """The goal holds: Fetch's check (the subject within :data:`DISTANCE_THRESHOLD` of its goal point),
        released for the table and stack goals, held for the air goal; clear: no block in the area, none held.
        Never with a block off the table (:meth:`off_table`): that is lost, whatever the goal."""
        scene = self.scene
        if self.off_table():
            return False
        if scene.goal == "clear":
            return self.held is None and not any(self.inside_area(p) for p in self.arm.blocks())
        d = self.subject_distance()
        if d is None or d >= DISTANCE_THRESHOLD:
            return False
        if scene.goal == "air":
            return self.held == scene.subject
        if self.held is not None:
            return False
        pose = self.arm.block(scene.subject)
        on = self.resting_on(pose, self.arm.blocks())
        return on == (scene.support if scene.goal == "stack" else "table")

    # ---------------------------------------------------------------- text
    def describe(self, steps_used: int, max_skills: int, control_used: int, max_control: int) -> str:
        scene, arm = self.scene, self.arm
        poses = arm.blocks()
        lines = [f"Goal: {scene.instruction}",
                 "Positions are centimetres from the table's centre (x away from the robot, y to its left); "
                 "heights are above the table top."]
        if scene.target is not None:
            t = np.array(scene.target)
            if scene.goal == "air":
                lines.append(f"Target: in the air at {_where(t)}, {(t[2] - TABLE_TOP) * 100:.0f} cm high.")
            elif scene.goal == "clear":
                lines.append(f"Target area: {CLEAR_RADIUS * 100:.0f} cm around {_where(t)} on the table.")
            else:
                lines.append(f"Target: on the table at {_where(t)}.")
        lines.append("Blocks:")
        for pose in poses:
            lines.append("- " + self._block_line(pose, poses))
        g = arm.grip_pos()
        state = "closed" if arm.closed else "open"
        holding = f"holding the {self.held} block" if self.held else "empty"
        over = [p.colour for p in poses if np.linalg.norm(p.pos[:2] - g[:2]) < max(p.half[0], p.half[1]) + 0.01
                and p.pos[2] < g[2] - 0.005 and p.colour != self.held]
        above = f"; above the {over[0]} block" if over else ""
        lines.append(f"Gripper: {state} ({arm.finger_gap() * 100:.0f} cm between the fingers), {holding}, at "
                     f"{_where(g)}, {(g[2] - TABLE_TOP) * 100:.0f} cm high, turned {math.degrees(arm.yaw):.0f} "
                     f"degrees{above}.")
        lines.append(f"Skills used: {steps_used} of {max_skills}; control steps used: {control_used} of "
                     f"{max_control}.")
        return "\n".join(lines)

    def _block_line(self, pose: BlockPose, poses: list[BlockPose]) -> str:
        scene = self.scene
        size = "x".join(f"{2 * h * 100:.0f}" for h in sorted(pose.half, reverse=True))
        if pose.colour == self.held:
            where = f"held in the gripper, {(pose.pos[2] - pose.half[2] - TABLE_TOP) * 100:.0f} cm above the table"
        else:
            on = self.resting_on(pose, poses)
            if pose.colour in self.off_table():
                where = "fallen off the table"
            elif on == "table":
                where = "on the table"
            elif on is not None:
                where = f"on the {on} block"
            else:
                where = f"in the air, {(pose.pos[2] - pose.half[2] - TABLE_TOP) * 100:.0f} cm above the table"
        parts = [f"{pose.colour} block ({size} cm): {where} at {_where(pose.pos)}"]
        if scene.goal == "clear":
            parts.append("inside the target area" if self.inside_area(pose) else "outside the target area")
        elif pose.colour == scene.subject:
            point = self.goal_point()
            name = "the target" if scene.goal != "stack" else f"its place on the {scene.support} block"
            parts.append(f"{goal_distance(pose.pos, point) * 100:.0f} cm from {name}")
        parts.append("upright" if pose.upright else "tipped over")
        if abs(pose.half[0] - pose.half[1]) > 0.005:
            parts.append(f"its long side turned {math.degrees(pose.yaw):.0f} degrees")
        else:
            parts.append(f"turned {math.degrees(pose.yaw):.0f} degrees")
        return ", ".join(parts) + "."
