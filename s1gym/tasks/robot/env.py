"""``s1/PickPlace-v0`` and ``s1/PickPlaceRaw-v0``: the Fetch arm on MuJoCo, skills (or small moves) as moves.

The lookahead paper's robot experiment: code simulates each candidate on a copy of the physics and the
decision model only compares outcomes. Scenes come from :mod:`.scene` (``fold`` train/dev/test, ``blocks``,
``goal``, ``hard``), the physics and control from :mod:`.arm` (Gymnasium-Robotics' Fetch scene and control
on ``mujoco``), the skills from :mod:`.skills`, the text from :mod:`.view`, the experts from :mod:`.expert`.

Observation (Markov, what a camera tells): the goal, the target, each block (size, where it rests, position,
distance to its goal, upright or tipped over, its turn), the gripper (open or closed, what it holds, where,
its turn) and the skills and control steps used. Mass and friction stay hidden.

Moves. PickPlace: the skills :func:`.skills.skills_now` offers (up to :data:`PickPlaceEnv.default_max_candidates`),
in a fixed order. PickPlaceRaw: eight small moves (the gripper 2 cm along x, y or z, open, close), one
control step each: the route the paper found hopeless.

Score and end. Won: :meth:`.view.SceneView.won` (Fetch's 5 cm check, released for table and stack goals).
Lost: a block fell off the table (:meth:`.view.SceneView.off_table`: below the table top, or not held with
its centre past the table's edge, from where it tips off unstoppably; the arm cannot reach the floor, so
that is lost for every goal, and never a win, even where it empties a clear goal's area). Over (neither):
the control steps ran out. ``score`` is 1 when won, else ``0.9 * c / d0`` (clipped to [0, 0.9]) with d0 the
subject's distance to its goal point at the start and c the whole centimetres it has come nearer since
(``floor(d0 - d)`` in cm): physics never rests exactly, and a block settling by a fraction of a millimetre
while the arm works elsewhere must not count as progress (Search banks every rise of the score as a gain);
for clear goals ``0.9 *`` the share of the blocks that started inside the area and are out of it, on the
table (a fallen block counts as inside).

Fork: the arm's compact state (MuJoCo's integration state, ~3 KB; the model is shared and never changed) with
the env's own fields; the fork's ``MjData`` is rebuilt from it when the fork is first stepped or read, and an
arm not stepped lately gives its ``MjData`` up (at most 16 per thread hold one), so Search, which keeps the env
of every expanded node, holds a few KB a node, not 1.2 MB (:class:`~s1gym.tasks.robot.arm.Arm`). A
bit-identical continuation (tests/test_robot.py, hypothesis over raw and skill sequences). ``close()`` gives a
fork's ``MjData`` back for the next one, which Search and Lookahead do with every fork they are done with: a
new ``MjData`` costs ~20x rebuilding a state in a spare one.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from s1gym.core import Progress, S1Env
from s1gym.tasks.robot.arm import Arm
from s1gym.tasks.robot.expert import expert_skill, rule_skill
from s1gym.tasks.robot.scene import FOLDS, GOALS, draw_scene
from s1gym.tasks.robot.skills import Skill, run_skill, skills_now
from s1gym.tasks.robot.view import SceneView

__all__ = ["PickPlaceEnv", "PickPlaceRawEnv"]


class PickPlaceEnv(S1Env):
    """Fetch pick-and-place with skills as moves (see the module docstring)."""

    task_name: ClassVar[str] = "PickPlace"
    default_max_candidates: ClassVar[int] = 32
    default_max_steps: ClassVar[int] = 30
    #: control steps an episode may take (each 40 ms of simulated time)
    default_max_control_steps: ClassVar[int] = 900
    option_help: ClassVar[dict[str, str]] = {
        "fold": "which scenes the seeds pick: train (default), dev or test (disjoint random streams)",
        "blocks": "number of blocks, 1-4 (default: 2-4, drawn per scene)",
        "goal": "place, air, stack, clear or any (default: drawn per scene)",
        "hard": "true: each scene has one or two physical traps (slippery, turned, buried, occupied)",
        "max_steps": "skill limit (truncation)",
        "max_control_steps": "control-step limit of an episode (each 40 ms of simulated time)",
        "max_candidates": "the candidate cap N (Discrete(N))",
    }

    def __init__(self, *, fold: str = "train", blocks: int | None = None, goal: str = "any", hard: bool = False,
                 max_steps: int | None = None, max_control_steps: int | None = None,
                 max_candidates: int | None = None, render_mode: str | None = None) -> None:
        super().__init__(max_candidates=max_candidates, max_steps=max_steps, render_mode=render_mode)
        if fold not in FOLDS:
            raise ValueError(f"{self.task_name}: fold must be one of {list(FOLDS)}, got {fold!r}")
        if goal not in (*GOALS, "any"):
            raise ValueError(f"{self.task_name}: goal must be one of {[*GOALS, 'any']}, got {goal!r}")
        if blocks is not None:
            blocks = int(blocks)
            if not 1 <= blocks <= 4:
                raise ValueError(f"{self.task_name}: blocks must be 1-4, got {blocks}")
            if goal == "stack" and blocks < 2:
                raise ValueError(f"{self.task_name}: goal 'stack' needs blocks >= 2, got {blocks}")
        if isinstance(hard, str):
            if hard.lower() not in ("true", "false", "1", "0"):
                raise ValueError(f"{self.task_name}: hard must be true or false, got {hard!r}")
            hard = hard.lower() in ("true", "1")
        self.fold, self.blocks, self.goal, self.hard = fold, blocks, goal, bool(hard)
        self.max_control_steps = int(max_control_steps or self.default_max_control_steps)
        self.arm: Arm | None = None
        self._skills: list[Skill] = []
        self._start_distance = 1.0
        self._start_inside = 0

    # ------------------------------------------------------------------ hooks
    def _new_game(self, seed: int | None, options: dict[str, Any]) -> str:
        if seed is None:
            seed = int(self.np_random.integers(0, 2**31 - 1))
        scene = draw_scene(self.fold, int(seed), blocks=self.blocks, goal=self.goal, hard=self.hard)
        self.arm = Arm(scene)
        view = self._view()
        self._start_distance = max(view.subject_distance() or 0.0, 1e-6)
        self._start_inside = sum(view.inside_area(p) for p in self.arm.blocks()) if scene.goal == "clear" else 0
        return f"A new scene: {scene.instruction}"

    def _view(self) -> SceneView:
        return SceneView(self.arm, self.arm.held())

    def _legal_moves(self) -> list[str]:
        self._skills = skills_now(self.arm, self.arm.held())
        return [s.text for s in self._skills]

    def _play(self, move: str) -> str:
        skill = next(s for s in self._skills if s.text == move)
        before = self._view()
        poses = {p.colour: p for p in self.arm.blocks()}
        start = self.arm.steps
        run_skill(self.arm, skill, before.held)
        return self._events(move, before.held, poses, self.arm.steps - start)

    def _events(self, move: str, held_before: str | None, before: dict, steps: int) -> str:
        view = self._view()
        out = [f"You did: {move} ({steps} control step{'' if steps == 1 else 's'})."]
        if view.held != held_before:
            if held_before is None:
                out.append(f"The {view.held} block is in the gripper.")
            elif view.held is None and self.arm.closed:
                out.append(f"The {held_before} block slipped out of the gripper.")
            elif view.held is None:
                out.append(f"The gripper let go of the {held_before} block.")
        elif move == "grasp" and view.held is None:
            out.append("The fingers closed on nothing.")
        for pose in self.arm.blocks():
            was = before[pose.colour]
            if pose.colour in (view.held, held_before):
                continue
            moved = float(np.linalg.norm(pose.pos - was.pos))
            if moved > 0.02:
                out.append(f"The {pose.colour} block moved {moved * 100:.0f} cm.")
            if was.upright and not pose.upright:
                out.append(f"The {pose.colour} block tipped over.")
        for colour in view.off_table():
            out.append(f"The {colour} block fell off the table.")
        if view.won():
            out.append("The goal is reached.")
        return " ".join(out)

    def _describe(self) -> str:
        return self._view().describe(self._steps, self.max_steps, self.arm.steps, self.max_control_steps)

    def _progress(self) -> Progress:
        view = self._view()
        if view.won():
            return Progress(1.0, True, False, True)
        fallen = view.off_table()
        lost = bool(fallen)
        scene = self.arm.scene
        if scene.goal == "clear":       # a fallen block is not a cleared one
            inside = sum(view.inside_area(p) or p.colour in fallen for p in self.arm.blocks())
            share = (self._start_inside - inside) / max(self._start_inside, 1)
        else:   # whole centimetres gained: blocks settling by a hair while the arm works elsewhere is no progress
            gained = math.floor((self._start_distance - view.subject_distance()) * 100) / 100
            share = gained / self._start_distance
        score = 0.9 * float(np.clip(share, 0.0, 1.0))
        return Progress(score, False, lost, lost or self.arm.steps >= self.max_control_steps)

    def _fork_into(self, clone: S1Env) -> None:
        assert isinstance(clone, PickPlaceEnv)
        clone.arm = self.arm.copy()
        clone._skills = list(self._skills)

    def _extra_info(self) -> dict[str, Any]:
        return {"control_steps": int(self.arm.steps) if self.arm is not None else 0}

    def state_key(self) -> str:
        """The state rounded to a centimetre (and the gripper's state): physics never repeats exactly."""
        arm = self.arm
        parts = [f"{p.colour}:{np.round(p.pos * 100).astype(int).tolist()}" for p in arm.blocks()]
        parts.append(f"grip:{np.round(arm.grip_pos() * 100).astype(int).tolist()}:{int(arm.closed)}")
        return "|".join(parts)

    # ------------------------------------------------------------------ baselines
    def expert_action(self) -> str:
        """The privileged expert's next skill (reads the hidden physics: :mod:`.expert`)."""
        self._require_started()
        move = expert_skill(self._view(), self._skills)
        if move is None:
            raise RuntimeError(f"{self.task_name}: the expert has no skill here")
        return move

    def rule_action(self) -> str:
        """The handwritten selector: the goal's fixed skill order, not looking at what happened."""
        self._require_started()
        return rule_skill(self.arm.scene, self._steps, self._skills, self._view())

    # ------------------------------------------------------------------ pictures
    def screenshot(self) -> bytes:
        """A PNG of the scene (MuJoCo's offscreen rendering on EGL, or OSMesa with ``MUJOCO_GL=osmesa``)."""
        from s1gym.tasks.robot.render import render_png

        return render_png(self.arm)

    def close(self) -> None:
        if self.arm is not None:
            self.arm.release()
            self.arm = None
        super().close()


class PickPlaceRawEnv(PickPlaceEnv):
    """The same scenes with eight small moves as candidates (see the module docstring)."""

    task_name: ClassVar[str] = "PickPlaceRaw"
    default_max_candidates: ClassVar[int] = 8
    default_max_steps: ClassVar[int] = 300
    MOVES: ClassVar[dict[str, tuple[float, float, float]]] = {
        "move 2 cm away": (0.02, 0.0, 0.0), "move 2 cm closer": (-0.02, 0.0, 0.0),
        "move 2 cm left": (0.0, 0.02, 0.0), "move 2 cm right": (0.0, -0.02, 0.0),
        "move 2 cm up": (0.0, 0.0, 0.02), "move 2 cm down": (0.0, 0.0, -0.02),
    }

    def _legal_moves(self) -> list[str]:
        return [*self.MOVES, "open the gripper", "close the gripper"]

    def _play(self, move: str) -> str:
        held = self.arm.held()
        poses = {p.colour: p for p in self.arm.blocks()}
        if move in self.MOVES:
            self.arm.control(np.array(self.MOVES[move]))
        else:
            self.arm.control(np.zeros(3), close=move == "close the gripper")
        return self._events(move, held, poses, 1)

    def expert_action(self) -> str:
        raise NotImplementedError(f"{self.task_name} has no expert (its moves are too small to plan by hand)")

    def rule_action(self) -> str:
        raise NotImplementedError(f"{self.task_name} has no handwritten selector")
