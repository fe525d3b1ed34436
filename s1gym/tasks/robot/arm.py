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
from collections import OrderedDict, deque
from dataclasses import dataclass

import numpy as np

from s1gym.errors import S1GymError
from s1gym.tasks.robot.scene import ARENA_BYTES, Scene, build_model, import_robotics

__all__ = ["DATA_POOL", "MAX_MOVE", "SUBSTEPS", "ArenaFull", "Arm", "BlockPose"]

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


class _DataPool:
    """Who holds an ``MjData``: at most :attr:`live_limit` arms of a thread at once, plus spares.

    An arm keeps its compact state (:meth:`Arm.state`, ~3 KB) at all times and an ``MjData`` (~1.2 MB: its
    1 MiB arena and buffers) only while it is in use. When an arm of a thread needs one and that thread's
    :attr:`live_limit` arms already hold theirs, the one stepped least recently gives its up (it is *parked*)
    and rebuilds it, exactly, the next time it is read or stepped (:meth:`Arm._materialise`). Only the thread
    that gave an arm its ``MjData`` parks it, so an arm in use in another thread is never robbed mid-step.
    ``MjData`` of released arms (:meth:`Arm.release`: closed envs and forks) wait as spares for the next arm of
    the same model: a new ``MjData`` costs ~0.6-0.9 ms (its buffer and the bindings' ~150 array views),
    rebuilding a state in a spare ~0.04 ms (the state written, one substep run). At most :attr:`spare_limit` spares are kept (the oldest dropped),
    whatever their model, so spares never hold models alive in bulk.
    """

    #: arms of one thread that hold an ``MjData`` at once (``None``: no limit, every arm keeps its own)
    live_limit: int | None = 16
    spare_limit = 32

    def __init__(self) -> None:
        self._free: deque = deque(maxlen=self.spare_limit)
        self._lock = threading.Lock()
        self._local = threading.local()

    def _live(self) -> OrderedDict:
        live = getattr(self._local, "live", None)
        if live is None:
            live = self._local.live = OrderedDict()
        return live

    def take(self, model):
        """A spare ``MjData`` of ``model`` (its contents stale: write a state into it), or ``None``; the one given
        back last first (its memory the likeliest in cache)."""
        with self._lock:
            for i in range(len(self._free) - 1, -1, -1):
                if self._free[i].model is model:
                    data = self._free[i]
                    del self._free[i]
                    return data
        return None

    def give(self, data) -> None:
        with self._lock:
            self._free.append(data)

    def attach(self, arm: Arm, data=None):
        """Register ``arm`` as holding an ``MjData`` (``data``, else a spare or a parked arm's of its model, else
        a new one), parking this thread's least recently stepped arm when the limit is reached."""
        live = self._live()
        if data is None:
            data = self.take(arm.model)
        limit = self.live_limit
        while limit is not None and len(live) >= limit:
            _, oldest = live.popitem(last=False)
            freed, oldest._data = oldest._data, None
            if freed is None:
                continue
            if data is None and freed.model is arm.model:
                data = freed
            else:
                self.give(freed)
        if data is None:
            import mujoco

            data = mujoco.MjData(arm.model)
        live[id(arm)] = arm
        return data

    def touch(self, arm: Arm) -> None:
        """``arm`` was stepped: the last of its thread's arms to be parked."""
        live = self._live()
        if id(arm) in live:
            live.move_to_end(id(arm))

    def detach(self, arm: Arm) -> None:
        """``arm`` gives its ``MjData`` up for the next arm (spare)."""
        self._live().pop(id(arm), None)
        if arm._data is not None:
            self.give(arm._data)
            arm._data = None

    def clear(self) -> None:
        """Drop the spares (the arms in use keep theirs)."""
        with self._lock:
            self._free.clear()


DATA_POOL = _DataPool()
#: the name bench/robot.py uses (its "no spare" fork)
SPARE_DATA = DATA_POOL
#: a fork keeps only the compact state (False: a whole ``MjData`` copy per fork, as before issue 55; with
#: ``DATA_POOL.live_limit = None`` that is the old way, which bench/robot_raw.py measures beside the new one)
COMPACT_FORKS = True


class Arm:
    """The physics of one scene: ``model`` (shared by every copy) and ``data`` (each copy its own, held only
    while in use: :class:`_DataPool`).

    The compact state. MuJoCo's integration state (``mj_getState(..., mjSTATE_INTEGRATION)``: time, qpos,
    qvel, act, the solver's warm start, ctrl, applied forces, mocap poses, ...; 294-387 numbers for 1-4 blocks) is all that
    ``mj_step`` reads: it recomputes every derived quantity (positions, contacts, forces) from it first. So
    the arm keeps the integration state of *before the last substep* of its last control step
    (:attr:`_pre`), and rebuilds its ``MjData`` by writing that state into a spare and running that one
    substep again: the same inputs to the same deterministic step, so every field the code reads (qpos,
    body and site poses, the contacts that tell what is held, the poses the next control step's mocap reset
    reads) is bit-identical to what the control step left, and so is every step after it
    (tests/test_robot.py). A fork is a copy of the Python fields sharing ``_pre`` (never written in place:
    each control step makes a new one), no ``MjData`` at all until it is stepped or read.
    """

    def __init__(self, scene: Scene, model=None) -> None:
        import mujoco

        import_robotics()
        from gymnasium_robotics.utils import mujoco_utils

        self._mj, self._utils = mujoco, mujoco_utils
        self._contact_full = int(mujoco.mjtWarning.mjWARN_CONTACTFULL)
        self._constraints_full = int(mujoco.mjtWarning.mjWARN_CNSTRFULL)
        self.scene = scene
        self.model = build_model(scene) if model is None else model
        self._sig = int(mujoco.mjtState.mjSTATE_INTEGRATION)
        self._pre: np.ndarray | None = None
        self._data = None
        self._data = DATA_POOL.attach(self, mujoco.MjData(self.model))
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
        m, d = self.model, self.data
        DATA_POOL.touch(self)
        self._utils.ctrl_set_action(m, d, action)
        self._utils.mocap_set_action(m, d, action)
        d.mocap_quat[0] = _yaw_quat(self.yaw)
        pre = np.empty(self._mj.mj_stateSize(m, self._sig))
        try:
            self._mj.mj_step(m, d, nstep=SUBSTEPS - 1)
            self._mj.mj_getState(m, d, pre, self._sig)
            self._mj.mj_step(m, d)
        except self._mj.FatalError as exc:
            if "out of memory" not in str(exc):
                raise
            raise self._arena_full() from exc
        self._pre = pre
        warnings = d.warning.number
        if warnings[self._contact_full] or warnings[self._constraints_full]:
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
    @property
    def data(self):
        """The ``MjData`` (rebuilt from the compact state if this arm was parked or is a fresh fork)."""
        data = self._data
        return data if data is not None else self._materialise()

    def state(self) -> np.ndarray:
        """The compact state: the integration state before the last substep (read-only; see the class doc)."""
        if self._pre is None:
            raise RuntimeError("this arm was released (its env was closed): fork the env before closing it")
        return self._pre

    def _materialise(self):
        state = self.state()
        data = DATA_POOL.attach(self)
        mj = self._mj
        mj.mj_setState(self.model, data, state, self._sig)
        data.warning.number[:] = 0      # a spare's warnings are another arm's
        mj.mj_step(self.model, data)    # the last substep again: every derived field as the step left it
        self._data = data
        return data

    def copy(self) -> Arm:
        """An exact, independent copy sharing the model: the compact state only (:data:`COMPACT_FORKS`), its
        ``MjData`` made when it is first stepped or read; a bit-identical continuation."""
        clone = object.__new__(Arm)
        clone.__dict__.update(self.__dict__)
        clone._data = None
        if not COMPACT_FORKS:           # the way before issue 55: a whole MjData copy per fork
            spare = DATA_POOL.take(self.model)
            if spare is None:
                spare = copy.copy(self.data)
            else:
                self._mj.mj_copyData(spare, self.model, self.data)
            clone._data = DATA_POOL.attach(clone, spare)
        return clone

    def release(self) -> None:
        """Give this copy's ``MjData`` back for the next copy; the arm cannot be used after it."""
        DATA_POOL.detach(self)
        self._pre = None
