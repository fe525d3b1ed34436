"""The Fetch arm on a scene's MuJoCo model: one control step, what a camera sees, and an exact copy.

Control is Gymnasium-Robotics' own (its ``mujoco_utils``): each step moves the mocap body welded to the
gripper by a position change of at most 5 cm (as ``FetchPickAndPlace``'s ``pos_ctrl *= 0.05``), sets the
finger actuators (open +1, close -1) and runs :data:`SUBSTEPS` MuJoCo steps of 2 ms. Unlike Fetch's fixed
gripper orientation, the gripper may be turned about the vertical (``yaw``) so a long block can be taken
across its narrow side.
"""

from __future__ import annotations

import copy
import math
import threading
from collections import deque
from dataclasses import dataclass

import numpy as np

from s1gym.errors import S1GymError
from s1gym.tasks.robot.scene import ARENA_BYTES, Scene, build_model, import_robotics

__all__ = ["MAX_MOVE", "SUBSTEPS", "Arm", "ArenaFull", "BlockPose"]

#: MuJoCo steps per control step (FetchPickAndPlace's n_substeps)
SUBSTEPS = 20
#: the largest gripper move of one control step, metres (FetchPickAndPlace's action scale)
MAX_MOVE = 0.05
#: Fetch's gripper orientation (pointing down), the quaternion FetchPickAndPlace holds the mocap at
DOWN = np.array([1.0, 0.0, 1.0, 0.0]) / math.sqrt(2.0)


def _yaw_quat(yaw: float) -> np.ndarray:
    """``DOWN`` turned by ``yaw`` about the world's vertical."""
    qz = np.array([math.cos(yaw / 2), 0.0, 0.0, math.sin(yaw / 2)])
    w1, x1, y1, z1 = qz
    w2, x2, y2, z2 = DOWN
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


class ArenaFull(S1GymError, RuntimeError):
    """MuJoCo had no arena memory left for a step's contacts or constraints (it would drop them)."""


@dataclass(frozen=True)
class BlockPose:
    colour: str
    pos: np.ndarray          # centre, world frame (metres)
    yaw: float               # turn about the vertical of the block's long side, radians in (-pi/2, pi/2]
    upright: bool            # its own vertical still points up (not tipped over)
    half: tuple[float, float, float]


class _SpareData:
    """``MjData`` of closed copies, kept for the next copy of the same model.

    A new ``MjData`` costs ~0.6-0.9 ms (its buffer and the bindings' ~150 array views); copying a state
    into a spare one with ``mj_copyData`` costs ~0.01 ms. Search and Lookahead close every fork they are
    done with (:meth:`Arm.release`), so a search's forks mostly reuse a handful of ``MjData``. At most
    :attr:`LIMIT` are kept (the oldest dropped), whatever their model, so spares never hold models alive
    in bulk.
    """

    LIMIT = 32

    def __init__(self) -> None:
        self._free: deque = deque(maxlen=self.LIMIT)
        self._lock = threading.Lock()

    def take(self, model):
        """A spare ``MjData`` of ``model`` (its contents stale: copy into it), or ``None``."""
        with self._lock:
            for i, data in enumerate(self._free):
                if data.model is model:
                    del self._free[i]
                    return data
        return None

    def give(self, data) -> None:
        with self._lock:
            self._free.append(data)

    def clear(self) -> None:
        with self._lock:
            self._free.clear()


SPARE_DATA = _SpareData()


class Arm:
    """The physics of one scene: ``model`` (shared by every copy) and ``data`` (each copy its own)."""

    def __init__(self, scene: Scene, model=None) -> None:
        import mujoco

        import_robotics()
        from gymnasium_robotics.utils import mujoco_utils

        self._mj, self._utils = mujoco, mujoco_utils
        self._contact_full = int(mujoco.mjtWarning.mjWARN_CONTACTFULL)
        self._constraints_full = int(mujoco.mjtWarning.mjWARN_CNSTRFULL)
        self.scene = scene
        self.model = build_model(scene) if model is None else model
        self.data = mujoco.MjData(self.model)
        self.yaw = 0.0
        self.closed = False
        self.steps = 0
        m, d = self.model, self.data
        for name, value in {"robot0:slide0": 0.405, "robot0:slide1": 0.48, "robot0:slide2": 0.0}.items():
            mujoco_utils.set_joint_qpos(m, d, name, value)
        mujoco_utils.reset_mocap_welds(m, d)
        mujoco.mj_forward(m, d)
        # FetchPickAndPlace's _env_setup: the gripper 20 cm above its start, settled for 10 steps
        home = np.array([-0.498, 0.005, -0.431 + 0.2]) + self.grip_pos()
        mujoco_utils.set_mocap_pos(m, d, "robot0:mocap", home)
        mujoco_utils.set_mocap_quat(m, d, "robot0:mocap", DOWN)
        for _ in range(10):
            mujoco.mj_step(m, d, nstep=SUBSTEPS)
        self.home = self.grip_pos()
        self._block_ids = {b.colour: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, b.colour) for b in scene.blocks}
        self._grip_site = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "robot0:grip")
        self._fingers = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, f"robot0:{s}_gripper_finger_joint")
                         for s in ("l", "r")]
        self._finger_geoms = {mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, f"robot0:{s}_gripper_finger_link")
                              for s in ("l", "r")}
        self._geom_colour = {mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, c): c for c in self._block_ids}
        for _ in range(6):               # open the fingers before the first skill
            self.control(np.zeros(3), close=False)
        self.steps = 0

    # ------------------------------------------------------------------ control
    def control(self, move: np.ndarray, *, close: bool | None = None) -> None:
        """One control step: move the gripper by ``move`` (clipped to :data:`MAX_MOVE`), set the fingers."""
        if close is not None:
            self.closed = close
        move = np.asarray(move, dtype=np.float64)
        norm = float(np.linalg.norm(move))
        if norm > MAX_MOVE:
            move = move * (MAX_MOVE / norm)
        g = -1.0 if self.closed else 1.0
        action = np.concatenate([move, [0.0, 0.0, 0.0, 0.0], [g, g]])
        self._utils.ctrl_set_action(self.model, self.data, action)
        self._utils.mocap_set_action(self.model, self.data, action)
        self.data.mocap_quat[0] = _yaw_quat(self.yaw)
        try:
            self._mj.mj_step(self.model, self.data, nstep=SUBSTEPS)
        except self._mj.FatalError as exc:
            if "out of memory" not in str(exc):
                raise
            raise self._arena_full() from exc
        warning = self.data.warning
        if warning[self._contact_full].number or warning[self._constraints_full].number:
            raise self._arena_full()
        self.steps += 1

    def _arena_full(self) -> ArenaFull:
        return ArenaFull(
            f"MuJoCo ran out of arena memory ({self.model.narena} bytes) for the contacts of scene "
            f"{self.scene.fold}:{self.scene.seed} at control step {self.steps + 1}: it would drop contacts "
            f"and the physics would be wrong. Raise s1gym.tasks.robot.scene.ARENA_BYTES, and report the scene.")

    # ------------------------------------------------------------------ what is seen
    def grip_pos(self) -> np.ndarray:
        return self._utils.get_site_xpos(self.model, self.data, "robot0:grip").copy()

    def finger_gap(self) -> float:
        """The opening between the fingers, metres."""
        adr = self.model.jnt_qposadr
        return float(self.data.qpos[adr[self._fingers[0]]] + self.data.qpos[adr[self._fingers[1]]])

    def block(self, colour: str) -> BlockPose:
        body = self._block_ids[colour]
        mat = self.data.xmat[body].reshape(3, 3)
        yaw = math.atan2(mat[1, 0], mat[0, 0])
        yaw = (yaw + math.pi / 2) % math.pi - math.pi / 2
        half = self.scene.block(colour).half
        return BlockPose(colour, self.data.xpos[body].copy(), yaw, bool(mat[2, 2] > 0.9), half)

    def blocks(self) -> list[BlockPose]:
        return [self.block(c) for c in self._block_ids]

    def touching_fingers(self) -> set[str]:
        """The blocks each finger touches now (a block touched by both is between them)."""
        per_finger: dict[int, set[str]] = {g: set() for g in self._finger_geoms}
        d = self.data
        for i in range(d.ncon):
            g1, g2 = int(d.contact[i].geom1), int(d.contact[i].geom2)
            for f, o in ((g1, g2), (g2, g1)):
                if f in per_finger and o in self._geom_colour:
                    per_finger[f].add(self._geom_colour[o])
        a, b = per_finger.values()
        return a & b

    def held(self) -> str | None:
        """The block held between the closed fingers, off the table, or ``None``."""
        if not self.closed:
            return None
        between = sorted(self.touching_fingers())
        return between[0] if between else None

    # ------------------------------------------------------------------ copy
    def copy(self) -> Arm:
        """An exact, independent copy (shares the model, copies ``MjData``: a bit-identical continuation)."""
        clone = object.__new__(Arm)
        clone.__dict__.update(self.__dict__)
        spare = SPARE_DATA.take(self.model)
        if spare is None:
            clone.data = copy.copy(self.data)
        else:
            self._mj.mj_copyData(spare, self.model, self.data)
            clone.data = spare
        return clone

    def release(self) -> None:
        """Give this copy's ``MjData`` back for the next copy; the arm cannot be used after it."""
        if self.data is not None:
            SPARE_DATA.give(self.data)
            self.data = None
