"""ScienceWorld's simulator in this process's one JVM, and the engine ScienceWorld envs stand on.

The ``scienceworld`` wheel ships its JAR (Scala and py4j inside); :func:`get_jvm` starts it once per
process with the family's heap (:data:`HEAP`) and every engine is a Scala ``PythonInterface`` in it. The
simulator keeps a JVM-global random generator that ``load`` seeds with the variation index, so a game is
the same game only when nothing else loads or steps in between: the family runs **one** engine per process
(``engine_capacity = 1``) and a state another env holds is rebuilt by a replay (``load`` and the moves).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import threading
from typing import Any

from s1gym.engines.base import Engine

__all__ = ["HEAP", "Game", "SWEngine", "get_jvm"]

#: the JVM's heap limit (``-Xmx``): the simulator grows past 3 GB on long runs without one
HEAP = "2g"
#: every object's identity hash the same: the simulator lists a room's objects and names look-alikes in the
#: order of hash sets keyed by identity, which otherwise changes from one ``load`` to the next (the same game
#: would read differently after a replay); with one hash the order is the order of insertion
IDENTITY_HASH = ("-XX:+UnlockExperimentalVMOptions", "-XX:hashCode=2")
#: ``(task, fold, index, simplifications)``: the ``index``-th variation of ``task`` in ScienceWorld's
#: ``fold`` split (train, dev or test), under the comma-separated simplifications
Game = tuple[str, str, int, str]


class _JVM:
    """One ScienceWorld JVM (py4j gateway) and the lock that serialises calls into it."""

    def __init__(self) -> None:
        from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway
        from scienceworld.constants import BASEPATH, JAR_PATH

        port, proc = launch_gateway(classpath=JAR_PATH, die_on_exit=True, cwd=BASEPATH, return_proc=True,
                                    javaopts=[f"-Xmx{HEAP}", *IDENTITY_HASH])
        self.gateway = JavaGateway(gateway_parameters=GatewayParameters(auto_field=True, port=port),
                                   java_process=proc)
        self.process = proc
        self.pid = os.getpid()  # a forked child (a vector env's worker) starts its own JVM
        self.lock = threading.RLock()
        #: (task, simplifications) -> {"train": [...], "dev": [...], "test": [...]} variation indices
        self.folds: dict[tuple[str, str], dict[str, list[int]]] = {}
        #: (task, variation, simplifications) -> the gold action sequence
        self.gold: dict[tuple[str, int, str], tuple[str, ...]] = {}

    def interface(self) -> Any:
        return self.gateway.jvm.scienceworld.runtime.pythonapi.PythonInterface()

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        with contextlib.suppress(Exception):  # the JVM may be gone already
            self.gateway.shutdown()
        if self.process.poll() is None:
            self.process.kill()


_jvm: _JVM | None = None
_jvm_lock = threading.Lock()


def get_jvm() -> _JVM:
    """The process's ScienceWorld JVM, started on first use (about 4 s cold)."""
    global _jvm
    with _jvm_lock:
        if _jvm is None or _jvm.pid != os.getpid() or not _jvm.alive():
            _jvm = _JVM()
        return _jvm


@atexit.register
def _close_jvm() -> None:
    if _jvm is not None and _jvm.pid == os.getpid():
        _jvm.close()


class SWEngine(Engine):
    """One ScienceWorld game (a Scala ``PythonInterface``). An answer is a dict: ``observation`` (the
    step's text), ``look``, ``inventory``, ``score`` (ScienceWorld's, -1..1), ``completed``,
    ``variation`` and ``valid`` (ScienceWorld's valid action-object combinations as ``[text, template id,
    object ids, type ids]``); a new game's answer adds ``task`` (the task description)."""

    label = "ScienceWorld JVM"

    def __init__(self) -> None:
        self.jvm = get_jvm()
        self.server = self.jvm.interface()
        self.loaded: Game | None = None
        self.variation = -1

    # ------------------------------------------------------------ games
    def folds(self, task: str, simplifications: str) -> dict[str, list[int]]:
        """ScienceWorld's train/dev/test variation indices of ``task`` (a load of variation 0, once)."""
        key = (task, simplifications)
        if key not in self.jvm.folds:
            with self.jvm.lock:
                self._load(task, 0, simplifications, False)
                self.jvm.folds[key] = {fold: [int(v) for v in getter()] for fold, getter in (
                    ("train", self.server.getVariationsTrain), ("dev", self.server.getVariationsDev),
                    ("test", self.server.getVariationsTest))}
            self.loaded = None
        return self.jvm.folds[key]

    def variation_of(self, game: Game) -> int:
        task, fold, index, simplifications = game
        variations = self.folds(task, simplifications)[fold]
        return variations[index % len(variations)]

    def _load(self, task: str, variation: int, simplifications: str, gold: bool) -> None:
        # object ids come from a JVM-global counter and order what ``look`` lists: restart it, so a game
        # loaded again (a replay) gets the same ids and lists its objects in the same order
        self.jvm.gateway.jvm.util.UniqueIdentifier.reset()
        msg = self.server.load(task, variation, simplifications, gold)
        if msg and str(msg).strip():
            raise ValueError(f"ScienceWorld rejected {task} variation {variation} ({simplifications!r}): {msg}")

    def gold_path(self, game: Game) -> tuple[str, ...]:
        """ScienceWorld's gold action sequence of ``game`` (cached per process). Generating it loads the game
        again, so the engine is then at the start of ``game`` (the caller replays its moves)."""
        variation = self.variation_of(game)
        key = (game[0], variation, game[3])
        if key not in self.jvm.gold:
            with self.jvm.lock:
                self._load(game[0], variation, game[3], True)
                self.jvm.gold[key] = tuple(str(a) for a in self.server.getGoldActionSequence())
                self.loaded, self.variation = game, variation
        return self.jvm.gold[key]

    def new_game(self, game: Game) -> dict[str, Any]:
        with self.jvm.lock:
            self._start(game)
            out = self._read("")
            out["task"] = str(self.server.freeActionTaskDesc())
        return out

    def _start(self, game: Game) -> None:
        self.variation = self.variation_of(game)
        self._load(game[0], self.variation, game[3], False)
        # ``load`` leaves the score and the completion of the previous game until the first step: reset them
        getattr(self.server, "score_$eq")(0.0)
        getattr(self.server, "isComplete_$eq")(False)
        self.loaded = game

    def step(self, move: str) -> dict[str, Any]:
        with self.jvm.lock:
            return self._read(str(self.server.step(move)))

    def replay(self, game: Game, moves: tuple[str, ...]) -> None:
        """``load`` and the moves, reading nothing in between (a fork's engine catching up)."""
        with self.jvm.lock:
            self._start(game)
            for move in moves:
                self.server.step(move)

    def _read(self, observation: str) -> dict[str, Any]:
        s = self.server
        valid = json.loads(str(s.getValidActionObjectCombinationsJSON()))["validActions"]
        return {
            "observation": observation,
            "look": str(s.freeActionLook()),
            "inventory": str(s.freeActionInventory()),
            "score": float(s.getScore()),
            "completed": bool(s.getCompleted()),
            "variation": self.variation,
            "valid": [(str(a["action"]), int(a["template_id"]), tuple(int(i) for i in a["obj_ids"]),
                       tuple(int(i) for i in a["type_ids"])) for a in valid],
        }

    def alive(self) -> bool:
        return self.jvm.alive()

    def close(self) -> None:
        self.loaded = None  # the JVM is the process's: it ends with the process


def cached_variation(game: Game) -> int | None:
    """:meth:`SWEngine.variation_of` when this process read the game's fold list already (no engine is
    touched, so a live game keeps its engine), else ``None``."""
    task, fold, index, simplifications = game
    jvm = _jvm if _jvm is not None and _jvm.pid == os.getpid() else None
    variations = jvm.folds.get((task, simplifications), {}).get(fold) if jvm is not None else None
    return None if variations is None else variations[index % len(variations)]
